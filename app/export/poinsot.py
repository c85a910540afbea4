"""Export of the Poinsot view (``tumble export --view poinsot``): the run re-simulated from
its start, drawn off screen with the window's own scenes, Poinsot's construction
(:class:`~app.scene.poinsot.PoinsotScene`) beside the family of polhodes
(:class:`~app.scene.PolhodeScene` with ``family=True``), with the plots beside them
when asked.

Call tree::

    export_poinsot(scenario, settings, progress, cancel)
      plan_export                 the same checks and frame plan as any export (settings.py)
      simulate_timeline           the run, sampled on the frame times (timeline.py)
      PoinsotFrameMaker           PoinsotRenderer (two viewports of one off-screen plotter)
                                  [+ PlotPanel (plots.py)] -> RGB frames
      _encode_mp4 / _gif / _png   the exporter's encoders and atomic publication (exporter.py)

Animations only (the trajectory and scenario data exports do not depend on the view).
Thread: one, as for every export.
"""

from __future__ import annotations

import math
import time
from typing import Callable

import numpy as np

from ..physics.errors import ParameterError
from ..scene.style import TEXT_COLOR
from .exporter import ExportResult, _encode_gif, _encode_mp4, _encode_png
from .render import MARGIN_FRACTION, MIN_FONT, TEXT_FRACTION, TITLE_FRACTION, egl_without_display
from .settings import FORMATS, ExportPlan, ExportSettings, plan_export
from .timeline import Timeline, simulate_timeline

#: the construction takes this fraction of the scene's width; the polhode family the rest
CONSTRUCTION_FRACTION = 0.6
#: a narrow viewport is framed as if it were at least this wide (width / height): the
#: ellipsoid's outline may touch its sides rather than shrink to a third of it
NARROWEST_FIT = 0.6
#: the polhode family view shows omega's path over this much simulated time (s), as the
#: window's plots do by default
POLHODE_SECONDS = 10.0


def trace(tl: Timeline, k: int, seconds: float, points: int) -> tuple[np.ndarray, np.ndarray]:
    """Orientations and body-frame omegas of the last ``seconds`` up to sample ``k``,
    oldest first, thinned to at most ``points`` (the newest sample always kept)."""
    lo = int(np.searchsorted(tl.t, tl.t[k] - seconds, side="left"))
    stride = max(1, math.ceil((k + 1 - lo) / points))
    idx = np.arange(k, lo - 1, -stride)[::-1]
    return tl.q[idx], tl.w[idx]


def _fit_narrow(camera, aspect: float) -> None:
    """Move ``camera`` back so that a view framed for a square viewport fits one ``aspect``
    (width / height) wide: the horizontal field of view is the narrower one there."""
    if aspect >= 1.0:
        return
    focus = np.asarray(camera.focal_point)
    camera.position = tuple(focus + (np.asarray(camera.position) - focus) / max(aspect, NARROWEST_FIT))


