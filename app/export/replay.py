"""A replayed flight as the export and the window draw it: its runs sampled as timelines, its scenario, and its clip.

Call tree::

    export_replay(replay, out, ...)          tumble replay --out FILE.mp4|.gif
      replay_scenario                        the object drawn, the flight's length (the plan's run)
      plan_export                            the clip's numbers (settings.py)
      export(spec, ..., sample_runs=...)     the one export loop (exporter.py), posed by
        replay_timelines                     ReplayView.pose from these timelines
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..physics import quaternion as quat
from ..throws.fitting.replay import DEFAULT_SPEED
from .settings import ExportSettings, Overlay
from .timeline import Timeline

#: the window's timelines hold a sample at least this often (s of flight): poses between
#: samples are linear, 1e-4 rad off at 30 rad/s
WINDOW_SAMPLE_S = 1.0 / 500.0


def replay_title(replay) -> str:
    """``Replay of NAME, flight 2 at 12.35 s``."""
    name = Path(str(replay.recording).rstrip("/")).name or str(replay.recording)
    number = f"flight {replay.number} " if replay.number is not None else "flight "
    return f"Replay of {name}, {number}at {replay.start:.2f} s"


def replay_scenario(replay):
    """The scenario the view and the export plan read: the object drawn (``replay.shape``)
    spinning at the flight's first rate from the identity, for the flight's length, no gravity."""
    from ..scenario import Scenario
    from ..scenario.schema import BodySpec, SolverSpec

    body = replay.shape
    if body.shape in ("box", "ellipsoid", "cylinder", "t-handle"):
        spec = BodySpec(shape=body.shape, mass=float(body.mass), size=tuple(float(x) for x in body.size))
    else:  # custom or mesh: its inertia, drawn as the box of the same moments
        j = np.asarray(body.inertia, dtype=float)
        spec = BodySpec(shape="custom", mass=float(body.mass), size=None, allow_unphysical=True,
                        inertia=(j[0, 0], j[1, 1], j[2, 2], j[1, 2], j[0, 2], j[0, 1]))
    duration = max(replay.duration, 1e-3)
    return Scenario(name=replay_title(replay), body=spec, angular_velocity=tuple(float(x) for x in replay.w[0]),
                    solver=SolverSpec(integrator="rk4", dt=min(1e-3, duration), duration=duration))


def replay_timelines(replay, frame_times, inertia=None) -> list:
    """[measured, model] (model only with one) as timelines: every measured stamp and every
    time of ``frame_times`` (s since the flight's first sample; frame ``i`` is
    ``frame_index[i]``); ``L = R(q) J w`` with ``inertia`` (sensor frame; default the model's,
    none without one), the flips of the drawn body's rates."""
    from ..physics import diagnostics

    t0 = replay.start
    frames = np.clip(np.asarray(frame_times, dtype=float), 0.0, replay.duration)
    rel = replay.t - t0
    times = np.unique(np.concatenate((rel, frames)))
    frame_index = np.searchsorted(times, frames)
    if inertia is None and replay.model is not None:
        inertia = replay.model.inertia
    runs = [replay.measured_at(times + t0)]
    model = replay.model_at(times + t0)
    if model is not None:
        runs.append(model)
    out = []
    zeros = np.zeros((len(times), 3))
    for q, w in runs:
        L = zeros if inertia is None else quat.rotate(q, w @ np.asarray(inertia, dtype=float).T)
        out.append(Timeline(t=times, c=zeros, v=zeros, q=q, w=w, L=L, E_drift=np.zeros(len(times)),
                            L_norm_drift=np.zeros(len(times)), frame_index=frame_index,
                            flips=diagnostics.flip_times(replay.shape, times, w)))
    return out


def window_timelines(replay) -> list:
    """The timelines the window poses from: :func:`replay_timelines` with a sample every
    :data:`WINDOW_SAMPLE_S` at least."""
    n = max(2, int(np.ceil(replay.duration / WINDOW_SAMPLE_S)) + 1)
    return replay_timelines(replay, np.linspace(0.0, replay.duration, n))


def export_replay(replay, out, *, speed: float = DEFAULT_SPEED, fps=None, size=None, with_plots: bool = True,
                  progress=None, cancel=None):
    """Write the clip of ``replay`` (a :class:`~app.throws.fitting.replay.FlightReplay`) to
    ``out`` (.mp4, .gif or .png frames): the whole flight at ``speed``, the plots beside it.
    Returns the :class:`~app.export.exporter.ExportResult`; errors as :func:`~app.export.exporter.export`'s."""
    from ..views.replay import spec as replay_spec
    from .exporter import export
    from .settings import plan_export

    scenario = replay_scenario(replay)
    overlay = Overlay(time=True, flips=True, title=replay_title(replay), legend=True, ghost=False)
    try:  # the whole flight, however slow (an export's default stops at 10 s of video: 0.10 s at speed 0.01)
        whole = float(scenario.solver.duration) / float(speed) if float(speed) > 0 else None
    except (TypeError, ValueError, OverflowError):
        whole = None  # plan_export names the bad speed
    plan = plan_export(scenario, ExportSettings(out=Path(out), fps=fps, speed=speed, size=size, duration=whole,
                                                with_plots=with_plots, overlay=overlay))
    model = replay.model is not None
    return export(replay_spec(model), (scenario,), plan, progress, cancel, options={"model": model},
                  sample_runs=lambda p: replay_timelines(replay, p.frame_times))
