"""Compiled stepping kernels (numba): every fixed-step integrator, one body or N bodies.

All kernels work in the body's PRINCIPAL frame (diagonal inertia); :mod:`.model` converts
to and from the user's body frame. A state row is 13 numbers::

    y = [cx, cy, cz, vx, vy, vz, qw, qx, qy, qz, wx, wy, wz]

(centre of mass and its velocity in the world frame, body-to-world unit quaternion,
angular velocity in the principal body frame). ``rotmat-euler`` rows carry 10 more
numbers: the rotation matrix it integrates (row-major, y[13:22]) and the steps since its
last re-orthonormalisation (y[22]); its quaternion is refreshed from that matrix. A body
with a damper carries the sphere's absolute angular velocity s (principal frame) in the
LAST three entries of its row: y[13:16], or y[23:26] for ``rotmat-euler``. ``params`` packs the model::

    params[0:3]   principal moments I
    params[3]     mass
    params[4:7]   gravity (world)
    params[7:10]  constant torque in the body frame (includes p x f of body-fixed forces)
    params[10:13] constant torque in the world frame
    params[13:16] sum of body-fixed forces (body frame)
    params[16:19] sum of world-fixed forces (world frame)
    params[19]    1.0 if any load other than gravity is applied (else the kernels skip them)
    params[20]    drag flag: 0 none, 1 linear, 2 quadratic, 3 both
    params[21:30] linear drag matrix D (principal frame, row-major): tau = -D w
    params[30:39] quadratic drag matrix D (principal frame, row-major): tau = -|w| D w
    params[39]    internal parts flag: 0 none, 1 damper, 2 rotor, 3 both
    params[40]    damper inertia J (a sphere: the same about every axis)
    params[41]    damper coefficient c
    params[42:45] rotor momentum h a (principal frame)

A drag given per axis of the user's body frame, C = diag(c), becomes D = R_P^T C R_P in the
principal frame (R_P: principal axes as columns in body coordinates), so D is full when the
body frame is not principal. ``params[20:45]`` are read only when ``params[19]`` is set
(a damper or a rotor sets it too).

A damper adds the torque c (s - w) to the body and gives s' = -w x s - (c / J)(s - w); a
rotor adds the gyroscopic torque (h a) x w (Hughes, *Spacecraft Attitude Dynamics*, the
chapters on internal energy dissipation and multi-spin vehicles; see :mod:`.gyrostat`).

``points``/``wforces`` (k x 3) are world-fixed forces applied at body points: their torque
``p x R^T f`` depends on the orientation.

Sources: Euler's equations and q' = q ⊗ (0, w)/2 (Stanford 2005 Matlab report, eqs. 1-6);
explicit and semi-implicit Euler (Dartmouth rigid-body course notes); classic RK4;
implicit midpoint (Hairer, Lubich, Wanner, *Geometric Numerical Integration*, IV.2);
Lie-Poisson splitting into exact rotations about the principal axes (McLachlan 1993,
"Explicit Lie-Poisson integration and the Euler equations", PRL 71; Dullweber, Leimkuhler,
McLachlan 1997, J. Chem. Phys. 107) with Yoshida's (1990) triple jump for order four;
the rotation-matrix Euler scheme with re-orthonormalisation (Dartmouth course notes;
Bjorck & Bowie 1971 for the polar factor); Runge-Kutta-Munthe-Kaas of order 4 on SO(3)
(Munthe-Kaas 1998, BIT 38; Iserles, Munthe-Kaas, Norsett, Zanna 2000, Acta Numerica).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types

from .layout import (  # noqa: F401 (the kernels' numbers, also read from here)
    EULER, SEMI_IMPLICIT_EULER, RK4, MIDPOINT, SPLITTING, SPLITTING4, ROTMAT_EULER, LIE_RK4,
    N_PARAMS, DRAG_FLAG, DRAG_LINEAR, DRAG_QUADRATIC, PARTS_FLAG, DAMPER_INERTIA,
    DAMPER_COEFFICIENT, ROTOR_MOMENTUM, DRAG_LINEAR_BIT, DRAG_QUADRATIC_BIT, DAMPER_BIT, ROTOR_BIT,
    ROW_WIDTH, ROTMAT_ROW_WIDTH, DAMPER_WIDTH, REORTHO_POLAR, REORTHO_GRAM_SCHMIDT, POLAR_MAX_ITER,
    MIDPOINT_MAX_ITER, YOSHIDA_W1, YOSHIDA_W0, OMEGA_LIMIT,
)


@njit(cache=True)
def _rot_apply(q, v, out):
    """out = R(q) v (body to world)."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    vx, vy, vz = v[0], v[1], v[2]
    # t = 2 q_vec x v ; v' = v + w t + q_vec x t
    tx = 2.0 * (y * vz - z * vy)
    ty = 2.0 * (z * vx - x * vz)
    tz = 2.0 * (x * vy - y * vx)
    out[0] = vx + w * tx + (y * tz - z * ty)
    out[1] = vy + w * ty + (z * tx - x * tz)
    out[2] = vz + w * tz + (x * ty - y * tx)


