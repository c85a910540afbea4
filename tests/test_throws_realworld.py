"""Real recordings' features on synthetic sessions: flights that are flights, outliers out, subsets agreeing.

The session (:func:`tumble.throws.benches.synthetic.real_world_session`): a still phone reading exact
zeros, a 1000 deg/s sensor (clipped at 17.45 rad/s) and a 2000 deg/s one, catch spikes past the
range, bounces into short free flights, a recording that starts mid-flight, and one throw of a
different object. Tolerances: a flight's edges within 0.05 s (five samples; the residual's
derivative window is 0.06 s and an edge settles where the fitted body stops matching, a few
samples); ratios within 1% (the clean fits of tests/test_throws_fit.py); an excluded flight's
rms/|omega0| is tens of times the others' while theirs sit at the noise (about 0.001).
"""

import json

import numpy as np
import pytest

from tumble.cli.core import main
from tumble.throws.benches import synthetic as syn
from tumble.throws.benches.fit_bench import recording_from_arrays
from tumble.throws.fitting.consensus import OUTLIER_FACTOR
from tumble.throws.fitting.fit import USER_EXCLUDED, fit_recordings
from tumble.throws.fitting.flights import MIN_RATE
from tumble.throws.recordings.reader import saturated_samples

TRUTH = syn.Truth.rotated(2.0)
EDGE_S = 0.05


@pytest.fixture(scope="module")
def session():
    rng = np.random.default_rng(2)
    parts = syn.real_world_session(TRUTH, rng)
    recordings = [recording_from_arrays(label, t, w) for label, t, w, _ in parts]
    return parts, recordings, fit_recordings(recordings, axes_mode="fit")


def _overlapping(result, k, throw):
    return [f for f in result.flights if f.rec_index == k and f.start < throw.end and f.end > throw.start]


@pytest.mark.slow  # the module session (several recordings fitted): about 25 s
def test_every_throw_is_one_flight_with_its_edges(session):
    parts, recordings, result = session
    for k, (_, t, _, throws) in enumerate(parts[:-1]):
        rec = recordings[k]
        for th in throws:
            found = _overlapping(result, k, th)
            if th.end - th.start < 0.35 and not found:
                continue  # a bounce this short may fall under the residual's 0.25 s (left out, never merged)
            assert len(found) == 1, (k, th.start)
            f = found[0]
            first_whole = t[(t >= th.start - 1e-9) & ~rec.saturated][0]
            assert abs(f.start - first_whole) < EDGE_S and abs(f.end - th.end) < EDGE_S
            assert not f.excluded


@pytest.mark.slow  # the module session
def test_flights_hold_no_still_slow_or_clipped_edge_samples(session):
    parts, recordings, result = session
    assert np.any(np.all(parts[0][2] == 0.0, axis=1))  # the still phone reads exact zeros
    for f in result.flights:
        assert np.all(np.linalg.norm(f.w_measured, axis=1) >= MIN_RATE)
        assert not np.any(np.all(f.w_measured == 0.0, axis=1))
        assert f.used[0] and f.used[-1]


@pytest.mark.slow  # the module session
def test_clipping_is_found_per_recording_at_its_own_range(session):
    parts, recordings, _ = session
    for (label, t, w, _), rec in zip(parts, recordings):
        top = np.max(np.abs(w))
        at_range = np.any(np.abs(w) >= top * (1 - 1e-9), axis=1)
        if np.sum(at_range) >= 3:
            assert np.all(rec.saturated[at_range]), label
    assert np.isclose(np.max(np.abs(parts[0][2])), 17.45)  # the 1000 deg/s sensor's recording clipped


@pytest.mark.slow  # the module session
def test_a_recording_starting_mid_flight_gives_a_flight_marked_cut(session):
    parts, recordings, result = session
    k = next(i for i, (label, *_) in enumerate(parts) if "starts mid-flight" in label)
    first = min((f for f in result.flights if f.rec_index == k), key=lambda f: f.start)
    assert first.cut == "start" and first.i0 == 0
    assert all(f.cut is None for f in result.flights if f is not first and f.rec_index == k)


