"""Theory beside the simulation (app.physics.theory) against runs of the integrators.

Bodies and spins are drawn at random (seeded) and the presets are added. Tolerances and
where they come from:

* ``exact`` evaluates the closed form, so omega(P) = omega(0) and the Montgomery phase hold
  to rounding: ``EXACT_TOL`` (1e-9, the issue's figure) is far above it.
* ``rk4`` has a global error ~ C dt^4: halving dt must cut the phase error 16 times (observed
  order within ``ORDER_SLACK`` of 4), and the phase error can be no larger than the
  orientation error against ``exact`` (the phase is one component of that rotation).
* ``dop853``'s error is estimated by the same run at a 100 times looser rtol (its error
  scales with rtol): the tighter run's error is below that difference.
* The growth fit: the bound derived in :func:`app.physics.theory.observed_growth_rate`.
* Zero crossings by linear interpolation: ``sn`` is odd about its zeros, so the crossing is
  off by at most ``(B/A) h^3 / (6 sqrt 3)`` with ``B/A = (1 + m) lam^2 / 6 <= lam^2 / 3``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import tumble

from tumble.cli.core import main
from tumble.physics import exact, theory
from tumble.physics import quaternion as quat
from tumble.physics.body import Body, from_principal_moments
from tumble.physics.errors import ParameterError
from tumble.physics.integrators import simulate
from tumble.physics.loads import Loads, Torque
from tumble.physics.state import State
from tumble.scenario import load, preset_names

EXACT_TOL = 1e-9
ORDER_SLACK = 0.3
EPS = np.finfo(float).eps
#: the rotation rk4 takes per step in the convergence runs (rad): errors well above round-off
RK4_TURN_PER_STEP = 0.05
#: history sampling of the window
SAMPLE = 0.01
N_BODIES = 20
KINDS = ("major-side", "minor-side", "separatrix-major", "separatrix-minor", "near-major", "near-minor",
         "generic")


def _wrap(angle):
    """Angle difference brought into [-pi, pi)."""
    return (np.asarray(angle) + np.pi) % (2.0 * np.pi) - np.pi


def _random_rotation(rng):
    return quat.to_matrix(quat.normalize(rng.normal(size=4)))


def _separatrix_angle(moments):
    """chi_s with omega = e2 cos(eps) + sin(eps) (cos chi e1 + sin chi e3) on the separatrix
    for small eps: L^2 - 2 E I2 = -I1 (I2 - I1) w1^2 + I3 (I3 - I2) w3^2 = 0."""
    i1, i2, i3 = moments
    return np.arctan(np.sqrt(i1 * (i2 - i1) / (i3 * (i3 - i2))))


def _spin(rng, kind, moments):
    """Principal-frame omega of the given kind (magnitude 1..10 rad/s)."""
    rate = rng.uniform(1.0, 10.0)
    chi_s = _separatrix_angle(moments)
    if kind in ("near-major", "near-minor"):
        axis = 2 if kind == "near-major" else 0
        d = rng.normal(size=3)
        d[axis] = 0.0
        tilt = rng.uniform(0.01, 0.5)
        w = np.cos(tilt) * np.eye(3)[axis] + np.sin(tilt) * d / np.linalg.norm(d)
    elif kind == "generic":
        w = rng.normal(size=3)
        w /= np.linalg.norm(w)
    else:
        if kind == "major-side":
            chi = chi_s + rng.uniform(1e-3, 1.0) * (0.5 * np.pi - chi_s)
        elif kind == "minor-side":
            chi = chi_s - rng.uniform(1e-3, 1.0) * chi_s
        else:  # next to the separatrix: (L^2 - 2 E I2) / L^2 ~ 1e-6 tilt^2, long periods
            chi = chi_s * (1.0 + (1e-6 if kind == "separatrix-major" else -1e-6))
        tilt = 10.0 ** rng.uniform(-4.0 if "side" in kind else -2.0, np.log10(0.3))
        w = np.array([np.sin(tilt) * np.cos(chi), np.cos(tilt), np.sin(tilt) * np.sin(chi)])
        w *= rng.choice([-1.0, 1.0], size=3)  # every octant
    return rate * w


def _random_cases():
    """(label, body, w_body, q0): 20 random physical bodies in random (non-principal) frames,
    each with every kind of spin."""
    rng = np.random.default_rng(20261123)
    cases = []
    for b in range(N_BODIES):
        second = rng.uniform(0.05, 1.0, 3)  # sum of squares along x, y, z: any ellipsoid-like body
        moments = np.sort([second[1] + second[2], second[0] + second[2], second[0] + second[1]])
        frame = _random_rotation(rng)
        body = Body(rng.uniform(0.1, 5.0), frame @ np.diag(moments) @ frame.T)
        moments, axes = body.principal()
        for kind in KINDS:
            w_body = axes @ _spin(rng, kind, moments)
            cases.append((f"body{b}-{kind}", body, w_body, quat.normalize(rng.normal(size=4))))
    return cases


def _preset_cases():
    out = []
    for name in preset_names():
        sc = load(name)
        if theory.predict(sc.rigid_body, sc.angular_velocity, sc.applied_loads).polhode_period is not None:
            out.append((name, sc.rigid_body, np.asarray(sc.angular_velocity, dtype=float), sc.initial_state.q))
    return out


RANDOM = _random_cases()
PRESETS = _preset_cases()
CASES = RANDOM + PRESETS
IDS = [c[0] for c in CASES]


def _principal(body, w_body):
    moments, axes = body.principal()
    return moments, np.asarray(w_body) @ axes


def _regime(body, w_body):
    """sign of L^2 - 2 E I2: +1 circles the major axis, -1 the minor one."""
    moments, w = _principal(body, w_body)
    return np.sign(np.sum(moments * (moments - moments[1]) * w * w))


def test_the_random_spins_cover_both_sides_of_the_separatrix():
    near = [c for c in RANDOM if "side" in c[0] or "separatrix" in c[0]]
    sides = {("major" in c[0], _regime(c[1], c[2])) for c in near}
    assert sides == {(True, 1.0), (False, -1.0)}
    assert len(PRESETS) >= 7  # t-handle, boxes, box-1x4x9, matlab bodies, meshes


# --------------------------------------------------------------------------------------
# polhode period
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("label, body, w_body, q0", CASES, ids=IDS)
def test_polhode_period_is_the_first_return_of_omega(label, body, w_body, q0):
    th = theory.predict(body, w_body)
    period = th.polhode_period
    moments, w = _principal(body, w_body)
    # twice the flip period, by definition of both
    assert period == 2.0 * exact.flip_period(moments, w)
    if th.flip_period is not None:
        assert period == pytest.approx(2.0 * th.flip_period, rel=4 * EPS)
    grid = np.linspace(0.0, period, 2001)
    traj = simulate(body, State.initial(orientation=q0, angular_velocity=w_body), "exact", period, period,
                    sample=period / 2000)
    rate = np.linalg.norm(w_body)
    back = np.linalg.norm(traj.w[-1] - w_body)
    assert back <= EXACT_TOL * rate, label
    # not before: |omega(t) - omega(0)| stays far above that inside the period (the polhode
    # is a simple closed curve); at half the period omega is the mirror image, not omega(0)
    inside = np.linalg.norm(traj.w[1:-1] - w_body, axis=-1)
    assert np.all(inside > 1e3 * EXACT_TOL * rate), (label, grid[1 + np.argmin(inside)])
    assert np.linalg.norm(traj.w[1000] - w_body) > 1e-3 * rate


#: dop853 on the first three bodies' spins and on the presets
DOP853_CASES = RANDOM[:3 * len(KINDS)] + PRESETS


@pytest.mark.parametrize("label, body, w_body, q0", DOP853_CASES, ids=[c[0] for c in DOP853_CASES])
def test_polhode_period_against_dop853(label, body, w_body, q0):
    period = theory.predict(body, w_body).polhode_period
    state = State.initial(orientation=q0, angular_velocity=w_body)
    ends = {}
    for rtol in (1e-10, 1e-12):
        traj = simulate(body, state, "dop853", period, period, sample=period, rtol=rtol, atol=rtol * 1e-2)
        ends[rtol] = traj.w[-1]
    error_estimate = np.linalg.norm(ends[1e-10] - ends[1e-12])
    # the rounding floor: next to the separatrix the return is ill-conditioned. Rounding
    # omega (at the start and at every step) by eps moves D = L^2 - 2 E I2 by ~eps L^2, so
    # 1 - m by a relative eps L^2 / |D| and the period by up to that over 2 K; omega moves
    # by at most lam |omega| per unit time, lam P = 4 K: |d omega| <= 2 eps L^2 / |D| |omega|
    moments, w = _principal(body, w_body)
    conditioning = np.sum((moments * w) ** 2) / abs(np.sum(moments * (moments - moments[1]) * w * w))
    rate = np.linalg.norm(w_body)
    back = np.linalg.norm(ends[1e-12] - w_body)
    assert back <= error_estimate + 2.0 * EPS * conditioning * rate, label


def test_no_period_on_the_separatrix_for_symmetric_steady_or_torqued_bodies():
    body = from_principal_moments(1.0, [3.0, 5.0, 6.0])
    on = np.array([1.0, 0.7, 1.0])  # 3 (3 - 5) 1 + 6 (6 - 5) 1 = 0: L^2 = 2 E I2 exactly
    assert theory.polhode_period([3.0, 5.0, 6.0], on) is None
    th = theory.predict(body, on)
    assert th.polhode_period is None and th.montgomery_phase is None
    assert theory.solid_angle([3.0, 5.0, 6.0], on) is None
    assert th.growth_rate == pytest.approx(0.7 * np.sqrt(2.0 * 1.0 / 18.0))
    # a hair off it, the period is long but finite
    assert theory.polhode_period([3.0, 5.0, 6.0], on + [1e-9, 0, 0]) > 10.0
    # steady spin about the intermediate axis: no period, but the growth rate of its instability
    steady = theory.predict(body, [0.0, 2.0, 0.0])
    assert steady.polhode_period is None and steady.growth_rate == pytest.approx(2.0 * np.sqrt(2.0 / 18.0))
    # two equal moments: no intermediate axis, nothing defined
    top = theory.predict(from_principal_moments(1.0, [2.0, 2.0, 3.0]), [1.0, 0.5, 1.0])
    assert top == theory.Theory()
    # torques: not the free body
    torqued = theory.predict(body, [0.1, 2.0, 0.1], Loads(torques=[Torque([0.0, 0.0, 0.1])]))
    assert torqued == theory.Theory()
    # gravity alone leaves the rotation free
    assert theory.predict(body, [0.1, 2.0, 0.2], Loads(gravity=[0.0, 0.0, -9.8])).polhode_period is not None


# --------------------------------------------------------------------------------------
# Montgomery phase
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("label, body, w_body, q0", CASES, ids=IDS)
def test_montgomery_phase_measured_with_exact(label, body, w_body, q0):
    th = theory.predict(body, w_body)
    phase, period = th.montgomery_phase, th.polhode_period
    assert 0.0 <= phase < 2.0 * np.pi
    state = State.initial(orientation=q0, angular_velocity=w_body)
    momentum = quat.rotate(q0, body.inertia @ w_body)
    # from the start, and over a period that starts anywhere in the motion
    t0 = 0.7 * period
    start = simulate(body, state, "exact", period, period, sample=period)
    later = simulate(body, state, "exact", period, t0 + period, sample=t0)
    for q_a, q_b in ((start.q[0], start.q[-1]), (later.q[1], later.q[-1])):
        measured = theory.measured_montgomery_phase(q_a, q_b, momentum)
        assert abs(_wrap(measured - phase)) <= EXACT_TOL, label


def _rk4_phase_error(body, state, momentum, period, phase, n_steps):
    traj = simulate(body, state, "rk4", period / n_steps, period, sample=period)
    measured = theory.measured_montgomery_phase(traj.q[0], traj.q[-1], momentum)
    return abs(_wrap(measured - phase)), traj.q[-1]


@pytest.mark.parametrize("label, body, w_body, q0", CASES, ids=IDS)
def test_montgomery_phase_measured_with_rk4_to_its_fourth_order_error(label, body, w_body, q0):
    th = theory.predict(body, w_body)
    phase, period = th.montgomery_phase, th.polhode_period
    state = State.initial(orientation=q0, angular_velocity=w_body)
    momentum = quat.rotate(q0, body.inertia @ w_body)
    n = int(np.ceil(period * np.linalg.norm(w_body) / RK4_TURN_PER_STEP))
    err_dt, q_dt = _rk4_phase_error(body, state, momentum, period, phase, n)
    err_half, _ = _rk4_phase_error(body, state, momentum, period, phase, 2 * n)
    order = np.log2(err_dt / err_half)
    assert abs(order - 4.0) <= ORDER_SLACK, (label, err_dt, err_half)
    # the phase is one component of the rotation between rk4 and the closed form
    q_exact = simulate(body, state, "exact", period, period, sample=period).q[-1]
    assert err_dt <= 1.01 * quat.angle_between(q_dt, q_exact) + EXACT_TOL, label


def _polygon_solid_angle(points):
    """Signed solid angle (mod 4 pi) of the closed spherical polygon through unit vectors,
    counter-clockwise seen from outside: a fan of triangles from an apex, each by Van
    Oosterom and Strackee's formula (IEEE Trans. Biomed. Eng. 30, 125, 1983). The apex is
    the direction of the points' mean, within 90 degrees of all of them here (the curve
    is symmetric about the axis it circles), so no triangle has two antipodal corners."""
    apex = np.mean(points, axis=0)
    apex /= np.linalg.norm(apex)
    b, c = points[:-1], points[1:]
    num = np.cross(b, c) @ apex
    den = 1.0 + b @ apex + np.sum(b * c, axis=-1) + c @ apex
    return float(np.sum(2.0 * np.arctan2(num, den)))


@pytest.mark.parametrize("label, body, w_body, q0", CASES, ids=IDS)
def test_solid_angle_is_the_area_the_unit_momentum_encloses(label, body, w_body, q0):
    """Independent of the Carlson form: the polygon through L/|L| in body axes (geodesic
    edges, error O(1/N^2)); Richardson's estimate from N and 2N points bounds the error."""
    moments, w = _principal(body, w_body)
    expected = theory.solid_angle(moments, w)
    period = theory.polhode_period(moments, w)
    assert 0.0 < expected < 4.0 * np.pi
    areas = []
    for n in (4000, 8000):
        t = np.linspace(0.0, period, n + 1)
        _, wt = exact.torque_free(moments, [1.0, 0.0, 0.0, 0.0], w, t)
        m = wt * moments
        areas.append(_polygon_solid_angle(m / np.linalg.norm(m, axis=-1, keepdims=True)))
    err_2n = abs(areas[1] - areas[0]) / 3.0  # O(h^2): the finer polygon's error
    diff = (areas[1] - expected + 2.0 * np.pi) % (4.0 * np.pi) - 2.0 * np.pi
    assert abs(diff) <= 2.0 * err_2n + 1e-12, (label, diff, err_2n)


