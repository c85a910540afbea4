"""Closed forms of app.physics.exact against solve_ivp, identities and published reference values.

Tolerances and where they come from:

* ``EPS``-scale bounds for the closed forms themselves: a few ulps of the quantity, times
  ``1 + |rate| t`` where the phase ``lam t`` is rounded (``t`` itself carries ``eps t``).
* ``REF_TOL`` for comparisons with ``solve_ivp(DOP853, rtol=atol=1e-13)``: that is the
  reference's own global error over 10 s (up to ~3e-12 |omega| for the cases here), not
  the closed form's; near the separatrix the reference is only trusted through the first
  flip, since every saddle passage amplifies its local errors by about 1/sqrt(1 - m).
* Finite-difference checks: the 8th-order stencil's round-off ``eps |f| sum|c_k| / h``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import special
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

from tumble.physics import exact
from tumble.physics.errors import ParameterError

EPS = np.finfo(float).eps
#: global error of the DOP853 reference at rtol = atol = 1e-13 over ~10 s, relative to |omega|
#: (its spread against rtol = 3e-14, atol = 1e-15 is up to ~3e-12 |omega| for these cases)
REF_TOL = 2e-11
#: 8th-order central difference for the first derivative, offsets -4..4
FD8 = np.array([1 / 280, -4 / 105, 1 / 5, -4 / 5, 0.0, 4 / 5, -1 / 5, 4 / 105, -1 / 280])


def box_moments(mass, a, b, c):
    """Principal moments of a uniform box with edges a, b, c along x, y, z."""
    return mass / 12.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])


BOX = box_moments(10.0, 0.1, 0.4, 0.9)  # Gazebo "boxes-complex": x major, y intermediate, z minor
BOX_W0 = np.array([0.1, 5.0, 0.1])
#: Dzhanibekov T-handle (shaft along z = intermediate axis), from app.physics.body.t_handle
T_HANDLE = np.array([1.87163115e-05, 4.92708286e-05, 3.19778816e-05])
IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])
Q_TILTED = np.array([0.3, 0.2, -0.5, 0.7]) / np.linalg.norm([0.3, 0.2, -0.5, 0.7])


# ---------------------------------------------------------------------------------------
# independent reference: Euler's equations + q' = q (x) (0, w) / 2, integrated by DOP853
# ---------------------------------------------------------------------------------------


def _rhs(_t, y, moments):
    q, w = y[:4], y[4:]
    i1, i2, i3 = moments
    dw = [(i2 - i3) * w[1] * w[2] / i1, (i3 - i1) * w[2] * w[0] / i2, (i1 - i2) * w[0] * w[1] / i3]
    qw, qx, qy, qz = q
    wx, wy, wz = w
    dq = 0.5 * np.array([
        -qx * wx - qy * wy - qz * wz,
        qw * wx + qy * wz - qz * wy,
        qw * wy - qx * wz + qz * wx,
        qw * wz + qx * wy - qy * wx,
    ])
    return np.concatenate([dq, dw])


def reference(moments, q0, w0, t):
    """(q, w) at times t (all of one sign) from DOP853 at rtol = atol = 1e-13."""
    t = np.asarray(t, dtype=float)
    end = t[np.argmax(np.abs(t))]
    sol = solve_ivp(_rhs, (0.0, end), np.concatenate([q0, w0]), method="DOP853", rtol=1e-13, atol=1e-13,
                    t_eval=t, args=(np.asarray(moments, dtype=float),))
    assert sol.success
    return sol.y[:4].T, sol.y[4:].T


def _rotation(q):
    """scipy Rotation of scalar-first quaternions (scipy wants scalar-last before 1.14)."""
    return Rotation.from_quat(np.asarray(q)[..., [1, 2, 3, 0]])


def world_momentum(q, moments, w):
    """L = R(q) I w, with scipy's Rotation (independent of app.physics.quaternion)."""
    return _rotation(q).apply(np.asarray(moments) * w)


def rotation_angle(q1, q2):
    return (_rotation(q1).inv() * _rotation(q2)).magnitude()


