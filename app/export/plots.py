"""The plot panel of an export: L (world), omega (body) and the conservation drifts, stacked.

The same three plots as the window, on a shared time axis that spans the whole clip, so
the curves grow from left to right as the clip plays. Drawn with matplotlib's Agg canvas
(no Qt, no display, any thread): axes, ticks and labels are drawn once and saved, and
each frame restores them and draws only the curves (blitting). Measured here at 480x720
with 8 curves of up to 1200 points: 3.3-4.2 ms a frame, against 6.7-7.2 ms for pyqtgraph
updating a hidden GraphicsLayoutWidget and grabbing it (which also needs a QApplication,
so a Qt platform, on a server).
"""

from __future__ import annotations

import numpy as np

from ..scene.style import AXIS_COLORS, BACKGROUND, GRID_COLOR, L_COLOR, TEXT_COLOR, TRAIL_COLOR

#: points per curve at most, per pixel of plot width (more cannot be seen)
POINTS_PER_PIXEL = 2
#: font height as a fraction of the panel height (pixels)
FONT_FRACTION = 0.017
#: curve width (points at 100 dpi, about pixels)
LINE_WIDTH = 1.4
#: head room above and below the curves, as a fraction of their range
Y_MARGIN = 0.08
#: colour of the energy drift curve (the |L| drift uses the L arrow's colour)
E_COLOR = TRAIL_COLOR
#: shortest stretch of simulated time the plots show (s)
MIN_SPAN = 2.0
#: dots per inch of the figure; only the pixel size matters
DPI = 100
#: text lines kept below the plots (tick labels and the time label) and above each plot
#: (its title and key), in lines of the plot font
BOTTOM_LINES = 3.6
TITLE_LINES = 2.0


class PlotPanel:
    """Three stacked plots sharing a time axis, rendered to RGB arrays. Thread: any (one at a time).

    Parameters
    ----------
    size : (width, height) in pixels
    timeline : the :class:`~app.export.timeline.Timeline` (curves from its first frame on, or
        from up to MIN_SPAN before the last frame when the clip is shorter)
    t_end : simulated time of the last frame (right edge of the time axis)
    """

    def __init__(self, size, timeline, t_end: float):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.width, self.height = (int(v) for v in size)
        tl = timeline
        t = tl.t
        # the time axis spans the clip, or reaches back into the run before it when the clip
        # covers less than MIN_SPAN of simulated time (a single frame still shows its curves)
        t0 = max(float(t[0]), min(float(t[tl.first]), t_end - MIN_SPAN))
        a = int(np.searchsorted(t, t0 - 1e-12))
        self._a = a
        self._t = t
        t0 = float(t[a])
        span = max(t_end - t0, 1e-9)
        px = 1.0 / DPI
        fs = max(7.0, FONT_FRACTION * self.height * 72 / DPI)
        fig = Figure(figsize=(self.width * px, self.height * px), dpi=DPI, facecolor=BACKGROUND)
        self.canvas = FigureCanvasAgg(fig)
        axes = fig.subplots(3, 1, sharex=True)
        # margins from the font: a line of text is fs points; the time axis needs its tick
        # labels and its label below, each plot its title and key above it
        line = fs * DPI / 72 / self.height
        gap = TITLE_LINES * line
        bottom, top = BOTTOM_LINES * line, 1.0 - gap
        fig.subplots_adjust(left=0.2, right=0.96, top=top, bottom=bottom,
                            hspace=gap / max((top - bottom - 2 * gap) / 3, 1e-3))
        series = [
            ("L (world, kg m\u00b2/s)", [(tl.L[:, k], AXIS_COLORS[k], "xyz"[k]) for k in range(3)]),
            ("\u03c9 (body, rad/s)", [(tl.w[:, k], AXIS_COLORS[k], "xyz"[k]) for k in range(3)]),
            ("relative drift", [(tl.E_drift, E_COLOR, "E"), (tl.L_norm_drift, L_COLOR, "|L|")]),
        ]
        self._lines = []
        for ax, (title, curves) in zip(axes, series):
            ax.set_facecolor(BACKGROUND)
            for spine in ax.spines.values():
                spine.set_color(GRID_COLOR)
            ax.tick_params(colors=TEXT_COLOR, labelsize=fs * 0.9, length=3)
            ax.yaxis.get_offset_text().set_color(TEXT_COLOR)
            ax.yaxis.get_offset_text().set_fontsize(fs * 0.8)
            ax.grid(True, color=GRID_COLOR, linewidth=0.6, alpha=0.7)
            ax.set_title(title, color=TEXT_COLOR, fontsize=fs, loc="left", pad=3)
            lo = min(float(np.min(y[a:])) for y, _, _ in curves)
            hi = max(float(np.max(y[a:])) for y, _, _ in curves)
            pad = Y_MARGIN * (hi - lo) if hi > lo else max(abs(hi), 1e-15)
            ax.set_ylim(lo - pad, hi + pad)
            ax.set_xlim(t0, t0 + span)
            ax.ticklabel_format(axis="x", useOffset=False)
            for y, color, label in curves:
                (line,) = ax.plot([], [], color=color, linewidth=LINE_WIDTH, label=label, animated=True,
                                  solid_joinstyle="round")
                self._lines.append((ax, line, y))
            # the key sits above the plot, on the title's line, so it never hides a curve
            leg = ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), fontsize=fs * 0.8, frameon=False,
                            ncol=len(curves), handlelength=1.2, columnspacing=0.8, borderaxespad=0.0,
                            borderpad=0.1)
            for text in leg.get_texts():
                text.set_color(TEXT_COLOR)
        axes[-1].set_xlabel("simulated time (s)", color=TEXT_COLOR, fontsize=fs)
        self.canvas.draw()
        # an axis multiplier (1e-13) would sit on the title's line: it joins the title instead
        for ax, (title, _) in zip(axes, series):
            offset = ax.yaxis.get_major_formatter().get_offset()
            if offset:
                ax.yaxis.get_offset_text().set_visible(False)
                ax.set_title(f"{title}  \u00d7{offset}", color=TEXT_COLOR, fontsize=fs, loc="left", pad=3)
        self.canvas.draw()
        self._background = self.canvas.copy_from_bbox(fig.bbox)
        # curves are thinned to what the panel can show
        n = len(t) - a
        self._stride = max(1, int(np.ceil(n / (POINTS_PER_PIXEL * self.width))))

    def render(self, k: int, out: np.ndarray | None = None) -> np.ndarray:
        """The panel with the curves drawn up to sample ``k``, as (height, width, 3) uint8 RGB."""
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
