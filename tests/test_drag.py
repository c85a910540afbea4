"""The drag load: closed forms, the dissipation identity, a general body against scipy, files."""

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from conftest import tumble

from tumble.physics import quaternion as quat
from tumble.physics.body import box, cylinder, ellipsoid, from_vector6
from tumble.physics.diagnostics import angular_acceleration_body, rotational_energy
from tumble.physics.errors import ParameterError
from tumble.physics.integrators import INTEGRATORS, ORDERS, Propagator, simulate
from tumble.physics.loads import Drag, Loads, Torque, drag_torque
from tumble.physics.model import compile_model
from tumble.physics.state import State
from tumble.scenario import dumps, loads_toml

#: every integrator that accepts torques, with its order (dop853 is adaptive: no order)
FIXED_STEP = sorted(ORDERS)
TORQUE_INTEGRATORS = [name for name in INTEGRATORS if name != "exact"]
#: slack on an observed convergence order (log2 of an error ratio between dt and dt/2)
ORDER_SLACK = 0.3
DOP853_RTOL = 1e-12


def _spin(body, w0, loads, integrator, dt, duration, sample=None):
    state = State.initial(angular_velocity=w0)
    return simulate(body, state, integrator, dt, duration, sample=sample, loads=loads, rtol=DOP853_RTOL, atol=1e-14)


def _observed_order(err_h, err_small, halvings: int = 1) -> float:
    """Mean order of convergence between step h and h / 2**halvings."""
    return math.log2(err_h / err_small) / halvings


# ------------------------------------------------------------------ the load itself

def test_drag_torque_is_linear_or_quadratic_per_axis_and_batched():
    c = np.array([0.1, 0.2, 0.3])
    w = np.array([[1.0, -2.0, 3.0], [0.0, 0.0, -4.0]])
    np.testing.assert_allclose(drag_torque("linear", c, w), -c * w)
    norms = np.linalg.norm(w, axis=1)[:, None]
    np.testing.assert_allclose(drag_torque("quadratic", c, w), -c * norms * w)
    # always opposes the spin: w . tau <= 0
    assert np.all(np.sum(w * drag_torque("quadratic", c, w), axis=1) <= 0)


def test_loads_torque_body_adds_drag_only_given_omega():
    drag = Drag("linear", [0.1, 0.2, 0.3])
    loads = Loads(torques=[Torque([1.0, 0.0, 0.0])], drags=[drag])
    q = np.array([1.0, 0.0, 0.0, 0.0])
    w = np.array([1.0, 1.0, -1.0])
    np.testing.assert_allclose(loads.torque_body(q), [1.0, 0.0, 0.0])
    np.testing.assert_allclose(loads.torque_body(q, w), [1.0 - 0.1, -0.2, 0.3])
    body = box(1.0, (0.1, 0.4, 0.9))
    alpha = angular_acceleration_body(body, loads, q, w)
    expected = np.linalg.solve(body.inertia, loads.torque_body(q, w) - np.cross(w, body.inertia @ w))
    np.testing.assert_allclose(alpha, expected, rtol=1e-14)


def test_nonzero_drag_is_a_torque_and_a_zero_one_is_not():
    assert Loads(drags=[Drag("quadratic", [0.0, 1e-9, 0.0])]).has_torque
    assert not Loads(drags=[Drag("quadratic", [0.0, 0.0, 0.0])]).has_torque
    assert not Loads(drags=[Drag("quadratic", [1.0, 1.0, 1.0])]).has_force


@pytest.mark.parametrize("model,coefficients,field", [
    ("linear", [0.1, -0.2, 0.3], "coefficients[1]"),
    ("linear", [0.1, math.nan, 0.3], "coefficients"),
    ("linear", [0.1, math.inf, 0.3], "coefficients"),
    ("linear", [0.1, 0.2], "coefficients"),
    ("cubic", [0.1, 0.2, 0.3], "model"),
])
def test_bad_drag_is_refused_with_one_line(model, coefficients, field):
    with pytest.raises(ParameterError) as info:
        Drag(model, coefficients)
    msg = str(info.value)
    assert msg.startswith(field + " must ") and "got" in msg and "\n" not in msg


