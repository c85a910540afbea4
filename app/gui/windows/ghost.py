"""The exact ghost of a window: its control, its pose each frame, and its error plot.

The ghost is the body as the closed-form torque-free solution has it
(:class:`~app.physics.reference.ExactReference`, from the run's start or its last kick),
evaluated on the GUI thread at the displayed time. Its actors are the view's own ghost
(``ViewScene.ghosts[0]``), posed by the view's ``pose`` as in an export: this object hands
the view its reference. One closed-form evaluation costs about 1 ms for one time or a few
hundred (vectorised), so it is made for the record times ahead of the display, and both the
drawn frames and the error plot (the history rows recorded since its last refresh) read them
from that cache; the orientation error feeds a small plot of its log10. Nothing is
integrated, so the gap is the integrator's error alone.

Where the closed form does not apply (applied torques or forces), the checkbox is
disabled, shown unticked, and its tooltip gives the reason (the message of
``check_exact_applies``). A body whose only loads are drags (one made by ``tumble fit``) has
the ghost of the same body without its drag (:func:`~app.views.base.ghost_scenario`): the
throw in a vacuum beside the run slowed by the air, and the plot then shows the gap drag makes.

Calls from the window (GUI thread)::

    ghost = ExactGhost(view, parent=window)        # the window's ViewScene (its ghost: GhostBody, PoinsotGhost)
    ghost.attach_plot(plots_panel, row, link_to)   # its error plot: a row of the plots
    ghost.follow(snapshot)               # each drawn frame, before view.pose
    ghost.measure(snapshot)              # after it: the error at the drawn time
    ghost.refresh_plot(worker, since)    # at the plot rate
    ghost.release()                      # on close
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pyqtgraph as pg
from PyQt5.QtCore import QObject, Qt, pyqtSignal
from PyQt5.QtWidgets import QAction, QCheckBox

from ...scene.palette import tone
from ...physics import quaternion as quat
from ...physics.errors import ParameterError
from ...physics.reference import ExactReference, exact_unavailable_reason
from ...scene.ghost import GHOST_COLOR
from ...simulation.worker import HISTORY_CAPACITY, RECORD_INTERVAL_S, record_steps
from ...views.base import ghost_scenario, ghost_without_drag
from ..plots.live_plots import AXIS_WIDTH, MAX_POINTS, PLOT_VIEW_MIN_PX, release_menus, set_title

#: errors below this are drawn at it (log scale): round-off of a double in radians
ERROR_FLOOR = 1e-16
#: most height of the error plot (px): its title, 90 px of curve and its time axis
PLOT_HEIGHT = 150
#: the error trace keeps at most this many samples (as many as the history holds)
TRACE_CAPACITY = HISTORY_CAPACITY
#: one closed-form evaluation costs about 1 ms whatever the number of times (vectorised), so
#: it is made for the record times ahead of the display, this much wall time of them
LOOKAHEAD_WALL_S = 0.3
#: ... at least and at most this many record times per evaluation
LOOKAHEAD_MIN, LOOKAHEAD_MAX = 8, 512
#: cached times are keyed to this resolution (s): record times repeat exactly up to round-off
CACHE_QUANTUM_S = 1e-7
#: the cache is pruned to the times still ahead once it holds this many
CACHE_LIMIT = 4096


class ExactGhost(QObject):
    """Checkbox, View-menu action, ghost scene and orientation-error plot.

    Signals (GUI thread): ``toggled(bool)`` when the ghost is switched on or off by the user.
    Published for tests: ``reason`` (None or why the ghost is unavailable), ``reference``
    (the current :class:`ExactReference` or None), ``last_error`` (rad, at the last drawn
    frame), ``trace`` (``(t, error)`` arrays of the plot).
    """

    toggled = pyqtSignal(bool)
    #: the ghost's row of the window's colour key
    legend_rows = (("exact ghost: the closed form (when on)", GHOST_COLOR),)

    def __init__(self, view, parent=None, checked: bool = False):
        super().__init__(parent)
        self.view = view
        self.scene = view.ghosts[0]
        self._scenario = view.scenarios[0]
        self.reason: str | None = exact_unavailable_reason(ghost_scenario(self._scenario).model)
        self.reference: ExactReference | None = None
        self.last_error: float | None = None
        self._segment = None
        self._run_id = None
        self._trace_t = np.zeros(0)
        self._trace_err = np.zeros(0)

        self._wanted = bool(checked)
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
        self.plot.hide()
        self._panel = None
        self._row = None
        self._cache: dict = {}
        self._record_dt = RECORD_INTERVAL_S
        self._lookahead = LOOKAHEAD_MIN
        self._cached = SimpleNamespace(at=self._at)  # the reference the view poses the ghost from
        self._describe()

    # ------------------------------------------------------------------ state

    @property
    def active(self) -> bool:
        """Checked and available for the scenario shown."""
        return self._wanted and self.reason is None

    @property
    def trace(self) -> tuple[np.ndarray, np.ndarray]:
        return self._trace_t.copy(), self._trace_err.copy()

    def set_checked(self, on: bool) -> None:
        self.checkbox.setChecked(on)

    @property
    def wanted(self) -> bool:
        """Whether the user wants the ghost (kept while a scenario cannot have it)."""
        return self._wanted

    def _on_toggled(self, on: bool) -> None:
        self._wanted = on
        self.action.blockSignals(True)
        self.action.setChecked(on)
        self.action.blockSignals(False)
        self._apply_visibility()
        self.toggled.emit(on)

    def attach_plot(self, panel, row: int, link_to) -> None:
        """Show the error plot as row ``row`` of ``panel`` (a pyqtgraph GraphicsLayoutWidget)
        while the ghost is on, sharing the time axis of ``link_to``."""
        self._panel, self._row = panel, row
        self.plot.link_x(link_to)
        self._apply_visibility()

    def _apply_visibility(self) -> None:
        on = self.active
        try:
            self.view.set_ghost_visible(on)
        except ParameterError:  # defensive: ``reason`` says the closed form applies
            self.view.set_ghost_visible(False)
        if self._panel is None:
            return
        shown = self.plot.scene() is not None and self.plot.isVisible()
        if on and not shown:
            self._panel.ci.addItem(self.plot, row=self._row, col=0)
            self.plot.show()
        elif not on and shown:
            self._panel.ci.removeItem(self.plot)
            self.plot.hide()
        else:
            return
        fit = getattr(self._panel, "fit_min_height", None)
        if fit is not None:  # the panel asks for the room its rows need, this one's included
            fit()

    @property
    def without_drag(self) -> bool:
        """Whether the ghost leaves out the scenario's drag (a fitted throw's: see the module)."""
        return ghost_without_drag(self._scenario)

    def _describe(self) -> None:
        if self.reason is None and self.without_drag:
            tip = ("A translucent copy of the same body without its drag, moved by the closed-form torque-free "
                   "solution from the same start: the throw in a vacuum; the plot shows how far the air turns "
                   "the body away from it (G)")
        elif self.reason is None:
            tip = ("A translucent copy of the body moved by the closed-form torque-free solution from the same "
                   "start (not integrated), with the orientation error between the two plotted (G)")
        else:
            tip = f"Exact ghost unavailable: this scenario has {self.reason}"
        # greyed out, it does not look ticked: the choice is kept for a scenario it applies to
        self.checkbox.blockSignals(True)
        self.checkbox.setChecked(self._wanted if self.reason is None else False)
        self.checkbox.blockSignals(False)
        self.action.blockSignals(True)
        self.action.setChecked(self.checkbox.isChecked())
        self.action.blockSignals(False)
        if self.plot.without_drag != self.without_drag:
            self.plot.without_drag = self.without_drag
            self.plot.retitle()
        self.checkbox.setEnabled(self.reason is None)
        self.action.setEnabled(self.reason is None)
        self.checkbox.setToolTip(tip)
        self.action.setToolTip(tip)
        self.action.setStatusTip(tip)

    # ------------------------------------------------------------------ each frame

    def follow(self, snap) -> None:
        """Follow ``snap`` before the view is posed: a new scenario (the view rebuilt the
        ghost's body), a new run or kick restarts the closed form, which the view then poses
        from this cache. Thread: GUI (frame timer)."""
        if snap.scenario is not self._scenario:
            self._scenario = snap.scenario
            self.reason = exact_unavailable_reason(ghost_scenario(snap.scenario).model)
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
            self._cache.clear()
            try:
                self.reference = ExactReference(ghost_scenario(snap.scenario).model, start)
            except ParameterError as err:  # defensive: the reason check above says it applies
                self.reference, self.reason = None, str(err)
                self._describe()
        if self.reference is not None and self.view.references[0] is not self._cached:
            self.view.set_ghost_reference(0, self._cached)  # after a new segment, or the view's show
        if self.view.ghost_visible != self.active:
            self._apply_visibility()
        dt = snap.scenario.solver.dt
        self._record_dt = record_steps(dt, snap.speed) * dt  # the worker's sample spacing
        self._lookahead = int(np.clip(LOOKAHEAD_WALL_S * snap.speed / self._record_dt, LOOKAHEAD_MIN, LOOKAHEAD_MAX))

    def measure(self, snap) -> None:
        """After the view is posed at ``snap.t``: the orientation error of the run there."""
        if self.view.ghost_visible and self.reference is not None:
            _, q, _ = self._exact(np.array([snap.t]))
            self.last_error = float(quat.angle_between(q[0], snap.state.q))

    def _at(self, t: float):
        """The closed form's ``(c, q, w)`` at ``t``, from the cache (what the view poses)."""
        c, q, w = self._exact(np.array([float(t)]), self._lookahead)
        return c[0], q[0], w[0]

    def _exact(self, times: np.ndarray, lookahead: int = 0):
        """``(c, q, w)`` of the closed form at ``times`` (n,), from the cache where it has
        them; what it lacks is evaluated in one call together with ``lookahead`` record times
        after the last of ``times``."""
        keys = np.round(times / CACHE_QUANTUM_S).astype(np.int64).tolist()
        missing = [i for i, k in enumerate(keys) if k not in self._cache]
        if missing:
            need = times[missing]
            fill = np.concatenate([need, need[-1] + self._record_dt * np.arange(1, lookahead + 1)])
            c, q, w = self.reference.at(fill)
            if len(self._cache) > CACHE_LIMIT:
                oldest = min(keys)
                self._cache = {k: v for k, v in self._cache.items() if k >= oldest}
            for k, row in zip(np.round(fill / CACHE_QUANTUM_S).astype(np.int64).tolist(), zip(c, q, w)):
                self._cache[k] = row
        rows = [self._cache[k] for k in keys]
        return tuple(np.array([r[j] for r in rows]) for j in range(3))

    def refresh_plot(self, worker, since: float | None) -> None:
        """Extend the error trace with the history recorded since the last call and redraw
        the plot over ``[since, now]`` (None: everything). Thread: GUI (plot refresh)."""
        if not self.active or self.reference is None:
            return
        start_t = self.reference.start.t
        last = self._trace_t[-1] if len(self._trace_t) else -np.inf
        hist = worker.span(max(last, start_t))
        t, q = hist["t"], hist["q"]
        new = t > last
        if np.any(new):
            _, q_exact, _ = self._exact(t[new])
            err = quat.angle_between(q_exact, q[new])
            self._trace_t = np.concatenate([self._trace_t, t[new]])[-TRACE_CAPACITY:]
            self._trace_err = np.concatenate([self._trace_err, err])[-TRACE_CAPACITY:]
        self.plot.show_trace(self._trace_t, self._trace_err, since, self.last_error)

    def release(self) -> None:
        """Delete pyqtgraph's parentless context menus of the plot (see PlotsPanel.release)."""
        self.plot.release()


class _ErrorPlot(pg.PlotItem):
    """Orientation error ghost vs body, as log10 of radians, over the plots' time window: a
    row of the window's plot panel (one widget repainted once, not a second one beside it).

    The log is taken here and plotted on a linear axis, as the drift plot's log option does:
    pyqtgraph's own log mode re-lays its tick labels at every change of the linked time
    range, which halved the whole window's frame rate in software GL (measured 19 -> 9 fps).
    """

    def __init__(self):
        super().__init__()
        self.setMaximumHeight(PLOT_HEIGHT)
        self.vb.setMinimumHeight(PLOT_VIEW_MIN_PX)
        self.showGrid(x=True, y=True, alpha=0.25)
        self.setMenuEnabled(False)
        self.hideButtons()
        self.setMouseEnabled(x=False, y=False)
        self.disableAutoRange()
        self.getAxis("left").setWidth(AXIS_WIDTH)
        self.getAxis("left").enableAutoSIPrefix(False)
        self.getAxis("left").showLabel(False)  # what the numbers are is in the title
        # no time axis of its own: it sits under the drift plot's, which it shares (the room
        # is what keeps every row's curves PLOT_VIEW_MIN_PX tall on a 1280x720 screen)
        self.getAxis("bottom").setStyle(showValues=False)
        self.curve = self.plot(pen=pg.mkPen(tone(GHOST_COLOR), width=1.5))
        self.without_drag = False
        self._linked = False
        self._shown_value = None
        self._title("")

    def link_x(self, plot_item) -> None:
        """Share the time axis of ``plot_item`` (the window's plots): same range, same scroll."""
        self.setXLink(plot_item)
        self._linked = True

    def retitle(self) -> None:
        """Say again what the plot shows (the ghost changed its kind)."""
        value, self._shown_value = self._shown_value or "", None
        self._title(value)

    def _title(self, value: str) -> None:
        if value != self._shown_value:
            self._shown_value = value
            # short enough to stay whole over a plot 400 px wide (a projector's 1280x720)
            what = "log₁₀ angle to the ghost without drag" if self.without_drag else "log₁₀ orientation error vs ghost"
            set_title(self, f"{what}{value or ' (rad)'}")

    def show_trace(self, t: np.ndarray, err: np.ndarray, since: float | None, now: float | None) -> None:
        if since is not None:
            keep = t >= since
            t, err = t[keep], err[keep]
        if len(t) > MAX_POINTS:
            stride = -(-len(t) // MAX_POINTS)
            t, err = t[::-1][::stride][::-1], err[::-1][::stride][::-1]
        self._title("" if now is None else f": {now:.1e} rad")  # the title says the unit
        if len(t) == 0:
            self.curve.setData([], [])
            return
        log_err = np.log10(np.maximum(err, ERROR_FLOOR))
        self.curve.setData(t, log_err, skipFiniteCheck=True)
        lo, hi = float(log_err.min()), float(log_err.max())
        if self._linked:
            self.vb.setRange(yRange=(lo - 0.5, hi + 0.5), padding=0)
        else:
            x0 = float(t[0]) if since is None else max(float(since), float(t[0]))
            self.vb.setRange(xRange=(x0, max(float(t[-1]), x0 + 1e-6)), yRange=(lo - 0.5, hi + 0.5), padding=0)

    def release(self) -> None:
        release_menus(self)
