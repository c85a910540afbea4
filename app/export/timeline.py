"""The run an export draws: re-simulated from the scenario's start, sampled on the frame times;
and the time map that decides which simulated time each frame (or the window) shows.

The trajectory is sampled at least every :data:`SAMPLE_INTERVAL_MAX` of simulated time
(like the window's history, so trails and plot curves look the same), and every frame time
is one of the samples exactly: before ``start`` the run is sampled on an even grid ending at
``start``, after it on a grid of ``frame_interval / k`` (``/ k`` of each frame's own interval
where a :class:`TimeMap` slows the clip around the flips).

Slow motion around the flips (``tumble export --slow-flips X``, the window's presentation
mode) is one :class:`TimeMap` made by :func:`slow_flips_map`: presentation time ``p`` (what a
clip's frames or the window's clock advance evenly) against simulated time ``t``, with
``dt/dp = 1/X`` from :data:`SLOW_HALF_WINDOW_S` before each flip the run is about to show to as
long after it, and 1 elsewhere. The export samples its frames through it; the window's
simulation worker paces its clock through it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..physics import diagnostics
from ..physics.integrators import simulate
from ..physics.state import Trajectory
from ..scene.body_scene import TRAIL_POINTS
from ..physics.errors import ParameterError
from ..simulation.lookahead import LOOKAHEAD_S, flips_ahead
from ..simulation.recording import SPAN_COLUMNS, Span, thin
from ..simulation.worker import RECORD_INTERVAL_S

#: longest simulated time between two samples (s): the window records its history this often
SAMPLE_INTERVAL_MAX = RECORD_INTERVAL_S
#: the trail covers this much simulated time before the frame (s), as in the window
TRAIL_SECONDS = TRAIL_POINTS * RECORD_INTERVAL_S
#: slow motion around a flip lasts from this long before it to as long after it (s, simulated)
SLOW_HALF_WINDOW_S = 0.5
#: the slow-motion factor: playback inside the windows is this many times slower
MIN_SLOW_FACTOR, MAX_SLOW_FACTOR = 1.0, 50.0
#: two frame intervals are the same piece of the clip when they differ by less than this (relative)
SAME_INTERVAL = 1e-9


@dataclass(frozen=True)
class TimeMap:
    """Presentation time ``p`` against simulated time ``t``: slower by ``factor`` inside
    ``windows`` (sorted, disjoint ``(a, b)`` spans of simulated time), at speed 1 elsewhere,
    and ``p = t`` before the first window. Continuous and strictly increasing both ways.

    ``until`` is the simulated time up to which the windows are known (the look-ahead's end);
    past it the map runs at speed 1. Thread: any (immutable).
    """

    windows: tuple = ()
    factor: float = 1.0
    until: float = math.inf

    def __post_init__(self):
        a = np.array([w[0] for w in self.windows], dtype=float)
        b = np.array([w[1] for w in self.windows], dtype=float)
        knots_t = np.column_stack([a, b]).ravel()
        # each window adds (factor - 1) (b - a) of presentation time to everything after it
        extra = np.concatenate([[0.0], np.cumsum((self.factor - 1.0) * (b - a))])
        knots_p = np.column_stack([a + extra[:-1], b + extra[1:]]).ravel()
        object.__setattr__(self, "_t", knots_t)
        object.__setattr__(self, "_p", knots_p)

    def presentation_time(self, t):
        """Presentation time of simulated time ``t`` (a number or an array)."""
        return self._convert(t, self._t, self._p)

    def sim_time(self, p):
        """Simulated time shown at presentation time ``p`` (a number or an array)."""
        return self._convert(p, self._p, self._t)

    @staticmethod
    def _convert(x, xs, ys):
        x_arr = np.asarray(x, dtype=float)
        if not len(xs):
            out = x_arr.copy()
        else:  # slope 1 before the first knot and after the last, piecewise linear between
            out = np.interp(x_arr, xs, ys)
            out = np.where(x_arr < xs[0], x_arr - xs[0] + ys[0], out)
            out = np.where(x_arr > xs[-1], x_arr - xs[-1] + ys[-1], out)
        return float(out) if out.ndim == 0 else out

    def advance(self, t: float, dp: float) -> float:
        """The simulated time ``dp`` of presentation time after simulated time ``t``."""
        return self.sim_time(self.presentation_time(t) + dp)

    def rate(self, t: float) -> float:
        """Simulated seconds per presentation second at ``t``: ``1 / factor`` inside a window, 1 elsewhere."""
        return 1.0 / self.factor if self.slowed(t) else 1.0

    def slowed(self, t: float) -> bool:
        """Whether ``t`` lies inside a slow-motion window."""
        k = int(np.searchsorted(self._t, t, side="right"))
        return k % 2 == 1 and self.factor != 1.0


def check_slow_factor(factor, name: str = "slow_flips") -> float:
    """``factor`` as a float if it is a slow-motion factor, else :class:`ParameterError` naming ``name``."""
    rule = f"be a number from {MIN_SLOW_FACTOR:g} to {MAX_SLOW_FACTOR:g} (times slower around each flip)"
    try:
        x = float(factor)
    except (TypeError, ValueError):
        raise ParameterError(name, factor, rule) from None
    if not (math.isfinite(x) and MIN_SLOW_FACTOR <= x <= MAX_SLOW_FACTOR):
        raise ParameterError(name, factor, rule)
    return x


def slow_windows(flips, half: float = SLOW_HALF_WINDOW_S) -> tuple:
    """The spans ``(flip - half, flip + half)`` of the sorted ``flips``, overlapping ones merged."""
    out: list = []
    for f in np.sort(np.asarray(flips, dtype=float)):
        a, b = f - half, f + half
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], b)
        else:
            out.append((float(a), float(b)))
    return tuple(out)


def slow_flips_map(scenario, factor: float, state=None, until: float | None = None,
                   half: float = SLOW_HALF_WINDOW_S) -> TimeMap:
    """The :class:`TimeMap` that plays ``scenario``'s run ``factor`` times slower from ``half``
    a second before each flip it shows after ``state`` (default its start) to ``half`` after,
    the flips found by running it ahead (:func:`app.simulation.lookahead.flips_ahead`) up to
    ``until`` (default a look-ahead's length past ``state``: the window asks again near it).
    Thread: any; the look-ahead costs one run of the span."""
    factor = check_slow_factor(factor)
    state = scenario.initial_state if state is None else state
    if until is None:
        until = state.t + LOOKAHEAD_S
    flips = flips_ahead(scenario, state, until + half) if factor != 1.0 else np.empty(0)
    return TimeMap(slow_windows(flips, half), factor, until=float(until))


def frame_times(start: float, n_frames: int, frame_interval: float, time_map: TimeMap | None = None) -> np.ndarray:
    """Simulated time of each frame: ``start + i * frame_interval``, or through ``time_map``
    the same steps of presentation time from ``start``'s."""
    steps = np.arange(n_frames) * frame_interval
    if time_map is None:
        return start + steps
    times = time_map.sim_time(time_map.presentation_time(start) + steps)
    times = np.atleast_1d(times)
    times[0] = start
    return times


def frame_count(start: float, span: float, fps: int, speed: float, time_map: TimeMap | None = None) -> int:
    """Frames of a clip showing ``span`` s of simulated time from ``start`` at ``speed``
    simulated seconds per second of video (``round(span / speed * fps)``), the slowed
    seconds of ``time_map`` counted ``factor`` times."""
    if time_map is not None:
        span = time_map.presentation_time(start + span) - time_map.presentation_time(start)
    return int(round(span / speed * fps))


def frame_pieces(times) -> list:
    """The frame times split where their spacing changes: ``[(first frame, intervals), ...]``
    covering every interval once (one piece for an evenly spaced clip)."""
    times = np.asarray(times, dtype=float)
    d = np.diff(times)
    pieces: list = []
    i = 0
    while i < len(d):
        j = i + 1
        while j < len(d) and abs(d[j] - d[i]) <= SAME_INTERVAL * max(abs(d[i]), 1.0):
            j += 1
        pieces.append((i, j - i))
        i = j
    return pieces


def samples_per_interval(interval: float) -> int:
    """Samples of the run per frame interval (at least every :data:`SAMPLE_INTERVAL_MAX`)."""
    return max(1, math.ceil(interval / SAMPLE_INTERVAL_MAX))


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
    times = plan.frame_times
    total = plan.start + (plan.n_frames - 1) * plan.frame_interval if plan.time_map is None else float(times[-1])
    pieces = []
    state = scenario.initial_state
    if plan.start > 0:
        k0 = max(1, math.ceil(plan.start / SAMPLE_INTERVAL_MAX))
        before = _run(scenario, state, plan.start, plan.start / k0, integrator, dt,
                      _part(progress, 0.0, plan.start, total))
        pieces.append(before)
        state = before.state(-1)
    first = len(pieces[0].t) - 1 if pieces else 0
    frame_index = np.empty(plan.n_frames, dtype=int)
    frame_index[0] = first
    for i, m in frame_pieces(times):  # frames i .. i + m, each interval sampled k times
        t0 = float(times[i])
        even = plan.time_map is None  # one piece: the evenly spaced clip, its interval exactly
        span = m * plan.frame_interval if even else float(times[i + m]) - t0
        k = samples_per_interval(span / m)
        sample = plan.frame_interval / k if even else span / (m * k)
        during = _run(scenario, state, span, sample, integrator, dt, _part(progress, t0, span, total))
        if len(during.t) != m * k + 1:  # pragma: no cover - guards the sampling arithmetic
            raise RuntimeError(f"export sampling: {len(during.t)} samples, expected {m * k + 1}")
        frame_index[i + 1:i + m + 1] = frame_index[i] + k * np.arange(1, m + 1)
        pieces.append(during)
        state = during.state(-1)
    if not pieces:
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
    return Timeline(
        t=traj.t, c=traj.c, v=traj.v, q=traj.q, w=traj.w, L=d.L, s=traj.s,
        E_drift=diagnostics.relative_drift(d.E),
        L_norm_drift=diagnostics.relative_drift(np.linalg.norm(d.L, axis=-1)),
        frame_index=frame_index,
        flips=diagnostics.flip_times(body, traj.t, traj.w),
    )
