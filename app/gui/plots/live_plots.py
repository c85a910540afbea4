"""Live plots (pyqtgraph): one panel drawing any :class:`~app.views.plots.PlotSpec` (the main
view's L, omega and drifts, the compare view's drifts of its two runs) on a shared time axis.

Refreshed from the worker's history at the plot rate (not every display frame): the Qt
repaint of plot widgets, not the data, is what costs. GUI thread only.

Nothing is written sideways (a lone "ω" turned 90 degrees reads as a "3"): each plot says
what it shows, its unit and its power of ten in its title, and its vertical axis carries
only numbers. Each legend sits in the top right corner of its plot, and the vertical range
leaves a free band that high above the curves, measured in pixels at every refresh, so no
curve runs under a legend, however short the plot.
"""

from __future__ import annotations

import types
from collections.abc import Mapping

import pyqtgraph as pg
from PyQt5.QtCore import Qt
from PyQt5.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from ...scene.style import TEXT_COLOR, current, tone
from ...views.plots import (
    COMPARE_PLOTS,
    FLIP_COLOR,
    KICK_COLOR,
    MAIN_PLOTS,
    TIME_UNIT,
    WINDOWS,
    PlotSpec,
    curve_values,
    finite_bounds,
    power_of_ten,
    row_title,
    value_range,
)

#: most points per curve handed to pyqtgraph (the history is thinned by a whole stride)
MAX_POINTS = 2000
#: flip and kick markers kept on the plots that show them
MAX_MARKERS = 24
#: a legend's offset from its view box's top right corner (px), and the gap kept under it
LEGEND_OFFSET = (-4, 1)
LEGEND_GAP_PX = 3
#: at most this share of a plot's height is kept free for its legend (a very short plot)
MAX_LEGEND_SHARE = 0.5
#: width of a vertical axis (px): numbers only, no label
AXIS_WIDTH = 46
#: the least height of a plot's curves (its view box, px): three or more ticks, readable on a
#: projector (55 px with two ticks at 1280x720 before)
PLOT_VIEW_MIN_PX = 90
#: the scrolling window each view starts with
DEFAULT_WINDOW = MAIN_PLOTS.default_window
DEFAULT_COMPARE_WINDOW = COMPARE_PLOTS.default_window


def _pen(color, width=1.5, style=Qt.SolidLine):
    return pg.mkPen(color=tone(color), width=width, style=style)


#: the markers: (name, pen) of a flip (dotted) and a kick (dashed)
_MARKER_PENS = (("flip", (FLIP_COLOR, 1, Qt.DotLine)), ("kick", (KICK_COLOR, 1, Qt.DashLine)))


