"""The spherical viscous damper: its equations against scipy, the conserved total L, the
energy that only falls, the major-axis rule and its final energy, Explorer 1, files, CLI."""

import dataclasses
import json
import math
import time

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from tumble.physics import gyrostat
from tumble.physics import quaternion as quat
from tumble.physics.body import Damper, box, from_vector6
from tumble.physics.diagnostics import angular_momentum, diagnose, kinetic_energy
from tumble.physics.errors import ParameterError
from tumble.physics.integrators import INTEGRATORS, ORDERS, Propagator, simulate
from tumble.physics.model import compile_model
from tumble.physics.state import State
from tumble.scenario import dumps, load, loads_toml
from conftest import refused, tumble

FIXED_STEP = sorted(ORDERS)
#: every method that carries a damper (the splittings and exact refuse it)
DAMPER_INTEGRATORS = [n for n in INTEGRATORS if n not in ("exact", "splitting", "splitting4")]
#: slack on an observed convergence order (log2 of an error ratio between dt and dt/2)
ORDER_SLACK = 0.3
DOP853_RTOL = 1e-12
NO_GRAVITY = np.zeros(3)


def _damped(body, inertia, coefficient):
    return dataclasses.replace(body, damper=Damper(inertia, coefficient))


def _state(w0, s0=None):
    s = State.initial(angular_velocity=w0)
    return s.replace(s=np.asarray(w0 if s0 is None else s0, dtype=float))


def _observed_order(err_h, err_small) -> float:
    return math.log2(err_h / err_small)


# ------------------------------------------------------------------ the equations, every method

#: a body whose frame is not principal, so that s is mapped to the principal frame and back
GENERAL_J6 = (0.045, 0.035, 0.025, 0.004, -0.003, 0.006)
GENERAL_W0 = np.array([0.4, 6.0, -0.7])
GENERAL_S0 = np.array([-1.0, 2.0, 0.5])  # the sphere starts turning otherwise than the body
GENERAL_DAMPER = (0.004, 0.01)  # J, c: J / c = 0.4 s, a visible exchange within a second


def _reference(body, w0, s0, times):
    """I w' = -w x I w + c (s - w), J s' = -w x J s - c (s - w), q' = q (0, w) / 2 in the
    user's body frame by scipy's DOP853 at rtol 1e-12: independent of the kernels and of
    the principal frame."""
    I, J, c = body.inertia, body.damper.inertia, body.damper.coefficient
    Iinv = np.linalg.inv(I)

    def rhs(_t, y):
        q, w, s = y[:4], y[4:7], y[7:]
        torque = c * (s - w)
        dq = 0.5 * quat.multiply(q, np.array([0.0, *w]))
        return np.concatenate([dq, Iinv @ (torque - np.cross(w, I @ w)), (-J * np.cross(w, s) - torque) / J])

    sol = solve_ivp(rhs, (times[0], times[-1]), np.array([1.0, 0, 0, 0, *w0, *s0]), method="DOP853",
                    t_eval=times, rtol=1e-12, atol=1e-14)
    return quat.normalize(sol.y[:4].T), sol.y[4:7].T, sol.y[7:].T


def test_every_method_carries_the_damper_at_its_order():
    """Each method against the scipy reference on a non-principal body: dop853 to a few
    hundred times its rtol, the fixed-step methods converging at their order in q, w and s
    (neither slower nor faster), with errors within a p-th order method's global error
    ~ (lam h)^p lam T at the problem's fastest rate lam = |w0| (constant up to 1)."""
    body = _damped(from_vector6(1.0, GENERAL_J6), *GENERAL_DAMPER)
    assert np.max(np.abs(body.principal()[1] - np.eye(3))) > 0.1, "the body frame must not be principal"
    duration, dt = 1.0, 0.008
    times = np.linspace(0.0, duration, int(round(duration / dt)) + 1)
    ref_q, ref_w, ref_s = _reference(body, GENERAL_W0, GENERAL_S0, times)
    # the coupling matters: the sphere's rate moves by a visible amount in the second
    assert np.linalg.norm(ref_s[-1] - GENERAL_S0) > 0.3 * np.linalg.norm(GENERAL_S0)
    scale = np.linalg.norm(GENERAL_W0)

    def error(traj):
        return max(np.max(np.linalg.norm(traj.w - ref_w, axis=1)) / scale,
                   np.max(np.linalg.norm(traj.s - ref_s, axis=1)) / scale,
                   float(np.max(quat.angle_between(traj.q, ref_q))))

    for name in DAMPER_INTEGRATORS:
        if name == "dop853":
            traj = simulate(body, _state(GENERAL_W0, GENERAL_S0), name, dt, duration, rtol=DOP853_RTOL, atol=1e-14)
            assert error(traj) < 1e3 * DOP853_RTOL
            continue
        errs = [error(simulate(body, _state(GENERAL_W0, GENERAL_S0), name, h, duration, sample=dt))
                for h in (dt, dt / 2)]
        p = ORDERS[name]
        assert abs(_observed_order(*errs) - p) < ORDER_SLACK, (name, errs, _observed_order(*errs))
        assert errs[1] < (scale * dt / 2) ** p * scale * duration, (name, errs)


