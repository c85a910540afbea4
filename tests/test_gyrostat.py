"""The gyrostat (a rotor of constant relative momentum): its equations against scipy, what it
conserves, the linear stability theory over random bodies, the threshold figure, files, CLI."""

import dataclasses
import json
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from tumble.physics import gyrostat
from tumble.physics import quaternion as quat
from tumble.physics.body import Damper, Rotor, box, from_principal_moments, from_vector6
from tumble.physics.diagnostics import diagnose
from tumble.physics.errors import ParameterError
from tumble.physics.integrators import INTEGRATORS, ORDERS, Propagator, simulate
from tumble.physics.model import compile_model
from tumble.physics.state import State
from tumble.scenario import dumps, load, loads_toml
from conftest import tumble

ROTOR_INTEGRATORS = [n for n in INTEGRATORS if n not in ("exact", "splitting", "splitting4")]
ORDER_SLACK = 0.3
DOP853_RTOL = 1e-12
NO_GRAVITY = np.zeros(3)


def _with_rotor(body, axis, h):
    return dataclasses.replace(body, rotor=Rotor(axis, h))


def _spin(body, w0, integrator, dt, duration, sample=None, rtol=DOP853_RTOL):
    return simulate(body, State.initial(angular_velocity=w0), integrator, dt, duration, sample=sample,
                    rtol=rtol, atol=1e-14)


# ------------------------------------------------------------------ the equations, every method

GENERAL_J6 = (0.045, 0.035, 0.025, 0.004, -0.003, 0.006)
GENERAL_W0 = np.array([0.4, 6.0, -0.7])
GENERAL_AXIS = np.array([0.3, 1.0, -0.2])  # off every principal axis, not unit (normalised)
GENERAL_H = 0.05


def test_every_method_carries_the_rotor_at_its_order():
    """I w' + w x (I w + h a) = 0 and q' = q (0, w) / 2 in the user's body frame by scipy
    (independent of the kernels and of the principal frame) against each method: converging
    at its order (neither slower nor faster), with errors within a p-th order method's global
    error ~ (lam h)^p lam T at the problem's fastest rate lam = |w0| (constant up to 1)."""
    body = _with_rotor(from_vector6(1.0, GENERAL_J6), GENERAL_AXIS, GENERAL_H)
    a = GENERAL_AXIS / np.linalg.norm(GENERAL_AXIS)
    np.testing.assert_allclose(body.rotor.axis, a, rtol=1e-15)
    I = body.inertia
    Iinv = np.linalg.inv(I)

    def rhs(_t, y):
        q, w = y[:4], y[4:]
        return np.concatenate([0.5 * quat.multiply(q, np.array([0.0, *w])),
                               -Iinv @ np.cross(w, I @ w + GENERAL_H * a)])

    duration, dt = 1.0, 0.008
    times = np.linspace(0.0, duration, int(round(duration / dt)) + 1)
    sol = solve_ivp(rhs, (0.0, duration), np.array([1.0, 0, 0, 0, *GENERAL_W0]), method="DOP853", t_eval=times,
                    rtol=1e-12, atol=1e-14)
    ref_q, ref_w = quat.normalize(sol.y[:4].T), sol.y[4:].T
    rigid = _spin(dataclasses.replace(body, rotor=None), GENERAL_W0, "dop853", dt, duration, sample=dt)
    assert np.max(np.linalg.norm(rigid.w - ref_w, axis=1)) > 0.05 * np.linalg.norm(GENERAL_W0), \
        "the rotor must change the motion visibly"

    def error(traj):
        return max(np.max(np.linalg.norm(traj.w - ref_w, axis=1)) / np.linalg.norm(GENERAL_W0),
                   float(np.max(quat.angle_between(traj.q, ref_q))))

    for name in ROTOR_INTEGRATORS:
        if name == "dop853":
            assert error(_spin(body, GENERAL_W0, name, dt, duration, sample=dt)) < 1e3 * DOP853_RTOL
            continue
        errs = [error(_spin(body, GENERAL_W0, name, h, duration, sample=dt)) for h in (dt, dt / 2)]
        p = ORDERS[name]
        assert abs(math.log2(errs[0] / errs[1]) - p) < ORDER_SLACK, (name, errs)
        scale = np.linalg.norm(GENERAL_W0)
        assert errs[1] < (scale * dt / 2) ** p * scale * duration, (name, errs)


