"""The compare view (``tumble gui --view compare``): one scenario run by two integrators
(and/or two steps) side by side in one scene, with their energy and |L| drifts on shared plots.

Data flow (one QTimer parented to the window, GUI thread)::

    SimulationWorker A (thread) --latest()/history_since()--+
    SimulationWorker B (thread) --latest()/history_since()--+--> _on_frame (every display frame)
        ├── new scenarios? -> CompareScene.set_bodies / set_labels, DriftPlots.clear_curves
        ├── news?          -> CompareScene.set_poses -> scene widget update() (one render)
        ├── plot period?   -> DriftPlots.refresh                    (PLOT_INTERVAL_S)
        └── status period? -> status bar labels                     (STATUS_INTERVAL_S)

Each worker owns its copy and paces it to real time; commands (apply, play/pause, step,
reset, speed) go to both, back to back, so the two runs start and stop together (within
a record interval, 10 ms of simulated time, of each other).
"""

from __future__ import annotations

import time
import traceback
from types import SimpleNamespace
from pathlib import Path

import numpy as np
from PyQt5.QtCore import QByteArray, Qt, QTimer, pyqtSignal
from PyQt5.QtWidgets import (
    QCheckBox,
    QComboBox,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QWidget,
)
from pyvistaqt import QtInteractor

from ..physics.errors import ParameterError
from ..physics.integrators import DESCRIPTIONS, INTEGRATORS
from ..scenario import Scenario, load, preset_names
from ..scene.body_scene import TRAIL_POINTS
from ..scene.compare import SIDE_COLORS, CompareScene
from ..scene.style import L_COLOR, OMEGA_COLOR, TRAIL_COLOR
from ..simulation import MAX_SPEED, MIN_SPEED, SimulationWorker
from ..simulation.compare import SIDES, make_pair, pose_at, side_label, variant
from ..simulation.worker import RECORD_INTERVAL_S
from . import settings as keys
from .file_dialogs import open_path, save_path
from .main_window import DEFAULT_SIZE, FPS_WINDOW_S, FRAME_INTERVAL_MS, PLOT_INTERVAL_S, STATUS_INTERVAL_S
from .plots import DEFAULT_COMPARE_WINDOW, MAX_POINTS, DriftPlots, PlotsBox
from .heap import return_large_blocks
from .theme import ERROR_TEXT, configure_pyqtgraph
from .window_parts import (
    RepeatToggle,
    SpeedControl,
    add_action,
    add_status_labels,
    legend_html,
    overlay_label,
    same_start,
    save_window_png,
    show_run_state,
)

#: the workers start with the first frame, or after this long if no frame is drawn (ms)
WORKER_START_FALLBACK_MS = 3000
#: settings keys of this view (its own, so the main view's are left alone)
GEOMETRY_KEY = "compare/geometry"
LOG_KEY = "compare/log_drift"