@njit(cache=True)
def _rot_apply_inv(q, v, out):
    """out = R(q)^T v (world to body)."""
    w, x, y, z = q[0], -q[1], -q[2], -q[3]
    vx, vy, vz = v[0], v[1], v[2]
    tx = 2.0 * (y * vz - z * vy)
    ty = 2.0 * (z * vx - x * vz)
    tz = 2.0 * (x * vy - y * vx)
    out[0] = vx + w * tx + (y * tz - z * ty)
    out[1] = vy + w * ty + (z * tx - x * tz)
    out[2] = vz + w * tz + (x * ty - y * tx)


@njit(cache=True)
def _loads(q, params, points, wforces, tau, acc, scratch):
    """Body-frame torque ``tau`` and world acceleration ``acc`` of the centre of mass at q."""
    tmp = scratch[0:3]
    tmp2 = scratch[3:6]
    _rot_apply_inv(q, params[10:13], tmp)
    for i in range(3):
        tau[i] = params[7 + i] + tmp[i]
    for k in range(points.shape[0]):
        _rot_apply_inv(q, wforces[k], tmp)
        p = points[k]
        tau[0] += p[1] * tmp[2] - p[2] * tmp[1]
        tau[1] += p[2] * tmp[0] - p[0] * tmp[2]
        tau[2] += p[0] * tmp[1] - p[1] * tmp[0]
    _rot_apply(q, params[13:16], tmp2)
    inv_m = 1.0 / params[3]
    for i in range(3):
        acc[i] = params[4 + i] + (tmp2[i] + params[16 + i]) * inv_m


@njit(cache=True)
def _drag(params, w1, w2, w3):
    """Principal-frame drag torque at principal-frame omega: -D_lin w - |w| D_quad w."""
    flag = int(params[DRAG_FLAG])
    t1 = t2 = t3 = 0.0
    if flag & DRAG_LINEAR_BIT:
        d = DRAG_LINEAR
        t1 -= params[d] * w1 + params[d + 1] * w2 + params[d + 2] * w3
        t2 -= params[d + 3] * w1 + params[d + 4] * w2 + params[d + 5] * w3
        t3 -= params[d + 6] * w1 + params[d + 7] * w2 + params[d + 8] * w3
    if flag & DRAG_QUADRATIC_BIT:
        d = DRAG_QUADRATIC
        n = math.sqrt(w1 * w1 + w2 * w2 + w3 * w3)
        t1 -= n * (params[d] * w1 + params[d + 1] * w2 + params[d + 2] * w3)
        t2 -= n * (params[d + 3] * w1 + params[d + 4] * w2 + params[d + 5] * w3)
        t3 -= n * (params[d + 6] * w1 + params[d + 7] * w2 + params[d + 8] * w3)
    return t1, t2, t3


@njit(cache=True)
def _parts(y, params, w1, w2, w3, tau, dy):
    """Torques of the internal parts on the body (added to ``tau``), and the damper
    sphere's rate s' into the last three entries of ``dy`` (see the module docstring)."""
    flag = int(params[PARTS_FLAG])
    if flag & ROTOR_BIT:
        k = ROTOR_MOMENTUM
        h1, h2, h3 = params[k], params[k + 1], params[k + 2]
        tau[0] += h2 * w3 - h3 * w2  # (h a) x w = -w x (h a)
        tau[1] += h3 * w1 - h1 * w3
        tau[2] += h1 * w2 - h2 * w1
    if flag & DAMPER_BIT:
        n = y.shape[0] - DAMPER_WIDTH
        s1, s2, s3 = y[n], y[n + 1], y[n + 2]
        c = params[DAMPER_COEFFICIENT]
        r1, r2, r3 = c * (s1 - w1), c * (s2 - w2), c * (s3 - w3)
        tau[0] += r1
        tau[1] += r2
        tau[2] += r3
        inv_j = 1.0 / params[DAMPER_INERTIA]
        dy[n] = -(w2 * s3 - w3 * s2) - r1 * inv_j
        dy[n + 1] = -(w3 * s1 - w1 * s3) - r2 * inv_j
        dy[n + 2] = -(w1 * s2 - w2 * s1) - r3 * inv_j