@pytest.mark.parametrize("name", ["exact", "splitting", "splitting4"])
def test_exact_and_the_splittings_refuse_a_rotor(name):
    body = _with_rotor(box(1.0, (0.1, 0.4, 0.9)), [0, 1, 0], 0.1)
    with pytest.raises(ParameterError, match="integrator must") as info:
        _spin(body, [0.1, 5, 0.1], name, 1e-3, 1.0)
    assert "rotor" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(ParameterError, match="integrator must"):
        Propagator(compile_model(body), name, 1e-3)


def test_the_gyrostat_conserves_its_momentum_and_energy():
    """World R (I w + h a) and 1/2 w.I w (the gyrostat's Hamiltonian: w . (w x m) = 0) are
    conserved by the equations; rk4 at dt 1 ms and |w| 6 rad/s keeps them to its
    truncation, n (h |w|)^5 / 5! = 1e4 (6e-3)^5 / 120 = 6e-10 over 10 s."""
    body = _with_rotor(from_vector6(1.0, GENERAL_J6), GENERAL_AXIS, GENERAL_H)
    traj = _spin(body, GENERAL_W0, "rk4", 1e-3, 10.0, sample=0.01)
    d = diagnose(body, NO_GRAVITY, traj)
    bound = 1e4 * (1e-3 * np.linalg.norm(GENERAL_W0)) ** 5 / 120
    assert np.max(d.L_drift) < bound and np.max(np.abs(d.E_drift)) < bound
    # L includes h a: the body's I w alone turns in the world
    Lw = quat.rotate(traj.q, traj.w @ body.inertia.T)
    assert np.max(np.linalg.norm(Lw - Lw[0], axis=1)) > 1e-3 * np.linalg.norm(Lw[0])


def test_a_rotor_axis_is_a_direction_its_length_does_not_matter():
    base = box(1.0, (0.1, 0.4, 0.9))
    one = _spin(_with_rotor(base, [0.0, 1.0, 0.0], 0.05), [0.1, 5.0, 0.1], "rk4", 1e-3, 1.0, sample=0.5)
    two = _spin(_with_rotor(base, [0.0, 2.0, 0.0], 0.05), [0.1, 5.0, 0.1], "rk4", 1e-3, 1.0, sample=0.5)
    np.testing.assert_array_equal(one.w, two.w)


# ------------------------------------------------------------------ the linear theory

def _principal_deviation(body, k, traj):
    """Components of omega on the two principal axes other than k (body frame), (n, 2)."""
    _, axes = body.principal()
    return traj.w @ axes[:, [(k + 1) % 3, (k + 2) % 3]]


def _random_case(rng):
    """Distinct random moments (ascending) and a spin rate."""
    moments = np.sort(rng.uniform(0.5, 3.0, 3))
    while min(np.diff(moments)) < 0.2:
        moments = np.sort(rng.uniform(0.5, 3.0, 3))
    return moments, rng.uniform(1.0, 4.0)


