"""Live plots (pyqtgraph) sharing one time axis: L in the world frame, omega in the body
frame, and the relative drift of E and |L| (optionally as log10 of its magnitude); the
compare view's drifts of its two sides.

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

import numpy as np
import pyqtgraph as pg
from PyQt5.QtCore import Qt
from PyQt5.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from ..scene.compare import SIDE_COLORS
from ..scene.style import AXIS_HEX, L_COLOR, OMEGA_COLOR, TEXT_COLOR
from ..simulation.compare import SIDES

#: smallest |drift| shown in log mode (below round-off of a double)
LOG_FLOOR = 1e-17
#: most points per curve handed to pyqtgraph (the history is thinned by a whole stride)
MAX_POINTS = 2000
#: flip and kick markers kept on the omega plot
MAX_MARKERS = 24
#: the markers' colours: a flip (dotted) and a kick (dashed)
FLIP_COLOR, KICK_COLOR = "#f5e663", "#ff7b72"
#: a legend's offset from its view box's top right corner (px), and the gap kept under it
LEGEND_OFFSET = (-4, 1)
LEGEND_GAP_PX = 3
#: at most this share of a plot's height is kept free for its legend (a very short plot)
MAX_LEGEND_SHARE = 0.5
#: values whose largest magnitude lies in this range are labelled as they are; others in
#: units of a power of ten, a multiple of 3 (as the SI prefixes)
PLAIN_RANGE = (1e-2, 1e4)
#: width of a vertical axis (px): numbers only, no label
AXIS_WIDTH = 46
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
#: choices of the scrolling window (s of simulated time; None = all history)
WINDOWS = {"last 5 s": 5.0, "last 10 s": 10.0, "last 30 s": 30.0, "last 60 s": 60.0, "all": None}
DEFAULT_WINDOW = "last 10 s"
#: the compare view shows the whole run by default: drift is measured from t0
DEFAULT_COMPARE_WINDOW = "all"


def _pen(color, width=1.5, style=Qt.SolidLine):
    return pg.mkPen(color=color, width=width, style=style)


class PlotsPanel(pg.GraphicsLayoutWidget):
    """Three stacked plots with a shared time axis. ``refresh(history, snapshot)`` redraws.

    Thread: GUI thread.
    """

    def __init__(self, parent=None):
        super().__init__(parent=parent)
        self.window_s: float | None = WINDOWS[DEFAULT_WINDOW]
        self.log_drift = False
        self.ci.layout.setSpacing(2)
        self.ci.setContentsMargins(2, 2, 6, 2)
        self.L_plot = self.addPlot(row=0, col=0)
        self.w_plot = self.addPlot(row=1, col=0)
        self.d_plot = self.addPlot(row=2, col=0)
        for plot, columns in ((self.L_plot, 4), (self.w_plot, 5), (self.d_plot, 2)):
            setup_plot(plot, columns)
        self.d_plot.setLabel("bottom", "simulation time t", units="s")
        for p in (self.L_plot, self.w_plot):
            p.getAxis("bottom").setStyle(showValues=False)
        self.w_plot.setXLink(self.L_plot)
        self.d_plot.setXLink(self.L_plot)
        names = ("x", "y", "z")
        self.L_curves = [self.L_plot.plot(pen=_pen(AXIS_HEX[k]), name=f"L{names[k]}") for k in range(3)]
        self.L_norm = self.L_plot.plot(pen=_pen(L_COLOR, 2, Qt.DashLine), name="|L|")
        self.w_curves = [self.w_plot.plot(pen=_pen(AXIS_HEX[k]), name=f"ω{names[k]}") for k in range(3)]
        self.E_curve = self.d_plot.plot(pen=_pen(OMEGA_COLOR), name="(E − E₀)/|E₀|")
        self.Ln_curve = self.d_plot.plot(pen=_pen(L_COLOR), name="(|L| − |L₀|)/|L₀|")
        # the markers' key: samples that are drawn in the legend only
        for name, pen in (("flip", _pen(FLIP_COLOR, 1, Qt.DotLine)), ("kick", _pen(KICK_COLOR, 1, Qt.DashLine))):
            self.w_plot.legend.addItem(pg.PlotDataItem(pen=pen), name)
        self._exponents = {"L": 0, "w": 0, "d": 0}
        self._titles()
        self._markers: list = []
        self._marker_times: tuple = ()
        self._run_id = None
        self.curves = self.L_curves + [self.L_norm] + self.w_curves + [self.E_curve, self.Ln_curve]

    def _titles(self) -> None:
        """Each plot's title: what it shows, its unit, and the power of ten of its numbers."""
        e = self._exponents
        unit = _unit_title
        set_title(self.L_plot, f"Angular momentum L, world frame ({unit(e['L'], 'kg m²/s')})")
        set_title(self.w_plot, f"Angular velocity ω, body frame ({unit(e['w'], 'rad/s')})")
        if self.log_drift:
            set_title(self.d_plot, "log₁₀ |relative drift| since t₀ or the last kick")
        else:
            set_title(self.d_plot, "Relative drift since t₀ or the last kick" + _times_title(e["d"]))

    def release(self) -> None:
        """Delete the plots' parentless context menus (see :func:`release_menus`)."""
        release_menus(self.L_plot, self.w_plot, self.d_plot)

    # ------------------------------------------------------------------ options

    def set_window(self, label: str) -> None:
        """Scroll over the last N s, or ``"all"``."""
        self.window_s = WINDOWS[label]

    def set_log_drift(self, on: bool) -> None:
        self.log_drift = bool(on)
        self._titles()

    def clear_curves(self) -> None:
        """Empty every curve and marker (``clear`` itself is pyqtgraph's: it removes the plots)."""
        for c in self.curves:
            c.setData([], [])
        self._set_markers((), ())

    # ------------------------------------------------------------------ data

    def refresh(self, history: dict, snapshot) -> None:
        """Redraw from ``history`` (columns from the worker, already windowed and thinned)."""
        t = history["t"]
        if snapshot.run_id != self._run_id:
            self._run_id = snapshot.run_id
            self._marker_times = None
        if len(t) == 0:
            self.clear_curves()
            return
        L, w = history["L"], history["w"]
        for k in range(3):
            self.L_curves[k].setData(t, L[:, k], skipFiniteCheck=True)
            self.w_curves[k].setData(t, w[:, k], skipFiniteCheck=True)
        self.L_norm.setData(t, np.linalg.norm(L, axis=1), skipFiniteCheck=True)
        E, Ln = history["E_drift"], history["L_norm_drift"]
        if self.log_drift:
            E = np.log10(np.maximum(np.abs(E), LOG_FLOOR))
            Ln = np.log10(np.maximum(np.abs(Ln), LOG_FLOOR))
        self.E_curve.setData(t, E, skipFiniteCheck=True)
        self.Ln_curve.setData(t, Ln, skipFiniteCheck=True)
        t_end = float(t[-1])
        if self.window_s is None:
            x_range = (float(t[0]), max(t_end, float(t[0]) + 1e-6))
        else:  # a fixed-width window that starts at the first sample until it fills
            start = max(float(t[0]), t_end - self.window_s)
            x_range = (start, start + self.window_s)
        # ranges are set here, before the paint: pyqtgraph's lazy auto-range would change
        # the view during the paint and schedule a second repaint of every plot
        self.L_plot.vb.setRange(xRange=x_range, padding=0)
        exponents = {"L": fit_y(self.L_plot, L, np.linalg.norm(L, axis=1)), "w": fit_y(self.w_plot, w),
                     "d": fit_y(self.d_plot, E, Ln, scaled=not self.log_drift)}
        if exponents != self._exponents:
            self._exponents = exponents
            self._titles()
        flips = snapshot.flip_times[-MAX_MARKERS:]
        kicks = snapshot.kick_times[-MAX_MARKERS:]
        if (flips, kicks) != self._marker_times:
            self._set_markers(flips, kicks)

    def _set_markers(self, flips, kicks) -> None:
        for m in self._markers:
            self.w_plot.removeItem(m)
        self._markers = []
        for t in flips:
            line = pg.InfiniteLine(pos=t, angle=90, pen=_pen(FLIP_COLOR, 1, Qt.DotLine))
            self.w_plot.addItem(line, ignoreBounds=True)
            self._markers.append(line)
        for t in kicks:
            line = pg.InfiniteLine(pos=t, angle=90, pen=_pen(KICK_COLOR, 1, Qt.DashLine))
            self.w_plot.addItem(line, ignoreBounds=True)
            self._markers.append(line)
        self._marker_times = (tuple(flips), tuple(kicks))