def test_the_propagator_carries_the_sphere_between_calls():
    """The worker steps batch by batch: two calls of n steps are one run of 2 n steps."""
    body = _damped(from_vector6(1.0, GENERAL_J6), *GENERAL_DAMPER)
    prop = Propagator(compile_model(body), "rk4", 1e-3)
    state = prop.advance(prop.advance(_state(GENERAL_W0, GENERAL_S0), 250), 250)
    whole = simulate(body, _state(GENERAL_W0, GENERAL_S0), "rk4", 1e-3, 0.5, sample=0.5)
    np.testing.assert_array_equal(state.s, whole.s[-1])
    np.testing.assert_array_equal(state.w, whole.w[-1])


@pytest.mark.parametrize("name", ["exact", "splitting", "splitting4"])
def test_exact_and_the_splittings_refuse_a_damper(name):
    body = _damped(box(1.0, (0.1, 0.4, 0.9)), 0.01, 0.01)
    with pytest.raises(ParameterError, match="integrator must") as info:
        simulate(body, _state([0.1, 5, 0.1]), name, 1e-3, 1.0)
    assert "damper" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(ParameterError, match="integrator must"):
        Propagator(compile_model(body), name, 1e-3)


# ------------------------------------------------------------------ conservation and dissipation

#: the 10 kg Boxes box with a damper, spun at 2 rad/s near its minor axis: it settles on
#: its major axis within the 150 s (J / c = 2.5 s, near its coning period)
BOX = _damped(box(10.0, (0.1, 0.4, 0.9)), 0.1, 0.04)
BOX_W0 = np.array([0.02, 0.02, 2.0])


@pytest.fixture(scope="module")
def box_run():
    """150 s with rk4 at dt 1e-3, every step sampled."""
    return simulate(BOX, _state(BOX_W0), "rk4", 1e-3, 150.0)


def test_total_angular_momentum_is_conserved_over_150_s(box_run):
    """The equations conserve R (I w + J s) exactly; rk4 leaves its truncation error. Its
    local error is about (h |w|)^5 / 5! of |L| per step (the Taylor remainder of a turn by
    h |w|, with c / J = 0.4 /s far slower), so 150 000 steps at |w| <= 2 rad/s leave at most
    1.5e5 (2e-3)^5 / 120 = 4e-11 of |L|: within the 1e-10 asked for."""
    d = diagnose(BOX, NO_GRAVITY, box_run)
    assert np.max(np.linalg.norm(box_run.w, axis=1)) <= 2.001
    assert np.max(d.L_drift) < 1e-10, np.max(d.L_drift)
    # and the sphere does take part: without J s the body's own I w is far from conserved
    body_only = angular_momentum(dataclasses.replace(BOX, damper=None), box_run.q, box_run.w)
    assert np.max(np.linalg.norm(body_only - d.L[0], axis=1)) > 1e-3 * np.linalg.norm(d.L[0])


