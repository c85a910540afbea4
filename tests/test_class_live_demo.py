"""``demo`` is a phone's URL: ``tumble live demo`` starts the stand-in phone on a shipped sample
in process, on 127.0.0.1, and its throws land in real time as a phone's would."""

from __future__ import annotations

import json
import socket
import sys
import threading

import numpy as np
import pytest

from tumble.throws.live.demo import DEMO_SAMPLE, is_demo, start_demo
from tumble.throws.live.fitter import last_reports
from tumble.throws.live.session import LiveSession
from tumble.throws.recordings.samples import SAMPLES_DIR
from conftest import tumble

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: the sample's releases come every 2.1-2.6 s from 0.9 s; a flight is reported within about 2 s of
#: its catch (the live bench's figure): three flights have landed and been reported by then
DURATION_S = 14


def test_live_demo_reports_the_samples_throws_in_real_time(tmp_path):
    res = tumble("live", "demo", "--json", "--duration", DURATION_S, cwd=tmp_path, timeout=DURATION_S + 120)
    assert res.returncode == 0, res.stderr
    events = [json.loads(line) for line in res.stdout.splitlines()]
    assert events[0]["event"] == "connected"
    reports = [e for e in events if e["event"] == "flight"]
    flights = last_reports(events)  # a flight reported again with refined edges counts once, as last reported
    assert len(flights) >= 3 and events[-1]["event"] == "end" and events[-1]["flights"] == len(flights)
    # the throws of the sample, as its true body says they were released
    doc = tomllib.loads((SAMPLES_DIR / f"{DEMO_SAMPLE}.toml").read_text(encoding="utf-8"))
    releases = np.array([th["release"] for th in doc["throws"]])
    for f in flights:
        assert np.min(np.abs(releases - f["start"])) < 0.1, f
    truth = np.asarray(doc["ratios"])
    assert np.max(np.abs(np.asarray(reports[-1]["ratios"]) - truth)) < 0.01


def test_demo_is_a_url_only_by_its_word():
    assert is_demo("demo") and is_demo(" DEMO ") and not is_demo("http://demo:8080") and not is_demo(None)


def test_a_demo_session_serves_on_127_0_0_1_and_stops_with_its_run():
    session = LiveSession("demo")
    assert session.demo is not None and session.demo.url.startswith("http://127.0.0.1:")
    stop = threading.Event()
    runner = threading.Thread(target=session.run, args=(stop.is_set,))
    runner.start()
    try:
        deadline = threading.Event()
        for _ in range(200):  # at most 10 s for the first samples
            if session.stream.samples > 0:
                break
            deadline.wait(0.05)
        assert session.stream.samples > 0
    finally:
        stop.set()
        runner.join(60)
    assert not runner.is_alive()
    host, port = session.demo.url.removeprefix("http://").split(":")
    with pytest.raises(OSError):  # the stand-in phone stopped with the run
        socket.create_connection((host, int(port)), timeout=5).close()


def test_start_demo_plays_the_sample_over_and_over():
    replay = start_demo()
    try:
        assert replay.loop and replay.url.startswith("http://127.0.0.1:")
    finally:
        replay.stop()
