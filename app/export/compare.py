"""Export of the compare view (``tumble export --view compare``): both sides re-simulated
from their start, drawn off screen side by side with the window's own
:class:`~app.scene.compare.CompareScene`, with their energy and |L| drifts beside them.

Call tree::

    export_compare(pair, settings, progress, cancel)
      plan_export                 the same checks and frame plan as any export (settings.py)
      simulate_timeline x 2       each side with its own integrator and dt (timeline.py)
      CompareFrameMaker           CompareRenderer (scene) [+ DriftPanel (plots)] -> RGB frames
      _encode_mp4 / _gif / _png   the exporter's encoders and atomic publication (exporter.py)

Animations only: the trajectory tables (.csv, .npz) and the scenario (.toml) are the
main view's data exports, one side at a time. Thread: one, as for every export.
"""

from __future__ import annotations

import math
import time
from typing import Callable

import numpy as np

from ..physics.errors import ParameterError
from ..scene.style import BACKGROUND, GRID_COLOR, TEXT_COLOR
from ..simulation.compare import SIDES, side_label
from .exporter import ExportResult, _encode_gif, _encode_mp4, _encode_png
from .render import MARGIN_FRACTION, MIN_FONT, TEXT_FRACTION, TITLE_FRACTION, _gradient_layer, egl_without_display
from .settings import FORMATS, ExportPlan, ExportSettings, plan_export
from .timeline import TRAIL_SECONDS, Timeline, simulate_timeline

#: the drift panel: smallest |drift| drawn (log10 of magnitude; below a double's round-off)
LOG_FLOOR = 1e-17
#: points per curve at most, per pixel of panel width
POINTS_PER_PIXEL = 2
#: font height as a fraction of the panel height, and the curve width (pixels)
FONT_FRACTION = 0.017
LINE_WIDTH = 1.6
#: shortest stretch of simulated time the plots show (s)
MIN_SPAN = 2.0
DPI = 100


def trail_centres(tl: Timeline, k: int) -> np.ndarray:
    """Centres of mass of the last :data:`TRAIL_SECONDS` up to sample ``k``, thinned like
    :meth:`Timeline.trail` (the same samples as its orientations)."""
    lo = int(np.searchsorted(tl.t, tl.t[k] - TRAIL_SECONDS, side="left"))
    n = k + 1 - lo
    from ..scene.body_scene import TRAIL_POINTS

    stride = max(1, math.ceil(n / TRAIL_POINTS))
    return tl.c[k:lo - 1 if lo > 0 else None:-stride][::-1]


class CompareRenderer:
    """Off-screen frames of the two bodies side by side, with the time, flips and title.

    Thread: the thread that created it (it owns a VTK render window).
    """

    def __init__(self, pair, size, title=None, show_time=True, show_flips=True, speed=1.0):
        import pyvista as pv
        from vtkmodules.vtkCommonCore import vtkUnsignedCharArray

        from ..scene.compare import CompareScene

        self.width, self.height = (int(v) for v in size)
        with egl_without_display():
            self.plotter = pv.Plotter(off_screen=True, window_size=(self.width, self.height))
        self.window = self.plotter.render_window
        self.window.SetMultiSamples(0)
        self.scene = CompareScene(self.plotter, follow=True, trail=True)
        self._background = _gradient_layer(self.plotter)
        sc = pair[0]
        self.scene.set_bodies(sc.rigid_body, center=sc.initial_state.c, w0=sc.angular_velocity, q0=sc.initial_state.q,
                              labels=[f"{side}: {side_label(s, chr(10))}" for side, s in zip(SIDES, pair)])
        # the labels' size follows the frame, as the overlay text does
        self.scene.set_label_size(max(MIN_FONT, round(1.15 * TEXT_FRACTION * self.height)))
        self.speed = float(speed)
        self.show_time, self.show_flips = show_time, show_flips
        h = self.height
        font = max(MIN_FONT, round(TEXT_FRACTION * h))
        margin = max(4, round(MARGIN_FRACTION * h))
        self._status = None
        if show_time or show_flips:
            self._status = self.plotter.add_text("", position=(margin, margin), font_size=font, color=TEXT_COLOR,
                                                 name="export-status")
            self._status.GetTextProperty().SetFontSize(font)
        if title:
            actor = self.plotter.add_text(title, position=(self.width - margin, self.height - margin),
                                          font_size=font, color=TEXT_COLOR, name="export-title")
            prop = actor.GetTextProperty()
            prop.SetFontSize(max(MIN_FONT, round(TITLE_FRACTION * h)))
            prop.SetJustificationToRight()
            prop.SetVerticalJustificationToTop()
            prop.BoldOn()
        self._pixels = vtkUnsignedCharArray()
        self.window.Render()

    def status_text(self, t: float, flips) -> str:
        parts = []
        if self.show_time:
            parts.append(f"t = {t:.2f} s" + (f"  ({self.speed:g}x)" if self.speed != 1 else ""))
        if self.show_flips:
            parts.append("flips: " + " / ".join(f"{side} {n}" for side, n in zip(SIDES, flips)))
        return "     ".join(parts)

    def render(self, poses, t: float, flips, out: np.ndarray | None = None) -> np.ndarray:
        """Pose both bodies (``poses`` as :meth:`CompareScene.set_poses` takes them), draw,
        and return the frame as (height, width, 3) uint8 RGB (into ``out`` if given)."""
        from vtkmodules.util.numpy_support import vtk_to_numpy

        self.scene.set_poses(poses)
        if self._status is not None:
            self._status.SetInput(self.status_text(t, flips))
        self.window.Render()
        self.window.MakeCurrent()
        w, h = self.width, self.height
        self.window.GetPixelData(0, 0, w - 1, h - 1, 1, self._pixels, 0)
        rows = vtk_to_numpy(self._pixels).reshape(h, w, 3)
        if out is None:
            out = np.empty((h, w, 3), dtype=np.uint8)
        out[...] = rows[::-1]  # OpenGL's first row is the bottom one
        return out

    def close(self) -> None:
        if self.plotter is not None:
            if self._background is not None:
                self.window.RemoveRenderer(self._background)
                self._background = None
            self.scene.clear()
            self.plotter.close()
            self.plotter = None


