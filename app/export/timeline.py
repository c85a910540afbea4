"""The run an export draws: re-simulated from the scenario's start, sampled on the frame times.

The trajectory is sampled at least every :data:`SAMPLE_INTERVAL_MAX` of simulated time
(like the window's history, so trails and plot curves look the same), and every frame time
is one of the samples exactly: before ``start`` the run is sampled on an even grid ending at
``start``, after it on a grid of ``frame_interval / k``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..physics import diagnostics
from ..physics.integrators import simulate
from ..physics.state import Trajectory
from ..scene.body_scene import TRAIL_POINTS
from ..simulation.recording import SPAN_COLUMNS, Span, thin
from ..simulation.worker import RECORD_INTERVAL_S

#: longest simulated time between two samples (s): the window records its history this often
SAMPLE_INTERVAL_MAX = RECORD_INTERVAL_S
#: the trail covers this much simulated time before the frame (s), as in the window
TRAIL_SECONDS = TRAIL_POINTS * RECORD_INTERVAL_S


@dataclass(frozen=True)
class Timeline:
    """Samples of the run from t = 0 to the last frame, and where the frames fall in them.

    ``c``, ``v`` (world), ``q`` (body to world), ``w`` (body frame), ``L`` (world), ``E_drift`` and
    ``L_norm_drift`` (relative to t = 0) are indexed like ``t``; ``frame_index[i]`` is the
    sample of frame ``i``; ``first`` is the sample of the first frame; ``flips`` the flip times.
    """

    t: np.ndarray
    c: np.ndarray
    v: np.ndarray
    q: np.ndarray
    w: np.ndarray
    L: np.ndarray
    E_drift: np.ndarray
    L_norm_drift: np.ndarray
    frame_index: np.ndarray
    flips: np.ndarray
    s: np.ndarray | None = None  # a damper sphere's rate (body frame), None without one

    @property
    def first(self) -> int:
        return int(self.frame_index[0])

    def frames(self) -> Trajectory:
        """The samples of the frames only, as a trajectory (one row per frame)."""
        k = self.frame_index
        return Trajectory(self.t[k], self.c[k], self.v[k], self.q[k], self.w[k],
                          s=None if self.s is None else self.s[k])

    def flip_count(self, k: int) -> int:
        """Flips completed up to sample ``k`` (inclusive)."""
        return int(np.searchsorted(self.flips, self.t[k], side="right"))

    def span(self, t0: float | None, t1: float | None = None, max_points: int | None = None) -> Span:
        """The :class:`~app.simulation.recording.Recording` of the exported run: samples with
        ``t0 <= t <= t1``, thinned as the window's history is (:func:`thin`)."""
        lo = 0 if t0 is None else int(np.searchsorted(self.t, t0, side="left"))
        hi = len(self.t) if t1 is None else int(np.searchsorted(self.t, t1, side="right"))
        idx = thin(lo, max(hi, lo), max_points)
        columns = {name: getattr(self, name)[idx] for name in SPAN_COLUMNS}
        end = self.t[-1] if t1 is None else t1
        start = -np.inf if t0 is None else t0
        inside = (self.flips >= start) & (self.flips <= end)
        return Span(columns=columns, flips=self.flips[inside],
                    flip_count=int(np.searchsorted(self.flips, end, side="right")), segment_start=float(self.t[0]))

    def trail(self, k: int) -> np.ndarray:
        """Orientations of the last :data:`TRAIL_SECONDS` up to sample ``k``, oldest first,
        thinned to at most ``TRAIL_POINTS`` (the newest sample always kept): :meth:`span`'s."""
        t = float(self.t[k])
        return self.span(t - TRAIL_SECONDS, t, TRAIL_POINTS)["q"]


def _run(scenario, state0, duration: float, sample: float, integrator: str, dt: float, progress=None) -> Trajectory:
    # a span shorter than one step is covered by one shorter step
    return simulate(scenario.model, state0, integrator, min(dt, duration), duration, sample=sample,
                    progress=progress, **scenario.solver.options)


def _part(progress, t0: float, span: float, total: float):
    """``progress`` for the piece of the run from ``t0`` that lasts ``span`` of ``total``
    simulated seconds (a piece ending at ``total`` ends at exactly 1), or None."""
    if progress is None:
        return None
    return lambda fraction: progress((t0 + span * fraction) / total)


def simulate_timeline(scenario, plan, progress=None) -> Timeline:
    """Re-simulate ``scenario`` from its start up to ``plan``'s last frame.

    Uses the scenario's integrator and dt (the command line's ``--integrator``/``--dt``
    change the scenario). Raises :class:`~app.physics.errors.DivergenceError` if it diverges.
    ``progress(fraction)`` is called with the fraction of the simulated time done, rising
    to 1 (the fixed-step integrators report as they go, ``dop853`` and ``exact`` at the end).
    """
    integrator, dt = scenario.solver.integrator, scenario.solver.dt
    span = (plan.n_frames - 1) * plan.frame_interval
    total = plan.start + span
    pieces = []
    state = scenario.initial_state
    if plan.start > 0:
        k0 = max(1, math.ceil(plan.start / SAMPLE_INTERVAL_MAX))
        before = _run(scenario, state, plan.start, plan.start / k0, integrator, dt,
                      _part(progress, 0.0, plan.start, total))
        pieces.append(before)
        state = before.state(-1)
    k = max(1, math.ceil(plan.frame_interval / SAMPLE_INTERVAL_MAX))
    first = len(pieces[0].t) - 1 if pieces else 0
    if plan.n_frames > 1:
        during = _run(scenario, state, span, plan.frame_interval / k, integrator, dt,
                      _part(progress, plan.start, span, total))
        expected = (plan.n_frames - 1) * k + 1
        if len(during.t) != expected:  # pragma: no cover - guards the sampling arithmetic
            raise RuntimeError(f"export sampling: {len(during.t)} samples, expected {expected}")
        pieces.append(during)
    elif not pieces:
        pieces.append(Trajectory(np.array([state.t]), state.c[None], state.v[None], state.q[None], state.w[None],
                                 s=None if state.s is None else state.s[None]))
    # join the pieces; each after the first repeats the previous one's last sample
    parts = [pieces[0]] + [p.select(slice(1, None)) for p in pieces[1:]]
    joined = {f: np.concatenate([getattr(p, f) for p in parts]) for f in ("t", "c", "v", "q", "w")}
    if parts[0].s is not None:
        joined["s"] = np.concatenate([p.s for p in parts])
    traj = Trajectory(**joined)
    if progress is not None:
        progress(1.0)
    body = scenario.rigid_body
    d = diagnostics.diagnose(body, scenario.gravity, traj)
    frame_index = first + k * np.arange(plan.n_frames)
    return Timeline(
        t=traj.t, c=traj.c, v=traj.v, q=traj.q, w=traj.w, L=d.L, s=traj.s,
        E_drift=diagnostics.relative_drift(d.E),
        L_norm_drift=diagnostics.relative_drift(np.linalg.norm(d.L, axis=-1)),
        frame_index=frame_index,
        flips=diagnostics.flip_times(body, traj.t, traj.w),
    )