class CompareWindow(QMainWindow):
    """Two integrators (or steps) on one scenario, side by side (view ``compare``).

    Parameters
    ----------
    scenario : the scenario both sides copy (body, start, loads, duration)
    preset : its preset name, if it is one
    paused : open paused
    persist : remember the geometry and the log option
    integrators, dts : each side's integrator and step (None: the defaults of
        :func:`app.simulation.compare.default_pair`, at the scenario's dt)

    Signals (GUI thread): ``first_frame_drawn(float)`` at the first completed scene render;
    ``simulation_failed(str)`` when either worker reports an error.
    """

    first_frame_drawn = pyqtSignal(float)
    simulation_failed = pyqtSignal(str)

    def __init__(self, scenario: Scenario, *, preset: str | None = None, paused: bool = False,
                 persist: bool = True, integrators=(None, None), dts=(None, None), parent=None):
        super().__init__(parent)
        configure_pyqtgraph()
        return_large_blocks()  # resizes reallocate the render windows' buffers
        self.persist = persist
        self.base = scenario
        self.frames_drawn = 0
        self.first_frame_time: float | None = None
        self._frame_times: list[float] = []
        self._fps = 0.0
        self._last_plot = 0.0
        self._last_status = 0.0
        self._drawn_serials = (-1, -1)
        self.drawn_time = 0.0  # simulated time of the poses drawn last
        self._shown = (None, None)
        self._error_serials = [0, 0]
        self._closing = False
        self._frame_failed = False
        stored = keys.open_settings()
        self.setWindowTitle("Tumble: integrators side by side")
        self.resize(*DEFAULT_SIZE)
        pair = make_pair(scenario, integrators, dts)

        # --- central area: scene | plots
        self.scene_view = QtInteractor(self, multi_samples=0, auto_update=False)
        self.scene_view.setMinimumSize(360, 300)
        self.scene = CompareScene(self.scene_view, follow=stored.value(keys.FOLLOW, True, type=bool),
                                  trail=stored.value(keys.TRAIL, True, type=bool))
        self.legend = self._legend_overlay(self.scene_view)
        self.scene_view.add_axes(color="#c9d1d9", line_width=2, labels_off=False)
        self.plots = DriftPlots()
        self.splitter = QSplitter(Qt.Horizontal)
        self.splitter.addWidget(self.scene_view)
        self.splitter.addWidget(self._plots_box(stored))
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        # the plots' Qt repaint costs by area: two plots need no more width than the main view's three
        self.splitter.setSizes([960, 480])
        self.setCentralWidget(self.splitter)

        # --- the workers: one per side
        speed = min(max(stored.value(keys.SPEED, 1.0, type=float), MIN_SPEED), MAX_SPEED)
        repeat = stored.value(keys.REPEAT, False, type=bool)
        self.workers = tuple(SimulationWorker(sc, running=not paused, speed=speed, repeat=repeat) for sc in pair)
        self.repeat = RepeatToggle(self, repeat, self._repeat_changed)
        self.worker = self.workers[0]  # the view protocol's worker (bench, launch)

        self._build_actions()
        self._build_toolbar(speed)
        self.addToolBarBreak()
        self._build_choosers(pair, preset)
        self._build_menus()
        self._build_status()
        geometry = stored.value(GEOMETRY_KEY, QByteArray(), type=QByteArray)
        if self.persist and not geometry.isEmpty():
            self.restoreGeometry(geometry)
        keys.show_notes(self.statusBar())  # values in the settings file that could not be read

        self._show_pair([w.latest() for w in self.workers])  # the first frame shows the bodies
        self.scene_view.ren_win.AddObserver("EndEvent", self._on_rendered)
        self.frame_timer = QTimer(self)
        self.frame_timer.setTimerType(Qt.PreciseTimer)
        self.frame_timer.timeout.connect(self._on_frame)
        self.frame_timer.start(FRAME_INTERVAL_MS)
        # the workers start together with the first drawn frame (as in the main view:
        # loading their kernels would compete with the first paint for the interpreter lock)
        self._worker_fallback = QTimer(self)
        self._worker_fallback.setSingleShot(True)
        self._worker_fallback.timeout.connect(self._start_workers)
        self._worker_fallback.start(WORKER_START_FALLBACK_MS)

    def _start_workers(self) -> None:
        """Start both simulation threads, back to back, once (GUI thread)."""
        for worker in self.workers:
            if not self._closing and worker.ident is None:
                worker.start()

    # ------------------------------------------------------------------ construction

    @staticmethod
    def _legend_overlay(parent) -> QLabel:
        return overlay_label(parent, legend_html((("ω  angular velocity (length ∝ |ω|)", OMEGA_COLOR),
                                                  ("L  angular momentum (fixed in space)", L_COLOR),
                                                  ("trail of the intermediate axis' tip", TRAIL_COLOR))))

    def _plots_box(self, stored) -> QWidget:
        box = PlotsBox(self.plots, DEFAULT_COMPARE_WINDOW,
                       "Scroll over the last seconds of simulated time, or show the whole run",
                       "Plot the drifts as log10 of their magnitude: the two sides differ by orders "
                       "of magnitude (round-off shows as about -16)")
        self.window_combo, self.log_drift = box.window_combo, box.log_drift
        self.window_combo.currentTextChanged.connect(self._window_changed)
        self.log_drift.setChecked(stored.value(LOG_KEY, True, type=bool) if self.persist else True)
        self.plots.set_log_drift(self.log_drift.isChecked())
        self.log_drift.toggled.connect(self._log_changed)
        lay = box.layout()
        self.summary = QLabel("&nbsp;<br>&nbsp;")
        self.summary.setTextFormat(Qt.RichText)
        self.summary.setContentsMargins(8, 2, 8, 4)
        self.summary.setToolTip("Drift at the newest sample of each side, signed: + means gained")
        # one line a side, at a fixed height: a new text must not resize the label (that
        # would lay out and repaint the plots too), and a narrow pane wraps instead of clipping
        self.summary.setWordWrap(True)
        self.summary.setFixedHeight(self.summary.sizeHint().height())
        self.summary.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Fixed)
        lay.addWidget(self.summary)
        return box

    def _build_actions(self) -> None:
        def action(text, slot, shortcut=None, tip=""):
            return add_action(self, text, slot, shortcut, tip)

        self.play_action = action("Pause", self.toggle_play, "Space", "Play or pause both runs")
        self.step_action = action("Step", self.step, "S", "Pause both and advance one frame")
        self.reset_action = action("Reset", self.reset, "R", "Both back to the initial state")
        self.shot_action = action("Save screenshot…", self.save_screenshot_dialog, "Ctrl+P", "Save the window as PNG")
        self.quit_action = action("Quit", self.close, "Ctrl+Q", "Close the window")
        self.camera_action = action("Reset camera", self._reset_camera, "C", "Look at the pair from the default direction")

    def _build_toolbar(self, speed: float) -> None:
        tb = self.addToolBar("Playback")
        tb.setObjectName("playback")
        tb.setMovable(False)
        for a in (self.play_action, self.step_action, self.reset_action):
            tb.addAction(a)
        tb.addWidget(self.repeat.checkbox)
        tb.addSeparator()
        self.speed_control = SpeedControl(tb, speed, self._set_speeds,
                                          "Playback speed of both runs, 0.1× to 10× real time (log scale)")
        self.speed_slider = self.speed_control.slider
        tb.addSeparator()
        self.follow_box = QCheckBox("follow")
        self.follow_box.setToolTip("Camera follows the midpoint of the two bodies")
        self.follow_box.setChecked(self.scene.follow)
        self.follow_box.toggled.connect(self.scene.set_follow)
        tb.addWidget(self.follow_box)
        self.trail_box = QCheckBox("trail")
        self.trail_box.setToolTip("Path of each body's intermediate-axis tip over the last seconds")
        self.trail_box.setChecked(self.scene.trail_visible)
        self.trail_box.toggled.connect(self._trail_toggled)
        tb.addWidget(self.trail_box)
        tb.addAction(self.camera_action)

    def _build_choosers(self, pair, preset: str | None) -> None:
        tb = self.addToolBar("Compare")
        tb.setObjectName("compare")
        tb.setMovable(False)
        tb.addWidget(QLabel(" scenario "))
        self.preset_combo = QComboBox()
        self.preset_combo.addItems(preset_names())
        if preset is None:
            self.preset_combo.insertItem(0, self.base.name)
            self.preset_combo.setCurrentIndex(0)
        else:
            self.preset_combo.setCurrentText(preset)
        self.preset_combo.setToolTip("The scenario both sides run")
        self.preset_combo.activated.connect(self._preset_chosen)
        tb.addWidget(self.preset_combo)
        self.integrator_combos, self.dt_fields = [], []
        for side, sc, color in zip(SIDES, pair, SIDE_COLORS):
            tb.addSeparator()
            tag = QLabel(f" <b style='color:{color}'>{side}</b> ")
            tb.addWidget(tag)
            combo = QComboBox()
            for k, name in enumerate(INTEGRATORS):
                combo.addItem(name)
                combo.setItemData(k, DESCRIPTIONS.get(name, ""), Qt.ToolTipRole)
            combo.setCurrentText(sc.solver.integrator)
            combo.setToolTip(f"Integrator of side {side}")
            combo.activated.connect(lambda _i: self.apply_choices())
            tb.addWidget(combo)
            tb.addWidget(QLabel(" dt "))
            field = QLineEdit(f"{sc.solver.dt:g}")
            field.setFixedWidth(70)
            field.setToolTip(f"Step of side {side} (s); Enter applies")
            field.returnPressed.connect(self.apply_choices)
            tb.addWidget(field)
            tb.addWidget(QLabel(" s"))
            self.integrator_combos.append(combo)
            self.dt_fields.append(field)
        tb.addSeparator()
        apply = QPushButton("Apply")
        apply.setToolTip("Restart both runs with these integrators and steps")
        apply.clicked.connect(self.apply_choices)
        tb.addWidget(apply)
        self.choice_error = QLabel()
        self.choice_error.setStyleSheet(f"color: {ERROR_TEXT}; padding-left: 6px;")
        tb.addWidget(self.choice_error)

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        presets_menu = file_menu.addMenu("Presets")
        for name in preset_names():
            presets_menu.addAction(name, lambda n=name: self.load_preset(n))
        open_action = add_action(self, "Open scenario…", self.open_scenario)
        export_action = add_action(self, "Export animation…", self.export_animation_dialog, "Ctrl+E",
                                   "Re-simulate both sides off screen into an MP4, a GIF or PNG frames")
        for a in (open_action, None, export_action, None, self.shot_action, None, self.quit_action):
            file_menu.addSeparator() if a is None else file_menu.addAction(a)
        sim = bar.addMenu("&Simulation")
        for a in (self.play_action, self.step_action, self.reset_action):
            sim.addAction(a)
        sim.addSeparator()
        sim.addAction(self.repeat.action)
        view = bar.addMenu("&View")
        view.addAction(self.camera_action)

    def _build_status(self) -> None:
        self.status_labels, self.error_label = add_status_labels(self, (
            ("time", "simulated time of the two bodies drawn"),
            ("rtf", "simulated seconds per wall-clock second, the slower side"),
            ("fps", "scene frames drawn per second"),
            ("flips", "reversals of the intermediate-axis component of ω, A / B")))

    # ------------------------------------------------------------------ commands (GUI thread)

    @property
    def scenarios(self) -> tuple:
        """The two scenarios the workers run now."""
        return tuple(w.latest().scenario for w in self.workers)

    def export_animation_dialog(self):
        """File > Export animation...: both sides as they run now, side by side."""
        from .export_dialog import ExportDialog

        a, b = self.scenarios
        args = ("--view", "compare", "--integrators", a.solver.integrator, b.solver.integrator,
                "--dts", repr(a.solver.dt), repr(b.solver.dt))
        return ExportDialog.open_for(self, self.base, self.statusBar(), view_args=args,
                                     view_name=f"{a.solver.integrator} beside {b.solver.integrator}")

    def apply_choices(self) -> bool:
        """Read the choosers; restart both runs with them, or show why not (runs go on)."""
        pair = []
        for side, combo, field in zip(SIDES, self.integrator_combos, self.dt_fields):
            try:
                pair.append(variant(self.base, combo.currentText(), field.text().strip(), side))
                field.setProperty("invalid", False)
            except ParameterError as err:
                if err.field.endswith("dt"):
                    field.setProperty("invalid", True)
                field.style().unpolish(field)
                field.style().polish(field)
                self.choice_error.setText(str(err))
                return False
            field.style().unpolish(field)
            field.style().polish(field)
        self.choice_error.setText("")
        self.apply_pair(pair)
        return True

    def apply_pair(self, pair) -> None:
        """Restart both sides with these two scenarios (already validated), together."""
        for worker, sc in zip(self.workers, pair):
            worker.apply(sc)
        self.error_label.setText("")

    def load_scenario(self, scenario: Scenario, preset: str | None = None) -> None:
        """Compare on another scenario, keeping the chosen integrators and steps."""
        self.base = scenario
        self.preset_combo.blockSignals(True)
        if preset is None:
            if self.preset_combo.findText(scenario.name) < 0:
                self.preset_combo.insertItem(0, scenario.name)
            self.preset_combo.setCurrentText(scenario.name)
        else:
            self.preset_combo.setCurrentText(preset)
        self.preset_combo.blockSignals(False)
        if not self.apply_choices():  # the chosen step does not fit this scenario: use its own
            for field in self.dt_fields:
                field.setText(f"{scenario.solver.dt:g}")
            self.apply_choices()

    def load_preset(self, name: str) -> None:
        self.load_scenario(load(name), preset=name)

    def _preset_chosen(self, index: int) -> None:
        name = self.preset_combo.itemText(index)
        if name in preset_names():
            self.load_preset(name)

    def open_scenario(self) -> None:
        path = open_path(self, "Open scenario", "Scenario (*.toml);;All files (*)")
        if not path:
            return
        try:
            sc = load(path)
        except ParameterError as err:
            QMessageBox.warning(self, "Scenario not loaded", str(err))
            return
        self.load_scenario(sc)

    def toggle_play(self) -> None:
        # one decision for both (a toggle each could leave them opposite after a failure)
        running = any(w.latest().running for w in self.workers)
        for w in self.workers:
            w.pause() if running else w.play()

    def step(self) -> None:
        for w in self.workers:
            w.step()

    def reset(self) -> None:
        for w in self.workers:
            w.reset()
        self.error_label.setText("")

    def set_speed(self, speed: float) -> None:
        self.speed_control.set_speed(speed)

    def _set_speeds(self, speed: float) -> None:
        for w in self.workers:
            w.set_speed(speed)

    def _trail_toggled(self, on: bool) -> None:
        self.scene.set_trail_visible(on)
        self._drawn_serials = (-1, -1)

    def set_repeat(self, on: bool) -> None:
        """Both runs start again at their end (True) or pause there (False)."""
        self.repeat.checkbox.setChecked(on)

    def _repeat_changed(self, on: bool) -> None:
        for w in self.workers:
            w.set_repeat(on)

    def _window_changed(self, label: str) -> None:
        self.plots.set_window(label)
        self._last_plot = 0.0

    def _log_changed(self, on: bool) -> None:
        self.plots.set_log_drift(on)
        self._last_plot = 0.0

    def _reset_camera(self) -> None:
        c = np.mean([w.latest().state.c for w in self.workers], axis=0)
        self.scene.reset_camera(c)
        self.scene_view.update()

    def save_screenshot_dialog(self) -> None:
        path, _ = save_path(self, "Save screenshot", "tumble-compare.png", "PNG image (*.png)")
        if path:
            try:
                self.save_screenshot(path)
            except OSError as err:
                QMessageBox.warning(self, "Screenshot not saved", f"{path}: {err.strerror or err}")

    def save_screenshot(self, path) -> Path:
        """Write the whole window as a PNG, atomically."""
        return save_window_png(self, path)

    # ------------------------------------------------------------------ the frame loop (GUI thread)

    def _on_rendered(self, *_args) -> None:
        """VTK observer of the scene's render window: one frame drawn."""
        now = time.perf_counter()
        self.frames_drawn += 1
        self._frame_times.append(now)
        if self.first_frame_time is None and self.isVisible():
            self.first_frame_time = now
            self._start_workers()
            # the widget has its final shape now: frame the pair for it
            QTimer.singleShot(0, self._reset_camera)
            self.first_frame_drawn.emit(now)

    def _on_frame(self) -> None:
        """One display frame (frame timer, GUI thread); a failure is shown, not raised."""
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
        snaps = [w.latest() for w in self.workers]
        now = time.perf_counter()
        if any(s.scenario is not shown for s, shown in zip(snaps, self._shown)):
            self._show_pair(snaps)
        serials = tuple(s.serial for s in snaps)
        if serials != self._drawn_serials:
            self._drawn_serials = serials
            # both drawn at the same simulated time: the earlier of the two latest states
            t = min(s.t for s in snaps)
            reach = TRAIL_POINTS * RECORD_INTERVAL_S if self.scene.trail_visible else 2 * RECORD_INTERVAL_S
            poses = []
            for worker in self.workers:
                recent = worker.history_since(t - reach)
                if not len(recent["t"]):  # restarted since its snapshot: drawn next frame
                    return
                c, q, w, L, n = pose_at(recent, t)
                trail_q = trail_c = None
                if self.scene.trail_visible:
                    trail_q, trail_c = recent["q"][:n], recent["c"][:n]
                poses.append((c, q, w, L, trail_q, trail_c))
            self.drawn_time = t
            self.scene.set_poses(poses)
            self.scene_view.update()
        if now - self._last_plot >= PLOT_INTERVAL_S:
            self._last_plot = now
            self._refresh_plots(snaps)
        for k, snap in enumerate(snaps):
            if snap.error_serial != self._error_serials[k]:
                self._error_serials[k] = snap.error_serial
                if snap.error:
                    message = f"{SIDES[k]} ({side_label(snap.scenario)}) stopped: {snap.error}"
                    self.error_label.setText(message)
                    self.error_label.setToolTip(snap.error_detail)
                    self.simulation_failed.emit(message)
        if now - self._last_status >= STATUS_INTERVAL_S:
            self._last_status = now
            self._refresh_status(snaps, now)

    def _show_pair(self, snaps) -> None:
        old = self._shown[0]
        sc = snaps[0].scenario
        self._shown = tuple(s.scenario for s in snaps)
        labels = [f"{side}: {side_label(s.scenario)}" for side, s in zip(SIDES, snaps)]
        scene_labels = [f"{side}: {side_label(s.scenario, chr(10))}" for side, s in zip(SIDES, snaps)]
        if not same_start(old, sc):
            self.scene.set_bodies(sc.rigid_body, center=np.asarray(sc.position, dtype=float),
                                  w0=sc.angular_velocity, q0=sc.initial_state.q, labels=scene_labels)
        else:
            self.scene.set_labels(scene_labels)
        self.plots.set_names(labels)
        self.plots.clear_curves()
        self._drawn_serials = (-1, -1)
        self._last_plot = 0.0
        for combo, field, s in zip(self.integrator_combos, self.dt_fields, snaps):
            if not field.hasFocus():
                combo.setCurrentText(s.scenario.solver.integrator)
                field.setText(f"{s.scenario.solver.dt:g}")

    def _refresh_plots(self, snaps) -> None:
        window = self.plots.window_s
        hists = []
        for worker, snap in zip(self.workers, snaps):
            since = None if window is None else snap.t - window
            hists.append(worker.history_since(since, MAX_POINTS))
        self.plots.refresh(hists)

    def _refresh_status(self, snaps, now: float) -> None:
        cutoff = now - FPS_WINDOW_S
        self._frame_times = [t for t in self._frame_times if t >= cutoff]
        self._fps = len(self._frame_times) / FPS_WINDOW_S
        lab = self.status_labels
        a, b = snaps
        lab["time"].setText(f"t = {self.drawn_time:8.2f} s")
        running = a.running or b.running
        show_run_state(lab["rtf"], SimpleNamespace(running=running, ended=a.ended and b.ended,
                                                   realtime_factor=min(a.realtime_factor, b.realtime_factor)))
        lab["fps"].setText(f"{self._fps:3.0f} fps")
        lab["flips"].setText(f"flips {a.flips} / {b.flips}")
        parts = []
        for side, color, snap in zip(SIDES, SIDE_COLORS, snaps):
            parts.append(f"<span style='color:{color}'><b>{side}</b></span> ΔE/E₀ {snap.E_drift:+.2e}, "
                         f"Δ|L|/|L₀| {snap.L_norm_drift:+.2e}")
        self.summary.setText("<br>".join(parts))
        self.play_action.setText("Pause" if running else "Play")

    @property
    def fps(self) -> float:
        return self._fps

    # ------------------------------------------------------------------ closing

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt API
        """Stop the timer and both workers (joined), save settings, release the GL view."""
        if self._closing:
            super().closeEvent(event)
            return
        self._closing = True
        self.frame_timer.stop()
        self._worker_fallback.stop()
        for w in self.workers:
            w.stop()
        if self.persist:
            stored = keys.open_settings()
            stored.setValue(GEOMETRY_KEY, self.saveGeometry())
            stored.setValue(LOG_KEY, self.log_drift.isChecked())
            stored.setValue(keys.REPEAT, self.repeat.isChecked())
            stored.sync()
        self.scene_view.close()
        self.plots.release()
        super().closeEvent(event)
