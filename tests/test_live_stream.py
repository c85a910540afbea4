"""The live client against the stand-in phone on 127.0.0.1: every served sample arrives once,
in order, through a dropped connection, an outage, a sleeping phone, a clear, a new session,
jittered stamps, garbage, an oversized answer and a redirect. Each run stops by itself: when
the samples it expects are in, or after a bounded time."""

from __future__ import annotations

import os
import threading
import time
import tracemalloc

import numpy as np
import pytest

from tumble.physics.errors import ParameterError
from tumble.throws.live.client import PhoneStream, PhyphoxClient, parse_url
from tumble.throws.live.phyphox_server import PhyphoxReplay

#: how long the phone sleeps in the sleep test (s); TUMBLE_LIVE_SLEEP_S=30 runs the long case
SLEEP_S = float(os.environ.get("TUMBLE_LIVE_SLEEP_S", "3"))
#: the longest a helper thread (the phone's own page, a teacher) waits for the stream (s)
HELPER_S = 20.0


def when(predicate, seconds=HELPER_S) -> bool:
    """Wait in a helper thread until ``predicate()`` holds (True) or ``seconds`` pass (False)."""
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def joined(thread, seconds=HELPER_S) -> bool:
    thread.join(seconds)
    return not thread.is_alive()


def steady(n=300, spacing=0.01):
    t = np.arange(n) * spacing
    return t, np.stack([np.sin(3 * t), 1.0 + t, -2.0 * t], axis=1)


class Follower:
    """A PhoneStream run in this thread until ``until(self)`` or ``max_s`` seconds."""

    def __init__(self, replay, client=None):
        self.events, self.segments = [], {}
        self.stream = PhoneStream(replay.url, self.events.append, self._samples, client)

    def _samples(self, segment, t, w):
        old_t, old_w = self.segments.get(segment, (np.empty(0), np.empty((0, 3))))
        self.segments[segment] = (np.concatenate((old_t, t)), np.concatenate((old_w, w)))

    def run(self, until, max_s):
        began = time.monotonic()
        self.stream.run(lambda: until(self) or time.monotonic() - began > max_s)
        return self

    def kinds(self):
        return [e["event"] for e in self.events]


def received(f, segment=0):
    return f.segments.get(segment, (np.empty(0),))[0]


def played_times(replay, first=0, stop=None):
    """The phone times of the timeline's samples first..stop (the current epoch)."""
    g = np.arange(first, stop if stop is not None else len(replay.timeline))
    return replay.timeline.time_of(g) - replay.epoch_origin


def all_in(n):
    return lambda f: f.stream.samples >= n


def test_urls_name_one_http_host():
    assert parse_url("http://192.168.1.23:8080") == ("192.168.1.23", 8080, "")
    assert parse_url("http://phone.local") == ("phone.local", 80, "")
    for bad in ("https://x:8080", "ftp://x", "http://", "http://u:p@x:8080", "http://x:8080/?a=1", "x:8080",
                "http://x:99999"):
        with pytest.raises(ParameterError) as err:
            parse_url(bad)
        assert "URL must" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("fault, error", [("drop", "closed without an answer"), ("garbage", "not JSON"),
                                          ("redirect", "HTTP 302 to 'http://192.0.2.1:8080")])
def test_a_failed_request_is_one_line_and_the_stream_goes_on(fault, error):
    t, w = steady()
    with PhyphoxReplay([(t, w)], speed=2.0) as replay:
        replay.schedule(0.5, fault)
        f = Follower(replay).run(all_in(len(t)), max_s=20)
    failures = [e for e in f.events if e["event"] == "reconnecting"]
    assert len(failures) == 1 and error in failures[0]["error"] and "\n" not in failures[0]["error"]
    assert f.kinds().count("connected") == 2
    np.testing.assert_allclose(received(f), played_times(replay), rtol=1e-7)  # every sample, once, in order


def test_an_outage_loses_nothing_the_phone_measured():
    t, w = steady(400)
    with PhyphoxReplay([(t, w)], speed=1.0) as replay:
        replay.schedule(1.0, "outage", 1.5)
        f = Follower(replay).run(all_in(len(t)), max_s=20)
    errors = [e["error"] for e in f.events if e["event"] == "reconnecting"]
    assert errors and all(e == "no answer (timed out)" for e in errors)
    np.testing.assert_allclose(received(f), played_times(replay), rtol=1e-7)
    np.testing.assert_allclose(f.segments[0][1], w, rtol=1e-7)