# --------------------------------------------------------------------------------------
# growth rate
# --------------------------------------------------------------------------------------


def _growth_bound(moments, beta_min):
    """Relative error bound of the growth fit (:func:`theory.observed_growth_rate`).

    Linearised about the intermediate axis, with m = I omega: m1 = u + v, m3 = c (u - v),
    u = A e^(sigma t), v = B e^(-sigma t), c^2 = (1/I2 - 1/I1) / (1/I3 - 1/I2); the log slope
    of |m_perp| is sigma (1 - r^2) / (1 + r^2 + 2 k r), r = v/u, k = (1 - c^2)/(1 + c^2),
    off by about 2 |k| r. From the hyperbola 4uv = m1^2 - m3^2 / c^2, r <= max(1, 1/c^2)
    (1 + c^2) / 4 (beta_min / beta)^2, and the window starts at beta^2 = beta_min pi/2.
    Twice that covers the off-separatrix terms of the same order.
    """
    i1, i2, i3 = moments
    c2 = (1.0 / i2 - 1.0 / i1) / (1.0 / i3 - 1.0 / i2)
    k = (1.0 - c2) / (1.0 + c2)
    r = max(1.0, 1.0 / c2) * (1.0 + c2) / 4.0 * beta_min / (0.5 * np.pi)
    return 2.0 * 2.0 * abs(k) * r


