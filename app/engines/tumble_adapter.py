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
    traj = simulate(Body(start.mass, start.inertia, allow_unphysical=True), state, setting, float(dt), duration,
                    sample=sample, loads=Loads(gravity=start.gravity))
    settings = {"integrator": setting, "description": DESCRIPTIONS[setting], "timestep": float(dt),
                "damping": 0.0}
    return traj, settings