class DriftPanel:
    """log10 of |relative energy drift| and |relative |L| drift| of both sides, stacked,
    the curves growing as the clip plays (matplotlib Agg, blitted like the main export's
    :class:`~app.export.plots.PlotPanel`). Thread: any, one at a time.

    The magnitudes are drawn on a log scale: the two sides differ by orders of magnitude
    (a first-order method's 1e-2 against round-off near 1e-15), which a linear axis hides.
    """

    def __init__(self, size, timelines, labels, t_end: float):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        from ..scene.compare import SIDE_COLORS

        self.width, self.height = (int(v) for v in size)
        tl = timelines[0]
        t = tl.t
        t0 = max(float(t[0]), min(float(t[tl.first]), t_end - MIN_SPAN))
        a = int(np.searchsorted(t, t0 - 1e-12))
        self._a, self._t = a, t
        t0 = float(t[a])
        span = max(t_end - t0, 1e-9)
        px = 1.0 / DPI
        fs = max(7.0, FONT_FRACTION * self.height * 72 / DPI)
        fig = Figure(figsize=(self.width * px, self.height * px), dpi=DPI, facecolor=BACKGROUND)
        self.canvas = FigureCanvasAgg(fig)
        axes = fig.subplots(2, 1, sharex=True)
        fig.subplots_adjust(left=0.2, right=0.96, top=0.9, bottom=0.1, hspace=0.3)
        self._lines = []
        for ax, (title, key) in zip(axes, (("log\u2081\u2080 |E \u2212 E\u2080| / |E\u2080|", "E_drift"),
                                           ("log\u2081\u2080 ||L| \u2212 |L\u2080|| / |L\u2080|", "L_norm_drift"))):
            curves = [np.log10(np.maximum(np.abs(getattr(side, key)), LOG_FLOOR)) for side in timelines]
            ax.set_facecolor(BACKGROUND)
            for spine in ax.spines.values():
                spine.set_color(GRID_COLOR)
            ax.tick_params(colors=TEXT_COLOR, labelsize=fs * 0.9, length=3)
            ax.grid(True, color=GRID_COLOR, linewidth=0.6, alpha=0.7)
            ax.set_title(title, color=TEXT_COLOR, fontsize=fs, loc="left", pad=3)
            lo = min(float(np.min(y[a:])) for y in curves)
            hi = max(float(np.max(y[a:])) for y in curves)
            pad = 0.08 * (hi - lo) if hi > lo else 1.0
            ax.set_ylim(lo - pad, hi + pad)
            ax.set_xlim(t0, t0 + span)
            ax.ticklabel_format(axis="x", useOffset=False)
            for y, color, label in zip(curves, SIDE_COLORS, labels):
                (line,) = ax.plot([], [], color=color, linewidth=LINE_WIDTH, label=label, animated=True)
                self._lines.append((ax, line, y))
        leg = fig.legend(*axes[0].get_legend_handles_labels(), loc="upper left", bbox_to_anchor=(0.2, 1.0),
                         fontsize=fs * 0.85, frameon=False, ncol=1, handlelength=1.2, borderaxespad=0.3)
        for text, color in zip(leg.get_texts(), SIDE_COLORS):
            text.set_color(color)
        axes[-1].set_xlabel("simulated time (s)", color=TEXT_COLOR, fontsize=fs)
        self.canvas.draw()
        self._background = self.canvas.copy_from_bbox(fig.bbox)
        n = len(t) - a
        self._stride = max(1, int(np.ceil(n / (POINTS_PER_PIXEL * self.width))))

    def render(self, k: int, out: np.ndarray | None = None) -> np.ndarray:
        """The panel with the curves up to sample ``k``, as (height, width, 3) uint8 RGB."""
        a, s = self._a, self._stride
        idx = np.arange(a, k + 1, s)
        if idx[-1] != k:
            idx = np.append(idx, k)
        self.canvas.restore_region(self._background)
        t = self._t[idx]
        for ax, line, y in self._lines:
            line.set_data(t, y[idx])
            ax.draw_artist(line)
        rgba = np.asarray(self.canvas.buffer_rgba())
        if out is None:
            out = np.empty((self.height, self.width, 3), dtype=np.uint8)
        out[...] = rgba[..., :3]
        return out


