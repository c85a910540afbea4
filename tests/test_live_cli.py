"""``tumble live`` as a user runs it, against the stand-in phone on 127.0.0.1: synthetic throws
reported one flight each with their true start and end, the events and keys of the issue,
every sample in --out's CSV files re-fitted by ``tumble fit``, a fixed body, exit codes."""

from __future__ import annotations

import json
import re
import signal
import socket
from pathlib import Path

import numpy as np
import pytest
from conftest import Running, refused, tumble

from tumble.throws.benches import synthetic as syn
from tumble.throws.live.fitter import last_reports
from tumble.throws.live.phyphox_server import PhyphoxReplay
from tumble.throws.recordings.reader import read_recording

FLIGHT_KEYS = {"event", "number", "refined", "segment", "start", "end", "omega0", "ratios", "ratios_std", "flights_used",
               "flip_time_measured", "flip_time_predicted", "excluded", "reason"}
END_KEYS = {"event", "samples", "segments", "flights", "ratios", "ratios_std"}
#: a flight's start and end lie this close (s) to the simulated release and catch: the
#: issue's figure, about ten sample spacings
MATCH_S = 0.1
#: a phone's sample spacing (s): the same flight found twice starts and ends on the same samples
SAMPLE_S = 0.0102
SPEED = 8.0


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    """(folder, t, w, throws): four synthetic throws written as a phyphox folder."""
    rng = np.random.default_rng(11)
    truth = syn.Truth.rotated(2.0)
    t, w, throws = syn.make_recording(truth, syn.throw_mix(truth, 4, rng, near_share=1.0), rng, (0.6, 1.0))
    folder = syn.write_phyphox(tmp_path_factory.mktemp("live") / "four", t, w)
    return folder, t, w, throws


def live(*args, timeout=120):
    return tumble("live", *args, timeout=timeout)


@pytest.fixture(scope="module")
def followed(session, tmp_path_factory):
    """``tumble live --json --out`` run while the session replays at SPEED; (result, events, out, replay)."""
    folder, t, w, throws = session
    out = tmp_path_factory.mktemp("out") / "live"
    with PhyphoxReplay([(t, w)], speed=SPEED) as replay:
        duration = replay.timeline.t[-1] / SPEED + 8.0
        res = live(replay.url, "--json", "--duration", f"{duration:.1f}", "--out", out)
    events = [json.loads(line) for line in res.stdout.splitlines()]
    return res, events, out, replay


def test_each_throw_is_one_flight_with_its_release_and_catch(session, followed):
    _, t, _, throws = session
    res, events, _, replay = followed
    assert res.returncode == 0, res.stderr
    shift = replay.timeline.t[0] - t[0]
    assert all(set(e) == FLIGHT_KEYS for e in events if e["event"] == "flight")
    flights = last_reports(events)  # a flight reported again with refined edges counts as last reported
    for throw in throws:
        hits = [e for e in flights if abs(e["start"] - throw.start - shift) <= MATCH_S
                and abs(e["end"] - throw.end - shift) <= MATCH_S]
        assert len(hits) == 1, (throw, flights)
    assert len(flights) == len(throws)
    assert flights[-1]["flights_used"] == len(throws) and not any(e["excluded"] for e in flights)
    assert all(e["flip_time_predicted"] is not None for e in flights)  # every throw starts near the middle axis


def test_the_events_and_their_order(followed):
    res, events, _, replay = followed
    assert events[0] == {"event": "connected", "title": "Gyroscope (rotation rate)", "session": replay.session}
    end = events[-1]
    assert set(end) == END_KEYS and end["event"] == "end"
    assert end["samples"] == len(replay.timeline) and end["segments"] == 1 and end["flights"] == 4
    assert end["ratios"][2] == 1.0 and 0 < end["ratios"][0] < end["ratios"][1] < 1


