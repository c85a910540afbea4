"""Flips ahead of a state: the run's own integrator run forward, the flips it will show.

A run is deterministic, so the flips a window or a clip is about to show are known before it
shows them: run the scenario's integrator (its dt, its tolerances, its loads) from the state,
sampled as the window records its history, and find the flips as the worker counts them
(:func:`app.physics.diagnostics.flip_times`). Unlike the closed form this holds for every
body and load (drag, gravity, a damper), and for any integrator exactly as it is shown.
"""

from __future__ import annotations

import numpy as np

from ..physics import diagnostics
from ..physics.errors import DivergenceError, ParameterError
from ..physics.state import State
from .worker import RECORD_INTERVAL_S

#: how far the window looks ahead at a time (s of simulated time): a run of minutes is looked
#: at a piece at a time (the worker asks again as it nears the end of what it knows); 30 s of
#: the T-handle took 0.14 s here while its saved kernel loaded and 0.03 s after; a first run
#: steps uncompiled while the kernel compiles, at about 17 us a step: about 0.5 s for 30,000 steps
LOOKAHEAD_S = 30.0


def flips_ahead(scenario, state: State | None = None, until: float | None = None) -> np.ndarray:
    """Times of the flips the run of ``scenario`` shows after ``state`` (default its initial
    state) up to simulated time ``until`` (default :data:`LOOKAHEAD_S` ahead), sorted; empty
    when it does not flip there.

    Found on the samples the window's history holds (every :data:`RECORD_INTERVAL_S`, or every
    step of a larger dt), located by linear interpolation between them. A run too large to
    make, or one that diverges, gives the flips found before it stopped (none).
    Thread: any (the worker calls it on its own thread).
    """
    state = scenario.initial_state if state is None else state
    end = state.t + LOOKAHEAD_S if until is None else float(until)
    span = end - state.t
    solver = scenario.solver
    if not span > 0:
        return np.empty(0)
    from ..physics.integrators import simulate

    sample = min(span, max(RECORD_INTERVAL_S, min(solver.dt, span)))
    try:
        traj = simulate(scenario.model, state, solver.integrator, min(solver.dt, span), span, sample=sample,
                        **solver.options)
    except (DivergenceError, ParameterError):
        return np.empty(0)
    return diagnostics.flip_times(scenario.rigid_body, traj.t, traj.w)