@pytest.mark.slow  # the module session, then a fit
def test_a_different_object_is_excluded_with_its_reason(session, capsys, tmp_path):
    parts, recordings, result = session
    other = [f for f in result.flights if f.rec_index == len(parts) - 1]
    assert other and all(f.excluded for f in other)
    assert all("not a free flight of this body" in f.reason and f"{OUTLIER_FACTOR:g}x" in f.reason for f in other)
    fitted = [f.rms_relative for f in result.flights if not f.excluded]
    assert all(f.rms_relative > OUTLIER_FACTOR * np.median(fitted) for f in other)
    assert np.all(np.abs(result.moments / np.asarray(TRUTH.moments) - 1) < 0.01)
    assert result.rms_relative == float(np.median(fitted))
    # the JSON report lists it with "excluded": true and its reason
    folders = [syn.write_phyphox(tmp_path / f"r{k}", t, w) for k, (_, t, w, _) in enumerate(parts)]
    assert main(["fit", *map(str, folders), "--axes", "fit", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    listed = [f for f in report["flights"] if f["recording"] == str(folders[-1])]
    assert listed and all(f["excluded"] is True and "not a free flight" in f["reason"] for f in listed)
    assert all(f["excluded"] is False and f["reason"] is None for f in report["flights"] if f not in listed)


@pytest.mark.slow  # the module session, then fits
def test_the_user_excludes_and_puts_back(session):
    parts, recordings, result = session
    other_index = len(parts) - 1
    other = next(f for f in result.flights if f.rec_index == other_index)
    kept = next(f for f in result.flights if not f.excluded)
    again = fit_recordings(recordings, axes_mode="fit", exclude=[(kept.rec_index, kept.start + 0.1)],
                           include=[(other_index, other.start + 0.1)])
    mine = next(f for f in again.flights if f.rec_index == kept.rec_index and abs(f.start - kept.start) < 0.05)
    assert mine.excluded and mine.reason == USER_EXCLUDED
    back = [f for f in again.flights if f.rec_index == other_index]
    assert back and not any(f.excluded for f in back)
    # a different object in the fit bends it: the flights' median misfit grows
    assert again.rms_relative > result.rms_relative


@pytest.mark.slow  # fits every half of the flights
def test_any_half_of_the_flights_agrees_with_all_within_three_standard_errors():
    """Each throw is of a slightly different body (a phone case flexing, a racket re-rigged:
    ratios jittered by 0.3%), one throw per recording as a bare phone's session comes: the noise
    alone gives standard errors of about 3e-5, several times too small for the spread between
    flights, which the reported errors hold (a half of F flights differs from all of them by
    about one standard error of the whole: var = sigma^2 (2/F - 1/F))."""
    rng = np.random.default_rng(11)
    recordings = []
    for k in range(16):
        jitter = 1 + rng.normal(0.0, 0.003, 2)
        body = syn.Truth(moments=(0.3 * jitter[0], 0.75 * jitter[1], 1.0))
        rates = [syn.spin_near(body, 1, rng.uniform(4, 12), rng.uniform(14, 22), rng)]
        t, w, _ = syn.make_recording(body, rates, rng, flight_s=(0.8, 0.95))
        recordings.append(recording_from_arrays(f"r{k}", t, w))
    everything = fit_recordings(recordings)
    assert not any(f.excluded for f in everything.flights) and len(everything.flights) == 16
    assert np.all(everything.moments_std[:2] > 1e-4)  # the spread between flights, not the noise's 3e-5
    for half in (recordings[::2], recordings[1::2], recordings[:8], recordings[8:]):
        part = fit_recordings(half)
        assert np.all(np.abs(part.moments[:2] - everything.moments[:2]) <= 3 * everything.moments_std[:2])


def test_ratios_breaking_the_triangle_inequality_are_refused(tmp_path, capsys):
    body = syn.Truth(moments=(0.2, 0.5, 1.0), drag=(0.002, 0.004, 0.002))
    rng = np.random.default_rng(4)
    rates = [syn.spin_near(body, 1, a, 16.0, rng) for a in (5.0, 9.0, 13.0)]
    t, w, _ = syn.make_recording(body, rates, rng, flight_s=0.9)
    folder = syn.write_phyphox(tmp_path / "odd", t, w)
    out, png = tmp_path / "fit.toml", tmp_path / "fit.png"
    out.write_text("old\n")
    assert main(["fit", str(folder), "--out", str(out), "--plot", str(png)]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1
    assert "triangle inequality" in captured.err and "--allow-unphysical" in captured.err
    assert out.read_text() == "old\n" and not png.exists()
    assert main(["fit", str(folder), "--out", str(out), "--allow-unphysical"]) == 0
    assert "allow_unphysical = true" in out.read_text()


def test_a_plateau_at_any_range_is_clipping():
    rng = np.random.default_rng(0)
    w = rng.normal(0.0, 6.0, (400, 3))
    w = np.clip(w, -17.4533, 17.4533)  # 1000 deg/s, hit now and then on different axes
    marked = saturated_samples(w)
    np.testing.assert_array_equal(marked, np.any(np.abs(w) >= 17.4533, axis=1))
    assert marked.sum() >= 3
    w[np.abs(w) >= 17.4533] *= 0.99  # a single largest value is a peak, not a range
    w[0, 0] = 20.0
    assert not saturated_samples(w)[1:].any()


@pytest.mark.slow  # the module session, then fits
def test_another_object_is_excluded_also_under_model_error(session):
    """Fitted with --axes sensor, the 2 degree turn of the truth's axes leaves model errors of
    about 2% of |omega0| on every flight, as on real throws: the other object's flight, of
    which a first guess from the rates alone may find only a part, still stands out whole."""
    parts, recordings, _ = session
    result = fit_recordings(recordings, axes_mode="sensor")
    fitted = [f.rms_relative for f in result.flights if not f.excluded]
    assert 0.005 < np.median(fitted) < 0.04
    other = [f for f in result.flights if f.rec_index == len(parts) - 1]
    assert other and all(f.excluded for f in other)
    th = parts[-1][3][0]
    assert abs(other[0].start - th.start) < 0.1 and abs(other[0].end - th.end) < 0.1
    assert sum(f.excluded for f in result.flights) == len(other)


def test_a_flat_body_short_of_the_triangle_inequality_by_its_errors_is_kept():
    """A racket or a phone is nearly flat (J1 + J2 = J3): fitted ratios fall on either side of
    the inequality by their errors, and are kept with a note; far short of it they are refused."""
    from tumble.throws.fitting.fit import FLAT_TOLERANCE, flat_note, triangle_violation

    assert triangle_violation([0.07, 0.925, 1.0]) is None and "flat body" in flat_note([0.07, 0.925, 1.0])
    assert triangle_violation([0.07, 0.90, 1.0], [0.004, 0.012, 0.0]) is None  # 0.03 short, 3 errors 0.038
    assert triangle_violation([0.16, 0.34, 1.0], [0.008, 0.008, 0.0]) is not None
    assert triangle_violation([0.07, 0.93 - 0.9 * FLAT_TOLERANCE, 1.0]) is None
    assert triangle_violation([0.2, 0.5, 1.0]) is not None and flat_note([0.3, 0.75, 1.0]) is None


@pytest.mark.slow  # fits of many sessions
def test_where_flights_disagree_the_majority_body_wins():
    """Four throws of one body and three of another (ratios 0.45, 0.62, 1): the flights' own
    fits disagree, candidate starts are tried, the lowest cost is the majority's body, and
    the three others are excluded."""
    rng = np.random.default_rng(3)
    recordings = []
    for body, n in ((TRUTH, 4), (syn.OTHER_OBJECT, 3)):
        for k in range(n):
            rates = [syn.spin_near(body, 1, rng.uniform(4, 12), rng.uniform(14, 22), rng)]
            t, w, _ = syn.make_recording(body, rates, rng, flight_s=0.9)
            recordings.append(recording_from_arrays(f"{n}-{k}", t, w))
    result = fit_recordings(recordings, axes_mode="fit")
    assert np.all(np.abs(result.moments / np.asarray(TRUTH.moments) - 1) < 0.01)
    assert [f.excluded for f in result.flights] == [False] * 4 + [True] * 3
