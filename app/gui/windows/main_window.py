"""The main window (view ``main``): parameter and theory docks, 3D scene, plots, polhode pane.

The shell (:class:`~app.gui.windows.shell.ViewWindow`) runs the frame loop, the controls and the
settings, and poses the registered view (app.views.main: the body pane every frame, the
polhode pane at its own period); this module adds the view's own widgets and, each frame::

    new scenario?  -> view.show, plots.clear, the colour key
    new snapshot?  -> the exact ghost follows the run (its cached closed form), view.pose -> one render
    plot period?   -> PlotsPanel.refresh, the ghost's error plot   (PLOT_INTERVAL_S)
    status period? -> status bar labels, theory panel              (STATUS_INTERVAL_S)
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from PyQt5.QtCore import Qt
from PyQt5.QtWidgets import QApplication, QDockWidget, QLabel, QMessageBox, QSplitter, QTabWidget, QWidget

from ...scene.palette import tone
from ...export.data import export_view_png
from ...physics.errors import DivergenceError, ParameterError
from ...physics.integrators import simulate
from ...scenario import Scenario, save
from ...scene.body_scene import LEGEND
from ...simulation.lookahead import flips_ahead
from ...simulation.table import trajectory_table, write_table
from ..common import settings as keys
from ..panels.describe import period_text
from ..dialogs.file_dialogs import file_stem, save_path
from .ghost import ExactGhost
from ..panels.gyro_editor import PartsStatus
from ..panels.panel import ParameterPanel
from ..plots.live_plots import DEFAULT_WINDOW, PlotsBox, PlotsPanel
from ..recordings.drops import accept_recording_drops
from .shell import STATUS_MESSAGE_MS, ViewWindow
from ..panels.theory_panel import TheoryPanel
from .window_parts import add_action, legend_html, overlay_label, same_start, show_run_state, window_title

#: the parameter dock's width at start (px); a layout the user saved wins
DOCK_WIDTH = 380
#: the least width of the plots' side (px): their titles ("Angular momentum L, world frame (10⁻⁶ kg m²/s)") whole
PLOTS_MIN_WIDTH = 400
#: the least height of each of the L, omega and drift plots (px; its title, ticks and legend
#: stay readable), and of the time axis under them
PLOT_MIN_HEIGHT = 90
TIME_AXIS_HEIGHT = 40
#: the least height of the polhode pane under the plots (px): the plots come first on a short screen
POLHODE_MIN_HEIGHT = 40
#: a replayed flight runs on until it has shown this many flips (a phone's flight of 0.7 s
#: shows one at most, then the run ended), plus REPLAY_AFTER_S; at least REPLAY_MIN_S, at
#: most REPLAY_MAX_S of simulated time
REPLAY_FLIPS = 3
REPLAY_AFTER_S = 1.0
REPLAY_MIN_S = 5.0
REPLAY_MAX_S = 20.0


def replay_length(scenario) -> float:
    """How long the window runs a fitted flight's ``scenario`` (s): its own length, or longer,
    until its body has shown :data:`REPLAY_FLIPS` flips (the run looked at ahead)."""
    flips = flips_ahead(scenario, until=REPLAY_MAX_S)
    shown = flips[REPLAY_FLIPS - 1] if len(flips) >= REPLAY_FLIPS else flips[-1] if len(flips) else REPLAY_MIN_S
    return max(float(scenario.solver.duration), min(REPLAY_MAX_S, max(REPLAY_MIN_S, shown + REPLAY_AFTER_S)))


#: how a scenario written by ``tumble fit --out`` starts its description (app.throws.fitting.report)
FIT_MARK = "tumble fit:"


def is_fitted_flight(scenario) -> bool:
    """Whether ``scenario`` is a flight's body made by ``tumble fit --out`` (its run is the flight's
    length: under a second, ending before its flips show)."""
    return str(scenario.description).startswith(FIT_MARK)


def run_long_enough(scenario):
    """``scenario``, run for :func:`replay_length` when it is a fitted flight (several flips)."""
    if not is_fitted_flight(scenario):
        return scenario
    return scenario.replace(solver=dataclasses.replace(scenario.solver, duration=replay_length(scenario)))


class MainWindow(ViewWindow):
    """The Tumble main window (view ``main``); signals and counters as :class:`ViewWindow`."""

    VIEW = "main"
    VIEW_TITLE = "Tumble"
    PRESETS_MENU = True
    STATUS_FIELDS = (
        ("time", "simulated time"), ("rtf", "simulated seconds per wall-clock second"),
        ("fps", "scene frames drawn per second"), ("steps", "integrator steps per second"),
        ("flips", "reversals of the intermediate-axis component of ω"),
        ("period", "closed-form time between flips"))

    def __init__(self, scenario: Scenario, *, preset: str | None = None, paused: bool = False,
                 persist: bool = True, source: str | None = None, parent=None):
        self._source = source
        self._shown_scenario = None
        scenario = run_long_enough(scenario)  # a fitted flight: on until its flips show, the ghost on
        super().__init__(scenario, preset=preset, paused=paused, persist=persist, parent=parent)
        if is_fitted_flight(scenario):
            self.ghost.set_checked(True)

    # ------------------------------------------------------------------ construction

    def _build_view(self, stored) -> None:
        # --- central area: scene | (plots over polhode)
        self.scene_view = self.gl_view(360, 300)
        self.polhode_view = self.gl_view(200, POLHODE_MIN_HEIGHT)
        # the view's panes in the order it declares them: the 3D scene, then the one under the plots
        names = [p.name for p in self.spec.panes]
        self.build_view_scene(dict(zip(names, (self.scene_view, self.polhode_view))), stored)
        self.polhode = self.view.scenes[names[1]]  # the small view under the plots
        # the exact ghost poses the view's own ghost, from its cached closed form
        self.ghost = ExactGhost(self.view, parent=self, checked=self.setting(stored, "exact_ghost", False, bool))
        self.ghost.toggled.connect(self._ghost_toggled)
        self.addAction(self.ghost.action)
        self.legend = self._legend_overlay(self.scene_view, self._legend_rows())
        self.scene_view.add_axes(color=tone("#c9d1d9"), line_width=2, labels_off=False)
        self.plots = PlotsPanel()
        self.plots.fit_min_height()  # each plot's curves at least PLOT_VIEW_MIN_PX tall
        right = QSplitter(Qt.Vertical)
        right.addWidget(self._plots_box(stored))
        right.addWidget(self.polhode_view)
        right.setStretchFactor(0, 3)
        right.setStretchFactor(1, 1)
        right.setSizes([620, 240])
        right.setChildrenCollapsible(False)  # each plot keeps a readable height (PlotsPanel's minimum)
        # the plots are a tab: the Phone dock opens as a tab beside them (live/dock.py), not under them
        self.side_tabs = QTabWidget()
        self.side_tabs.setDocumentMode(True)
        self.side_tabs.setTabBarAutoHide(True)  # no tab bar while the plots are the only tab
        self.side_tabs.addTab(right, "Plots")
        self.side_tabs.setMinimumWidth(PLOTS_MIN_WIDTH)
        self.set_central(self.scene_view, self.side_tabs, (640, 440))

        # --- parameter dock
        self.panel = ParameterPanel()
        self.panel.set_scenario(self.base, preset=self.preset, source=self._source)
        self.panel.scenario_applied.connect(self.apply_scenario)
        self.dock = QDockWidget("Parameters", self)
        self.dock.setObjectName("parameters")
        # closable: View > Parameters hides and shows it (not closable, its menu entry was greyed and looked doubled)
        self.dock.setFeatures(QDockWidget.DockWidgetMovable | QDockWidget.DockWidgetFloatable
                              | QDockWidget.DockWidgetClosable)
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

    def _pose_scenes(self, snaps) -> bool:
        """The ghost follows the run (a new segment restarts it), the view is posed at the
        snapshot's time (the shell), then the ghost's error there is measured."""
        self.ghost.follow(snaps[0])
        posed = super()._pose_scenes(snaps)
        self.ghost.measure(snaps[0])
        return posed

    def _legend_rows(self) -> tuple:
        """The key's rows: the view's for the scenario it shows (L fixed in space, or turned by
        the applied loads: :func:`app.scene.body_scene.l_turns`), then the ghost's."""
        return tuple(self.view.legend_rows) + self.ghost.legend_rows

    @staticmethod
    def _legend_overlay(parent, legend=LEGEND) -> QLabel:
        """The colour key as a Qt label over the scene: crisp text, no render cost."""
        return overlay_label(parent, legend_html(legend))

    def _plots_box(self, stored) -> QWidget:
        box = PlotsBox(self.plots, self.setting(stored, "plot_window", DEFAULT_WINDOW, str),
                       "Scroll over the last seconds of simulated time, or show the whole history",
                       "Plot the drift as log10 of its magnitude (round-off shows as ~-16)", changed=self._replot)
        self.window_combo, self.log_drift = box.window_combo, box.log_drift
        self.ghost.attach_plot(self.plots, row=3, link_to=self.plots.L_plot)  # a row under the drifts
        return box

    def _build_actions(self) -> None:
        super()._build_actions()
        self.save_action = add_action(self, "Save scenario as…", self.save_scenario, "Ctrl+S",
                                      "Write the running scenario as TOML")
        self.data_action = add_action(self, "Export trajectory…", self.export_trajectory_dialog, "Ctrl+Shift+E",
                                      "Re-simulate the scenario from its start and write the tumble simulate "
                                      "columns, one row per step, as CSV or NPZ")
        self.import_action = add_action(self, "Import recording…", self.import_recording_dialog, None,
                                        "Fit a gyroscope recording of throws (phyphox or CSV) and replay its flights")
        accept_recording_drops(self)  # a recording dropped on the window opens the same dialog
        self.samples_menu = self._samples_menu()
        self.sample_action = self.samples_menu.menuAction()
        self.phone_action = add_action(self, "Connect to phone…", self.connect_phone, None,
                                       "Follow a phone's gyroscope live (phyphox remote access): each throw fitted "
                                       "as it lands")
        self.view_png_action = add_action(self, "Save 3D view as PNG…", self.save_view_dialog, None,
                                          "Save what the 3D scene shows now, without the panels")

    def _build_toolbar(self, speed: float, stored) -> None:
        super()._build_toolbar(speed, stored)
        self.playback_toolbar.insertWidget(self.camera_action, self.ghost.checkbox)

    def _samples_menu(self):
        """File > Open sample: each shipped recording (tumble samples) opens the import dialog."""
        from PyQt5.QtWidgets import QMenu

        from ...throws.recordings.samples import samples

        menu = QMenu("Open sample", self)
        menu.setStatusTip("Fit a sample recording shipped with Tumble (no phone needed) and replay its flights")
        for sample in samples():
            action = menu.addAction(sample.name, lambda name=sample.name: self.open_sample(name))
            action.setStatusTip(sample.what)
        menu.menuAction().setEnabled(not menu.isEmpty())
        return menu

    def open_sample(self, name: str):
        """File > Open sample > NAME: the import dialog reads and fits the shipped sample ``name``."""
        from ..recordings.opening import open_recordings

        return open_recordings(self, [name])

    def _file_actions(self) -> list:
        return [self.open_action, self.save_action, self.import_action, self.sample_action, self.phone_action, None, self.export_action, self.data_action,
                None, self.shot_action, self.view_png_action, None, self.quit_action]

    def _view_actions(self) -> list:
        return [self.dock.toggleViewAction(), self.theory_dock.toggleViewAction(), self.ghost.action]

    def _build_view_status(self) -> None:
        self.parts_status = PartsStatus()  # a damper's nutation and energy, a rotor's wander
        self.statusBar().addPermanentWidget(self.parts_status)

    # ------------------------------------------------------------------ commands (GUI thread)

    def current_scenario(self):
        return self.panel.scenario, self.panel.preset_name

    def apply_scenario(self, scenario: Scenario) -> None:
        """Restart the run with ``scenario`` (already validated by the panel)."""
        self.worker.apply(scenario)
        self.error_label.setText("")

    def load_scenario(self, scenario: Scenario, preset: str | None = None, source: str | None = None) -> None:
        if is_fitted_flight(scenario) and scenario.solver.duration < replay_length(scenario):
            scenario = run_long_enough(scenario)
            self.ghost.set_checked(True)
        self.panel.set_scenario(scenario, preset=preset, source=source)
        self.apply_scenario(scenario)

    def replay_flight(self, scenario: Scenario) -> Scenario:
        """Run a fitted flight's ``scenario`` (the import dialog, the Phone dock), on past the
        flight until it has shown its flips (:func:`replay_length`), with the whole run in
        the plots; returns the scenario run."""
        solver = scenario.solver
        scenario = scenario.replace(solver=dataclasses.replace(solver, duration=replay_length(scenario)))
        self.load_scenario(scenario)
        self.window_combo.setCurrentText("all")  # a few seconds: show all of it
        return scenario

    def _ghost_toggled(self, _on: bool) -> None:
        self.drawn_serials = ()  # pose (or hide) it at once, even when paused
        self._last_plot = 0.0

    def _replot(self) -> None:
        self._last_plot = 0.0  # the plots' window or scale changed: redraw them at once

    def save_scenario(self) -> None:
        sc = self.panel.scenario
        default = f"{file_stem(sc.name)}.toml" if sc else "scenario.toml"
        self.save_dialog("Save scenario", default, "Scenario (*.toml)", lambda path: save(sc, path),
                         "Scenario not saved", "the scenario")

    def import_recording_dialog(self):
        """File > Import recording...: fit a recording of throws; its flights replay here."""
        from ..recordings.dialog import open_for

        return open_for(self)

    def connect_phone(self, url: str | None = None):
        """File > Connect to phone...: the Phone dock (gui/live_dock.py); with ``url``, connected."""
        from ..live.dock import open_phone

        return open_phone(self, url)

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
        self.save_dialog("Save 3D view", "tumble-view.png", "PNG image (*.png)",
                         lambda path: export_view_png(self.scene_view, path), "View not saved", "the 3D view")

    # ------------------------------------------------------------------ the frame loop (GUI thread)

    def _show_scenarios(self, snaps) -> None:
        old = self._shown_scenario
        sc = snaps[0].scenario
        self._shown_scenario = sc
        self.setWindowTitle(f"{self.panel.display_name or sc.name} — {window_title(self.VIEW_TITLE)}")
        self.show_view(snaps, reset_camera=not same_start(old, sc))
        self.plots.clear_curves()
        self._last_plot = 0.0
        self.legend.setText(legend_html(self._legend_rows()))
        self.legend.adjustSize()

    def _refresh_plots(self, snaps) -> None:
        snap = snaps[0]
        window = self.plots.window_s
        since = None if window is None else snap.t - window
        self.plots.refresh_from([self.worker], [snap])
        self.ghost.refresh_plot(self.worker, since)

    def _refresh_status(self, snaps) -> None:
        snap = snaps[0]
        lab = self.status_labels
        slow = f" · slow motion {snap.slowed:g}×" if snap.slowed > 1 else ""  # the clock stays simulated time
        lab["time"].setText(f"t = {snap.t:8.2f} s{slow}")
        show_run_state(lab["rtf"], snap)
        lab["steps"].setText(f"{snap.steps_per_second:6.0f} steps/s")
        lab["flips"].setText(f"flips {snap.flips}")
        period = snap.predicted_flip_period
        lab["period"].setText("predicted flip period " + period_text(period))
        self.parts_status.refresh(snap)
        self.theory.refresh(snap, self.worker)

    # ------------------------------------------------------------------ closing

    def _release(self) -> None:
        self.plots.release()
        self.ghost.release()

    def _save_view_settings(self, stored) -> None:
        from ...scenario import dumps

        stored.setValue(keys.view_key(self.VIEW, "exact_ghost"), self.ghost.wanted)
        stored.setValue(keys.view_key(self.VIEW, "plot_window"), self.window_combo.currentText())
        sc = self.panel.scenario
        if sc is not None:
            try:
                stored.setValue(keys.LAST_SCENARIO, dumps(sc))
            except (ValueError, TypeError):
                pass
            stored.setValue(keys.LAST_PRESET, self.panel.preset_name or "")
