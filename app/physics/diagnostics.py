"""Diagnostics of a trajectory: momenta, energies, their drifts, and the flip events.

Definitions follow the package conventions: p = m v, L = R(q) I w (world, about the
centre of mass), T = 1/2 m |v|^2 + 1/2 w.I w, V = -m g.c, E = T + V. A body's internal parts
enter here and nowhere else: a damper (sphere rate s, inertia J) adds J s to L and
1/2 J |s|^2 to T; a rotor adds h a to L (the wheel's own energy is left out of T: see
:func:`rotational_energy`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import quaternion as quat
from .body import Body, has_intermediate_axis


def momentum(body: Body, v: np.ndarray) -> np.ndarray:
    """Linear momentum p = m v (world)."""
    return body.mass * np.asarray(v)


def _damper_rate(body: Body, w: np.ndarray, s) -> np.ndarray | None:
    """The damper sphere's rate: ``s``, or ``w`` (turning with the body) when not given."""
    if body.damper is None:
        return None
    return np.asarray(w, dtype=float) if s is None else np.asarray(s, dtype=float)


def angular_momentum_body(body: Body, w: np.ndarray, s=None) -> np.ndarray:
    """Body-frame total angular momentum I w (+ J s of a damper, + h a of a rotor)."""
    w = np.asarray(w, dtype=float)
    m = w @ body.inertia.T
    sphere = _damper_rate(body, w, s)
    if sphere is not None:
        m = m + body.damper.inertia * sphere
    if body.rotor is not None:
        m = m + body.rotor.vector
    return m


def angular_momentum(body: Body, q: np.ndarray, w: np.ndarray, s=None) -> np.ndarray:
    """World-frame total angular momentum about the centre of mass, L = R(q) (I w + J s + h a)
    (the damper's and the rotor's terms only for a body that has them; ``s`` is the damper
    sphere's rate, body frame, w when None)."""
    return quat.rotate(q, angular_momentum_body(body, w, s))


def kinetic_energy(body: Body, v: np.ndarray, w: np.ndarray, s=None) -> np.ndarray:
    """T = 1/2 m |v|^2 + :func:`rotational_energy`."""
    v = np.asarray(v)
    return 0.5 * body.mass * np.sum(v * v, axis=-1) + rotational_energy(body, w, s)


def rotational_energy(body: Body, w: np.ndarray, s=None) -> np.ndarray:
    """1/2 w . I w (the part the flip exchanges between axes, but conserves), plus a damper
    sphere's 1/2 J |s|^2 (``s`` body frame, w when None).

    A rotor's wheel adds h (w.a) + h^2 / (2 I_wheel) to the true kinetic energy; that term is
    left out: with h held constant by the wheel's motor it changes with the motor's work
    and needs the wheel's inertia, while 1/2 w.I w is the gyrostat's conserved energy
    (its Hamiltonian; Hughes, *Spacecraft Attitude Dynamics*, multi-spin vehicles).
    """
    w = np.asarray(w, dtype=float)
    energy = 0.5 * np.sum(w * (w @ body.inertia.T), axis=-1)
    sphere = _damper_rate(body, w, s)
    if sphere is not None:
        energy = energy + 0.5 * body.damper.inertia * np.sum(sphere * sphere, axis=-1)
    return energy


def potential_energy(body: Body, gravity: np.ndarray, c: np.ndarray) -> np.ndarray:
    """V = -m g . c."""
    return -body.mass * np.asarray(c) @ np.asarray(gravity)


