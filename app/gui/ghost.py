"""The exact ghost of a window: its control, its pose each frame, and its error plot.

The ghost is the body as the closed-form torque-free solution has it
(:class:`~app.physics.reference.ExactReference`, from the run's start or its last kick),
evaluated on the GUI thread at the displayed time: one closed-form evaluation (about
1 ms) per drawn frame, and at the plot rate one more over the history rows recorded
since the last plot refresh, whose orientation error against the simulated body feeds a
small log-scale plot. Nothing is integrated, so the gap is the integrator's error alone.

Where the closed form does not apply (applied torques or forces), the checkbox is
disabled and its tooltip gives the reason (the message of ``check_exact_applies``).

Calls from the window (GUI thread)::

    ghost = ExactGhost(ghost_scene, parent=window)   # GhostBody (main) or PoinsotGhost
    ghost.pose(snapshot)                 # each drawn frame, before the render
    ghost.refresh_plot(worker, since)    # at the plot rate
    ghost.release()                      # on close
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PyQt5.QtCore import QObject, Qt, pyqtSignal
from PyQt5.QtWidgets import QAction, QCheckBox

from ..physics import quaternion as quat
from ..physics.errors import ParameterError
from ..physics.reference import ExactReference, exact_unavailable_reason
from ..scene.ghost import GHOST_COLOR
from ..scene.style import TEXT_COLOR
from ..simulation.worker import HISTORY_CAPACITY
from .plots import MAX_POINTS

#: errors below this are drawn at it (log scale): round-off of a double in radians
ERROR_FLOOR = 1e-16
#: height of the error plot (px)
PLOT_HEIGHT = 120
#: the error trace keeps at most this many samples (as many as the history holds)
TRACE_CAPACITY = HISTORY_CAPACITY


class ExactGhost(QObject):
    """Checkbox, View-menu action, ghost scene and orientation-error plot.

    Signals (GUI thread): ``toggled(bool)`` when the ghost is switched on or off by the user.
    Published for tests: ``reason`` (None or why the ghost is unavailable), ``reference``
    (the current :class:`ExactReference` or None), ``last_error`` (rad, at the last drawn
    frame), ``trace`` (``(t, error)`` arrays of the plot).
    """

    toggled = pyqtSignal(bool)

    def __init__(self, scene, parent=None, checked: bool = False):
        super().__init__(parent)
        self.scene = scene
        self.reason: str | None = None
        self.reference: ExactReference | None = None
        self.last_error: float | None = None
        self._scenario = None
        self._segment = None
        self._run_id = None
        self._trace_t = np.zeros(0)
        self._trace_err = np.zeros(0)

        self.checkbox = QCheckBox("exact ghost")
        self.checkbox.setChecked(checked)
        self.action = QAction("Exact ghost", parent)
        self.action.setCheckable(True)
        self.action.setChecked(checked)
        self.action.setShortcut("G")
        self.action.setShortcutContext(Qt.WindowShortcut)
        self.checkbox.toggled.connect(self._on_toggled)
        self.action.toggled.connect(self.checkbox.setChecked)
        self.plot = _ErrorPlot()
        self.plot.setVisible(checked)
        self._describe()

    # ------------------------------------------------------------------ state

    @property
    def active(self) -> bool:
        """Checked and available for the scenario shown."""
        return self.checkbox.isChecked() and self.reason is None

    @property
    def trace(self) -> tuple[np.ndarray, np.ndarray]:
        return self._trace_t.copy(), self._trace_err.copy()

    def set_checked(self, on: bool) -> None:
        self.checkbox.setChecked(on)

    def _on_toggled(self, on: bool) -> None:
        self.action.blockSignals(True)
        self.action.setChecked(on)
        self.action.blockSignals(False)
        self._apply_visibility()
        self.toggled.emit(on)

    def _apply_visibility(self) -> None:
        self.scene.set_visible(self.active)
        self.plot.setVisible(self.active)

    def _describe(self) -> None:
        if self.reason is None:
            tip = ("A translucent copy of the body moved by the closed-form torque-free solution from the same "
                   "start (not integrated), with the orientation error between the two plotted (G)")
        else:
            tip = f"Exact ghost unavailable for this scenario: {self.reason}"
        self.checkbox.setEnabled(self.reason is None)
        self.action.setEnabled(self.reason is None)
        self.checkbox.setToolTip(tip)
        self.action.setToolTip(tip)
        self.action.setStatusTip(tip)

    # ------------------------------------------------------------------ each frame

    def pose(self, snap) -> None:
        """Follow ``snap``: rebuild for a new scenario, restart for a new run or kick, and
        pose the ghost at ``snap.t`` when active. Thread: GUI (frame timer)."""
        if snap.scenario is not self._scenario:
            self._scenario = snap.scenario
            self.reason = exact_unavailable_reason(snap.scenario.model)
            self.scene.set_body(snap.scenario.rigid_body)
            self._segment = None
            self._describe()
            self._apply_visibility()
        if snap.run_id != self._run_id:
            self._run_id = snap.run_id
            self._trace_t = np.zeros(0)
            self._trace_err = np.zeros(0)
            self.last_error = None
        start = snap.segment_start
        if self.reason is None and start is not None and start is not self._segment:
            self._segment = start
            try:
                self.reference = ExactReference(snap.scenario.model, start)
            except ParameterError as err:  # defensive: the reason check above says it applies
                self.reference, self.reason = None, str(err)
                self._describe()
                self._apply_visibility()
        if not self.active or self.reference is None:
            return
        s = snap.state
        c, q, w = self.reference.at(s.t)
        self.scene.set_pose(c, q, w)
        self.last_error = float(quat.angle_between(q, s.q))

    def refresh_plot(self, worker, since: float | None) -> None:
        """Extend the error trace with the history recorded since the last call and redraw
        the plot over ``[since, now]`` (None: everything). Thread: GUI (plot refresh)."""
        if not self.active or self.reference is None:
            return
        start_t = self.reference.start.t
        last = self._trace_t[-1] if len(self._trace_t) else -np.inf
        hist = worker.history_since(max(last, start_t))
        t, q = hist["t"], hist["q"]
        new = t > last
        if np.any(new):
            err = self.reference.orientation_error(t[new], q[new])
            self._trace_t = np.concatenate([self._trace_t, t[new]])[-TRACE_CAPACITY:]
            self._trace_err = np.concatenate([self._trace_err, err])[-TRACE_CAPACITY:]
        self.plot.show_trace(self._trace_t, self._trace_err, since, self.last_error)

    def release(self) -> None:
        """Delete pyqtgraph's parentless context menus of the plot (see PlotsPanel.release)."""
        self.plot.release()


