"""The compare view (``tumble gui --view compare``): one scenario run by two integrators
(and/or two steps) side by side in one scene, with their energy and |L| drifts on shared plots.

The shell (:class:`~app.gui.windows.shell.ViewWindow`) runs the frame loop with one worker a side;
this module adds the choosers, the drift plots and the summary, and each frame::

    new scenarios? -> view.show (app.views.compare), DriftPlots.clear_curves
    news?          -> the shell: view.pose(workers, the earlier latest time) -> one render
    plot period?   -> DriftPlots.refresh                    (PLOT_INTERVAL_S)
    status period? -> status bar labels, summary            (STATUS_INTERVAL_S)

Each worker owns its copy and paces it to real time; commands (apply, play/pause, step,
reset, speed) go to both, back to back, so the two runs start and stop together (within
a record interval, 10 ms of simulated time, of each other).
"""

from __future__ import annotations

from types import SimpleNamespace

from PyQt5.QtCore import Qt, QTimer
from PyQt5.QtWidgets import QComboBox, QLabel, QLineEdit, QPushButton, QSizePolicy, QWidget

from ...scene.palette import tone
from ...physics.errors import ParameterError
from ...physics.integrators import DESCRIPTIONS, INTEGRATORS
from ...scenario import Scenario, preset_names
from ...scenario.document import number_from_text
from ...scene.compare import SIDE_COLORS
from ...simulation.compare import SIDES, side_label, variant
from ..plots.live_plots import DEFAULT_COMPARE_WINDOW, DriftPlots, PlotsBox
from ..common import settings as keys
from .shell import ViewWindow
from ..common.theme import ERROR_TEXT
from .window_parts import CornerPin, legend_html, overlay_label, same_start, show_run_state


