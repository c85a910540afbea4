"""The plot panel of an export, for any view: the generic panel of app.export.plots where it takes a view's PlotSpec, else the panels written before it (one small adapter)."""

from __future__ import annotations

import numpy as np

from ..scene.style import BACKGROUND, GRID_COLOR, TEXT_COLOR
from .plots import DPI, FONT_FRACTION, MIN_SPAN, POINTS_PER_PIXEL

#: the drift panel: smallest |drift| drawn (log10 of magnitude; below a double's round-off)
LOG_FLOOR = 1e-17
#: the drift curves' width (pixels)
LINE_WIDTH = 1.6


class PanelAdapter:
    """``render(i, out)`` for frame ``i``, whatever the panel counts in (time or sample)."""

    def __init__(self, panel, timeline, by_time: bool):
        self.panel, self.timeline, self.by_time = panel, timeline, by_time

    def render(self, i: int, out=None):
        k = int(self.timeline.frame_index[i])
        return self.panel.render(float(self.timeline.t[k]) if self.by_time else k, out=out)


def plot_panel(spec, size, scenarios, timelines, t_end: float) -> PanelAdapter:
    """The plots ``spec`` (a :class:`~app.views.ViewSpec`) declares, drawn from ``timelines``."""
    try:
        plots = spec.plots()
    except ImportError:  # app.views.plots not there yet: the panels written before it
        plots = None
    if plots is not None:  # the generic panel (app.export.plots) drawing the view's PlotSpec
        from ..views.compare import side_labels
        from .plots import PlotPanel

        first = timelines[0]
        names = side_labels(scenarios) if len(timelines) > 1 else None
        panel = PlotPanel(size, plots, timelines, t_end, t_start=float(first.t[first.first]), names=names)
        return PanelAdapter(panel, first, by_time=True)
    if len(timelines) == 2:
        from ..views.compare import side_labels

        return PanelAdapter(DriftPanel(size, timelines, side_labels(scenarios), t_end), timelines[0], by_time=False)
    from .plots import PlotPanel

    return PanelAdapter(PlotPanel(size, timelines[0], t_end), timelines[0], by_time=False)


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