def _angle_from_intermediate(body, w):
    moments, axes = body.principal()
    m = (w @ axes) * moments
    return np.arctan2(np.hypot(m[:, 0], m[:, 2]), np.sign(m[0, 1]) * m[:, 1])


@pytest.mark.parametrize("b", range(N_BODIES))
def test_growth_rate_fitted_from_a_tiny_tilt(b):
    """A spin 1e-6 rad off the intermediate axis in a random direction, run with rk4 at
    1 ms and sampled like the window's history (10 ms)."""
    _, body, _, q0 = RANDOM[b * len(KINDS)]
    moments, axes = body.principal()
    rng = np.random.default_rng(b)
    tilt, chi, rate = 1e-6, rng.uniform(0.0, 2.0 * np.pi), rng.uniform(1.0, 10.0)
    w = rate * np.array([np.sin(tilt) * np.cos(chi), np.cos(tilt), np.sin(tilt) * np.sin(chi)])
    w_body = axes @ w
    sigma = theory.predict(body, w_body).growth_rate
    duration = (2.0 * np.log(np.pi / tilt) + 3.0) / sigma  # a decaying start, then the first half flip
    traj = simulate(body, State.initial(orientation=q0, angular_velocity=w_body), "rk4", 1e-3, duration,
                    sample=SAMPLE)
    fitted = theory.observed_growth_rate(body, traj.t, traj.w)
    assert fitted is not None
    beta = _angle_from_intermediate(body, traj.w)
    beta_min = beta[: np.argmax(beta >= np.pi / 2)].min()
    bound = _growth_bound(moments, beta_min)
    assert bound < 1e-4
    assert fitted == pytest.approx(sigma, rel=bound)