class SpecPlots(pg.GraphicsLayoutWidget):
    """The rows of ``spec`` stacked on a shared time axis. ``refresh(data, snapshot)`` redraws.

    ``plots[i]`` is row i's PlotItem (``first_plot`` the top one, whose time axis the others
    share); ``row_curves[i]`` its curves, in the spec's order; ``curves`` all of them. A
    caller may add a row of its own under them with ``ci.addItem(item, row=len(plots))``.

    Thread: GUI thread.
    """

    def __init__(self, spec: PlotSpec = MAIN_PLOTS, parent=None):
        super().__init__(parent=parent)
        self.spec = spec
        self.window_s: float | None = WINDOWS[spec.default_window]
        self.log_drift = spec.log_default
        self.ci.layout.setSpacing(2)
        self.ci.setContentsMargins(2, 2, 6, 2)
        self.plots, self.row_curves = [], []
        for i, row in enumerate(spec.rows):
            plot = self.addPlot(row=i, col=0)
            setup_plot(plot, len(row.curves) + (len(_MARKER_PENS) if row.markers else 0))
            if i:
                plot.setXLink(self.plots[0])
            if i < len(spec.rows) - 1:
                plot.getAxis("bottom").setStyle(showValues=False)
            else:
                plot.setLabel("bottom", spec.time_title, units=TIME_UNIT)
            self.row_curves.append([plot.plot(pen=_pen(c.color, c.width, Qt.DashLine if c.dashed else Qt.SolidLine),
                                              name=c.label) for c in row.curves])
            if row.markers:  # the markers' key: samples that are drawn in the legend only
                for name, pen in _MARKER_PENS:
                    plot.legend.addItem(pg.PlotDataItem(pen=_pen(*pen)), name)
            self.plots.append(plot)
        self.curves = [c for row in self.row_curves for c in row]
        self._exponents = [0] * len(spec.rows)
        self._titles()
        self._markers: list = []
        self._marker_times: tuple | None = ()
        self._run_id = None

    def fit_min_height(self) -> int:
        """Make the widget's least height what its rows need (each view box at least
        :data:`PLOT_VIEW_MIN_PX`, with its title and axes); call after adding or removing a row.
        Returns it."""
        self.ci.layout.invalidate()
        need = int(self.ci.effectiveSizeHint(Qt.MinimumSize).height()) + 2 * self.frameWidth() + 2
        self.setMinimumHeight(need)
        return need

    @property
    def first_plot(self):
        """The top row's PlotItem: every row (and a row added by the window) shares its time axis."""
        return self.plots[0]

    def _titles(self) -> None:
        """Each plot's title: what it shows, its unit, and the power of ten of its numbers."""
        for plot, row, exponent in zip(self.plots, self.spec.rows, self._exponents):
            set_title(plot, row_title(row, exponent, self.log_drift))

    def release(self) -> None:
        """Delete the plots' parentless context menus (see :func:`release_menus`)."""
        release_menus(*self.plots)

    # ------------------------------------------------------------------ options

    def set_window(self, label: str) -> None:
        """Scroll over the last N s, or ``"all"``."""
        self.window_s = WINDOWS[label]

    def set_log_drift(self, on: bool) -> None:
        """Draw the rows declared ``log_magnitude`` as log10 of |value|."""
        self.log_drift = bool(on)
        self._titles()

    def set_names(self, names) -> None:
        """Legend entries by run (``"A: rk4, dt 1 ms"``, ...) for the curves that name a run."""
        for plot, row, curves in zip(self.plots, self.spec.rows, self.row_curves):
            for spec_curve, curve in zip(row.curves, curves):
                plot.legend.removeItem(curve)
                plot.legend.addItem(curve, names[spec_curve.run])

    def clear_curves(self) -> None:
        """Empty every curve and marker (``clear`` itself is pyqtgraph's: it removes the plots)."""
        for c in self.curves:
            c.setData([], [])
        self._set_markers((), ())

    # ------------------------------------------------------------------ data

    def refresh(self, data, snapshot=None) -> None:
        """Redraw from ``data``: the columns of one run (a :class:`~app.simulation.recording.Span`
        or a dict of history columns) or a sequence of them, one per run, already windowed and
        thinned. The markers are the ``snapshot``'s flips and kicks (or the span's flips)."""
        runs = [data] if isinstance(data, Mapping) or hasattr(data, "columns") else list(data)
        ts = [run["t"] for run in runs]
        if snapshot is not None and snapshot.run_id != self._run_id:
            self._run_id = snapshot.run_id
            self._marker_times = None
        if all(len(t) == 0 for t in ts):
            self.clear_curves()
            return
        exponents = []
        for i, (plot, row, curves) in enumerate(zip(self.plots, self.spec.rows, self.row_curves)):
            log = self.log_drift and row.log_magnitude
            drawn = []
            for spec_curve, curve in zip(row.curves, curves):
                t = ts[spec_curve.run]
                y = curve_values(spec_curve, runs[spec_curve.run], log)
                curve.setData(t, y, skipFiniteCheck=True)
                if len(t):
                    drawn.append(y)
            if i == 0:
                self._set_x_range(ts)
            exponents.append(fit_y(plot, *drawn, scaled=not log))
        if exponents != self._exponents:
            self._exponents = exponents
            self._titles()
        if any(row.markers for row in self.spec.rows):
            if snapshot is not None:
                flips, kicks = snapshot.flip_times[-MAX_MARKERS:], snapshot.kick_times[-MAX_MARKERS:]
            else:
                flips, kicks = tuple(getattr(runs[0], "flips", ()))[-MAX_MARKERS:], ()
            if (tuple(flips), tuple(kicks)) != self._marker_times:
                self._set_markers(flips, kicks)

    def refresh_from(self, recordings, snapshots) -> list:
        """Cut the scrolling window (the last ``window_s`` before each snapshot's time, or all)
        out of each run's :class:`~app.simulation.recording.Recording` (a worker), thinned to
        :data:`MAX_POINTS`, and redraw; markers from the first snapshot. Returns the spans
        (the window reuses them, e.g. for the polhode view)."""
        spans = [rec.span(None if self.window_s is None else snap.t - self.window_s, None, MAX_POINTS)
                 for rec, snap in zip(recordings, snapshots)]
        self.refresh(spans, snapshots[0])
        return spans

    def _set_x_range(self, ts) -> None:
        t0 = min(float(t[0]) for t in ts if len(t))
        t_end = max(float(t[-1]) for t in ts if len(t))
        if self.window_s is None:
            x_range = (t0, max(t_end, t0 + 1e-6))
        else:  # a fixed-width window that starts at the first sample until it fills
            start = max(t0, t_end - self.window_s)
            x_range = (start, start + self.window_s)
        # ranges are set here, before the paint: pyqtgraph's lazy auto-range would change
        # the view during the paint and schedule a second repaint of every plot
        self.plots[0].vb.setRange(xRange=x_range, padding=0)

    def _set_markers(self, flips, kicks) -> None:
        for plot, m in self._markers:
            plot.removeItem(m)
        self._markers = []
        for plot, row in zip(self.plots, self.spec.rows):
            if not row.markers:
                continue
            for times, (_name, pen) in zip((flips, kicks), _MARKER_PENS):
                for t in times:
                    line = pg.InfiniteLine(pos=t, angle=90, pen=_pen(*pen))
                    plot.addItem(line, ignoreBounds=True)
                    self._markers.append((plot, line))
        self._marker_times = (tuple(flips), tuple(kicks))


