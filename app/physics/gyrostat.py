"""Theory of a body with internal parts: a rotor's stability threshold, a damper's final energy, the nutation angle."""

from __future__ import annotations

import numpy as np

from . import quaternion as quat
from .body import EQUAL_MOMENTS, Body, has_intermediate_axis
from .diagnostics import angular_momentum_body

#: a rotor axis counts as along principal axis k when |a . e_k| is within this of 1
#: (about 4.5e-5 rad): the linear theory below needs the rotor on a principal axis
ALIGNMENT_SLACK = 1e-9


def unstable_band(moments, k: int, omega: float) -> tuple[float, float]:
    """The rotor momenta h for which a steady spin ``omega`` about principal axis ``k``,
    with the rotor along that axis, is linearly unstable: the closed interval between
    ``omega (I_i - I_k)`` and ``omega (I_j - I_k)`` (i, j the other two axes), returned
    (low, high). h and omega are signed along the same axis.

    Derivation (Hughes, *Spacecraft Attitude Dynamics*, Wiley 1986, the chapter on multi-spin
    vehicles; Hall, "Momentum transfer in two-rotor gyrostats", J. Guid. Control Dyn. 19(5),
    1996, for the equations): with ``I w' + w x (I w + h e_k) = 0`` and w = omega e_k + d,
    to first order in d, for (i, j, k) cyclic::

        I_i d_i' = -p_j d_j,   I_j d_j' = p_i d_i,   p_i = h + omega (I_k - I_i)

    so d_i'' = -(p_i p_j / (I_i I_j)) d_i: an oscillation when p_i p_j > 0, a growth when
    p_i p_j < 0, i.e. when h lies between omega (I_i - I_k) and omega (I_j - I_k). For
    h = 0 this is the rigid body's rule (unstable exactly about the intermediate axis).
    """
    m = np.asarray(moments, dtype=float)
    i, j = (k + 1) % 3, (k + 2) % 3
    a, b = omega * (m[i] - m[k]), omega * (m[j] - m[k])
    return (min(a, b), max(a, b))


def spin_is_stable(moments, k: int, omega: float, h: float) -> bool:
    """True when the steady spin of :func:`unstable_band` is linearly stable (h outside the
    band; on its edges the linearisation is neutral and counts as not stable)."""
    low, high = unstable_band(moments, k, omega)
    return bool(h < low or h > high)


def intermediate_threshold(moments, omega: float) -> float:
    """h_crit = (I3 - I2) |omega|: the rotor momentum, along a spin ``omega`` about the
    intermediate axis (moments ascending I1 < I2 < I3), above which that spin is stable.

    The upper edge of :func:`unstable_band` for k = 2 (its lower edge, -(I2 - I1)|omega|,
    is the threshold of a rotor turning against the spin).
    """
    m = np.sort(np.asarray(moments, dtype=float))
    return float((m[2] - m[1]) * abs(omega))


def rotor_principal_axis(body: Body) -> int | None:
    """Index (0, 1, 2: ascending moments) of the principal axis the body's rotor lies along,
    or None (no rotor, or an axis off every principal axis)."""
    if body.rotor is None:
        return None
    _, axes = body.principal()
    along = np.abs(body.rotor.axis @ axes)
    k = int(np.argmax(along))
    return k if along[k] >= 1.0 - ALIGNMENT_SLACK else None


def rotor_threshold(body: Body, w_body) -> float | None:
    """The stability threshold h_crit = (I3 - I2) |Omega| of the body's rotor, for the spin
    Omega = w . a (``w_body`` in the body frame, a the rotor axis): the rotor's momentum
    along the spin must exceed it for the spin about the intermediate axis to be stable.

    None unless the body has a rotor along its intermediate principal axis and distinct
    moments (the case of the linear theory in :func:`unstable_band`).
    """
    moments, _ = body.principal()
    if rotor_principal_axis(body) != 1 or not has_intermediate_axis(moments):
        return None
    omega = float(np.asarray(w_body, dtype=float) @ body.rotor.axis)
    return intermediate_threshold(moments, omega)


def damper_relaxation_rate(body: Body) -> float | None:
    """The fastest rate (1/s) at which the damper's relative spin u = s - w relaxes:
    c (1/J + 1/I_min). From ``J s' = -c u`` and ``I w' = c u`` (the gyroscopic terms aside,
    :class:`~app.physics.body.Damper`), ``u' = -c (1/J + I^-1) u``, whose fastest mode decays
    at c (1/J + 1/I_min). An explicit step h is stable only while h times this rate stays
    inside its method's real stability interval (2 for Euler, 2.79 for RK4; implicit
    midpoint's fixed-point iteration contracts below 2). None without a damper."""
    if body.damper is None:
        return None
    moments, _ = body.principal()
    return float(body.damper.coefficient * (1.0 / body.damper.inertia + 1.0 / moments[0]))


def final_energy(body: Body, w_body, s_body=None) -> float | None:
    """The rotational energy a damped body settles to: |L|^2 / (2 (I_max + J)).

    Energy falls while |L| stays (Hughes, the chapter on internal energy dissipation; the
    major-axis rule of Explorer 1, Likins, "Spacecraft attitude dynamics and control - a
    personal perspective on early developments", J. Guid. Control Dyn. 9(2), 1986): the
    least energy 1/2 w.I w + 1/2 J |s|^2 with I w + J s = L fixed is w = s = L / (I + J)
    (a Lagrange multiplier gives w = s), 1/2 L.(I + J)^-1 L, smallest when L lies along the
    major axis. ``w_body``, ``s_body`` (None: s = w) are body-frame. None without a damper,
    or with a rotor as well (the gyrostat's least-energy state is not a spin about I_max).
    """
    if body.damper is None or body.rotor is not None:
        return None
    L = np.asarray(angular_momentum_body(body, w_body, s_body), dtype=float)
    moments, _ = body.principal()
    # |L| / sqrt(2 (I_max + J)), squared: |L|^2 alone overflows for |L| past 1e154, while the
    # result is at most the initial energy (finite)
    scaled = np.hypot.reduce(L, axis=-1) / np.sqrt(2.0 * (moments[-1] + body.damper.inertia))
    return float(scaled * scaled)


def axis_to_momentum_angle(body: Body, q, L_world, k: int) -> np.ndarray:
    """Angle (rad, in [0, pi/2]) between the world angular momentum ``L_world`` and the
    principal axis ``k`` (0 minor, 2 major) at orientations ``q`` (batch-friendly).

    Where that axis's moment is shared (a symmetric body's two equal moments) the angle is
    to the plane of the equal axes, so it is well defined for a cylinder too. With k = 2 it
    is the nutation angle of the major-axis rule: it falls to zero as a damped body settles
    into a flat spin about its major axis; with k = 0 it is the classic nutation angle of a
    long satellite spun about its long axis, which grows to 90 degrees as it does.
    """
    moments, axes = body.principal()
    same = np.abs(moments - moments[k]) <= EQUAL_MOMENTS * moments[-1]
    L = np.asarray(L_world, dtype=float)
    n = np.linalg.norm(L, axis=-1)
    L_body = quat.rotate_inverse(q, L) / np.where(n > 0, n, 1.0)[..., None]
    along = L_body @ axes[:, same]  # components on the axes that share the moment
    cos = np.sqrt(np.sum(along * along, axis=-1))
    return np.arccos(np.clip(cos, 0.0, 1.0))
