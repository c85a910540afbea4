"""File > Import recording: fit a gyroscope recording of throws, inspect its flights, replay one.

Data flow::

    Open recording / drop / tumble gui REC -> open_paths -> fit_job: the worker process reads and fits
    QTimer (dialog, 50 ms) -> progress bar; outcome -> flights table, ratios, omega plot
    a flight chosen        -> the main window runs its scenario (a box of the fitted ratios
                              spun with the flight's initial rate) and shows the measured
                              rates as points on its omega plot
    View > another view    -> the dialog moves to the new window (or closes with the old one)

One job (fit or prediction) runs at a time: a recording opened while one runs cancels it and
starts once it has stopped. Reading and fitting run in a worker process that Cancel kills at
once (:mod:`.job`); the job's thread never touches a widget.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyqtgraph as pg
from PyQt5.QtCore import QEvent, QObject, Qt, QTimer, pyqtSignal
from PyQt5.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ...physics.errors import ParameterError
from ...scene.style import AXIS_HEX, tone
from ...throws.fitting.fit import AXES_MODES, triangle_violation
from ...throws.recordings.reader import read_recordings
from ...throws.fitting.report import flight_scenario, write_scenario
from ..dialogs.file_dialogs import open_recordings_paths, save_path
from .predict_tab import PredictTab
from ..plots.rates_plot import MEASURED_FLIP, MODEL_FLIP, RatesPlot
from .flights_table import FlightsTable, flight_rows, open_replay
from .job import RecordingJob, Worker, fit_job
from ..common.theme import ERROR_TEXT, MUTED_TEXT

#: how often the dialog reads the job's progress (ms)
POLL_MS = 50
#: how long closing waits for a cancelled job to stop (s)
JOIN_S = 10.0
#: the main window's attribute holding its import dialog (one per window, one job at a time)
DIALOG_ATTRIBUTE = "recording_dialog"


class RecordingDialog(QDialog):
    """Import recordings, fit them, choose a flight. GUI thread only; modeless.

    Signals (GUI thread): ``fit_finished(object)`` with the :class:`~app.throws.fitting.fit.FitResult`,
    ``fit_failed(str)`` with the one-line reason, ``fit_cancelled()``, ``flight_shown(int)``
    with the index of the flight the main window now replays.
    """

    fit_finished = pyqtSignal(object)
    fit_failed = pyqtSignal(str)
    fit_cancelled = pyqtSignal()
    flight_shown = pyqtSignal(int)

    #: reads one recording path (in the reading child: a module-level function)
    reader = staticmethod(read_recordings)

    def __init__(self, window=None, parent=None):
        super().__init__(parent if parent is not None else window)
        self.setWindowTitle("Import recording: fit a throw")
        self.window_ = None
        self.paths: list[str] = []
        self.recordings = None
        self.result = None
        self.unphysical: str | None = None  # the sentence saying the fitted ratios break the triangle inequality
        self.exclude: list = []             # (recording index, time) of flights the user leaves out
        self.include: list = []             # ... and of flights the fit excluded that the user puts back
        self.job: RecordingJob | None = None
        self._worker: Worker | None = None
        self._pending: list[str] | None = None  # paths opened while a job ran: started when it stops
        self._overlay: list = []
        self.resize(1180, 680)
        self._build()
        self.timer = QTimer(self)
        self.timer.timeout.connect(self._poll)
        self._follower = _WindowFollower(self)
        self.attach(window)
        self.worker()  # started now: it imports the fit while the user picks a file

    # ------------------------------------------------------------------ layout

    def _build(self) -> None:
        lay = QVBoxLayout(self)
        top = QHBoxLayout()
        self.open_button = QPushButton("Open recording…")
        self.open_button.setToolTip("phyphox exports (folders or .zip) or CSV files of time and three rates; "
                                    "several are fitted together")
        self.open_button.clicked.connect(self._browse)
        top.addWidget(self.open_button)
        self.path_label = QLabel("no recording yet")
        self.path_label.setObjectName("hint")
        self.path_label.setMinimumWidth(1)  # a long path is elided, never widens the dialog
        top.addWidget(self.path_label, 1)
        lay.addLayout(top)
        lay.addLayout(self._options_row())

        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.setMaximumHeight(10)
        lay.addWidget(self.progress)
        self.status = QLabel("")
        self.status.setWordWrap(True)  # an error names a path and a rule: it wraps, never runs off the edge
        self.status.setTextInteractionFlags(Qt.TextSelectableByMouse)
        lay.addWidget(self.status)
        self.ratios_label = QLabel("")
        self.ratios_label.setObjectName("moments")
        self.ratios_label.setWordWrap(True)
        self.ratios_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        lay.addWidget(self.ratios_label)

        self.tabs = QTabWidget()
        self.tabs.addTab(self._flights_tab(), "Flights")
        self.predict_tab = PredictTab(self)
        self.tabs.addTab(self.predict_tab, "Predict")
        lay.addWidget(self.tabs, 1)

        bottom = QHBoxLayout()
        self.hint = QLabel("The main window replays the selected flight (plots over all of it); its ω plot "
                           "shows the measured points. Replay in 3D turns a flight's measured rates into the "
                           "object's own motion, the fitted model beside it.")
        self.hint.setObjectName("hint")
        self.hint.setWordWrap(True)
        bottom.addWidget(self.hint, 1)
        self.keep_unphysical = QCheckBox("keep unphysical ratios")
        self.keep_unphysical.setToolTip("Save ratios that break the triangle inequality anyway "
                                        "(tumble fit --allow-unphysical); no rigid body has them")
        self.keep_unphysical.setVisible(False)
        self.keep_unphysical.toggled.connect(self._update_save)
        bottom.addWidget(self.keep_unphysical)
        self.save_button = QPushButton("Save as scenario…")
        self.save_button.setToolTip("A scenario that replays the selected flight (tumble simulate / tumble gui)")
        self.save_button.clicked.connect(self._save_dialog)
        self.save_button.setEnabled(False)
        bottom.addWidget(self.save_button)
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        bottom.addWidget(close)
        lay.addLayout(bottom)

    def _options_row(self) -> QHBoxLayout:
        opts = QHBoxLayout()
        opts.addWidget(QLabel("drag"))
        self.drag_combo = QComboBox()
        self.drag_combo.addItems(["quadratic", "linear", "none"])
        self.drag_combo.setToolTip("Drag torque per sensor axis: quadratic -c|ω|ω, linear -cω, or none")
        opts.addWidget(self.drag_combo)
        opts.addWidget(QLabel("axes"))
        self.axes_combo = QComboBox()
        self.axes_combo.addItems(list(AXES_MODES))
        self.axes_combo.setToolTip("sensor: the principal axes are the sensor's; fit: a small rotation between them")
        opts.addWidget(self.axes_combo)
        opts.addWidget(QLabel("largest moment"))
        self.scale_box = QDoubleSpinBox()
        self.scale_box.setDecimals(6)
        self.scale_box.setRange(1e-6, 1e3)
        self.scale_box.setValue(1.0)
        self.scale_box.setSuffix(" kg m²")
        self.scale_box.setToolTip("Only ratios are measured: this sets the scale of the inertia and the drag")
        opts.addWidget(self.scale_box)
        opts.addStretch(1)
        self.fit_button = QPushButton("Fit")
        self.fit_button.setToolTip("Fit the ticked flights again (all flights the first time)")
        self.fit_button.clicked.connect(self.start_fit)
        self.fit_button.setEnabled(False)
        opts.addWidget(self.fit_button)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop reading or fitting now; the last result stays")
        self.cancel_button.clicked.connect(self.cancel_fit)
        self.cancel_button.setEnabled(False)
        opts.addWidget(self.cancel_button)
        return opts

    def _flights_tab(self) -> QWidget:
        split = QSplitter(Qt.Horizontal)
        left = QWidget()
        column = QVBoxLayout(left)
        column.setContentsMargins(0, 0, 0, 0)
        self.table = FlightsTable()
        self.table.flight_selected.connect(self.show_flight)
        self.table.replay_requested.connect(self.replay_in_3d)
        self.table.use_changed.connect(self._use_changed)
        column.addWidget(self.table, 1)
        self.note_label = QLabel("")  # the selected flight's note in full: why it was excluded
        self.note_label.setObjectName("hint")
        self.note_label.setWordWrap(True)
        self.note_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        column.addWidget(self.note_label)
        split.addWidget(left)
        self.plot = RatesPlot("measured (points) and fitted (lines) ω, sensor frame")
        self.fit_curves, self.points = self.plot.curves, self.plot.points
        split.addWidget(self.plot)
        split.setSizes([720, 500])
        return split

    # ------------------------------------------------------------------ the window it serves

    def attach(self, window) -> None:
        """Serve ``window`` (a main window): replay flights there, follow it to another view,
        close with it. The replay is moved there at once."""
        if window is self.window_:
            return
        self._clear_overlay()
        self._follower.watch(window)
        self._forget_window()
        self.window_ = window
        if window is not None:
            if self.parent() is not window:
                shown = self.isVisible()
                self.setParent(window, self.windowFlags())
                if shown:
                    self.show()
            setattr(window, DIALOG_ATTRIBUTE, self)
            index = self.table.selected_index()
            if index is not None and self.result is not None:
                self._replay(index)

    def _window_switched(self, window) -> None:
        """View menu: the user now sees ``window``; follow it if it can replay a flight."""
        if hasattr(window, "panel") and hasattr(window, "plots") and hasattr(window.plots, "w_plot"):
            self.attach(window)
        else:
            self.close()

    # ------------------------------------------------------------------ commands

    def _browse(self) -> None:
        paths = open_recordings_paths(self)
        if paths:
            self.open_paths(paths)

    def open_paths(self, paths) -> None:
        """Read recordings (phyphox folders, zips or CSV files; one given twice counts once)
        and fit them. What was shown of the recordings before is cleared at once; a job
        running now is cancelled first."""
        paths = _once(paths)
        if self.running or self.predict_tab.running:
            self._pending = paths
            (self.job or self.predict_tab.job).cancel.set()
            self._say("stopping the running job to open " + ", ".join(Path(p).name for p in paths), MUTED_TEXT)
            return
        self.paths = paths
        self.recordings = None
        self.exclude, self.include = [], []
        self._clear_result()
        self.path_label.setText(", ".join(Path(p).name for p in self.paths))
        self.path_label.setToolTip("\n".join(self.paths))
        self.fit_button.setEnabled(True)
        self.start_fit()

    @property
    def running(self) -> bool:
        return self.job is not None

    def worker(self) -> Worker:
        """The worker process that reads and fits (a new one after Cancel killed the last)."""
        if self._worker is None or not self._worker.alive:
            self._worker = Worker()
        return self._worker

    def start_fit(self) -> None:
        """Fit the recordings (again, without the unticked flights), in the background."""
        if self.running or self.predict_tab.running or not self.paths:
            return
        drag, axes = self.drag_combo.currentText(), self.axes_combo.currentText()
        if self.result is not None:
            self.exclude, self.include = self.table.choices()
        exclude, include = list(self.exclude), list(self.include)

        self.job = fit_job(self.worker(), self.paths, self.recordings, self.reader, drag, axes, exclude, include)
        self.job.start()
        self.timer.start(POLL_MS)
        self._busy(True)
        self._say("reading the recording" if self.recordings is None else "fitting", MUTED_TEXT)

    def cancel_fit(self) -> None:
        """Stop the running job: the reading child is killed at once, the fit at its next check."""
        if self.job is not None:
            self._pending = None
            self.job.cancel.set()
            self._say("cancelling…", MUTED_TEXT)

    def _busy(self, busy: bool) -> None:
        self.fit_button.setEnabled(not busy and bool(self.paths))
        self.cancel_button.setEnabled(busy)
        self.predict_tab.predict_button.setEnabled(not busy)

    def set_busy(self, busy: bool) -> None:
        """The Predict tab's job started (True) or stopped: no fit meanwhile; a recording
        opened during it opens now."""
        self.fit_button.setEnabled(not busy and bool(self.paths))
        if not busy and self._pending is not None:
            pending, self._pending = self._pending, None
            self.open_paths(pending)

    def _poll(self) -> None:
        """Timer (GUI thread): show the job's progress; take its outcome when it is done."""
        job = self.job
        if job is None:
            self.timer.stop()
            return
        (fraction, message), outcome = job.take()
        self.progress.setValue(int(1000 * fraction))
        if outcome is None:
            if not job.cancel.is_set():
                self._say(message, MUTED_TEXT)
            return
        job.thread.join()
        self.job = None
        self.timer.stop()
        self._busy(False)
        kind, value = outcome
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self.open_paths(pending)
            return
        if kind == "done":
            read, self.result = value
            self.recordings = read if read is not None else self.recordings
            self.progress.setValue(1000)
            self._say(_fitted_text(self.result), MUTED_TEXT)
            self._show_result()
            self.fit_finished.emit(self.result)
        elif kind == "cancelled":
            self.progress.setValue(0)
            self._say("cancelled; " + ("the last fit stays" if self.result is not None else "nothing was fitted"),
                      MUTED_TEXT)
            self.fit_cancelled.emit()
        else:
            self.progress.setValue(0)
            self._say(value, ERROR_TEXT)
            self.fit_failed.emit(value)

    def _say(self, text: str, color: str) -> None:
        self.status.setText(text)
        self.status.setToolTip(text)
        self.status.setStyleSheet(f"color: {color};")

    # ------------------------------------------------------------------ results

    def _clear_result(self) -> None:
        """Nothing of the last recording stays on screen as if it were current."""
        self.result = self.unphysical = None
        self.ratios_label.setText("")
        self.table.clear_rows()
        self.plot.clear_rates()
        self.note_label.setText("")
        self.predict_tab.clear()
        self._clear_overlay()
        self.save_button.setEnabled(False)
        self.keep_unphysical.setChecked(False)
        self.keep_unphysical.setVisible(False)

    def _show_result(self) -> None:
        r = self.result
        ratios = ", ".join(f"{m:.4f} ± {s:.1g}" for m, s in zip(r.moments, r.moments_std))
        text = f"ratios {ratios}"
        if r.drag_model != "none":
            scale = self.scale_box.value()
            text += f"   {r.drag_model} drag [{', '.join(f'{c * scale:.3g}' for c in r.drag)}]"
        if r.axes_mode == "fit":
            text += f"   axes turned {r.rotation_deg:.2f}°"
        text += f"   median rms/|ω0| {r.rms_relative:.4f}"
        self.ratios_label.setText(text)
        self.unphysical = triangle_violation(r.moments)
        self.keep_unphysical.setChecked(False)
        self.keep_unphysical.setVisible(self.unphysical is not None)
        if self.unphysical:  # the command line's sentence; saving them takes the box ticked
            self._say(self.unphysical, ERROR_TEXT)
        elif r.notes:  # the sensor's axes fit clearly worse: the command line's note, named for this dialog
            self._say(f"{_fitted_text(r)}; note: " + " ".join(r.notes).replace("--axes fit", "axes: fit"), MUTED_TEXT)
        self.table.set_rows(flight_rows(r))
        self._update_save()

    def _update_save(self) -> None:
        """Save needs a flight, and ratios a body can have unless the user keeps them."""
        self.save_button.setEnabled(self.selected_flight() is not None
                                    and (self.unphysical is None or self.keep_unphysical.isChecked()))

    def _use_changed(self, _row, _on: bool) -> None:
        self._say("press Fit to fit the ticked flights", MUTED_TEXT)

    def selected_flight(self) -> int | None:
        """Index (in the result's flights) of the selected row, if it is a fitted flight."""
        return self.table.selected_index() if self.result is not None else None

    def show_flight(self, index: int) -> None:
        """Plot flight ``index`` here and replay it in the main window with its measured rates."""
        f = self.result.flights[index]
        t = f.t - f.t[0]
        self.plot.show_rates(t, f.w_fitted, t[f.used], f.w_measured[f.used],
                             ((f.flip_time_measured, MEASURED_FLIP), (f.flip_time_fitted, MODEL_FLIP)))
        row = self.table.selected_row()
        self.note_label.setText(f"{Path(f.recording).name} at {f.start:.3f} s: {row.note}" if row and row.note
                                else "")
        self._update_save()
        self._replay(index)
        self.flight_shown.emit(index)

    def _replay(self, index: int) -> None:
        """The main window runs the flight's scenario; its ω plot gets the measured points."""
        window = self.window_
        if window is None:
            return
        # the window shows the flight even with unphysical ratios; saving them is what is refused
        scenario = flight_scenario(self.result, index, self.scale_box.value(), allow_unphysical=True)
        window.replay_flight(scenario)  # on past the flight's second, until it has shown its flips
        self._clear_overlay()
        f = self.result.flights[index]
        t = f.t - f.t[0]
        for k in range(3):
            points = pg.ScatterPlotItem(t[f.used], f.w_measured[f.used, k], size=4, pen=None,
                                        brush=pg.mkBrush(tone(AXIS_HEX[k])))
            window.plots.w_plot.addItem(points)
            self._overlay.append((window, points))

    def replay_in_3d(self, index: int):
        """A flight's "Replay in 3D": the replay window on it, the fitted body as its model."""
        f = self.result.flights[index]
        return open_replay(self.recordings[f.rec_index], self.result, index)

    @property
    def overlay_items(self) -> list:
        """The measured points the dialog put on its window's ω plot."""
        return [item for _, item in self._overlay]

    def _clear_overlay(self) -> None:
        for window, item in self._overlay:
            window.plots.w_plot.removeItem(item)
        self._overlay = []

    def _save_dialog(self) -> None:
        index = self.selected_flight()
        if index is None:
            return
        f = self.result.flights[index]
        default = f"{Path(f.recording).stem or 'throw'}-fit.toml"
        path, _ = save_path(self, "Save as scenario", default, "Scenario (*.toml)")
        if path:
            self.save_scenario(path, index)

    def save_scenario(self, path, index: int | None = None) -> Path | None:
        """Write the scenario replaying flight ``index`` (the selected one by default); a
        failure is one line in the status naming the path and the reason (None returned)."""
        index = self.selected_flight() if index is None else index
        try:
            write_scenario(self.result, path, self.scale_box.value(), index,
                           allow_unphysical=self.keep_unphysical.isChecked())
        except OSError as err:
            self._say(f"not saved: {path}: {err.strerror or err}", ERROR_TEXT)
            return None
        except ParameterError as err:
            self._say(f"not saved: {path}: {err}", ERROR_TEXT)
            return None
        self._say(f"wrote {path}", MUTED_TEXT)
        return Path(path)

    # ------------------------------------------------------------------ closing

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt API
        """Cancel a running job and join it; take the points off the main window."""
        self._pending = None
        if self.job is not None:
            self.job.cancel.set()
            self.job.thread.join(JOIN_S)
            self.job = None
        self.predict_tab.stop_job(cancel=True, join_s=JOIN_S)
        if self._worker is not None:
            self._worker.close()
            self._worker = None
        self.timer.stop()
        self._clear_overlay()
        self._follower.watch(None)
        self._forget_window()
        super().closeEvent(event)

    def _forget_window(self) -> None:
        """Drop the window served until now (and its hold on this dialog)."""
        if self.window_ is not None and getattr(self.window_, DIALOG_ATTRIBUTE, None) is self:
            setattr(self.window_, DIALOG_ATTRIBUTE, None)
        self.window_ = None

    def reject(self) -> None:  # Esc
        self.close()