class PlotsPanel(SpecPlots):
    """The main view's plots (:data:`~app.views.plots.MAIN_PLOTS`), with its rows and curves
    by name: ``L_plot``, ``w_plot``, ``d_plot``; ``L_curves``, ``L_norm``, ``w_curves``,
    ``E_curve``, ``Ln_curve``. Thread: GUI thread."""

    def __init__(self, parent=None):
        super().__init__(MAIN_PLOTS, parent)
        self.L_plot, self.w_plot, self.d_plot = self.plots
        (*self.L_curves, self.L_norm), self.w_curves, (self.E_curve, self.Ln_curve) = self.row_curves


class DriftPlots(SpecPlots):
    """The compare view's plots (:data:`~app.views.plots.COMPARE_PLOTS`): ``E_plot`` and ``L_plot``
    (the |L| drift), ``E_curves`` and ``L_curves`` by run. Thread: GUI thread."""

    def __init__(self, parent=None):
        super().__init__(COMPARE_PLOTS, parent)
        self.E_plot, self.L_plot = self.plots
        self.E_curves, self.L_curves = self.row_curves


class PlotsBox(QWidget):
    """A plot widget under a bar with the time-window chooser and the log-drift option.

    ``window_combo`` (a :data:`WINDOWS` label; ``window`` if it is one, else the spec's
    default) and ``log_drift`` (a checkbox, starting as the plots do) are the bar's controls;
    ``layout()`` takes more widgets under the plots. Either control sets the plots and then
    calls ``changed()`` (the window redraws them at once), when given.
    """

    def __init__(self, plots, window: str, window_tip: str, log_tip: str, parent=None, changed=None, log=None):
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        bar = QHBoxLayout()
        bar.setContentsMargins(6, 2, 6, 0)
        bar.addWidget(QLabel("Plots:"))
        self.window_combo = QComboBox()
        self.window_combo.addItems(list(WINDOWS))
        default = plots.spec.default_window if isinstance(plots, SpecPlots) else DEFAULT_WINDOW
        self.window_combo.setCurrentText(window if window in WINDOWS else default)
        self.window_combo.setToolTip(window_tip)
        bar.addWidget(self.window_combo)
        self.log_drift = QCheckBox("log₁₀ |drift|")
        self.log_drift.setChecked(bool(getattr(plots, "log_drift", False)))
        self.log_drift.setToolTip(log_tip)
        bar.addWidget(self.log_drift)
        bar.addStretch(1)
        lay.addLayout(bar)
        lay.addWidget(plots, 1)
        if log is not None:
            self.log_drift.setChecked(bool(log))
        plots.set_window(self.window_combo.currentText())
        plots.set_log_drift(self.log_drift.isChecked())
        for signal, apply in ((self.window_combo.currentTextChanged, plots.set_window),
                              (self.log_drift.toggled, plots.set_log_drift)):
            signal.connect(apply)
            if changed is not None:
                signal.connect(lambda *_a: changed())