def fd_derivative(f, t, h):
    """8th-order central difference of f (array-valued, vectorised over times) at t."""
    offsets = np.arange(-4, 5)
    samples = [f(t + k * h) for k in offsets]
    return sum(c * s for c, s in zip(FD8, samples)) / h


# ---------------------------------------------------------------------------------------
# ellipj_m1 / ellipk_m1
# ---------------------------------------------------------------------------------------

NEAR_ONE = [1.4e-4, 1e-7, 1e-10, 1e-13, 1e-16, 1e-30]


@pytest.mark.parametrize("m", [0.0, 0.1, 0.5, 0.9, 0.99])
def test_ellipj_m1_matches_scipy_where_scipy_is_accurate(m):
    u = np.linspace(-20.0, 20.0, 4001)
    sn, cn, dn = exact.ellipj_m1(u, m, 1.0 - m)
    ssn, scn, sdn, _ = special.ellipj(u, m)
    # both are A&S 16.4; each is good to a few ulps per unit of |u| (argument rounding)
    bound = 16 * EPS * np.maximum(1.0, np.abs(u))
    for mine, theirs in ((sn, ssn), (cn, scn), (dn, sdn)):
        assert np.all(np.abs(mine - theirs) <= bound)


def test_ellipk_m1_matches_scipy_ellipkm1():
    m1 = np.concatenate([[1.0, 0.5], np.logspace(-300, -1, 60)])
    assert np.allclose(exact.ellipk_m1(m1), special.ellipkm1(m1), rtol=4 * EPS, atol=0)
    assert exact.ellipk_m1(0.0) == np.inf


@pytest.mark.parametrize("m1", NEAR_ONE)
def test_ellipj_m1_quarter_period_values_near_m_1(m1):
    # A&S 16.5: sn K = 1, cn K = 0, dn K = k'; sn K/2 = 1/sqrt(1+k'), cn K/2 = sqrt(k'/(1+k')), dn K/2 = sqrt(k')
    k1 = np.sqrt(m1)
    big_k = exact.ellipk_m1(m1)
    sn, cn, dn = exact.ellipj_m1(np.array([big_k, 0.5 * big_k, -big_k]), 1.0 - m1, m1)
    assert np.allclose(sn, [1.0, 1.0 / np.sqrt(1.0 + k1), -1.0], rtol=4 * EPS, atol=0)
    assert np.all(np.abs(cn - [0.0, np.sqrt(k1 / (1.0 + k1)), 0.0]) <= 4 * EPS)
    assert np.all(np.abs(dn - [k1, np.sqrt(k1), k1]) <= 4 * EPS)
    # the small dn(K) = k' keeps full relative accuracy (the quarter-period shift)
    assert np.allclose(dn[[0, 2]], k1, rtol=8 * EPS, atol=0)


@pytest.mark.parametrize("m1", NEAR_ONE)
def test_ellipj_m1_identities_near_m_1(m1):
    big_k = exact.ellipk_m1(m1)
    u = np.linspace(-3.0 * big_k, 3.0 * big_k, 6001)
    sn, cn, dn = exact.ellipj_m1(u, 1.0 - m1, m1)
    assert np.all(np.abs(sn * sn + cn * cn - 1.0) <= 8 * EPS)
    # dn^2 - cn^2 = m1 sn^2: the small difference that scipy.special.ellipj loses near m = 1
    assert np.all(np.abs((dn - cn) * (dn + cn) - m1 * sn * sn) <= 8 * EPS * (dn * dn + cn * cn))
    assert np.all(dn > 0.0)


