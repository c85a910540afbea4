"""The live flight finder fed a synthetic session in polls of 0.1 s (no network): each throw is
reported as one flight (a later fit may report it again with refined edges: the last report
counts), with its release and catch, within a bounded stretch of the phone's time after its
catch, also when the hand never holds the phone still between throws; the work is done past
the last settled point only; the session's end fits like ``tumble fit``."""

from __future__ import annotations

import numpy as np
import pytest

from tumble.throws.benches import synthetic as syn
from tumble.throws.fitting.edges import find_flights
from tumble.throws.fitting.fit import fit_flights
from tumble.throws.live.session import Segment, SegmentView
from tumble.throws.live.fitter import FIRST_EVERY_SAMPLES, HOLD_S, LiveFitter, last_reports
from tumble.throws.recordings.reader import Recording, saturated_samples

#: a flight's start and end lie this close (s) to the simulated release and catch
MATCH_S = 0.1
#: phone time between polls (s) and between searches (s), as tumble live runs
POLL_S, SEARCH_S = 0.1, 0.2
#: a flight is searched for once the data reach HOLD_S past its catch (whether the phone is
#: still or not), at the next search; the edges' differentiator needs half its window (0.03 s)
#: more; before the first fit the whole session is searched every FIRST_EVERY_SAMPLES samples
REPORT_LAG_S = HOLD_S + 0.03 + FIRST_EVERY_SAMPLES * syn.PHONE_SPACING + SEARCH_S + POLL_S


@pytest.fixture(scope="module")
def session():
    rng = np.random.default_rng(8)
    truth = syn.Truth.rotated(2.0)
    t, w, throws = syn.make_recording(truth, syn.throw_mix(truth, 6, rng, near_share=1.0), rng, (0.6, 1.0))
    return t, w, throws


def follow(t, w):
    """Feed (t, w) poll by poll; (events with the phone time they came at, the fitter)."""
    segment = Segment()
    fitter = LiveFitter()
    got, searched = [], -1.0
    step = int(round(POLL_S / np.median(np.diff(t))))
    for i in range(0, len(t), step):
        segment.append(t[i:i + step], w[i:i + step])
        now = t[min(i + step, len(t)) - 1]
        if now - searched >= SEARCH_S:
            searched = now
            got += [(now, e) for e in fitter.process([segment.view()])]
    # the session's last search (LiveSession.finish): the joint fit of the flights reported last
    got += [(t[-1], e) for e in fitter.process([segment.view()])]
    return got, fitter


def check(got, throws, lag_s):
    """Each throw is one flight, first reported within ``lag_s`` of its catch (phone time),
    its last report at its release and catch and fitted; no other flight."""
    first = {}
    for now, e in got:
        first.setdefault(e["number"], now)
    last = last_reports([e for _, e in got])
    for throw in throws:
        hits = [e for e in last if abs(e["start"] - throw.start) <= MATCH_S and abs(e["end"] - throw.end) <= MATCH_S]
        assert len(hits) == 1, (throw, last)
        assert first[hits[0]["number"]] - throw.end <= lag_s and not hits[0]["excluded"]
    assert len(last) == len(throws)


@pytest.mark.slow  # the module live session, in real time
def test_each_throw_is_reported_once_soon_after_its_catch(session):
    t, w, throws = session
    got, fitter = follow(t, w)
    check(got, throws, REPORT_LAG_S)
    assert fitter.settled[0] > fitter.flights[-1].i1 - 1  # nothing before it is searched again
    # the session's end: the full fit of the same flights, as tumble fit runs it
    assert fitter.finish()
    rec = Recording("s", t, w, np.zeros(len(t), dtype=np.int64), saturated_samples(w))
    flights, inertia, drag = find_flights([rec])
    offline = fit_flights([rec], flights, inertia, drag)
    np.testing.assert_allclose(fitter.result.moments, offline.moments, atol=2e-3)


def test_a_hand_that_never_holds_still(session):
    t, w, throws = session
    w = w.copy()
    slow = np.linalg.norm(w, axis=1) < 3.0  # the hand waves the phone at 4 rad/s between throws
    wave = 4.0 * np.stack([np.sin(8.2 * t), np.cos(5.7 * t), np.sin(3.1 * t)], axis=1)
    w[slow] += wave[slow]
    got, _ = follow(t, w)
    check(got, throws, REPORT_LAG_S)


@pytest.mark.slow  # the module live session, in real time
def test_the_throw_in_the_air_and_its_flip(session):
    """0.2 s after each release, with the body fitted to the session, the throw in the air is
    found at its release and its first flip predicted from its first 0.1 s: within 5% of
    the flip's time after the release (what the fitted ratios with drag gave on real
    throws for 97% of them), against the flip measured in the whole flight."""
    t, w, throws = session
    got, fitter = follow(t, w)
    events = last_reports([e for _, e in got])
    assert fitter.in_air(0) is None  # the session ends at rest
    for throw, event in zip(throws, events):
        n = int(np.searchsorted(t, throw.start + 0.2))
        assert fitter.process([SegmentView(t[:n], w[:n], False)]) == []
        flying = fitter.in_air(0)
        assert abs(flying["start"] - throw.start) <= 0.05
        measured = event["start"] + event["flip_time_measured"] - throw.start
        predicted = flying["start"] + flying["flip_time_predicted"] - throw.start
        assert abs(predicted - measured) <= 0.05 * measured