@pytest.mark.parametrize("name", ["t-handle", "boxes-complex", "book", "phone", "tennis-racket",
                                  "asymmetric-unstable"])
def test_growth_rate_fitted_on_the_presets(name):
    sc = load(name)
    body = sc.rigid_body
    sigma = theory.predict(body, sc.angular_velocity).growth_rate
    traj = simulate(sc.model, sc.initial_state, "rk4", sc.solver.dt, 3.0 / sigma * np.log(np.pi / 0.001),
                    sample=SAMPLE)
    fitted = theory.observed_growth_rate(body, traj.t, traj.w)
    beta = _angle_from_intermediate(body, traj.w)
    bound = _growth_bound(body.principal()[0], beta[: np.argmax(beta >= np.pi / 2)].min())
    assert fitted == pytest.approx(sigma, rel=bound)


def test_no_growth_fit_away_from_the_intermediate_axis():
    sc = load("asymmetric-stable")  # spun near its major axis: L never comes near the middle one
    traj = simulate(sc.model, sc.initial_state, "rk4", 1e-3, 10.0, sample=SAMPLE)
    assert theory.observed_growth_rate(sc.rigid_body, traj.t, traj.w) is None
    top = load("symmetric-top")
    traj = simulate(top.model, top.initial_state, "rk4", 1e-3, 1.0, sample=SAMPLE)
    assert theory.observed_growth_rate(top.rigid_body, traj.t, traj.w) is None