@pytest.mark.parametrize("m1", NEAR_ONE)
def test_ellipj_m1_inverts_carlson_f(m1):
    # F(am u | m) = sn R_F(cn^2, dn^2, 1) = u for |u| <= K (DLMF 19.25.5), Carlson's R_F by scipy
    big_k = exact.ellipk_m1(m1)
    u = np.linspace(-big_k, big_k, 2001)
    sn, cn, dn = exact.ellipj_m1(u, 1.0 - m1, m1)
    recovered = sn * special.elliprf(cn * cn, dn * dn, 1.0)
    # F has slope 1/dn in the amplitude, so an absolute error of an ulp in sn, cn, dn moves
    # the recovered u by about eps/dn (largest at u = K/2, dn = m1^(1/4)); near u = K the
    # quarter-period shift keeps cn and dn relatively accurate and the recovery is tight
    assert np.all(np.abs(recovered - u) <= 16 * EPS * (np.maximum(1.0, np.abs(u)) + 1.0 / dn))
    near_k = np.abs(u) >= 0.9 * big_k
    assert np.all(np.abs(recovered - u)[near_k] <= 16 * EPS * big_k)


@pytest.mark.parametrize("m1", [0.5, 1.4e-4, 1e-10])
def test_ellipj_m1_derivatives(m1):
    # sn' = cn dn, cn' = -sn dn, dn' = -m sn cn (A&S 16.16)
    m = 1.0 - m1
    big_k = exact.ellipk_m1(m1)
    u = np.linspace(-3.0 * big_k, 3.0 * big_k, 3001)
    h = 1e-3
    deriv = fd_derivative(lambda x: np.stack(exact.ellipj_m1(x, m, m1)), u, h)
    sn, cn, dn = exact.ellipj_m1(u, m, m1)
    expected = np.stack([cn * dn, -sn * dn, -m * sn * cn])
    bound = 4 * EPS * np.sum(np.abs(FD8)) / h * np.maximum(1.0, 3.0 * big_k)  # round-off of the stencil
    assert np.max(np.abs(deriv - expected)) <= bound


def test_ellipj_m1_against_mpmath():
    import mpmath  # in the test extra: a missing package fails, it does not skip the 40-digit check
    rng = np.random.default_rng(7)
    for m1 in [0.5, 1e-2] + NEAR_ONE:
        mpmath.mp.dps = 40 + int(-np.log10(m1))
        m = mpmath.mpf(1) - mpmath.mpf(m1)
        big_k = float(exact.ellipk_m1(m1))
        u = np.concatenate([rng.uniform(-4 * big_k, 4 * big_k, 25), [0.5 * big_k, 0.999 * big_k]])
        got = np.stack(exact.ellipj_m1(u, 1.0 - m1, m1), axis=-1)
        want = np.array([[float(mpmath.ellipfun(f, mpmath.mpf(x), m=m)) for f in ("sn", "cn", "dn")] for x in u])
        assert np.all(np.abs(got - want) <= 4 * EPS * np.maximum(1.0, np.abs(u))[:, None]), m1


def test_ellipj_m1_separatrix_limit_and_periodicity():
    u = np.linspace(-800.0, 800.0, 1601)
    sn, cn, dn = exact.ellipj_m1(u, 1.0, 0.0)
    assert np.array_equal(sn, np.tanh(u))
    assert np.allclose(cn, 1.0 / np.cosh(np.clip(u, -700, 700)), rtol=4 * EPS, atol=1e-300)
    assert np.array_equal(cn, dn)
    # continuity into the limit: for m1 tiny the functions differ from tanh/sech by O(m1 e^2u)
    v = np.linspace(-5.0, 5.0, 101)
    near = np.stack(exact.ellipj_m1(v, 1.0, 1e-300))
    assert np.allclose(near, np.stack(exact.ellipj_m1(v, 1.0, 0.0)), rtol=0, atol=4 * EPS)
    # 4K-periodic
    m1 = 1e-7
    big_k = exact.ellipk_m1(m1)
    v = np.linspace(0.0, big_k, 101)
    a = np.stack(exact.ellipj_m1(v, 1.0 - m1, m1))
    b = np.stack(exact.ellipj_m1(v + 4.0 * big_k, 1.0 - m1, m1))
    assert np.max(np.abs(a - b)) <= 16 * EPS * 5.0 * big_k


def test_ellipj_m1_rejects_bad_parameters():
    with pytest.raises(ParameterError, match="m must lie in"):
        exact.ellipj_m1(1.0, 1.5, -0.5)
    with pytest.raises(ParameterError, match="m1 must lie in"):
        exact.ellipj_m1(1.0, 0.5, np.nan)


