"""Live plots (pyqtgraph) sharing one time axis: L in the world frame, omega in the body
frame, and the relative drift of E and |L| (optionally as log10 of its magnitude); the
compare view's drifts of its two sides.

Refreshed from the worker's history at the plot rate (not every display frame): the Qt
repaint of plot widgets, not the data, is what costs. GUI thread only.
"""

from __future__ import annotations

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
        # units in the titles: the vertical labels stay short enough for pyqtgraph's
        # "(x1e-06)" multiplier to fit beside a short plot (the Poinsot view's)
        self._setup(self.L_plot, "Angular momentum L, world frame (kg m²/s)", "L")
        self._setup(self.w_plot, "Angular velocity ω, body frame (rad/s)", "ω")
        self._setup(self.d_plot, "Relative drift since t₀ (or the last kick)", "drift")
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
        self._markers: list = []
        self._marker_times: tuple = ()
        self._run_id = None
        self.curves = self.L_curves + [self.L_norm] + self.w_curves + [self.E_curve, self.Ln_curve]

    def _setup(self, plot, title, label):
        plot.setTitle(f"<span style='color:{TEXT_COLOR}; font-size:9pt'>{title}</span>")
        plot.setLabel("left", label)
        plot.showGrid(x=True, y=True, alpha=0.25)
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.setMouseEnabled(x=False, y=False)
        plot.disableAutoRange()
        plot.getAxis("left").setWidth(58)
        legend = plot.addLegend(offset=(-4, 1), labelTextSize="8pt", colCount=4,
                                brush=pg.mkBrush(22, 25, 30, 170), verSpacing=-6)
        legend.setParentItem(plot.vb)

    def release(self) -> None:
        """Delete the plots' parentless context menus (see :func:`release_menus`)."""
        release_menus(self.L_plot, self.w_plot, self.d_plot)

    # ------------------------------------------------------------------ options

    def set_window(self, label: str) -> None:
        """Scroll over the last N s, or ``"all"``."""
        self.window_s = WINDOWS[label]

    def set_log_drift(self, on: bool) -> None:
        self.log_drift = bool(on)
        self.d_plot.setLabel("left", "log₁₀|drift|" if on else "drift")

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
        self.L_plot.vb.setRange(xRange=x_range, yRange=_span(L, np.linalg.norm(L, axis=1)), padding=0)
        self.w_plot.vb.setRange(yRange=_span(w), padding=0)
        self.d_plot.vb.setRange(yRange=_span(E, Ln), padding=0)
        flips = snapshot.flip_times[-MAX_MARKERS:]
        kicks = snapshot.kick_times[-MAX_MARKERS:]
        if (flips, kicks) != self._marker_times:
            self._set_markers(flips, kicks)

    def _set_markers(self, flips, kicks) -> None:
        for m in self._markers:
            self.w_plot.removeItem(m)
        self._markers = []
        for t in flips:
            line = pg.InfiniteLine(pos=t, angle=90, pen=_pen("#f5e663", 1, Qt.DotLine))
            self.w_plot.addItem(line, ignoreBounds=True)
            self._markers.append(line)
        for t in kicks:
            line = pg.InfiniteLine(pos=t, angle=90, pen=_pen("#ff7b72", 1, Qt.DashLine))
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


def release_menus(*plots) -> None:
    """Delete pyqtgraph's parentless context menus of these PlotItems (PlotItem.ctrlMenu and
    its submenus, ViewBox.menu): they are top-level widgets that would outlive the window."""
    for plot in plots:
        for menu in [*getattr(plot, "subMenus", []), getattr(plot, "ctrlMenu", None),
                     getattr(plot.vb, "menu", None)]:
            if menu is not None:
                menu.deleteLater()


def _span(*arrays, pad: float = 0.08, top: float = 0.32) -> tuple[float, float]:
    """(low, high) of the values, padded; the ``top`` band is left free for the legend; a flat
    curve gets a small band around it."""
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
        return (lo - width, hi + 4 * width)
    return (lo - pad * width, hi + top * width)


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
        self._setup(self.E_plot, "Relative energy drift (E − E₀)/|E₀|")
        self._setup(self.L_plot, "Relative |L| drift (|L| − |L₀|)/|L₀|")
        self.E_plot.getAxis("bottom").setStyle(showValues=False)
        self.L_plot.setLabel("bottom", "simulation time t", units="s")
        self.L_plot.setXLink(self.E_plot)
        self.E_curves = [self.E_plot.plot(pen=_pen(c, 1.8), name=s) for s, c in zip(SIDES, SIDE_COLORS)]
        self.L_curves = [self.L_plot.plot(pen=_pen(c, 1.8), name=s) for s, c in zip(SIDES, SIDE_COLORS)]
        self.curves = self.E_curves + self.L_curves
        self.set_log_drift(False)

    def _setup(self, plot, title):
        plot.setTitle(f"<span style='font-size:9pt'>{title}</span>")
        plot.showGrid(x=True, y=True, alpha=0.25)
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.setMouseEnabled(x=False, y=False)
        plot.disableAutoRange()
        plot.getAxis("left").setWidth(58)
        legend = plot.addLegend(offset=(-4, 1), labelTextSize="8pt", colCount=2,
                                brush=pg.mkBrush(22, 25, 30, 170), verSpacing=-6)
        legend.setParentItem(plot.vb)

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
        label = "log₁₀|drift|" if on else "drift"
        self.E_plot.setLabel("left", label)
        self.L_plot.setLabel("left", label)

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
        self.E_plot.vb.setRange(xRange=x_range, yRange=_span(*Es), padding=0)
        self.L_plot.vb.setRange(yRange=_span(*Ls), padding=0)