def test_a_sleeping_phone_is_waited_for():
    t, w = steady(int(100 * (SLEEP_S + 3)))
    with PhyphoxReplay([(t, w)], speed=1.0) as replay:
        replay.schedule(1.0, "sleep", SLEEP_S)
        f = Follower(replay).run(lambda f: replay.finished() and f.stream.samples and
                                 received(f)[-1] >= replay.timeline.t[-1] - 1e-6, max_s=SLEEP_S + 20)
    assert "reconnecting" in f.kinds() and f.kinds()[-1] == "connected"
    got = received(f)
    gap = np.diff(got).max()
    assert SLEEP_S - 0.3 < gap < SLEEP_S + 0.3  # what it slept through was never measured
    assert got[-1] == pytest.approx(replay.timeline.t[-1], abs=1e-6)


def test_jittered_stamps_arrive_in_order():
    t, w = steady(400)
    with PhyphoxReplay([(t, w)], speed=2.0, jitter_s=0.003, seed=7) as replay:
        f = Follower(replay).run(all_in(len(t)), max_s=20)
    got = received(f)
    assert np.all(np.diff(got) > 0)
    np.testing.assert_allclose(got, replay.timeline.t, rtol=1e-7)


@pytest.mark.parametrize("action", ["clear", "session"])
def test_a_clear_or_a_new_session_starts_the_next_segment(action):
    t, w = steady(500)
    with PhyphoxReplay([(t, w)], speed=2.0) as replay:
        replay.schedule(2.0, action)
        f = Follower(replay).run(lambda f: replay.finished() and 1 in f.segments and len(received(f, 1)) >= len(
            replay.timeline) - replay.epoch_first(), max_s=20)
    assert f.kinds().count("cleared") == 1
    assert next(e for e in f.events if e["event"] == "cleared")["segment"] == 1
    first = replay.epoch_first()
    np.testing.assert_allclose(received(f, 0), replay.timeline.t[:replay.served_until(0)], rtol=1e-7)
    assert replay.served_until(0) <= first  # what the clear emptied before anyone asked is gone
    np.testing.assert_allclose(received(f, 1), played_times(replay, first), rtol=1e-7)
    assert received(f, 1)[0] < 0.05  # the phone's time restarted


def test_a_clear_whose_full_answer_someone_else_took_is_still_seen():
    t, w = steady(800)
    with PhyphoxReplay([(t, w)], speed=1.0) as replay:
        f = Follower(replay)

        def phone_page():  # the phone's own web page polls too and takes the forced full answer
            if not when(lambda: f.stream.samples >= 100):
                return
            replay.clear()
            PhyphoxClient(replay.url).get_json("/get?gyr_time=1.0&gyrX=1.0|gyr_time")

        other = threading.Thread(target=phone_page)
        other.start()
        f.run(lambda f: 1 in f.segments and len(received(f, 1)) > 50, max_s=20)
        assert joined(other)
    assert f.kinds().count("cleared") == 1
    assert received(f, 1)[0] < 0.05


def test_an_oversized_answer_is_cut_with_bounded_memory():
    t, w = steady()
    limit = 1024 * 1024
    with PhyphoxReplay([(t, w)], speed=2.0) as replay:
        replay.schedule(0.5, "huge")  # 100 MB without a declared length
        tracemalloc.start()
        f = Follower(replay, PhyphoxClient(replay.url, max_bytes=limit)).run(all_in(len(t)), max_s=30)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    failures = [e["error"] for e in f.events if e["event"] == "reconnecting"]
    assert failures == [f"answer over the {limit} bytes read"]
    assert peak < 4 * limit
    np.testing.assert_allclose(received(f), played_times(replay), rtol=1e-7)


def test_a_clear_that_stops_the_phone_until_start_is_pressed():
    t, w = steady(600)
    with PhyphoxReplay([(t, w)], speed=1.0) as replay:
        f = Follower(replay)

        def teacher():  # clears on the phone, then presses start half a second later
            if not when(lambda: f.stream.samples >= 100):
                return
            replay.clear(restart=False)
            time.sleep(0.5)
            PhyphoxClient(replay.url).get_json("/control?cmd=start")

        other = threading.Thread(target=teacher)
        other.start()
        f.run(lambda f: 1 in f.segments and len(received(f, 1)) > 50, max_s=20)
        assert joined(other)
    assert f.kinds().count("cleared") == 1
    got = received(f, 1)
    assert got[0] < 0.05 and np.all(np.diff(got) > 0)  # from the restart on, nothing lost
    np.testing.assert_allclose(np.diff(got), 0.01, atol=1e-6)