def test_energy_never_rises_and_falls_to_the_final_energy(box_run):
    """dE/dt = -c |s - w|^2 <= 0: between two steps E may rise only by round-off, 1e-12 of
    E0 (a few thousand ulps); the run ends on the major axis with |L|^2 / (2 (I3 + J))."""
    d = diagnose(BOX, NO_GRAVITY, box_run)
    assert np.max(np.diff(d.E)) <= 1e-12 * d.E[0], np.max(np.diff(d.E)) / d.E[0]
    final = gyrostat.final_energy(BOX, BOX_W0)
    assert d.E[-1] < 0.3 * d.E[0], "the damper must take most of the energy"
    assert abs(d.E[-1] / final - 1) < 1e-2
    assert np.degrees(gyrostat.axis_to_momentum_angle(BOX, box_run.q[-1], d.L[-1], 2)) < 1.0


def _boole(f, h):
    """Composite Boole rule (4k + 1 samples), error O(h^6) (Abramowitz & Stegun 25.4.14)."""
    assert len(f) % 4 == 1
    return 2.0 * h / 45.0 * (7.0 * (f[0] + f[-1]) + 32.0 * np.sum(f[1:-1:2]) + 12.0 * np.sum(f[2:-1:4])
                             + 14.0 * np.sum(f[4:-1:4]))


def test_energy_lost_equals_the_work_of_the_damper():
    """E(T) - E(0) = -int c |s - w|^2 dt. Along a dop853 run at rtol 1e-12 sampled every
    1 ms, the Boole rule's error T h^4 max|f''''| / 945 is below 1e-9 of E0 here (f
    varies on the scale of 1 / |w| ~ 0.2 s), so the identity holds to the integrator's
    tolerance plus that."""
    body = _damped(from_vector6(1.0, GENERAL_J6), *GENERAL_DAMPER)
    h, duration = 1e-3, 2.0
    traj = simulate(body, _state(GENERAL_W0, GENERAL_S0), "dop853", h, duration, sample=h,
                    rtol=DOP853_RTOL, atol=1e-14)
    E = kinetic_energy(body, traj.v, traj.w, traj.s)
    rate = GENERAL_DAMPER[1] * np.sum((traj.s - traj.w) ** 2, axis=1)
    assert (E[0] - E[-1]) / E[0] > 0.05, "the damper must take a visible part of the energy"
    assert abs((E[-1] - E[0]) + _boole(rate, h)) < 1e-9 * E[0]


def test_a_slender_body_with_a_strong_damper_ends_on_its_major_axis():
    """The major-axis rule: a slender box (I = 0.97, 0.84, 0.14 kg m^2) spun at 10 rad/s
    about its minor axis, the damper's J / c = 0.7 s near the body's coning period, ends
    within 1 degree of its major axis and with the final energy |L|^2 / (2 (I3 + J)) to 1%
    (it settles exponentially; 150 s is many time constants)."""
    body = _damped(box(10.0, (0.1, 0.4, 1.0)), 0.05, 0.07)
    w0 = np.array([0.01, 0.01, 10.0])
    traj = simulate(body, _state(w0), "rk4", 1e-3, 150.0, sample=0.5)
    d = diagnose(body, NO_GRAVITY, traj)
    start = np.degrees(gyrostat.axis_to_momentum_angle(body, traj.q[0], d.L[0], 2))
    end = np.degrees(gyrostat.axis_to_momentum_angle(body, traj.q[-1], d.L[-1], 2))
    assert start > 89.0 and end < 1.0, (start, end)
    final = gyrostat.final_energy(body, w0)
    assert abs(d.E[-1] / final - 1) < 1e-2
    assert d.E[0] / final > 4, "the spin about the minor axis holds several times the final energy"
    np.testing.assert_allclose(traj.s[-1], traj.w[-1], atol=1e-6 * np.linalg.norm(traj.w[-1]))


def test_final_energy_is_the_least_energy_for_the_momentum():
    """|L|^2 / (2 (I_max + J)) is the minimum of 1/2 w.I w + 1/2 J |s|^2 over every split
    of a fixed L between body and sphere, for every direction of L (random, seeded)."""
    rng = np.random.default_rng(13)
    body = _damped(from_vector6(1.0, GENERAL_J6), *GENERAL_DAMPER)
    w0, s0 = GENERAL_W0, GENERAL_S0
    final = gyrostat.final_energy(body, w0, s0)
    L = body.inertia @ w0 + body.damper.inertia * s0
    J = body.damper.inertia
    for _ in range(200):
        direction = rng.standard_normal(3)
        Lb = np.linalg.norm(L) * direction / np.linalg.norm(direction)
        s = rng.standard_normal(3) * np.linalg.norm(w0)
        w = np.linalg.solve(body.inertia, Lb - J * s)
        assert kinetic_energy(body, np.zeros(3), w, s) >= final * (1 - 1e-12)
    # and it is reached: w = s = L / (I3 + J) along the major axis
    axis = body.principal()[1][:, 2]
    w = np.linalg.norm(L) / (body.principal()[0][2] + J) * axis
    assert kinetic_energy(body, np.zeros(3), w, w) == pytest.approx(final, rel=1e-12)