def test_growth_rate_formula():
    # Landau & Lifshitz's linearisation: I = (1, 2, 4), Omega2 = 3: sigma = 3 sqrt(1 * 2 / 4)
    assert theory.growth_rate([4.0, 1.0, 2.0], [0.0, 0.0, -3.0]) == pytest.approx(3.0 * np.sqrt(0.5), rel=EPS)


# --------------------------------------------------------------------------------------
# measuring from a sampled run (as the window does)
# --------------------------------------------------------------------------------------


def test_rotation_about_an_axis():
    rng = np.random.default_rng(5)
    q0 = quat.normalize(rng.normal(size=4))
    axis = rng.normal(size=3)
    for angle in (0.0, 0.3, np.pi, 4.0, 2.0 * np.pi - 1e-9, 7.0):
        q1 = quat.multiply(quat.from_axis_angle(axis / np.linalg.norm(axis), angle), q0)
        for sign in (1.0, -1.0):
            got = theory.rotation_about(q0, sign * q1, 3.0 * axis)
            assert 0.0 <= got < 2.0 * np.pi
            assert abs(_wrap(got - angle)) <= 10 * EPS
    # about the opposite direction the angle is the other way round
    q1 = quat.multiply(quat.from_axis_angle(axis / np.linalg.norm(axis), 1.0), q0)
    assert theory.rotation_about(q0, q1, -axis) == pytest.approx(2.0 * np.pi - 1.0, rel=EPS)


def test_orientation_interpolation_is_fourth_order():
    """Hermite interpolation of exact samples h apart, checked at the middle of every
    interval over [1, 5] s (where its error peaks) against the closed form there."""
    sc = load("t-handle")
    body, state = sc.rigid_body, sc.initial_state
    errors = []
    for h in (0.02, 0.01):
        fine = simulate(body, state, "exact", h / 2, 5.2, sample=h / 2)
        samples = slice(0, None, 2)
        middles = np.nonzero((fine.t > 1.0) & (fine.t < 5.0))[0]
        middles = middles[middles % 2 == 1]
        got = [theory.interpolate_orientation(fine.t[samples], fine.q[samples], fine.w[samples], fine.t[k])
               for k in middles]
        errors.append(float(np.max(quat.angle_between(np.array(got), fine.q[middles]))))
    assert np.log2(errors[0] / errors[1]) == pytest.approx(4.0, abs=ORDER_SLACK)
    assert errors[1] < 1e-6
    with pytest.raises(ParameterError, match="t_query"):
        theory.interpolate_orientation(fine.t, fine.q, fine.w, 6.0)