@njit(cache=True)
def deriv(y, params, points, wforces, dy, ws):
    """Time derivative of one state row (Euler's equations in principal axes), with the
    damper's s' in the row's last three entries when the body has one.

    ``ws`` is a workspace of at least 12 floats (kept by the caller to avoid allocations).
    """
    i1, i2, i3 = params[0], params[1], params[2]
    q = y[6:10]
    w1, w2, w3 = y[10], y[11], y[12]
    tau = ws[0:3]
    acc = ws[3:6]
    if params[19] != 0.0:
        _loads(q, params, points, wforces, tau, acc, ws[6:12])
        if params[DRAG_FLAG] != 0.0:
            d1, d2, d3 = _drag(params, w1, w2, w3)
            tau[0] += d1
            tau[1] += d2
            tau[2] += d3
        if params[PARTS_FLAG] != 0.0:
            _parts(y, params, w1, w2, w3, tau, dy)
    else:
        for i in range(3):
            tau[i] = 0.0
            acc[i] = params[4 + i]
    dy[0] = y[3]
    dy[1] = y[4]
    dy[2] = y[5]
    dy[3] = acc[0]
    dy[4] = acc[1]
    dy[5] = acc[2]
    qw, qx, qy, qz = q[0], q[1], q[2], q[3]
    dy[6] = 0.5 * (-qx * w1 - qy * w2 - qz * w3)
    dy[7] = 0.5 * (qw * w1 + qy * w3 - qz * w2)
    dy[8] = 0.5 * (qw * w2 - qx * w3 + qz * w1)
    dy[9] = 0.5 * (qw * w3 + qx * w2 - qy * w1)
    dy[10] = ((i2 - i3) * w2 * w3 + tau[0]) / i1
    dy[11] = ((i3 - i1) * w3 * w1 + tau[1]) / i2
    dy[12] = ((i1 - i2) * w1 * w2 + tau[2]) / i3


#: what :func:`deriv_batch` is compiled for (:mod:`.jit`): (ys, params, points, wforces) -> dys
DERIV_BATCH_SIGNATURE = types.float64[:, ::1](types.float64[:, ::1], types.float64[::1], types.float64[:, ::1],
                                              types.float64[:, ::1])


@njit(cache=True)
def deriv_batch(ys, params, points, wforces):
    """Derivatives of N state rows (for scipy's adaptive solvers)."""
    out = np.empty_like(ys)
    ws = np.empty(16)
    for b in range(ys.shape[0]):
        deriv(ys[b], params, points, wforces, out[b], ws)
    return out


@njit(cache=True)
def _normalize_q(y):
    n = math.sqrt(y[6] * y[6] + y[7] * y[7] + y[8] * y[8] + y[9] * y[9])
    for i in range(6, 10):
        y[i] /= n


@njit(cache=True)
def step_euler(y, h, params, points, wforces, ws):
    dy = ws[0]
    deriv(y, params, points, wforces, dy, ws[5])
    for i in range(y.shape[0]):
        y[i] += h * dy[i]
    _normalize_q(y)


@njit(cache=True)
def step_semi_implicit(y, h, params, points, wforces, ws):
    """Velocities first (explicit), then positions with the new velocities (course notes);
    a damper's s is a velocity too."""
    dy = ws[0]
    deriv(y, params, points, wforces, dy, ws[5])
    for i in range(3):
        y[3 + i] += h * dy[3 + i]
        y[10 + i] += h * dy[10 + i]
    for i in range(13, y.shape[0]):
        y[i] += h * dy[i]
    for i in range(3):
        y[i] += h * y[3 + i]
    qw, qx, qy, qz = y[6], y[7], y[8], y[9]
    w1, w2, w3 = y[10], y[11], y[12]
    y[6] = qw + 0.5 * h * (-qx * w1 - qy * w2 - qz * w3)
    y[7] = qx + 0.5 * h * (qw * w1 + qy * w3 - qz * w2)
    y[8] = qy + 0.5 * h * (qw * w2 - qx * w3 + qz * w1)
    y[9] = qz + 0.5 * h * (qw * w3 + qx * w2 - qy * w1)
    _normalize_q(y)


