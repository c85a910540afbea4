"""Flip events and the predicted flip period, from trajectories and from the closed form."""

import numpy as np
import pytest

from tumble.physics import diagnostics
from tumble.physics.analysis import predicted_first_flip, predicted_flip_period
from tumble.physics.integrators import simulate
from tumble.scenario import load


@pytest.mark.parametrize("preset", ["boxes-complex", "t-handle", "asymmetric-unstable", "box-1x4x9"])
def test_observed_flips_match_the_prediction(preset):
    sc = load(preset)
    period = predicted_flip_period(sc.rigid_body, sc.angular_velocity)
    first = predicted_first_flip(sc.rigid_body, sc.angular_velocity)
    duration = first + 3.2 * period
    traj = simulate(sc.model, sc.initial_state, "rk4", 1e-3, duration, sample=1e-3)
    flips = diagnostics.flip_times(sc.rigid_body, traj.t, traj.w)
    assert len(flips) == 4
    # linear interpolation of a crossing between samples: error ~ h^2 |s''| / |s'| << 1e-6 s
    assert flips[0] == pytest.approx(first, abs=1e-6)
    np.testing.assert_allclose(np.diff(flips), period, atol=1e-6)


def test_boxes_complex_reference_values():
    sc = load("boxes-complex")
    assert predicted_first_flip(sc.rigid_body, sc.angular_velocity) == pytest.approx(1.16596004638, abs=1e-10)
    assert predicted_flip_period(sc.rigid_body, sc.angular_velocity) == pytest.approx(3.02842207901, abs=1e-10)
    traj = simulate(sc.model, sc.initial_state, "exact", 1e-3, 10.0, sample=1e-3)
    assert len(diagnostics.flip_times(sc.rigid_body, traj.t, traj.w)) == 3


@pytest.mark.parametrize("preset", ["asymmetric-stable", "boxes-simple", "symmetric-top"])
def test_a_stable_spin_does_not_flip(preset):
    """The intermediate component of a wobbling major-axis spin crosses zero, but the body
    never turns over: no flip is counted or predicted."""
    sc = load(preset)
    traj = simulate(sc.model, sc.initial_state, "rk4", 1e-3, 20.0, sample=1e-2)
    assert len(diagnostics.flip_times(sc.rigid_body, traj.t, traj.w)) == 0
    assert predicted_flip_period(sc.rigid_body, sc.angular_velocity) is None


def test_peak_share_is_an_invariant_of_the_free_motion():
    sc = load("boxes-complex")
    traj = simulate(sc.model, sc.initial_state, "exact", 1e-3, 10.0, sample=0.01)
    share = diagnostics.intermediate_peak_share(sc.rigid_body, traj.w)
    # and it is the observed peak: max m2^2 / L^2 over the run
    m2 = traj.w[:, 1] * sc.rigid_body.inertia[1, 1]
    L2 = np.sum((traj.w @ sc.rigid_body.inertia) ** 2, axis=1)
    assert np.ptp(share) < 1e-12
    assert share[0] == pytest.approx(np.max(m2 * m2 / L2), rel=1e-4)  # sampled peak, 10 ms grid


def test_a_symmetric_body_in_rotated_axes_neither_flips_nor_predicts_a_flip():
    """I = diag(2, 3, 3) given in rotated axes comes back from the eigen-solver with the two
    equal moments a few ulps apart: no intermediate axis, so no period and no flips, in the
    prediction and the counter alike (they used to disagree: 9.42 s against 0 flips)."""
    from tumble.physics import body as B
    from tumble.physics import quaternion as quat
    from tumble.physics.state import State

    R = quat.to_matrix(quat.normalize(np.array([0.8, 0.3, -0.4, 0.2])))
    tensor = R @ np.diag([2.0, 3.0, 3.0]) @ R.T
    body = B.from_vector6(1.0, [tensor[0, 0], tensor[1, 1], tensor[2, 2], tensor[1, 2], tensor[0, 2], tensor[0, 1]])
    moments = body.principal()[0]
    assert moments[2] - moments[1] < 1e-13 * moments[2]  # equal, to the rounding of eigvalsh
    w0 = R @ np.array([0.1, 1.0, 0.3])
    assert predicted_flip_period(body, w0) is None
    traj = simulate(body, State.initial(angular_velocity=w0), "rk4", 1e-3, 20.0, sample=1e-2)
    assert len(diagnostics.flip_times(body, traj.t, traj.w)) == 0
