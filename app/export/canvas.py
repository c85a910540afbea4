"""The export's one off-screen canvas: every 3D pane of a view in one render window, the overlays (time, flips, title, colour key) in the font file, pixels read into a reused buffer."""

from __future__ import annotations

import contextlib
import math
import os

import numpy as np

from ..scene.style import BACKGROUND, TEXT_COLOR, tone, use_font_file

#: overlay text height as a fraction of the frame height (pixels of font per pixel of frame)
TEXT_FRACTION = 0.028
TITLE_FRACTION = 0.036
#: the colour key's rows, as a fraction of the overlay text height, and their smallest size (px):
#: a GIF's 640x360 frame still reads them
LEGEND_SCALE = 0.85
MIN_LEGEND_FONT = 15
#: smallest font (pixels), so that small GIFs stay readable
MIN_FONT = 14
#: margin of the overlay text from the frame's edges, as a fraction of the frame height
MARGIN_FRACTION = 0.02
#: most lines a long title wraps onto (the last one ends in an ellipsis if it is still too long)
TITLE_LINES = 2
#: narrowest room beside the colour key a title takes, as a share of its pane's width; with
#: less it goes under the key, across the pane
MIN_TITLE_ROOM = 0.3
#: the widest status line (time and flips) a title keeps clear of at the bottom
STATUS_SAMPLE = "t = 000.00 s     flips: 00"
#: environment variable VTK reads to choose its render window class
WINDOW_CLASS_VARIABLE = "VTK_DEFAULT_OPENGL_WINDOW"
#: the colour key's swatch, and the opacity of the band behind its rows
SWATCH = "\u25a0"
LEGEND_BACKING = 0.6


def wrap_text(text: str, room: float, width, lines: int) -> str:
    """``text`` broken at spaces onto at most ``lines`` lines, each at most ``room`` wide as
    ``width(line)`` measures it; a word wider than the room, or what is left past the last
    line, is cut with an ellipsis."""
    words, out = text.split(), []
    while words and len(out) < lines:
        line = words.pop(0)
        while words and width(f"{line} {words[0]}") <= room:
            line = f"{line} {words.pop(0)}"
        taken = line.split()
        comma = max((i for i, w in enumerate(taken[:-1]) if w.endswith(",")), default=None)
        if words and len(out) < lines - 1 and comma is not None:
            # broken anyway: after its last comma ("Replay of phone-throws, / flight 1 at 0.96 s",
            # not "..., flight / 1 at 0.96 s")
            line, words = " ".join(taken[:comma + 1]), taken[comma + 1:] + words
        if words and len(out) == lines - 1 or width(line) > room:  # the last line: end it visibly
            line = line if not words else line + " …"
            while width(line) > room and len(line) > 1:
                line = line[:-2].rstrip() + "…"
            words = []
        out.append(line)
    return "\n".join(out)


def text_px(height: int) -> int:
    """The overlay text's height (px) in a frame ``height`` pixels high."""
    return max(MIN_FONT, round(TEXT_FRACTION * height))


def legend_size(height: int) -> int:
    """The colour key's text height (px) in a frame ``height`` pixels high."""
    return max(MIN_LEGEND_FONT, round(LEGEND_SCALE * text_px(height)))


def vtk_text(text: str) -> str:
    """``text`` as VTK should be given it: a "|" starts a table cell in VTK's text (since
    9.3), so "2T/|L|" lost its bars; U+2223 (divides) looks the same and is drawn as is."""
    return text.replace("|", "\u2223")


def _x_display_usable() -> bool:
    """Whether VTK's X render window can be used: ``DISPLAY`` set, and on Linux, its X server
    answering (asked again for a moment, :func:`app.display.answers`)."""
    if not os.environ.get("DISPLAY"):
        return False
    from ..display import answers, uses_x11

    return not uses_x11() or answers()


@contextlib.contextmanager
def egl_without_display():
    """With no X display, or one whose server does not answer, ask VTK for its EGL render window
    directly (within the block).

    Without this VTK first tries X, prints a warning about the bad X connection, then
    falls back to EGL; the result is the same, the warning is noise on the terminal (and a
    second line where an export promises one: a busy X server refused a connection now and
    then). The setting is undone afterwards, so windows made later in the process are not affected.
    """
    if os.environ.get("WAYLAND_DISPLAY") or WINDOW_CLASS_VARIABLE in os.environ or _x_display_usable():
        yield
        return
    os.environ[WINDOW_CLASS_VARIABLE] = "vtkEGLRenderWindow"
    try:
        yield
    finally:
        os.environ.pop(WINDOW_CLASS_VARIABLE, None)


