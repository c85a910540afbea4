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


def simulate_rates(times, t0: float, w0, inertia, drag_model: str, coefficients, h_max: float = H_MAX) -> np.ndarray:
    """w (len(times), 3) from ``w0`` at ``t0`` with the sensor-frame ``inertia`` and drag;
    ``times`` run monotonically away from ``t0`` (forwards or backwards)."""
    jm = np.ascontiguousarray(inertia, dtype=float)
    times = np.ascontiguousarray(times, dtype=float)
    out = np.empty((len(times), 3))
    if len(times):
        propagate(float(t0), np.asarray(w0, dtype=float), times, jm, np.linalg.inv(jm), drag_id(drag_model),
                  np.asarray(coefficients, dtype=float), h_max, out)
    return out


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