class CompareFrameMaker:
    """Whole frames of a compare export: the pair, with the drift panel beside it when asked.

    Thread: the thread that created it.
    """

    def __init__(self, pair, plan: ExportPlan, timelines):
        self.plan = plan
        self.timelines = timelines
        ov = plan.overlay
        self.scene = CompareRenderer(pair, plan.scene_size, title=plan.title, show_time=ov.time,
                                     show_flips=ov.flips, speed=plan.speed)
        self.plots = None
        try:
            if plan.with_plots:
                labels = [f"{side}: {side_label(s)}" for side, s in zip(SIDES, pair)]
                self.plots = DriftPanel((plan.plot_width, plan.size[1]), timelines, labels, plan.end)
        except BaseException:
            self.scene.close()
            raise

    def frame(self, i: int) -> np.ndarray:
        """Frame ``i`` as a new (height, width, 3) uint8 RGB array."""
        w, h = self.plan.size
        out = np.empty((h, w, 3), dtype=np.uint8)
        poses, flips = [], []
        for tl in self.timelines:
            k = int(tl.frame_index[i])
            poses.append((tl.c[k], tl.q[k], tl.w[k], tl.L[k], tl.trail(k), trail_centres(tl, k)))
            flips.append(tl.flip_count(k))
        k0 = int(self.timelines[0].frame_index[i])
        sw = self.plan.scene_size[0]
        self.scene.render(poses, float(self.timelines[0].t[k0]), flips, out=out[:, :sw])
        if self.plots is not None:
            self.plots.render(k0, out=out[:, sw:])
        return out

    def close(self) -> None:
        self.scene.close()


def export_compare(pair, settings: ExportSettings | ExportPlan,
                   progress: Callable[[int, int], None] | None = None,
                   cancel: Callable[[], bool] | None = None) -> ExportResult:
    """Write the animation of the compare view for ``pair`` (two scenarios from
    :func:`app.simulation.compare.make_pair`: the same run, two integrators and/or steps).

    Raises as :func:`app.export.exporter.export_animation` does; :class:`ParameterError`
    naming ``out`` for a data format.
    """
    a, b = pair
    plan = settings if isinstance(settings, ExportPlan) else plan_export(a, settings)
    if plan.format not in FORMATS.values():
        raise ParameterError("out", str(plan.out), "end in " + ", ".join(FORMATS) + " for --view compare "
                             "(the trajectory tables are exported one run at a time, from the main view)")
    t_begin = time.perf_counter()
    timelines = [simulate_timeline(sc, plan) for sc in (a, b)]
    t_sim = time.perf_counter() - t_begin
    if progress is not None:
        progress(0, plan.n_frames)
    maker = CompareFrameMaker(pair, plan, timelines)
    try:
        encode = {"mp4": _encode_mp4, "gif": _encode_gif, "png": _encode_png}[plan.format]
        paths = encode(plan, maker, progress, cancel)
    finally:
        maker.close()
    seconds = time.perf_counter() - t_begin
    size = sum(p.stat().st_size for p in paths)
    return ExportResult(paths=tuple(paths), plan=plan, frames=plan.n_frames, bytes=size, seconds=seconds,
                        simulate_seconds=t_sim)