def test_exact_refuses_drag():
    body = box(1.0, (0.1, 0.4, 0.9))
    loads = Loads(drags=[Drag("linear", [0.0, 0.0, 0.01])])
    with pytest.raises(ParameterError, match="integrator must"):
        simulate(body, State.initial(angular_velocity=[0.1, 5, 0.1]), "exact", 1e-3, 1.0, loads=loads)
    with pytest.raises(ParameterError, match="integrator must"):
        Propagator(compile_model(body, loads), "exact", 1e-3)


# ------------------------------------------------------------------ closed forms

def _principal_axis_cases():
    """(body, spin axis) pairs where the spin stays on a principal axis: a sphere (any
    axis, here a generic direction), a cylinder about its symmetry axis, a box about z."""
    sphere = ellipsoid(2.0, (0.3, 0.3, 0.3))
    generic = np.array([0.3, -0.5, 0.81])
    return [
        ("sphere", sphere, generic / np.linalg.norm(generic)),
        ("cylinder", cylinder(1.5, (0.2, 0.6)), np.array([0.0, 0.0, 1.0])),
        ("box", box(1.0, (0.1, 0.4, 0.9)), np.array([0.0, 0.0, 1.0])),
    ]


def _closed_form(model, c, inertia, w0, t):
    """|w|(t) about a principal axis: w0 exp(-c t / I) (linear), w0 / (1 + c w0 t / I)
    (quadratic): the solutions of I w' = -c w and I w' = -c w^2."""
    if model == "linear":
        return w0 * np.exp(-c * t / inertia)
    return w0 / (1.0 + c * w0 * t / inertia)


@pytest.mark.parametrize("model", ["linear", "quadratic"])
@pytest.mark.parametrize("case", range(3), ids=["sphere", "cylinder", "box"])
def test_spin_about_a_principal_axis_decays_as_the_closed_form(model, case):
    """Every torque-capable integrator converges to the closed form at its order; dop853
    meets it to its tolerance. The decay rate is strong (c w0 / I ~ 2 per second, the spin
    loses 60-85 % in a second) so that the errors stand well above round-off."""
    _, body, axis = _principal_axis_cases()[case]
    inertia = float(axis @ body.inertia @ axis)
    w0 = 6.0
    # same decay scale for both models: c / I = 2 (linear), c w0 / I = 2 (quadratic)
    c = 2.0 * inertia if model == "linear" else 2.0 * inertia / w0
    coefficients = np.full(3, c) if case == 0 else np.array([0.7 * c, 1.3 * c, c])
    loads = Loads(drags=[Drag(model, coefficients)])
    duration, dt = 1.0, 0.01
    for name in TORQUE_INTEGRATORS:
        errs = []
        for h in ((dt,) if name == "dop853" else (dt, dt / 2)):
            traj = _spin(body, w0 * axis, loads, name, h, duration)
            exact = _closed_form(model, c, inertia, w0, traj.t)[:, None] * axis
            errs.append(np.max(np.linalg.norm(traj.w - exact, axis=1)) / w0)
        if name == "dop853":
            # adaptive at rtol 1e-12: the global error stays within a few hundred rtol
            assert errs[0] < 1e3 * DOP853_RTOL, (name, errs)
            continue
        p = ORDERS[name]
        assert _observed_order(*errs) > p - ORDER_SLACK, (name, errs, _observed_order(*errs))
        # a p-th order method's global error on w' = -k w is ~ (k h)^p k T / (p+1)! |w|;
        # k h = 0.02 here, and the bound below allows a constant up to 1
        assert errs[1] < (2.0 * dt / 2) ** p * 2.0 * duration, (name, errs)


# ------------------------------------------------------------------ dissipation

def _boole(f, h):
    """Composite Boole rule of equally spaced samples (4k + 1 of them), error O(h^6)
    (Abramowitz & Stegun 25.4.14)."""
    assert len(f) % 4 == 1
    return 2.0 * h / 45.0 * (7.0 * (f[0] + f[-1]) + 32.0 * np.sum(f[1:-1:2]) + 12.0 * np.sum(f[2:-1:4])
                             + 14.0 * np.sum(f[4:-1:4]))


