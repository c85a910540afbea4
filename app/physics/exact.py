"""Closed-form reference solutions: torque-free rotation, symmetric tops, flip timing, free fall.

How :func:`torque_free` is put together::

    torque_free(moments, q0, w0, t)
      +- classify      regime, working frame P, amplitudes, m and m1 = 1 - m, lam, tau0
      |                 (None if I w0 || w0: steady, q = q0 (x) exp(w0 t / 2))
      +- ellipj_m1      omega(t) = (a1 cn, s2 a2 sn, a3 dn)(lam t + tau0 | m)
      |    +- _agm_table, _ellipj_quarter     A&S 16.4, seeded with sqrt(m1)
      +- _pi_excess     phi(t): whole half periods + remainder, Carlson R_J (third kind)
      +- _body_angles   theta, psi: algebraic in I omega (continuous across half periods)
      +- _euler_zxz     R(t) = Q0 Rz(phi) Rx(theta) Rz(psi) P

Conventions are those of :mod:`app.physics`: quaternions scalar-first, body to world; omega
in the body frame; ``L = R(q) I omega`` in the world frame. Here the body frame is a
principal frame, so the inertia is ``diag(moments)`` (any order).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import carlson
from . import quaternion as quat
from .errors import ParameterError

#: the AGM stops once c_n <= AGM_TOLERANCE * a_n (then arcsin(c_n/a_n sin) is below an ulp)
AGM_TOLERANCE = np.finfo(float).eps
#: enough AGM steps for any m1 >= the smallest normal double (about 12 are needed there)
AGM_MAX_STEPS = 64

__all__ = [
    "ellipj_m1",
    "ellipk_m1",
    "torque_free",
    "flip_period",
    "first_flip_time",
    "symmetric_top",
    "symmetric_top_orientation",
    "com_motion",
]


# --------------------------------------------------------------------------------------
# Jacobi elliptic functions that stay accurate as m -> 1
# --------------------------------------------------------------------------------------


def _check_parameters(m, m1):
    m = np.asarray(m, dtype=float)
    m1 = np.asarray(m1, dtype=float)
    if np.any(~(m >= 0.0) | ~(m <= 1.0)):
        raise ParameterError("m", m, "lie in [0, 1]")
    if np.any(~(m1 >= 0.0) | ~(m1 <= 1.0)):
        raise ParameterError("m1", m1, "lie in [0, 1] (it is 1 - m)")
    return m, m1


def _agm_table(m, m1):
    """Arithmetic-geometric mean of (1, sqrt(m1)) with the c_n of A&S 16.4.1.

    Returns the lists ``a``, ``b``, ``c`` (index n = 0..N, arrays of the broadcast shape of
    ``m`` and ``m1``) with ``c_N <= AGM_TOLERANCE * a_N`` everywhere and N >= 1. Entries
    with ``m1 == 0`` (the AGM tends to 0 and never converges) are computed as if m1 = 1
    and must be replaced by the caller. ``c_{n+1} = c_n^2 / (4 a_{n+1})`` keeps the small
    c_n to full relative accuracy instead of forming ``(a_n - b_n) / 2``.
    """
    m, m1 = np.broadcast_arrays(m, m1)
    a = np.ones(m.shape)
    b = np.sqrt(np.where(m1 == 0.0, 1.0, m1))
    c = np.sqrt(m)
    a_list, b_list, c_list = [a], [b], [c]
    for _ in range(AGM_MAX_STEPS):
        a_next = 0.5 * (a + b)
        b = np.sqrt(a * b)
        c = c * c / (4.0 * a_next)
        a = a_next
        a_list.append(a)
        b_list.append(b)
        c_list.append(c)
        if np.all(c <= AGM_TOLERANCE * a):
            return a_list, b_list, c_list
    raise ArithmeticError("AGM did not converge; m1 is below the normal double range")  # pragma: no cover


def ellipk_m1(m1):
    """Complete elliptic integral of the first kind ``K`` from the complementary parameter.

    ``K = pi / (2 AGM(1, sqrt(m1)))`` (Abramowitz & Stegun 17.6, the same AGM that
    :func:`ellipj_m1` uses, so its periods match exactly). Accurate for m1 -> 0, where
    ``K ~ ln(4 / sqrt(m1))``; ``m1 = 0`` gives ``inf``. Agrees with
    ``scipy.special.ellipkm1(m1)`` to a few ulps.

    Parameters
    ----------
    m1 : array_like
        ``1 - m``, in [0, 1].

    Returns
    -------
    ndarray
        ``K(m)`` with ``m = 1 - m1``.
    """
    m1 = np.asarray(m1, dtype=float)
    m, m1 = _check_parameters(1.0 - m1, m1)
    a_list, _, _ = _agm_table(m, m1)
    with np.errstate(divide="ignore"):
        return np.where(m1 == 0.0, np.inf, 0.5 * np.pi / a_list[-1])


def _ellipj_quarter(v, a_list, b_list, c_list):
    """sn, cn, dn for ``0 <= v <= K/2`` by the descending Landen (Gauss) recursion, A&S 16.4.

    ``phi_N = 2^N a_N v``, ``phi_{n-1} = (phi_n + arcsin(c_n / a_n sin phi_n)) / 2``,
    ``sn = sin phi_0``, ``cn = cos phi_0``, ``dn = cos phi_0 / cos(phi_1 - phi_0)``.

    Near m = 1 the ratio c_n / a_n is within 2 sqrt(m1) of 1 and the arcsin argument
    approaches 1, where arcsin amplifies round-off by 1 / sqrt(1 - x). So the arcsin is
    taken as ``atan2(x, sqrt((1 - x)(1 + x)))`` with ``1 - x`` formed without cancellation
    from ``1 - c_n / a_n = b_{n-1} / a_n`` (exact: ``a_n - c_n = b_{n-1}``) and
    ``1 - |sin phi| = cos^2 phi / (1 + |sin phi|)``. On [0, K/2] the amplitude stays about
    m1^(1/4) below pi/2 and cos(phi_1 - phi_0) = cd >= 1/sqrt(2), so there is no 0/0.
    """
    n_steps = len(a_list) - 1
    phi = (2.0**n_steps) * a_list[-1] * v
    phi_prev = phi
    for n in range(n_steps, 0, -1):
        phi_prev = phi
        sin_phi = np.sin(phi)
        sin_abs = np.abs(sin_phi)
        x = c_list[n] / a_list[n] * sin_abs
        one_minus_x = b_list[n - 1] / a_list[n] * sin_abs + np.cos(phi) ** 2 / (1.0 + sin_abs)
        arcsin_x = np.copysign(np.arctan2(x, np.sqrt(one_minus_x * (1.0 + x))), sin_phi)
        phi = 0.5 * (phi + arcsin_x)
    cn = np.cos(phi)
    return np.sin(phi), cn, cn / np.cos(phi_prev - phi)


def _sech(u):
    e = np.exp(-np.abs(u))
    return 2.0 * e / (1.0 + e * e)


def ellipj_m1(u, m, m1):
    """Jacobi elliptic functions sn, cn, dn of ``u`` with parameter ``m = 1 - m1``.

    ``scipy.special.ellipj(u, m)`` only sees m, so near m = 1 it loses digits (measured
    against 50-digit mpmath for 0 <= u <= 15: 1e-13 at 1 - m = 1e-4, 2e-11 at 1e-8, 9e-12
    at 1e-12). Here the complementary parameter is passed separately, and the same check
    gives 4e-16; bodies spun near their intermediate axis live at m1 = 1e-4 .. 1e-12.

    Method (Abramowitz & Stegun 16.4, descending Landen / AGM scheme seeded with
    ``b_0 = sqrt(m1)``, ``c_0 = sqrt(m)``): the argument is first reduced with the
    half-period ``2K`` (A&S 16.8: sn, cn change sign, dn does not) and the parities, then
    ``[K/2, K]`` is mapped to ``[0, K/2]`` with the quarter-period shifts ``sn(K - v) = cd v``,
    ``cn(K - v) = sqrt(m1) sd v``, ``dn(K - v) = sqrt(m1) nd v`` (A&S 16.8), which give the
    small cn and dn near u = K with full relative accuracy. ``m1 == 0`` returns the limits
    ``tanh u, sech u, sech u`` (A&S 16.6).

    Parameters
    ----------
    u : array_like
        Argument (any real values).
    m, m1 : array_like
        Parameter and complementary parameter, each in [0, 1], with ``m + m1 = 1``;
        ``sqrt(m)`` and ``sqrt(m1)`` seed the recursion, so give each to full accuracy.

    Returns
    -------
    sn, cn, dn : ndarray
        Arrays of the broadcast shape of ``u``, ``m`` and ``m1``.
    """
    u = np.asarray(u, dtype=float)
    m, m1 = _check_parameters(m, m1)
    a_list, b_list, c_list = _agm_table(m, m1)
    quarter = 0.5 * np.pi / a_list[-1]  # K, finite placeholder where m1 == 0
    sqrt_m1 = np.sqrt(m1)

    half_periods = np.floor(u / (2.0 * quarter) + 0.5)
    r = u - 2.0 * quarter * half_periods  # in [-K, K]
    flip = np.where(np.fmod(half_periods, 2.0) == 0.0, 1.0, -1.0)
    odd = np.where(r < 0.0, -1.0, 1.0)
    x = np.abs(r)
    far = x > 0.5 * quarter
    v = np.where(far, np.maximum(quarter - x, 0.0), x)
    sn_v, cn_v, dn_v = _ellipj_quarter(v, a_list, b_list, c_list)
    sn = np.where(far, cn_v / dn_v, sn_v)
    cn = np.where(far, sqrt_m1 * sn_v / dn_v, cn_v)
    dn = np.where(far, sqrt_m1 / dn_v, dn_v)
    sn, cn = odd * flip * sn, flip * cn

    if np.any(m1 == 0.0):
        separatrix = m1 == 0.0
        sech = _sech(u)
        sn = np.where(separatrix, np.tanh(u), sn)
        cn = np.where(separatrix, sech, cn)
        dn = np.where(separatrix, sech, dn)
    return sn, cn, dn


# --------------------------------------------------------------------------------------
# Torque-free rotation of an asymmetric (or symmetric) body
# --------------------------------------------------------------------------------------


def check_vector(name, value, n):
    """``value`` as a finite float array of shape (n,); raises :class:`ParameterError`."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise ParameterError(name, value, f"be {n} finite numbers") from None
    if arr.shape != (n,):
        raise ParameterError(name, value, f"have shape ({n},)")
    if not np.all(np.isfinite(arr)):
        raise ParameterError(name, value, "be finite")
    return arr


