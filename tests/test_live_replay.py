"""The stand-in phone (tumble phyphox-replay) speaks phyphox's remote-access protocol as
phyphox's own RemoteServer.java does: buffers, thresholds, 8 significant digits, status,
control, a forced full answer after a clear; on 127.0.0.1 only."""

from __future__ import annotations

import http.client
import json
import math
import time

import numpy as np
import pytest

from tumble.throws.live.phyphox_server import PhyphoxReplay, nudged_threshold, phyphox_number


def raw_get(replay, path):
    """(status, headers, body) of one GET on a fresh connection."""
    conn = http.client.HTTPConnection("127.0.0.1", replay.httpd.server_address[1], timeout=5)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()


def get(replay, path):
    status, _, body = raw_get(replay, path)
    assert status == 200
    return json.loads(body)


def steady(n=400, spacing=0.01):
    """n samples 10 ms apart with rates that tell each sample apart."""
    t = np.arange(n) * spacing
    w = np.stack([np.sin(t), 1.0 + t, -2.0 * t], axis=1)
    return t, w


@pytest.fixture
def replay():
    server = PhyphoxReplay([steady()], speed=1000.0).start()  # everything played within 4 ms
    time.sleep(0.05)
    yield server
    server.stop()


@pytest.mark.parametrize("value, text", [
    (0.0329224166, "3.2922417E-2"), (1.0, "1E0"), (-12.5, "-1.25E1"), (0.0, "0E0"),
    (123456789.0, "1.2345679E8"), (math.nan, "null"), (math.inf, "null")])
def test_numbers_carry_eight_significant_digits_like_javas_decimal_format(value, text):
    assert phyphox_number(value) == text


def test_the_threshold_is_nudged_past_the_eighth_digit():
    assert nudged_threshold(12.345678) == pytest.approx(12.345678 + 1e-6)
    assert nudged_threshold(0.5) == pytest.approx(0.5 + 1e-8)
    assert nudged_threshold(0.0) == 0.0
    assert math.isnan(nudged_threshold(-1.0))  # Java's log10 of a negative number: a single value


def test_config_names_the_gyroscope_buffers(replay):
    config = get(replay, "/config")
    assert {b["name"] for b in config["buffers"]} >= {"gyr_time", "gyrX", "gyrY", "gyrZ"}
    gyro = next(i for i in config["inputs"] if i["source"] == "gyroscope")
    assert {"t": "gyr_time"} in gyro["outputs"] and {"x": "gyrX"} in gyro["outputs"]


def test_get_full_last_value_threshold_and_reference(replay):
    full = get(replay, "/get?gyr_time=full&gyrX=full")
    t = full["buffer"]["gyr_time"]["buffer"]
    assert full["buffer"]["gyr_time"]["updateMode"] == "full" and len(t) == 400
    assert t == sorted(t) and full["buffer"]["gyrX"]["buffer"][5] == pytest.approx(math.sin(0.05), rel=1e-7)
    last = get(replay, "/get?gyr_time=&gyrY=")
    assert last["buffer"]["gyr_time"]["updateMode"] == "single"
    assert last["buffer"]["gyr_time"]["buffer"] == [t[-1]]
    threshold = t[199]
    part = get(replay, f"/get?gyr_time={threshold}&gyrZ={threshold}|gyr_time")
    assert part["buffer"]["gyr_time"]["updateMode"] == "partial"
    assert part["buffer"]["gyr_time"]["buffer"] == t[200:]
    assert len(part["buffer"]["gyrZ"]["buffer"]) == 200
    assert set(part["status"]) == {"session", "measuring", "timedRun", "countDown"}
    assert part["status"]["measuring"] is True


def test_no_keep_alive_and_loopback_only(replay):
    assert replay.httpd.server_address[0] == "127.0.0.1"
    status, headers, _ = raw_get(replay, "/get?gyr_time=")
    assert status == 200 and headers.get("Connection") == "close"


def test_control_clear_restarts_the_time_and_forces_a_full_answer(replay):
    before = get(replay, "/get?gyr_time=")["buffer"]["gyr_time"]["buffer"][0]
    assert get(replay, "/control?cmd=clear") == {"result": True}
    answer = get(replay, f"/get?gyr_time={before}&gyrX={before}|gyr_time")
    assert answer["buffer"]["gyr_time"]["updateMode"] == "full"
    assert answer["status"]["measuring"] is False  # a clear stops the measurement
    assert get(replay, "/control?cmd=start") == {"result": True}
    time.sleep(0.05)
    again = get(replay, "/get?gyr_time=full")["buffer"]["gyr_time"]["buffer"]
    assert all(x < before for x in again)  # the time restarted at 0
    assert get(replay, "/control?cmd=fly") == {"result": False}


def test_a_new_session_changes_the_id_and_empties_the_buffers(replay):
    first = get(replay, "/get?gyr_time=")["status"]["session"]
    replay.new_session()
    answer = get(replay, "/get?gyr_time=1.0")
    assert answer["status"]["session"] != first
    assert answer["buffer"]["gyr_time"]["updateMode"] == "full"


def test_nan_is_null():
    t, w = steady(50)
    w[10, 1] = math.nan
    with PhyphoxReplay([(t, w)], speed=1000.0) as server:
        time.sleep(0.05)
        ys = get(server, "/get?gyrY=full")["buffer"]["gyrY"]["buffer"]
    assert ys[10] is None and ys[11] is not None


def test_jittered_stamps_keep_their_order():
    t, w = steady(2000)
    with PhyphoxReplay([(t, w)], speed=1000.0, jitter_s=0.003, seed=4) as server:
        stamps = np.array(server.timeline.t)
    steps = np.diff(stamps)
    assert np.all(steps > 0) and np.std(steps - 0.01) > 1e-3


def test_faults_hang_drop_redirect_garbage_and_huge(replay):
    replay.garbage()
    status, _, body = raw_get(replay, "/get?gyr_time=")
    with pytest.raises(ValueError):
        json.loads(body)
    replay.redirect()
    status, headers, _ = raw_get(replay, "/get?gyr_time=")
    assert status == 302 and headers["Location"].startswith("http://192.0.2.1")
    replay.drop()
    with pytest.raises((http.client.HTTPException, OSError)):
        raw_get(replay, "/get?gyr_time=")
    replay.outage(0.6)
    conn = http.client.HTTPConnection("127.0.0.1", replay.httpd.server_address[1], timeout=0.2)
    try:
        with pytest.raises(OSError):  # a timeout: the request hangs
            conn.request("GET", "/get?gyr_time=")
            conn.getresponse()
    finally:
        conn.close()
    time.sleep(0.7)
    assert get(replay, "/get?gyr_time=")["status"]["measuring"] is True  # answers again
    replay.huge(nbytes=3 * 1024 * 1024)
    status, headers, body = raw_get(replay, "/get?gyr_time=")
    assert "Content-Length" not in headers and len(body) >= 3 * 1024 * 1024