class PanePlotter:
    """One pane of the canvas with the plotter's API: every call goes to the pane's renderer
    (``subplot`` first), and ``window_size`` is the pane's, so a scene frames itself for it."""

    def __init__(self, plotter, index: int, size):
        self.__dict__.update(_plotter=plotter, _index=index, window_size=tuple(size))

    def __getattr__(self, name):
        plotter = self.__dict__["_plotter"]
        if len(plotter.renderers) > 1:
            plotter.subplot(0, self.__dict__["_index"])
        return getattr(plotter, name)


def _gradient_layer(renderers, window):
    """Draw each renderer's background gradient as one quad with vertex colours behind it.

    Same pixels as VTK's gradient background with its noise dithering off, for about a
    fifth of the frame's render time less in software GL: VTK's gradient runs a costlier
    shader on every pixel. (The dithering noise is also dropped on purpose: the encoder
    would spend bits on it, a GIF especially, and nobody sees it after compression.)
    Returns the background renderers (layer 0; the scenes' move to layer 1); none when
    every background is flat (nothing to do).
    """
    from vtkmodules.vtkCommonCore import vtkPoints, vtkUnsignedCharArray
    from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPolyData
    from vtkmodules.vtkRenderingCore import vtkActor2D, vtkCoordinate, vtkPolyDataMapper2D, vtkRenderer

    made = []
    for renderer in renderers:
        if not renderer.GetGradientBackground() or \
                renderer.GetGradientMode() != renderer.GradientModes.VTK_GRADIENT_VERTICAL:
            continue
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
        background.SetViewport(renderer.GetViewport())
        background.InteractiveOff()
        background.AddViewProp(actor)
        renderer.SetLayer(1)
        renderer.GradientBackgroundOff()
        window.AddRenderer(background)
        made.append(background)
    return made