@pytest.mark.parametrize("seed", range(6))
def test_linear_theory_predicts_growth_and_oscillation_about_every_axis(seed):
    """Random bodies (seeded), a spin about principal axis k with the rotor along it, and h
    drawn inside and outside :func:`gyrostat.unstable_band`: a 1e-6 rad tilt grows as
    e^(sigma t) inside, with sigma^2 = -p_i p_j / (I_i I_j), and oscillates at
    nu^2 = p_i p_j / (I_i I_j) outside.

    Tolerances: the tilt stays below 1e-2 rad, so the nonlinear terms change the rates by
    O(1e-4); the growth is read between 4 and 8 e-folds, where the decaying mode left by
    the start is e^-8 = 3e-4 of the growing one (1e-3 covers both). The oscillation stays
    below 1e-3 rad (nonlinear terms O(1e-6)) and its period is read from 10 zero crossings
    sampled at 400 per period, where a sine's linear interpolation is off by
    O((2 pi / 400)^3) = 4e-6 (1e-5). dop853 at rtol 1e-12 is far below all of them."""
    rng = np.random.default_rng(seed)
    moments, omega = _random_case(rng)
    k = seed % 3
    i, j = (k + 1) % 3, (k + 2) % 3
    low, high = gyrostat.unstable_band(moments, k, omega)
    width = high - low
    for h, unstable in ((rng.uniform(low + 0.2 * width, high - 0.2 * width), True),
                        (high + rng.uniform(0.1, 1.0) * width, False),
                        (low - rng.uniform(0.1, 1.0) * width, False)):
        assert gyrostat.spin_is_stable(moments, k, omega, h) is not unstable
        e = np.eye(3)[k]
        body = _with_rotor(from_principal_moments(1.0, moments, allow_unphysical=True), e, h)
        p_i, p_j = h + omega * (moments[k] - moments[i]), h + omega * (moments[k] - moments[j])
        rate = math.sqrt(abs(p_i * p_j) / (moments[i] * moments[j]))
        tilt = 1e-6
        w0 = omega * e + tilt * omega * np.eye(3)[i]
        if unstable:
            t1, t2 = 4.0 / rate, 8.0 / rate
            traj = simulate(body, State.initial(angular_velocity=w0), "dop853", min(0.1 / omega, t2), t2,
                            sample=t2 / 2, rtol=DOP853_RTOL, atol=1e-16)
            d = np.linalg.norm(_principal_deviation(body, k, traj), axis=1)
            sigma = math.log(d[2] / d[1]) / (t2 - t1)
            assert d[2] < 1e-2 * omega
            assert sigma == pytest.approx(rate, rel=1e-3), (moments, omega, k, h)
        else:
            period = 2 * math.pi / rate
            n = 400
            traj = simulate(body, State.initial(angular_velocity=w0), "dop853", min(period / 20, 0.1 / omega),
                            5.25 * period, sample=period / n, rtol=DOP853_RTOL, atol=1e-16)
            x = _principal_deviation(body, k, traj)[:, 1]  # starts at 0: crossings at half periods
            sign = np.sign(x[1:]) * np.sign(x[:-1]) < 0
            idx = np.nonzero(sign)[0]
            crossings = traj.t[idx] - x[idx] * (traj.t[idx + 1] - traj.t[idx]) / (x[idx + 1] - x[idx])
            measured = 2 * np.mean(np.diff(crossings))
            assert len(crossings) >= 10
            assert measured == pytest.approx(period, rel=1e-5), (moments, omega, k, h)
            assert np.max(np.linalg.norm(_principal_deviation(body, k, traj), axis=1)) < 1e-3 * omega


def test_the_band_is_the_rigid_body_rule_without_a_rotor():
    """h = 0: unstable exactly about the intermediate axis (the rigid body's rule), and the
    intermediate threshold is the band's upper edge."""
    moments = np.array([1.0, 2.0, 3.5])
    for k in range(3):
        assert gyrostat.spin_is_stable(moments, k, 2.0, 0.0) is (k != 1)
    assert gyrostat.unstable_band(moments, 1, 2.0) == (pytest.approx(-2.0), pytest.approx(3.0))
    assert gyrostat.intermediate_threshold(moments, -2.0) == pytest.approx(3.0)


# ------------------------------------------------------------------ the figure of the issue

def _tilted(omega, degrees, toward):
    t = math.radians(degrees)
    return omega * (math.cos(t) * np.array([0.0, 1.0, 0.0]) + math.sin(t) * np.asarray(toward, dtype=float))


