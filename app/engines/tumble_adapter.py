"""Tumble's own integrators as audit settings (``tumble:rk4``, ``tumble:splitting``, ...): the same
runs as ``tumble simulate --integrator NAME``, already in Tumble's convention."""

from __future__ import annotations

import numpy as np

from ..physics.integrators import DESCRIPTIONS, integrator_info
from ..physics.state import State

ENGINE = "tumble"
PACKAGE = None
ORDER = 90
SETTINGS = dict(DESCRIPTIONS)


def version() -> str:
    from .. import __version__

    return __version__


def fixed_step(setting: str) -> bool:
    return integrator_info(setting).fixed_step


def run(start, setting: str, dt: float, times):
    from ..physics.body import Body
    from ..physics.integrators import simulate
    from ..physics.loads import Loads

    times = np.asarray(times, dtype=float)
    duration = float(times[-1])
    sample = float(times[1] - times[0]) if len(times) > 1 else duration
    state = State(0.0, start.c, start.v, start.q, start.w)
    body, loads = Body(start.mass, start.inertia, allow_unphysical=True), Loads(gravity=start.gravity)
    settings = {"integrator": setting, "description": DESCRIPTIONS[setting], "timestep": float(dt),
                "damping": 0.0}
    if fixed_step(setting):
        return simulate(body, state, setting, float(dt), duration, sample=sample, loads=loads), settings
    traj, remarks = _adaptive(body, state, setting, float(dt), times, loads)
    return traj, settings, remarks


def _adaptive(body, state, setting, dt, times, loads):
    """An adaptive integrator's run, a group of sample intervals per call of about 0.2 s, its
    wall-clock budget checked between calls (:mod:`.budget`): (trajectory, remarks), the
    trajectory ending at the last sample reached."""
    import time

    from ..physics.integrators import simulate
    from ..physics.state import Trajectory
    from .budget import Budget, Calls, stopped

    parts = {"c": [state.c[None]], "v": [state.v[None]], "q": [state.q[None]], "w": [state.w[None]]}
    calls, budget = Calls(1), Budget(float(times[-1]) / dt)
    k, n, spent = 0, len(times), None
    while k < n - 1 and spent is None:
        j = min(n - 1, k + max(1, int(calls.next(n - 1 - k))))
        h = float(times[k + 1] - times[k])
        if not np.allclose(np.diff(times[k:j + 1]), h, rtol=1e-9, atol=0):
            j = k + 1  # the last, shorter interval alone
        began = time.perf_counter()
        piece = simulate(body, state, setting, dt, float(times[j] - times[k]), sample=h, loads=loads)
        calls.took(j - k, time.perf_counter() - began)
        if len(piece.t) != j - k + 1:  # the intervals did not fit the sample grid: one at a time
            piece = simulate(body, state, setting, dt, float(times[k + 1] - times[k]), loads=loads)
            j = k + 1
            piece = Trajectory(piece.t[[0, -1]], piece.c[[0, -1]], piece.v[[0, -1]], piece.q[[0, -1]],
                               piece.w[[0, -1]])
        for name in parts:
            parts[name].append(getattr(piece, name)[1:])
        state = State(0.0, piece.c[-1], piece.v[-1], piece.q[-1], piece.w[-1])
        k = j
        spent = budget.spent(0)
    reached = k + 1
    traj = Trajectory(times[:reached].copy(), *(np.concatenate(parts[name]) for name in ("c", "v", "q", "w")))
    return traj, {} if reached == n else {"not_scored": stopped(float(times[k]), spent)}
