"""``tumble phyphox-replay`` as a user runs it: the line it prints, the recording served sample
for sample over phyphox's protocol, ``--loop`` continuing the phone's time lap after lap,
``--batch`` delivering the samples in bursts, ``--fault`` staging a clear and an outage at
playback times, ``--duration`` ending it; bad faults and a port already taken refused in one
line with exit 2."""

from __future__ import annotations

import json
import re
import socket
import time
import urllib.request

import numpy as np
import pytest
from conftest import Running, refused, tumble

from tumble.throws.benches import synthetic as syn
from tumble.throws.live.phyphox_server import RECORDING_GAP_S

#: samples of the recording served, 10 ms apart (6 s)
N, SPACING = 600, 0.01
#: the longest a test polls the stand-in phone for what it waits to see (s)
POLL_S = 20.0
SERVING = re.compile(r"serving (\d+) samples \(([\d.]+) s at ([\d.]+)x\) at (http://127\.0\.0\.1:\d+)$")


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    """(path, t, w): a CSV recording whose every sample has rates of its own."""
    t = 5.0 + SPACING * np.arange(N)
    w = np.stack([np.sin(t), 1.0 + t, -2.0 * t], axis=1)
    path = tmp_path_factory.mktemp("replay") / "steady.csv"
    path.write_text(syn.raw_data_csv(t, w))
    return path, t, w


def serve(recording, *args):
    """``tumble phyphox-replay RECORDING --port 0 ARGS`` running, and the URL of its first line."""
    proc = Running("phyphox-replay", recording[0], "--port", "0", *args)
    first = proc.readline().strip()
    match = SERVING.match(first)
    assert match, first
    assert int(match[1]) == N
    return proc, match


def get(url, query, timeout=2.0) -> dict:
    with urllib.request.urlopen(f"{url}/get?{query}", timeout=timeout) as answer:
        return json.loads(answer.read())


def times(url) -> np.ndarray:
    """Every phone time in the gyroscope's buffer now."""
    return np.array(get(url, "gyr_time=full")["buffer"]["gyr_time"]["buffer"], dtype=float)


def newest(url, timeout=2.0):
    """The phone time of the newest sample in the buffer (None: the buffer is empty)."""
    values = get(url, "gyr_time=", timeout)["buffer"]["gyr_time"]["buffer"]
    return values[-1] if values else None