@njit(cache=True)
def step_rk4(y, h, params, points, wforces, ws):
    k1, k2, k3, k4, tmp, scratch = ws[0], ws[1], ws[2], ws[3], ws[4], ws[5]
    n = y.shape[0]
    deriv(y, params, points, wforces, k1, scratch)
    for i in range(n):
        tmp[i] = y[i] + 0.5 * h * k1[i]
    deriv(tmp, params, points, wforces, k2, scratch)
    for i in range(n):
        tmp[i] = y[i] + 0.5 * h * k2[i]
    deriv(tmp, params, points, wforces, k3, scratch)
    for i in range(n):
        tmp[i] = y[i] + h * k3[i]
    deriv(tmp, params, points, wforces, k4, scratch)
    for i in range(n):
        y[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])
    _normalize_q(y)


@njit(cache=True)
def _free_rates(qw, qx, qy, qz, w1, w2, w3, i1, i2, i3):
    """q' = q ⊗ (0, w)/2 and Euler's equations without torque, as scalars."""
    return (0.5 * (-qx * w1 - qy * w2 - qz * w3),
            0.5 * (qw * w1 + qy * w3 - qz * w2),
            0.5 * (qw * w2 - qx * w3 + qz * w1),
            0.5 * (qw * w3 + qx * w2 - qy * w1),
            (i2 - i3) * w2 * w3 / i1,
            (i3 - i1) * w3 * w1 / i2,
            (i1 - i2) * w1 * w2 / i3)


@njit(cache=True)
def step_rk4_free(y, h, params):
    """:func:`step_rk4` when only gravity acts, in scalars (no workspace views): the
    rotation by classic RK4, the centre of mass by the update RK4 gives for a constant
    acceleration (exact: c + h v + h^2 g / 2, v + h g)."""
    i1, i2, i3 = params[0], params[1], params[2]
    qw, qx, qy, qz, w1, w2, w3 = y[6], y[7], y[8], y[9], y[10], y[11], y[12]
    hh = 0.5 * h
    a0, a1, a2, a3, a4, a5, a6 = _free_rates(qw, qx, qy, qz, w1, w2, w3, i1, i2, i3)
    b0, b1, b2, b3, b4, b5, b6 = _free_rates(qw + hh * a0, qx + hh * a1, qy + hh * a2, qz + hh * a3,
                                             w1 + hh * a4, w2 + hh * a5, w3 + hh * a6, i1, i2, i3)
    c0, c1, c2, c3, c4, c5, c6 = _free_rates(qw + hh * b0, qx + hh * b1, qy + hh * b2, qz + hh * b3,
                                             w1 + hh * b4, w2 + hh * b5, w3 + hh * b6, i1, i2, i3)
    d0, d1, d2, d3, d4, d5, d6 = _free_rates(qw + h * c0, qx + h * c1, qy + h * c2, qz + h * c3,
                                             w1 + h * c4, w2 + h * c5, w3 + h * c6, i1, i2, i3)
    s = h / 6.0
    qw += s * (a0 + 2.0 * (b0 + c0) + d0)
    qx += s * (a1 + 2.0 * (b1 + c1) + d1)
    qy += s * (a2 + 2.0 * (b2 + c2) + d2)
    qz += s * (a3 + 2.0 * (b3 + c3) + d3)
    n = math.sqrt(qw * qw + qx * qx + qy * qy + qz * qz)
    y[6], y[7], y[8], y[9] = qw / n, qx / n, qy / n, qz / n
    y[10] = w1 + s * (a4 + 2.0 * (b4 + c4) + d4)
    y[11] = w2 + s * (a5 + 2.0 * (b5 + c5) + d5)
    y[12] = w3 + s * (a6 + 2.0 * (b6 + c6) + d6)
    for i in range(3):
        g = params[4 + i]
        y[i] += h * (y[3 + i] + hh * g)
        y[3 + i] += h * g