class _WindowFollower(QObject):
    """Watches the dialog's window: a switch to another view moves the dialog there, closing
    the window closes the dialog (GUI thread)."""

    def __init__(self, dialog: RecordingDialog):
        super().__init__(dialog)
        self.dialog = dialog
        self.window = None

    def watch(self, window) -> None:
        if self.window is not None:
            self.window.removeEventFilter(self)
            self.window.view_switched.disconnect(self.dialog._window_switched)
        self.window = window
        if window is not None:
            window.installEventFilter(self)
            window.view_switched.connect(self.dialog._window_switched)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt API
        if watched is self.window and event.type() == QEvent.Close:
            self.dialog.close()
        return False


def _once(paths) -> list[str]:
    """``paths`` as text, each file or folder once (the first spelling kept)."""
    seen, kept = set(), []
    for p in map(str, paths):
        if os.path.realpath(p) not in seen:
            seen.add(os.path.realpath(p))
            kept.append(p)
    return kept


def _fitted_text(result) -> str:
    """"4 flights fitted, 1 excluded, in 1.20 s"."""
    fitted, out = len(result.fitted), len(result.flights) - len(result.fitted)
    text = f"{fitted} flight{'s' if fitted != 1 else ''} fitted"
    return text + (f", {out} excluded" if out else "") + f", in {result.seconds:.2f} s"


def open_for(window) -> RecordingDialog:
    """The import dialog over the main ``window``: its own, raised, if it has one (one job
    at a time), else a new modeless one."""
    dialog = getattr(window, DIALOG_ATTRIBUTE, None)
    if dialog is None:
        dialog = RecordingDialog(window)
        dialog.setAttribute(Qt.WA_DeleteOnClose)
    dialog.show()
    dialog.raise_()
    dialog.activateWindow()
    return dialog
