"""Compiled RK4 of Euler's equations with drag, in the sensor frame, at recorded time stamps.

The rotation of a free body obeys ``J w' = -w x J w + tau_drag`` (Euler's equations; e.g.
Landau & Lifshitz, *Mechanics*, section 36) with ``J`` the inertia tensor in the sensor frame
(products allowed) and the drag torque of :mod:`app.physics.loads`: ``-c_i w_i`` (linear) or
``-c_i |w| w_i`` (quadratic), per sensor axis. Only ``w`` is integrated: the orientation never
enters these equations, so the 13-number state rows of :mod:`app.physics.compiled.kernels` would carry
ten numbers the fit never reads, and their drivers take one step size per call, while a
recording's stamps are irregular. Each interval between two stamps is covered by equal
classic RK4 steps of at most :data:`H_MAX` (forwards or backwards in time).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...physics import loads

DRAG_MODELS = ("none", "linear", "quadratic")
#: largest RK4 step (s): at |w| = 35 rad/s, one second of a flip stays within 1e-5 rad/s of
#: DOP853 at rtol 1e-12 (tests/test_throws_fit.py), a thousandth of a gyroscope's 0.01 rad/s noise
H_MAX = 2.5e-3


def drag_id(model: str) -> int:
    return DRAG_MODELS.index(model)


@njit(cache=True, inline="always")
def _rhs(w0, w1, w2, m, model, c0, c1, c2):
    """w' = J^-1 (-w x J w - drag(w)) for one angular velocity (sensor frame); ``m`` holds
    J's and J^-1's entries, row-major, as a tuple of scalars kept in registers."""
    l0 = m[0] * w0 + m[1] * w1 + m[2] * w2
    l1 = m[3] * w0 + m[4] * w1 + m[5] * w2
    l2 = m[6] * w0 + m[7] * w1 + m[8] * w2
    t0 = w2 * l1 - w1 * l2
    t1 = w0 * l2 - w2 * l0
    t2 = w1 * l0 - w0 * l1
    if model == 1:
        t0 -= c0 * w0
        t1 -= c1 * w1
        t2 -= c2 * w2
    elif model == 2:
        n = math.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
        t0 -= c0 * n * w0
        t1 -= c1 * n * w1
        t2 -= c2 * n * w2
    return (m[9] * t0 + m[10] * t1 + m[11] * t2,
            m[12] * t0 + m[13] * t1 + m[14] * t2,
            m[15] * t0 + m[16] * t1 + m[17] * t2)


@njit(cache=True)
def propagate(t0, w_start, times, jm, ji, model, c, h_max, out):
    """w at each of ``times`` (monotonic, forwards or backwards from ``t0``) into ``out``."""
    m = (jm[0, 0], jm[0, 1], jm[0, 2], jm[1, 0], jm[1, 1], jm[1, 2], jm[2, 0], jm[2, 1], jm[2, 2],
         ji[0, 0], ji[0, 1], ji[0, 2], ji[1, 0], ji[1, 1], ji[1, 2], ji[2, 0], ji[2, 1], ji[2, 2])
    c0, c1, c2 = c[0], c[1], c[2]
    w0, w1, w2 = w_start[0], w_start[1], w_start[2]
    t = t0
    for k in range(times.shape[0]):
        span = times[k] - t
        n = int(math.ceil(abs(span) / h_max - 1e-9))
        if n < 1:
            n = 1
        h = span / n
        for _ in range(n):
            a0, a1, a2 = _rhs(w0, w1, w2, m, model, c0, c1, c2)
            b0, b1, b2 = _rhs(w0 + 0.5 * h * a0, w1 + 0.5 * h * a1, w2 + 0.5 * h * a2, m, model, c0, c1, c2)
            d0, d1, d2 = _rhs(w0 + 0.5 * h * b0, w1 + 0.5 * h * b1, w2 + 0.5 * h * b2, m, model, c0, c1, c2)
            e0, e1, e2 = _rhs(w0 + h * d0, w1 + h * d1, w2 + h * d2, m, model, c0, c1, c2)
            w0 += h / 6.0 * (a0 + 2.0 * b0 + 2.0 * d0 + e0)
            w1 += h / 6.0 * (a1 + 2.0 * b1 + 2.0 * d1 + e1)
            w2 += h / 6.0 * (a2 + 2.0 * b2 + 2.0 * d2 + e2)
        t = times[k]
        out[k, 0] = w0
        out[k, 1] = w1
        out[k, 2] = w2


@njit(cache=True, nogil=True)
def propagate_flights(t, offsets, w_starts, jm, ji, model, c, h_max, out):
    """Every flight f: w at its stamps ``t[offsets[f]:offsets[f+1]]`` from ``w_starts[f]`` at
    its first stamp, into the same rows of ``out``. Releases the interpreter lock."""
    for f in range(offsets.shape[0] - 1):
        a, b = offsets[f], offsets[f + 1]
        out[a, 0] = w_starts[f, 0]
        out[a, 1] = w_starts[f, 1]
        out[a, 2] = w_starts[f, 2]
        if b - a > 1:
            propagate(t[a], w_starts[f], t[a + 1:b], jm, ji, model, c, h_max, out[a + 1:b])


#: (exact bytes of the last matrix inverted, its inverse): a fit inverts one body many times over
_LAST_INVERSE: tuple = (None, None)


def inverse3(m) -> np.ndarray:
    """The inverse of a 3x3 matrix by its adjugate (numpy's general ``inv`` costs more than the
    short integrations it serves); raises :class:`numpy.linalg.LinAlgError` when singular. The
    same matrix (to the bit) asked again gets the inverse already made."""
    global _LAST_INVERSE
    key = (m.dtype.str, m.shape, m.tobytes()) if type(m) is np.ndarray else None
    last_key, last = _LAST_INVERSE  # one read: another thread may replace it meanwhile
    if key is not None and key == last_key:
        return last.copy()
    out = _inverse3(m)
    if key is not None:
        _LAST_INVERSE = (key, out.copy())
    return out


def _inverse3(m) -> np.ndarray:
    """:func:`inverse3` made."""
    a, b, c = m[0]
    d, e, f = m[1]
    g, h, i = m[2]
    co = np.array([[e * i - f * h, c * h - b * i, b * f - c * e],
                   [f * g - d * i, a * i - c * g, c * d - a * f],
                   [d * h - e * g, b * g - a * h, a * e - b * d]])
    det = a * co[0, 0] + b * co[1, 0] + c * co[2, 0]
    scale = max(abs(a), abs(e), abs(i), 1e-300)
    if not np.isfinite(det) or abs(det) <= 1e-14 * scale ** 3:
        raise np.linalg.LinAlgError("Singular matrix")
    return co / det


def simulate_rates(times, t0: float, w0, inertia, drag_model: str, coefficients, h_max: float = H_MAX) -> np.ndarray:
    """w (len(times), 3) from ``w0`` at ``t0`` with the sensor-frame ``inertia`` and drag;
    ``times`` run monotonically away from ``t0`` (forwards or backwards)."""
    jm = np.ascontiguousarray(inertia, dtype=float)
    times = np.ascontiguousarray(times, dtype=float)
    out = np.empty((len(times), 3))
    if len(times):
        propagate(float(t0), np.asarray(w0, dtype=float), times, jm, inverse3(jm), drag_id(drag_model),
                  np.asarray(coefficients, dtype=float), h_max, out)
    return out


# ------------------------------------------------------------------ the model's derivatives
#
# The variational equations: with f(w, p) the right-hand side above, S = dw/dq (q: the initial
# rate and the parameters) obeys S' = (df/dw) S + df/dp, S(0) = [I | 0] (e.g. Hairer, Norsett &
# Wanner, *Solving ODEs I*, I.14). Integrated with the same RK4 stages and steps as w itself, S is
# the exact derivative of the discrete model (the RK map's derivative is the RK map of the
# variational system: "internal numerical differentiation", ibid. II.6), so least squares gets the
# Jacobian of what it fits, not a finite-difference estimate. The parameters are directions D in
# the space of inertia tensors (df along D: -J^-1 (D f + w x D w)) and the three drag
# coefficients (df/dc_i = -J^-1 e_i phi_i(w), phi = w or |w| w).


@njit(cache=True)
def _rhs_jac(w, m, model, c, dirs, n_dir, n_cols, s, f, ds, g, a):
    """f(w) into ``f`` and the variational right-hand side (df/dw) s + df/dp into ``ds``
    (3 x n_cols; columns: 3 for the initial rate, ``n_dir`` inertia directions, 3 drag);
    ``g`` and ``a`` are 3x3 scratch."""
    w0, w1, w2 = w[0], w[1], w[2]
    f0, f1, f2 = _rhs(w0, w1, w2, m, model, c[0], c[1], c[2])
    f[0], f[1], f[2] = f0, f1, f2
    # J w and dg/dw for g = -w x J w - drag(w)
    l0 = m[0] * w0 + m[1] * w1 + m[2] * w2
    l1 = m[3] * w0 + m[4] * w1 + m[5] * w2
    l2 = m[6] * w0 + m[7] * w1 + m[8] * w2
    # [Jw]x - [w]x J
    g[0, 0] = 0.0 - (-w2 * m[3] + w1 * m[6])
    g[0, 1] = -l2 - (-w2 * m[4] + w1 * m[7])
    g[0, 2] = l1 - (-w2 * m[5] + w1 * m[8])
    g[1, 0] = l2 - (w2 * m[0] - w0 * m[6])
    g[1, 1] = 0.0 - (w2 * m[1] - w0 * m[7])
    g[1, 2] = -l0 - (w2 * m[2] - w0 * m[8])
    g[2, 0] = -l1 - (-w1 * m[0] + w0 * m[3])
    g[2, 1] = l0 - (-w1 * m[1] + w0 * m[4])
    g[2, 2] = 0.0 - (-w1 * m[2] + w0 * m[5])
    n = math.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    phi0, phi1, phi2 = 0.0, 0.0, 0.0
    if model == 1:
        g[0, 0] -= c[0]
        g[1, 1] -= c[1]
        g[2, 2] -= c[2]
        phi0, phi1, phi2 = w0, w1, w2
    elif model == 2:
        inv_n = 1.0 / n if n > 0.0 else 0.0
        ww = (w0, w1, w2)
        for i in range(3):
            for j in range(3):
                g[i, j] -= c[i] * ww[i] * ww[j] * inv_n
            g[i, i] -= c[i] * n
        phi0, phi1, phi2 = n * w0, n * w1, n * w2
    # df/dw = J^-1 dg/dw
    for i in range(3):
        for j in range(3):
            a[i, j] = m[9 + 3 * i] * g[0, j] + m[10 + 3 * i] * g[1, j] + m[11 + 3 * i] * g[2, j]
    for k in range(n_cols):
        for i in range(3):
            ds[i, k] = a[i, 0] * s[0, k] + a[i, 1] * s[1, k] + a[i, 2] * s[2, k]
    for d in range(n_dir):
        # -J^-1 (D f + w x D w)
        q0 = dirs[d, 0, 0] * f0 + dirs[d, 0, 1] * f1 + dirs[d, 0, 2] * f2
        q1 = dirs[d, 1, 0] * f0 + dirs[d, 1, 1] * f1 + dirs[d, 1, 2] * f2
        q2 = dirs[d, 2, 0] * f0 + dirs[d, 2, 1] * f1 + dirs[d, 2, 2] * f2
        v0 = dirs[d, 0, 0] * w0 + dirs[d, 0, 1] * w1 + dirs[d, 0, 2] * w2
        v1 = dirs[d, 1, 0] * w0 + dirs[d, 1, 1] * w1 + dirs[d, 1, 2] * w2
        v2 = dirs[d, 2, 0] * w0 + dirs[d, 2, 1] * w1 + dirs[d, 2, 2] * w2
        q0 += w1 * v2 - w2 * v1
        q1 += w2 * v0 - w0 * v2
        q2 += w0 * v1 - w1 * v0
        for i in range(3):
            ds[i, 3 + d] -= m[9 + 3 * i] * q0 + m[10 + 3 * i] * q1 + m[11 + 3 * i] * q2
    if n_cols > 3 + n_dir:
        phi = (phi0, phi1, phi2)
        for k in range(3):
            for i in range(3):
                ds[i, 3 + n_dir + k] -= m[9 + 3 * i + k] * phi[k]


@njit(cache=True)
def propagate_jac(t0, w_start, times, jm, ji, model, c, h_max, dirs, n_cols, out, sens):
    """:func:`propagate` and the derivatives of each w (rows of ``out``) with respect to the
    initial rate, the inertia directions ``dirs`` and (``n_cols`` = 6 + len(dirs)) the drag
    coefficients, into ``sens[k]`` (3 x n_cols), at each of ``times``."""
    m = (jm[0, 0], jm[0, 1], jm[0, 2], jm[1, 0], jm[1, 1], jm[1, 2], jm[2, 0], jm[2, 1], jm[2, 2],
         ji[0, 0], ji[0, 1], ji[0, 2], ji[1, 0], ji[1, 1], ji[1, 2], ji[2, 0], ji[2, 1], ji[2, 2])
    n_dir = dirs.shape[0]
    w = np.empty(3)
    w[0], w[1], w[2] = w_start[0], w_start[1], w_start[2]
    s = np.zeros((3, n_cols))
    s[0, 0] = s[1, 1] = s[2, 2] = 1.0
    ws = np.empty(3)
    ss = np.empty((3, n_cols))
    ka = np.empty(3)
    kb = np.empty(3)
    kd = np.empty(3)
    ke = np.empty(3)
    sa = np.empty((3, n_cols))
    sb = np.empty((3, n_cols))
    sd = np.empty((3, n_cols))
    se = np.empty((3, n_cols))
    g = np.empty((3, 3))
    a = np.empty((3, 3))
    t = t0
    for k in range(times.shape[0]):
        span = times[k] - t
        n = int(math.ceil(abs(span) / h_max - 1e-9))
        if n < 1:
            n = 1
        h = span / n
        for _ in range(n):
            _rhs_jac(w, m, model, c, dirs, n_dir, n_cols, s, ka, sa, g, a)
            for i in range(3):
                ws[i] = w[i] + 0.5 * h * ka[i]
                for j in range(n_cols):
                    ss[i, j] = s[i, j] + 0.5 * h * sa[i, j]
            _rhs_jac(ws, m, model, c, dirs, n_dir, n_cols, ss, kb, sb, g, a)
            for i in range(3):
                ws[i] = w[i] + 0.5 * h * kb[i]
                for j in range(n_cols):
                    ss[i, j] = s[i, j] + 0.5 * h * sb[i, j]
            _rhs_jac(ws, m, model, c, dirs, n_dir, n_cols, ss, kd, sd, g, a)
            for i in range(3):
                ws[i] = w[i] + h * kd[i]
                for j in range(n_cols):
                    ss[i, j] = s[i, j] + h * sd[i, j]
            _rhs_jac(ws, m, model, c, dirs, n_dir, n_cols, ss, ke, se, g, a)
            for i in range(3):
                w[i] += h / 6.0 * (ka[i] + 2.0 * kb[i] + 2.0 * kd[i] + ke[i])
                for j in range(n_cols):
                    s[i, j] += h / 6.0 * (sa[i, j] + 2.0 * sb[i, j] + 2.0 * sd[i, j] + se[i, j])
        t = times[k]
        for i in range(3):
            out[k, i] = w[i]
            for j in range(n_cols):
                sens[k, i, j] = s[i, j]


@njit(cache=True, nogil=True)
def propagate_flights_jac(t, offsets, w_starts, jm, ji, model, c, h_max, dirs, n_cols, out, sens):
    """:func:`propagate_flights` with the derivatives of :func:`propagate_jac` into ``sens``
    (rows as ``out``; a flight's first row: the identity in the initial rate's columns)."""
    for f in range(offsets.shape[0] - 1):
        a, b = offsets[f], offsets[f + 1]
        for i in range(3):
            out[a, i] = w_starts[f, i]
            for j in range(n_cols):
                sens[a, i, j] = 1.0 if j == i else 0.0
        if b - a > 1:
            propagate_jac(t[a], w_starts[f], t[a + 1:b], jm, ji, model, c, h_max, dirs, n_cols, out[a + 1:b],
                          sens[a + 1:b])


@njit(cache=True)
def _cost_of(out, w_meas, used):
    total = 0.0
    for k in range(out.shape[0]):
        if used[k]:
            for i in range(3):
                d = out[k, i] - w_meas[k, i]
                total += d * d
    return 0.5 * total


@njit(cache=True)
def fit_initial_rate(t, w_meas, used, w_start, jm, ji, model, c, h_max, xtol, ftol, max_iterations):
    """The initial rate (at ``t[0]``) whose model rates best match ``w_meas`` at the ``used``
    stamps, the body held: Levenberg-Marquardt (Marquardt's diagonal damping, Nielsen's update;
    Madsen, Nielsen & Tingleff 2004, 3.2) on the exact 3x3 Gauss-Newton system of the
    variational equations, compiled whole (a flight's edges refit this thousands of times).
    Stops as MINPACK does: a relative fall of the cost below ``ftol`` or a step below ``xtol``
    of the rate."""
    n = t.shape[0]
    offsets = np.array([0, n], dtype=np.int64)
    out = np.empty((n, 3))
    sens = np.empty((n, 3, 3))
    trial = np.empty((n, 3))
    dirs = np.zeros((0, 3, 3))
    w = np.empty((1, 3))
    w[0, 0], w[0, 1], w[0, 2] = w_start[0], w_start[1], w_start[2]
    w_new = np.empty((1, 3))
    damping, nu = 1e-3, 2.0
    propagate_flights_jac(t, offsets, w, jm, ji, model, c, h_max, dirs, 3, out, sens)
    cost = _cost_of(out, w_meas, used)
    h = np.zeros((3, 3))
    g = np.zeros(3)
    fresh = True
    for _ in range(max_iterations):
        if not math.isfinite(cost):
            break
        if fresh:
            h[:, :] = 0.0
            g[:] = 0.0
            for k in range(n):
                if not used[k]:
                    continue
                for i in range(3):
                    r = out[k, i] - w_meas[k, i]
                    for a in range(3):
                        g[a] += sens[k, i, a] * r
                        for b in range(3):
                            h[a, b] += sens[k, i, a] * sens[k, i, b]
            fresh = False
        m = h.copy()
        for a in range(3):
            m[a, a] += damping * max(h[a, a], 1e-300)
        p = np.linalg.solve(m, -g)
        step = math.sqrt(p[0] ** 2 + p[1] ** 2 + p[2] ** 2)
        size = math.sqrt(w[0, 0] ** 2 + w[0, 1] ** 2 + w[0, 2] ** 2)
        if step <= xtol * (xtol + size):
            break
        for i in range(3):
            w_new[0, i] = w[0, i] + p[i]
        propagate_flights(t, offsets, w_new, jm, ji, model, c, h_max, trial)
        cost_new = _cost_of(trial, w_meas, used)
        predicted = -(g[0] * p[0] + g[1] * p[1] + g[2] * p[2])
        quad = 0.0
        for a in range(3):
            for b in range(3):
                quad += p[a] * h[a, b] * p[b]
        predicted -= 0.5 * quad
        actual = cost - cost_new
        if math.isfinite(cost_new) and actual > 0.0 and predicted > 0.0:
            ratio = actual / predicted
            w[0, :] = w_new[0, :]
            propagate_flights_jac(t, offsets, w, jm, ji, model, c, h_max, dirs, 3, out, sens)
            fresh = True
            done = actual <= ftol * cost
            cost = cost_new
            damping *= max(1.0 / 3.0, 1.0 - (2.0 * ratio - 1.0) ** 3)
            nu = 2.0
            if done:
                break
        else:
            damping *= nu
            nu *= 2.0
            if damping > 1e16:
                break
    return w[0].copy()


def initial_rate(times, w_measured, used, w0, inertia, drag_model: str, coefficients, xtol: float = 1e-10,
                 ftol: float = 1e-10, max_iterations: int = 200, h_max: float = H_MAX) -> np.ndarray:
    """:func:`fit_initial_rate` for a flight's stamps ``times`` (the rate ``w0`` at ``times[0]``)."""
    jm = np.ascontiguousarray(inertia, dtype=float)
    return fit_initial_rate(np.ascontiguousarray(times, dtype=float), np.ascontiguousarray(w_measured, dtype=float),
                            np.ascontiguousarray(used, dtype=np.bool_), np.asarray(w0, dtype=float), jm, inverse3(jm),
                            drag_id(drag_model), np.asarray(coefficients, dtype=float), h_max, xtol, ftol,
                            max_iterations)


def rates_and_jacobian(times, w0, inertia, drag_model: str, coefficients, directions=None, drag_columns=False,
                       h_max: float = H_MAX):
    """(w (n, 3), dw/dq (n, 3, n_q)) at ``times`` (w0 at ``times[0]``, the rest monotonic away from
    it), with q: the initial rate (3), then each inertia direction of ``directions`` (k, 3, 3: dw
    along J + eps D), then, with ``drag_columns``, the three drag coefficients."""
    jm = np.ascontiguousarray(inertia, dtype=float)
    times = np.ascontiguousarray(times, dtype=float)
    dirs = np.zeros((0, 3, 3)) if directions is None else np.ascontiguousarray(directions, dtype=float)
    n_cols = 3 + dirs.shape[0] + (3 if drag_columns else 0)
    out = np.empty((len(times), 3))
    sens = np.empty((len(times), 3, n_cols))
    propagate_flights_jac(times, np.array([0, len(times)], dtype=np.int64),
                          np.asarray(w0, dtype=float).reshape(1, 3), jm, inverse3(jm), drag_id(drag_model),
                          np.asarray(coefficients, dtype=float), h_max, dirs, n_cols, out, sens)
    return out, sens


def skew(v) -> np.ndarray:
    """[v]x: the matrix of the cross product v x ."""
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def rotation_matrix(rotvec) -> np.ndarray:
    """exp([rotvec]x) by Rodrigues' formula (scipy's Rotation costs more than the short fits it serves)."""
    v = np.asarray(rotvec, dtype=float)
    theta = float(np.linalg.norm(v))
    k = skew(v)
    if theta < 1e-8:
        return np.eye(3) + k + 0.5 * (k @ k)
    return np.eye(3) + math.sin(theta) / theta * k + (1 - math.cos(theta)) / theta ** 2 * (k @ k)


def turn_directions(rotvec, inertia_turned) -> np.ndarray:
    """d(R J R^T)/d(rotvec_i) (3, 3, 3) for R = exp([rotvec]x) and ``inertia_turned`` = R J R^T:
    [a_i]x J' - J' [a_i]x with a_i = J_l(rotvec) e_i, J_l the left Jacobian of SO(3)
    (Sola, Deray & Atchuthan, *A micro Lie theory for state estimation in robotics*, 2018, eq. 145)."""
    v = np.asarray(rotvec, dtype=float)
    theta = float(np.linalg.norm(v))
    k = skew(v)
    if theta < 1e-6:
        jl = np.eye(3) + 0.5 * k + k @ k / 6.0
    else:
        jl = np.eye(3) + (1 - math.cos(theta)) / theta ** 2 * k + (theta - math.sin(theta)) / theta ** 3 * (k @ k)
    jt = np.asarray(inertia_turned, dtype=float)
    return np.array([skew(jl[:, i]) @ jt - jt @ skew(jl[:, i]) for i in range(3)])


def fastest_rates(inertia, drag_model: str, coefficients, rate: float) -> tuple[float, float]:
    """(gyroscopic, drag): upper figures of how fast the model's rate can change at |w| = ``rate``
    (1/s), what a step of an explicit integrator must stay below.

    Gyroscopic: the largest frequency of the free body's motion near a principal axis,
    ``rate * sqrt(|(I_k - I_i)(I_k - I_j)| / (I_i I_j))`` over the axes k (Landau & Lifshitz,
    *Mechanics*, section 37, problem 1); at most ``rate`` for a body that satisfies the triangle
    inequality. Drag: the largest eigenvalue of ``J^-1 C`` (linear: ``J w' = -C w``), twice it
    times ``rate`` for quadratic drag (the Jacobian of ``c_i |w| w_i``). Non-finite figures
    (an inertia of 1e-300) come back as inf."""
    with np.errstate(all="ignore"):
        jm = 0.5 * (np.asarray(inertia, dtype=float) + np.asarray(inertia, dtype=float).T)
        try:
            moments, axes = np.linalg.eigh(jm)
        except np.linalg.LinAlgError:
            return math.inf, math.inf
        gyro = 0.0
        for k in range(3):
            i, j = [n for n in range(3) if n != k]
            gyro = max(gyro, rate * math.sqrt(abs((moments[k] - moments[i]) * (moments[k] - moments[j])
                                                  / (moments[i] * moments[j]))))
        drag = 0.0
        if drag_model != "none":
            c = np.diag(np.asarray(coefficients, dtype=float))
            try:
                drag = float(np.max(np.abs(np.linalg.eigvals(np.linalg.solve(jm, c)))))
            except np.linalg.LinAlgError:
                drag = math.inf
            if drag_model == "quadratic":
                drag *= 2.0 * rate
    return (gyro if math.isfinite(gyro) else math.inf), (drag if math.isfinite(drag) else math.inf)


def drag_torque(w: np.ndarray, drag_model: str, coefficients) -> np.ndarray:
    """The drag torque (sensor frame) at each row of ``w``: :func:`app.physics.loads.drag_torque`,
    or zero for ``"none"``."""
    if drag_model == "none":
        return np.zeros_like(np.asarray(w, dtype=float))
    return loads.drag_torque(drag_model, coefficients, w)


def warm_up() -> None:
    """Load (or compile) every kernel a fit calls, on a tiny flight: a live session does this
    off its poll thread, so that its first fit does not wait for numba's cache."""
    times = np.array([0.0, 0.01, 0.02])
    w = np.array([[0.0, 1.0, 0.1], [0.0, 1.0, 0.1], [0.0, 1.0, 0.1]])
    inertia = np.diag([0.5, 0.8, 1.0])
    simulate_rates(times[1:], 0.0, w[0], inertia, "none", np.zeros(3))
    propagate_flights(times, np.array([0, 3], dtype=np.int64), w[:1].copy(), inertia, inverse3(inertia), 0,
                      np.zeros(3), H_MAX, np.empty((3, 3)))
    rates_and_jacobian(times, w[0], inertia, "quadratic", np.zeros(3), np.zeros((1, 3, 3)), drag_columns=True)
    initial_rate(times, w, np.ones(3, dtype=bool), w[0], inertia, "quadratic", np.zeros(3))