@njit(cache=True)
def step_midpoint(y, h, params, points, wforces, ws):
    """Implicit midpoint y1 = y0 + h f((y0 + y1)/2), fixed-point iteration to round-off.

    Returns False if the iteration did not settle (step too large for the spin rate).
    """
    y0, ym, dy, y1, scratch = ws[0], ws[1], ws[2], ws[3], ws[5]
    n = y.shape[0]
    for i in range(n):
        y0[i] = y[i]
    deriv(y0, params, points, wforces, dy, scratch)
    for i in range(n):
        y1[i] = y0[i] + h * dy[i]
    prev = 1e300
    for _ in range(MIDPOINT_MAX_ITER):
        for i in range(n):
            ym[i] = 0.5 * (y0[i] + y1[i])
        deriv(ym, params, points, wforces, dy, scratch)
        change = 0.0
        scale = 0.0
        for i in range(n):
            new = y0[i] + h * dy[i]
            d = abs(new - y1[i])
            if d > change:
                change = d
            if abs(new) > scale:
                scale = abs(new)
            y1[i] = new
        # Converged once the update is at round-off, or stops shrinking there.
        if change <= 2.0 * 2.220446049250313e-16 * max(scale, 1.0) or (
            change >= prev and change <= 1e-13 * max(scale, 1.0)
        ):
            for i in range(n):
                y[i] = y1[i]
            return True
        prev = change
    for i in range(n):
        y[i] = y1[i]
    return False


@njit(cache=True)
def _free_axis(m, q, axis, h, params):
    """Exact flow of H_axis = m_axis^2 / (2 I_axis) for time h, on the body momentum m.

    omega_axis = m_axis / I_axis is constant; m rotates by -theta about the axis while the
    orientation turns by +theta about it (theta = omega_axis h), so R m is unchanged.
    """
    theta = m[axis] / params[axis] * h
    c = math.cos(theta)
    s = math.sin(theta)
    a = (axis + 1) % 3
    b = (axis + 2) % 3
    ma = m[a]
    mb = m[b]
    m[a] = c * ma + s * mb
    m[b] = c * mb - s * ma
    ch = math.cos(0.5 * theta)
    sh = math.sin(0.5 * theta)
    qw, qx, qy, qz = q[0], q[1], q[2], q[3]
    # q <- q ⊗ (ch, sh e_axis)
    if axis == 0:
        q[0] = qw * ch - qx * sh
        q[1] = qx * ch + qw * sh
        q[2] = qy * ch + qz * sh
        q[3] = qz * ch - qy * sh
    elif axis == 1:
        q[0] = qw * ch - qy * sh
        q[1] = qx * ch - qz * sh
        q[2] = qy * ch + qw * sh
        q[3] = qz * ch + qx * sh
    else:
        q[0] = qw * ch - qz * sh
        q[1] = qx * ch + qy * sh
        q[2] = qy * ch - qx * sh
        q[3] = qz * ch + qw * sh


@njit(cache=True)
def _kick_rates(m1, m2, m3, t1, t2, t3, params):
    """m' during a kick: the frozen-orientation torque t plus the drag at w = m / I."""
    d1, d2, d3 = _drag(params, m1 / params[0], m2 / params[1], m3 / params[2])
    return t1 + d1, t2 + d2, t3 + d3


@njit(cache=True)
def _kick(y, m, h, params, points, wforces, ws):
    """Flow of the applied loads for time h with the orientation frozen.

    Without drag the torque is constant and the flow exact. A drag makes the kick the ODE
    m' = tau(q) + tau_drag(I^-1 m); one classic RK4 step solves it with a local error
    O(h^5). The step then differs from the exact-kick splitting by O(h^5), within the local
    error of the Strang step (O(h^3)) and of its Yoshida composition (O(h^5), built on the
    symmetric exact-kick step), so both keep their order (Hairer, Lubich, Wanner,
    *Geometric Numerical Integration*, II.4-II.5, for splitting and composition).
    """
    scratch = ws[5]
    tau = scratch[0:3]
    acc = scratch[3:6]
    _loads(y[6:10], params, points, wforces, tau, acc, scratch[6:12])
    for i in range(3):
        y[3 + i] += h * acc[i]
    if params[DRAG_FLAG] == 0.0:
        for i in range(3):
            m[i] += h * tau[i]
        return
    t1, t2, t3 = tau[0], tau[1], tau[2]
    m1, m2, m3 = m[0], m[1], m[2]
    hh = 0.5 * h
    a1, a2, a3 = _kick_rates(m1, m2, m3, t1, t2, t3, params)
    b1, b2, b3 = _kick_rates(m1 + hh * a1, m2 + hh * a2, m3 + hh * a3, t1, t2, t3, params)
    c1, c2, c3 = _kick_rates(m1 + hh * b1, m2 + hh * b2, m3 + hh * b3, t1, t2, t3, params)
    d1, d2, d3 = _kick_rates(m1 + h * c1, m2 + h * c2, m3 + h * c3, t1, t2, t3, params)
    s = h / 6.0
    m[0] = m1 + s * (a1 + 2.0 * (b1 + c1) + d1)
    m[1] = m2 + s * (a2 + 2.0 * (b2 + c2) + d2)
    m[2] = m3 + s * (a3 + 2.0 * (b3 + c3) + d3)