# ---------------------------------------------------------------------------------------
# torque_free against DOP853
# ---------------------------------------------------------------------------------------

CASES = {
    # name: (moments, q0, w0)
    "boxes-complex (L^2 > 2 E I_mid)": (BOX, IDENTITY, BOX_W0),
    "stable near major axis y": (np.array([2.0, 8.0, 4.0]), IDENTITY, np.array([0.0, 1.0, 0.1])),
    "near intermediate axis z": (np.array([2.0, 8.0, 4.0]), IDENTITY, np.array([0.0, 0.1, 1.0])),
    "near minor axis (L^2 < 2 E I_mid)": (np.array([2.0, 8.0, 4.0]), Q_TILTED, np.array([1.0, 0.1, 0.2])),
    "tumbling, unsorted, tilted": (np.array([5.0, 1.0, 3.0]), Q_TILTED, np.array([-0.4, 0.9, -1.3])),
    "symmetric top (Matlab report)": (np.array([2.0, 2.0, 8.0]), IDENTITY, np.array([1.0, 0.0, 1.0])),
    "symmetric, equal pair last": (np.array([8.0, 2.0, 2.0]), Q_TILTED, np.array([1.0, 0.5, -1.0])),
    "prolate, equal pair split": (np.array([3.0, 1.0, 3.0]), Q_TILTED, np.array([0.2, 2.0, -0.7])),
    "sphere": (np.array([2.0, 2.0, 2.0]), Q_TILTED, np.array([1.0, 2.0, 3.0])),
    "at rest": (BOX, Q_TILTED, np.zeros(3)),
    "exactly about the intermediate axis": (BOX, Q_TILTED, np.array([0.0, 5.0, 0.0])),
    "exactly about the major axis": (np.array([2.0, 8.0, 4.0]), Q_TILTED, np.array([0.0, -3.0, 0.0])),
    "in the plane of two equal moments": (np.array([2.0, 2.0, 8.0]), Q_TILTED, np.array([1.0, -2.0, 0.0])),
    # nearly spherical: the precession's linear part must not carry rate / lam ~ 1 / spread
    # times the rounding of the initial phase (it did: 1e-5 rad at a spread of 1e-12)
    "nearly spherical, spread 1e-12": (1.0 + np.array([-1e-12, 0.0, 1e-12]), Q_TILTED, np.array([1.0, 0.5, 2.0])),
    "nearly spherical, spread 1e-15": (1.0 + np.array([-1e-15, 0.0, 1e-15]), IDENTITY, np.array([1.0, 0.5, 2.0])),
    "nearly symmetric, spread 1e-9": (np.array([2.0, 2.0 + 2e-9, 8.0]), Q_TILTED, np.array([1.0, 0.3, 1.0])),
}


@pytest.mark.parametrize("name", list(CASES))
def test_torque_free_matches_dop853(name):
    moments, q0, w0 = CASES[name]
    t = np.linspace(0.0, 10.0, 21)
    q, w = exact.torque_free(moments, q0, w0, t)
    q_ref, w_ref = reference(moments, q0, w0, t)
    scale = max(1.0, np.linalg.norm(w0))
    assert np.max(np.abs(w - w_ref)) <= REF_TOL * scale
    assert np.max(np.abs(q - q_ref)) <= REF_TOL * scale  # same sign: both continuous from q0


def test_torque_free_backwards_in_time():
    moments, q0, w0 = CASES["tumbling, unsorted, tilted"]
    t = -np.linspace(0.0, 10.0, 11)
    q, w = exact.torque_free(moments, q0, w0, t)
    q_ref, w_ref = reference(moments, q0, w0, t)
    assert np.max(np.abs(w - w_ref)) <= REF_TOL * np.linalg.norm(w0)
    assert np.max(np.abs(q - q_ref)) <= REF_TOL * np.linalg.norm(w0)


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_torque_free_any_order_of_moments(order):
    order = list(order)
    moments, w0 = BOX[order], BOX_W0[order]
    t = np.linspace(0.0, 10.0, 11)
    q, w = exact.torque_free(moments, Q_TILTED, w0, t)
    q_ref, w_ref = reference(moments, Q_TILTED, w0, t)
    assert np.max(np.abs(w - w_ref)) <= REF_TOL * np.linalg.norm(w0)
    assert np.max(np.abs(q - q_ref)) <= REF_TOL * np.linalg.norm(w0)