class _ErrorPlot(pg.PlotWidget):
    """Orientation error ghost vs body (rad), log scale, over the plots' time window."""

    def __init__(self):
        super().__init__()
        self.setFixedHeight(PLOT_HEIGHT)
        item = self.getPlotItem()
        item.setLogMode(x=False, y=True)
        item.showGrid(x=True, y=True, alpha=0.25)
        item.setMenuEnabled(False)
        item.hideButtons()
        item.setMouseEnabled(x=False, y=False)
        item.disableAutoRange()
        item.getAxis("left").setWidth(58)
        item.getAxis("left").enableAutoSIPrefix(False)
        item.setLabel("left", "rad")
        item.getAxis("bottom").setStyle(showValues=True)
        self.curve = item.plot(pen=pg.mkPen(GHOST_COLOR, width=1.5))
        self._linked = False
        self._title("")

    def link_x(self, plot_item) -> None:
        """Share the time axis of ``plot_item`` (the window's plots): same range, same scroll."""
        self.getPlotItem().setXLink(plot_item)
        self._linked = True

    def _title(self, value: str) -> None:
        self.getPlotItem().setTitle(
            f"<span style='color:{TEXT_COLOR}; font-size:9pt'>Orientation error vs the exact ghost{value}</span>")

    def show_trace(self, t: np.ndarray, err: np.ndarray, since: float | None, now: float | None) -> None:
        if since is not None:
            keep = t >= since
            t, err = t[keep], err[keep]
        if len(t) > MAX_POINTS:
            stride = -(-len(t) // MAX_POINTS)
            t, err = t[::-1][::stride][::-1], err[::-1][::stride][::-1]
        self._title("" if now is None else f": {now:.2g} rad")
        if len(t) == 0:
            self.curve.setData([], [])
            return
        err = np.maximum(err, ERROR_FLOOR)
        self.curve.setData(t, err, skipFiniteCheck=True)
        lo, hi = np.log10(err.min()), np.log10(err.max())
        vb = self.getPlotItem().vb
        if self._linked:
            vb.setRange(yRange=(lo - 0.5, hi + 0.5), padding=0)
        else:
            x0 = float(t[0]) if since is None else max(float(since), float(t[0]))
            vb.setRange(xRange=(x0, max(float(t[-1]), x0 + 1e-6)), yRange=(lo - 0.5, hi + 0.5), padding=0)

    def release(self) -> None:
        item = self.getPlotItem()
        for menu in [*getattr(item, "subMenus", []), getattr(item, "ctrlMenu", None), getattr(item.vb, "menu", None)]:
            if menu is not None:
                menu.deleteLater()