class PlotsBox(QWidget):
    """A plot widget under a bar with the time-window chooser and the log-drift option.

    ``window_combo`` (a :data:`WINDOWS` label) and ``log_drift`` (a checkbox) are the
    bar's controls; ``layout()`` takes more widgets under the plots.
    """

    def __init__(self, plots, window: str, window_tip: str, log_tip: str, parent=None):
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        bar = QHBoxLayout()
        bar.setContentsMargins(6, 2, 6, 0)
        bar.addWidget(QLabel("Plots:"))
        self.window_combo = QComboBox()
        self.window_combo.addItems(list(WINDOWS))
        self.window_combo.setCurrentText(window if window in WINDOWS else DEFAULT_WINDOW)
        self.window_combo.setToolTip(window_tip)
        bar.addWidget(self.window_combo)
        self.log_drift = QCheckBox("log₁₀ |drift|")
        self.log_drift.setToolTip(log_tip)
        bar.addWidget(self.log_drift)
        bar.addStretch(1)
        lay.addLayout(bar)
        lay.addWidget(plots, 1)


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
                            brush=pg.mkBrush(22, 25, 30, 170), verSpacing=-6)
    legend.layout.setContentsMargins(2, 0, 2, 0)  # the style's 9 px a side would double its height
    legend.setParentItem(plot.vb)


