"""The closed-form reference behind the exact ghost: the same motion as ``simulate(..., "exact")``,
from any start (non-principal body axes, gravity, a later start time), never integrated."""

import numpy as np
import pytest

from tumble.physics.body import from_vector6
from tumble.physics.integrators import simulate
from tumble.physics.loads import Loads
from tumble.physics.model import compile_model
from tumble.physics.reference import ExactReference, exact_unavailable_reason
from tumble.physics.state import State
from tumble.scenario import load


def test_matches_the_exact_integrator_in_non_principal_axes_under_gravity():
    # products of inertia: the user's body frame is not principal
    body = from_vector6(2.0, [0.3, 0.5, 0.7, 0.05, -0.04, 0.03])
    model = compile_model(body, Loads(gravity=np.array([0.0, 0.0, -9.81])))
    start = State(1.5, [0.1, 0.2, 0.3], [1.0, 0.0, 4.0], [0.9, 0.1, -0.3, 0.2] / np.linalg.norm([0.9, 0.1, -0.3, 0.2]),
                  [0.4, 3.0, -0.2])
    traj = simulate(model, start, "exact", 0.01, 4.0, sample=0.25)
    ref = ExactReference(model, start)
    c, q, w = ref.at(traj.t)
    np.testing.assert_allclose(c, traj.c, atol=1e-12)
    np.testing.assert_allclose(q, traj.q, atol=1e-12)
    np.testing.assert_allclose(w, traj.w, atol=1e-12)
    c1, q1, w1 = ref.at(traj.t[3])  # a scalar time gives single vectors
    assert c1.shape == (3,) and q1.shape == (4,) and w1.shape == (3,)
    np.testing.assert_allclose(q1, traj.q[3], atol=1e-12)
    assert np.all(ref.orientation_error(traj.t, traj.q) < 1e-12)


def test_orientation_error_measures_the_integrator():
    sc = load("t-handle")
    ref = ExactReference(sc.model, sc.initial_state)
    errors = {}
    for integrator, dt in (("rk4", 1e-3), ("splitting4", 0.02), ("euler", 0.02)):
        traj = simulate(sc.model, sc.initial_state, integrator, dt, 10.0, sample=0.5)
        errors[integrator] = ref.orientation_error(traj.t, traj.q).max()
    assert errors["rk4"] < 1e-8            # 4th order at dt 1e-3 over three flips
    assert errors["splitting4"] < 1e-2     # 4th order, coarse step: still on top of it
    assert errors["euler"] > 0.5           # 1st order at a coarse step: visibly apart


def test_refused_with_the_reason_when_torques_are_applied():
    sc = load("rocket-top")
    reason = exact_unavailable_reason(sc.model)
    assert reason is not None and "torques or forces" in reason
    with pytest.raises(ValueError, match="torques or forces"):
        ExactReference(sc.model, sc.initial_state)
    assert exact_unavailable_reason(load("boxes-complex").model) is None  # gravity alone is fine


def test_the_worker_publishes_where_the_reference_starts():
    """The run's start, then each kick's state: the ghost restarts there."""
    import time

    from tumble.simulation import SimulationWorker

    sc = load("t-handle")
    worker = SimulationWorker(sc, running=False)
    worker.start()
    try:
        start = worker.latest().segment_start
        assert start.t == 0.0 and np.array_equal(start.w, sc.initial_state.w)
        worker.step()
        worker.kick([0.0, 1e-5, 0.0])
        deadline = time.perf_counter() + 10
        while not worker.latest().kick_times and time.perf_counter() < deadline:
            time.sleep(0.01)
        snap = worker.latest()
        assert snap.kick_times and snap.segment_start.t == snap.kick_times[-1] > 0
        np.testing.assert_array_equal(snap.segment_start.w, snap.state.w)
        run = snap.run_id
        worker.reset()
        while worker.latest().run_id == run and time.perf_counter() < deadline:
            time.sleep(0.01)
        start = worker.latest().segment_start
        assert start.t == 0.0 and np.array_equal(start.w, sc.initial_state.w)
    finally:
        worker.stop()
    assert not worker.is_alive()
