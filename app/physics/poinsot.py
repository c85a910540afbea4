"""Poinsot's construction: the energy ellipsoid rolling on the invariable plane, and polhodes.

For torque-free motion with body-frame omega, T = 1/2 omega.I omega and L = I omega:

* the inertia ellipsoid scaled to the energy, {x : x.I x = 2T} (semi-axes sqrt(2T/I_i),
  i.e. proportional to 1/sqrt(I_i)), is fixed to the body with its centre at the centre of
  mass, and omega lies on it;
* its tangent plane at omega has normal grad(x.I x)/2 = I omega = L, fixed in space: the
  invariable plane, at distance omega.L/|L| = 2T/|L| from the centre (constant);
* the contact point is omega itself, at rest in the plane (the body rotates about it), so
  the ellipsoid rolls without slipping; omega traces the polhode on the ellipsoid (the
  intersection with the momentum ellipsoid |I x|^2 = L^2) and the herpolhode on the plane.

Sources: Landau & Lifshitz, *Mechanics*, section 37; Goldstein, *Classical Mechanics*,
section 5.6. Vectors are in PRINCIPAL axes unless a name says world.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import quaternion as quat


@dataclass(frozen=True)
class PoinsotState:
    """The construction at one instant (principal axes and world frame)."""

    semi_axes: np.ndarray       # energy ellipsoid semi-axes sqrt(2T / I_i)
    contact_body: np.ndarray    # contact point = omega, principal axes
    contact_world: np.ndarray   # R omega, world frame (relative to the centre of mass)
    plane_normal: np.ndarray    # unit L, world frame
    plane_distance: float       # 2T / |L|


def poinsot_state(moments, q, w) -> PoinsotState:
    """The construction for principal ``moments``, orientation ``q`` (principal frame to
    world) and principal-frame ``w``."""
    moments = np.asarray(moments, dtype=float)
    w = np.asarray(w, dtype=float)
    m = moments * w
    two_t = float(w @ m)
    L = quat.rotate(q, m)
    norm_l = float(np.linalg.norm(L))
    return PoinsotState(
        semi_axes=np.sqrt(two_t / moments),
        contact_body=w.copy(),
        contact_world=quat.rotate(q, w),
        plane_normal=L / norm_l,
        plane_distance=two_t / norm_l,
    )


def polhode_start(moments, two_t: float, l2: float) -> np.ndarray | None:
    """A point of the polhode with invariants (2T, L^2) on the energy ellipsoid, or None.

    Moments ascending I1 < I2 < I3. If L^2 > 2T I2 the polhode circles axis 3 and crosses
    w1 = 0; else it circles axis 1 and crosses w3 = 0. Solves the two linear equations in the
    squares of the remaining components.
    """
    i1, i2, i3 = np.asarray(moments, dtype=float)
    if not (i1 * two_t <= l2 <= i3 * two_t):
        return None
    if l2 >= i2 * two_t:
        # I2 w2^2 + I3 w3^2 = 2T ; I2^2 w2^2 + I3^2 w3^2 = L^2
        w3sq = (l2 - i2 * two_t) / (i3 * (i3 - i2))
        w2sq = (two_t - i3 * w3sq) / i2
        return np.array([0.0, np.sqrt(max(w2sq, 0.0)), np.sqrt(max(w3sq, 0.0))])
    w1sq = (i2 * two_t - l2) / (i1 * (i2 - i1))
    w2sq = (two_t - i1 * w1sq) / i2
    return np.array([np.sqrt(max(w1sq, 0.0)), np.sqrt(max(w2sq, 0.0)), 0.0])


def separatrices(moments, two_t: float, n: int = 181) -> list[np.ndarray]:
    """The two separatrix polhodes (L^2 = 2T I2) on the energy ellipsoid: each lies in a
    plane through the intermediate axis, w3 / w1 = +-sqrt(I1 (I2 - I1) / (I3 (I3 - I2)))."""
    i1, i2, i3 = np.asarray(moments, dtype=float)
    ratio = np.sqrt(i1 * (i2 - i1) / (i3 * (i3 - i2)))
    curves = []
    for sign in (1.0, -1.0):
        d1 = np.array([1.0, 0.0, sign * ratio])          # direction in the plane, off-axis
        d2 = np.array([0.0, 1.0, 0.0])                    # the intermediate axis
        s = np.linspace(0, 2 * np.pi, n)
        dirs = np.cos(s)[:, None] * d1 / np.linalg.norm(d1) + np.sin(s)[:, None] * d2
        scale = np.sqrt(two_t / np.einsum("ni,i,ni->n", dirs, np.array([i1, i2, i3]), dirs))
        curves.append(dirs * scale[:, None])
    return curves


def polhode_family(moments, two_t: float, count: int = 8, n: int = 181) -> list[np.ndarray]:
    """Closed polhodes on the energy ellipsoid {w.I w = 2T}, ``count`` around each of the
    stable axes (evenly spaced in L^2), each traced over one period of the closed form."""
    from . import exact

    moments = np.asarray(moments, dtype=float)
    i1, i2, i3 = moments
    curves = []
    for lo, hi in ((i1 * two_t, i2 * two_t), (i2 * two_t, i3 * two_t)):
        for frac in (np.arange(count) + 0.5) / count:
            l2 = lo + frac * (hi - lo)
            w0 = polhode_start(moments, two_t, l2)
            if w0 is None:
                continue
            period = exact.flip_period(moments, w0)
            if period is None or not np.isfinite(period):
                continue
            t = np.linspace(0.0, 2.0 * period, n)  # the full orbit is twice the flip time
            _, w = exact.torque_free(moments, np.array([1.0, 0, 0, 0]), w0, t)
            curves.append(w)
    return curves
