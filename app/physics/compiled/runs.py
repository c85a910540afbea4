"""Compiled runs: one entry kernel per integrator (and rk4's gravity-only variant), so that a run
compiles only its own method's code, not every method's (numba compiles everything a kernel can
reach: one kernel dispatching on the method took 10-20 s on a first run, ``run_rk4_free`` about 1 s).

Every entry has the one signature :data:`RUN_SIGNATURE` (it is compiled for exactly that, in a child
process or ahead of need, see :mod:`.jit`) and returns ``(status, body, step)`` as documented in
:func:`_drive`. The step functions themselves live in :mod:`.kernels`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types

from . import kernels as k
from .kernels import (
    step_euler,
    step_lie_rk4,
    step_midpoint,
    step_rk4,
    step_rk4_free,
    step_rotmat_euler,
    step_semi_implicit,
    step_strang,
    has_loads,
)

_ROWS = types.float64[:, ::1]
#: what every entry kernel is compiled for: (ys, h, n_out, every, params, points, wforces, order,
#: out, options) -> (status, body, step); the callers pass exactly these types
RUN_SIGNATURE = types.UniTuple(types.int64, 3)(
    _ROWS, types.float64, types.int64, types.int64, types.float64[::1], _ROWS, _ROWS, types.int64[::1],
    types.float64[:, :, ::1], types.float64[::1])


@njit(inline="always")
def _drive(step, ys, h, n_out, every, params, points, wforces, order, out, options):
    """Advance N rows ``ys`` (in place) by ``n_out * every`` calls of ``step`` of size h.

    ``step(y, h, params, points, wforces, order, ws, loaded, options)`` advances one row and
    returns False if an implicit solve failed. After every ``every`` steps row b is copied to
    ``out[k, b]``. Returns ``(status, body, step)`` of the earliest failure: status 0 ok, 1
    non-finite or |omega| > OMEGA_LIMIT, 2 implicit solve failed; ``step`` is 1-based. A failed
    row holds its last state in the rest of its output. Inlined into each entry kernel below,
    so each compiles its own ``step`` and nothing else. Uncompiled, ``ys`` and ``params`` may
    be lists (see :data:`ELEMENTWISE`).
    """
    n = len(ys)
    width = len(ys[0])
    status = np.zeros(n, dtype=np.int64)
    fail_at = np.zeros(n, dtype=np.int64)
    loaded = has_loads(params, points)
    ws = np.empty((8, max(width, k.ROW_WIDTH)))
    lim2 = k.OMEGA_LIMIT * k.OMEGA_LIMIT
    for b in range(n):
        y = ys[b]
        for kk in range(n_out):
            for s in range(every):
                ok = step(y, h, params, points, wforces, order, ws, loaded, options)
                w2 = y[10] * y[10] + y[11] * y[11] + y[12] * y[12]
                total = 0.0  # a NaN or an infinity anywhere makes the sum non-finite
                for i in range(width):
                    total += y[i]
                finite = math.isfinite(total)
                if not ok or not finite or w2 > lim2:
                    for rest in range(kk, n_out):
                        out[rest, b, :] = y
                    status[b] = 2 if (finite and w2 <= lim2) else 1
                    fail_at[b] = kk * every + s + 1
                    break
            if status[b] != 0:
                break
            out[kk, b, :] = y
    fail_status, fail_body, fail_step = 0, -1, n_out * every + 1
    for b in range(n):
        if status[b] != 0 and fail_at[b] < fail_step:
            fail_status, fail_body, fail_step = status[b], b, fail_at[b]
    return fail_status, fail_body, fail_step


# ------------------------------------------------------------------ each method's step, one signature


@njit(cache=True)
def _euler(y, h, params, points, wforces, order, ws, loaded, options):
    step_euler(y, h, params, points, wforces, ws)
    return True


@njit(cache=True)
def _semi_implicit(y, h, params, points, wforces, order, ws, loaded, options):
    step_semi_implicit(y, h, params, points, wforces, ws)
    return True


@njit(cache=True)
def _rk4(y, h, params, points, wforces, order, ws, loaded, options):
    step_rk4(y, h, params, points, wforces, ws)
    return True


@njit(cache=True)
def _rk4_free(y, h, params, points, wforces, order, ws, loaded, options):
    step_rk4_free(y, h, params)
    return True


@njit(cache=True)
def _midpoint(y, h, params, points, wforces, order, ws, loaded, options):
    return step_midpoint(y, h, params, points, wforces, ws)


@njit(cache=True)
def _splitting(y, h, params, points, wforces, order, ws, loaded, options):
    step_strang(y, h, params, points, wforces, order, ws, loaded)
    return True


@njit(cache=True)
def _splitting4(y, h, params, points, wforces, order, ws, loaded, options):
    step_strang(y, k.YOSHIDA_W1 * h, params, points, wforces, order, ws, loaded)
    step_strang(y, k.YOSHIDA_W0 * h, params, points, wforces, order, ws, loaded)
    step_strang(y, k.YOSHIDA_W1 * h, params, points, wforces, order, ws, loaded)
    return True


@njit(cache=True)
def _rotmat_euler(y, h, params, points, wforces, order, ws, loaded, options):
    step_rotmat_euler(y, h, params, points, wforces, ws, options)
    return True


@njit(cache=True)
def _lie_rk4(y, h, params, points, wforces, order, ws, loaded, options):
    step_lie_rk4(y, h, params, points, wforces, ws)
    return True


# ------------------------------------------------------------------ the entry kernels (RUN_SIGNATURE)


@njit(cache=True, nogil=True)
def run_euler(ys, h, n_out, every, params, points, wforces, order, out, options):
    return _drive(_euler, ys, h, n_out, every, params, points, wforces, order, out, options)


@njit(cache=True, nogil=True)
def run_semi_implicit_euler(ys, h, n_out, every, params, points, wforces, order, out, options):
    return _drive(_semi_implicit, ys, h, n_out, every, params, points, wforces, order, out, options)


@njit(cache=True, nogil=True)
def run_rk4(ys, h, n_out, every, params, points, wforces, order, out, options):
    return _drive(_rk4, ys, h, n_out, every, params, points, wforces, order, out, options)


@njit(cache=True, nogil=True)
def run_rk4_free(ys, h, n_out, every, params, points, wforces, order, out, options):
    """rk4 when only gravity acts (no other load, no damper or rotor: :func:`has_loads` is False)."""
    return _drive(_rk4_free, ys, h, n_out, every, params, points, wforces, order, out, options)


@njit(cache=True, nogil=True)
def run_midpoint(ys, h, n_out, every, params, points, wforces, order, out, options):
    return _drive(_midpoint, ys, h, n_out, every, params, points, wforces, order, out, options)


@njit(cache=True, nogil=True)
def run_splitting(ys, h, n_out, every, params, points, wforces, order, out, options):
    return _drive(_splitting, ys, h, n_out, every, params, points, wforces, order, out, options)


@njit(cache=True, nogil=True)
def run_splitting4(ys, h, n_out, every, params, points, wforces, order, out, options):
    return _drive(_splitting4, ys, h, n_out, every, params, points, wforces, order, out, options)


@njit(cache=True, nogil=True)
def run_rotmat_euler(ys, h, n_out, every, params, points, wforces, order, out, options):
    return _drive(_rotmat_euler, ys, h, n_out, every, params, points, wforces, order, out, options)


@njit(cache=True, nogil=True)
def run_lie_rk4(ys, h, n_out, every, params, points, wforces, order, out, options):
    return _drive(_lie_rk4, ys, h, n_out, every, params, points, wforces, order, out, options)


#: the entry kernel's name of each method id (``integrators.REGISTRY`` names the ids)
RUNS = {k.EULER: "run_euler", k.SEMI_IMPLICIT_EULER: "run_semi_implicit_euler", k.RK4: "run_rk4",
        k.MIDPOINT: "run_midpoint", k.SPLITTING: "run_splitting", k.SPLITTING4: "run_splitting4",
        k.ROTMAT_EULER: "run_rotmat_euler", k.LIE_RK4: "run_lie_rk4"}
#: methods with a lighter kernel when only gravity acts
FREE_RUNS = {k.RK4: "run_rk4_free"}
#: entry kernels whose steps read and write a row and the parameters one element at a time
#: (no slices written through), so that run uncompiled they may step Python lists instead of
#: numpy arrays: 4x faster there, as a list's item is a Python float (tests check the results)
ELEMENTWISE = ("run_rk4_free",)


def run_name(method: int, params: np.ndarray, points: np.ndarray) -> str:
    """The entry kernel that steps ``method`` for this model (see :func:`has_loads`)."""
    if method in FREE_RUNS and not has_loads.py_func(params, points):
        return FREE_RUNS[method]
    return RUNS[method]