@pytest.mark.parametrize("model", ["linear", "quadratic"])
def test_energy_lost_equals_the_work_of_the_drag(model):
    """dE/dt = w . tau_drag (Euler's equations dotted with w: the gyroscopic term does no
    work). E(T) - E(0) of each integrator's run against the Boole integral of w . tau
    along the same run: the gap converges at the method's order (the rule's h^6 is far
    below every method's error at these steps). The order is the mean over three halvings
    of the step: the energy error of the fourth-order methods changes sign along a flip, so
    one halving alone can land near a zero of its leading term."""
    body = box(1.0, (0.1, 0.4, 0.9))
    loads = Loads(drags=[Drag(model, [0.004, 0.002, 0.001] if model == "linear" else [0.0008, 0.0004, 0.0002])])
    w0 = np.array([0.1, 5.0, 0.1])  # near the intermediate axis: a flip in the window
    duration, dt = 2.0, 0.02
    for name in FIXED_STEP:
        gaps = []
        for h in (dt, dt / 8):
            traj = _spin(body, w0, loads, name, h, duration)
            E = rotational_energy(body, traj.w)
            power = np.sum(traj.w * drag_torque(model, loads.drags[0].coefficients, traj.w), axis=1)
            gaps.append(abs((E[-1] - E[0]) - _boole(power, h)) / E[0])
        assert (E[0] - E[-1]) / E[0] > 0.05, "the drag must take a visible part of the energy"
        p = ORDERS[name]
        assert _observed_order(*gaps, halvings=3) > p - ORDER_SLACK, (name, gaps)


# ------------------------------------------------------------------ a general body against scipy

#: a body whose frame is not principal (products of inertia), spun near its intermediate axis
GENERAL_J6 = (0.045, 0.035, 0.025, 0.004, -0.003, 0.006)  # Jxx, Jyy, Jzz, Jyz, Jxz, Jxy
GENERAL_W0 = np.array([0.4, 6.0, -0.7])
GENERAL_DRAGS = (Drag("quadratic", [4e-4, 1.2e-3, 2e-4]), Drag("linear", [5e-4, 1e-4, 3e-4]))


def _reference(body, drags, w0, times):
    """Euler's equations with the drags in the user's body frame, and q' = q (0, w) / 2,
    by scipy's DOP853 at rtol 1e-12 (independent of the kernels and of the principal frame)."""
    J = body.inertia
    Jinv = np.linalg.inv(J)

    def rhs(_t, y):
        q, w = y[:4], y[4:]
        tau = sum(drag_torque(d.model, d.coefficients, w) for d in drags)
        dq = 0.5 * quat.multiply(q, np.array([0.0, *w]))
        return np.concatenate([dq, Jinv @ (tau - np.cross(w, J @ w))])

    sol = solve_ivp(rhs, (times[0], times[-1]), np.array([1.0, 0, 0, 0, *w0]), method="DOP853",
                    t_eval=times, rtol=1e-12, atol=1e-14)
    return quat.normalize(sol.y[:4].T), sol.y[4:].T


def _error(traj, ref_q, ref_w, w0):
    """Largest omega error over |w0| and orientation error (rad) along the run."""
    dw = np.max(np.linalg.norm(traj.w - ref_w, axis=1)) / np.linalg.norm(w0)
    return max(dw, float(np.max(quat.angle_between(traj.q, ref_q))))


