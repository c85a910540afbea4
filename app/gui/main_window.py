"""The main window: parameter dock, 3D scene, polhode view, live plots, controls, status bar.

Data flow (one QTimer parented to the window, GUI thread)::

    SimulationWorker (thread)  --latest()/history_since()-->  _on_frame (every display frame)
        ├── new scenario?  -> RigidBodyScene.set_body / PolhodeScene.set_body / plots.clear
        ├── new snapshot?  -> RigidBodyScene.set_pose  -> scene widget update() (one render)
        ├── plot period?   -> PlotsPanel.refresh, PolhodeScene.set_omega   (PLOT_INTERVAL_S)
        └── status period? -> status bar labels                             (STATUS_INTERVAL_S)

Commands go the other way as worker method calls (queued, applied at step boundaries).
"""

from __future__ import annotations

import time
import traceback
from pathlib import Path

import numpy as np
from PyQt5.QtCore import QByteArray, Qt, QTimer, pyqtSignal
from PyQt5.QtWidgets import (
    QApplication,
    QCheckBox,
    QDockWidget,
    QLabel,
    QMainWindow,
    QMessageBox,
    QSplitter,
    QWidget,
)
from pyvistaqt import QtInteractor

from ..export.data import export_view_png
from ..physics.errors import DivergenceError, ParameterError
from ..physics.integrators import simulate
from ..scenario import Scenario, load, preset_names, save
from ..scene import PolhodeScene, RigidBodyScene
from ..scene.body_scene import LEGEND, TRAIL_POINTS
from ..scene.ghost import GhostBody
from ..simulation import MAX_SPEED, MIN_SPEED, SimulationWorker
from ..simulation.table import trajectory_table, write_table
from ..simulation.worker import RECORD_INTERVAL_S
from . import settings as keys
from .describe import period_text
from .file_dialogs import file_stem, open_path, save_path
from .ghost import ExactGhost
from .gyro_editor import PartsStatus
from .panel import ParameterPanel
from .plots import DEFAULT_WINDOW, MAX_POINTS, PlotsBox, PlotsPanel
from .heap import return_large_blocks
from .theme import configure_pyqtgraph
from .window_parts import (CameraFitter, RepeatToggle, SpeedControl, add_action, add_status_labels, legend_html,
                           overlay_label, same_start, save_window_png, show_run_state)
from .theory_panel import TheoryPanel

#: display frame timer period (ms): ~60 Hz requested; the scene renders only on news
FRAME_INTERVAL_MS = 16
#: plots refresh at this period (s): 10 Hz, slower than the scene (their Qt repaint is the cost)
PLOT_INTERVAL_S = 1.0 / 10.0
#: the polhode view renders at this period (s): omega moves slowly on the ellipsoid
POLHODE_INTERVAL_S = 1.0 / 5.0
#: status bar refresh period (s)
STATUS_INTERVAL_S = 0.25
#: the fps figure is measured over this window (s)
FPS_WINDOW_S = 1.0
#: the worker starts with the first frame, or after this long if no frame is drawn (ms)
WORKER_START_FALLBACK_MS = 3000
#: how long a status-bar message (a file written) stays (ms)
STATUS_MESSAGE_MS = 8000
#: the parameter dock's width at start (px); a layout the user saved wins
DOCK_WIDTH = 380
#: default window size (px)
DEFAULT_SIZE = (1440, 900)