@njit(cache=True)
def step_strang(y, h, params, points, wforces, order, ws, loaded):
    """Second-order symmetric step: kick(h/2), drift + free Strang rotation (h), kick(h/2).

    The step works on the body momentum m = I w, converted once in and once out, so
    that |m| meets as few roundings as possible (it is kept to ~1e-13 over 1e5 steps).
    """
    m = ws[6][0:3]
    for i in range(3):
        m[i] = params[i] * y[10 + i]
    if loaded:
        _kick(y, m, 0.5 * h, params, points, wforces, ws)
    else:
        for i in range(3):
            y[3 + i] += 0.5 * h * params[4 + i]
    for i in range(3):
        y[i] += h * y[3 + i]
    q = y[6:10]
    a, b, c = order[0], order[1], order[2]
    _free_axis(m, q, a, 0.5 * h, params)
    _free_axis(m, q, b, 0.5 * h, params)
    _free_axis(m, q, c, h, params)
    _free_axis(m, q, b, 0.5 * h, params)
    _free_axis(m, q, a, 0.5 * h, params)
    if loaded:
        _kick(y, m, 0.5 * h, params, points, wforces, ws)
    else:
        for i in range(3):
            y[3 + i] += 0.5 * h * params[4 + i]
    for i in range(3):
        y[10 + i] = m[i] / params[i]
    _normalize_q(y)  # removes only round-off: each sub-flow is an exact unit rotation


@njit(cache=True)
def _quat_from_rowmajor(r, q):
    """Unit quaternion of the (nearly orthonormal) row-major matrix r (Shepperd)."""
    tr = r[0] + r[4] + r[8]
    if tr >= r[0] and tr >= r[4] and tr >= r[8]:
        s = 2.0 * math.sqrt(max(1.0 + tr, 1e-300))
        q[0] = 0.25 * s
        q[1] = (r[7] - r[5]) / s
        q[2] = (r[2] - r[6]) / s
        q[3] = (r[3] - r[1]) / s
    elif r[0] >= r[4] and r[0] >= r[8]:
        s = 2.0 * math.sqrt(max(1.0 + r[0] - r[4] - r[8], 1e-300))
        q[0] = (r[7] - r[5]) / s
        q[1] = 0.25 * s
        q[2] = (r[1] + r[3]) / s
        q[3] = (r[2] + r[6]) / s
    elif r[4] >= r[8]:
        s = 2.0 * math.sqrt(max(1.0 + r[4] - r[0] - r[8], 1e-300))
        q[0] = (r[2] - r[6]) / s
        q[1] = (r[1] + r[3]) / s
        q[2] = 0.25 * s
        q[3] = (r[5] + r[7]) / s
    else:
        s = 2.0 * math.sqrt(max(1.0 + r[8] - r[0] - r[4], 1e-300))
        q[0] = (r[3] - r[1]) / s
        q[1] = (r[2] + r[6]) / s
        q[2] = (r[5] + r[7]) / s
        q[3] = 0.25 * s
    n = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    sign = 1.0 if q[0] >= 0 else -1.0
    for i in range(4):
        q[i] *= sign / n


