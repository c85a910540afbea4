"""Hostile round: a steady spin (a turntable, an office chair) is not a throw.

Found: a phone on a turntable (4.7 rad/s about one axis, 100 Hz, a phone's noise) ended 30 s,
2 min and 5 min recordings in ``internal error: ValueError: Initial guess is outside of
provided bounds`` and fitted a 30 s "flight"; an hour-long one ran for over 5 minutes.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import run_measured
from tumble.throws.fitting import flights as fl
from tumble.throws.benches import synthetic as syn
from tumble.throws.fitting.edges import find_flights, refit_start
from tumble.throws.recordings.reader import Recording, saturated_samples

HEADER = '"Time (s)","Gyroscope x (rad/s)","Gyroscope y (rad/s)","Gyroscope z (rad/s)","Absolute (rad/s)"\n'


def turntable(seconds: float, axis=(1.0, 1.0, 0.0), speed=4.7, noise=0.02, seed=1, decay=0.0):
    """(t, w) of a phone spun steadily about ``axis`` (sensor frame) at 100 Hz; ``decay``:
    rad/s^2 lost to friction (an office chair)."""
    n = int(round(seconds * 100))
    t = np.arange(n) * 0.01
    axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    w = np.outer(np.maximum(speed - decay * t, 0.0), axis)
    return t, w + np.random.default_rng(seed).normal(0.0, noise, w.shape)


def write_csv(path, t, w):
    a = np.linalg.norm(w, axis=1)
    rows = np.column_stack([t, w, a])
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(HEADER)
        np.savetxt(fh, rows, fmt=("%.4f", "%.6f", "%.6f", "%.6f", "%.6f"), delimiter=",")
    return path


def recording(t, w, name="rec"):
    return Recording(name, t, w, np.zeros(len(t), dtype=np.int64), saturated_samples(w))


@pytest.mark.parametrize("axis, noise", [((0, 0, 1), 0.005), ((1, 1, 0), 0.02), ((0.3, 0.5, 0.81), 0.05)])
def test_a_turntable_is_a_steady_spin_throughout(axis, noise):
    t, w = turntable(30, axis, noise=noise)
    assert fl.steady_spin(t, w).all()


def test_a_chair_slowing_by_friction_is_a_steady_spin():
    t, w = turntable(20, (0.2, -0.3, 1.0), speed=6.0, decay=0.1)  # 6 -> 4 rad/s over 20 s
    assert fl.steady_spin(t, w).all()


def test_throws_are_never_a_steady_spin_and_are_still_found():
    rng = np.random.default_rng(3)
    truth = syn.Truth.rotated(2.0)
    t, w, plan = syn.make_recording(truth, syn.throw_mix(truth, 6, rng), rng, (0.5, 1.2))
    assert not fl.steady_spin(t, w).any()
    found, _, _ = find_flights([recording(t, w)])
    hit = sum(any(abs(t[f.i0] - p.start) < 0.15 for f in found) for p in plan)
    assert hit == len(plan)


def test_throws_beside_a_turntable_are_found_and_the_spin_is_not():
    rng = np.random.default_rng(5)
    truth = syn.Truth.rotated(2.0)
    t1, w1, plan = syn.make_recording(truth, syn.throw_mix(truth, 5, rng), rng, (0.5, 1.2))
    t2, w2 = turntable(60)
    t = np.concatenate([t1, t1[-1] + 0.01 + t2])
    w = np.concatenate([w1, w2])
    found, _, _ = find_flights([recording(t, w)])
    assert all(t[f.i1 - 1] <= t1[-1] for f in found), "a flight was found on the turntable"
    assert sum(any(abs(t[f.i0] - p.start) < 0.15 for f in found) for p in plan) == len(plan)


def test_no_flight_lasts_longer_than_any_throw():
    """A free, tumbling body for 10 s (no throw stays up that long) is no flight either."""
    truth = syn.Truth.rotated(0.0)
    t = np.arange(1000) * 0.01
    w = syn.free_flight(truth, syn.spin_near(truth, 1, 10.0, 15.0, np.random.default_rng(1)), t)
    rec = recording(t, w)
    _, dw = fl.smooth_and_derivative(t, w)
    assert fl.detect(rec, 0, dw, truth.inertia, "none", np.zeros(3)) == []


def test_a_start_that_is_not_finite_falls_back_to_the_measured_rate():
    """The turntable's ValueError: a start integrated through a body that blew up."""
    t, w = turntable(2)
    rec = recording(t, w)
    w0 = refit_start(rec, fl.Flight(0, 0, 100), np.array([np.nan, np.inf, 1.0]), np.eye(3), "none", np.zeros(3))
    assert np.all(np.isfinite(w0)) and np.allclose(w0, w[0], atol=0.1)