def test_general_body_with_products_of_inertia_matches_scipy_at_each_order():
    body = from_vector6(1.0, GENERAL_J6)
    assert np.max(np.abs(body.principal()[1] - np.eye(3))) > 0.1, "the body frame must not be principal"
    loads = Loads(drags=list(GENERAL_DRAGS))
    # steps where every method's error stands well above the reference's (~5e-12)
    duration, dt = 1.0, 0.008
    times = np.linspace(0.0, duration, int(round(duration / dt)) + 1)
    ref_q, ref_w = _reference(body, GENERAL_DRAGS, GENERAL_W0, times)
    # the drag matters here: it takes a visible part of |w| in the second
    assert np.linalg.norm(ref_w[-1]) < 0.9 * np.linalg.norm(GENERAL_W0)
    for name in TORQUE_INTEGRATORS:
        if name == "dop853":
            traj = _spin(body, GENERAL_W0, loads, name, dt, duration)
            assert _error(traj, ref_q, ref_w, GENERAL_W0) < 1e3 * DOP853_RTOL
            continue
        errs = [_error(_spin(body, GENERAL_W0, loads, name, h, duration, sample=dt), ref_q, ref_w, GENERAL_W0)
                for h in (dt, dt / 2)]
        p = ORDERS[name]
        # at its order, neither slower nor faster, and within a p-th order method's global error
        # ~ (lam h)^p lam T at the fastest rate lam = |w0| (constant up to 1)
        assert abs(_observed_order(*errs) - p) < ORDER_SLACK, (name, errs, _observed_order(*errs))
        lam = np.linalg.norm(GENERAL_W0)
        assert errs[1] < (lam * dt / 2) ** p * lam * duration, (name, errs)


def test_fast_paths_stay_off_only_without_loads():
    body = box(1.0, (0.1, 0.4, 0.9))
    from tumble.physics.compiled import kernels

    free = compile_model(body)
    dragged = compile_model(body, Loads(drags=[Drag("linear", [0.0, 0.0, 1e-3])]))
    assert free.params[19] == 0.0 and not kernels.has_loads(free.params, free.points)
    assert dragged.params[19] == 1.0 and kernels.has_loads(dragged.params, dragged.points)


# ------------------------------------------------------------------ scenario files and the command line

DRAG_TOML = """\
name = "dragged box"
[body]
shape = "box"
mass = 1.0
size = [0.1, 0.4, 0.9]
[initial]
angular_velocity = [0.1, 5.0, 0.1]
[[loads]]
kind = "drag"
model = "quadratic"
coefficients = [0.001, 0.002, 0.0005]
[[loads]]
kind = "torque"
vector = [0.0, 0.0, 0.01]
[solver]
integrator = "splitting"
dt = 0.001
duration = 1.0
"""


def test_toml_round_trip_keeps_the_drag():
    sc = loads_toml(DRAG_TOML)
    (drag,) = sc.applied_loads.drags
    assert drag.model == "quadratic"
    np.testing.assert_array_equal(drag.coefficients, [0.001, 0.002, 0.0005])
    assert loads_toml(dumps(sc)) == sc
    assert 'kind = "drag"' in dumps(sc)


@pytest.mark.parametrize("old,new,field", [
    ("0.002,", "-0.002,", "loads[0].coefficients[1]"),
    ("0.002,", "nan,", "loads[0].coefficients[1]"),
    ("0.002,", "inf,", "loads[0].coefficients[1]"),
    ("0.002, ", "", "loads[0].coefficients"),
    ("0.002,", '"a",', "loads[0].coefficients[1]"),
    ('"quadratic"', '"cubic"', "loads[0].model"),
    ('model = "quadratic"\n', "", "loads[0].model"),
    ('model = "quadratic"\n', 'model = "quadratic"\nframe = "world"\n', "loads[0].frame"),
    ('model = "quadratic"\n', 'model = "quadratic"\nvector = [1.0, 0.0, 0.0]\n', "loads[0].vector"),
    ('vector = [0.0, 0.0, 0.01]', 'vector = [0.0, 0.0, 0.01]\ncoefficients = [1.0, 1.0, 1.0]', "loads[1].coefficients"),
    ('integrator = "splitting"', 'integrator = "exact"', "integrator"),
])
def test_bad_drag_in_a_file_exits_2_with_one_line(simulate_refuses, old, new, field):
    assert old in DRAG_TOML
    simulate_refuses(DRAG_TOML.replace(old, new, 1), field)


def test_a_dragged_scenario_simulates_from_the_command_line(tmp_path):
    path = tmp_path / "drag.toml"
    path.write_text(DRAG_TOML)
    out = tmp_path / "x.csv"
    res = tumble("simulate", path, "--out", out, timeout=120)
    assert res.returncode == 0, res.stderr
    assert out.exists()
