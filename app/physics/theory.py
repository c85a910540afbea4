"""Theory beside the simulation: polhode period, growth rate and Montgomery phase, predicted and measured."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from . import carlson, exact
from . import quaternion as quat
from .body import Body, has_intermediate_axis
from .errors import ParameterError

#: the growth fit ends where the angle between L and the intermediate axis reaches 90
#: degrees (half way through the flip); it starts half way, on a log scale, from that
#: angle's smallest value to this one (see :func:`observed_growth_rate`)
GROWTH_END_ANGLE = 0.5 * np.pi
#: a run counts as started near the intermediate axis when L comes within this angle of
#: it (rad, about 14 degrees) before the flip: the fit window then spans a factor of at
#: least sqrt(GROWTH_END_ANGLE / GROWTH_MAX_DEVIATION) = 2.5 in the angle
GROWTH_MAX_DEVIATION = 0.25
#: fewest samples a growth fit uses
GROWTH_MIN_SAMPLES = 5

__all__ = [
    "Theory",
    "predict",
    "polhode_period",
    "growth_rate",
    "solid_angle",
    "montgomery_phase",
    "rotation_about",
    "measured_montgomery_phase",
    "interpolate_orientation",
    "observed_polhode_periods",
    "observed_growth_rate",
    "observed_montgomery_phases",
]


# --------------------------------------------------------------------------------------
# Predictions from the closed form (principal frame)
# --------------------------------------------------------------------------------------


def _principal_input(moments, w_body):
    """Validated ``(moments, w)``; the moments are principal (any order), w in that frame."""
    return exact.check_moments(moments), exact.check_vector("w_body", w_body, 3)


def _motion(moments, w_body):
    """The elliptic motion of :mod:`.exact` (working frame, amplitudes, lam, m, K), or None
    where there is no periodic motion to speak of: two equal moments (no intermediate
    axis, :func:`~app.physics.body.has_intermediate_axis`), a steady rotation (``I w`` parallel
    to ``w``) or a spin exactly on a separatrix (the period is infinite)."""
    moments, w = _principal_input(moments, w_body)
    if not has_intermediate_axis(np.sort(moments)):
        return None
    motion = exact.classify(moments, w)
    if motion is None or motion.symmetric or motion.separatrix:
        return None
    return motion


def polhode_period(moments, w_body) -> float | None:
    """Period of omega in the body frame: the time the polhode takes to close, ``4 K(m) / lam``.

    Landau & Lifshitz, *Mechanics*, section 37: omega = (a1 cn, a2 sn, a3 dn)(lam t + tau0 | m)
    in a principal frame; cn and sn have the period 4K, dn 2K, so omega repeats after 4K / lam
    and not before. :func:`app.physics.exact.flip_period` is the time between two reversals
    of the intermediate component (``sn`` changes sign every 2K), ``2 K / lam``: the polhode
    period is exactly twice the flip period, whatever the orbit. On a flipping orbit the
    body turns over twice per polhode period (once each way); near the major or minor axis
    the polhode is a small loop round that axis and the flip period is the half period of
    the wobble (:func:`app.physics.analysis.predicted_flip_period` then says None).

    Parameters
    ----------
    moments : array_like, shape (3,)
        Principal moments of inertia (> 0, any order).
    w_body : array_like, shape (3,)
        Angular velocity in that principal body frame (rad/s).

    Returns
    -------
    float or None
        Seconds; None without an intermediate axis, for a steady rotation, or exactly on a
        separatrix (the period is infinite there).
    """
    if _motion(moments, w_body) is None:
        return None
    return 2.0 * exact.flip_period(moments, w_body)


def growth_rate(moments, w_body) -> float | None:
    """Linear growth rate of a small deviation from a spin about the intermediate axis.

    Euler's equations linearised about ``omega = Omega2 e2`` (principal moments
    I1 < I2 < I3): ``d1' = (I2 - I3)/I1 Omega2 d3``, ``d3' = (I1 - I2)/I3 Omega2 d1``, so
    ``d1'' = sigma^2 d1`` with ``sigma = |Omega2| sqrt((I2 - I1)(I3 - I2) / (I1 I3))``
    (the linear stability analysis of steady rotation about the intermediate axis, which
    Landau & Lifshitz, *Mechanics*, section 37, show to be unstable; sigma is also lam of
    the separatrix motion ``L^2 = 2 E I2`` through ``Omega2 e2`` there). Omega2 is the initial rate about the intermediate
    axis: the figure describes the motion only near that axis (a spin near the major or
    minor axis does not grow; its Omega2 is small and so is sigma).

    Returns
    -------
    float or None
        sigma in 1/s; None for a body without an intermediate axis.
    """
    moments, w = _principal_input(moments, w_body)
    order = np.argsort(moments, kind="stable")
    i1, i2, i3 = moments[order]
    if not has_intermediate_axis((i1, i2, i3)):
        return None
    return float(abs(w[order[1]]) * np.sqrt((i2 - i1) * (i3 - i2) / (i1 * i3)))


def _solid_angle(motion) -> float:
    """Omega_S of a non-steady, non-separatrix motion (see :func:`solid_angle`)."""
    j1, j2, j3 = motion.moments
    a1, _, a3 = motion.amplitudes
    big_l = motion.momentum
    nu, m, m1, k = motion.characteristic, motion.m, motion.m1, motion.quarter
    w1, w2, w3 = motion.w_working
    g = (j1 * (j3 - j1) * w1**2 + j2 * (j3 - j2) * w2**2) / j3  # 2T - L^2/J3, term by term
    # int_0^K dn^2 / (1 - nu sn^2) = K + (nu - m)/3 R_J(0, m1, 1, 1 - nu)   (DLMF 19.25.14)
    i_dn = k + (nu - m) / 3.0 * carlson.rj(0.0, m1, 1.0, 1.0 - nu)
    winding = g / big_l * (j3 * a3) ** 2 / (j1 * a1) ** 2 * 4.0 * i_dn / motion.lam  # int cos(theta) d(alpha)
    return float(2.0 * np.pi - winding)


def solid_angle(moments, w_body) -> float | None:
    """Solid angle Omega_S (sr, in (0, 4 pi)) enclosed by the unit vector of L in body axes
    over one polhode period, on the side the curve runs round counter-clockwise.

    Derivation. Take the working frame of :mod:`.exact` (z' the axis the momentum circles,
    y' the intermediate axis) and the body-frame momentum m = I omega with polar angle theta
    from z' and azimuth alpha. Euler's equations ``m' = m x omega`` give
    ``m1 m2' - m2 m1' = m3 (m1^2 (1/J1 - 1/J3) + m2^2 (1/J2 - 1/J3)) = m3 G`` with the
    constant ``G = 2T - L^2 / J3``, so, with ``rho^2 = m1^2 + m2^2 = J1^2 a1^2 (1 - nu sn^2)``
    (nu the characteristic of :mod:`.exact`; Landau & Lifshitz section 37's amplitudes),

        cos(theta) alpha' = G m3^2 / (|L| rho^2)
                          = G J3^2 a3^2 / (|L| J1^2 a1^2) dn^2 / (1 - nu sn^2),

    and over one period (4K of the elliptic argument, lam t)

        W = int cos(theta) d(alpha) = 4 G J3^2 a3^2 / (lam |L| J1^2 a1^2) int_0^K dn^2 / (1 - nu sn^2),

    the last integral being ``K + (nu - m)/3 R_J(0, m1, 1, 1 - nu)`` (Carlson's form of
    the third-kind integral, DLMF 19.25.14). alpha advances by +2 pi when the momentum
    circles the major axis (G > 0, counter-clockwise seen from +z') and by -2 pi round
    the minor axis (G < 0). The cap round +z' has ``int (1 - cos theta) d(alpha)``; the
    region on the left of the curve is that cap round the major axis and the complement
    of the cap round the minor axis, and in both cases ``Omega_S = 2 pi - W``.

    Returns
    -------
    float or None
        Omega_S; None where :func:`polhode_period` is None.
    """
    motion = _motion(moments, w_body)
    return None if motion is None else _solid_angle(motion)


def montgomery_phase(moments, w_body) -> float | None:
    """Angle (rad, in [0, 2 pi)) the body has turned about L after one polhode period.

    Montgomery, "How much does the rigid body rotate? A Berry's phase from the 18th
    century", Am. J. Phys. 59, 394 (1991): ``Delta theta = 2 T P / |L| - Omega_S (mod 2 pi)``,
    right-handed about the direction of L, with T the rotational kinetic energy, P the
    polhode period (:func:`polhode_period`) and Omega_S the solid angle of
    :func:`solid_angle`. Derivation with Euler angles relative to L (world z along L,
    R = Rz(phi) Rx(theta) Rz(psi), Landau & Lifshitz sections 35 and 37): the body momentum
    is ``|L| (sin theta sin psi, sin theta cos psi, cos theta)``, its azimuth is
    ``alpha = pi/2 - psi``, and ``omega . L/|L| = 2T/|L| = phi' + psi' cos(theta)``, so
    over one period ``Delta phi = 2 T P / |L| + int cos(theta) d(alpha)``; since theta and
    psi return (mod 2 pi), ``R(P) = Rz(Delta phi) R(0)``. The cap term is the solid angle.
    The orientation is then ``Rot(L, phase) q(t0)`` at ``t0 + P`` for any t0 (checked
    against every integrator in tests/test_theory.py).

    Returns
    -------
    float or None
        The phase; None where :func:`polhode_period` is None.
    """
    motion = _motion(moments, w_body)
    if motion is None:
        return None
    j = motion.moments
    w = motion.w_working
    energy2 = float(np.sum(j * w * w))  # 2T
    period = 4.0 * motion.quarter / motion.lam
    return float(np.mod(energy2 * period / motion.momentum - _solid_angle(motion), 2.0 * np.pi))


# --------------------------------------------------------------------------------------
# A body in its own frame, with its loads
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Theory:
    """The predictions for one body and spin (None where not defined).

    ``flip_period`` is :func:`app.physics.analysis.predicted_flip_period` (None unless the
    body flips); the others are this module's. Later theory (a rotor's stability
    threshold, a damper's final energy) goes beside them as further fields.
    """

    flip_period: float | None = None
    polhode_period: float | None = None
    growth_rate: float | None = None
    montgomery_phase: float | None = None

    def as_dict(self) -> dict:
        """The fields ``tumble inspect --json`` adds (JSON-ready; None is null)."""
        out = asdict(self)
        del out["flip_period"]  # inspect has reported it all along, from the same function
        return out


def applies(body: Body, loads=None) -> bool:
    """Whether the free body's theory describes ``body`` under ``loads``: no applied load
    exerts a torque about the centre of mass (``loads.has_torque``: a drag counts) and the
    body carries no damper or rotor. Gravity and forces through the centre of mass leave the
    rotation torque-free. The one rule every prediction the program shows follows (the
    Theory dock, the status bar's flip period, the panel's summary, ``inspect``)."""
    return not (loads is not None and loads.has_torque) and body.is_rigid


def flip_period(body: Body, w_body, loads=None) -> float | None:
    """The predicted time between flips (:func:`app.physics.analysis.predicted_flip_period`)
    where :func:`applies` says the theory holds, else None."""
    from .analysis import predicted_flip_period

    return predicted_flip_period(body, w_body) if applies(body, loads) else None


def predict(body: Body, w_body, loads=None) -> Theory:
    """Theory for ``body`` spun at ``w_body`` (rad/s, its own possibly non-principal frame).

    ``growth_rate`` is given only for a spin that flips (:func:`app.physics.analysis.flips`: on
    an orbit with a flip period, or on the separatrix): a stable spin near the major or minor
    axis has no growth. Everything is None when applied loads
    exert a torque about the centre of mass
    (``loads.has_torque``) or the body carries a damper or a rotor: the motion is then not the free body's. Gravity and forces
    through the centre of mass leave the rotation torque-free.
    """
    if not applies(body, loads):
        return Theory()  # a torque, a damper or a rotor: not the free rigid body's motion
    moments, axes = body.principal()
    w = np.asarray(w_body, dtype=float) @ axes
    from .analysis import flips

    return Theory(
        flip_period=flip_period(body, w_body, loads),
        polhode_period=polhode_period(moments, w),
        # only a spin that flips (or sits on the separatrix, the steady intermediate spin
        # included) grows away from the intermediate axis: near the major or minor axis the
        # deviation stays bounded, no growth
        growth_rate=growth_rate(moments, w) if flips(body, w_body) else None,
        montgomery_phase=montgomery_phase(moments, w),
    )


# --------------------------------------------------------------------------------------
# Measurements from a run
# --------------------------------------------------------------------------------------


def rotation_about(q0, q1, axis_world) -> np.ndarray:
    """Angle (rad, in [0, 2 pi)) of the rotation from orientation q0 to q1, right-handed
    about the world direction ``axis_world``.

    ``d = q1 (x) q0^-1`` is the world-frame rotation between them (body-frame
    ``q0^-1 (x) q1`` is the same rotation about ``R(q0)^T axis``); its angle about the
    unit axis n is ``2 atan2(d_vec . n, d_w)``, the twist part of d (exact for a rotation
    about n; for a nearly pure one the swing off n changes it only at second order).
    Either sign of a quaternion gives the same angle mod 2 pi.
    """
    n = np.asarray(axis_world, dtype=float)
    n = n / np.linalg.norm(n, axis=-1, keepdims=True)
    d = quat.multiply(np.asarray(q1, dtype=float), quat.conjugate(q0))
    angle = 2.0 * np.arctan2(np.sum(d[..., 1:] * n, axis=-1), d[..., 0])
    return np.mod(angle, 2.0 * np.pi)


def measured_montgomery_phase(q0, q1, momentum_world) -> float:
    """The rotation about L between two orientations one polhode period apart
    (:func:`rotation_about` with the axis L, world frame); compare with
    :func:`montgomery_phase`."""
    return float(rotation_about(q0, q1, momentum_world))


def interpolate_orientation(t, q, w, t_query) -> np.ndarray:
    """Orientation at ``t_query`` between samples, by cubic Hermite interpolation.

    Each interval uses the quaternions at its ends and their derivatives
    ``q' = q (x) (0, omega) / 2`` (omega in the body frame), then normalises: the error is
    O(h^4) in the sample spacing h (2e-8 rad on the T-handle at 6 rad/s and h = 10 ms), where slerp
    would be O(h^2). Samples must be increasing in t; a query outside them is refused.
    """
    t = np.asarray(t, dtype=float)
    q = np.asarray(q, dtype=float)
    tq = float(t_query)
    if not (t[0] <= tq <= t[-1]):
        raise ParameterError("t_query", tq, f"lie within the samples [{t[0]:.6g}, {t[-1]:.6g}] s")
    k = int(np.clip(np.searchsorted(t, tq, side="right") - 1, 0, len(t) - 2))
    w = np.asarray(w, dtype=float)
    return _hermite(q[k], w[k], q[k + 1], w[k + 1], t[k + 1] - t[k], (tq - t[k]) / (t[k + 1] - t[k]))


def _hermite(q_a, w_a, q_b, w_b, h, s) -> np.ndarray:
    """Cubic Hermite orientation(s) at fractions ``s`` of intervals of length ``h`` between
    ``q_a`` and ``q_b`` (with body-frame rates ``w_a``, ``w_b``), normalised; any leading
    batch shape, ``h`` and ``s`` broadcast with it."""
    sign = np.where(np.sum(q_a * q_b, axis=-1, keepdims=True) < 0.0, -1.0, 1.0)  # the nearer sheet
    q_b = sign * q_b
    dq_a = 0.5 * quat.multiply(q_a, np.concatenate([np.zeros(np.shape(w_a)[:-1] + (1,)), w_a], axis=-1))
    dq_b = 0.5 * quat.multiply(q_b, np.concatenate([np.zeros(np.shape(w_b)[:-1] + (1,)), w_b], axis=-1))
    s = np.asarray(s, dtype=float)[..., None]
    h = np.asarray(h, dtype=float)[..., None]
    h00, h10 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s
    h01, h11 = -2 * s**3 + 3 * s**2, s**3 - s**2
    out = h00 * q_a + h10 * h * dq_a + h01 * q_b + h11 * h * dq_b
    return out / np.linalg.norm(out, axis=-1, keepdims=True)


def densify_orientations(t, q, w, max_angle: float) -> np.ndarray:
    """The orientations ``q`` at times ``t`` (body-frame rates ``w``) with cubic Hermite
    orientations (:func:`interpolate_orientation`) inserted where the body turns more than
    ``max_angle`` (rad, estimated |omega| h) from one sample to the next: a body spun at 78
    rad/s turns 0.8 rad between two samples 10 ms apart, and a line through the samples alone
    drew its circles as squares. Returns (m, 4), the samples kept, oldest first."""
    t, q, w = (np.asarray(x, dtype=float) for x in (t, q, w))
    if len(t) < 2:
        return q
    h = np.diff(t)
    turn = 0.5 * (np.linalg.norm(w[:-1], axis=-1) + np.linalg.norm(w[1:], axis=-1)) * h
    parts = np.maximum(1, np.ceil(turn / max_angle)).astype(int)
    if np.all(parts == 1):
        return q
    k = np.repeat(np.arange(len(h)), parts)  # the interval of each new point
    s = np.arange(len(k)) - np.repeat(np.cumsum(parts) - parts, parts)
    s = s / parts[k]
    inner = _hermite(q[k], w[k], q[k + 1], w[k + 1], h[k], s)
    return np.concatenate([inner, q[-1:]])


def _crossing_times(t, s, upward: bool) -> np.ndarray:
    """Times where ``s`` crosses zero in one direction, by linear interpolation."""
    s = np.asarray(s, dtype=float)
    if upward:
        idx = np.nonzero((s[:-1] < 0.0) & (s[1:] >= 0.0))[0]
    else:
        idx = np.nonzero((s[:-1] > 0.0) & (s[1:] <= 0.0))[0]
    s0, s1 = s[idx], s[idx + 1]
    return t[idx] + s0 / (s0 - s1) * (t[idx + 1] - t[idx])


def observed_polhode_periods(body: Body, t, w) -> np.ndarray:
    """Periods of omega measured from a run: the times between successive crossings of the
    intermediate-axis component of omega through zero in the same direction (upwards to
    upwards, downwards to downwards), ordered by the time each period ends.

    That component is ``a2 sn(lam t + tau0)`` (Landau & Lifshitz, section 37): it crosses
    zero once each way per period on every orbit, and it is odd about each zero
    (``sn(2jK + u) = +-sn(u)``), so the linear interpolation between samples h apart is
    wrong only at third order in h. Returns an empty array for a body without an
    intermediate axis or a run shorter than one period.
    """
    if not has_intermediate_axis(body.principal()[0]):
        return np.empty(0)
    t = np.asarray(t, dtype=float)
    s = np.asarray(w, dtype=float) @ body.intermediate_axis
    ends, periods = [], []
    for upward in (True, False):
        crossings = _crossing_times(t, s, upward)
        ends.append(crossings[1:])
        periods.append(np.diff(crossings))
    order = np.argsort(np.concatenate(ends), kind="stable")
    return np.concatenate(periods)[order]


def intermediate_deviation(body: Body, w_body) -> float | None:
    """Angle (rad, in [0, pi/2]) between the body-frame momentum ``I omega`` and the
    intermediate axis, either way along it: the beta of :func:`observed_growth_rate` at one
    state. :func:`growth_rate` describes a spin only while this is small. None without an
    intermediate axis or without spin."""
    moments, axes = body.principal()
    if not has_intermediate_axis(moments):
        return None
    m = (np.asarray(w_body, dtype=float) @ axes) * moments
    if not np.any(m):
        return None
    return float(np.arctan2(np.hypot(m[0], m[2]), abs(m[1])))


def observed_growth_rate(body: Body, t, w) -> float | None:
    """sigma fitted from a run's early growth near the intermediate axis.

    The deviation is the angle beta between the body-frame momentum ``I omega`` and the
    intermediate axis it starts next to, and the fit is the least-squares slope of
    ``log tan(beta / 2)`` against t. On the separatrix (Landau & Lifshitz, section 37:
    ``m2 = |L| tanh(lam t + c)``, ``|m_perp| = |L| sech(lam t + c)``) ``tan(beta/2) =
    |m_perp| / (|L| + |m2|)`` is exactly ``e^(lam t + c)`` all through the flip, so unlike
    beta itself it does not bend as the deviation grows; a spin near the separatrix
    follows it once beta is well past its smallest value.

    The window ends at the first sample where beta reaches 90 degrees and starts at the
    first sample, after beta's smallest value beta_min, where beta reaches the geometric
    mean ``sqrt(beta_min GROWTH_END_ANGLE)``. In the linear phase the decaying mode is
    then down to ``r = O((beta_min / beta)^2) = O(beta_min / GROWTH_END_ANGLE)`` of the
    growing one, and it tilts the local slope by about ``2 r`` relative; off the separatrix
    (``1 - m`` of order beta_min^2) the same order of correction appears. A least-squares
    slope is a weighted mean, with positive weights, of the local slopes in its window,
    so the fit is as close to the local rate as the worst local slope in it. The local
    rate is lam of the orbit, which equals :func:`growth_rate`'s sigma up to O(beta(0)^2).

    Returns
    -------
    float or None
        The fitted rate (1/s), or None: no intermediate axis, the run does not come near
        that axis (beta stays above GROWTH_MAX_DEVIATION before reaching 90 degrees), or it
        has not yet grown through a window of GROWTH_MIN_SAMPLES samples.
    """
    moments, axes = body.principal()
    if not has_intermediate_axis(moments):
        return None
    t = np.asarray(t, dtype=float)
    m = (np.asarray(w, dtype=float) @ axes) * moments
    if len(t) < GROWTH_MIN_SAMPLES or m[0, 1] == 0.0:
        return None
    along = np.sign(m[0, 1]) * m[:, 1]
    across = np.hypot(m[:, 0], m[:, 2])
    beta = np.arctan2(across, along)
    past = np.nonzero(beta >= GROWTH_END_ANGLE)[0]
    if len(past) == 0 or past[0] == 0:
        return None
    end = past[0]  # the first sample at or past 90 degrees closes the window
    lowest = int(np.argmin(beta[:end]))
    if beta[lowest] > GROWTH_MAX_DEVIATION:
        return None
    threshold = np.sqrt(beta[lowest] * GROWTH_END_ANGLE)
    started = lowest + np.nonzero((beta[lowest:end] >= threshold) & (across[lowest:end] > 0.0))[0]
    if len(started) == 0 or end - started[0] + 1 < GROWTH_MIN_SAMPLES:
        return None
    window = slice(started[0], end + 1)
    y = np.log(across[window] / (np.hypot(across[window], along[window]) + along[window]))
    slope = np.polyfit(t[window], y, 1)[0]
    return float(slope)


def observed_montgomery_phases(t, q, w, momentum_world, t0: float, q0, period: float) -> np.ndarray:
    """The rotation about L over each whole polhode period of a run since ``t0``.

    Period k runs from ``t0 + (k-1) P`` to ``t0 + k P``; its ends are taken from the
    samples by :func:`interpolate_orientation` (``q0`` itself at t0, the run's start or its
    last kick), and the angle is :func:`rotation_about` L. Periods whose ends the samples
    do not cover are skipped. Returns one angle per period covered, oldest first.
    """
    t = np.asarray(t, dtype=float)
    if not (period and period > 0.0) or len(t) < 2:
        return np.empty(0)
    out = []
    for k in range(1, int(np.floor((t[-1] - t0) / period)) + 1):
        a, b = t0 + (k - 1) * period, t0 + k * period
        if b < t[0] or (k > 1 and a < t[0]):
            continue  # the samples no longer hold this period's ends
        q_a = np.asarray(q0, dtype=float) if k == 1 else interpolate_orientation(t, q, w, a)
        out.append(rotation_about(q_a, interpolate_orientation(t, q, w, b), momentum_world))
    return np.array(out, dtype=float)
