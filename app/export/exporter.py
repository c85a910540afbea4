"""Animation export: re-simulate, render each frame off screen, encode, and publish atomically.

Call tree::

    export_animation(scenario, settings, progress, cancel)
      plan_export                  settle and check the numbers (settings.py)
      simulate_timeline            the run, sampled on the frame times (timeline.py)
      FrameMaker                   scene (render.py) [+ plot panel (plots.py)] -> RGB frames
      _encode_mp4 / _gif / _png    frames -> ffmpeg (encode.py), into a temporary file or
                                   folder beside the target, renamed over it only when complete

A cancel, an encoder failure (a full disk) or any exception removes the temporary output;
an existing file at the target is replaced only by a complete new one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from ..atomic import atomic_path
from .encode import (
    GIF_PALETTE_FRAMES,
    FfmpegPipe,
    gif_args,
    mp4_args,
    palette_args,
    png_args,
)
from .errors import EncodeError, ExportCancelled
from .settings import FORMATS, ExportPlan, ExportSettings, plan_export, sequence_digits, sequence_paths
from .timeline import Timeline, simulate_timeline


@dataclass(frozen=True)
class ExportResult:
    """What an export wrote: ``paths`` (one file, or every PNG of a sequence), frames, bytes,
    and the wall time it took (s), split into simulating and rendering + encoding."""

    paths: tuple
    plan: ExportPlan
    frames: int
    bytes: int
    seconds: float
    simulate_seconds: float

    @property
    def path(self) -> Path:
        """The output file (the first frame of a PNG sequence)."""
        return self.paths[0]

    @property
    def realtime_ratio(self) -> float:
        """Seconds of clip made per second of wall time (>= 1 is faster than real time)."""
        return self.plan.duration / self.seconds if self.seconds > 0 else float("inf")


class FrameMaker:
    """Whole frames of an export: the scene, with the plot panel beside it when asked.

    Thread: the thread that created it (it owns a VTK render window).
    """

    def __init__(self, scenario, plan: ExportPlan, timeline: Timeline):
        from .render import SceneRenderer

        self.plan = plan
        self.timeline = timeline
        ov = plan.overlay
        self.scene = SceneRenderer(scenario, plan.scene_size, title=plan.title, show_time=ov.time,
                                   show_flips=ov.flips, speed=plan.speed)
        self.plots = None
        try:
            if plan.with_plots:
                from .plots import PlotPanel

                self.plots = PlotPanel((plan.plot_width, plan.size[1]), timeline, plan.end)
        except BaseException:
            self.scene.close()
            raise

    def frame(self, i: int) -> np.ndarray:
        """Frame ``i`` as a new (height, width, 3) uint8 RGB array."""
        tl = self.timeline
        k = int(tl.frame_index[i])
        w, h = self.plan.size
        out = np.empty((h, w, 3), dtype=np.uint8)
        sw = self.plan.scene_size[0]
        self.scene.render(tl.c[k], tl.q[k], tl.w[k], tl.L[k], tl.trail(k), tl.t[k], tl.flip_count(k), out=out[:, :sw])
        if self.plots is not None:
            self.plots.render(k, out=out[:, sw:])
        return out

    def close(self) -> None:
        self.scene.close()


def export_animation(scenario, settings: ExportSettings | ExportPlan,
                     progress: Callable[[int, int], None] | None = None,
                     cancel: Callable[[], bool] | None = None) -> ExportResult:
    """Write the animation ``settings`` describe for ``scenario``.

    Parameters
    ----------
    scenario : :class:`~app.scenario.Scenario` (its solver's integrator and dt are used)
    settings : :class:`ExportSettings`, or an :class:`ExportPlan` from :func:`plan_export`
    progress : called as ``progress(frames_done, total)`` after each frame (and with 0 first)
    cancel : called between frames; returning True stops the export (:class:`ExportCancelled`)

    Raises
    ------
    ParameterError : a setting breaks a rule (nothing is started)
    DivergenceError : the simulation diverged
    ExportCancelled, EncodeError, OSError : nothing is left at the target

    Thread: all of one export on one thread (it renders with VTK), in a process that has
    no VTK window of its own on another thread: the command line, or the child process
    the window's export dialog starts.
    """
    plan = settings if isinstance(settings, ExportPlan) else plan_export(scenario, settings)
    if plan.format not in FORMATS.values():
        raise ValueError(f"export_animation writes {', '.join(FORMATS)}, not {plan.out.suffix} (see export_data)")
    t_begin = time.perf_counter()
    timeline = simulate_timeline(scenario, plan)
    t_sim = time.perf_counter() - t_begin
    if progress is not None:
        progress(0, plan.n_frames)
    maker = FrameMaker(scenario, plan, timeline)
    try:
        encode = {"mp4": _encode_mp4, "gif": _encode_gif, "png": _encode_png}[plan.format]
        paths = encode(plan, maker, progress, cancel)
    finally:
        maker.close()
    seconds = time.perf_counter() - t_begin
    size = sum(p.stat().st_size for p in paths)
    return ExportResult(paths=tuple(paths), plan=plan, frames=plan.n_frames, bytes=size, seconds=seconds,
                        simulate_seconds=t_sim)


def _pump(pipe: FfmpegPipe, maker: FrameMaker, indices, progress, cancel, total: int | None = None) -> None:
    """Render the frames ``indices`` into ``pipe``, checking ``cancel`` before each."""
    total = len(indices) if total is None else total
    try:
        for done, i in enumerate(indices, start=1):
            if cancel is not None and cancel():
                raise ExportCancelled("export cancelled")
            pipe.write(maker.frame(i))
            if progress is not None:
                progress(done, total)
        pipe.finish()
    except BaseException:
        pipe.abort()
        raise


def _encode_mp4(plan, maker, progress, cancel) -> list:
    with atomic_path(plan.out) as tmp:
        _pump(FfmpegPipe(plan.size, plan.fps, mp4_args(tmp)), maker, range(plan.n_frames), progress, cancel)
    return [plan.out]


def palette_sample(n_frames: int, count: int = GIF_PALETTE_FRAMES) -> list:
    """Frames a GIF's palette is computed from: ``count`` spread evenly, first and last included."""
    return sorted(set(np.linspace(0, n_frames - 1, min(count, n_frames)).round().astype(int).tolist()))


def _encode_gif(plan, maker, progress, cancel) -> list:
    with tempfile.TemporaryDirectory(prefix="tumble-gif-") as work, atomic_path(plan.out) as tmp:
        palette = Path(work) / "palette.png"
        _pump(FfmpegPipe(plan.size, plan.fps, palette_args(palette)), maker, palette_sample(plan.n_frames),
              None, cancel)
        _pump(FfmpegPipe(plan.size, plan.fps, gif_args(palette, tmp)), maker, range(plan.n_frames), progress, cancel)
    return [plan.out]


#: frame-number widths an older sequence of the same name may have used
_SEQUENCE_WIDTHS = range(4, 8)


def _older_frames(out: Path, n_frames: int) -> list:
    """The frames of an older sequence named like ``out`` that a new one of ``n_frames``
    does not overwrite: those numbered n_frames and up, and all of one numbered with
    another width.

    Only an unbroken run from frame 0 counts as a sequence this program wrote, so a
    user's ``NAME_2024.png`` beside ``NAME.png`` is never taken for one of its frames.
    """
    digits = sequence_digits(n_frames)
    older = []
    for width in _SEQUENCE_WIDTHS:
        index = 0
        while (frame := out.with_name(f"{out.stem}_{index:0{width}d}{out.suffix}")).is_file():
            if index >= n_frames or width != digits:
                older.append(frame)
            index += 1
    return older


@contextlib.contextmanager
def _atomic_sequence(out, n_frames: int):
    """Yield an ffmpeg pattern in a hidden temporary folder beside ``out``; on success move
    the frames onto their names and delete frames of an older, longer sequence of the same
    name; on failure delete the folder and leave the old sequence alone."""
    out = Path(out)
    folder = out.parent if str(out.parent) else Path(".")
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=folder))
    targets = sequence_paths(out, n_frames)
    digits = sequence_digits(n_frames)
    stale = _older_frames(out, n_frames)
    try:
        yield work / f"{out.stem}_%0{digits}d{out.suffix}"
        made = sorted(work.iterdir())
        if [p.name for p in made] != [p.name for p in targets]:
            raise EncodeError(f"ffmpeg wrote {len(made)} frames, expected {n_frames}")
        for src, dst in zip(made, targets):
            os.replace(src, dst)
        for old in stale:
            with contextlib.suppress(OSError):
                old.unlink()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _encode_png(plan, maker, progress, cancel) -> list:
    with _atomic_sequence(plan.out, plan.n_frames) as pattern:
        _pump(FfmpegPipe(plan.size, plan.fps, png_args(pattern)), maker, range(plan.n_frames), progress, cancel)
    return sequence_paths(plan.out, plan.n_frames)