def set_title(plot, text: str) -> None:
    """Set a plot's title, only when it changes (a new title lays the plot out again)."""
    html = f"<span style='color:{TEXT_COLOR}; font-size:9pt'>{text}</span>"
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


def power_of_ten(*arrays) -> int:
    """The power of ten (a multiple of 3) the numbers of ``arrays`` are labelled in: 0 when
    their largest finite magnitude is in PLAIN_RANGE (or there is none)."""
    finite = [np.abs(np.asarray(a, dtype=float)) for a in arrays]
    finite = [a[np.isfinite(a)] for a in finite]
    top = max((float(a.max()) for a in finite if a.size), default=0.0)
    if top == 0.0 or PLAIN_RANGE[0] <= top < PLAIN_RANGE[1]:
        return 0
    return 3 * int(np.floor(np.log10(top) / 3))


def _unit_title(exponent: int, unit: str) -> str:
    return unit if exponent == 0 else f"10{str(exponent).translate(_SUPERSCRIPT)} {unit}"


def _times_title(exponent: int) -> str:
    return "" if exponent == 0 else f", ×10{str(exponent).translate(_SUPERSCRIPT)}"


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
    exponent = power_of_ten(*arrays) if scaled else 0
    plot.getAxis("left").setScale(10.0 ** -exponent)
    plot.vb.setRange(yRange=_span(*arrays, free=legend_share(plot)), padding=0)
    return exponent


def release_menus(*plots) -> None:
    """Delete pyqtgraph's parentless context menus of these PlotItems (PlotItem.ctrlMenu and
    its submenus, ViewBox.menu): they are top-level widgets that would outlive the window."""
    for plot in plots:
        for menu in [*getattr(plot, "subMenus", []), getattr(plot, "ctrlMenu", None),
                     getattr(plot.vb, "menu", None)]:
            if menu is not None:
                menu.deleteLater()


def _span(*arrays, pad: float = 0.08, free: float = 0.0) -> tuple[float, float]:
    """(low, high) of the values, padded, with the top ``free`` share of the range above
    them all (the legend's band); a flat curve gets a small band around it."""
    finite = [np.asarray(a)[np.isfinite(a)] for a in arrays]
    finite = [a for a in finite if a.size]
    if not finite:  # nothing drawn yet, or a run that left the finite world
        return (-1.0, 1.0)
    lo = min(float(np.min(a)) for a in finite)
    hi = max(float(np.max(a)) for a in finite)
    width = hi - lo
    if width <= 1e-12 * max(abs(lo), abs(hi)) or width == 0.0:
        # a flat curve: a band of 10% around it, or +-1 around zero (no 2e-31 ticks)
        width = abs(hi) * 0.1 if abs(hi) > 1e-300 else 1.0
        bottom, top = lo - width, hi + width
    else:
        bottom, top = lo - pad * width, hi + pad * width
    # hi at (1 - free) of the way up: (hi - bottom) = (1 - free)(top' - bottom)
    top = max(top, bottom + (hi - bottom) / (1.0 - free))
    return bottom, top


