"""Each engine adapter's conventions, checked against Tumble's exact solution on a short run.

A body that no preset is (products of inertia, a tilted start, a centre of mass thrown under a
slanted gravity) runs 1 s in every setting the registry knows. Every conversion to Tumble's
convention is checked three ways: the first sample is the start; the omega implied by
successive quaternions agrees with the reported omega (a wrong order, frame or direction is off
by the order of |omega|); and the error against the exact solution falls with the step as the
method's order says (halving dt halves a first-order method's error, divides a fourth-order
one's by 16). PyBullet's default damping is measured against its decay law instead.
"""

from __future__ import annotations

import numpy as np
import pytest

from tumble.engines import registry, score
from tumble.engines.start import Start, start_of
from tumble.engines.trajectory import misfit
from tumble.physics.integrators import sample_times
from tumble.scenario import BodySpec, Scenario, SolverSpec

#: every test here runs the other physics engines (`-m 'not engines'` leaves them out)
pytestmark = pytest.mark.engines

Q0 = np.array([0.9, 0.3, -0.2, 0.25]) / np.linalg.norm([0.9, 0.3, -0.2, 0.25])
SCENARIO = Scenario(name="tilted", body=BodySpec(shape="custom", mass=2.0, inertia=(0.3, 0.5, 0.4, 0.02, -0.03, 0.04)),
                    velocity=(1.0, -0.5, 3.0), orientation=tuple(Q0.tolist()), angular_velocity=(0.4, 0.3, 5.0),
                    gravity=(0.5, -1.0, -9.8), solver=SolverSpec(integrator="rk4", dt=0.001, duration=1.0))
TIMES = sample_times(1.0, 0.01)
#: every engine setting, and Tumble's fourth-order method as the control
SETTINGS = [name for name in registry.known() if not name.startswith("tumble:")] + ["tumble:rk4"]
#: orders of convergence: semi-implicit Euler (MuJoCo's default, DART, Drake's discrete plant)
#: and MuJoCo's implicit family are first order, RK4 fourth; Drake's continuous integrator is
#: error controlled, its step capped at dt: the order of its embedded third-order method
ORDERS = {"mujoco": 1, "mujoco:rk4": 4, "mujoco:implicit": 1, "mujoco:implicitfast": 1, "dart": 1,
          "drake": 1, "drake:continuous": 3, "tumble:rk4": 4}
#: halving dt divides the error by 2^p within this factor (the asymptotic regime is not exact)
ORDER_SLACK = 1.3
#: the omega implied by quaternions 10 ms apart differs from the mean of the two omegas by
#: about (|omega| h)^2 / 12 relative, 2e-4 here: a hundred times that still catches any
#: convention error, which is of order 1
IMPLIED_SHARE = 2e-2


@pytest.fixture(scope="module")
def runs():
    start = start_of(SCENARIO)
    out = {}
    for name in SETTINGS:
        (engine, setting), = registry.parse(name)
        out[name] = [registry.run(engine, setting, start, dt, TIMES)[0] for dt in (0.01, 0.005)]
    return out


@pytest.fixture(scope="module")
def reference():
    return score.reference(SCENARIO, TIMES)


def test_every_engine_is_installed_here():
    # the test extra installs them all: an adapter that cannot run here is a failure, not a skip
    missing = [e for e in registry.adapters() if not registry.installed(e)]
    assert not missing, f"not installed: {missing} ({registry.INSTALL_LINE})"


@pytest.mark.parametrize("name", SETTINGS)
def test_the_first_sample_is_the_start(runs, name):
    traj = runs[name][0]
    assert abs(abs(np.dot(traj.q[0], Q0)) - 1) < 1e-12
    start = start_of(SCENARIO)
    assert np.allclose(traj.w[0], start.w, rtol=0, atol=1e-12)
    assert np.allclose(traj.c[0], start.c, atol=1e-12) and np.allclose(traj.v[0], start.v, atol=1e-12)


@pytest.mark.parametrize("name", SETTINGS)
def test_reported_omega_is_the_omega_the_quaternions_turn_by(runs, name):
    traj = runs[name][1]
    assert misfit(traj.t, traj.q, traj.w, "body") < IMPLIED_SHARE


@pytest.mark.parametrize("name", [n for n in SETTINGS if n != "pybullet"])
def test_error_against_the_exact_solution_falls_with_the_methods_order(runs, reference, name):
    body = SCENARIO.rigid_body
    errors = [score.figures(body, reference, t.t, t.q, t.w, t.c)[0]["max_orientation_error"] for t in runs[name]]
    ratio = errors[0] / errors[1]
    expected = 2.0 ** ORDERS[name]
    assert expected / ORDER_SLACK < ratio < expected * ORDER_SLACK, (errors, ratio)


@pytest.mark.parametrize("name", [n for n in SETTINGS if n != "pybullet"])
def test_centre_of_mass_follows_the_engines_scheme_under_gravity(runs, reference, name):
    # semi-implicit Euler puts a falling body g h t / 2 below the parabola; RK4 and an
    # error-controlled method hold it to round-off
    body = SCENARIO.rigid_body
    for dt, traj in zip((0.01, 0.005), runs[name]):
        err = score.figures(body, reference, traj.t, traj.q, traj.w, traj.c)[0]["com_error"]
        if ORDERS[name] == 1:
            assert err == pytest.approx(0.5 * np.linalg.norm(SCENARIO.gravity) * dt * 1.0, rel=1e-6)
        else:
            assert err < 1e-9


def test_pybullet_damps_a_principal_spin_by_its_default_law():
    # btMultiBody's default damping: torque -k (1 + |w|) I w, force -k (1 + |v|) m v, k = 0.04.
    # About a principal axis the spin keeps its axis and d|w|/dt = -k |w| (1 + |w|), whose
    # solution is 1/|w| + 1 = (1/w0 + 1) exp(k t); the semi-implicit step is first order
    from tumble.engines.pybullet_adapter import DAMPING

    w0, v0 = 5.0, 3.0
    start = Start(1.5, np.diag([0.2, 0.3, 0.5]), np.zeros(3), np.array([0, v0, 0.0]), np.array([1.0, 0, 0, 0]),
                  np.array([0, 0, w0]), np.zeros(3))
    times = sample_times(2.0, 0.01)

    def law(x0):
        return 1 / ((1 / x0 + 1) * np.exp(DAMPING * times) - 1)

    gaps = []
    for dt in (1e-3, 5e-4):
        traj = registry.run("pybullet", "default", start, dt, times)[0]
        gaps.append(max(np.abs(np.linalg.norm(traj.w, axis=1) / law(w0) - 1).max(),
                        np.abs(np.linalg.norm(traj.v, axis=1) / law(v0) - 1).max()))
        # the local error of one step is about (k (1 + |w|) dt)^2 / 2, times 2 s / dt steps
        assert gaps[-1] < DAMPING * (1 + w0) * dt * 2.0
    assert 2 / ORDER_SLACK < gaps[0] / gaps[1] < 2 * ORDER_SLACK


def test_each_setting_reports_what_decides_its_result():
    start = start_of(SCENARIO)
    for name in SETTINGS:
        (engine, setting), = registry.parse(name)
        _, settings, version, _ = registry.run(engine, setting, start, 0.01, TIMES[:3])
        assert version and "integrator" in settings and "timestep" in settings and "damping" in settings, name