@njit(cache=True)
def _reorthonormalize(r, scheme, tmp):
    """Make the row-major 3x3 matrix r orthonormal in place.

    ``REORTHO_POLAR``: the orthogonal polar factor (closest rotation in Frobenius norm) by
    the Bjorck-Bowie iteration R <- R (3I - R^T R)/2, run to round-off.
    ``REORTHO_GRAM_SCHMIDT``: columns orthonormalised in order x, y, then z = x cross y.
    """
    if scheme == REORTHO_GRAM_SCHMIDT:
        # columns c0 = (r0, r3, r6), c1 = (r1, r4, r7)
        n0 = math.sqrt(r[0] * r[0] + r[3] * r[3] + r[6] * r[6])
        x0, x1, x2 = r[0] / n0, r[3] / n0, r[6] / n0
        d = x0 * r[1] + x1 * r[4] + x2 * r[7]
        y0, y1, y2 = r[1] - d * x0, r[4] - d * x1, r[7] - d * x2
        n1 = math.sqrt(y0 * y0 + y1 * y1 + y2 * y2)
        y0, y1, y2 = y0 / n1, y1 / n1, y2 / n1
        r[0], r[3], r[6] = x0, x1, x2
        r[1], r[4], r[7] = y0, y1, y2
        r[2] = x1 * y2 - x2 * y1
        r[5] = x2 * y0 - x0 * y2
        r[8] = x0 * y1 - x1 * y0
        return
    for _ in range(POLAR_MAX_ITER):
        # tmp = R^T R
        err = 0.0
        for i in range(3):
            for j in range(3):
                acc = 0.0
                for k in range(3):
                    acc += r[3 * k + i] * r[3 * k + j]
                tmp[3 * i + j] = acc
                target = 1.0 if i == j else 0.0
                if abs(acc - target) > err:
                    err = abs(acc - target)
        # R <- R (3I - R^T R) / 2
        for i in range(3):
            a0, a1, a2 = r[3 * i], r[3 * i + 1], r[3 * i + 2]
            for j in range(3):
                m0 = (3.0 if j == 0 else 0.0) - tmp[j]
                m1 = (3.0 if j == 1 else 0.0) - tmp[3 + j]
                m2 = (3.0 if j == 2 else 0.0) - tmp[6 + j]
                tmp[9 + j] = 0.5 * (a0 * m0 + a1 * m1 + a2 * m2)
            r[3 * i], r[3 * i + 1], r[3 * i + 2] = tmp[9], tmp[10], tmp[11]
        if err <= 4.0 * 2.220446049250313e-16:
            return


@njit(cache=True)
def step_rotmat_euler(y, h, params, points, wforces, ws, options):
    """Course-notes scheme: w and v updated explicitly, then c += h v_new and
    R <- R + h R [w_new]x (body-frame w, i.e. [w_world]x R), re-orthonormalised every
    ``options[0]`` steps (0: never) by ``options[1]`` (polar or Gram-Schmidt). A damper's
    s (after the step counter) is updated with w."""
    dy = ws[0]
    deriv(y, params, points, wforces, dy, ws[5])
    for i in range(3):
        y[3 + i] += h * dy[3 + i]
        y[10 + i] += h * dy[10 + i]
    for i in range(ROTMAT_ROW_WIDTH, y.shape[0]):
        y[i] += h * dy[i]
    for i in range(3):
        y[i] += h * y[3 + i]
    r = y[13:22]
    w1, w2, w3 = y[10], y[11], y[12]
    for i in range(3):
        a0, a1, a2 = r[3 * i], r[3 * i + 1], r[3 * i + 2]
        # row i of R [w]x : [a1 w3 - a2 w2, a2 w1 - a0 w3, a0 w2 - a1 w1]
        r[3 * i] = a0 + h * (a1 * w3 - a2 * w2)
        r[3 * i + 1] = a1 + h * (a2 * w1 - a0 * w3)
        r[3 * i + 2] = a2 + h * (a0 * w2 - a1 * w1)
    y[22] += 1.0
    every = options[0]
    if every > 0 and y[22] >= every:
        _reorthonormalize(r, int(options[1]), ws[7])
        y[22] = 0.0
    _quat_from_rowmajor(r, y[6:10])


@njit(cache=True)
def _quat_mul_exp(q0, u, out):
    """out = q0 ⊗ exp(u): q0 turned by the body-frame rotation vector u."""
    ang = math.sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2])
    c = math.cos(0.5 * ang)
    if ang > 1e-8:
        f = math.sin(0.5 * ang) / ang
    else:
        f = 0.5 - ang * ang / 48.0
    ew, ex, ey, ez = c, f * u[0], f * u[1], f * u[2]
    qw, qx, qy, qz = q0[0], q0[1], q0[2], q0[3]
    out[0] = qw * ew - qx * ex - qy * ey - qz * ez
    out[1] = qw * ex + qx * ew + qy * ez - qz * ey
    out[2] = qw * ey - qx * ez + qy * ew + qz * ex
    out[3] = qw * ez + qx * ey - qy * ex + qz * ew