def _wander(body, w0, duration=60.0):
    """Largest angle (degrees) between omega and the body y axis, and the least w_y."""
    traj = _spin(body, w0, "rk4", 1e-3, duration, sample=0.01)
    cos = traj.w[:, 1] / np.linalg.norm(traj.w, axis=1)
    return float(np.degrees(np.max(np.arccos(np.clip(cos, -1, 1))))), float(np.min(traj.w[:, 1]))


@pytest.mark.parametrize("toward,name", [((0, 0, 1), "minor"), ((1, 0, 0), "major")])
def test_above_the_threshold_the_spin_stays_below_it_it_wanders(toward, name):
    """The gyrostat preset's box spun at 5 rad/s, 0.5 degrees off its intermediate axis y
    toward its minor or major axis, the rotor along y. At 1.05 h_crit the tilt stays within
    3 degrees over 60 s: the linear invariant p_1 I_1 d_1^2 + p_3 I_3 d_3^2 bounds it by
    0.5 sqrt(p_1 I_1 / (p_3 I_3)) = 2.2 degrees (toward the minor axis; 0.5 toward the
    major). At 0.95 h_crit it wanders past 15 degrees, but the rotor keeps it from turning
    over (w_y stays positive); without the rotor it flips. The linear bound holds to 5%:
    the tilt reaches 0.04 rad, and the small p_3 near the threshold lets second-order
    terms count."""
    sc = load("gyrostat")
    rigid = dataclasses.replace(sc.rigid_body, rotor=None)
    moments = np.diag(rigid.inertia)  # box axes are principal: x major, y intermediate, z minor
    omega = 5.0
    w0 = _tilted(omega, 0.5, toward)
    h_crit = gyrostat.rotor_threshold(_with_rotor(rigid, [0, 1, 0], 1.0), w0)
    assert h_crit == pytest.approx((moments[0] - moments[1]) * omega * math.cos(math.radians(0.5)), rel=1e-12)
    above, _ = _wander(_with_rotor(rigid, [0, 1, 0], 1.05 * h_crit), w0)
    p_minor = 1.05 * h_crit + omega * (moments[1] - moments[2])
    p_major = 1.05 * h_crit - omega * (moments[0] - moments[1])
    bound = 0.5 * (math.sqrt(p_minor * moments[2] / (p_major * moments[0])) if name == "minor" else 1.0)
    assert above < 3.0
    assert above == pytest.approx(bound, rel=0.05), (above, bound)
    below, least = _wander(_with_rotor(rigid, [0, 1, 0], 0.95 * h_crit), w0)
    assert below > 15.0 and least > 0, (below, least)
    _, least_free = _wander(rigid, w0, duration=10.0)
    assert least_free < 0, "without the rotor the body turns over"


def test_the_preset_sits_just_above_its_threshold():
    sc = load("gyrostat")
    h_crit = gyrostat.rotor_threshold(sc.rigid_body, sc.angular_velocity)
    assert 1.0 < sc.rigid_body.rotor.momentum / h_crit < 1.2
    angle, least = _wander(sc.rigid_body, np.asarray(sc.angular_velocity), duration=sc.solver.duration)
    assert least > 0 and angle < 10.0


# ------------------------------------------------------------------ files and the command line

ROTOR_TOML = """\
name = "gyro box"
[body]
shape = "box"
mass = 10.0
size = [0.1, 0.4, 0.9]
[body.rotor]
axis = [0.0, 1.0, 0.0]
momentum = 0.7
[initial]
angular_velocity = [0.0, 4.99695, 0.174497]
[solver]
integrator = "rk4"
dt = 0.001
duration = 1.0
"""


def test_toml_round_trip_keeps_the_rotor():
    sc = loads_toml(ROTOR_TOML)
    assert sc.rigid_body.rotor.momentum == 0.7
    np.testing.assert_array_equal(sc.rigid_body.rotor.axis, [0.0, 1.0, 0.0])
    assert loads_toml(dumps(sc)) == sc
    assert "[body.rotor]" in dumps(sc)


