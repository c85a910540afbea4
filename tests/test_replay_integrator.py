"""Orientation from sampled body rates (app.physics.sampled): fourth order in the sample spacing,
measured against the closed-form torque-free motion, on regular and irregular stamps."""

from __future__ import annotations

import numpy as np
import pytest

from tumble.physics import exact
from tumble.physics import quaternion as quat
from tumble.physics.sampled import interpolate, orientations, orientations_at, rotation_quaternion

#: a tumble near the intermediate axis, flipping twice in the 0.9 s of a phone's flight
MOMENTS = (0.3, 0.75, 1.0)
W0 = np.array([0.8, 20.0, 1.5])
Q0 = quat.normalize(np.array([0.9, 0.1, -0.3, 0.2]))
FLIGHT_S = 0.9


def _error(t) -> float:
    """Largest angle (rad) between the replayed and the true orientation relative to t[0]."""
    q, w = exact.torque_free(MOMENTS, Q0, W0, t)
    truth = quat.multiply(quat.conjugate(q[0]), q)
    return float(quat.angle_between(truth, orientations(t, w)).max())


def _warped(n: int) -> np.ndarray:
    """n + 1 stamps over the flight, spaced unevenly (up to 1.6 : 1) by a smooth warp."""
    x = np.linspace(0.0, 1.0, n + 1)
    return FLIGHT_S * (x + 0.06 * np.sin(2 * np.pi * x) ** 2 * np.sin(6 * np.pi * x))


@pytest.mark.parametrize("stamps", ["regular", "uneven"])
def test_halving_the_spacing_divides_the_error_by_sixteen(stamps):
    # order 4: error ~ C h^4, so each halving divides it by 2^4 = 16 once h is small; the
    # next term is O(h^5), a relative change of O(h) (5 % from 100 Hz to 200 Hz at |w| 20 rad/s)
    make = (lambda n: np.linspace(0.0, FLIGHT_S, n + 1)) if stamps == "regular" else _warped
    errors = [_error(make(n)) for n in (90, 180, 360, 720)]  # 100 to 800 Hz
    ratios = [a / b for a, b in zip(errors, errors[1:])]
    assert all(14.0 < r < 18.0 for r in ratios), (errors, ratios)
    # a first- or second-order scheme would give 2 or 4; the ratios also settle towards 16
    assert abs(ratios[-1] - 16.0) <= abs(ratios[0] - 16.0) + 0.05


def test_a_throw_sampled_at_200_hz_is_replayed_well_within_two_milliradians():
    t = np.arange(0.0, FLIGHT_S + 1e-9, 0.005)
    assert _error(t) < 2e-3


def test_a_constant_rate_is_turned_exactly_and_quaternions_stay_unit():
    w = np.array([3.0, -25.0, 7.0])
    t = np.cumsum(np.r_[0.0, np.random.default_rng(1).uniform(0.002, 0.012, 150)])
    q = orientations(t, np.tile(w, (len(t), 1)))
    expected = rotation_quaternion(np.outer(t - t[0], w))
    assert np.max(quat.angle_between(expected, q)) < 1e-12
    assert np.max(np.abs(np.linalg.norm(q, axis=1) - 1.0)) < 1e-13
    assert np.array_equal(q[0], [1.0, 0.0, 0.0, 0.0])


def test_between_stamps_the_orientation_is_fourth_order_too():
    errors = []
    for n in (90, 180):
        t = np.linspace(0.0, FLIGHT_S, n + 1)
        q, w = exact.torque_free(MOMENTS, Q0, W0, t)
        mid = 0.5 * (t[1:] + t[:-1])
        qm, _ = exact.torque_free(MOMENTS, Q0, W0, mid)
        got = orientations_at(t, w, orientations(t, w), mid)
        errors.append(float(quat.angle_between(quat.multiply(quat.conjugate(q[0]), qm), got).max()))
        # at the stamps themselves it is the stamps' orientation
        assert np.allclose(orientations_at(t, w, orientations(t, w), t[:5]), orientations(t, w)[:5], atol=1e-14)
    assert 14.0 < errors[0] / errors[1] < 18.0


def test_the_rate_between_stamps_is_the_cubic_through_the_nearest_four():
    t = np.array([0.0, 0.01, 0.025, 0.03, 0.05, 0.06])
    cubic = np.stack([1 + 2 * t - 30 * t ** 2 + 400 * t ** 3, -t ** 3, 5 + 0 * t], axis=1)
    x = np.array([0.004, 0.02, 0.041, 0.059])
    want = np.stack([1 + 2 * x - 30 * x ** 2 + 400 * x ** 3, -x ** 3, 5 + 0 * x], axis=1)
    assert np.allclose(interpolate(t, cubic, x), want, rtol=0, atol=1e-12)


def test_bad_stamps_are_refused():
    with pytest.raises(ValueError, match="increase strictly"):
        orientations(np.array([0.0, 0.01, 0.01]), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="need stamps"):
        orientations(np.array([0.0, 0.01]), np.zeros((3, 3)))
