"""Integrators: orders of convergence, conservation, batching, frames, centre-of-mass motion.

Tolerances come from the methods: observed orders within 0.3 of theory; "round-off" means a
few hundred ulps of the quantity's scale over the run.
"""

import math

import numpy as np
import pytest

from tumble.physics import body as B
from tumble.physics import diagnostics, quaternion as quat
from tumble.physics.errors import DivergenceError, ParameterError
from tumble.physics.integrators import ORDERS, Propagator, simulate
from tumble.physics.loads import Force, Loads, Torque
from tumble.physics.state import State
from tumble.scenario import load

EPS = np.finfo(float).eps
FIXED = ["euler", "semi-implicit-euler", "rk4", "midpoint", "splitting", "splitting4", "rotmat-euler", "lie-rk4"]


def generic_body():
    return B.from_principal_moments(2.0, [1.0, 2.0, 2.5])


def reference(body, s0, duration, sample, loads=None):
    return simulate(body, s0, "dop853", 0.01, duration, sample=sample, loads=loads, rtol=1e-13, atol=1e-15)


def max_error(traj, ref):
    return max(quat.angle_between(traj.q, ref.q).max(), np.abs(traj.w - ref.w).max())


@pytest.mark.parametrize("name", FIXED)
@pytest.mark.parametrize("torqued", [False, True])
def test_observed_order_matches_theory(name, torqued):
    body = generic_body()
    loads = Loads(torques=[Torque([0.1, -0.2, 0.05], "body"), Torque([0.0, 0.1, 0.0], "world")]) if torqued else None
    s0 = State.initial(angular_velocity=[1.0, -0.5, 0.7])
    duration = 2.0
    ref = reference(body, s0, duration, 0.5, loads)
    p = ORDERS[name]
    dt = 0.02 if p >= 4 else 0.005
    errs = [max_error(simulate(body, s0, name, h, duration, sample=0.5, loads=loads), ref) for h in (dt, dt / 2)]
    observed = math.log2(errs[0] / errs[1])
    assert errs[1] > 1e3 * 1e-13, "errors must stay well above the reference's own accuracy"
    assert abs(observed - p) < 0.3, f"{name}: errors {errs}, observed order {observed:.2f}, theory {p}"


def test_splitting_keeps_norm_of_L_to_round_off_over_1e5_steps():
    sc = load("boxes-complex")
    traj = simulate(sc.model, sc.initial_state, "splitting", 1e-3, 100.0, sample=0.1)
    L = diagnostics.angular_momentum(sc.rigid_body, traj.q, traj.w)
    norm = np.linalg.norm(L, axis=-1)
    assert np.max(np.abs(norm / norm[0] - 1)) <= 1e-13
    # torque-free: the world vector itself is kept too (each sub-flow conserves it exactly)
    assert np.max(np.linalg.norm(L - L[0], axis=-1)) / norm[0] <= 1e-12