class MainWindow(QMainWindow):
    """The Tumble main window (view ``main``).

    Signals (GUI thread): ``first_frame_drawn(float)`` with ``time.perf_counter()`` of the
    first completed scene render; ``simulation_failed(str)`` when the worker reports an error.
    """

    first_frame_drawn = pyqtSignal(float)
    simulation_failed = pyqtSignal(str)

    #: the window title after the scenario's name
    VIEW_TITLE = "Tumble"

    def __init__(self, scenario: Scenario, *, preset: str | None = None, paused: bool = False,
                 persist: bool = True, source: str | None = None, parent=None):
        super().__init__(parent)
        configure_pyqtgraph()
        return_large_blocks()  # resizes reallocate the render windows' buffers
        self.persist = persist
        self.frames_drawn = 0
        self.first_frame_time: float | None = None
        self._frame_times: list[float] = []
        self._fps = 0.0
        self._last_plot = 0.0
        self._last_polhode = 0.0
        self._last_status = 0.0
        self._drawn_serial = -1
        self._shown_scenario = None
        self._shown_run = None
        self._shown_kicks = 0
        self._error_serial = 0
        self._closing = False
        self._frame_failed = False
        stored = keys.open_settings()
        self.setWindowTitle(self.VIEW_TITLE)
        self.resize(*DEFAULT_SIZE)

        # --- central area: scene | (plots over polhode)
        self.scene_view = QtInteractor(self, multi_samples=0, auto_update=False)
        self.scene_view.setMinimumSize(360, 300)
        self.scene = self._make_scene(self.scene_view, follow=stored.value(keys.FOLLOW, True, type=bool),
                                      trail=stored.value(keys.TRAIL, True, type=bool))
        self.camera_fitter = CameraFitter(self, self.scene_view)  # a resize re-fits an untouched camera
        self.ghost = ExactGhost(self._make_ghost_scene(self.scene_view), parent=self,
                                checked=stored.value(keys.GHOST, False, type=bool))
        self.ghost.toggled.connect(self._ghost_toggled)
        self._legend_rows = getattr(self.scene, "legend_rows", LEGEND) + self.ghost.legend_rows
        self.legend = self._legend_overlay(self.scene_view, self._legend_rows)
        self.scene_view.add_axes(color="#c9d1d9", line_width=2, labels_off=False)
        self.plots = PlotsPanel()
        self.polhode_view = QtInteractor(self, multi_samples=0, auto_update=False)
        self.polhode_view.setMinimumSize(200, 180)
        self.polhode = self._make_polhode(self.polhode_view)
        right = QSplitter(Qt.Vertical)
        right.addWidget(self._plots_box())
        right.addWidget(self.polhode_view)
        right.setStretchFactor(0, 3)
        right.setStretchFactor(1, 1)
        right.setSizes([620, 240])
        self.splitter = QSplitter(Qt.Horizontal)
        self.splitter.addWidget(self.scene_view)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setSizes([640, 440])
        self.setCentralWidget(self.splitter)

        # --- parameter dock
        self.panel = ParameterPanel()
        self.panel.set_scenario(scenario, preset=preset, source=source)
        self.panel.scenario_applied.connect(self.apply_scenario)
        self.dock = QDockWidget("Parameters", self)
        self.dock.setObjectName("parameters")
        self.dock.setFeatures(QDockWidget.DockWidgetMovable | QDockWidget.DockWidgetFloatable)
        self.dock.setWidget(self.panel)
        self.dock.setMinimumWidth(300)
        self.addDockWidget(Qt.LeftDockWidgetArea, self.dock)
        # its contents' size hint would take 540 px and push the plots off a 1280 px window
        self.resizeDocks([self.dock], [DOCK_WIDTH], Qt.Horizontal)
        self.theory = TheoryPanel()  # predicted / observed, under the parameters
        self.theory_dock = QDockWidget("Theory: predicted / observed", self)
        self.theory_dock.setObjectName("theory")
        self.theory_dock.setWidget(self.theory)
        self.addDockWidget(Qt.LeftDockWidgetArea, self.theory_dock)

        # --- the worker
        speed = min(max(stored.value(keys.SPEED, 1.0, type=float), MIN_SPEED), MAX_SPEED)
        repeat = stored.value(keys.REPEAT, False, type=bool)
        self.worker = SimulationWorker(scenario, running=not paused, speed=speed, repeat=repeat)
        self.repeat = RepeatToggle(self, repeat, self.worker.set_repeat)

        self._build_actions()
        self._build_toolbar(speed)
        self._build_menus()
        self._build_status()
        self._restore(stored)
        keys.show_notes(self.statusBar())  # values in the settings file that could not be read

        self._show_scenario(self.worker.latest())  # the first frame already shows the body
        render_window = self.scene_view.ren_win
        render_window.AddObserver("EndEvent", self._on_rendered)

        self.frame_timer = QTimer(self)
        self.frame_timer.setTimerType(Qt.PreciseTimer)
        self.frame_timer.timeout.connect(self._on_frame)
        self.frame_timer.start(FRAME_INTERVAL_MS)
        # the worker starts with the first drawn frame: loading its compiled kernels would
        # otherwise compete with the first paint for the one interpreter lock
        self._worker_fallback = QTimer(self)  # a child: it cannot outlive the window
        self._worker_fallback.setSingleShot(True)
        self._worker_fallback.timeout.connect(self._start_worker)
        self._worker_fallback.start(WORKER_START_FALLBACK_MS)
        self._first_frame_timer = QTimer(self)
        self._first_frame_timer.setSingleShot(True)
        self._first_frame_timer.timeout.connect(lambda: self.first_frame_drawn.emit(self.first_frame_time))

    def _start_worker(self) -> None:
        """Start the simulation thread once (GUI thread)."""
        if not self._closing and not self.worker.is_alive() and self.worker.ident is None:
            self.worker.start()

    # ------------------------------------------------------------------ construction

    # hooks a view built on this window overrides (the Poinsot view swaps the scenes)

    def _make_scene(self, plotter, *, follow: bool, trail: bool):
        """The 3D scene drawn in the left view (interface of :class:`RigidBodyScene`)."""
        return RigidBodyScene(plotter, follow=follow, trail=trail, legend=False)

    def _make_ghost_scene(self, plotter):
        """The exact ghost's actors, in the same plotter as the scene."""
        return GhostBody(plotter)

    def _make_polhode(self, plotter):
        """The small view under the plots (interface of :class:`PolhodeScene`)."""
        return PolhodeScene(plotter)

    def _pose_scene(self, snap) -> None:
        """Pose the scene for ``snap`` (one drawn frame), with the trail from the history."""
        trail_q = trail_c = None
        if self.scene.trail_visible:
            recent = self.worker.history_since(snap.t - TRAIL_POINTS * RECORD_INTERVAL_S, TRAIL_POINTS)
            trail_q, trail_c = recent["q"], recent["c"]
        s = snap.state
        self.scene.set_pose(s.c, s.q, s.w, snap.L, trail_q=trail_q, trail_c=trail_c)

    @staticmethod
    def _legend_html(legend, loaded: bool = False) -> str:
        """The key's rows; with applied torques or forces L is not fixed in space, and the
        key says so instead."""
        say = "(turned by the applied loads)" if loaded else "(fixed in space)"
        return legend_html((text.replace("(fixed in space)", say), color) for text, color in legend)

    @classmethod
    def _legend_overlay(cls, parent, legend=LEGEND) -> QLabel:
        """The colour key as a Qt label over the scene: crisp text, no render cost."""
        return overlay_label(parent, cls._legend_html(legend))

    def _plots_box(self) -> QWidget:
        stored = keys.open_settings().value(keys.PLOT_WINDOW, DEFAULT_WINDOW, type=str)
        box = PlotsBox(self.plots, stored, "Scroll over the last seconds of simulated time, or show the whole history",
                       "Plot the drift as log10 of its magnitude (round-off shows as ~-16)")
        self.window_combo, self.log_drift = box.window_combo, box.log_drift
        self.plots.set_window(self.window_combo.currentText())
        self.window_combo.currentTextChanged.connect(self._window_changed)
        self.log_drift.toggled.connect(self._log_changed)
        self.ghost.attach_plot(self.plots, row=3, link_to=self.plots.L_plot)  # a row under the drifts
        return box

    def _build_actions(self) -> None:
        def action(text, slot, shortcut=None, tip=""):
            return add_action(self, text, slot, shortcut, tip)

        self.play_action = action("Pause", self.toggle_play, "Space", "Play or pause the simulation")
        self.step_action = action("Step", self.worker.step, "S", "Pause and advance one frame")
        self.reset_action = action("Reset", self.reset, "R", "Back to the initial state")
        self.kick_action = action("Kick", self.kick, "K",
                                  "A small angular impulse about the principal axis least aligned with ω")
        self.open_action = action("Open scenario…", self.open_scenario, "Ctrl+O", "Load a scenario TOML file")
        self.save_action = action("Save scenario as…", self.save_scenario, "Ctrl+S", "Write the running scenario as TOML")
        self.shot_action = action("Save screenshot…", self.save_screenshot_dialog, "Ctrl+P", "Save the window as PNG")
        self.export_action = action("Export animation…", self.export_animation_dialog, "Ctrl+E",
                                    "Re-simulate the scenario off screen into an MP4, a GIF or PNG frames")
        self.data_action = action("Export trajectory…", self.export_trajectory_dialog, "Ctrl+Shift+E",
                                  "Re-simulate the scenario from its start and write the tumble simulate "
                                  "columns, one row per step, as CSV or NPZ")
        self.import_action = action("Import recording…", self.import_recording_dialog, None,
                                    "Fit a gyroscope recording of throws (phyphox or CSV) and replay its flights")
        self.view_png_action = action("Save 3D view as PNG…", self.save_view_dialog, None,
                                      "Save what the 3D scene shows now, without the panels")
        self.quit_action = action("Quit", self.close, "Ctrl+Q", "Close the window")
        self.camera_action = action("Reset camera", self._reset_camera, "C", "Look at the body from the default direction")

    def _build_toolbar(self, speed: float) -> None:
        tb = self.addToolBar("Playback")
        tb.setObjectName("playback")
        tb.setMovable(False)
        for a in (self.play_action, self.step_action, self.reset_action, self.kick_action):
            tb.addAction(a)
        tb.addWidget(self.repeat.checkbox)
        tb.addSeparator()
        self.speed_control = SpeedControl(tb, speed, self.worker.set_speed,
                                          "Playback speed, 0.1× to 10× real time (log scale)")
        self.speed_slider = self.speed_control.slider
        tb.addSeparator()
        self.follow_box = QCheckBox("follow")
        self.follow_box.setToolTip("Camera follows the centre of mass")
        self.follow_box.setChecked(self.scene.follow)
        self.follow_box.toggled.connect(self.scene.set_follow)
        tb.addWidget(self.follow_box)
        self.trail_box = QCheckBox("trail")
        self.trail_box.setToolTip("Path of the intermediate axis' tip over the last seconds")
        self.trail_box.setChecked(self.scene.trail_visible)
        self.trail_box.toggled.connect(self._trail_toggled)
        tb.addWidget(self.trail_box)
        tb.addWidget(self.ghost.checkbox)
        tb.addAction(self.camera_action)

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        presets_menu = file_menu.addMenu("Presets")
        for name in preset_names():
            presets_menu.addAction(name, lambda n=name: self.load_preset(n))
        for a in (self.open_action, self.save_action, self.import_action, None, self.export_action,
                  self.data_action, None,
                  self.shot_action, self.view_png_action, None, self.quit_action):
            file_menu.addSeparator() if a is None else file_menu.addAction(a)
        self.file_menu = file_menu
        sim = bar.addMenu("&Simulation")
        for a in (self.play_action, self.step_action, self.reset_action, self.kick_action):
            sim.addAction(a)
        sim.addSeparator()
        sim.addAction(self.repeat.action)
        view = bar.addMenu("&View")
        view.addAction(self.camera_action)
        view.addAction(self.dock.toggleViewAction())
        view.addAction(self.theory_dock.toggleViewAction())
        view.addAction(self.ghost.action)
        self.addAction(self.ghost.action)

    def _build_status(self) -> None:
        self.status_labels, self.error_label = add_status_labels(self, (
            ("time", "simulated time"), ("rtf", "simulated seconds per wall-clock second"),
            ("fps", "scene frames drawn per second"), ("steps", "integrator steps per second"),
            ("flips", "reversals of the intermediate-axis component of ω"),
            ("period", "closed-form time between flips")))
        self.parts_status = PartsStatus()  # a damper's nutation and energy, a rotor's wander
        self.statusBar().addPermanentWidget(self.parts_status)

    def _restore(self, stored) -> None:
        geometry = stored.value(keys.GEOMETRY, QByteArray(), type=QByteArray)
        state = stored.value(keys.WINDOW_STATE, QByteArray(), type=QByteArray)
        if self.persist and not geometry.isEmpty():
            self.restoreGeometry(geometry)
        if self.persist and not state.isEmpty():
            self.restoreState(state)

    # ------------------------------------------------------------------ commands (GUI thread)

    def apply_scenario(self, scenario: Scenario) -> None:
        """Restart the run with ``scenario`` (already validated by the panel)."""
        self.worker.apply(scenario)
        self.error_label.setText("")

    def load_preset(self, name: str) -> None:
        sc = load(name)
        self.panel.set_scenario(sc, preset=name)
        self.apply_scenario(sc)

    def toggle_play(self) -> None:
        self.worker.toggle()

    def reset(self) -> None:
        self.worker.reset()
        self.error_label.setText("")

    def kick(self) -> None:
        self.worker.kick()

    def set_speed(self, speed: float) -> None:
        self.speed_control.set_speed(speed)

    def set_repeat(self, on: bool) -> None:
        """Start again at the end of the run (True) or pause there (False)."""
        self.repeat.checkbox.setChecked(on)

    def _trail_toggled(self, on: bool) -> None:
        self.scene.set_trail_visible(on)
        self._drawn_serial = -1

    def _ghost_toggled(self, _on: bool) -> None:
        self._drawn_serial = -1  # pose (or hide) it at once, even when paused
        self._last_plot = 0.0

    def _window_changed(self, label: str) -> None:
        self.plots.set_window(label)
        self._last_plot = self._last_polhode = 0.0

    def _log_changed(self, on: bool) -> None:
        self.plots.set_log_drift(on)
        self._last_plot = 0.0

    def _reset_camera(self) -> None:
        self.scene.reset_camera(self.worker.latest().state.c)
        self.scene_view.update()

    def open_scenario(self) -> None:
        path = open_path(self, "Open scenario", "Scenario (*.toml);;All files (*)")
        if not path:
            return
        try:
            sc = load(path)
        except ParameterError as err:
            QMessageBox.warning(self, "Scenario not loaded", str(err))
            return
        self.panel.set_scenario(sc, source=path)
        self.apply_scenario(sc)

    def save_scenario(self) -> None:
        sc = self.panel.scenario
        default = f"{file_stem(sc.name)}.toml" if sc else "scenario.toml"
        path, _ = save_path(self, "Save scenario", default, "Scenario (*.toml)")
        if not path:
            return
        try:
            save(sc, path)
        except OSError as err:
            QMessageBox.warning(self, "Scenario not saved", f"{path}: {err.strerror or err}")
            return
        self.statusBar().showMessage(f"Saved the scenario to {path}", STATUS_MESSAGE_MS)

    #: ``tumble export`` arguments that choose this window's view, and its name (main: none)
    EXPORT_VIEW_ARGS: tuple = ()
    EXPORT_VIEW_NAME: str | None = None

    def export_animation_dialog(self):
        """File > Export animation...: the export dialog for the scenario running now."""
        from .export_dialog import ExportDialog

        return ExportDialog.open_for(self, self.panel.scenario, self.statusBar(), view_args=self.EXPORT_VIEW_ARGS,
                                     view_name=self.EXPORT_VIEW_NAME)

    def import_recording_dialog(self):
        """File > Import recording...: fit a recording of throws; its flights replay here."""
        from .recording_dialog import open_for

        return open_for(self)

    def export_trajectory_dialog(self) -> None:
        sc = self.panel.scenario
        default = f"{file_stem(sc.name)}.csv"
        path, chosen = save_path(self, "Export trajectory", default, "CSV table (*.csv);;NumPy arrays (*.npz)")
        if not path:
            return
        if Path(path).suffix.lower() not in (".csv", ".npz"):
            path += ".npz" if "npz" in chosen else ".csv"
        try:
            rows = self.export_trajectory(path)
        except (OSError, ParameterError, DivergenceError) as err:
            QMessageBox.warning(self, "Trajectory not exported", f"{path}: {getattr(err, 'strerror', None) or err}")
            return
        self.statusBar().showMessage(f"Wrote {path}: {rows} rows", STATUS_MESSAGE_MS)

    def export_trajectory(self, path) -> int:
        """Re-simulate the running scenario from its start (as ``tumble simulate`` does, one
        row per step) and write its table to ``path`` (.csv or .npz) atomically; returns the
        row count. GUI thread: a run of the usual length takes a fraction of a second."""
        sc = self.panel.scenario
        solver = sc.solver
        QApplication.setOverrideCursor(Qt.WaitCursor)
        try:
            traj = simulate(sc.model, sc.initial_state, solver.integrator, solver.dt, solver.duration,
                            **solver.options)
            write_table(path, trajectory_table(sc, traj))
        finally:
            QApplication.restoreOverrideCursor()
        return len(traj)

    def save_view_dialog(self) -> None:
        path, _ = save_path(self, "Save 3D view", "tumble-view.png", "PNG image (*.png)")
        if path:
            try:
                export_view_png(self.scene_view, path)
            except OSError as err:
                QMessageBox.warning(self, "View not saved", f"{path}: {err.strerror or err}")
                return
            self.statusBar().showMessage(f"Saved the 3D view to {path}", STATUS_MESSAGE_MS)

    def save_screenshot_dialog(self) -> None:
        path, _ = save_path(self, "Save screenshot", "tumble.png", "PNG image (*.png)")
        if path:
            try:
                self.save_screenshot(path)
            except OSError as err:
                QMessageBox.warning(self, "Screenshot not saved", f"{path}: {err.strerror or err}")
                return
            self.statusBar().showMessage(f"Saved the window to {path}", STATUS_MESSAGE_MS)

    def save_screenshot(self, path) -> Path:
        """Write the whole window as a PNG, atomically (temporary file, then rename)."""
        return save_window_png(self, path)

    # ------------------------------------------------------------------ the frame loop (GUI thread)

    def _on_rendered(self, *_args) -> None:
        """VTK observer of the scene's render window: one frame drawn."""
        now = time.perf_counter()
        self.frames_drawn += 1
        self._frame_times.append(now)
        if self.first_frame_time is None and self.isVisible():
            self.first_frame_time = now
            self._start_worker()
            # announced from the event loop, not from inside the paint: a listener may
            # close the window, which must not finalize the GL view in the middle of a paint
            self._first_frame_timer.start(0)

    def _on_frame(self) -> None:
        """One display frame (frame timer, GUI thread). A failure is shown, not raised: an
        exception escaping a Qt slot would take the whole application down."""
        if self._closing:
            return
        try:
            self._draw_frame()
        except Exception as err:  # noqa: BLE001 - shown in the status bar, traceback on stderr once
            if not self._frame_failed:
                self._frame_failed = True
                traceback.print_exc()
            self.error_label.setText(f"Display error: {err.__class__.__name__}: {err}")

    def _draw_frame(self) -> None:
        snap = self.worker.latest()
        now = time.perf_counter()
        news = snap.serial != self._drawn_serial
        if snap.scenario is not self._shown_scenario:
            self._show_scenario(snap)
        if snap.run_id != self._shown_run or len(snap.kick_times) != self._shown_kicks:
            self._shown_run = snap.run_id
            self._shown_kicks = len(snap.kick_times)
            self.polhode.set_body(snap.scenario.rigid_body, snap.state.w)
            self._last_plot = self._last_polhode = 0.0
        if news:
            self._drawn_serial = snap.serial
            self._pose_scene(snap)
            self.ghost.pose(snap)
            self.scene_view.update()
        if now - self._last_plot >= PLOT_INTERVAL_S:
            self._last_plot = now
            self._refresh_plots(snap)
        if snap.error_serial != self._error_serial:
            self._error_serial = snap.error_serial
            if snap.error:
                self.error_label.setText(f"Simulation stopped: {snap.error}")
                self.error_label.setToolTip(snap.error_detail)
                self.simulation_failed.emit(snap.error)
        if now - self._last_status >= STATUS_INTERVAL_S:
            self._last_status = now
            self._refresh_status(snap, now)

    def _show_scenario(self, snap) -> None:
        old = self._shown_scenario
        sc = snap.scenario
        self._shown_scenario = sc
        self.setWindowTitle(f"{self.panel.display_name or sc.name} — {self.VIEW_TITLE}")
        self.scene.set_body(sc.rigid_body, center=np.asarray(sc.position, dtype=float), w0=sc.angular_velocity,
                            q0=sc.initial_state.q, reset_camera=not same_start(old, sc))
        self.plots.clear_curves()
        self._shown_run = None
        self.legend.setText(self._legend_html(self._legend_rows, loaded=bool(sc.loads)))
        self.legend.adjustSize()

    def _refresh_plots(self, snap) -> None:
        window = self.plots.window_s
        since = None if window is None else snap.t - window
        hist = self.worker.history_since(since, MAX_POINTS)
        self.plots.refresh(hist, snap)
        self.ghost.refresh_plot(self.worker, since)
        now = time.perf_counter()
        if now - self._last_polhode >= POLHODE_INTERVAL_S:
            self._last_polhode = now
            self.polhode.set_omega(snap.state.w, hist["w"])
            self.polhode_view.update()

    def _refresh_status(self, snap, now: float) -> None:
        cutoff = now - FPS_WINDOW_S
        self._frame_times = [t for t in self._frame_times if t >= cutoff]
        self._fps = len(self._frame_times) / FPS_WINDOW_S
        lab = self.status_labels
        lab["time"].setText(f"t = {snap.t:8.2f} s")
        show_run_state(lab["rtf"], snap)
        lab["fps"].setText(f"{self._fps:3.0f} fps")
        lab["steps"].setText(f"{snap.steps_per_second:6.0f} steps/s")
        lab["flips"].setText(f"flips {snap.flips}")
        period = snap.predicted_flip_period
        lab["period"].setText("predicted flip period " + period_text(period))
        self.parts_status.refresh(snap)
        self.play_action.setText("Pause" if snap.running else "Play")
        self.theory.refresh(snap, self.worker.history_since)

    @property
    def fps(self) -> float:
        return self._fps

    # ------------------------------------------------------------------ closing

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt API
        """Stop the timer and the worker (joined), save settings, release the GL views.
        Safe to call twice (a test and pytest-qt may both close the window)."""
        if self._closing:
            super().closeEvent(event)
            return
        self._closing = True
        self.frame_timer.stop()
        self._worker_fallback.stop()
        self._first_frame_timer.stop()
        self.worker.stop()
        if self.persist:
            self._save_settings()
        self.scene_view.close()
        self.polhode_view.close()
        self.plots.release()
        self.ghost.release()
        super().closeEvent(event)

    def _save_settings(self) -> None:
        from ..scenario import dumps

        stored = keys.open_settings()
        stored.setValue(keys.GEOMETRY, self.saveGeometry())
        stored.setValue(keys.WINDOW_STATE, self.saveState())
        stored.setValue(keys.SPEED, self.worker.latest().speed)
        stored.setValue(keys.REPEAT, self.repeat.isChecked())
        stored.setValue(keys.FOLLOW, self.follow_box.isChecked())
        stored.setValue(keys.TRAIL, self.trail_box.isChecked())
        stored.setValue(keys.GHOST, self.ghost.checkbox.isChecked())
        stored.setValue(keys.PLOT_WINDOW, self.window_combo.currentText())
        sc = self.panel.scenario
        if sc is not None:
            try:
                stored.setValue(keys.LAST_SCENARIO, dumps(sc))
            except (ValueError, TypeError):
                pass
            stored.setValue(keys.LAST_PRESET, self.panel.preset_name or "")
        stored.sync()
