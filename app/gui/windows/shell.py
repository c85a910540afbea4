"""The window shell every view shares: frame clock, actions, speed, toggles, status, settings, menus, close.

Data flow (one QTimer parented to the window, GUI thread)::

    SimulationWorker(s) (threads) --latest()-->  _on_frame (every display frame)
        ├── _before_pose(snaps)        the view's own bookkeeping (a new run, a background job)
        ├── new scenario(s)? -> _show_scenarios(snaps)
        ├── new snapshot(s)? -> _pose_scenes: view.pose(workers, t), slow panes at their period -> one render
        ├── plot period?     -> _refresh_plots(snaps)                     (PLOT_INTERVAL_S)
        ├── new error?       -> error label, simulation_failed           (when error_serial changes)
        └── status period?   -> fps, Play/Pause, _refresh_status(snaps)   (STATUS_INTERVAL_S)

A view's window subclasses :class:`ViewWindow` and builds its widgets in :meth:`_build_view`,
handing its 3D panes to :meth:`build_view_scene`: the registered view (app.views) builds and
poses its scenes there, with the same calls the export makes, so the two cannot drift apart.
Commands go to every worker as method calls (queued, applied at step boundaries).
"""

from __future__ import annotations

import time
import traceback
from pathlib import Path

import numpy as np
from PyQt5.QtCore import QByteArray, Qt, QTimer, pyqtSignal
from PyQt5.QtWidgets import QActionGroup, QCheckBox, QDialog, QMainWindow, QMessageBox, QSplitter
from pyvistaqt import QtInteractor

from ...physics.errors import ParameterError
from ...scenario import Scenario, load, preset_names
from ...simulation import MAX_SPEED, MIN_SPEED, SimulationWorker
from ...views import get_view, view_names
from ...scene.palette import current as current_palette
from ..common import settings as keys
from ..common.colours import switch_scheme
from ..dialogs.file_dialogs import open_path, save_with_dialog
from ..common.heap import return_large_blocks
from .live_view import LivePanes
from ..dialogs.help_dialogs import about_box, shortcuts_dialog, why_dialog
from ..common.theme import configure_pyqtgraph
from ..views import view_factory
from .presentation import DEFAULT_SLOW_FACTOR, Presentation
from .screen_fit import ScreenFitter, restore_geometry, save_geometry
from .window_parts import (CameraFitter, RepeatToggle, SpeedControl, add_action, add_status_labels, keep_open,
                           save_window_png, window_title)

#: display frame timer period (ms): ~60 Hz requested; the scene renders only on news
FRAME_INTERVAL_MS = 16
#: plots refresh at this period (s): 10 Hz, slower than the scene (their Qt repaint is the cost)
PLOT_INTERVAL_S = 1.0 / 10.0
#: status bar refresh period (s)
STATUS_INTERVAL_S = 0.25
#: the fps figure is measured over this window (s)
FPS_WINDOW_S = 1.0
#: the workers start with the first frame, or after this long if no frame is drawn (ms)
WORKER_START_FALLBACK_MS = 3000
#: how long a status-bar message (a file written) stays (ms)
STATUS_MESSAGE_MS = 8000
#: default window size (px), cut to the screen's available area (screen_fit.py)
DEFAULT_SIZE = (1440, 900)