def test_splitting_energy_has_no_secular_drift():
    sc = load("boxes-complex")
    traj = simulate(sc.model, sc.initial_state, "splitting", 2e-3, 200.0, sample=0.05)
    E = diagnostics.rotational_energy(sc.rigid_body, traj.w)
    drift = np.abs(E / E[0] - 1)
    first, last = drift[: len(drift) // 10].max(), drift[-len(drift) // 10 :].max()
    # bounded oscillation: the last tenth is no worse than the first tenth (allow 2x for phase)
    assert last <= 2 * first and first < 1e-4


def test_semi_implicit_euler_gains_energy_as_the_course_notes_scheme_does():
    sc = load("boxes-complex")
    traj = simulate(sc.model, sc.initial_state, "semi-implicit-euler", 1e-2, 10.0, sample=0.1)
    E = diagnostics.rotational_energy(sc.rigid_body, traj.w)
    assert E[-1] > E[0] * 1.05  # explicit omega update: energy grows


@pytest.mark.parametrize("name", ["rk4", "midpoint", "splitting", "splitting4", "dop853", "exact"])
@pytest.mark.parametrize("preset", ["boxes-simple", "boxes-complex"])
def test_centre_of_mass_follows_line_or_parabola_to_round_off(name, preset):
    sc = load(preset)
    traj = simulate(sc.model, sc.initial_state, name, 1e-3, 10.0, sample=0.01)
    t = traj.t[:, None]
    g = np.asarray(sc.gravity)
    c_ref = np.asarray(sc.position) + np.asarray(sc.velocity) * t + 0.5 * g * t * t
    v_ref = np.asarray(sc.velocity) + g * t
    scale = np.abs(c_ref).max() + 1
    # 1e4 steps, each rounding at the scale of c: a random walk of a few hundred ulps at most
    assert np.abs(traj.c - c_ref).max() <= 1e4 * EPS * scale * (10 if name == "dop853" else 1)
    assert np.abs(traj.v - v_ref).max() <= 1e4 * EPS * (np.abs(v_ref).max() + 1) * (10 if name == "dop853" else 1)


@pytest.mark.parametrize("name", FIXED)
def test_batched_stepping_equals_each_body_alone(name):
    body = generic_body()
    rng = np.random.default_rng(1)
    w = rng.normal(size=(5, 3))
    q = quat.normalize(rng.normal(size=(5, 4)))
    c = rng.normal(size=(5, 3))
    v = rng.normal(size=(5, 3))
    loads = Loads(gravity=[0, 0, -9.8], torques=[Torque([0.1, 0, 0], "world")])
    batch = simulate(body, State(0.0, c, v, q, w), name, 0.01, 1.0, sample=0.1, loads=loads)
    for k in range(5):
        one = simulate(body, State(0.0, c[k], v[k], q[k], w[k]), name, 0.01, 1.0, sample=0.1, loads=loads)
        np.testing.assert_array_equal(batch.q[:, k], one.q)
        np.testing.assert_array_equal(batch.w[:, k], one.w)
        np.testing.assert_array_equal(batch.c[:, k], one.c)


def test_batched_dop853_matches_single_to_tolerance():
    body = generic_body()
    w = np.array([[1.0, 0.2, 0.1], [0.1, 1.0, -0.3]])
    s = State(0.0, np.zeros((2, 3)), np.zeros((2, 3)), np.tile([1.0, 0, 0, 0], (2, 1)), w)
    batch = simulate(body, s, "dop853", 0.01, 2.0, sample=0.5, rtol=1e-12, atol=1e-14)
    for k in range(2):
        one = simulate(body, State(0.0, np.zeros(3), np.zeros(3), [1.0, 0, 0, 0], w[k]), "dop853", 0.01, 2.0,
                       sample=0.5, rtol=1e-12, atol=1e-14)
        assert np.abs(batch.w[:, k] - one.w).max() < 1e-10


@pytest.mark.parametrize("name", ["rk4", "splitting", "dop853"])
def test_non_principal_body_frame_simulates_the_same_motion(name):
    """A body given with products of inertia moves exactly like its principal twin."""
    principal = generic_body()
    rot = quat.from_axis_angle(quat.normalize(np.array([1.0, 2.0, -0.5])), 0.7)  # body' -> principal
    Rm = quat.to_matrix(rot)
    tensor = Rm.T @ principal.inertia @ Rm  # the same body described in rotated body axes
    j6 = [tensor[0, 0], tensor[1, 1], tensor[2, 2], tensor[1, 2], tensor[0, 2], tensor[0, 1]]
    rotated = B.from_vector6(2.0, j6)
    w_p = np.array([0.3, 1.2, -0.4])
    q_p = quat.normalize(np.array([0.9, 0.1, -0.3, 0.2]))
    a = simulate(principal, State.initial(orientation=q_p, angular_velocity=w_p), name, 1e-3, 3.0, sample=0.1)
    # body' vectors b' map to principal vectors Rm b'; world orientation q' = q_p ⊗ rot
    q_b = quat.multiply(q_p, rot)
    b = simulate(rotated, State.initial(orientation=q_b, angular_velocity=Rm.T @ w_p), name, 1e-3, 3.0, sample=0.1)
    La = diagnostics.angular_momentum(principal, a.q, a.w)
    Lb = diagnostics.angular_momentum(rotated, b.q, b.w)
    assert np.abs(La - Lb).max() < 1e-11 * np.linalg.norm(La[0])
    assert quat.angle_between(quat.multiply(b.q, quat.conjugate(rot)), a.q).max() < 1e-11
    assert np.abs(b.w @ Rm.T - a.w).max() < 1e-11


def test_force_at_point_pair_is_a_pure_torque():
    body = B.cylinder(2.0, [0.5, 0.2])
    loads = Loads(forces=[Force([0, 0, 0.5], [-0.5, 0, 0]), Force([0, 0, -0.5], [0.5, 0, 0])])
    q = quat.normalize(np.array([0.3, 0.1, 0.8, -0.2]))
    np.testing.assert_allclose(loads.torque_body(q), [0, 0.5, 0], atol=1e-15)
    np.testing.assert_allclose(loads.force_world(q), 0, atol=1e-15)
    traj = simulate(body, State.initial(angular_velocity=[0, 0, 10.0]), "rk4", 1e-3, 1.0, loads=loads, sample=0.5)
    np.testing.assert_allclose(traj.c, 0, atol=1e-15)


def test_world_fixed_torque_changes_world_L_at_that_rate():
    body = generic_body()
    tau = np.array([0.3, -0.1, 0.2])
    loads = Loads(torques=[Torque(tau, "world")])
    traj = simulate(body, State.initial(angular_velocity=[1.0, 0.5, -0.2]), "rk4", 1e-3, 2.0, loads=loads, sample=0.5)
    L = diagnostics.angular_momentum(body, traj.q, traj.w)
    np.testing.assert_allclose(L - L[0], traj.t[:, None] * tau, atol=1e-11)


def test_divergence_names_time_and_step():
    body = B.from_principal_moments(1.0, [1.0, 2.0, 2.5])
    with pytest.raises(DivergenceError) as info:
        simulate(body, State.initial(angular_velocity=[3e5, 4e5, 5e5]), "euler", 0.01, 10.0)
    assert "step" in str(info.value) and "t =" in str(info.value)


def test_dop853_stops_a_runaway_spin_with_its_time_and_step():
    """A torque of 3e8 N m on a 1 kg m^2 body passes |omega| = 1e6 rad/s at t = 1/300 s (three
    steps of dt): the adaptive run must stop there (it used to keep halving its step for minutes,
    its steps shrinking as the spin grows). The body turns omega^2 / (2 torque) = 1,700 rad on the
    way, a few thousand steps (a torque of 3e6 made it 170,000 rad: 30 s of Python steps)."""
    body = B.from_principal_moments(1.0, [1.0, 1.0, 1.0])
    loads = Loads(torques=(Torque((0.0, 0.0, 3e8), "body"),))
    with pytest.raises(DivergenceError) as info:
        simulate(body, State.initial(angular_velocity=[0.0, 0.0, 1.0]), "dop853", 1e-3, 10.0, loads=loads)
    assert info.value.t == pytest.approx((1e6 - 1.0) / 3e8, rel=1e-6)
    assert info.value.step >= 1 and "step" in str(info.value)


def test_exact_refuses_torques():
    sc = load("rocket-top")
    with pytest.raises(ParameterError, match="exact"):
        simulate(sc.model, sc.initial_state, "exact", 1e-3, 1.0)
    with pytest.raises(ParameterError):
        Propagator(sc.model, "exact", 1e-3)


def test_propagator_advance_equals_simulate():
    sc = load("t-handle")
    prop = Propagator(sc.model, "rk4", 1e-3)
    s = sc.initial_state
    for _ in range(4):
        s = prop.advance(s, 250)
    traj = simulate(sc.model, sc.initial_state, "rk4", 1e-3, 1.0, sample=1.0)
    np.testing.assert_allclose(s.q, traj.q[-1], atol=1e-14)
    assert s.t == pytest.approx(1.0)


def test_sample_not_multiple_of_dt_ends_exactly_at_duration():
    sc = load("t-handle")
    traj = simulate(sc.model, sc.initial_state, "rk4", 1e-3, 1.0, sample=0.3)
    np.testing.assert_allclose(traj.t, [0, 0.3, 0.6, 0.9, 1.0])
    ref = simulate(sc.model, sc.initial_state, "dop853", 1e-3, 1.0, sample=0.1, rtol=1e-13, atol=1e-15)
    assert quat.angle_between(traj.q[-1], ref.q[-1]) < 1e-10


def test_rk4_fast_path_takes_the_general_step():
    """With only gravity, rk4 runs a scalar kernel; it must take the same step as the
    general RK4 kernel (loads included) to round-off, from an arbitrary state."""
    from tumble.physics.compiled import kernels

    rng = np.random.default_rng(7)
    params = np.zeros(20)
    params[0:3] = [0.3, 0.7, 0.9]
    params[3] = 2.0
    params[4:7] = [0.1, -0.4, -9.8]
    points, wforces = np.zeros((0, 3)), np.zeros((0, 3))
    for _ in range(20):
        y = rng.standard_normal(13)
        y[6:10] /= np.linalg.norm(y[6:10])
        fast, general = y.copy(), y.copy()
        kernels.step_rk4_free(fast, 0.01, params)
        kernels.step_rk4(general, 0.01, params, points, wforces, np.zeros((8, 13)))
        np.testing.assert_allclose(fast, general, rtol=0, atol=1e-14)
