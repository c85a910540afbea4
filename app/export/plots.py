"""The plot panel of an export: any :class:`~app.views.plots.PlotSpec` (the main view's L, omega
and drifts, the compare view's drifts of its two runs), stacked on one time axis.

The time axis spans the whole clip, so the curves grow from left to right as the clip
plays. The curves are read once, through ``recording.span`` thinned to the panel's pixels,
and each frame reveals them up to its time. Drawn with matplotlib's Agg canvas (no Qt, no
display, any thread): axes, ticks and labels are drawn once and saved, and each frame
restores them and draws only the curves (blitting). Measured here at 480x720, the main
view's 9 curves of up to 960 points and its flip markers: 2.0-2.4 ms a frame (the earlier
panel of 8 curves: 1.9-2.2 ms in the same runs), against 6.7-7.2 ms for pyqtgraph updating
a hidden GraphicsLayoutWidget and grabbing it (which also needs a QApplication, so a Qt
platform, on a server).
"""

from __future__ import annotations

import numpy as np

from ..scene.style import BACKGROUND, GRID_COLOR, TEXT_COLOR, tone
from ..views.plots import (FLIP_COLOR, MAIN_PLOTS, TIME_UNIT, PlotSpec, curve_values, power_of_ten,
                           row_title, value_range)

#: points per curve at most, per pixel of plot width (more cannot be seen)
POINTS_PER_PIXEL = 2
#: font height as a fraction of the panel height (pixels): 14 px in a 720 px frame
FONT_FRACTION = 0.02
#: a plot's key in this share of its title's size (0.8 of 0.017 of the height was 7 pt, under
#: 10 px, in a 720 px frame)
KEY_SHARE = 0.9
#: line width (points at 100 dpi) of a curve the spec draws 1.5 px wide in the window
LINE_WIDTH = 1.4
#: head room above and below the curves, as a fraction of their range
Y_MARGIN = 0.08
#: shortest stretch of simulated time the plots show (s)
MIN_SPAN = 2.0
#: shortest time axis (s): a clip of one frame at the run's start has no span of its own, and
#: an axis of 1e-9 s labelled every tick 0.0000000000
MIN_AXIS_SPAN = 0.01
#: dots per inch of the figure; only the pixel size matters
DPI = 100
#: text lines kept below the plots (tick labels and the time label) and above each plot
#: (its title and key), in lines of the plot font; a key shared by every row takes this
#: many lines an entry above them all
BOTTOM_LINES = 3.6
TITLE_LINES = 2.0
SHARED_KEY_LINES = 1.3
#: gap between a plot and its title (points)
TITLE_PAD = 3
#: relative slack on a frame's time when revealing samples (frame times are sample times)
TIME_SLACK = 1e-9