class PoinsotRenderer:
    """Off-screen frames of the construction (left viewport) and the polhode family (right).

    Thread: the thread that created it (it owns a VTK render window).
    """

    def __init__(self, scenario, size, title=None, show_time=True, show_flips=True, speed=1.0):
        import pyvista as pv
        from vtkmodules.vtkCommonCore import vtkUnsignedCharArray

        from ..scene import PolhodeScene
        from ..scene.poinsot import PoinsotScene

        self.width, self.height = (int(v) for v in size)
        left = CONSTRUCTION_FRACTION
        with egl_without_display():
            self.plotter = pv.Plotter(off_screen=True, window_size=(self.width, self.height), shape=(1, 2),
                                      col_weights=[left, 1.0 - left], border=False)
        self.window = self.plotter.render_window
        self.window.SetMultiSamples(0)
        body, w0 = scenario.rigid_body, scenario.angular_velocity
        self.plotter.subplot(0, 1)
        self.polhode = PolhodeScene(self.plotter, family=True)
        self.polhode.set_body(body, w0)
        _fit_narrow(self.plotter.camera, (1.0 - left) * self.width / self.height)
        # the panel's title sized to the frame: as large as the overlay text, or as fits across
        # the viewport (a glyph is about 0.55 of the font size wide)
        self.polhode.set_label_visible(False)
        margin = max(4, round(MARGIN_FRACTION * self.height))
        fits = int(((1.0 - left) * self.width - 2 * margin) / (0.55 * len(self.polhode.title)))
        size = max(MIN_FONT, min(round(0.8 * TEXT_FRACTION * self.height), fits))
        label = self.plotter.add_text(self.polhode.title, position=(margin, self.height - margin), font_size=size,
                                      color=TEXT_COLOR, name="polhode-title")
        label.GetTextProperty().SetFontSize(size)
        label.GetTextProperty().SetVerticalJustificationToTop()
        self.plotter.subplot(0, 0)  # the construction's renderer stays the active one
        self.scene = PoinsotScene(self.plotter, trail=True, legend=True)
        self.scene.set_body(body, w0=w0)
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
            self.plotter.subplot(0, 1)
            right_width = self.width - round(left * self.width)
            actor = self.plotter.add_text(title, position=(right_width - margin, margin), font_size=font,
                                          color=TEXT_COLOR, name="export-title")
            prop = actor.GetTextProperty()
            prop.SetFontSize(max(MIN_FONT, round(TITLE_FRACTION * h)))
            prop.SetJustificationToRight()
            prop.BoldOn()
            self.plotter.subplot(0, 0)
        self._pixels = vtkUnsignedCharArray()

    def status_text(self, t: float, flips: int) -> str:
        parts = []
        if self.show_time:
            parts.append(f"t = {t:.2f} s" + (f"  ({self.speed:g}x)" if self.speed != 1 else ""))
        if self.show_flips:
            parts.append(f"flips: {flips}")
        return "     ".join(parts)

    def render(self, tl: Timeline, k: int, out: np.ndarray | None = None) -> np.ndarray:
        """Pose both views for sample ``k`` of ``tl``, draw, and return the frame as
        (height, width, 3) uint8 RGB (into ``out`` if given)."""
        from vtkmodules.util.numpy_support import vtk_to_numpy

        from ..scene.poinsot import TRACE_POINTS, TRACE_SECONDS

        trail_q, trail_w = trace(tl, k, TRACE_SECONDS, TRACE_POINTS)
        self.scene.set_pose(tl.c[k], tl.q[k], tl.w[k], tl.L[k], trail_q=trail_q, trail_w=trail_w)
        _, recent_w = trace(tl, k, POLHODE_SECONDS, TRACE_POINTS)
        self.polhode.set_omega(tl.w[k], recent_w)
        if self._status is not None:
            self._status.SetInput(self.status_text(float(tl.t[k]), tl.flip_count(k)))
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
        """Release the render window and its GL context."""
        if self.plotter is not None:
            self.scene.clear()
            self.plotter.close()
            self.plotter = None


class PoinsotFrameMaker:
    """Whole frames of a Poinsot export: the two views, with the plot panel beside them
    when asked. Thread: the thread that created it."""

    def __init__(self, scenario, plan: ExportPlan, timeline: Timeline):
        self.plan = plan
        self.timeline = timeline
        ov = plan.overlay
        self.scene = PoinsotRenderer(scenario, plan.scene_size, title=plan.title, show_time=ov.time,
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
        k = int(self.timeline.frame_index[i])
        w, h = self.plan.size
        out = np.empty((h, w, 3), dtype=np.uint8)
        sw = self.plan.scene_size[0]
        self.scene.render(self.timeline, k, out=out[:, :sw])
        if self.plots is not None:
            self.plots.render(k, out=out[:, sw:])
        return out

    def close(self) -> None:
        self.scene.close()


def export_poinsot(scenario, settings: ExportSettings | ExportPlan,
                   progress: Callable[[int, int], None] | None = None,
                   cancel: Callable[[], bool] | None = None) -> ExportResult:
    """Write the animation of the Poinsot view for ``scenario``.

    Raises as :func:`app.export.exporter.export_animation` does; :class:`ParameterError`
    naming ``out`` for a data format.
    """
    plan = settings if isinstance(settings, ExportPlan) else plan_export(scenario, settings)
    if plan.format not in FORMATS.values():
        raise ParameterError("out", str(plan.out), "end in " + ", ".join(FORMATS) + " for --view poinsot "
                             "(the trajectory and scenario data do not depend on the view)")
    t_begin = time.perf_counter()
    timeline = simulate_timeline(scenario, plan)
    t_sim = time.perf_counter() - t_begin
    if progress is not None:
        progress(0, plan.n_frames)
    maker = PoinsotFrameMaker(scenario, plan, timeline)
    try:
        encode = {"mp4": _encode_mp4, "gif": _encode_gif, "png": _encode_png}[plan.format]
        paths = encode(plan, maker, progress, cancel)
    finally:
        maker.close()
    seconds = time.perf_counter() - t_begin
    size = sum(p.stat().st_size for p in paths)
    return ExportResult(paths=tuple(paths), plan=plan, frames=plan.n_frames, bytes=size, seconds=seconds,
                        simulate_seconds=t_sim)