def test_near_separatrix_t_handle_matches_dop853_through_the_flip():
    # 3e-4 rad off the shaft (intermediate) axis: 1 - m is about 1e-7
    angle = 3e-4
    w0 = 6.0 * np.array([np.sin(angle), 0.0, np.cos(angle)])
    first = exact.first_flip_time(T_HANDLE, w0)
    period = exact.flip_period(T_HANDLE, w0)
    assert 3.0 < first < 3.3 and 6.2 < period < 6.5  # slow creep, fast flip: m close to 1
    t = np.linspace(0.0, first + 0.4 * period, 41)  # through the first flip and out again
    q, w = exact.torque_free(T_HANDLE, IDENTITY, w0, t)
    q_ref, w_ref = reference(T_HANDLE, IDENTITY, w0, t)
    assert np.max(np.abs(w - w_ref)) <= REF_TOL * 6.0
    assert np.max(np.abs(q - q_ref)) <= REF_TOL * 6.0
    assert w[0, 2] > 5.9 and w[-1, 2] < -5.9  # it did flip


@pytest.mark.parametrize("signs", [(1, 1, 1), (-1, 1, 1), (1, -1, 1), (1, 1, -1), (-1, -1, -1)])
def test_exactly_on_the_separatrix(signs):
    # I = (3, 4, 6): L^2 - 2 E I_mid = 3 (3 - 4) w1^2 + 6 (6 - 4) w3^2 = 0 exactly for w1 = 2 w3
    moments = np.array([3.0, 4.0, 6.0])
    w0 = np.array([2.0, 0.5, 1.0]) * signs
    t = np.linspace(0.0, 5.0, 26)
    q, w = exact.torque_free(moments, Q_TILTED, w0, t)
    assert np.all(np.isfinite(q)) and np.all(np.isfinite(w))
    q_ref, w_ref = reference(moments, Q_TILTED, w0, t)
    assert np.max(np.abs(w - w_ref)) <= REF_TOL * np.linalg.norm(w0)
    assert np.max(np.abs(q - q_ref)) <= REF_TOL * np.linalg.norm(w0)
    # far out on the separatrix omega tends to the unstable intermediate-axis rotation
    _, w_far = exact.torque_free(moments, Q_TILTED, w0, [1e3])
    assert np.all(np.isfinite(w_far))
    assert np.allclose(np.abs(w_far[0]), [0.0, np.sqrt(2 * 0.5 * np.sum(moments * w0**2) / 4.0), 0.0], atol=1e-12)


# ---------------------------------------------------------------------------------------
# torque_free: exactness checks that need no integrator
# ---------------------------------------------------------------------------------------

EXACTNESS_CASES = [
    (BOX, BOX_W0),
    (np.array([2.0, 8.0, 4.0]), np.array([1.0, 0.1, 0.2])),
    (np.array([5.0, 1.0, 3.0]), np.array([-0.4, 0.9, -1.3])),
    (T_HANDLE, 6.0 * np.array([np.sin(1e-4), 0.0, np.cos(1e-4)])),
    (np.array([3.0, 4.0, 6.0]), np.array([2.0, 0.5, 1.0])),
    (np.array([2.0, 2.0, 8.0]), np.array([1.0, 0.0, 1.0])),
]


@pytest.mark.parametrize("moments, w0", EXACTNESS_CASES)
def test_torque_free_solves_the_equations_of_motion(moments, w0):
    # local check at every time, through many flips, where the reference integrator cannot follow
    t = np.linspace(0.0, 100.0, 2001)
    rate = np.linalg.norm(w0)
    h = 1e-3 / rate

    def state(times):
        q, w = exact.torque_free(moments, Q_TILTED, w0, times)
        return np.concatenate([q, w], axis=-1)

    y = state(t)
    derivative = fd_derivative(state, t, h)
    expected = np.array([_rhs(0.0, row, moments) for row in y])
    # round-off of each evaluation grows like eps (1 + rate t); the stencil divides it by h
    bound = 2 * EPS * (1.0 + rate * 100.0) * np.sum(np.abs(FD8)) / h * max(1.0, rate)
    assert np.max(np.abs(derivative - expected)) <= bound


