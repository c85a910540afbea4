"""Off-screen frames of the 3D scene: the window's :class:`~app.scene.RigidBodyScene`, plus text.

One ``pv.Plotter(off_screen=True)`` per export, owned by the thread that made it (the
export runs in its own process when started from the window, so VTK never leaves the
thread that created it). Multisampling is off: in software GL it costs more than the rest
of the frame (see MEASURED.md). Pixels are read straight from the render window into a
reused buffer, which is several times cheaper than ``Plotter.screenshot``.
"""

from __future__ import annotations

import contextlib
import os

import numpy as np

from ..scene import RigidBodyScene
from ..scene.style import TEXT_COLOR, use_font_file

#: overlay text height as a fraction of the frame height (pixels of font per pixel of frame)
TEXT_FRACTION = 0.028
TITLE_FRACTION = 0.036
#: smallest font (pixels), so that small GIFs stay readable
MIN_FONT = 9
#: environment variable VTK reads to choose its render window class
WINDOW_CLASS_VARIABLE = "VTK_DEFAULT_OPENGL_WINDOW"
#: the colour key is drawn only in a scene at least this wide (px): narrower, it is unreadable
LEGEND_MIN_WIDTH = 720
#: margin of the overlay text from the frame's edges, as a fraction of the frame height
MARGIN_FRACTION = 0.02


@contextlib.contextmanager
def egl_without_display():
    """With no X display, ask VTK for its EGL render window directly (within the block).

    Without this VTK first tries X, prints a warning about the bad X connection, then
    falls back to EGL; the result is the same, the warning is noise on the terminal. The
    setting is undone afterwards, so windows made later in the process are not affected.
    """
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY") or WINDOW_CLASS_VARIABLE in os.environ:
        yield
        return
    os.environ[WINDOW_CLASS_VARIABLE] = "vtkEGLRenderWindow"
    try:
        yield
    finally:
        os.environ.pop(WINDOW_CLASS_VARIABLE, None)


def _gradient_layer(plotter):
    """Draw the scene's background gradient as a quad with vertex colours behind the scene.

    Same pixels as VTK's gradient background with its noise dithering off, for about a
    fifth of the frame's render time less in software GL: VTK's gradient runs a costlier
    shader on every pixel. (The dithering noise is also dropped on purpose: the encoder
    would spend bits on it, a GIF especially, and nobody sees it after compression.)
    Returns the background renderer (layer 0; the scene's renderer moves to layer 1), or
    None when the scene's background is flat (nothing to do).
    """
    from vtkmodules.vtkCommonCore import vtkPoints, vtkUnsignedCharArray
    from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPolyData
    from vtkmodules.vtkRenderingCore import vtkActor2D, vtkCoordinate, vtkPolyDataMapper2D, vtkRenderer

    renderer = plotter.renderer
    if not renderer.GetGradientBackground() or renderer.GetGradientMode() != renderer.GradientModes.VTK_GRADIENT_VERTICAL:
        return None
    bottom = [round(255 * c) for c in renderer.GetBackground()]
    top = [round(255 * c) for c in renderer.GetBackground2()]
    points = vtkPoints()
    for x, y in ((0, 0), (1, 0), (1, 1), (0, 1)):
        points.InsertNextPoint(x, y, 0)
    quad = vtkCellArray()
    quad.InsertNextCell(4)
    for i in range(4):
        quad.InsertCellPoint(i)
    colors = vtkUnsignedCharArray()
    colors.SetNumberOfComponents(3)
    for rgb in (bottom, bottom, top, top):
        colors.InsertNextTuple3(*rgb)
    poly = vtkPolyData()
    poly.SetPoints(points)
    poly.SetPolys(quad)
    poly.GetPointData().SetScalars(colors)
    coordinate = vtkCoordinate()
    coordinate.SetCoordinateSystemToNormalizedViewport()
    mapper = vtkPolyDataMapper2D()
    mapper.SetInputData(poly)
    mapper.SetTransformCoordinate(coordinate)
    actor = vtkActor2D()
    actor.SetMapper(mapper)
    background = vtkRenderer()
    background.SetLayer(0)
    background.InteractiveOff()
    background.AddViewProp(actor)
    window = plotter.render_window
    window.SetNumberOfLayers(2)
    renderer.SetLayer(1)
    renderer.GradientBackgroundOff()
    window.AddRenderer(background)
    return background


class SceneRenderer:
    """Draws frames of one scenario off screen. Thread: the thread that created it.

    Parameters
    ----------
    scenario : the :class:`~app.scenario.Scenario` (its body and start)
    size : (width, height) in pixels
    title : text at the top, or None
    show_time, show_flips : draw the simulated time / the flip count at the bottom left
    speed : playback speed, shown beside the time when it is not 1
    """

    def __init__(self, scenario, size, title=None, show_time=True, show_flips=True, speed=1.0):
        import pyvista as pv
        from vtkmodules.vtkCommonCore import vtkUnsignedCharArray

        self.width, self.height = (int(v) for v in size)
        with egl_without_display():
            self.plotter = pv.Plotter(off_screen=True, window_size=(self.width, self.height))
        self.window = self.plotter.render_window
        self.window.SetMultiSamples(0)
        self.scene = RigidBodyScene(self.plotter, follow=True, trail=True,
                                    legend=self.width >= LEGEND_MIN_WIDTH)
        self._background = _gradient_layer(self.plotter)
        self.scene.set_body(scenario.rigid_body, center=scenario.initial_state.c, w0=scenario.angular_velocity,
                            q0=scenario.initial_state.q)
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
            use_font_file(self._status.GetTextProperty())
        if title:
            actor = self.plotter.add_text(title, position=(self.width - margin, self.height - margin),
                                          font_size=font, color=TEXT_COLOR, name="export-title")
            prop = actor.GetTextProperty()
            prop.SetFontSize(max(MIN_FONT, round(TITLE_FRACTION * h)))
            use_font_file(prop)
            prop.SetJustificationToRight()
            prop.SetVerticalJustificationToTop()
            prop.BoldOn()
        self._pixels = vtkUnsignedCharArray()
        self.window.Render()

    def status_text(self, t: float, flips: int) -> str:
        parts = []
        if self.show_time:
            parts.append(f"t = {t:.2f} s" + (f"  ({self.speed:g}x)" if self.speed != 1 else ""))
        if self.show_flips:
            parts.append(f"flips: {flips}")
        return "     ".join(parts)

    def render(self, c, q, w_body, L_world, trail_q, t: float, flips: int, out: np.ndarray | None = None) -> np.ndarray:
        """Pose the scene, draw it, and return the frame as (height, width, 3) uint8 RGB.

        ``out`` (a (height, width, 3) uint8 view, e.g. the left part of a larger frame)
        receives the pixels instead of a new array.
        """
        from vtkmodules.util.numpy_support import vtk_to_numpy

        self.scene.set_pose(c, q, w_body, L_world, trail_q)
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
        """Release the render window and its GL context."""
        if self.plotter is not None:
            if self._background is not None:
                self.window.RemoveRenderer(self._background)
                self._background = None
            self.scene.clear()
            self.plotter.close()
            self.plotter = None