class ViewWindow(QMainWindow):
    """The shell of a view's window (GUI thread).

    Signals (GUI thread): ``first_frame_drawn(float)`` with ``time.perf_counter()`` of the
    first completed scene render, emitted from the event loop after that paint;
    ``simulation_failed(str)`` when a worker reports an error; ``view_switched(object)``
    with the window of another view that replaces this one (View menu), before this closes.
    """

    first_frame_drawn = pyqtSignal(float)
    simulation_failed = pyqtSignal(str)
    view_switched = pyqtSignal(object)

    #: the registered view this window shows (settings prefix, View menu check)
    VIEW = "main"
    VIEW_TITLE = "Tumble"
    #: the shell's commands this view offers, and its toolbar toggles
    COMMANDS = ("play", "step", "reset", "kick", "export", "open", "camera")
    TOGGLES = ("follow", "trail")
    #: a Presets submenu in File
    PRESETS_MENU = False
    #: status bar fields (name, tooltip)
    STATUS_FIELDS = (("time", "simulated time"), ("fps", "scene frames drawn per second"))
    #: tooltips of the commands and toggles, a view overrides some
    TIPS = {"play": "Play or pause the simulation", "step": "Pause and advance one frame",
            "reset": "Back to the initial state",
            "kick": "A small angular impulse about the principal axis least aligned with ω",
            "camera": "Look at the body from the default direction",
            "speed": "Playback speed, 0.1× to 10× real time (log scale)",
            "follow": "Camera follows the centre of mass",
            "trail": "Path of the intermediate axis' tip over the last seconds",
            "export": "Re-simulate the scenario off screen into an MP4, a GIF or PNG frames"}

    def __init__(self, scenario: Scenario, *, preset: str | None = None, paused: bool = False,
                 persist: bool = True, parent=None):
        super().__init__(parent)
        configure_pyqtgraph()
        return_large_blocks()  # resizes reallocate the render windows' buffers
        self.persist = persist
        self.base = scenario
        self.preset = preset
        self.frames_drawn = 0
        self.first_frame_time: float | None = None
        self._frame_times: list[float] = []
        self._fps = 0.0
        self._last_plot = 0.0
        self._last_status = 0.0
        #: serials of the snapshots posed last (one per worker; () forces a pose)
        self.drawn_serials: tuple = ()
        self._shown: tuple = ()
        self._closing = False
        self._frame_failed = False
        self.gl_views: list = []
        self.spec = get_view(self.VIEW)  # the registered view; its ViewScene: build_view_scene
        stored = keys.open_settings()
        self.setWindowTitle(window_title(self.VIEW_TITLE))
        self.resize(*DEFAULT_SIZE)

        speed = min(max(self.setting(stored, "speed", 1.0, float), MIN_SPEED), MAX_SPEED)
        repeat = self.setting(stored, "repeat", False, bool)
        self.workers = tuple(SimulationWorker(sc, running=not paused, speed=speed, repeat=repeat)
                             for sc in self._runs(scenario))
        self.worker = self.workers[0]  # the view protocol's worker (bench, launch)
        self._error_serials = [0] * len(self.workers)
        self._build_view(stored)
        self.camera_fitter = CameraFitter(self, self.scene_view)  # a resize re-fits an untouched camera
        self.repeat = RepeatToggle(self, repeat, self._set_repeats)

        self._build_actions()
        self.presentation = Presentation(self, self.setting(stored, "slow_flips", False, bool),
                                         self.setting(stored, "slow_factor", DEFAULT_SLOW_FACTOR, float))
        self._build_toolbar(speed, stored)
        self._build_view_toolbars(stored)
        self._build_menus()
        self.status_labels, self.error_label = add_status_labels(self, self.STATUS_FIELDS)
        self._build_view_status()
        self._restore(stored)
        keys.show_notes(self.statusBar())  # values in the settings file that could not be read

        snaps = [w.latest() for w in self.workers]  # the first frame already shows the bodies
        self._shown = tuple(s.scenario for s in snaps)
        self._show_scenarios(snaps)
        self.scene_view.ren_win.AddObserver("EndEvent", self._on_rendered)
        self.frame_timer = QTimer(self)
        self.frame_timer.setTimerType(Qt.PreciseTimer)
        self.frame_timer.timeout.connect(self._on_frame)
        self.frame_timer.start(FRAME_INTERVAL_MS)
        # the workers start with the first drawn frame: loading their compiled kernels would
        # otherwise compete with the first paint for the one interpreter lock
        self._worker_fallback = QTimer(self)  # a child: it cannot outlive the window
        self._worker_fallback.setSingleShot(True)
        self._worker_fallback.timeout.connect(self._start_workers)
        self._worker_fallback.start(WORKER_START_FALLBACK_MS)
        self._first_frame_timer = QTimer(self)
        self._first_frame_timer.setSingleShot(True)
        self._first_frame_timer.timeout.connect(lambda: self.first_frame_drawn.emit(self.first_frame_time))

    # ------------------------------------------------------------------ a view's hooks

    def _runs(self, scenario: Scenario) -> tuple:
        """The scenarios the workers run (one per worker): the view's runs."""
        return tuple(self.spec.runs(scenario, self.view_options()))

    def view_options(self) -> dict:
        """The view's own options (its ``ViewSpec.options`` keys) for what runs now."""
        return {}

    def _build_view(self, stored) -> None:
        """The view's own widgets: at least ``self.scene_view``, its 3D panes handed to
        :meth:`build_view_scene`."""
        raise NotImplementedError

    def _build_view_toolbars(self, stored) -> None:
        """The view's own toolbars (after the playback toolbar)."""

    def _build_view_status(self) -> None:
        """The view's own status bar widgets."""

    def _file_actions(self) -> list:
        """File menu entries after the presets (None: a separator)."""
        return [self.open_action, None, self.export_action, None, self.shot_action, None, self.quit_action]

    def _view_actions(self) -> list:
        """View menu entries after the camera (docks, ghost)."""
        return []

    def _before_pose(self, snaps) -> None:
        """Each frame, before the scenes are posed."""

    def _show_scenarios(self, snaps) -> None:
        """A worker runs a new scenario: rebuild what depends on it (:meth:`show_view` the scenes)."""
        self.show_view(snaps)

    def _pane_posed(self, name: str) -> None:
        """The pane ``name`` was posed at its own period: render it (a 2D pane is the window's to draw)."""
        view = self.panes.widgets.get(name)
        if view is not None and view is not self.scene_view:
            view.update()

    def _refresh_plots(self, snaps) -> None:
        """At the plot period."""

    def _refresh_status(self, snaps) -> None:
        """At the status period, after the fps and the Play/Pause text."""

    def _error_message(self, k: int, snap) -> str:
        return f"Simulation stopped: {snap.error}"

    def _first_frame(self) -> None:
        """The first frame was drawn."""

    def _save_view_settings(self, stored) -> None:
        """The view's own settings, on close."""

    def _release(self) -> None:
        """Release the view's own widgets (pyqtgraph menus), on close."""

    def current_scenario(self) -> tuple[Scenario, str | None]:
        """(the scenario running now, its preset name or None): what another view opens on."""
        return self.base, self.preset

    def load_scenario(self, scenario: Scenario, preset: str | None = None, source: str | None = None) -> None:
        """Run ``scenario`` (already validated) in this view."""
        raise NotImplementedError

    # ------------------------------------------------------------------ construction

    def setting(self, stored, name: str, default, kind):
        """This view's stored setting ``name`` (under the view's prefix, or where an older
        version kept it)."""
        return stored.value(keys.view_key(self.VIEW, name, stored), default, type=kind)

    def set_central(self, left, right, sizes) -> None:
        """The central area: ``left`` | ``right`` in a splitter sharing spare width 3:2."""
        self.splitter = QSplitter(Qt.Horizontal)
        self.splitter.addWidget(left)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setSizes(list(sizes))
        self.setCentralWidget(self.splitter)

    def build_view_scene(self, panes: dict, stored) -> None:
        """Build the registered view on ``panes`` (pane name -> this window's QtInteractor)
        as the export builds it off screen; follow and trail as stored. ``self.scene`` is
        its first pane's scene."""
        runs = tuple(w.latest().scenario for w in self.workers)
        self.view = self.spec.build(dict(panes), runs, self.view_options(), None)
        self.view.set_follow(self.setting(stored, "follow", True, bool))
        self.view.set_trail_visible(self.setting(stored, "trail", True, bool))
        self.scene = self.view.scenes[self.spec.panes[0].name]
        self.panes = LivePanes(self.spec, self.view, panes)

    def show_view(self, snaps, reset_camera: bool = True) -> None:
        """Show the runs of ``snaps`` (the view rebuilt only for scenarios it does not show
        yet); every pane is posed on the next frame."""
        runs = tuple(s.scenario for s in snaps)
        if any(a is not b for a, b in zip(self.view.scenarios, runs)):
            self.view.show(runs, reset_camera)
        self.drawn_serials = ()
        self.panes.restart()

    def _pose_scenes(self, snaps) -> bool:
        """Pose the view at one simulated time, the earliest of the workers' latest (each
        pane at its refresh period). False: nothing to render yet."""
        posed = self.panes.pose(self.workers, min(s.t for s in snaps), time.perf_counter())
        for name in posed or ():
            self._pane_posed(name)
        return posed is not None

    @property
    def drawn_time(self) -> float:
        """Simulated time of the frame drawn last."""
        return self.panes.drawn_time

    @property
    def posed_times(self) -> dict:
        """The simulated time each pane of the view shows (pane name -> t; None: not yet)."""
        return self.panes.times

    def gl_view(self, min_width: int, min_height: int) -> QtInteractor:
        """A 3D view of this window, closed with it."""
        view = QtInteractor(self, multi_samples=0, auto_update=False)
        view.setMinimumSize(min_width, min_height)
        self.gl_views.append(view)
        return view

    def _build_actions(self) -> None:
        tips = {**ViewWindow.TIPS, **self.TIPS}

        def action(name, text, slot, shortcut=None, tip=None):
            made = add_action(self, text, slot, shortcut, tips.get(name, "") if tip is None else tip)
            if name not in self.COMMANDS and name is not None:
                made.setEnabled(False)
                made.setVisible(False)
            return made

        self.play_action = action("play", "Pause", self.toggle_play, "Space")
        self.step_action = action("step", "Step", self.step, "S")
        self.reset_action = action("reset", "Reset", self.reset, "R")
        self.kick_action = action("kick", "Kick", self.kick, "K")
        self.open_action = action("open", "Open scenario…", self.open_scenario, "Ctrl+O", "Load a scenario TOML file")
        self.export_action = action("export", "Export animation…", self.export_animation_dialog, "Ctrl+E")
        self.shot_action = action(None, "Save screenshot…", self.save_screenshot_dialog, "Ctrl+P",
                                  "Save the window as PNG")
        self.quit_action = action(None, "Quit", self.close, "Ctrl+Q", "Close the window")
        self.camera_action = action("camera", "Reset camera", self._reset_camera, "C")
        self.why_action = action(None, "Why does it flip?", self.show_why, None,
                                 "The intermediate-axis flip in plain words, with Poinsot's picture")
        self.about_action = action(None, "About Tumble", self.show_about, None, "Version, licence, the README")
        self.shortcuts_action = action(None, "Keyboard shortcuts", self.show_shortcuts, "F1",
                                       "Every keyboard shortcut of this window")
        self.colours_action = action(None, "Projector colours", self._colours_toggled, "P",
                                     "Dark text and strong colours on white, for a projector in a lit room "
                                     "(every window, remembered)")
        self.colours_action.setCheckable(True)
        self.colours_action.setChecked(current_palette().light)

    def _commands(self, *actions) -> list:
        return [a for a in actions if a.isVisible()]

    def _build_toolbar(self, speed: float, stored) -> None:
        tips = {**ViewWindow.TIPS, **self.TIPS}
        tb = self.playback_toolbar = self.addToolBar("Playback")
        tb.setObjectName("playback")
        tb.setMovable(False)
        for a in self._commands(self.play_action, self.step_action, self.reset_action, self.kick_action):
            tb.addAction(a)
        tb.addWidget(self.repeat.checkbox)
        tb.addSeparator()
        self.speed_control = SpeedControl(tb, speed, self._set_speeds, tips["speed"])
        self.speed_slider = self.speed_control.slider
        tb.addSeparator()
        self.follow_box = QCheckBox("follow", self)  # a child: shown in the toolbar or not at all
        self.follow_box.setToolTip(tips["follow"])
        self.follow_box.setChecked(self.view.follow)
        self.follow_box.toggled.connect(self.view.set_follow)
        self.trail_box = QCheckBox("trail", self)
        self.trail_box.setToolTip(tips["trail"])
        self.trail_box.setChecked(self.view.trail_visible)
        self.trail_box.toggled.connect(self._trail_toggled)
        for name, box in (("follow", self.follow_box), ("trail", self.trail_box)):
            if name in self.TOGGLES:
                tb.addWidget(box)
            else:
                box.hide()
        for a in self._commands(self.camera_action):
            tb.addAction(a)

    def _build_menus(self) -> None:
        bar = self.menuBar()
        self.file_menu = bar.addMenu("&File")
        if self.PRESETS_MENU:
            presets_menu = self.file_menu.addMenu("Presets")
            for name in preset_names():
                presets_menu.addAction(name, lambda n=name: self.load_preset(n))
        for a in self._file_actions():
            if a is None:
                self.file_menu.addSeparator()
            elif a.isVisible():
                self.file_menu.addAction(a)
        sim = bar.addMenu("&Simulation")
        for a in self._commands(self.play_action, self.step_action, self.reset_action, self.kick_action):
            sim.addAction(a)
        sim.addSeparator()
        sim.addAction(self.repeat.action)
        self.view_menu = bar.addMenu("&View")
        self.view_actions = {}
        group = QActionGroup(self)
        for k, spec in enumerate(map(get_view, view_names())):  # the one registry of views
            a = add_action(self, spec.name.capitalize() + " view", lambda n=spec.name: self.switch_view(n),
                           f"Ctrl+{k + 1}" if k < 9 else None, spec.description)
            a.setCheckable(True)
            a.setChecked(spec.name == self.VIEW)
            a.setStatusTip(spec.description)
            group.addAction(a)
            self.view_menu.addAction(a)
            self.view_actions[spec.name] = a
        self.view_menu.addSeparator()
        for a in self._commands(self.camera_action) + self._view_actions():
            self.view_menu.addAction(a)
        self.view_menu.addAction(self.colours_action)
        self.presentation.add_to_menu(self.view_menu)  # F11, slow motion around the flips
        self.help_menu = bar.addMenu("&Help")
        self.help_menu.addAction(self.why_action)
        self.help_menu.addAction(self.shortcuts_action)
        self.help_menu.addAction(self.about_action)

    def _restore(self, stored) -> None:
        state = self.setting(stored, "state", QByteArray(), QByteArray)
        # within this screen, frame included: once framed by the window manager, and after full screen
        self.screen_fitter = ScreenFitter(self)
        restore_geometry(self, stored, self.VIEW, DEFAULT_SIZE, self.persist, self.screen_fitter)
        if self.persist and not state.isEmpty():
            self.restoreState(state)

    # ------------------------------------------------------------------ commands (GUI thread)

    def _colours_toggled(self) -> None:
        """View > Projector colours (checked or not): every open window re-coloured in place (the runs go on)."""
        switch_scheme("projector" if self.colours_action.isChecked() else "dark", remember=self.persist)

    def colours_changed(self, target) -> None:
        """The colour scheme is now ``target`` (:func:`~app.gui.common.colours.switch_scheme`): the
        menu entry says so, the scene is drawn again."""
        self.colours_action.blockSignals(True)
        self.colours_action.setChecked(target.light)
        self.colours_action.blockSignals(False)
        self.presentation.refresh_clock()
        self.drawn_serials = ()  # every pane posed and rendered on the next frame

    def _start_workers(self) -> None:
        """Start every simulation thread, back to back, once (GUI thread)."""
        for worker in self.workers:
            if not self._closing and worker.ident is None:
                worker.start()

    def toggle_play(self) -> None:
        if len(self.workers) == 1:
            self.worker.toggle()
            return
        # one decision for all (a toggle each could leave them opposite after a failure)
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

    def kick(self) -> None:
        for w in self.workers:
            w.kick()

    def set_speed(self, speed: float) -> None:
        self.speed_control.set_speed(speed)

    def _set_speeds(self, speed: float) -> None:
        for w in self.workers:
            w.set_speed(speed)

    def set_repeat(self, on: bool) -> None:
        """Start again at the end of the run (True) or pause there (False)."""
        self.repeat.checkbox.setChecked(on)

    def _set_repeats(self, on: bool) -> None:
        for w in self.workers:
            w.set_repeat(on)

    def _trail_toggled(self, on: bool) -> None:
        self.view.set_trail_visible(on)
        self.drawn_serials = ()

    def _reset_camera(self) -> None:
        if self._closing:  # a deferred call (compare's first frame) after the GL view closed
            return
        self.view.reset_camera(np.mean([w.latest().state.c for w in self.workers], axis=0))
        for view in self.panes.widgets.values():
            view.update()

    def load_preset(self, name: str) -> None:
        self.load_scenario(load(name), preset=name)

    def open_scenario(self) -> None:
        path = open_path(self, "Open scenario", "Scenario (*.toml);;All files (*)")
        if not path:
            return
        try:
            sc = load(path)
        except ParameterError as err:
            QMessageBox.warning(self, "Scenario not loaded", str(err))
            return
        self.load_scenario(sc, source=path)

    def export_animation_dialog(self):
        """File > Export animation...: the export dialog for the scenario running now."""
        from ..dialogs.export_dialog import ExportDialog

        return ExportDialog.open_for(self, self.current_scenario()[0], self.statusBar(), view=self.VIEW,
                                     options=self.view_options())

    def save_dialog(self, title: str, default: str, filters: str, write, failed: str, saved: str) -> None:
        """Ask where to save, then ``write(path)`` (see :func:`~.file_dialogs.save_with_dialog`)."""
        save_with_dialog(self, title, default, filters, write, failed, saved, STATUS_MESSAGE_MS)

    def save_screenshot_dialog(self) -> None:
        default = "tumble.png" if self.VIEW == "main" else f"tumble-{self.VIEW}.png"
        self.save_dialog("Save screenshot", default, "PNG image (*.png)", lambda path: save_window_png(self, path),
                         "Screenshot not saved", "the window")

    def save_screenshot(self, path) -> Path:
        """Write the whole window as a PNG, atomically (temporary file, then rename)."""
        return save_window_png(self, path)

    def switch_view(self, name: str):
        """View > NAME: open that view's window on the scenario running now, where this one
        is, and close this one. Returns the window showing ``name``."""
        if name == self.VIEW or self._closing:
            self.view_actions[self.VIEW].setChecked(True)
            return self
        scenario, preset = self.current_scenario()
        running = any(w.latest().running for w in self.workers)
        window = view_factory(name)(scenario, preset=preset, paused=not running, persist=self.persist)
        keep_open(window)
        window.restoreGeometry(self.saveGeometry())
        window.show()
        self.view_switched.emit(window)
        self.close()
        return window

    def show_why(self) -> QDialog:
        """Help > Why does it flip?: the README's plain explanation (not modal)."""
        return why_dialog(self)

    def show_about(self) -> QMessageBox:
        """Help > About: the version, the licence and where the README is (not modal)."""
        return about_box(self)

    def show_shortcuts(self) -> QDialog:
        """Help > Keyboard shortcuts: a table made from this window's actions (not modal)."""
        return shortcuts_dialog(self)

    # ------------------------------------------------------------------ the frame loop (GUI thread)

    def _on_rendered(self, *_args) -> None:
        """VTK observer of the scene's render window: one frame drawn."""
        now = time.perf_counter()
        self.frames_drawn += 1
        self._frame_times.append(now)
        if self.first_frame_time is None and self.isVisible():
            self.first_frame_time = now
            self._start_workers()
            self._first_frame()
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
        snaps = [w.latest() for w in self.workers]
        now = time.perf_counter()
        if any(s.scenario is not shown for s, shown in zip(snaps, self._shown)):
            self._shown = tuple(s.scenario for s in snaps)
            self._show_scenarios(snaps)
        self._before_pose(snaps)
        serials = tuple(s.serial for s in snaps)
        if serials != self.drawn_serials:
            self.drawn_serials = serials
            if self._pose_scenes(snaps) is not False:
                self.scene_view.update()
        else:
            for name in self.panes.catch_up(self.workers, now):
                self._pane_posed(name)
        if now - self._last_plot >= PLOT_INTERVAL_S:
            self._last_plot = now
            self._refresh_plots(snaps)
        for k, snap in enumerate(snaps):
            if snap.error_serial != self._error_serials[k]:
                self._error_serials[k] = snap.error_serial
                if snap.error:
                    message = self._error_message(k, snap)
                    self.error_label.setText(message)
                    self.error_label.setToolTip(snap.error_detail)
                    self.simulation_failed.emit(message)
        if now - self._last_status >= STATUS_INTERVAL_S:
            self._last_status = now
            cutoff = now - FPS_WINDOW_S
            self._frame_times = [t for t in self._frame_times if t >= cutoff]
            self._fps = len(self._frame_times) / FPS_WINDOW_S
            running = any(s.running for s in snaps)
            # paused, nothing new is drawn: "0 fps" beside "end of run" read as a frozen window
            self.status_labels["fps"].setText(f"{self._fps:3.0f} fps" if running or self._fps >= 1 else "still")
            self.play_action.setText("Pause" if running else "Play")
            self._refresh_status(snaps)

    @property
    def fps(self) -> float:
        return self._fps

    # ------------------------------------------------------------------ closing

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt API
        """Stop the timers and the workers (joined), save settings, release the GL views
        and pyqtgraph's menus. Safe to call twice (a test and pytest-qt may both close)."""
        if self._closing:
            super().closeEvent(event)
            return
        self.presentation.leave()  # the window's own layout is what is saved
        self._closing = True
        for timer in (self.frame_timer, self._worker_fallback, self._first_frame_timer):
            timer.stop()
        self._stop_jobs()
        for w in self.workers:
            w.stop()
        if self.persist:
            self._save_settings()
        for view in self.gl_views:
            view.close()
        self._release()
        super().closeEvent(event)

    def _stop_jobs(self) -> None:
        """Stop the view's own background threads, on close."""

    def _save_settings(self) -> None:
        stored = keys.open_settings()

        def put(name, value):
            stored.setValue(keys.view_key(self.VIEW, name), value)

        save_geometry(self, stored, self.VIEW)  # per screen size
        put("state", self.saveState())
        put("speed", self.worker.latest().speed)
        put("repeat", self.repeat.isChecked())
        put("follow", self.follow_box.isChecked())
        put("trail", self.trail_box.isChecked())
        put("slow_flips", self.presentation.slow)
        put("slow_factor", self.presentation.factor)
        self._save_view_settings(stored)
        stored.sync()