@pytest.mark.parametrize("moments, w0", EXACTNESS_CASES)
def test_torque_free_is_a_flow_without_drift(moments, w0):
    # restarting from the closed form's own state at t1 = 1e4 s lands on the same solution
    rate = np.linalg.norm(w0)
    t1 = 1e4
    q1, w1 = exact.torque_free(moments, Q_TILTED, w0, t1)
    t = t1 + np.linspace(0.0, 10.0, 11)
    qa, wa = exact.torque_free(moments, Q_TILTED, w0, t)
    qb, wb = exact.torque_free(moments, q1, w1, t - t1)
    phase_roundoff = 8 * EPS * (1.0 + rate * t1)  # the rounding of lam t and of t itself
    assert np.max(np.abs(wa - wb)) <= phase_roundoff * max(1.0, rate) ** 2
    assert np.max(rotation_angle(qa, qb)) <= phase_roundoff * max(1.0, rate)


@pytest.mark.parametrize("moments, w0", EXACTNESS_CASES)
def test_momentum_energy_and_unit_norm_are_kept_to_round_off(moments, w0):
    t = np.concatenate([np.linspace(0.0, 50.0, 501), [1e3, 1e4, -1e4]])
    q, w = exact.torque_free(moments, Q_TILTED, w0, t)
    big_l = world_momentum(q, moments, w)
    l0 = world_momentum(Q_TILTED, moments, w0)
    assert np.max(np.linalg.norm(big_l - l0, axis=-1)) <= 1e-13 * np.linalg.norm(l0)
    energy = np.sum(moments * w * w, axis=-1)
    assert np.max(np.abs(energy / np.sum(moments * w0 * w0) - 1.0)) <= 32 * EPS
    assert np.max(np.abs(np.linalg.norm(q, axis=-1) - 1.0)) <= 4 * EPS


@pytest.mark.parametrize("moments, w0", EXACTNESS_CASES)
def test_initial_state_is_returned_at_t_0(moments, w0):
    q, w = exact.torque_free(moments, Q_TILTED, w0, 0.0)
    assert q.shape == (4,) and w.shape == (3,)
    assert np.max(np.abs(w - w0)) <= 16 * EPS * np.linalg.norm(w0)
    assert np.max(np.abs(q - Q_TILTED)) <= 16 * EPS


def test_omega_is_periodic_with_twice_the_flip_period():
    period = exact.flip_period(BOX, BOX_W0)
    t = np.linspace(0.0, 10.0, 101)
    _, w = exact.torque_free(BOX, IDENTITY, BOX_W0, t)
    rate = np.linalg.norm(BOX_W0)
    shift = 20 * 2 * period
    _, w_later = exact.torque_free(BOX, IDENTITY, BOX_W0, t + shift)
    assert np.max(np.abs(w - w_later)) <= 4 * EPS * (1.0 + rate * (10.0 + shift)) * rate  # phase round-off
    # half a period flips the intermediate and one transverse component, keeps the circulating one
    _, w_half = exact.torque_free(BOX, IDENTITY, BOX_W0, t + period)
    bound = 4 * EPS * (1.0 + rate * (10.0 + period)) * rate
    assert np.max(np.abs(w_half[:, 0] - w[:, 0])) <= bound
    assert np.max(np.abs(w_half[:, 1:] + w[:, 1:])) <= bound