class CompareWindow(ViewWindow):
    """Two integrators (or steps) on one scenario, side by side (view ``compare``).

    Parameters
    ----------
    scenario : the scenario both sides copy (body, start, loads, duration)
    preset : its preset name, if it is one
    paused : open paused
    persist : remember the geometry and the log option
    integrators, dts : each side's integrator and step (None: the defaults of
        :func:`app.simulation.compare.default_pair`, at the scenario's dt)

    Signals as :class:`ViewWindow`; ``simulation_failed(str)`` when either worker reports an error.
    """

    VIEW = "compare"
    VIEW_TITLE = "Tumble: integrators side by side"
    COMMANDS = ("play", "step", "reset", "export", "open", "camera")
    PRESETS_MENU = True
    STATUS_FIELDS = (
        ("time", "simulated time of the two bodies drawn"),
        ("rtf", "simulated seconds per wall-clock second, the slower side"),
        ("fps", "scene frames drawn per second"),
        ("flips", "reversals of the intermediate-axis component of ω, A / B"))
    TIPS = {"play": "Play or pause both runs", "step": "Pause both and advance one frame",
            "reset": "Both back to the initial state", "camera": "Look at the pair from the default direction",
            "speed": "Playback speed of both runs, 0.1× to 10× real time (log scale)",
            "follow": "Camera follows the midpoint of the two bodies",
            "trail": "Path of each body's intermediate-axis tip over the last seconds",
            "export": "Re-simulate both sides off screen into an MP4, a GIF or PNG frames"}

    def __init__(self, scenario: Scenario, *, preset: str | None = None, paused: bool = False,
                 persist: bool = True, integrators=(None, None), dts=(None, None), parent=None):
        self._choices = (integrators, dts)
        self._shown_first = None  # side A's scenario shown last
        super().__init__(scenario, preset=preset, paused=paused, persist=persist, parent=parent)

    # ------------------------------------------------------------------ construction

    def _runs(self, scenario: Scenario) -> tuple:
        integrators, dts = self._choices
        return tuple(self.spec.runs(scenario, {"integrators": integrators, "dts": dts}))

    def view_options(self) -> dict:
        """The pair's integrators and steps as they run now."""
        pair = self.scenarios
        return {"integrators": tuple(s.solver.integrator for s in pair), "dts": tuple(s.solver.dt for s in pair)}

    def _build_view(self, stored) -> None:
        # --- central area: scene | plots
        self.scene_view = self.gl_view(360, 300)
        self.build_view_scene({"pair": self.scene_view}, stored)
        self.legend = overlay_label(self.scene_view, legend_html(self.view.legend_rows))
        # bottom right: the sides' labels float above the bodies, side A's at the top left
        self.legend_pin = CornerPin(self.legend)
        self.scene_view.add_axes(color=tone("#c9d1d9"), line_width=2, labels_off=False)
        self.plots = DriftPlots()
        # the plots' Qt repaint costs by area: two plots need no more width than the main view's three
        self.set_central(self.scene_view, self._plots_box(stored), (960, 480))

    def _plots_box(self, stored) -> QWidget:
        box = PlotsBox(self.plots, DEFAULT_COMPARE_WINDOW,
                       "Scroll over the last seconds of simulated time, or show the whole run",
                       "Plot the drifts as log10 of their magnitude: the two sides differ by orders "
                       "of magnitude (round-off shows as about -16)", changed=self._replot,
                       log=self.setting(stored, "log_drift", True, bool) if self.persist else True)
        self.window_combo, self.log_drift = box.window_combo, box.log_drift
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

    def _build_view_toolbars(self, stored) -> None:
        self.addToolBarBreak()
        self._build_choosers([w.latest().scenario for w in self.workers], self.preset)

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
            tag = QLabel(f" <b style='color:{tone(color)}'>{side}</b> ")
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

    # ------------------------------------------------------------------ commands (GUI thread)

    @property
    def scenarios(self) -> tuple:
        """The two scenarios the workers run now."""
        return tuple(w.latest().scenario for w in self.workers)

    def apply_choices(self) -> bool:
        """Read the choosers; restart both runs with them, or show why not (runs go on)."""
        pair = []
        for side, combo, field in zip(SIDES, self.integrator_combos, self.dt_fields):
            try:
                dt = number_from_text(field.text(), f"{side}.dt")  # a scenario file's number rules
                pair.append(variant(self.base, combo.currentText(), dt, side))
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

    def load_scenario(self, scenario: Scenario, preset: str | None = None, source: str | None = None) -> None:
        """Compare on another scenario, keeping the chosen integrators and steps."""
        self.base, self.preset = scenario, preset
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

    def _preset_chosen(self, index: int) -> None:
        name = self.preset_combo.itemText(index)
        if name in preset_names():
            self.load_preset(name)

    def _replot(self) -> None:
        self._last_plot = 0.0  # the plots' window or scale changed: redraw them at once

    # ------------------------------------------------------------------ the frame loop (GUI thread)

    def _first_frame(self) -> None:
        # the widget has its final shape now: frame the pair for it
        QTimer.singleShot(0, self._reset_camera)

    def _error_message(self, k: int, snap) -> str:
        return f"{SIDES[k]} ({side_label(snap.scenario)}) stopped: {snap.error}"

    def _show_scenarios(self, snaps) -> None:
        old = self._shown_first
        sc = snaps[0].scenario
        self._shown_first = sc
        labels = [f"{side}: {side_label(s.scenario)}" for side, s in zip(SIDES, snaps)]
        self.show_view(snaps, reset_camera=not same_start(old, sc))
        self.legend.setText(legend_html(self.view.legend_rows))  # L fixed, or turned by the loads
        self.legend.adjustSize()
        self.plots.set_names(labels)
        self.plots.clear_curves()
        self._last_plot = 0.0
        for combo, field, s in zip(self.integrator_combos, self.dt_fields, snaps):
            if not field.hasFocus():
                combo.setCurrentText(s.scenario.solver.integrator)
                field.setText(f"{s.scenario.solver.dt:g}")

    def _refresh_plots(self, snaps) -> None:
        self.plots.refresh_from(self.workers, snaps)

    def _refresh_status(self, snaps) -> None:
        lab = self.status_labels
        a, b = snaps
        lab["time"].setText(f"t = {self.drawn_time:8.2f} s")
        running = a.running or b.running
        show_run_state(lab["rtf"], SimpleNamespace(running=running, ended=a.ended and b.ended,
                                                   realtime_factor=min(a.realtime_factor, b.realtime_factor),
                                                   compiling=a.compiling or b.compiling))
        lab["flips"].setText(f"flips {a.flips} / {b.flips}")
        parts = []
        for side, color, snap in zip(SIDES, SIDE_COLORS, snaps):
            parts.append(f"<span style='color:{tone(color)}'><b>{side}</b></span> ΔE/E₀ {snap.E_drift + 0.0:+.2e}, "
                         f"Δ|L|/|L₀| {snap.L_norm_drift + 0.0:+.2e}")
        self.summary.setText("<br>".join(parts))

    # ------------------------------------------------------------------ closing

    def _save_view_settings(self, stored) -> None:
        stored.setValue(keys.view_key(self.VIEW, "log_drift"), self.log_drift.isChecked())

    def _release(self) -> None:
        self.plots.release()