class DriftPlots(pg.GraphicsLayoutWidget):
    """Relative energy drift and relative |L| drift of both sides, on a shared time axis.

    Thread: GUI thread.
    """

    def __init__(self, parent=None):
        super().__init__(parent=parent)
        self.window_s: float | None = WINDOWS[DEFAULT_COMPARE_WINDOW]
        self.log_drift = False
        self.ci.layout.setSpacing(2)
        self.ci.setContentsMargins(2, 2, 6, 2)
        self.E_plot = self.addPlot(row=0, col=0)
        self.L_plot = self.addPlot(row=1, col=0)
        setup_plot(self.E_plot, 2)
        setup_plot(self.L_plot, 2)
        self._exponents = (0, 0)
        self.E_plot.getAxis("bottom").setStyle(showValues=False)
        self.L_plot.setLabel("bottom", "simulation time t", units="s")
        self.L_plot.setXLink(self.E_plot)
        self.E_curves = [self.E_plot.plot(pen=_pen(c, 1.8), name=s) for s, c in zip(SIDES, SIDE_COLORS)]
        self.L_curves = [self.L_plot.plot(pen=_pen(c, 1.8), name=s) for s, c in zip(SIDES, SIDE_COLORS)]
        self.curves = self.E_curves + self.L_curves
        self.set_log_drift(False)

    def _titles(self) -> None:
        if self.log_drift:
            set_title(self.E_plot, "log₁₀ |relative energy drift|, (E − E₀)/|E₀|")
            set_title(self.L_plot, "log₁₀ |relative |L| drift|, (|L| − |L₀|)/|L₀|")
        else:
            set_title(self.E_plot, "Relative energy drift (E − E₀)/|E₀|" + _times_title(self._exponents[0]))
            set_title(self.L_plot, "Relative |L| drift (|L| − |L₀|)/|L₀|" + _times_title(self._exponents[1]))

    def set_names(self, names) -> None:
        """Legend entries: ``"A: rk4, dt 1 ms"``..."""
        for plot, curves in ((self.E_plot, self.E_curves), (self.L_plot, self.L_curves)):
            legend = plot.legend
            for curve, name in zip(curves, names):
                legend.removeItem(curve)
                legend.addItem(curve, name)

    def release(self) -> None:
        """Delete the plots' parentless context menus (see :func:`release_menus`)."""
        release_menus(self.E_plot, self.L_plot)

    def set_window(self, label: str) -> None:
        self.window_s = WINDOWS[label]

    def set_log_drift(self, on: bool) -> None:
        self.log_drift = bool(on)
        self._titles()

    def clear_curves(self) -> None:
        for c in self.curves:
            c.setData([], [])

    def refresh(self, histories) -> None:
        """Redraw from the two sides' histories (already windowed and thinned)."""
        ts = [h["t"] for h in histories]
        if all(len(t) == 0 for t in ts):
            self.clear_curves()
            return
        Es, Ls = [], []
        for h, E_curve, L_curve in zip(histories, self.E_curves, self.L_curves):
            t, E, Ln = h["t"], h["E_drift"], h["L_norm_drift"]
            if self.log_drift:
                E = np.log10(np.maximum(np.abs(E), LOG_FLOOR))
                Ln = np.log10(np.maximum(np.abs(Ln), LOG_FLOOR))
            E_curve.setData(t, E, skipFiniteCheck=True)
            L_curve.setData(t, Ln, skipFiniteCheck=True)
            if len(t):
                Es.append(E)
                Ls.append(Ln)
        t0 = min(float(t[0]) for t in ts if len(t))
        t_end = max(float(t[-1]) for t in ts if len(t))
        if self.window_s is None:
            x_range = (t0, max(t_end, t0 + 1e-6))
        else:
            start = max(t0, t_end - self.window_s)
            x_range = (start, start + self.window_s)
        # ranges set before the paint (see PlotsPanel.refresh: no second repaint)
        self.E_plot.vb.setRange(xRange=x_range, padding=0)
        exponents = (fit_y(self.E_plot, *Es, scaled=not self.log_drift),
                     fit_y(self.L_plot, *Ls, scaled=not self.log_drift))
        if exponents != self._exponents:
            self._exponents = exponents
            self._titles()