def setup_plot(plot, legend_columns: int) -> None:
    """A plot of the panels: grid, no mouse or menu, numbers only on its vertical axis, and
    a legend of ``legend_columns`` entries a row in its top right corner."""
    plot.showGrid(x=True, y=True, alpha=0.25)
    plot.setMenuEnabled(False)
    plot.hideButtons()
    plot.setMouseEnabled(x=False, y=False)
    plot.disableAutoRange()
    axis = plot.getAxis("left")
    axis.enableAutoSIPrefix(False)  # the power of ten is in the title
    axis.showLabel(False)
    axis.setWidth(AXIS_WIDTH)
    legend = plot.addLegend(offset=LEGEND_OFFSET, labelTextSize="8pt", colCount=legend_columns,
                            brush=pg.mkBrush(current().overlay + "aa"), verSpacing=-6)
    legend.layout.setContentsMargins(2, 0, 2, 0)  # the style's 9 px a side would double its height
    legend.setParentItem(plot.vb)
    plot.vb.setMinimumHeight(PLOT_VIEW_MIN_PX)


def set_title(plot, text: str) -> None:
    """Set a plot's title, only when it changes (a new title lays the plot out again)."""
    html = f"<span style='color:{tone(TEXT_COLOR)}; font-size:9pt'>{text}</span>"
    if plot.titleLabel.text != html:
        label = plot.titleLabel
        if not isinstance(label.__dict__.get("updateMin"), types.MethodType):
            label.updateMin = types.MethodType(_title_min_height, label)
        plot.setTitle(html)


def _title_min_height(label) -> None:
    """LabelItem.updateMin for a title: its height, but no least width. pyqtgraph makes a
    title's text width the plot's least width, so a long title widened every plot of the
    column past its widget and cut their right edge off; it overflows its ends instead."""
    bounds = label.itemRect()
    label.setMinimumWidth(0)
    label.setMinimumHeight(bounds.height())
    label._sizeHint = {Qt.SizeHint.MinimumSize: (0, bounds.height()),
                       Qt.SizeHint.PreferredSize: (bounds.width(), bounds.height()),
                       Qt.SizeHint.MaximumSize: (-1, -1), Qt.SizeHint.MinimumDescent: (0, 0)}
    label.updateGeometry()


def legend_share(plot) -> float:
    """The share of the plot's height its legend covers, with the gap under it."""
    legend = getattr(plot, "legend", None)
    height = plot.vb.height()
    if legend is None or not legend.isVisible() or height <= 0:
        return 0.0
    return min(MAX_LEGEND_SHARE, (LEGEND_OFFSET[1] + legend.height() + LEGEND_GAP_PX) / height)


def fit_y(plot, *arrays, scaled: bool = True) -> int:
    """Fit the vertical range to ``arrays`` with the legend's band free above them, and
    label the numbers in a power of ten (``scaled``); returns that power."""
    bounds = finite_bounds(*arrays)
    exponent = power_of_ten(bounds=bounds) if scaled else 0
    plot.getAxis("left").setScale(10.0 ** -exponent)
    plot.vb.setRange(yRange=value_range(bounds=bounds, free=legend_share(plot)), padding=0)
    return exponent


def release_menus(*plots) -> None:
    """Delete pyqtgraph's parentless context menus of these PlotItems (PlotItem.ctrlMenu and
    its submenus, ViewBox.menu): they are top-level widgets that would outlive the window."""
    for plot in plots:
        for menu in [*getattr(plot, "subMenus", []), getattr(plot, "ctrlMenu", None),
                     getattr(plot.vb, "menu", None)]:
            if menu is not None:
                menu.deleteLater()
