"""Animation export of any view: re-simulate, render each frame off screen, encode, and publish atomically.

Call tree::

    export(view, scenarios, plan, progress, cancel)      any registered view (app.views)
      plan_export                  settle and check the numbers (settings.py)
      simulate_timeline            each run, sampled on the frame times (timeline.py)
      FrameComposer                the view's panes on one canvas (canvas.py), its 2D panes,
                                   [+ plot panel (panels.py)] -> RGB frames; the view posed
                                   by the same ViewScene.pose the window calls
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
from .timeline import simulate_timeline


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


#: a colour key at the top whose right edge passes this share of its pane's width gets the
#: band it covers kept clear of the body (:meth:`FrameComposer._clear_the_key`): the scene
#: beside the plots (800 px of 1280) had its key (0.45 of it) over the omega arrow
KEY_CLEAR_SHARE = 0.4


class FrameComposer:
    """Whole frames of any view: its 3D panes on the canvas, its 2D pictures beside them,
    the plot panel at the right when asked. Thread: the thread that created it.

    Frame layout (left to right): ``[3D panes | 2D panes | plots]``; the panes share the
    scene's width (:attr:`ExportPlan.scene_size`) as their :class:`~app.views.PaneSpec` say.
    """

    def __init__(self, spec, scenarios, plan: ExportPlan, timelines, options=None):
        from .canvas import Canvas, text_px

        self.plan = plan
        self.timelines = timelines
        w, h = plan.size
        panes = sorted(spec.exported_panes, key=lambda p: p.kind != "3d")
        scene_w = plan.scene_size[0]
        total = sum(p.share for p in panes)
        edges = [2 * round(scene_w * x / total / 2) for x in np.cumsum([0.0, *(p.share for p in panes)])]
        edges[-1] = scene_w
        three = [p for p in panes if p.kind == "3d"]
        self.canvas_width = edges[len(three)]
        ov = plan.overlay
        self.canvas = Canvas((self.canvas_width, h), [p.share for p in three])
        self.pictures, self.plots = [], None
        try:
            plotters = {p.name: pane for p, pane in zip(three, self.canvas.panes)}
            self.view = spec.build(plotters, scenarios, options, text_px(h))
            if ov.ghost:
                self.view.set_ghost_visible(True)
            rows = tuple(self.view.legend_rows)
            if ov.ghost:
                from ..views.main import ghost_row

                rows += ghost_row()
            self.canvas.finish(plan.title, status=ov.time or ov.flips,
                               legend_rows=rows if ov.legend else (),
                               title_corner=spec.title_corner, legend_corner=spec.legend_corner)
            self._clear_the_key(spec, three)
            for k, pane in enumerate(panes[len(three):], start=len(three)):
                size = (edges[k + 1] - edges[k], h)
                self.pictures.append((edges[k], edges[k + 1], self.view.picture(pane.name, size)))
            if plan.with_plots:
                from .panels import plot_panel

                self.plots = plot_panel(spec, (plan.plot_width, h), scenarios, timelines, plan.end)
        except BaseException:
            self.close()
            raise

    def _clear_the_key(self, spec, three) -> None:
        """A colour key at the top reaching past the middle of the first pane (the stability
        view's half-width pane) would be crossed by an arrow pointing up: that pane's body is
        framed below the key."""
        scene = self.view.scenes.get(three[0].name) if three else None
        width = self.canvas.panes[0].window_size[0] if three else 0
        if hasattr(scene, "keep_key_clear"):  # a grid of bodies (the engines view) stands clear of the key
            if spec.legend_corner == "top" and self.canvas.legend_right:
                scene.keep_key_clear(self.canvas.legend_right, self.canvas.legend_reach)
            return
        if spec.legend_corner == "top" and hasattr(scene, "keep_top_clear") \
                and self.canvas.legend_right > KEY_CLEAR_SHARE * width:
            scene.keep_top_clear(self.canvas.legend_reach / self.plan.size[1])

    def status_text(self, t: float, flips) -> str:
        """``t = 1.23 s  (2x)     flips: 3`` (a pair: ``flips: A 3 / B 2``)."""
        from ..simulation.compare import SIDES

        ov, parts = self.plan.overlay, []
        if ov.time:
            speed = self.plan.speed
            parts.append(f"t = {t:.2f} s" + (f"  ({speed:g}x)" if speed != 1 else ""))
            slow = self.plan.time_map
            if slow is not None and slow.slowed(t):  # slow motion around a flip
                parts[-1] += f"  slow motion {slow.factor:g}x"
        if ov.flips:
            one = len(flips) == 1 or len(self.view.scenarios) == 1  # a replay's model run has no count of its own
            parts.append("flips: " + (str(flips[0]) if one else
                                      " / ".join(f"{side} {n}" for side, n in zip(SIDES, flips))))
        return "     ".join(parts)

    def frame(self, i: int) -> np.ndarray:
        """Frame ``i`` as a new (height, width, 3) uint8 RGB array."""
        w, h = self.plan.size
        out = np.empty((h, w, 3), dtype=np.uint8)
        tl = self.timelines[0]
        k = int(tl.frame_index[i])
        t = float(tl.t[k])
        self.view.pose(self.timelines, t)
        self.canvas.set_status(self.status_text(t, [x.flip_count(int(x.frame_index[i])) for x in self.timelines]))
        self.canvas.render(out[:, :self.canvas_width])
        for x0, x1, picture in self.pictures:
            picture.render(out=out[:, x0:x1])
        if self.plots is not None:
            self.plots.render(i, out=out[:, self.plan.scene_size[0]:])
        return out

    def close(self) -> None:
        if getattr(self, "view", None) is not None:
            self.view.clear()
            self.view = None
        self.canvas.close()


def check_ghost(scenarios) -> None:
    """:class:`ParameterError` naming ``overlay`` when the exact ghost does not apply to a run."""
    from ..physics.errors import ParameterError
    from ..physics.reference import exact_unavailable_reason

    for sc in scenarios:
        reason = exact_unavailable_reason(sc.model)
        if reason is not None:
            raise ParameterError("overlay", "ghost", f"not include ghost for this scenario: it has {reason}")


def export(view, scenarios, settings: ExportSettings | ExportPlan,
           progress: Callable[[int, int], None] | None = None,
           cancel: Callable[[], bool] | None = None, options=None, sample_runs=None) -> ExportResult:
    """Write the animation of ``view`` (a name or :class:`~app.views.ViewSpec`) for the runs
    ``scenarios`` (``view.runs(scenario, options)``; one for most views, the pair for compare).

    Parameters
    ----------
    settings : :class:`ExportSettings`, or an :class:`ExportPlan` from :func:`plan_export`
        (planned against the first run)
    progress : called as ``progress(frames_done, total)`` after each frame (and with 0 first)
    cancel : called between frames; returning True stops the export (:class:`ExportCancelled`)
    options : the view's own options (``integrators``, ``directions``, ...)
    sample_runs : called as ``sample_runs(plan)``, the runs as already sampled on the plan's frame
        times (a replayed flight's, :mod:`app.export.replay`) instead of simulating ``scenarios``

    Raises
    ------
    ParameterError : a setting breaks a rule (nothing is started)
    DivergenceError : the simulation diverged
    ExportCancelled, EncodeError, OSError : nothing is left at the target

    Thread: all of one export on one thread (it renders with VTK), in a process that has
    no VTK window of its own on another thread: the command line, or the child process
    the window's export dialog starts.
    """
    from ..physics.errors import ParameterError
    from ..views import get_view

    spec = get_view(view) if isinstance(view, str) else view
    scenarios = tuple(scenarios)
    plan = settings if isinstance(settings, ExportPlan) else plan_export(scenarios[0], settings)
    if plan.format not in FORMATS.values():
        raise ParameterError("out", str(plan.out), "end in " + ", ".join(FORMATS) + f" for --view {spec.name} "
                             "(the trajectory and scenario data are the main view's)")
    if plan.overlay.ghost:
        check_ghost(scenarios)
    spec.check(scenarios, options)  # what the view would refuse once built, before anything is drawn
    t_begin = time.perf_counter()
    timelines = [simulate_timeline(sc, plan) for sc in scenarios] if sample_runs is None else list(sample_runs(plan))
    t_sim = time.perf_counter() - t_begin
    if progress is not None:
        progress(0, plan.n_frames)
    composer = FrameComposer(spec, scenarios, plan, timelines, options)
    try:
        encode = {"mp4": _encode_mp4, "gif": _encode_gif, "png": _encode_png}[plan.format]
        paths = encode(plan, composer, progress, cancel)
    finally:
        composer.close()
    seconds = time.perf_counter() - t_begin
    size = sum(p.stat().st_size for p in paths)
    return ExportResult(paths=tuple(paths), plan=plan, frames=plan.n_frames, bytes=size, seconds=seconds,
                        simulate_seconds=t_sim)


def export_animation(scenario, settings: ExportSettings | ExportPlan,
                     progress: Callable[[int, int], None] | None = None,
                     cancel: Callable[[], bool] | None = None) -> ExportResult:
    """Write the main view's animation of ``scenario`` (its solver's integrator and dt are
    used); see :func:`export`. A data format is a ValueError here (see export_data)."""
    plan = settings if isinstance(settings, ExportPlan) else plan_export(scenario, settings)
    if plan.format not in FORMATS.values():
        raise ValueError(f"export_animation writes {', '.join(FORMATS)}, not {plan.out.suffix} (see export_data)")
    return export("main", (scenario,), plan, progress, cancel)


def _pump(pipe: FfmpegPipe, maker: FrameComposer, indices, progress, cancel, total: int | None = None) -> None:
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