@pytest.mark.parametrize("seconds, deadline_s", [(30, 30), (300, 30), (3600, 60)])
def test_tumble_fit_of_a_turntable_recording_is_one_line_and_exit_2(tmp_path, seconds, deadline_s):
    path = write_csv(tmp_path / "turntable.csv", *turntable(seconds))
    run = run_measured("fit", path, deadline_s=deadline_s + 30)
    assert run.returncode == 2, run.stderr
    assert len(run.lines()) == 1 and "steady spin" in run.stderr, run.stderr
    assert run.seconds < deadline_s
    assert run.peak_mb < 1024


def test_tumble_predict_finds_no_flight_on_a_turntable(tmp_path):
    """``tumble predict`` with a fitted body finds no flight on a turntable either (its table
    of predictions is empty, as for any recording without a throw)."""
    rng = np.random.default_rng(7)
    truth = syn.Truth.rotated(2.0)
    t, w, _ = syn.make_recording(truth, syn.throw_mix(truth, 4, rng), rng, (0.6, 1.0))
    folder = syn.write_phyphox(tmp_path / "throws", t, w)
    fitted = run_measured("fit", folder, "--out", tmp_path / "fit.toml", deadline_s=120)
    assert fitted.returncode == 0, fitted.stderr
    path = write_csv(tmp_path / "turntable.csv", *turntable(120))
    run = run_measured("predict", tmp_path / "fit.toml", path, "--json", deadline_s=60)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["flights"] == [], run.stdout


def _feed(fitter, t, w, step_s=0.1):
    """The live fitter fed a growing segment as the session's search thread feeds it."""
    from tumble.throws.live.session import SegmentView

    events = []
    n_step = int(round(step_s * 100))
    for n in range(n_step, len(t) + n_step, n_step):
        events += fitter.process([SegmentView(t[:n], w[:n], False)])
    events += fitter.process([SegmentView(t, w, True)])
    return events


def test_the_live_fitter_takes_no_turntable_for_a_throw():
    from tumble.throws.live.fitter import LiveFitter

    t, w = turntable(40)
    assert _feed(LiveFitter("none"), t, w) == []


def test_the_live_fitter_still_finds_throws_after_a_turntable():
    from tumble.throws.live.fitter import LiveFitter

    rng = np.random.default_rng(11)
    truth = syn.Truth.rotated(2.0)
    t1, w1 = turntable(20)
    t2, w2, plan = syn.make_recording(truth, syn.throw_mix(truth, 4, rng), rng, (0.6, 1.0))
    t = np.concatenate([t1, t1[-1] + 0.01 + t2 - t2[0]])
    w = np.concatenate([w1, w2])
    events = _feed(LiveFitter("none"), t, w)
    starts = [p.start + t1[-1] + 0.01 - t2[0] for p in plan]
    assert all(e["start"] > t1[-1] for e in events), "a flight reported on the turntable"
    assert sum(any(abs(e["start"] - s) < 0.15 for e in events) for s in starts) == len(plan)


def test_the_fits_cost_is_sized_before_any_fitting(monkeypatch):
    """More flights than one fit takes: refused once they are found, before any is fitted."""
    from tumble.throws.fitting import fit as fit_module

    rng = np.random.default_rng(13)
    truth = syn.Truth.rotated(2.0)
    t, w, plan = syn.make_recording(truth, syn.throw_mix(truth, 4, rng), rng, (0.6, 1.0))
    monkeypatch.setattr(fit_module, "MAX_FIT_FLIGHTS", 2)
    fitted = []
    monkeypatch.setattr(fit_module, "fit_flights", lambda *a, **k: fitted.append(1))
    with pytest.raises(fit_module.ParameterError, match="hold at most 2 flights for one fit"):
        fit_module.fit_recordings([recording(t, w)])
    assert not fitted