# ------------------------------------------------------------------ Explorer 1

def test_explorer_1_tumbles_end_over_end_within_a_minute():
    """The preset: spun 1.3 degrees off L about its long axis, it is tumbling end over end
    (long axis within 10 degrees of perpendicular to L) within 60 s and ends on the final
    energy. Run as the window runs it (the preset's rk4 and dt)."""
    sc = load("explorer-1")
    body = sc.rigid_body
    traj = simulate(sc.model, sc.initial_state, sc.solver.integrator, sc.solver.dt, sc.solver.duration, sample=1.0)
    d = diagnose(body, NO_GRAVITY, traj)
    long_axis = np.degrees(gyrostat.axis_to_momentum_angle(body, traj.q, d.L, 0))
    major = np.degrees(gyrostat.axis_to_momentum_angle(body, traj.q, d.L, 2))
    assert long_axis[0] < 2.0
    assert long_axis[60] > 80.0, long_axis[60]
    np.testing.assert_allclose(long_axis + major, 90.0, atol=1e-9)  # a symmetric body: complementary
    final = gyrostat.final_energy(body, sc.angular_velocity)
    assert d.E[0] / final > 50 and abs(d.E[-1] / final - 1) < 1e-2
    # rk4's bound as above: n (h |w|)^5 / 5! with |w| = 78.5 rad/s (measured: 6e-7)
    steps = sc.solver.duration / sc.solver.dt
    assert np.max(d.L_drift) < steps * (sc.solver.dt * np.linalg.norm(sc.angular_velocity)) ** 5 / 120


# ------------------------------------------------------------------ files and the command line

DAMPER_TOML = """\
name = "damped box"
[body]
shape = "box"
mass = 10.0
size = [0.1, 0.4, 0.9]
[body.damper]
inertia = 0.05
coefficient = 0.05
[initial]
angular_velocity = [0.02, 0.02, 2.0]
damper_angular_velocity = [0.0, 0.0, 1.5]
[solver]
integrator = "rk4"
dt = 0.001
duration = 1.0
"""


def test_toml_round_trip_keeps_the_damper_and_the_sphere_rate():
    sc = loads_toml(DAMPER_TOML)
    assert sc.rigid_body.damper == Damper(0.05, 0.05)
    np.testing.assert_array_equal(sc.initial_state.s, [0.0, 0.0, 1.5])
    assert loads_toml(dumps(sc)) == sc
    default = loads_toml(DAMPER_TOML.replace("damper_angular_velocity = [0.0, 0.0, 1.5]\n", ""))
    np.testing.assert_array_equal(default.initial_state.s, default.initial_state.w)
    assert load("boxes-simple").initial_state.s is None


@pytest.mark.parametrize("old,new,field", [
    ("inertia = 0.05", "inertia = -0.05", "body.damper.inertia"),
    ("inertia = 0.05", "inertia = 0.0", "body.damper.inertia"),
    ("inertia = 0.05", "inertia = nan", "body.damper.inertia"),
    ("coefficient = 0.05", "coefficient = -1e-3", "body.damper.coefficient"),
    ("coefficient = 0.05", "coefficient = inf", "body.damper.coefficient"),
    ("coefficient = 0.05\n", "", "body.damper.coefficient"),
    ("coefficient = 0.05", "coefficient = 0.05\nmass = 1.0", "body.damper"),
    ("[0.0, 0.0, 1.5]", "[0.0, nan, 1.5]", "initial.damper_angular_velocity[1]"),
    ("[0.0, 0.0, 1.5]", "[0.0, 1.5]", "initial.damper_angular_velocity"),
    ("[body.damper]\ninertia = 0.05\ncoefficient = 0.05\n", "", "initial.damper_angular_velocity"),
    ('integrator = "rk4"', 'integrator = "exact"', "integrator"),
    ('integrator = "rk4"', 'integrator = "splitting4"', "integrator"),
])
def test_bad_damper_input_exits_2_with_one_line(simulate_refuses, old, new, field):
    assert old in DAMPER_TOML
    simulate_refuses(DAMPER_TOML.replace(old, new, 1), field)