class PlotPanel:
    """The rows of ``spec`` drawn from ``recordings``, rendered to RGB arrays. Thread: any (one at a time).

    Parameters
    ----------
    size : (width, height) in pixels
    spec : the :class:`~app.views.plots.PlotSpec` to draw
    recordings : one :class:`~app.simulation.recording.Recording` per run of the spec
        (:class:`~app.export.timeline.Timeline` objects)
    t_end : simulated time of the last frame (right edge of the time axis)
    t_start : simulated time of the first frame: the axis starts there, or up to MIN_SPAN
        before the last frame when the clip is shorter (None: at the run's start)
    names : legend entries by run (``"A: rk4, dt 1 ms"``), replacing the curves' labels
    log : draw the spec's ``log_magnitude`` rows as log10 |value| (None: ``spec.log_default``)

    The former call ``PlotPanel(size, timeline, t_end)`` draws :data:`MAIN_PLOTS` of that
    timeline from its first frame, and its ``render(k)`` takes a sample index.
    """

    def __init__(self, size, spec, recordings=None, t_end: float | None = None, *, t_start: float | None = None,
                 names=None, log: bool | None = None):
        self._sample_times = None
        if not isinstance(spec, PlotSpec):  # PlotPanel(size, timeline, t_end)
            timeline, t_end = spec, recordings
            spec, recordings = MAIN_PLOTS, (timeline,)
            t_start = float(timeline.t[timeline.first])
            self._sample_times = timeline.t
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.spec = spec
        self.width, self.height = (int(v) for v in size)
        log = spec.log_default if log is None else bool(log)
        t_end = float(t_end)
        # the time axis spans the clip, or reaches back into the run before it when the clip
        # covers less than MIN_SPAN of simulated time (a single frame still shows its curves)
        t0 = None if t_start is None else min(float(t_start), t_end - MIN_SPAN)
        t1 = t_end + TIME_SLACK * max(1.0, abs(t_end))
        spans = [rec.span(t0, t1, POINTS_PER_PIXEL * self.width) for rec in recordings]
        left = min(float(s["t"][0]) for s in spans if len(s))
        if t0 is not None:
            left = max(left, t0)
        self._times = [s["t"] for s in spans]
        fs = max(7.0, FONT_FRACTION * self.height * 72 / DPI)
        fig = Figure(figsize=(self.width / DPI, self.height / DPI), dpi=DPI, facecolor=tone(BACKGROUND))
        self.canvas = FigureCanvasAgg(fig)
        axes = np.atleast_1d(fig.subplots(len(spec.rows), 1, sharex=True))

        def label(curve):
            return curve.label if names is None else names[curve.run]

        keys = [tuple((label(c), c.color) for c in row.curves) for row in spec.rows]
        shared_key = len(spec.rows) > 1 and len(set(keys)) == 1
        line = fs * DPI / 72 / self.height  # a line of text, as a share of the panel height
        key_lines = SHARED_KEY_LINES * len(keys[0]) if shared_key else 0.0
        _layout(fig, len(spec.rows), line, TITLE_LINES, key_lines)
        #: (row index, Curve, Line2D, values drawn) of every curve, in the spec's order
        self.lines = []
        self._markers = []
        titles = []
        for i, (ax, row) in enumerate(zip(axes, spec.rows)):
            row_log = log and row.log_magnitude
            values = [curve_values(c, spans[c.run], row_log) for c in row.curves]
            exponent = 0 if row_log else power_of_ten(*values)
            values = [v * 10.0 ** -exponent for v in values]
            _style(ax, fs)
            titles.append(ax.set_title(row_title(row, exponent, row_log, short=True), color=tone(TEXT_COLOR),
                                       fontsize=fs, loc="left", pad=TITLE_PAD))
            ax.set_ylim(*value_range(*values, pad=Y_MARGIN))
            ax.set_xlim(left, max(t_end, left + MIN_AXIS_SPAN))
            for c, y in zip(row.curves, values):
                (curve,) = ax.plot([], [], color=tone(c.color), linewidth=LINE_WIDTH * c.width / 1.5, label=label(c),
                                   linestyle="--" if c.dashed else "-", animated=True, solid_joinstyle="round")
                self.lines.append((i, c, curve, y))
            if row.markers:
                self._add_markers(ax, spans[0].flips)
            if not shared_key:  # the key sits above the plot, on the title's line, so it never hides a curve
                _row_key(ax, fs, 1)
        if shared_key:  # one key for all rows, each entry in its curve's colour
            handles, labels = axes[0].get_legend_handles_labels()
            _key(fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(0.2, 1.0), fontsize=fs * 0.85,
                            frameon=False, ncol=1, handlelength=1.2, borderaxespad=0.3), [c for _, c in keys[0]])
        axes[-1].set_xlabel(f"{spec.time_title} ({TIME_UNIT})", color=tone(TEXT_COLOR), fontsize=fs)
        self.canvas.draw()
        up = 0  # lines the titles go up
        if not shared_key and _too_wide(axes, self.canvas.get_renderer()):
            # a key wider than the panel (the replay's six curves and a flip) lost its first
            # entries past the left edge: two rows of entries, the title over both
            for ax in axes:
                _row_key(ax, fs, KEY_ROWS)
            up = KEY_ROWS
        elif not shared_key and _crowded(axes, titles, self.canvas.get_renderer()):
            up = 1  # a title and its key do not fit on one line (a narrow panel): the title goes a line up
        if up:
            _layout(fig, len(spec.rows), line, TITLE_LINES + up, key_lines)
            for ax, title in zip(axes, titles):
                ax.set_title(title.get_text(), color=tone(TEXT_COLOR), fontsize=fs, loc="left", pad=TITLE_PAD + up * 1.3 * fs)
            self.canvas.draw()
        self.titles = titles  # the rows' title texts
        self._background = self.canvas.copy_from_bbox(fig.bbox)

    def _add_markers(self, ax, flips) -> None:
        """Flips as dotted vertical lines, one animated polyline revealed as the clip reaches them."""
        flips = np.asarray(flips, dtype=float)
        if not len(flips):
            return
        lo, hi = ax.get_ylim()
        xs = np.repeat(flips, 3)
        ys = np.tile([lo, hi, np.nan], len(flips))
        (marks,) = ax.plot([], [], color=tone(FLIP_COLOR), linewidth=0.8, linestyle=":", label="flip", animated=True)
        self._markers.append((ax, marks, flips, xs, ys))

    def render(self, t, out: np.ndarray | None = None) -> np.ndarray:
        """The panel with the curves drawn up to time ``t`` (s; a sample index ``k`` for the
        former call), as (height, width, 3) uint8 RGB (into ``out`` if given)."""
        if self._sample_times is not None and isinstance(t, (int, np.integer)):
            t = self._sample_times[t]
        t = float(t) + TIME_SLACK * max(1.0, abs(float(t)))
        ends = [int(np.searchsorted(times, t, side="right")) for times in self._times]
        self.canvas.restore_region(self._background)
        axes = self.canvas.figure.axes
        for i, c, line, y in self.lines:
            j = ends[c.run]
            line.set_data(self._times[c.run][:j], y[:j])
            axes[i].draw_artist(line)
        for ax, marks, flips, xs, ys in self._markers:
            j = 3 * int(np.searchsorted(flips, t, side="right"))
            marks.set_data(xs[:j], ys[:j])
            ax.draw_artist(marks)
        rgba = np.asarray(self.canvas.buffer_rgba())
        if out is None:
            out = np.empty((self.height, self.width, 3), dtype=np.uint8)
        out[...] = rgba[..., :3]
        return out


