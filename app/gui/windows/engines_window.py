"""The engines view (``tumble gui --view engines``, View > Engines): up to four physics-engine
settings side by side, each with the exact ghost, and their curves under the key.

The shell (:class:`~app.gui.windows.shell.ViewWindow`) runs the scenario in its worker as the clock;
the engines run in an :class:`AuditJob` thread (one setting at a time, cancellable between
settings, progress in the status bar) and the view (app.views.engines) poses each body from its
engine's run at the clock's time, the same calls the export makes::

    setting chosen -> AuditJob (thread) ...... done? -> view.set_audit      (_before_pose)
    frame          -> the shell: view.pose(workers, t) -> render; curves pane at its period

A setting whose engine is not installed is greyed out in its chooser, its install line as tooltip.
"""

from __future__ import annotations

import threading

import numpy as np
from PyQt5.QtCore import Qt, QTimer
from PyQt5.QtGui import QImage, QPixmap
from PyQt5.QtWidgets import QCheckBox, QComboBox, QLabel, QPushButton, QSizePolicy

from ...engines import registry
from ...physics.errors import ParameterError
from ...scenario import Scenario
from ...scene.engines import ENGINE_COLORS
from ...views.engines import MAX_SETTINGS, default_engines
from .shell import ViewWindow
from ..common.interrupt import interrupted
from ..common.theme import ERROR_TEXT
from .window_parts import legend_html, overlay_label, same_start, show_run_state

#: the chooser's entry for an empty slot
NONE_ITEM = "(none)"


class AuditJob:
    """One audit on a thread: ``progress`` (fraction, note), then ``result`` or ``error``.

    Thread: started and read by the GUI thread; runs on its own; :meth:`cancel` is asked
    between settings."""

    def __init__(self, view):
        self._lock = threading.Lock()
        self._cancel = threading.Event()
        self.progress = (0.0, "")
        self.result = None
        self.error = None
        self.done = False
        self.thread = threading.Thread(target=self._run, args=(view,), daemon=True, name="tumble-engines-audit")
        self.thread.start()

    def _run(self, view) -> None:
        try:
            result = view.run_audit(progress=self._progress, cancelled=self._cancel.is_set)
            with self._lock:
                self.result = result
        except KeyboardInterrupt:
            pass
        except Exception as err:  # noqa: BLE001 - shown in the status bar
            with self._lock:
                self.error = f"{err}" if isinstance(err, ParameterError) else f"{err.__class__.__name__}: {err}"
        with self._lock:
            self.done = True

    def _progress(self, fraction: float, note: str = "") -> None:
        with self._lock:
            self.progress = (float(fraction), note)

    def state(self) -> tuple:
        """(done, result, error, progress) copied under the lock."""
        with self._lock:
            return self.done, self.result, self.error, self.progress

    def cancel(self, wait_s: float = 0.0) -> None:
        self._cancel.set()
        if wait_s:
            self.thread.join(wait_s)


class CurvesWidget(QLabel):
    """The view's curves picture (:meth:`app.views.engines.EnginesView.picture`) shown as an image,
    redrawn at the curves pane's period. GUI thread."""

    def __init__(self, window):
        super().__init__()
        self.window = window
        self.picture = None
        self.setMinimumSize(300, 300)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        self.setAlignment(Qt.AlignCenter)

    def resizeEvent(self, event):  # noqa: N802 - Qt API
        self.picture = None
        super().resizeEvent(event)
        QTimer.singleShot(0, self.refresh)

    def refresh(self) -> None:
        view = getattr(self.window, "view", None)
        if view is None or self.width() < 50 or self.height() < 50:
            return
        if self.picture is None or self.picture.view is not view:
            self.picture = view.picture("curves", (self.width(), self.height()))
        rgb = np.ascontiguousarray(self.picture.render())
        h, w = rgb.shape[:2]
        self.setPixmap(QPixmap.fromImage(QImage(rgb.data, w, h, 3 * w, QImage.Format_RGB888).copy()))


class GhostBox(QCheckBox):
    """The exact ghost at every body, on or off (on by default: the audit is against it). GUI thread."""

    def __init__(self, window):
        super().__init__("exact ghost")
        self.setChecked(True)
        self.setToolTip("The closed-form motion drawn at every body: where each engine should be")
        self.toggled.connect(lambda _on: window.show_ghosts())

    def set_checked(self, on: bool) -> None:
        self.setChecked(bool(on))