class Canvas:
    """The 3D panes of a view side by side (``shares`` of the width), and the overlays.

    One ``pv.Plotter(off_screen=True)`` per export, owned by the thread that made it (the
    export runs in its own process when started from the window, so VTK never leaves the
    thread that created it). Multisampling is off: in software GL it costs more than the rest
    of the frame. Pixels are read straight from the render window into a reused buffer,
    several times cheaper than ``Plotter.screenshot``.
    """

    def __init__(self, size, shares):
        import pyvista as pv
        from vtkmodules.vtkCommonCore import vtkUnsignedCharArray

        self.width, self.height = (int(v) for v in size)
        n = len(shares)
        with egl_without_display():
            if n > 1:
                self.plotter = pv.Plotter(off_screen=True, window_size=(self.width, self.height), shape=(1, n),
                                          col_weights=list(shares), border=False)
            else:
                self.plotter = pv.Plotter(off_screen=True, window_size=(self.width, self.height))
        self.window = self.plotter.render_window
        self.window.SetMultiSamples(0)
        total = float(sum(shares))
        edges = np.round(np.cumsum([0.0, *shares]) / total * self.width).astype(int)
        self.panes = [PanePlotter(self.plotter, i, (int(edges[i + 1] - edges[i]), self.height)) for i in range(n)]
        self._added: list = []
        self._status = None
        self._pixels = vtkUnsignedCharArray()

    # ------------------------------------------------------------------ overlays

    def finish(self, title: str | None = None, status: bool = False, legend_rows=(), title_corner: str = "top",
               legend_corner: str = "top") -> None:
        """After the view is built: the gradient layers, then the overlays, drawn by the
        panes' own renderers (time, flips and the colour key by the first, the title at the
        right of the last): a renderer of their own would cost a pass per frame."""
        self._added += _gradient_layer(list(self.plotter.renderers), self.window)
        h = self.height
        font = text_px(h)
        margin = max(4, round(MARGIN_FRACTION * h))
        #: the colour key's right edge and its far edge from its corner (px in the first pane; 0 without)
        self.legend_right = self.legend_reach = 0
        if status:
            self._status = self._text("", (margin, margin), font)
        if legend_rows:
            # at the bottom, the rows stand on the time and flips line
            self._legend(legend_rows, margin, legend_size(h),
                         bottom=margin + round(1.6 * font) if legend_corner == "bottom" else None)
        if title:
            self._title(title, title_corner, legend_corner if legend_rows else None, status, margin, font)

    def _title(self, title: str, corner: str, legend_corner: str | None, status: bool, margin: int,
               font: int) -> None:
        """The title at the top (or bottom) right of the last pane, bold, wrapped onto at most
        TITLE_LINES lines that fit beside the colour key or the status line sharing its corner
        (under the key, across the pane, when that leaves less than MIN_TITLE_ROOM)."""
        h = self.height
        top = corner == "top"
        last = len(self.panes) - 1
        width = self.panes[last].window_size[0]
        actor = self._text("", (width - margin, h - margin if top else margin),
                           max(MIN_FONT, round(TITLE_FRACTION * h)), pane=last)
        prop = actor.GetTextProperty()
        prop.SetJustificationToRight()
        if top:
            prop.SetVerticalJustificationToTop()
        prop.BoldOn()
        beside, below = 0, 0  # what shares the title's corner: its right edge, its far edge
        if last == 0 and legend_corner == corner:
            beside, below = self.legend_right, self.legend_reach
        elif last == 0 and not top and status:
            beside, below = self._measure(actor, STATUS_SAMPLE, font), margin + font
        room = width - margin - (beside + margin if beside else margin)
        if beside and room < MIN_TITLE_ROOM * width:  # under the key instead, across the pane
            room = width - 2 * margin
            actor.SetPosition(width - margin, h - below - margin if top else below + margin)
        actor.SetInput(vtk_text(wrap_text(title, room, lambda text: self._measure(actor, text), TITLE_LINES)))

    def _measure(self, actor, text: str, size: int | None = None) -> int:
        """Width (px) ``text`` takes drawn as ``actor`` draws (at ``size`` px if given);
        the actor is left as it was."""
        prop = actor.GetTextProperty()
        before, old_size = actor.GetInput(), prop.GetFontSize()
        if size is not None:
            prop.SetFontSize(int(size))
        actor.SetInput(vtk_text(text))
        box = [0.0] * 4
        actor.GetBoundingBox(self.plotter.renderers[0], box)
        actor.SetInput(before)
        prop.SetFontSize(old_size)
        return int(math.ceil(box[1] - box[0]))

    def _text(self, text: str, position, size: int, color: str = TEXT_COLOR, pane: int = 0):
        """A text actor at ``position`` (pixels from the bottom left of pane ``pane``), drawn
        in the font file (VTK's own fonts lack ω, ², ₀)."""
        import pyvista as pv
        from vtkmodules.vtkRenderingCore import vtkTextActor

        actor = vtkTextActor()
        actor.SetInput(vtk_text(text))
        actor.SetPosition(*position)
        prop = actor.GetTextProperty()
        prop.SetFontSize(int(size))
        prop.SetColor(pv.Color(tone(color)).float_rgb)
        use_font_file(prop)
        self.plotter.renderers[pane].AddViewProp(actor)
        return actor

    def _legend(self, rows, margin: int, size: int, bottom: int | None = None) -> None:
        """The colour key at the left, from the top (or up from ``bottom`` px): a swatch in
        each row's colour, then its label."""
        import pyvista as pv

        line = round(1.3 * size)
        back = pv.Color(tone(BACKGROUND)).float_rgb
        for i, (label, color) in enumerate(rows):
            y = self.height - margin - (i + 1) * line if bottom is None else bottom + (len(rows) - 1 - i) * line
            swatch = self._text(SWATCH, (margin, y), size, color)
            text = self._text(label, (margin + round(1.2 * size), y), size)
            for actor in (swatch, text):
                prop = actor.GetTextProperty()
                prop.SetBackgroundColor(back)
                prop.SetBackgroundOpacity(LEGEND_BACKING)
            self.legend_right = max(self.legend_right, margin + round(1.2 * size) + self._measure(text, label))
        self.legend_box = (margin, margin + len(rows) * line, size)
        self.legend_reach = margin + len(rows) * line if bottom is None else bottom + len(rows) * line

    def set_status(self, text: str) -> None:
        if self._status is not None:
            self._status.SetInput(text)

    # ------------------------------------------------------------------ each frame

    def render(self, out: np.ndarray) -> np.ndarray:
        """Draw and copy the pixels into ``out`` ((height, width, 3) uint8, top row first)."""
        from vtkmodules.util.numpy_support import vtk_to_numpy

        self.window.Render()
        self.window.MakeCurrent()
        w, h = self.width, self.height
        self.window.GetPixelData(0, 0, w - 1, h - 1, 1, self._pixels, 0)
        out[...] = vtk_to_numpy(self._pixels).reshape(h, w, 3)[::-1]  # OpenGL's first row is the bottom one
        return out

    def close(self) -> None:
        """Release the render window and its GL context."""
        if self.plotter is not None:
            for renderer in self._added:
                self.window.RemoveRenderer(renderer)
            self._added = []
            self.plotter.close()
            self.plotter = None