def poll_until(what, check, seconds=POLL_S, every=0.05):
    """``what()`` called until ``check(value)`` holds (the value returned), within ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        value = what()
        if check(value):
            return value
        assert time.monotonic() < deadline, f"not seen within {seconds} s: {value!r}"
        time.sleep(every)


def test_the_recording_is_served_sample_for_sample_and_duration_ends_it(recording):
    _, t, w = recording
    proc, match = serve(recording, "--speed", "10", "--duration", "3")
    with proc:
        assert float(match[2]) == pytest.approx(t[-1] - t[0] + SPACING, abs=0.05) and float(match[3]) == 10
        url = match[4]
        answer = poll_until(lambda: get(url, "gyr_time=full&gyrX=full&gyrY=full&gyrZ=full"),
                            lambda a: len(a["buffer"]["gyr_time"]["buffer"]) == N)
        assert answer["status"]["measuring"] is True
        served_t = np.array(answer["buffer"]["gyr_time"]["buffer"])
        served_w = np.column_stack([answer["buffer"][k]["buffer"] for k in ("gyrX", "gyrY", "gyrZ")])
        # the stamps keep their spacing (the phone's time starts one spacing in), the rates their
        # values, each to the 8 significant digits phyphox writes
        np.testing.assert_allclose(served_t, t - t[0] + SPACING, rtol=1e-7)
        np.testing.assert_allclose(served_w, w, rtol=1e-7)
        # without --loop the phone stops at the recording's end
        time.sleep(0.3)
        assert len(times(url)) == N
        out, err = proc.finish(timeout=30)
    assert proc.proc.returncode == 0 and err == "", err


def test_loop_plays_the_recording_again_on_a_continuing_time_axis(recording):
    proc, match = serve(recording, "--speed", "20", "--loop", "--duration", "10")
    with proc:
        stamps = poll_until(lambda: times(match[4]), lambda s: len(s) >= 2 * N + 10)
        proc.proc.terminate()
        proc.finish(timeout=30)
    first, again = stamps[:N], stamps[N:2 * N]
    # the second lap repeats the first one period later: the recording's span and the gap between laps
    period = first[-1] + RECORDING_GAP_S
    np.testing.assert_allclose(again - first, period, rtol=1e-7)
    assert np.all(np.diff(stamps) > 0)


def test_batch_delivers_the_samples_in_bursts_of_batch_seconds(recording):
    """With ``--batch 0.5`` the buffer grows 50 samples at a time; without it, sample by sample."""
    def counts(*args):
        proc, match = serve(recording, *args)
        seen = set()
        with proc:
            deadline = time.monotonic() + POLL_S
            while len(seen) < 6 and time.monotonic() < deadline:
                seen.add(len(times(match[4])))
                time.sleep(0.02)
        return sorted(seen)

    burst = round(0.5 / SPACING)
    batched = counts("--batch", "0.5", "--speed", "2", "--duration", "5")
    assert len(batched) >= 3, batched
    assert all(n % burst in (0, 1, burst - 1) for n in batched), batched
    plain = counts("--speed", "2", "--duration", "5")
    assert len(plain) >= 6 and any(2 <= n % burst <= burst - 2 for n in plain), plain


def test_faults_staged_at_playback_times_clear_and_hang(recording):
    """``--fault clear@2`` restarts the phone's time at 0; ``--fault outage@2.5:1.5`` then holds
    every request for 1.5 s while the phone goes on measuring."""
    proc, match = serve(recording, "--fault", "clear@2", "--fault", "outage@2.5:1.5", "--duration", "8")
    url = match[4]
    with proc:
        before = poll_until(lambda: newest(url), lambda last: last is not None and last > 0.6)
        # the clear empties the buffers and the time restarts at 0
        poll_until(lambda: newest(url), lambda last: last is None or last < before)
        # a request during the outage gets no answer in time
        hung = 0
        deadline = time.monotonic() + POLL_S
        while not hung and time.monotonic() < deadline:
            try:
                get(url, "gyr_time=", timeout=0.5)
            except OSError:
                hung += 1
            time.sleep(0.05)
        assert hung, "no request hung during the outage"
        # the outage ends; the phone measured through it: the newest time moved on past the outage
        poll_until(lambda: _newest_or_hung(url), lambda last: last != "hung", seconds=POLL_S)
        # the phone measured through the outage: every sample since the clear is there, past its end
        # (2 s after the clear)
        stamps = times(url)
        assert stamps[-1] > 1.9 and np.max(np.diff(stamps)) < 1.5 * SPACING
        proc.finish(timeout=30)
    assert proc.proc.returncode == 0


def _newest_or_hung(url):
    try:
        return newest(url, timeout=0.5)
    except OSError:
        return "hung"


@pytest.mark.parametrize("fault", ["explode@1", "outage@1", "sleep@1:0", "clear@-1", "clear@soon", "outage@1:x",
                                   "clear"])
def test_a_bad_fault_is_one_line_and_exit_2(recording, fault):
    refused(tumble("phyphox-replay", recording[0], "--port", "0", "--fault", fault, timeout=60), "--fault", fault,
            "outage and sleep take S > 0", quiet=True)


def test_a_port_already_taken_is_one_line_and_exit_2(recording):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        res = tumble("phyphox-replay", recording[0], "--port", port, "--duration", "1", timeout=60)
    refused(res, "--port", str(port), "be free on 127.0.0.1", quiet=True)


@pytest.mark.parametrize("args, field", [(["--port", "70000"], "--port"), (["--speed", "0"], "--speed"),
                                         (["--batch", "-1"], "--batch")])
def test_bad_flags_are_one_line_and_exit_2(recording, args, field):
    refused(tumble("phyphox-replay", recording[0], *args, timeout=60), field, quiet=True)


def test_a_missing_recording_is_one_line_and_exit_2(tmp_path):
    missing = tmp_path / "nothing.csv"
    refused(tumble("phyphox-replay", missing, "--port", "0", timeout=60), str(missing), quiet=True)