def test_torque_free_shapes_and_validation():
    q, w = exact.torque_free(BOX, IDENTITY, BOX_W0, np.zeros((2, 5)))
    assert q.shape == (2, 5, 4) and w.shape == (2, 5, 3)
    with pytest.raises(ParameterError, match="moments must be > 0"):
        exact.torque_free([1.0, 0.0, 2.0], IDENTITY, BOX_W0, [0.0])
    with pytest.raises(ParameterError, match=r"w0 must have shape \(3,\)"):
        exact.torque_free(BOX, IDENTITY, [1.0, 2.0], [0.0])
    with pytest.raises(ParameterError, match="t must be finite"):
        exact.torque_free(BOX, IDENTITY, BOX_W0, [np.inf])


# ---------------------------------------------------------------------------------------
# reference values: Gazebo "boxes-complex", computed independently with 40 digits
# ---------------------------------------------------------------------------------------


def test_boxes_complex_flip_reference_values():
    assert exact.first_flip_time(BOX, BOX_W0) == pytest.approx(1.16596004638, abs=5e-12)
    assert exact.flip_period(BOX, BOX_W0) == pytest.approx(3.02842207901, abs=5e-12)
    t = np.linspace(0.0, 10.0, 100001)
    _, w = exact.torque_free(BOX, IDENTITY, BOX_W0, t)
    assert np.count_nonzero(np.diff(np.sign(w[:, 1])) != 0) == 3  # three flips in 10 s


def test_boxes_complex_omega_at_10_s():
    rounded = np.array([0.80833333, 0.68333333, 0.14166667])  # the 8-decimal inertia of the reference
    _, w = exact.torque_free(rounded, IDENTITY, BOX_W0, 10.0)
    assert np.allclose(w, [2.75583887620, -3.73596515671, -3.16180722450], rtol=0, atol=1e-10)


# ---------------------------------------------------------------------------------------
# flip timing
# ---------------------------------------------------------------------------------------


def _reference_reversals(moments, w0, duration):
    """Sign changes of the intermediate omega component, from DOP853's dense output."""
    mid = int(np.argsort(moments)[1])
    event = lambda _t, y, _m: y[4 + mid]  # noqa: E731
    sol = solve_ivp(_rhs, (0.0, duration), np.concatenate([IDENTITY, w0]), method="DOP853", rtol=1e-13,
                    atol=1e-13, args=(np.asarray(moments, dtype=float),), events=event)
    return sol.t_events[0]


@pytest.mark.parametrize("moments, w0", [
    (BOX, BOX_W0),  # L^2 > 2 E I_mid, flips near the intermediate axis
    (np.array([2.0, 8.0, 4.0]), np.array([0.0, 1.0, 0.1])),  # L^2 > 2 E I_mid, wobble about the major axis
    (np.array([2.0, 8.0, 4.0]), np.array([1.0, 0.1, -0.2])),  # L^2 < 2 E I_mid, about the minor axis
    (np.array([5.0, 1.0, 3.0]), np.array([-0.4, 0.9, -1.3])),
])
def test_flip_period_and_first_flip_match_the_reversals_of_the_intermediate_component(moments, w0):
    period = exact.flip_period(moments, w0)
    first = exact.first_flip_time(moments, w0)
    reversals = _reference_reversals(moments, w0, first + 4.5 * period)
    assert len(reversals) == 5
    assert reversals[0] == pytest.approx(first, abs=1e-9)
    assert np.allclose(np.diff(reversals), period, rtol=0, atol=1e-9)


def test_flip_period_is_none_without_periodic_reversals():
    assert exact.flip_period([2.0, 2.0, 8.0], [1.0, 0.0, 1.0]) is None  # symmetric: no unique axis
    assert exact.flip_period([2.0, 2.0, 2.0], [1.0, 2.0, 3.0]) is None  # sphere
    assert exact.flip_period(BOX, [5.0, 0.0, 0.0]) is None  # steady about the major axis
    assert exact.flip_period(BOX, [0.0, 5.0, 0.0]) is None  # steady about the intermediate axis
    assert exact.flip_period(BOX, np.zeros(3)) is None
    assert exact.flip_period([3.0, 4.0, 6.0], [2.0, 0.5, 1.0]) is None  # separatrix: one reversal at most
    assert exact.first_flip_time([2.0, 2.0, 8.0], [1.0, 0.0, 1.0]) is None
    assert exact.first_flip_time(BOX, [5.0, 0.0, 0.0]) is None