def check_moments(moments):
    """Principal moments of inertia (any order) as 3 finite numbers > 0; raises :class:`ParameterError`."""
    moments = check_vector("moments", moments, 3)
    if np.any(moments <= 0.0):
        raise ParameterError("moments", moments, "be > 0 (principal moments of inertia)")
    return moments


def _check_times(t):
    try:
        t = np.asarray(t, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise ParameterError("t", t, "be finite numbers (s)") from None
    if not np.all(np.isfinite(t)):
        raise ParameterError("t", t, "be finite")
    return t


def _is_steady(moments, w0) -> bool:
    """True if ``I w0`` is parallel to ``w0``: w0 lies in one eigenspace of the inertia."""
    spun = {float(i) for i, w in zip(moments, w0) if w != 0.0}
    return len(spun) <= 1


@dataclass(frozen=True)
class EllipticMotion:
    """The torque-free motion of a non-steady body, in its working principal frame.

    Working frame (rows of ``frame`` are its axes in the caller's body coordinates, a
    proper rotation): z' is the axis the momentum circulates around (major axis if
    ``L^2 > 2 E I_mid``, minor axis if ``L^2 < 2 E I_mid``; major on the separatrix), with
    ``omega_z' > 0``; y' is the intermediate axis; x' the remaining one. With
    ``tau = lam t + tau0``:

        omega' = (a[0] cn tau, s2 a[1] sn tau, a[2] dn tau)   (Landau & Lifshitz, section 37)
    """

    moments: np.ndarray  # J1, J2, J3 in the working frame
    frame: np.ndarray  # P: omega_working = P omega_body
    frame_q: np.ndarray  # quaternion of P
    amplitudes: np.ndarray  # a1, a2, a3 > 0
    s2: float  # sign(J3 - J2)
    lam: float  # d tau / d t
    m: float
    m1: float  # 1 - m, computed without cancellation
    quarter: float  # K(m); inf on the separatrix
    tau0: float  # in (-2K, 2K]
    momentum: float  # |L|
    w_working: np.ndarray  # omega0 in the working frame

    @property
    def separatrix(self) -> bool:
        return self.m1 == 0.0

    @property
    def symmetric(self) -> bool:
        j1, j2, j3 = self.moments
        return j1 == j2 or j2 == j3

    @property
    def characteristic(self) -> float:
        """nu of phi' = |L|/J3 + |L| (J3 - J1)/(J1 J3) / (1 - nu sn^2); always <= 0."""
        j1, j2, j3 = self.moments
        return -j3 * (j2 - j1) / (j1 * (j3 - j2))


def _levi_civita(i, j, k) -> float:
    return float(np.linalg.det(np.eye(3)[[i, j, k]]))


def classify(moments, w0) -> EllipticMotion | None:
    """Constants of the elliptic solution, or None for a steady rotation (``I w0 || w0``).

    All differences ``l^2 - 2 E J_k = sum_i J_i (J_i - J_k) w_i^2`` are formed term by term
    from the moment differences, so m1 = 1 - m keeps full relative accuracy next to the
    separatrix (Landau & Lifshitz, Mechanics, section 37; Celledoni, Fassò, Säfström &
    Zanna 2008).
    """
    if _is_steady(moments, w0):
        return None
    i_min, i_mid, i_max = np.argsort(moments, kind="stable")
    big_i = moments
    w = w0
    # D = L^2 - 2 E I_mid decides the regime
    d = (big_i[i_min] * (big_i[i_min] - big_i[i_mid]) * w[i_min] ** 2
         + big_i[i_max] * (big_i[i_max] - big_i[i_mid]) * w[i_max] ** 2)
    circ, other = (i_max, i_min) if d >= 0.0 else (i_min, i_max)
    sigma3 = 1.0 if w[circ] > 0.0 else -1.0
    sigma1 = -1.0 if w[other] < 0.0 else 1.0  # cn = sech > 0 on the separatrix
    sigma2 = sigma1 * sigma3 * _levi_civita(other, i_mid, circ)
    frame = np.zeros((3, 3))
    frame[0, other], frame[1, i_mid], frame[2, circ] = sigma1, sigma2, sigma3
    j1, j2, j3 = big_i[other], big_i[i_mid], big_i[circ]
    w1, w2, w3 = frame @ w
    d = j1 * (j1 - j2) * w1**2 + j3 * (j3 - j2) * w3**2  # L^2 - 2 E J2
    g = j1 * (j3 - j1) * w1**2 + j2 * (j3 - j2) * w2**2  # 2 E J3 - L^2
    h = j2 * (j2 - j1) * w2**2 + j3 * (j3 - j1) * w3**2  # L^2 - 2 E J1
    a1 = np.sqrt(w1**2 + (j2 * (j3 - j2)) / (j1 * (j3 - j1)) * w2**2)
    a2 = np.sqrt((j1 * (j3 - j1)) / (j2 * (j3 - j2)) * w1**2 + w2**2)
    a3 = np.sqrt((j2 * (j2 - j1)) / (j3 * (j3 - j1)) * w2**2 + w3**2)
    lam = np.sqrt((j3 - j2) * h / (j1 * j2 * j3))
    m = (j2 - j1) * g / ((j3 - j2) * h)
    m1 = (j3 - j1) * d / ((j3 - j2) * h)
    m, m1 = min(max(m, 0.0), 1.0), min(max(m1, 0.0), 1.0)
    s2 = 1.0 if j3 > j2 else -1.0

    # initial phase: cn tau0 = w1/a1, sn tau0 = s2 w2/a2 (normalised), tau0 = F(am | m)
    c, s = w1 / a1, s2 * w2 / a2
    norm = np.hypot(c, s)
    c, s = c / norm, s / norm
    if m1 == 0.0:
        quarter = np.inf
        tau0 = np.arcsinh(s / c)  # c > 0 by the choice of sigma1
    else:
        quarter = float(ellipk_m1(m1))
        f = s * carlson.rf(c * c, c * c + m1 * s * s, 1.0)  # A&S 17.2, DLMF 19.25.5
        tau0 = f if c >= 0.0 else (2.0 * quarter if s >= 0.0 else -2.0 * quarter) - f
    return EllipticMotion(
        moments=np.array([j1, j2, j3]),
        frame=frame,
        frame_q=quat.from_matrix(frame),
        amplitudes=np.array([a1, a2, a3]),
        s2=s2,
        lam=float(lam),
        m=float(m),
        m1=float(m1),
        quarter=quarter,
        tau0=float(tau0),
        momentum=float(np.linalg.norm(np.array([j1 * w1, j2 * w2, j3 * w3]))),
        w_working=np.array([w1, w2, w3]),
    )


def _pi_excess(sn, cn, dn, nu):
    """X(u) = Pi(nu; u | m) - u with Pi(nu; u | m) = int_0^u dv / (1 - nu sn^2 v), |u| <= K.

    Carlson form (DLMF 19.25.14, Carlson 1979): ``Pi = sn R_F(cn^2, dn^2, 1)
    + nu/3 sn^3 R_J(cn^2, dn^2, 1, 1 - nu sn^2)`` for cn >= 0, and the first term is
    ``F(am u | m) = u`` itself (DLMF 19.25.5), so only R_J is evaluated. With nu <= 0 the
    last argument of R_J is >= 1 and X <= 0.
    """
    if nu == 0.0:
        return np.zeros_like(sn)
    return (nu / 3.0) * sn**3 * carlson.rj(cn * cn, dn * dn, 1.0, 1.0 - nu * sn * sn)


def _pi_separatrix(tau, nu):
    """int_0^tau dv / (1 - nu tanh^2 v) for nu <= 0 (the m = 1 limit, elementary)."""
    mu = -nu
    root = np.sqrt(mu)
    return (tau + root * np.arctan(root * np.tanh(tau))) / (1.0 + mu)


def _body_angles(motion: EllipticMotion, sn, cn, dn, turns):
    """Half-angle terms of B = Rx(theta) Rz(psi) with B^T e_z = I omega / |I omega|.

    ``sin theta sin psi, sin theta cos psi, cos theta = n`` (Landau & Lifshitz, Mechanics,
    sections 35 and 37: z-x-z Euler angles of the body relative to L). ``psi`` is made continuous across half
    periods: it turns by ``-s2 pi`` per half period of the elliptic functions.
    """
    j1, j2, j3 = motion.moments
    a1, a2, a3 = motion.amplitudes
    n1 = j1 * a1 * np.abs(cn)  # cn of the reduced argument is >= 0
    n2 = j2 * motion.s2 * a2 * sn
    n3 = j3 * a3 * dn
    rho = np.hypot(n1, n2)
    norm = np.hypot(rho, n3)
    cos_half = np.sqrt(0.5 * (1.0 + n3 / norm))
    sin_half = rho / (2.0 * norm * cos_half)
    # psi matters modulo 4 pi (quaternion half angles): reduce the turns first, so that the
    # rounding of pi * turns cannot tilt B away from n after many periods
    psi = np.arctan2(n1, n2) - motion.s2 * np.pi * np.fmod(turns, 4.0)
    return cos_half, sin_half, psi


def _steady(q0, w0, t):
    """Rotation with constant body-frame omega: ``q0 (x) exp(w0 t / 2)``, omega = w0."""
    angle = np.linalg.norm(w0)
    half = 0.5 * angle * t
    axis = w0 / angle if angle > 0.0 else np.zeros(3)
    rot = np.concatenate([np.cos(half)[..., None], np.sin(half)[..., None] * axis], axis=-1)
    q = quat.multiply(q0, rot)
    return q, np.broadcast_to(w0, t.shape + (3,)).copy()


def torque_free(moments, q0, w0, t):
    """Orientation and angular velocity of a free rigid body, in closed form.

    ``omega(t)`` from Jacobi elliptic functions (Landau & Lifshitz, Mechanics, section 37;
    evaluated with :func:`ellipj_m1` so that m -> 1 keeps full accuracy). The orientation is
    factored as in
    Celledoni, Fassò, Säfström & Zanna, "The exact computation of the free rigid body motion
    and its use in splitting methods", SIAM J. Sci. Comput. 30 (2008) 2084 (see also
    Kosenko 1998 for the quaternion form of the Euler case):

        R(t) = Q0 Rz(phi(t)) Rx(theta(t)) Rz(psi(t)) P

    with P the fixed signed permutation onto the working principal frame, ``Rx(theta)
    Rz(psi)`` algebraic in the body momentum ``I omega`` (z-x-z Euler angles of the body
    relative to L, taking the circulation axis as the third axis), ``Q0`` fixed with
    ``Q0 e_z = L / |L|``, and the precession angle (Landau & Lifshitz, Mechanics, section 37)

        phi' = |L| (J1 w1^2 + J2 w2^2) / (J1^2 w1^2 + J2^2 w2^2)
             = |L| / J3 + |L| (J3 - J1) / (J1 J3) / (1 - nu sn^2 tau),
        nu = -J3 (J2 - J1) / (J1 (J3 - J2)) <= 0,

    integrated as an elliptic integral of the third kind (Carlson R_J, DLMF 19.25.14). The
    characteristic nu depends on the moments only, and nu <= 0 keeps the last Carlson
    argument >= 1. ``phi`` is quasi-periodic: its advance over one half period 2K of tau
    times the number of half periods, plus the part over the remainder ``|r| <= K``, so
    nothing drifts with the number of periods beyond the rounding of ``lam t`` itself.
    On the separatrix (``L^2 == 2 E I_mid`` exactly) the limits tanh/sech and an elementary
    arctan integral are used. Steady rotations (w0 = 0, along a principal axis, in the
    plane of two equal moments, any w0 for a sphere) are ``q0 (x) exp(w0 t / 2)``;
    symmetric tops fall out of the general formulas with m = 0. For nearly equal J2 and J3
    (|nu| large) the third-kind integral loses about sqrt(|nu|) ulps: 3e-11 in q at
    |nu| = 2e9.

    Parameters
    ----------
    moments : array_like, shape (3,)
        Principal moments of inertia (> 0, any order); the body frame is principal.
    q0 : array_like, shape (4,)
        Initial orientation, unit quaternion (w, x, y, z), body to world.
    w0 : array_like, shape (3,)
        Initial angular velocity, body frame (rad/s).
    t : array_like
        Times since the initial state (s), any real values; shape (n,) or scalar.

    Returns
    -------
    q : ndarray, shape t.shape + (4,)
        Unit quaternions, body to world.
    w : ndarray, shape t.shape + (3,)
        Angular velocity, body frame.
    """
    moments = check_moments(moments)
    q0 = check_vector("q0", q0, 4)
    if not np.linalg.norm(q0) > 0.0:
        raise ParameterError("q0", q0, "be a unit quaternion (nonzero)")
    q0 = q0 / np.linalg.norm(q0)
    w0 = check_vector("w0", w0, 3)
    t = _check_times(t)
    motion = classify(moments, w0)
    if motion is None:
        return _steady(q0, w0, t)

    j1, j2, j3 = motion.moments
    a1, a2, a3 = motion.amplitudes
    lam, tau0, nu, big_l = motion.lam, motion.tau0, motion.characteristic, motion.momentum
    # phi' = |L|/J1 + lam C (1 / (1 - nu sn^2 tau) - 1), so phi = |L|/J1 t + C (X(tau) - X(tau0))
    # with the excess X(u) = Pi(nu; u | m) - u <= 0 and C = |L| (J3 - J1) / (J1 J3 lam)
    rate = big_l / j1
    scale = big_l * (j3 - j1) / (j1 * j3 * lam)
    tau = lam * t + tau0
    if motion.separatrix:
        turns = np.zeros_like(tau)
        turns0 = 0.0
        signs = np.ones_like(tau)
        sn, cn, dn = ellipj_m1(tau, 1.0, 0.0)
        phi = rate * t + scale * ((_pi_separatrix(tau, nu) - tau) - (_pi_separatrix(tau0, nu) - tau0))
    else:
        # tau = 2K turns + r with |r| <= K; X advances by 2 X(K) per half period
        two_k = 2.0 * motion.quarter
        turns = np.floor(tau / two_k + 0.5)
        r = tau - two_k * turns
        turns0 = np.floor(tau0 / two_k + 0.5)
        r0 = tau0 - two_k * turns0
        sn, cn, dn = ellipj_m1(r, motion.m, motion.m1)
        sn0, cn0, dn0 = ellipj_m1(r0, motion.m, motion.m1)
        # the excess advances by 2 X(K) per half period; the linear part is rate t itself,
        # never rate (r - r0) / lam: r - r0 carries the rounding of tau0, and rate / lam
        # grows as 1 / (moment spread) for a nearly spherical body (1e-5 rad at 1e-12)
        excess_per_half_period = 2.0 * _pi_excess(1.0, 0.0, np.sqrt(motion.m1), nu)
        phi = rate * t + scale * ((turns - turns0) * excess_per_half_period
                                  + _pi_excess(sn, cn, dn, nu) - _pi_excess(sn0, cn0, dn0, nu))
        signs = np.where(np.fmod(turns, 2.0) == 0.0, 1.0, -1.0)  # sn, cn change sign every 2K
    cos_half, sin_half, psi = _body_angles(motion, sn, cn, dn, turns)

    # Q0 from the exact initial momentum (so L is exactly R(q0) I w0), on psi's branch at t = 0
    w1, w2, w3 = motion.w_working
    sign0 = 1.0 if np.fmod(turns0, 2.0) == 0.0 else -1.0
    cos_half0, sin_half0, psi0 = _body_angles(
        motion, sign0 * motion.s2 * w2 / a2, sign0 * w1 / a1, w3 / a3, turns0)
    b0 = _euler_zxz(0.0, cos_half0, sin_half0, psi0)
    q_fixed = quat.multiply(quat.multiply(q0, quat.conjugate(motion.frame_q)), quat.conjugate(b0))
    # q = q_fixed (x) E (x) frame_q, as one 4x4 matrix acting on E
    compose = np.stack([quat.multiply(quat.multiply(q_fixed, e), motion.frame_q) for e in np.eye(4)], axis=-1)
    q = _euler_zxz(phi, cos_half, sin_half, psi) @ compose.T
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    w_working = np.stack([a1 * signs * cn, motion.s2 * a2 * signs * sn, a3 * dn], axis=-1)
    return q, w_working @ motion.frame


def _euler_zxz(phi, cos_half, sin_half, psi):
    """Quaternion of Rz(phi) Rx(theta) Rz(psi) from cos(theta/2), sin(theta/2)."""
    # phi grows without bound; reduce it first so that rounding phi +- psi cannot leak
    # ulp(phi) into psi (which would tilt B off I omega and L off its fixed direction)
    phi = np.fmod(phi, 4.0 * np.pi)
    plus, minus = 0.5 * (phi + psi), 0.5 * (phi - psi)
    return np.stack(
        [cos_half * np.cos(plus), sin_half * np.cos(minus), sin_half * np.sin(minus), cos_half * np.sin(plus)],
        axis=-1,
    )


# --------------------------------------------------------------------------------------
# Flip timing
# --------------------------------------------------------------------------------------


def flip_period(moments, w0):
    """Time between consecutive sign reversals of the intermediate-axis component of omega.

    In both regimes (``L^2 > 2 E I_mid``: momentum circulates around the major axis;
    ``L^2 < 2 E I_mid``: around the minor axis) the intermediate component is
    ``a2 sn(lam t + tau0 | m)`` (Landau & Lifshitz, section 37), which reverses every
    ``2 K(m) / lam``: half the period of omega. For a body spun near its intermediate axis this is the
    Dzhanibekov flip period; near the major or minor axis it is the half period of the
    small wobble. Checked against the reversals found by DOP853 (tests/test_exact.py) and
    the boxes-complex reference (first reversal 1.16596004638 s, period 3.02842207901 s).

    Parameters
    ----------
    moments : array_like, shape (3,)
        Principal moments (> 0, any order).
    w0 : array_like, shape (3,)
        Angular velocity in that principal body frame.

    Returns
    -------
    float or None
        The period in seconds; None if the component never reverses periodically:
        steady rotation, a body with two equal moments (no unique intermediate axis), or
        exactly on the separatrix (one reversal at most, period infinite).
    """
    moments = check_moments(moments)
    motion = classify(moments, check_vector("w0", w0, 3))
    if motion is None or motion.symmetric or motion.separatrix:
        return None
    return 2.0 * motion.quarter / motion.lam


def first_flip_time(moments, w0):
    """Time of the first sign change of the intermediate-axis omega component after t = 0.

    The zeros of ``sn(lam t + tau0)`` are at ``lam t + tau0 = 2 j K``; on the separatrix
    the single zero of ``tanh(lam t + tau0)``. A component that is zero at t = 0 changes
    sign there, so the next reversal is reported.

    Parameters
    ----------
    moments : array_like, shape (3,)
        Principal moments (> 0, any order).
    w0 : array_like, shape (3,)
        Angular velocity in that principal body frame.

    Returns
    -------
    float or None
        Seconds after t = 0, or None (steady rotation, two equal moments, or a separatrix
        motion whose reversal lies in the past).
    """
    moments = check_moments(moments)
    motion = classify(moments, check_vector("w0", w0, 3))
    if motion is None or motion.symmetric:
        return None
    if motion.separatrix:
        return -motion.tau0 / motion.lam if motion.tau0 < 0.0 else None
    two_k = 2.0 * motion.quarter
    j = np.floor(motion.tau0 / two_k) + 1.0
    return float((j * two_k - motion.tau0) / motion.lam)


# --------------------------------------------------------------------------------------
# Symmetric top and centre of mass
# --------------------------------------------------------------------------------------


def _check_symmetric(i_perp, i_axis, w0):
    if not (np.isfinite(i_perp) and i_perp > 0.0):
        raise ParameterError("i_perp", i_perp, "be > 0")
    if not (np.isfinite(i_axis) and i_axis > 0.0):
        raise ParameterError("i_axis", i_axis, "be > 0")
    return float(i_perp), float(i_axis), check_vector("w0", w0, 3)


def symmetric_top(i_perp, i_axis, w0, t):
    """Angular velocity of a free symmetric top, symmetry axis = body z.

    Euler's equations with I1 = I2 = i_perp, I3 = i_axis give omega_z constant and

        omega_x + i omega_y = (w0_x + i w0_y) exp(i Omega t),  Omega = (I3 - I1) / I1 w0_z,

    i.e. (omega_x, omega_y) turns about +z in the body frame at the signed rate Omega:
    counter-clockwise seen from +z for an oblate top (I3 > I1) spun with w_z > 0, clockwise
    for a prolate one (Landau & Lifshitz, Mechanics, section 33; the torque-free top of the
    2005 Stanford Matlab report, section 4). The sign is checked against solve_ivp in
    tests/test_exact.py.

    Parameters
    ----------
    i_perp, i_axis : float
        Moments about the transverse axes and about the symmetry axis (> 0).
    w0 : array_like, shape (3,)
        Initial angular velocity, body frame.
    t : array_like
        Times since the initial state (s).

    Returns
    -------
    ndarray, shape t.shape + (3,)
        Angular velocity, body frame.
    """
    i_perp, i_axis, w0 = _check_symmetric(i_perp, i_axis, w0)
    t = _check_times(t)
    rate = (i_axis - i_perp) / i_perp * w0[2]
    c, s = np.cos(rate * t), np.sin(rate * t)
    return np.stack([w0[0] * c - w0[1] * s, w0[0] * s + w0[1] * c, np.full_like(c, w0[2])], axis=-1)


def _rotation_quaternion(rotation_vector):
    """exp of a rotation vector (..., 3) as a unit quaternion (..., 4)."""
    angle = np.linalg.norm(rotation_vector, axis=-1, keepdims=True)
    half = 0.5 * angle
    with np.errstate(invalid="ignore", divide="ignore"):
        axis = np.where(angle > 0.0, rotation_vector / angle, 0.0)
    return np.concatenate([np.cos(half), np.sin(half) * axis], axis=-1)


def symmetric_top_orientation(i_perp, i_axis, q0, w0, t):
    """Orientation of a free symmetric top (symmetry axis = body z), in closed form.

    Body angular velocity splits as ``omega = (I omega) / I1 - Omega e_z`` with
    ``Omega = (I3 - I1) / I1 w0_z``; the first part is a rotation about the fixed world L
    at |L| / I1 (the precession), the second a rotation about the body's symmetry axis, and
    the two commute as left and right factors (Landau & Lifshitz, Mechanics, section 33):

        q(t) = exp(L t / (2 I1)) (x) q0 (x) exp(-Omega t e_z / 2),  L = R(q0) I w0 (world).

    Parameters
    ----------
    i_perp, i_axis : float
        Moments about the transverse axes and about the symmetry axis (> 0).
    q0 : array_like, shape (4,)
        Initial orientation, unit quaternion, body to world.
    w0 : array_like, shape (3,)
        Initial angular velocity, body frame.
    t : array_like
        Times since the initial state (s).

    Returns
    -------
    ndarray, shape t.shape + (4,)
        Unit quaternions, body to world.
    """
    i_perp, i_axis, w0 = _check_symmetric(i_perp, i_axis, w0)
    q0 = check_vector("q0", q0, 4)
    q0 = q0 / np.linalg.norm(q0)
    t = _check_times(t)
    momentum_world = quat.rotate(q0, np.array([i_perp, i_perp, i_axis]) * w0)
    rate = (i_axis - i_perp) / i_perp * w0[2]
    precession = _rotation_quaternion(t[..., None] * (momentum_world / i_perp))
    spin = _rotation_quaternion(t[..., None] * np.array([0.0, 0.0, -rate]))
    return quat.multiply(quat.multiply(precession, q0), spin)


def com_motion(c0, v0, gravity, t):
    """Centre-of-mass position and velocity under uniform gravity (world frame).

    ``c = c0 + v0 t + g t^2 / 2``, ``v = v0 + g t`` (exact; Newton).

    Parameters
    ----------
    c0, v0, gravity : array_like, shape (3,)
        Initial position (m), velocity (m/s) and gravitational acceleration (m/s^2), world.
    t : array_like
        Times since the initial state (s).

    Returns
    -------
    c, v : ndarray, shape t.shape + (3,)
    """
    c0, v0, g = check_vector("c0", c0, 3), check_vector("v0", v0, 3), check_vector("gravity", gravity, 3)
    t = _check_times(t)[..., None]
    return c0 + v0 * t + 0.5 * g * t * t, v0 + g * t