@njit(cache=True)
def _dexpinv(u, v, out, scale):
    """out = scale * dexp^{-1}_{-u}(v) = scale * (v + u x v / 2 + u x (u x v) / 12), to order 4.

    With q = q0 ⊗ exp(u) and body angular velocity v, u' = dexp^{-1}_{-u}(v).
    """
    c0 = u[1] * v[2] - u[2] * v[1]
    c1 = u[2] * v[0] - u[0] * v[2]
    c2 = u[0] * v[1] - u[1] * v[0]
    d0 = u[1] * c2 - u[2] * c1
    d1 = u[2] * c0 - u[0] * c2
    d2 = u[0] * c1 - u[1] * c0
    out[0] = scale * (v[0] + 0.5 * c0 + d0 / 12.0)
    out[1] = scale * (v[1] + 0.5 * c1 + d1 / 12.0)
    out[2] = scale * (v[2] + 0.5 * c2 + d2 / 12.0)


@njit(cache=True)
def step_lie_rk4(y, h, params, points, wforces, ws):
    """Runge-Kutta-Munthe-Kaas 4 (classic tableau) on SO(3) x R^9.

    The orientation is q0 ⊗ exp(u) with u from the RK stages in the Lie algebra, so q stays
    a unit quaternion without renormalisation; c, v, w (and a damper's s) take the classic
    RK4 stages.
    """
    y0 = ws[0]
    yi = ws[1]
    dy = ws[2]
    ks = ws[3]   # ks[0:3] k1, [3:6] k2, [6:9] k3, [9:12] k4 (Lie-algebra stages)
    kf = ws[4]   # accumulated increments for c, v, w (and s)
    u = ws[6]
    n = y.shape[0]
    for i in range(n):
        y0[i] = y[i]
        yi[i] = y[i]
    for i in range(n):
        kf[i] = 0.0
    weights = (1.0, 2.0, 2.0, 1.0)
    for stage in range(4):
        deriv(yi, params, points, wforces, dy, ws[5])
        # Lie-algebra stage from this stage's u
        if stage == 0:
            for i in range(3):
                u[i] = 0.0
        _dexpinv(u, yi[10:13], ks[3 * stage : 3 * stage + 3], h)
        wgt = weights[stage]
        for i in range(6):
            kf[i] += wgt * h * dy[i]
        for i in range(3):
            kf[10 + i] += wgt * h * dy[10 + i]
        for i in range(13, n):
            kf[i] += wgt * h * dy[i]
        if stage < 3:
            frac = 0.5 if stage < 2 else 1.0
            for i in range(3):
                u[i] = frac * ks[3 * stage + i]
            _quat_mul_exp(y0[6:10], u, yi[6:10])
            for i in range(6):
                yi[i] = y0[i] + frac * h * dy[i]
            for i in range(3):
                yi[10 + i] = y0[10 + i] + frac * h * dy[10 + i]
            for i in range(13, n):
                yi[i] = y0[i] + frac * h * dy[i]
    for i in range(3):
        u[i] = (ks[i] + 2.0 * ks[3 + i] + 2.0 * ks[6 + i] + ks[9 + i]) / 6.0
    _quat_mul_exp(y0[6:10], u, y[6:10])
    for i in range(6):
        y[i] = y0[i] + kf[i] / 6.0
    for i in range(3):
        y[10 + i] = y0[10 + i] + kf[10 + i] / 6.0
    for i in range(13, n):
        y[i] = y0[i] + kf[i] / 6.0


@njit(cache=True)
def has_loads(params, points):
    """True if any torque, force or drag other than gravity is applied, or the body has a
    damper or a rotor (as ``params[19]`` says)."""
    for i in range(7, 19):
        if params[i] != 0.0:
            return True
    if len(params) > DRAG_FLAG and params[DRAG_FLAG] != 0.0:
        return True
    if len(params) > PARTS_FLAG and params[PARTS_FLAG] != 0.0:
        return True
    return len(points) > 0