def test_out_holds_every_sample_and_tumble_fit_refits_it(followed, tmp_path):
    _, events, out, replay = followed
    csvs = sorted(out.glob("*.csv"))
    assert [p.name for p in csvs] == ["segment-000.csv"] and (out / "fit.toml").is_file()
    rec = read_recording(csvs[0])
    np.testing.assert_allclose(rec.t, replay.timeline.t, rtol=1e-7)
    np.testing.assert_allclose(rec.w, replay.timeline.w, rtol=1e-7, atol=1e-12)
    res = tumble("fit", *csvs, "--json")
    assert res.returncode == 0, res.stderr
    offline = json.loads(res.stdout)
    # the same flights and the same fit: the live fit, warm-started flight by flight, ends where
    # the offline fit of the same samples does, up to the optimiser's convergence, a tenth of
    # the fit's standard errors (measured: under 0.02 of them)
    live = last_reports(events)  # a flight reported again with refined edges: its last report counts
    edges = np.array([(f["start"], f["end"]) for f in offline["flights"]])
    np.testing.assert_allclose(edges, [(e["start"], e["end"]) for e in live], atol=SAMPLE_S)
    std = np.asarray(offline["ratios_std"])
    assert np.all(np.abs(np.subtract(offline["ratios"], events[-1]["ratios"])) <= 0.1 * std)


def test_a_fixed_body_is_reported_as_given(session, followed, tmp_path):
    folder, t, w, throws = session
    _, _, out, _ = followed
    with PhyphoxReplay([(t, w)], speed=SPEED) as replay:
        res = live(replay.url, "--fit", out / "fit.toml", "--duration", f"{replay.timeline.t[-1] / SPEED + 8:.1f}")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].startswith("connected: Gyroscope (rotation rate)") and lines[-1].startswith("end: ")
    flights = [line for line in lines if re.match(r"flight \d+: ", line)]  # found (a refinement says "refined")
    assert len(flights) == len(throws)
    fitted = read_fit_ratios(out / "fit.toml")
    assert all(f"ratios {fitted}" in line for line in flights), (fitted, flights)


def read_fit_ratios(path: Path) -> str:
    from tumble.throws.live.fitter import fixed_body, ratios_of

    return ", ".join(f"{x:.4f}" for x in ratios_of(fixed_body(path)))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_ctrl_c_with_nothing_received_exits_130():
    with Running("live", f"http://127.0.0.1:{free_port()}") as child:
        first = child.readline(timeout=60)
        child.proc.send_signal(signal.SIGINT)
        _, err = child.finish(timeout=30)
    assert first.startswith("reconnecting: connection refused")
    assert child.proc.returncode == 130 and err.strip() == "tumble: interrupted, nothing received"


def test_out_is_written_as_samples_arrive_and_ctrl_c_ends_with_0(session, tmp_path):
    _, t, w, _ = session
    out = tmp_path / "out"
    with PhyphoxReplay([(t, w)], speed=SPEED) as replay:
        child = Running("live", replay.url, "--json", "--out", out)
        with child:
            assert json.loads(child.readline(timeout=60))["event"] == "connected"
            flight = json.loads(child.readline(timeout=60))
            assert flight["event"] == "flight"
        # while it runs, the CSV already holds every sample up to past that flight's catch
            running = read_recording(out / "segment-000.csv")
            assert running.t[-1] > flight["end"]
            np.testing.assert_allclose(running.t, replay.timeline.t[:len(running.t)], rtol=1e-7)
            child.proc.send_signal(signal.SIGINT)
            stdout, err = child.finish(timeout=60)
    assert child.proc.returncode == 0, err
    end = json.loads(stdout.splitlines()[-1])
    assert end["event"] == "end" and end["samples"] == len(read_recording(out / "segment-000.csv").t)
    assert (out / "fit.toml").is_file()


@pytest.mark.parametrize("args, field", [
    (["https://127.0.0.1:8080"], "URL"),
    (["http://127.0.0.1:8080", "--fit", "no-such-fit.toml"], "no-such-fit.toml"),
    (["http://127.0.0.1:8080", "--out", "README.md"], "--out"),
    (["http://127.0.0.1:8080", "--drag", "cubic"], "--drag"),
    (["http://127.0.0.1:8080", "--duration", "-1"], "--duration"),
])
def test_bad_input_is_one_line_and_exit_2(args, field):
    refused(live(*args), field, quiet=True)


def test_out_never_mixes_two_sessions(tmp_path):
    (tmp_path / "segment-000.csv").write_text("old")
    refused(live("http://127.0.0.1:8080", "--out", tmp_path), "--out must not already hold a live session",
            unwritten=[(tmp_path / "segment-000.csv", "old")])