class EnginesWindow(ViewWindow):
    """Engine settings side by side on one scenario (view ``engines``).

    Parameters
    ----------
    scenario : the scenario every engine runs (a free body: no loads, damper or rotor)
    engines : "ENGINE[:SETTING],..." (at most four; default every installed engine's default)
    preset, paused, persist : as every view window
    """

    VIEW = "engines"
    VIEW_TITLE = "Tumble: physics engines audited"
    COMMANDS = ("play", "step", "reset", "export", "open", "camera")
    PRESETS_MENU = True
    STATUS_FIELDS = (("audit", "the engines' runs: progress, or their wall time"),
                     ("time", "simulated time of the bodies drawn"),
                     ("rtf", "simulated seconds per wall-clock second"),
                     ("fps", "scene frames drawn per second"))
    TIPS = {"reset": "Back to the start", "camera": "Look at the row from the default direction",
            "follow": "Camera follows the middle of the row", "trail": "Each body's intermediate-axis tip, last 2 s",
            "export": "Render the engines off screen into an MP4, a GIF or PNG frames"}

    def __init__(self, scenario: Scenario, *, preset: str | None = None, paused: bool = False,
                 persist: bool = True, engines: str | None = None, parent=None):
        text = engines or default_engines()
        self._chosen = [x.strip() for x in str(text).split(",") if x.strip()][:MAX_SETTINGS]
        registry.parse(self._chosen, check_installed=False)  # an unknown name: one line before any window
        self.job: AuditJob | None = None
        self._shown_first = None
        super().__init__(scenario, preset=preset, paused=paused, persist=persist, parent=parent)

    # ------------------------------------------------------------------ construction

    def view_options(self) -> dict:
        """The chosen settings whose engines are installed (the others are greyed out)."""
        names = [n for n in self._chosen if registry.installed(n.partition(":")[0])]
        return {"engines": ",".join(names or ["tumble:rk4"])}

    def build_view_scene(self, panes: dict, stored) -> None:
        """The shell's, the view built to wait for the audit this window runs on its thread."""
        from ...views.engines import EnginesView

        with EnginesView.deferred():
            super().build_view_scene(panes, stored)

    def _build_view(self, stored) -> None:
        self.scene_view = self.gl_view(480, 300)
        self.curves = CurvesWidget(self)
        self.build_view_scene({"bodies": self.scene_view}, stored)
        self.legend = overlay_label(self.scene_view, legend_html(self.view.legend_rows))
        self._clear_key()
        self.set_central(self.scene_view, self.curves, (1000, 520))

    def _build_view_toolbars(self, stored) -> None:
        self.addToolBarBreak()
        tb = self.addToolBar("Engines")
        tb.setObjectName("engines")
        tb.setMovable(False)
        names = [NONE_ITEM] + registry.known()
        self.setting_combos = []
        for k in range(MAX_SETTINGS):
            tb.addWidget(QLabel(f" <b style='color:{ENGINE_COLORS[k]}'>{k + 1}</b> "))
            combo = QComboBox()
            for i, name in enumerate(names):
                combo.addItem(name)
                engine = name.partition(":")[0]
                if name != NONE_ITEM and not registry.installed(engine):
                    item = combo.model().item(i)
                    item.setEnabled(False)
                    combo.setItemData(i, registry.install_hint(engine), Qt.ToolTipRole)
            chosen = self._chosen[k] if k < len(self._chosen) else NONE_ITEM
            combo.setCurrentText(chosen if chosen in names else NONE_ITEM)
            combo.setToolTip(f"Engine setting {k + 1} (greyed: not installed; {registry.INSTALL_LINE})")
            combo.activated.connect(lambda _i: self.apply_choices())
            tb.addWidget(combo)
            self.setting_combos.append(combo)
        tb.addSeparator()
        self.ghost = GhostBox(self)
        tb.addWidget(self.ghost)
        tb.addSeparator()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the engines' runs (after the setting running now)")
        self.cancel_button.clicked.connect(self.cancel_audit)
        tb.addWidget(self.cancel_button)
        self.choice_error = QLabel()
        self.choice_error.setStyleSheet(f"color: {ERROR_TEXT}; padding-left: 6px;")
        tb.addWidget(self.choice_error)
        missing = [n for n in self._chosen if not registry.installed(n.partition(":")[0])]
        if missing:
            self.choice_error.setText(f"{', '.join(missing)}: {registry.INSTALL_LINE}")

    # ------------------------------------------------------------------ commands (GUI thread)

    def apply_choices(self) -> None:
        """Run the settings chosen (a new row of bodies, a new audit)."""
        chosen = [c.currentText() for c in self.setting_combos if c.currentText() != NONE_ITEM]
        self._chosen = list(dict.fromkeys(chosen)) or ["tumble:rk4"]
        self.choice_error.setText("")
        self._rebuild()

    def _rebuild(self) -> None:
        from ..common import settings as keys

        self.cancel_audit()
        self.view.clear()
        self.build_view_scene({"bodies": self.scene_view}, keys.open_settings())
        self.curves.picture = None
        self.legend.setText(legend_html(self.view.legend_rows))
        self.legend.adjustSize()
        self._clear_key()
        self.show_ghosts()
        self._start_audit()
        self.scene_view.update()

    def _clear_key(self) -> None:
        """The bodies laid out clear of the colour key in the scene's top left corner."""
        key = self.legend.geometry()
        self.view.scenes["bodies"].keep_key_clear(key.right() + 1, key.bottom() + 1)

    def show_ghosts(self) -> None:
        """The ghosts as the checkbox says (after every rebuild of the view, too)."""
        self.view.set_ghost_visible(self.ghost.isChecked())
        self.drawn_serials = ()  # pose again

    def _start_audit(self) -> None:
        self.job = AuditJob(self.view)
        self.cancel_button.setEnabled(True)

    def cancel_audit(self) -> None:
        if self.job is not None and not self.job.done:
            self.job.cancel()
            self.status_labels["audit"].setText("engines: cancelled")
        self.cancel_button.setEnabled(False)

    def load_scenario(self, scenario: Scenario, preset: str | None = None, source: str | None = None) -> None:
        """Audit the engines on another scenario (refused in the status bar where an engine cannot take it)."""
        from ...engines.start import check_free_body

        try:
            check_free_body(scenario)
        except ParameterError as err:
            self.choice_error.setText(str(err))
            return
        self.base, self.preset = scenario, preset
        self.error_label.setText("")
        self.worker.apply(scenario)

    # ------------------------------------------------------------------ the frame loop (GUI thread)

    def _first_frame(self) -> None:
        QTimer.singleShot(0, self._reset_camera)

    def _show_scenarios(self, snaps) -> None:
        old = self._shown_first
        sc = snaps[0].scenario
        self._shown_first = sc
        self.cancel_audit()
        self.show_view(snaps, reset_camera=not same_start(old, sc))
        self.legend.setText(legend_html(self.view.legend_rows))
        self.legend.adjustSize()
        self._clear_key()
        self.curves.picture = None
        self.show_ghosts()
        self._start_audit()

    def _before_pose(self, snaps) -> None:
        job = self.job
        if job is None:
            return
        done, result, error, (fraction, note) = job.state()
        label = self.status_labels["audit"]
        if not done:
            label.setText(f"engines {100 * fraction:3.0f}% {note}")
            return
        self.job = None
        self.cancel_button.setEnabled(False)
        if error is not None:
            self.error_label.setText(f"Engines: {error}")
        elif result is not None:
            self.view.set_audit(result)
            label.setText(f"engines: {result.summary['seconds']:.1f} s")
            self.drawn_serials = ()  # pose again with the runs
            self.curves.refresh()

    def _pane_posed(self, name: str) -> None:
        if name == "curves":
            self.curves.refresh()

    @property
    def posed_times(self) -> dict:
        """As the shell's, but no pane counts as posed until the engines' runs are in (before,
        each body stands at the start)."""
        times = ViewWindow.posed_times.fget(self)
        return times if self.view.audit is not None else dict.fromkeys(times)

    def _refresh_status(self, snaps) -> None:
        lab = self.status_labels
        lab["time"].setText(f"t = {self.drawn_time:8.2f} s")
        show_run_state(lab["rtf"], snaps[0])

    # ------------------------------------------------------------------ closing

    def _stop_jobs(self) -> None:
        if self.job is not None:  # Ctrl+C: the process is ending, its daemon thread with it
            self.job.cancel(wait_s=0.0 if interrupted() else 30.0)
