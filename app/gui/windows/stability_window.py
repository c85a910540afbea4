"""The stability view (``tumble gui --view stability``): for the scenario's body, how far
omega wanders from its start, for spin axes all over the sphere, on a latitude-longitude
map with the principal axes marked; a click runs that spin in a 3D scene beside the map.

Data flow (the shell's frame timer, :class:`~app.gui.windows.shell.ViewWindow`, GUI thread)::

    StabilityJob (thread)       --progress / result-->  _before_pose: progress bar, then the map once
    SimulationWorker (thread)   --latest()/span-->      the shell poses the view (app.views.stability):
                                                        the body every new snapshot, omega's track
                                                        (view.track) at the map pane's period -> _pane_posed
    map click (GUI)  -> nearest lattice direction k -> worker.apply(scenario with initial_omega(k))

Why the click runs the spin in a scene *beside* the map rather than in a new main window:
someone reading a map clicks one point after another (the unstable axis, a point beside
it, a stable axis) and wants to see each answer at once, next to the place clicked, with
omega's path drawn over the map as it wanders. A window per click would pile up and hide
the map. The full main view, with its panel and plots, is a double click away (or the "Open
in main view" button, which takes the spin last clicked).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PyQt5.QtCore import QPointF, Qt, pyqtSignal
from PyQt5.QtWidgets import (
    QApplication,
    QDoubleSpinBox,
    QLabel,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ...scene.palette import current as current_palette, tone
from ...scenario import Scenario
from ...scene.style import L_COLOR, OMEGA_COLOR, TRAIL_COLOR
from ...scene.body_scene import trail_label
from ...simulation.stability import DEFAULT_DIRECTIONS, DEFAULT_DURATION, axis_labels, map_frame
from ...simulation.stability_job import StabilityJob
from ...views.stability import COLOR_MAP, TRACK_COLOR, map_position
from ..common import settings as keys
from ..panels.fields import fixed
from ..plots.live_plots import release_menus
from .shell import ViewWindow
from ..plots.stability_map import add_axis_markers, body_direction
from ..common.theme import MUTED_TEXT
from .window_parts import END_OF_RUN, END_OF_RUN_TIP, add_action, overlay_label, save_window_png, window_title

#: a screenshot waits at most this long for the map to finish (s)
SCREENSHOT_MAP_WAIT_S = 60.0
#: range of the directions and duration choosers
DIRECTIONS_RANGE = (50, 20000)
DURATION_RANGE = (1.0, 120.0)


#: the track's colour in words, by colour scheme
TRACK_WORD = {"dark": "cyan", "projector": "teal"}


class StabilityWindow(ViewWindow):
    """The stability map of the scenario's body, and a scene running the spin clicked.

    Parameters
    ----------
    scenario : its body and |omega| set the map; its spin runs in the scene at first
    preset, paused, persist : as for every view
    directions, duration : the map's lattice size and simulated time (None: the stored
        choice, or 2000 directions over 20 s)

    Signals (GUI thread): as :class:`ViewWindow`; ``map_ready()`` when the map is drawn;
    ``spin_loaded(object)`` with the body-frame omega0 a click loaded.
    """

    map_ready = pyqtSignal()
    spin_loaded = pyqtSignal(object)

    VIEW = "stability"
    COMMANDS = ("play", "step", "reset", "kick", "export", "camera")
    STATUS_FIELDS = (("time", "simulated time of the spin beside the map"), ("fps", "scene frames drawn per second"),
                     ("flips", "reversals of the intermediate-axis component of ω"))
    TIPS = {"play": "Play or pause the spin beside the map", "step": "Pause the spin and advance one frame",
            "reset": "Run the spin again from its start",
            "kick": "A small angular impulse (watch a stable spin stay)"}

    def __init__(self, scenario: Scenario, *, preset: str | None = None, paused: bool = False,
                 persist: bool = True, directions: int | None = None, duration: float | None = None,
                 parent=None):
        #: the scenario of the spin chosen last (the base until a point is clicked)
        self.chosen = scenario
        self.result = None
        self.job: StabilityJob | None = None
        self.main_windows: list = []
        self.selected_index: int | None = None
        self._map_choice = (directions, duration)
        body = scenario.rigid_body
        self.moments, self.axes = body.principal()
        self.frame = map_frame(self.axes)
        self.axis_labels = axis_labels(self.moments)
        self.omega_norm = float(np.linalg.norm(scenario.angular_velocity))
        super().__init__(scenario, preset=preset, paused=paused, persist=persist, parent=parent)
        self.setWindowTitle(window_title(f"Stability map of {scenario.name}"))
        self._show_selection(np.asarray(scenario.angular_velocity, dtype=float))
        self._show_info()
        self.compute()

    # ------------------------------------------------------------------ construction

    def _build_view(self, stored) -> None:
        # --- central area: (map over its caption) | scene
        self.map_widget = pg.GraphicsLayoutWidget()
        self._build_map()
        self.info = QLabel()
        self.info.setWordWrap(True)
        self.info.setTextFormat(Qt.RichText)
        self.info.setContentsMargins(10, 4, 10, 6)
        left = QWidget()
        lay = QVBoxLayout(left)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(self.map_widget, 1)
        lay.addWidget(self.info)
        self.scene_view = self.gl_view(300, 300)
        self.build_view_scene({"body": self.scene_view}, stored)
        self.scene_view.add_axes(color=tone("#c9d1d9"), line_width=2, labels_off=False)
        self.spin_label = overlay_label(self.scene_view)
        self.set_central(left, self.scene_view, (900, 540))

    def _build_map(self) -> None:
        plot = self.map_plot = self.map_widget.addPlot(row=0, col=0)
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.setMouseEnabled(x=False, y=False)
        plot.setAspectLocked(True, ratio=1.0)
        plot.setRange(xRange=(-180, 180), yRange=(-90, 90), padding=0.02)
        plot.setLabel("bottom", "longitude of the initial spin axis (deg): 0 = intermediate axis, ±90 = major axis")
        plot.setLabel("left", "latitude (deg): ±90 = minor axis")
        plot.getAxis("bottom").setTicks([[(x, f"{x:g}") for x in range(-180, 181, 45)]])
        plot.getAxis("left").setTicks([[(y, f"{y:g}") for y in range(-90, 91, 30)]])
        plot.setTitle("<span style='font-size:10pt'>Stability map: largest angle between ω(t) and ω(0)</span>")
        cmap = pg.colormap.get(COLOR_MAP)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setColorMap(cmap)
        self.image.setZValue(-10)
        plot.addItem(self.image)
        self.colorbar = pg.ColorBarItem(values=(0, 180), colorMap=cmap, label="wander (deg)", interactive=False,
                                        width=16, colorMapMenu=False)
        self.colorbar.setImageItem(self.image, insert_in=plot)
        self.image.setLevels((0, 180))
        self.pending_text = pg.TextItem("computing the stability map…", color=tone("#c9d1d9"), anchor=(0.5, 0.5))
        self.pending_text.setPos(0, 45)
        plot.addItem(self.pending_text)
        # omega's track (the spin running beside the map), the point chosen, the axes
        self.track = pg.PlotDataItem(pen=pg.mkPen(tone(TRACK_COLOR), width=1.6), connect="finite")
        plot.addItem(self.track)
        self.track_head = pg.ScatterPlotItem(size=9, pen=pg.mkPen("#000000", width=1), brush=pg.mkBrush(tone(TRACK_COLOR)))
        plot.addItem(self.track_head)
        self.choice_marker = pg.ScatterPlotItem(size=22, symbol="+", pen=pg.mkPen(tone(TRACK_COLOR), width=3),
                                                brush=pg.mkBrush(tone(TRACK_COLOR)))
        plot.addItem(self.choice_marker)
        self.axis_places = add_axis_markers(plot, self.axes, self.frame, self.axis_labels)
        plot.scene().sigMouseClicked.connect(self._map_clicked)

    def _build_actions(self) -> None:
        super()._build_actions()
        self.main_action = add_action(self, "Open in main view", self.open_in_main_view, "Ctrl+M",
                                      "Open the main window on this spin, with the parameter panel and the plots")

    def _file_actions(self) -> list:
        return [self.main_action, None, self.export_action, None, self.shot_action, None, self.quit_action]

    def _build_view_toolbars(self, stored) -> None:
        directions, duration = self._map_choice
        if directions is None:
            directions = self.setting(stored, "directions", DEFAULT_DIRECTIONS, int) if self.persist \
                else DEFAULT_DIRECTIONS
        if duration is None:
            duration = self.setting(stored, "duration", DEFAULT_DURATION, float) if self.persist else DEFAULT_DURATION
        self._build_toolbars(int(directions), float(duration))

    def _build_toolbars(self, directions: int, duration: float) -> None:
        tb = self.addToolBar("Map")
        tb.setObjectName("map")
        tb.setMovable(False)
        tb.addWidget(QLabel(" directions "))
        self.directions_box = QSpinBox()
        self.directions_box.setRange(*DIRECTIONS_RANGE)
        self.directions_box.setSingleStep(500)
        self.directions_box.setValue(min(max(directions, DIRECTIONS_RANGE[0]), DIRECTIONS_RANGE[1]))
        self.directions_box.setToolTip("Initial spin axes swept over the sphere (a Fibonacci lattice)")
        tb.addWidget(self.directions_box)
        tb.addWidget(QLabel(" over "))
        self.duration_box = QDoubleSpinBox()
        self.duration_box.setRange(*DURATION_RANGE)
        self.duration_box.setDecimals(1)
        self.duration_box.setSuffix(" s")
        self.duration_box.setValue(min(max(duration, DURATION_RANGE[0]), DURATION_RANGE[1]))
        self.duration_box.setToolTip("Simulated time of each spin: longer runs let slow flips show")
        tb.addWidget(self.duration_box)
        self.compute_button = QPushButton("Compute")
        self.compute_button.setToolTip("Compute the map again with these settings")
        self.compute_button.clicked.connect(self.compute)
        tb.addWidget(self.compute_button)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setFixedWidth(220)
        self.progress.setFormat("computing… %p%")
        self.progress_action = tb.addWidget(self.progress)  # a toolbar shows or hides the action
        self.map_status = QLabel()
        self.map_status.setContentsMargins(8, 0, 8, 0)
        tb.addWidget(self.map_status)
        self.insertToolBar(self.playback_toolbar, tb)  # the map's settings first, the spin's on a row below
        self.insertToolBarBreak(self.playback_toolbar)
        self.playback_toolbar.addSeparator()
        self.playback_toolbar.addAction(self.main_action)

    # ------------------------------------------------------------------ the map (GUI thread)

    def compute(self) -> None:
        """(Re)start the map's computation on its own thread with the chosen settings."""
        if self.job is not None:
            self.job.stop()
        if not self.omega_norm > 0:
            self.job = None
            self.progress_action.setVisible(False)
            self.map_status.setText("")
            self.error_label.setText(f"The stability map needs a spin: {self.base.name}'s initial angular "
                                     "velocity is zero, and its magnitude sets the rate of every spin on the map")
            return
        self.job = StabilityJob(self.base.rigid_body, self.omega_norm, self.directions_box.value(),
                                self.duration_box.value())
        self.progress.setValue(0)
        self.progress_action.setVisible(True)
        self.map_status.setText("")
        self.compute_button.setEnabled(False)
        self.job.start()

    def _poll_job(self) -> None:
        job = self.job
        if job is None:
            return
        if job.is_alive():
            self.progress.setValue(round(1000 * job.progress))
            return
        self.job = None
        self.compute_button.setEnabled(True)
        self.progress_action.setVisible(False)
        if job.error:
            self.map_status.setText("")
            self.error_label.setText(f"Stability map failed: {job.error}")
            return
        if job.result is None:  # cancelled
            return
        self._show_map(job.result)

    def _show_map(self, result) -> None:
        self.result = result
        smap = result.smap
        self.selected_index = self._same_direction(smap)
        grid = np.degrees(result.grid)
        self.image.setImage(grid, autoLevels=False, levels=(0, 180))
        lon, lat = result.lon_edges, result.lat_edges
        self.image.setRect(float(lon[0]), float(lat[0]), float(lon[-1] - lon[0]), float(lat[-1] - lat[0]))
        self.pending_text.setVisible(False)
        self.map_status.setText(f"{len(smap.wander)} directions over {smap.duration:g} s "
                                f"({smap.integrator}, dt {smap.dt:.3g} s) in {result.seconds:.1f} s")
        self._show_info()
        self.map_ready.emit()

    def _same_direction(self, smap) -> int | None:
        """The index on ``smap`` of the spin chosen on the map shown before, if it is one of
        this map's directions too; else None: an index always belongs to the map shown (a
        choice on a 200-direction map indexed past a new 50-direction one)."""
        if self.selected_index is None:
            return None
        w0 = np.asarray(self.chosen.angular_velocity, dtype=float)
        if not np.linalg.norm(w0) > 0:
            return None
        k = smap.nearest(w0)
        same = np.allclose(smap.initial_omega(k), w0, rtol=1e-12, atol=1e-12 * np.linalg.norm(w0))
        return k if same else None

    def _show_info(self) -> None:
        rows = []
        wander = self.result.smap.axis_wander() if self.result is not None else None
        for k, label in enumerate(self.axis_labels):
            name, _, verdict = label.partition(": ")
            colour = tone("#ff7b72") if verdict.startswith("unstable") else tone("#7ee787")
            w = "" if wander is None else f", wanders {math.degrees(wander[k]):.0f}°"
            rows.append(f"{name} axis (I{k + 1} = {self.moments[k]:.4g} kg m²): "
                        f"<b style='color:{colour}'>{verdict}</b>{w}")
        choice = ""
        if self.result is not None and self.selected_index is not None:
            smap = self.result.smap
            k = self.selected_index
            period = smap.flip_period[k]
            choice = (f"<br>Chosen spin: wanders {math.degrees(smap.wander[k]):.0f}° in {smap.duration:g} s"
                      + (f", flips every {period:.3g} s" if np.isfinite(period) else ", no flip"))
        hint = (f"<span style='color:{MUTED_TEXT}'>Every spin has |ω| = {self.omega_norm:.4g} rad/s. "
                "Click the map to run that spin in the scene on the right; its ω(t) is drawn on the map "
                f"in <span style='color:{tone(TRACK_COLOR)}'>{TRACK_WORD[current_palette().name]}</span>.</span>")
        self.info.setText("&nbsp;&nbsp;·&nbsp;&nbsp;".join(rows) + choice + "<br>" + hint)

    def map_to_widget(self, lon: float, lat: float):
        """The point of the map widget's viewport at (lon, lat) degrees (for tests, scripts)."""
        scene_pos = self.map_plot.vb.mapViewToScene(QPointF(lon, lat))
        return self.map_widget.mapFromScene(scene_pos)

    def _map_clicked(self, event) -> None:
        if event.button() != Qt.LeftButton:
            return
        pos = event.scenePos()
        if not self.map_plot.vb.sceneBoundingRect().contains(pos):
            return
        p = self.map_plot.vb.mapSceneToView(pos)
        lon, lat = p.x(), p.y()
        if -180.0 <= lon <= 180.0 and -90.0 <= lat <= 90.0:
            self.select_point(lon, lat)
            if event.double():  # a double click takes that spin on into a main window
                self.open_in_main_view()

    def select_point(self, lon: float, lat: float) -> np.ndarray:
        """Run the spin at a map point (degrees): the nearest lattice direction's initial
        omega once the map exists (so what runs is what the map shows), else the point's own
        direction at the map's |omega|. Returns the body-frame omega0 loaded."""
        direction = body_direction(lon, lat, self.frame)
        if self.result is not None:
            smap = self.result.smap
            self.selected_index = smap.nearest(direction)
            w0 = smap.initial_omega(self.selected_index)
        else:
            self.selected_index = None
            w0 = self.omega_norm * direction
        self.load_spin(w0)
        return w0

    def load_spin(self, w0) -> None:
        """Restart the scene's run from the scenario's start with body-frame omega0 ``w0``."""
        w0 = np.asarray(w0, dtype=float)
        sc = self.base.replace(name=f"{self.base.name} (from the stability map)",
                               angular_velocity=tuple(float(x) for x in w0))
        self.worker.apply(sc)
        self.chosen = sc  # the worker takes it at its next step; a main window needs it now
        self._show_selection(w0)
        self._show_info()
        self.error_label.setText("")
        self.spin_loaded.emit(w0)

    def _show_selection(self, w0: np.ndarray) -> None:
        if not np.linalg.norm(w0) > 0:
            self.choice_marker.setData([], [])
            return
        lon, lat = map_position(w0, self.frame)
        self.choice_marker.setData([lon], [lat])

    # ------------------------------------------------------------------ commands (GUI thread)

    def view_options(self) -> dict:
        """The exported map as the window computes it: its directions and simulated time (only
        the export draws the map from these; the window's own map has its own job)."""
        if not hasattr(self, "directions_box"):  # the shell builds the view before the choosers
            return {}
        return {"directions": self.directions_box.value(), "map_duration": self.duration_box.value()}

    def current_scenario(self):
        return self.chosen, self.preset if self.chosen is self.base else None

    def open_in_main_view(self):
        """Open a main window on the spin chosen last (it stays open on its own)."""
        from .main_window import MainWindow

        window = MainWindow(self.chosen, persist=self.persist)
        window.setAttribute(Qt.WA_DeleteOnClose)
        self.main_windows.append(window)
        window.destroyed.connect(lambda *_a, w=window: self.main_windows.remove(w) if w in self.main_windows else None)
        window.show()
        return window

    def save_screenshot(self, path, wait_for_map: bool = True) -> Path:
        """Write the whole window as a PNG, atomically. With ``wait_for_map`` (what
        ``--screenshot`` does), a map still being computed is waited for and drawn first."""
        path = Path(path)
        job = self.job
        if wait_for_map and job is not None:
            job.join(SCREENSHOT_MAP_WAIT_S)
            self._poll_job()
            QApplication.processEvents()
        return save_window_png(self, path)

    # ------------------------------------------------------------------ the frame loop (GUI thread)

    def _before_pose(self, snaps) -> None:
        self._poll_job()

    def _show_scenarios(self, snaps) -> None:
        sc = snaps[0].scenario
        self.show_view(snaps)
        w0 = np.asarray(sc.angular_velocity, dtype=float)
        w_text = ", ".join(f"{x:.3g}" for x in w0)
        lon, lat = map_position(w0, self.frame) if np.linalg.norm(w0) > 0 else (0.0, 0.0)
        self.spin_label.setText(
            f"<b>{sc.name}</b><br>ω₀ = ({w_text}) rad/s, body frame<br>"
            f"map point: longitude {fixed(lon, 1)}°, latitude {fixed(lat, 1)}°<br>"
            f"<span style='color:{tone(OMEGA_COLOR)}'>■</span> ω &nbsp; <span style='color:{tone(L_COLOR)}'>■</span> L "
            f"&nbsp; <span style='color:{tone(TRAIL_COLOR)}'>■</span> {trail_label(sc.rigid_body)}")
        self.spin_label.adjustSize()

    def _pane_posed(self, name: str) -> None:
        """Omega's track on the map, as the view has it after posing its ``map`` pane."""
        lon, lat = self.view.track
        self.track.setData(lon, lat)
        finite = np.isfinite(lon)
        self.track_head.setData(lon[finite][-1:], lat[finite][-1:])

    def _refresh_status(self, snaps) -> None:
        snap = snaps[0]
        lab = self.status_labels
        state = "" if snap.running else f" ({END_OF_RUN})" if snap.ended else " (paused)"
        lab["time"].setText(f"t = {snap.t:8.2f} s{state}")
        lab["time"].setToolTip(END_OF_RUN_TIP if snap.ended else "simulated time of the spin beside the map")
        lab["flips"].setText(f"flips {snap.flips}")

    # ------------------------------------------------------------------ closing (main windows opened here stay open)

    def _stop_jobs(self) -> None:
        if self.job is not None:
            self.job.stop()

    def _save_view_settings(self, stored) -> None:
        stored.setValue(keys.view_key(self.VIEW, "directions"), self.directions_box.value())
        stored.setValue(keys.view_key(self.VIEW, "duration"), self.duration_box.value())

    def _release(self) -> None:
        release_menus(self.map_plot, self.colorbar)  # a ColorBarItem is a PlotItem, menus and all