def _layout(fig, rows: int, line: float, title_lines: float, key_lines: float) -> None:
    """Margins from the font (``line``: a line of text as a share of the height): the time axis
    needs its tick labels and its label below, each plot ``title_lines`` above it for its title
    and key, and a key shared by all rows ``key_lines`` above them."""
    gap = title_lines * line
    bottom = BOTTOM_LINES * line
    top = 1.0 - gap - key_lines * line
    fig.subplots_adjust(left=0.2, right=0.96, top=top, bottom=bottom,
                        hspace=gap / max((top - bottom - (rows - 1) * gap) / rows, 1e-3))


#: rows of a row's key when one row of entries is wider than the panel
KEY_ROWS = 2


def _row_key(ax, fs: float, rows: int) -> None:
    """A row's key above its plot, right-aligned, its entries on ``rows`` rows."""
    n = len(ax.get_legend_handles_labels()[0])
    _key(ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), fontsize=fs * KEY_SHARE, frameon=False,
                   ncol=max(1, -(-n // rows)), handlelength=1.2, columnspacing=0.8, borderaxespad=0.0,
                   borderpad=0.1), TEXT_COLOR)


def _too_wide(axes, renderer) -> bool:
    """Whether a row's key runs past the panel's left edge."""
    return any(ax.get_legend() is not None and ax.get_legend().get_window_extent(renderer).x0 < 0 for ax in axes)


def _crowded(axes, titles, renderer) -> bool:
    """Whether a row's title runs into its key (both on the line above the plot)."""
    for ax, title in zip(axes, titles):
        legend = ax.get_legend()
        if legend is not None and title.get_window_extent(renderer).x1 + 4 > legend.get_window_extent(renderer).x0:
            return True
    return False


def _style(ax, fs: float) -> None:
    """Dark background, grid and tick labels in the scene's colours; plain numbers (the power
    of ten is in the title)."""
    ax.set_facecolor(tone(BACKGROUND))
    for spine in ax.spines.values():
        spine.set_color(tone(GRID_COLOR))
    ax.tick_params(colors=tone(TEXT_COLOR), labelsize=fs * 0.9, length=3)
    ax.grid(True, color=tone(GRID_COLOR), linewidth=0.6, alpha=0.7)
    ax.ticklabel_format(axis="both", style="plain", useOffset=False)


def _key(legend, colors) -> None:
    """Colour a legend's texts: one colour for all, or one an entry."""
    texts = legend.get_texts()
    for text, color in zip(texts, [colors] * len(texts) if isinstance(colors, str) else colors):
        text.set_color(tone(color))