def relative_drift(x: np.ndarray) -> np.ndarray:
    """(x - x0) / |x0| along the first axis, absolute where x0 is zero.

    Vector quantities use the norm of the difference over the norm of x0. The series is first
    divided by its largest magnitude (the ratio does not change): a body's momentum of 1e-300
    or 1e300 would otherwise underflow to a drift of 0 or overflow to NaN in the norms' squares.
    """
    x = np.asarray(x, dtype=float)
    finite = np.abs(x[np.isfinite(x)])
    top = float(finite.max()) if finite.size else 0.0
    if 0.0 < top < np.inf:
        x = x / top
    d = x - x[0]
    if x.ndim > 1 and x.shape[-1] == 3:
        d = np.linalg.norm(d, axis=-1)
        scale = np.linalg.norm(x[0], axis=-1)
    else:
        scale = np.abs(x[0])
    return d / np.where(scale > 0, scale, 1.0)


@dataclass(frozen=True)
class Diagnostics:
    """Derived series of a trajectory (all arrays indexed like its time axis)."""

    t: np.ndarray
    p: np.ndarray
    L: np.ndarray
    T: np.ndarray
    V: np.ndarray
    E: np.ndarray

    @property
    def E_drift(self) -> np.ndarray:
        return relative_drift(self.E)

    @property
    def L_norm_drift(self) -> np.ndarray:
        L = np.asarray(self.L, dtype=float)
        finite = np.abs(L[np.isfinite(L)])
        top = float(finite.max()) if finite.size else 0.0
        n = np.linalg.norm(L / top if 0.0 < top < np.inf else L, axis=-1)  # no square under- or overflows
        return relative_drift(n)

    @property
    def L_drift(self) -> np.ndarray:
        return relative_drift(self.L)


def diagnose(body: Body, gravity, traj) -> Diagnostics:
    """All the derived series of a :class:`~app.physics.state.Trajectory`."""
    s = getattr(traj, "s", None)
    T = kinetic_energy(body, traj.v, traj.w, s)
    V = potential_energy(body, gravity, traj.c)
    return Diagnostics(traj.t, momentum(body, traj.v), angular_momentum(body, traj.q, traj.w, s), T, V, T + V)


def intermediate_component(body: Body, w: np.ndarray) -> np.ndarray:
    """Component of body-frame omega along the intermediate principal axis."""
    return np.asarray(w) @ body.intermediate_axis


def intermediate_peak_share(body: Body, w: np.ndarray) -> np.ndarray:
    """Largest share of |L|^2 the intermediate axis takes on the torque-free orbit through w.

    From the invariants L^2 = sum m_i^2 and 2E = sum m_i^2 / I_i (principal m = I w): where
    the intermediate component peaks, the component of the axis the orbit circles is at its
    extreme and the third one is zero, so (moments ascending, I1 < I2 < I3)
    m2max^2 = (2E - L^2/I3) / (1/I2 - 1/I3) when L^2 > 2 E I2 (the orbit circles the major
    axis), else (L^2/I1 - 2E) / (1/I1 - 1/I2). NaN for a body without a distinct
    intermediate moment.
    """
    moments, axes = body.principal()
    if not has_intermediate_axis(moments):
        return np.full(np.shape(w)[:-1], np.nan)
    # the share is a ratio of squares: moments over the largest and each omega over its largest
    # component leave it as it is and keep the squares finite for a body of any scale
    moments = moments / moments[-1]
    i1, i2, i3 = moments
    wp = np.asarray(w, dtype=float) @ axes
    top = np.max(np.abs(wp), axis=-1, keepdims=True)
    wp = wp / np.where((top > 0) & np.isfinite(top), top, 1.0)
    m = wp * moments
    L2 = np.sum(m * m, axis=-1)
    twoE = np.sum(m * m / moments, axis=-1)
    major = L2 > twoE * i2
    m2 = np.where(major, (twoE - L2 / i3) / (1 / i2 - 1 / i3), (L2 / i1 - twoE) / (1 / i1 - 1 / i2))
    return np.clip(m2, 0.0, None) / np.where(L2 > 0, L2, 1.0)


#: a reversal of the intermediate spin component counts as a flip when, at its peak, the
#: intermediate axis carries more than this share of |L|^2 (it comes within 45 deg of L);
#: below it the reversal is the small wobble of a stable spin, not the body turning over
FLIP_SHARE = 0.5