@pytest.mark.parametrize("label, body, w_body, q0", PRESETS, ids=[c[0] for c in PRESETS])
def test_observed_periods_and_phases_from_a_sampled_rk4_run(label, body, w_body, q0):
    """The window's path: rk4 at 1 ms sampled every 10 ms over 2.2 periods."""
    th = theory.predict(body, w_body)
    period = th.polhode_period
    state = State.initial(orientation=q0, angular_velocity=w_body)
    traj = simulate(body, state, "rk4", 1e-3, 2.2 * period, sample=SAMPLE)
    periods = theory.observed_polhode_periods(body, traj.t, traj.w)
    assert len(periods) >= 1
    moments, w = _principal(body, w_body)
    lam = exact.classify(moments, w).lam
    crossing = lam**2 / 3.0 * SAMPLE**3 / (6.0 * np.sqrt(3.0))
    np.testing.assert_allclose(periods, period, rtol=0, atol=2.0 * crossing * 1.1 + 1e-8)
    momentum = quat.rotate(q0, body.inertia @ w_body)
    phases = theory.observed_montgomery_phases(traj.t, traj.q, traj.w, momentum, 0.0, q0, period)
    assert len(phases) == 2
    # rk4 at 1 ms: 1e-10 rad over 10 s (README); Hermite interpolation at 10 ms: < 1e-6 rad
    assert np.all(np.abs(_wrap(phases - th.montgomery_phase)) < 2e-6), phases


def test_observed_phases_skip_periods_the_history_no_longer_holds():
    sc = load("t-handle")
    body = sc.rigid_body
    th = theory.predict(body, sc.angular_velocity)
    traj = simulate(sc.model, sc.initial_state, "rk4", 1e-3, 3.5 * th.polhode_period, sample=SAMPLE)
    momentum = quat.rotate(sc.initial_state.q, body.inertia @ sc.initial_state.w)
    cut = traj.t > 1.5 * th.polhode_period  # a ring buffer that has lost its oldest rows
    phases = theory.observed_montgomery_phases(traj.t[cut], traj.q[cut], traj.w[cut], momentum, 0.0,
                                               sc.initial_state.q, th.polhode_period)
    assert len(phases) == 1  # only the third period is whole in what is left
    assert abs(_wrap(phases[0] - th.montgomery_phase)) < 2e-6


# --------------------------------------------------------------------------------------
# the command line
# --------------------------------------------------------------------------------------


def _inspect(capsys, *args):
    assert main(["inspect", *args]) == 0
    return capsys.readouterr().out


def test_inspect_json_reports_the_theory(capsys):
    info = json.loads(_inspect(capsys, "t-handle", "--json"))
    sc = load("t-handle")
    th = theory.predict(sc.rigid_body, sc.angular_velocity)
    assert info["polhode_period"] == pytest.approx(2.0 * info["flip_period"], rel=4 * EPS)
    assert info["polhode_period"] == th.polhode_period
    assert info["growth_rate"] == th.growth_rate
    assert info["montgomery_phase"] == th.montgomery_phase
    for name, nulls in (("symmetric-top", ("polhode_period", "growth_rate", "montgomery_phase")),
                        ("rocket-top", ("polhode_period", "growth_rate", "montgomery_phase")),
                        ("boxes-simple", ("polhode_period", "growth_rate", "montgomery_phase"))):
        info = json.loads(_inspect(capsys, name, "--json"))
        assert all(info[key] is None for key in nulls), name
    # boxes-simple spins about its major axis: a stable spin, no growth (null, not 0)


def test_inspect_text_prints_the_theory(capsys):
    out = _inspect(capsys, "t-handle")
    for label in ("polhode period", "growth rate", "Montgomery phase"):
        assert label in out
    assert "Montgomery phase   none" in _inspect(capsys, "symmetric-top")


def test_inspect_entry_point_prints_null_json():
    res = tumble("inspect", "symmetric-top", "--json")
    assert res.returncode == 0, res.stderr
    assert '"montgomery_phase": null' in res.stdout