@pytest.mark.parametrize("old,new,field", [
    ("axis = [0.0, 1.0, 0.0]", "axis = [0.0, 0.0, 0.0]", "body.rotor.axis"),
    ("axis = [0.0, 1.0, 0.0]", "axis = [0.0, nan, 0.0]", "body.rotor.axis[1]"),
    ("axis = [0.0, 1.0, 0.0]", "axis = [0.0, 1.0]", "body.rotor.axis"),
    ("axis = [0.0, 1.0, 0.0]", "axis = [1e300, 1e300, 0.0]", "body.rotor.axis[0]"),
    ("momentum = 0.7", "momentum = inf", "body.rotor.momentum"),
    ("momentum = 0.7", 'momentum = "fast"', "body.rotor.momentum"),
    ("momentum = 0.7\n", "", "body.rotor.momentum"),
    ("momentum = 0.7", "momentum = 0.7\nspeed = 3.0", "body.rotor"),
    ('integrator = "rk4"', 'integrator = "exact"', "integrator"),
    ('integrator = "rk4"', 'integrator = "splitting"', "integrator"),
])
def test_bad_rotor_input_exits_2_with_one_line(simulate_refuses, old, new, field):
    assert old in ROTOR_TOML
    simulate_refuses(ROTOR_TOML.replace(old, new, 1), field)


def test_the_physics_refuses_a_zero_or_non_finite_axis_and_normalises_any_other():
    for axis in ([0, 0, 0], [math.nan, 1, 0], [math.inf, 0, 0], [1, 2]):
        with pytest.raises(ParameterError, match="^axis must") as info:
            Rotor(axis, 1.0)
        assert "\n" not in str(info.value)
    with pytest.raises(ParameterError, match="^momentum must"):
        Rotor([0, 1, 0], math.inf)
    for axis in ([1e200, 1e200, 1e200], [1e-200, 1e-200, 1e-200]):
        np.testing.assert_allclose(Rotor(axis, 1.0).axis, np.full(3, 1 / math.sqrt(3)), rtol=1e-15)


def test_inspect_gives_the_threshold_and_null_where_it_is_not_defined(tmp_path):
    path = tmp_path / "g.toml"
    path.write_text(ROTOR_TOML)
    info = json.loads(tumble("inspect", str(path), "--json").stdout)
    I = np.diag(loads_toml(ROTOR_TOML).rigid_body.inertia)
    assert info["rotor_threshold"] == pytest.approx((I[0] - I[1]) * 4.99695, rel=1e-14)
    assert info["final_energy"] is None and info["flip_period"] is None
    # a rotor off the intermediate axis, or a damper beside the rotor: no threshold, no final energy
    off = ROTOR_TOML.replace("axis = [0.0, 1.0, 0.0]", "axis = [0.0, 1.0, 0.1]")
    both = ROTOR_TOML.replace("[initial]", "[body.damper]\ninertia = 0.01\ncoefficient = 0.01\n[initial]")
    for text, name in ((off, "off.toml"), (both, "both.toml")):
        path = tmp_path / name
        path.write_text(text)
        res = tumble("inspect", str(path), "--json")
        assert res.returncode == 0, res.stderr
        info = json.loads(res.stdout)
        assert info["final_energy"] is None
        if name == "off.toml":
            assert info["rotor_threshold"] is None


def test_a_rotor_and_a_damper_together():
    """Both parts at once: every conserved total still conserved, and the energy falls."""
    body = dataclasses.replace(box(10.0, (0.1, 0.4, 0.9)), rotor=Rotor([0, 1, 0], 0.3), damper=Damper(0.1, 0.04))
    traj = _spin(body, [0.3, 5.0, 0.2], "rk4", 1e-3, 20.0, sample=0.01)
    d = diagnose(body, NO_GRAVITY, traj)
    assert np.max(d.L_drift) < 2e4 * (5e-3) ** 5 / 120
    assert np.max(np.diff(d.E)) <= 1e-12 * d.E[0] and d.E[-1] < d.E[0]
    assert gyrostat.final_energy(body, [0.3, 5.0, 0.2]) is None