def flip_times(body: Body, t: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Times at which the body flips: the intermediate-axis component of omega reverses sign
    on an orbit where that axis comes within 45 degrees of L (see
    :func:`intermediate_peak_share`; a stable spin's wobble does not count).

    Located by linear interpolation between samples; exact zeros count once. Returns an
    empty array for a body with a degenerate intermediate moment (no intermediate axis).
    """
    if not has_intermediate_axis(body.principal()[0]):
        return np.empty(0)
    s = intermediate_component(body, w)
    t = np.asarray(t)
    sign = np.sign(s)
    # carry the previous sign through exact zeros
    for k in range(1, len(sign)):
        if sign[k] == 0:
            sign[k] = sign[k - 1]
    idx = np.nonzero(sign[1:] * sign[:-1] < 0)[0]
    idx = idx[intermediate_peak_share(body, np.asarray(w)[idx]) > FLIP_SHARE]
    s0, s1 = s[idx], s[idx + 1]
    frac = np.where(s1 != s0, s0 / (s0 - s1), 0.0)
    return t[idx] + frac * (t[idx + 1] - t[idx])


def angular_acceleration_body(body: Body, loads, q: np.ndarray, w: np.ndarray, s=None) -> np.ndarray:
    """Body-frame angular acceleration from Euler's equations, I^-1 (tau - w x (I w + h a)
    + c (s - w)) (a rotor's and a damper's terms only for a body that has them).

    ``loads`` is a :class:`~app.physics.loads.Loads` (or None for torque-free); its drags
    act at ``w``; ``s`` is the damper sphere's rate (body frame, w when None).
    """
    w = np.asarray(w, dtype=float)
    m = w @ body.inertia.T
    if body.rotor is not None:
        m = m + body.rotor.vector
    tau = np.zeros_like(w) if loads is None else loads.torque_body(q, w)
    sphere = _damper_rate(body, w, s)
    if sphere is not None:
        tau = tau + body.damper.coefficient * (sphere - w)
    return (tau - np.cross(w, m)) @ np.linalg.inv(body.inertia).T


def com_acceleration(body: Body, loads, q: np.ndarray) -> np.ndarray:
    """World acceleration of the centre of mass: g + F(q) / m."""
    q = np.asarray(q, dtype=float)
    g = np.zeros(3) if loads is None else loads.gravity
    f = np.zeros(q.shape[:-1] + (3,)) if loads is None else loads.force_world(q)
    return g + f / body.mass


def point_kinematics(body: Body, loads, traj, point_from_com) -> dict:
    """Position, velocity and acceleration of a body-fixed point (body frame, from the
    centre of mass): world-frame ``position``, ``velocity``, ``acceleration`` and body-frame
    ``velocity_local``, ``acceleration_local``.

    Rigid-body kinematics: v_P = v + w x r, a_P = a + alpha x r + w x (w x r), with w, alpha
    and r in the body frame, rotated to the world by R(q).
    """
    r = np.asarray(point_from_com, dtype=float)
    w = np.asarray(traj.w)
    alpha = angular_acceleration_body(body, loads, traj.q, w, getattr(traj, "s", None))
    a_com = com_acceleration(body, loads, traj.q)
    v_loc = quat.rotate_inverse(traj.q, traj.v) + np.cross(w, r)
    a_loc = quat.rotate_inverse(traj.q, a_com) + np.cross(alpha, r) + np.cross(w, np.cross(w, r))
    return {
        "position": traj.c + quat.rotate(traj.q, np.broadcast_to(r, w.shape)),
        "velocity": quat.rotate(traj.q, v_loc),
        "acceleration": quat.rotate(traj.q, a_loc),
        "velocity_local": v_loc,
        "acceleration_local": a_loc,
    }