def test_first_flip_on_the_separatrix():
    moments = np.array([3.0, 4.0, 6.0])
    # omega_2 = s2 a2 tanh(lam t + tau0) with s2 = +1 here: it crosses zero ahead iff it starts below
    coming = np.array([2.0, -0.5, 1.0])
    first = exact.first_flip_time(moments, coming)
    assert first is not None
    assert _reference_reversals(moments, coming, 2 * first)[0] == pytest.approx(first, abs=1e-9)
    assert exact.first_flip_time(moments, [2.0, 0.5, 1.0]) is None  # already passed (t < 0)
    assert len(_reference_reversals(moments, np.array([2.0, 0.5, 1.0]), 5.0)) == 0


# ---------------------------------------------------------------------------------------
# symmetric top and centre of mass
# ---------------------------------------------------------------------------------------


def test_symmetric_top_sign_convention():
    # I = [2, 2, 8], w0 = [1, 0, 1]: Omega = (8 - 2) / 2 * 1 = 3, (w1, w2) = (cos 3t, sin 3t)
    t = np.array([0.0, np.pi / 6, np.pi / 3])
    w = exact.symmetric_top(2.0, 8.0, [1.0, 0.0, 1.0], t)
    assert np.allclose(w, [[1, 0, 1], [0, 1, 1], [-1, 0, 1]], atol=4 * EPS)


@pytest.mark.parametrize("i_perp, i_axis, w0", [
    (2.0, 8.0, np.array([1.0, 0.0, 1.0])),  # oblate, the Matlab report's case
    (8.0, 2.0, np.array([0.5, -1.0, 2.0])),  # prolate
    (2.0, 8.0, np.array([0.3, 0.4, -1.2])),  # spun with w_z < 0
])
def test_symmetric_top_closed_forms_match_dop853_and_torque_free(i_perp, i_axis, w0):
    moments = np.array([i_perp, i_perp, i_axis])
    t = np.linspace(0.0, 10.0, 21)
    w = exact.symmetric_top(i_perp, i_axis, w0, t)
    q = exact.symmetric_top_orientation(i_perp, i_axis, Q_TILTED, w0, t)
    q_ref, w_ref = reference(moments, Q_TILTED, w0, t)
    assert np.max(np.abs(w - w_ref)) <= REF_TOL * np.linalg.norm(w0)
    assert np.max(np.abs(q - q_ref)) <= REF_TOL * np.linalg.norm(w0)
    # two independent closed forms (trigonometric vs elliptic with m = 0) agree to round-off
    t_long = np.linspace(-100.0, 100.0, 401)
    q_tf, w_tf = exact.torque_free(moments, Q_TILTED, w0, t_long)
    rate = np.linalg.norm(w0) * max(i_perp, i_axis) / min(i_perp, i_axis)
    bound = 64 * EPS * (1.0 + rate * 100.0)
    assert np.max(np.abs(w_tf - exact.symmetric_top(i_perp, i_axis, w0, t_long))) <= bound * np.linalg.norm(w0)
    assert np.max(rotation_angle(q_tf, exact.symmetric_top_orientation(i_perp, i_axis, Q_TILTED, w0, t_long))) <= bound


def test_com_motion():
    t = np.array([0.0, 1.0, 2.0])
    c, v = exact.com_motion([0.0, 0.0, 1.0], [1.0, 0.0, 2.0], [0.0, 0.0, -9.81], t)
    assert np.allclose(c, [[0, 0, 1], [1, 0, 1 + 2 - 4.905], [2, 0, 1 + 4 - 19.62]], rtol=0, atol=4 * EPS * 20)
    assert np.allclose(v, [[1, 0, 2], [1, 0, 2 - 9.81], [1, 0, 2 - 19.62]], rtol=0, atol=4 * EPS * 20)
    c, v = exact.com_motion(np.zeros(3), np.zeros(3), [0.0, 0.0, -9.81], 3.0)
    assert c.shape == (3,) and v.shape == (3,)