def test_simulate_writes_the_sphere_rate_and_the_total_momentum(tmp_path):
    path = tmp_path / "d.toml"
    path.write_text(DAMPER_TOML)
    out = tmp_path / "d.csv"
    res = tumble("simulate", str(path), "--outputs", "DamperAngularVelocity", "--sample", "0.1", "--out", str(out))
    assert res.returncode == 0, res.stderr
    header = out.read_text().splitlines()[0].split(",")
    assert header[-3:] == ["wdx", "wdy", "wdz"]
    data = np.loadtxt(out, delimiter=",", skiprows=1)
    col = {name: data[:, k] for k, name in enumerate(header)}
    np.testing.assert_array_equal([col["wdx"][0], col["wdy"][0], col["wdz"][0]], [0.0, 0.0, 1.5])
    sc = loads_toml(DAMPER_TOML)
    traj = simulate(sc.model, sc.initial_state, "rk4", 1e-3, 1.0, sample=0.1)
    np.testing.assert_allclose(np.column_stack([col["wdx"], col["wdy"], col["wdz"]]), traj.s, rtol=0, atol=1e-15)
    # L is the total momentum R (I w + J s), T includes 1/2 J |s|^2
    L = np.column_stack([col["Lx"], col["Ly"], col["Lz"]])
    np.testing.assert_allclose(L, angular_momentum(sc.rigid_body, traj.q, traj.w, traj.s), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(col["T"], kinetic_energy(sc.rigid_body, traj.v, traj.w, traj.s), rtol=1e-14)
    assert np.max(np.linalg.norm(L - L[0], axis=1)) < 1e-10 * np.linalg.norm(L[0])


def test_the_sphere_rate_output_needs_a_damper(tmp_path):
    out = tmp_path / "x.csv"
    refused(tumble("simulate", "boxes-simple", "--outputs", "DamperAngularVelocity", "--out", out), "--outputs must",
            unwritten=[out])


def test_inspect_gives_the_final_energy_of_a_damper(tmp_path):
    path = tmp_path / "d.toml"
    path.write_text(DAMPER_TOML)
    info = json.loads(tumble("inspect", str(path), "--json").stdout)
    sc = loads_toml(DAMPER_TOML)
    L = sc.rigid_body.inertia @ np.array(sc.angular_velocity) + 0.05 * np.array([0.0, 0.0, 1.5])
    I3 = max(np.diag(sc.rigid_body.inertia))
    assert info["final_energy"] == pytest.approx(L @ L / (2 * (I3 + 0.05)), rel=1e-14)
    assert info["rotor_threshold"] is None and info["flip_period"] is None
    rigid = json.loads(tumble("inspect", "boxes-complex", "--json").stdout)
    assert rigid["final_energy"] is None and rigid["rotor_threshold"] is None


def test_a_kick_leaves_the_sphere_turning_as_it_was():
    """An impulse on the body's shell changes w at once; the sphere, coupled only through
    the viscous torque, keeps its rate (the worker's kick)."""
    from tumble.simulation import SimulationWorker

    sc = loads_toml(DAMPER_TOML)
    worker = SimulationWorker(sc, running=False)
    worker.start()
    try:
        worker.kick(np.array([0.0, 0.02, 0.0]))
        end = time.perf_counter() + 10
        while not worker.latest().kick_times and time.perf_counter() < end:
            time.sleep(0.01)
        snap = worker.latest()
    finally:
        worker.stop()
    np.testing.assert_array_equal(snap.state.s, sc.initial_state.s)
    assert not np.allclose(snap.state.w, sc.initial_state.w)
    np.testing.assert_allclose(snap.L, angular_momentum(sc.rigid_body, snap.state.q, snap.state.w, snap.state.s),
                               rtol=1e-15)
