"""Clean edges: a flight with sharp edges (recorded without noise, or a phone at rest before and
after it, its sensor's noise on every sample) is found within two samples of its true release and
catch, and ``tumble replay`` of it covers at least 95% of it; for several bodies (diagonal in
several axis orders, and with products of inertia), at 100 Hz and 200 Hz.

Such a flight once lost its first 0.13 s: a noise-free rate's samples near their top (dozens
within 1e-4 of it, all different) were taken for a sensor's range, and the flight's edges kept
off "clipped" samples."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import tumble
from tumble.throws.benches import synthetic as syn
from tumble.throws.recordings.reader import Recording, saturated_samples

#: the promise: each edge within this many samples of the truth...
EDGE_SAMPLES = 2
#: ...and the replay covering at least this share of the flight
COVERAGE = 0.95
RELEASE_S, CATCH_S, END_S = 1.0, 2.2, 3.2
SPEED = 11.0

BODIES = {
    "diagonal xyz": ((0.35, 0.8, 1.0), np.eye(3)),
    "diagonal zxy": ((0.35, 0.8, 1.0), np.eye(3)[:, [2, 0, 1]]),
    "diagonal yzx": ((0.25, 0.7, 1.0), np.eye(3)[:, [1, 2, 0]]),
    "products of inertia": ((0.3, 0.75, 1.0), Rotation.from_rotvec([0.4, -0.3, 0.6]).as_matrix()),
}
CASES = [(body, hz, noise) for body in BODIES for hz in (100, 200) for noise in (0.0, syn.NOISE)]


def clean_recording(moments, axes, hz: float, noise: float, seed: int):
    """(recording, index of the first and last flight sample): rates of exactly zero (plus the
    sensor's ``noise``) but for a free flight from RELEASE_S to CATCH_S, 1-3 degrees from the intermediate axis (its rate about that axis
    at first flat, a band of samples near the top: no sensor range)."""
    rng = np.random.default_rng(seed)
    truth = syn.Truth(moments=moments, axes=axes, drag=(0.0, 0.0, 0.0))
    w0 = syn.spin_near(truth, 1, rng.uniform(1.0, 3.0), SPEED, rng)
    t = np.arange(0.0, END_S + 0.5 / hz, 1.0 / hz)
    w = np.zeros((len(t), 3))
    flying = (t >= RELEASE_S - 1e-9) & (t < CATCH_S - 1e-9)
    w[flying] = syn.free_flight(truth, w0, t[flying])
    w += rng.normal(0.0, noise, w.shape) if noise else 0.0
    rec = Recording("clean", t, w, np.zeros(len(t), dtype=np.int64), saturated_samples(w))
    inside = np.flatnonzero(flying)
    return rec, int(inside[0]), int(inside[-1])


@pytest.fixture(scope="module")
def replays():
    """``tumble.replay`` of flight 1 of each case's recording (the flights as tumble fit lists them)."""
    out = {}
    for k, (body, hz, noise) in enumerate(CASES):
        rec, first, last = clean_recording(*BODIES[body], hz, noise, seed=k)
        out[(body, hz, noise)] = (rec, first, last, tumble.replay(rec, flight=1))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[f"{b}-{hz}Hz-{'noise' if n else 'clean'}" for b, hz, n in CASES])
def test_sharp_edges_are_found_within_two_samples_and_replayed_whole(replays, case):
    rec, first, last, flight = replays[case]
    i0 = int(np.searchsorted(rec.t, flight.t[0]))
    i1 = int(np.searchsorted(rec.t, flight.t[-1]))
    assert abs(i0 - first) <= EDGE_SAMPLES and abs(i1 - last) <= EDGE_SAMPLES, (rec.t[[i0, i1]], rec.t[[first, last]])
    covered = min(flight.t[-1], rec.t[last]) - max(flight.t[0], rec.t[first])
    assert covered >= COVERAGE * (rec.t[last] - rec.t[first])


def test_a_smooth_peak_is_not_a_sensors_range():
    """Dozens of a noise-free rate's samples within 1e-4 of its top (a steady spin) are not
    clipped; the same top repeated, as a sensor's range is, still is."""
    t = np.arange(0.0, 1.0, 0.005)
    w = np.column_stack((0.2 * np.sin(3 * t), 0.2 * np.cos(3 * t), 11.0 + 1e-3 * np.cos(9 * t)))
    assert np.sum(np.abs(w[:, 2]) >= np.abs(w[:, 2]).max() * (1 - 1e-4)) >= 10
    assert not saturated_samples(w).any()
    w[[40, 90, 150], 2] = 11.5
    assert list(np.flatnonzero(saturated_samples(w))) == [40, 90, 150]
