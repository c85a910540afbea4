"""File > Import recording: fit a gyroscope recording of throws, inspect its flights, replay one.

Data flow::

    Open recording / Fit  -> _FitJob (thread): app.throws.fit  -> progress, outcome slots
    QTimer (dialog, 50 ms) -> progress bar; outcome -> table, ratios, omega plot
    a flight chosen        -> the main window runs its scenario (a box of the fitted ratios
                              spun with the flight's initial rate) and shows the measured
                              rates as points on its omega plot

The fit runs in a plain thread; the dialog reads its progress and outcome from the timer
(GUI thread) and never lets the thread touch a widget. Cancel sets an event the fit checks
between function evaluations; closing the dialog cancels and joins the thread.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PyQt5.QtCore import Qt, QTimer, pyqtSignal
from PyQt5.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from ..physics.errors import ParameterError
from ..scene.style import AXIS_HEX
from ..throws.fit import AXES_MODES, FitCancelled, fit_recordings
from ..throws.recording import read_recording
from ..throws.report import flight_scenario, write_scenario
from .theme import ERROR_TEXT, MUTED_TEXT

#: how often the dialog reads the fit's progress (ms)
POLL_MS = 50
#: how long closing waits for a cancelled fit to stop (s)
JOIN_S = 10.0
#: columns of the flights table
COLUMNS = ("use", "recording", "start\n(s)", "duration\n(s)", "|ω0|\n(rad/s)", "rms\n(rad/s)",
           "flip measured\n(s)", "flip fitted\n(s)")


class _FitJob:
    """One fit in a worker thread. The thread writes only ``progress`` and ``outcome``
    (under ``lock``); the GUI thread reads them from its timer."""

    def __init__(self, run):
        self.lock = threading.Lock()
        self.progress = (0.0, "reading the recording")
        self.outcome = None                 # ("done", value) | ("failed", text) | ("cancelled", None)
        self.cancel = threading.Event()
        self._run = run
        self.thread = threading.Thread(target=self._main, name="tumble-fit", daemon=True)

    def start(self):
        self.thread.start()

    def _report(self, fraction, message):
        """Thread: the fit's progress callback."""
        with self.lock:
            self.progress = (fraction, message)

    def _main(self):
        """Thread: run the fit and leave its outcome."""
        try:
            outcome = ("done", self._run(self._report, self.cancel.is_set))
        except FitCancelled:
            outcome = ("cancelled", None)
        except ParameterError as err:
            outcome = ("failed", str(err))
        except Exception as err:  # a bug of ours: still one line in the dialog
            outcome = ("failed", f"internal error: {err.__class__.__name__}: {err}")
        with self.lock:
            self.outcome = outcome


class RecordingDialog(QDialog):
    """Import a recording, fit it, choose a flight. GUI thread only; modeless.

    Signals (GUI thread): ``fit_finished(object)`` with the :class:`~app.throws.fit.FitResult`,
    ``fit_failed(str)`` with the one-line reason, ``fit_cancelled()``, ``flight_shown(int)``
    with the row of the flight the main window now replays.
    """

    fit_finished = pyqtSignal(object)
    fit_failed = pyqtSignal(str)
    fit_cancelled = pyqtSignal()
    flight_shown = pyqtSignal(int)

    def __init__(self, window=None, parent=None):
        super().__init__(parent if parent is not None else window)
        self.setWindowTitle("Import recording: fit a throw")
        self.window_ = window
        self.paths: list[str] = []
        self.recordings = None
        self.result = None
        self.excluded: list[tuple] = []     # (recording index, start, duration) of unticked flights
        self.job: _FitJob | None = None
        self._overlay: list = []
        self._filling = False
        self.resize(1180, 640)
        self._build()
        self.timer = QTimer(self)
        self.timer.timeout.connect(self._poll)

    # ------------------------------------------------------------------ layout

    def _build(self) -> None:
        lay = QVBoxLayout(self)
        top = QHBoxLayout()
        self.open_button = QPushButton("Open recording…")
        self.open_button.setToolTip("A phyphox export (folder or .zip) or a CSV file of time and three rates")
        self.open_button.clicked.connect(self._browse)
        top.addWidget(self.open_button)
        self.path_label = QLabel("no recording yet")
        self.path_label.setObjectName("hint")
        top.addWidget(self.path_label, 1)
        lay.addLayout(top)

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
        self.cancel_button.clicked.connect(self.cancel_fit)
        self.cancel_button.setEnabled(False)
        opts.addWidget(self.cancel_button)
        lay.addLayout(opts)

        prog = QHBoxLayout()
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.setMaximumHeight(10)
        prog.addWidget(self.progress, 1)
        self.status = QLabel("")
        self.status.setMinimumWidth(360)
        prog.addWidget(self.status)
        lay.addLayout(prog)

        self.ratios_label = QLabel("")
        self.ratios_label.setObjectName("moments")
        self.ratios_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        lay.addWidget(self.ratios_label)

        split = QSplitter(Qt.Horizontal)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setToolTip("Untick a flight and press Fit to leave it out; select one to replay it")
        self.table.itemSelectionChanged.connect(self._selection_changed)
        self.table.itemChanged.connect(self._item_changed)
        split.addWidget(self.table)
        self.plot = pg.PlotWidget()
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.showGrid(x=True, y=True, alpha=0.25)
        self.plot.setLabel("left", "ω (rad/s)")
        self.plot.setLabel("bottom", "t − start (s)")
        self.plot.setTitle("measured (points) and fitted (lines) ω, sensor frame")
        self.plot.addLegend(offset=(-4, 1), labelTextSize="8pt", colCount=3)
        self.fit_curves = [self.plot.plot(pen=pg.mkPen(AXIS_HEX[k], width=1.6), name=f"ω{'xyz'[k]}")
                           for k in range(3)]
        self.points = [pg.ScatterPlotItem(size=4, pen=None, brush=pg.mkBrush(AXIS_HEX[k])) for k in range(3)]
        for p in self.points:
            self.plot.addItem(p)
        self.flip_lines = []
        split.addWidget(self.plot)
        split.setSizes([660, 520])
        lay.addWidget(split, 1)

        bottom = QHBoxLayout()
        self.hint = QLabel("The main window replays the selected flight (plots over all of it); its ω plot "
                           "shows the measured points.")
        self.hint.setObjectName("hint")
        bottom.addWidget(self.hint, 1)
        self.save_button = QPushButton("Save as scenario…")
        self.save_button.setToolTip("A scenario that replays the selected flight (tumble simulate / tumble gui)")
        self.save_button.clicked.connect(self._save_dialog)
        self.save_button.setEnabled(False)
        bottom.addWidget(self.save_button)
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        bottom.addWidget(close)
        lay.addLayout(bottom)

    # ------------------------------------------------------------------ commands

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open recording", "",
                                              "Recordings (*.zip *.csv *.txt);;All files (*)")
        if path:
            self.open_paths([path])

    def open_paths(self, paths) -> None:
        """Load recordings (phyphox folders, zips or CSV files) and fit them."""
        self.paths = [str(p) for p in paths]
        self.recordings = None
        self.excluded = []
        self.path_label.setText(", ".join(Path(p).name for p in self.paths))
        self.path_label.setToolTip("\n".join(self.paths))
        self.fit_button.setEnabled(True)
        self.start_fit()

    @property
    def running(self) -> bool:
        return self.job is not None

    def start_fit(self) -> None:
        """Fit the recordings (again, without the unticked flights), in the background."""
        if self.running or not self.paths:
            return
        paths, drag, axes = list(self.paths), self.drag_combo.currentText(), self.axes_combo.currentText()
        known = self.recordings
        exclude = [(k, start) for k, start, _ in self.excluded]

        def run(progress, cancel):
            recordings = known if known is not None else [read_recording(p) for p in paths]
            return recordings, fit_recordings(recordings, None, drag, axes, progress, cancel, exclude)

        self.job = _FitJob(run)
        self.job.start()
        self.timer.start(POLL_MS)
        self.fit_button.setEnabled(False)
        self.open_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self._say("reading the recording", MUTED_TEXT)

    def cancel_fit(self) -> None:
        if self.job is not None:
            self.job.cancel.set()
            self._say("cancelling…", MUTED_TEXT)

    def _poll(self) -> None:
        """Timer (GUI thread): show the fit's progress; take its outcome when it is done."""
        job = self.job
        if job is None:
            self.timer.stop()
            return
        with job.lock:
            (fraction, message), outcome = job.progress, job.outcome
        self.progress.setValue(int(1000 * fraction))
        if outcome is None:
            self._say(message, MUTED_TEXT)
            return
        job.thread.join()
        self.job = None
        self.timer.stop()
        self.cancel_button.setEnabled(False)
        self.open_button.setEnabled(True)
        self.fit_button.setEnabled(bool(self.paths))
        kind, value = outcome
        if kind == "done":
            self.recordings, self.result = value
            self.progress.setValue(1000)
            self._say(f"{len(self.result.flights)} flights fitted in {self.result.seconds:.2f} s", MUTED_TEXT)
            self._show_result()
            self.fit_finished.emit(self.result)
        elif kind == "cancelled":
            self.progress.setValue(0)
            self._say("fit cancelled; the last result stays", MUTED_TEXT)
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
        self._filling = True
        self.table.setRowCount(0)
        rows = [("fit", k, f) for k, f in enumerate(r.flights)] + [("out", k, e) for k, e in enumerate(self.excluded)]
        rows.sort(key=lambda row: (row[2].rec_index, row[2].start) if row[0] == "fit" else (row[2][0], row[2][1]))
        self._rows = rows
        for i, (kind, _, item) in enumerate(rows):
            self.table.insertRow(i)
            use = QTableWidgetItem()
            use.setFlags(Qt.ItemIsUserCheckable | Qt.ItemIsEnabled | Qt.ItemIsSelectable)
            use.setCheckState(Qt.Checked if kind == "fit" else Qt.Unchecked)
            self.table.setItem(i, 0, use)
            if kind == "fit":
                f = item
                cells = (Path(f.recording).name, f"{f.start:.3f}", f"{f.duration:.3f}",
                         f"{np.linalg.norm(f.omega0):.2f}", f"{f.rms:.4f}", _fmt(f.flip_time_measured),
                         _fmt(f.flip_time_fitted))
            else:
                rec_index, start, duration = item
                cells = (Path(self.recordings[rec_index].name).name, f"{start:.3f}", f"{duration:.3f}",
                         "left out", "", "", "")
            for c, text in enumerate(cells, start=1):
                cell = QTableWidgetItem(text)
                cell.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter if c > 1 else Qt.AlignLeft | Qt.AlignVCenter)
                self.table.setItem(i, c, cell)
        self._filling = False
        self.save_button.setEnabled(bool(r.flights))
        first = next((i for i, row in enumerate(rows) if row[0] == "fit"), None)
        if first is not None:
            self.table.selectRow(first)

    def _item_changed(self, item) -> None:
        """A flight ticked or unticked: it is left out of (or back in) the next fit."""
        if self._filling or item.column() != 0:
            return
        kind, _, value = self._rows[item.row()]
        if kind == "fit" and item.checkState() != Qt.Checked:
            self.excluded.append((value.rec_index, value.start, value.duration))
        elif kind == "out" and item.checkState() == Qt.Checked:
            self.excluded = [e for e in self.excluded if e != value]
        self._say("press Fit to fit the ticked flights", MUTED_TEXT)

    def selected_flight(self) -> int | None:
        """Index (in the result's flights) of the selected row, if it is a fitted flight."""
        rows = self.table.selectionModel().selectedRows() if self.result is not None else []
        if not rows:
            return None
        kind, index, _ = self._rows[rows[0].row()]
        return index if kind == "fit" else None

    def _selection_changed(self) -> None:
        index = self.selected_flight()
        if index is not None:
            self.show_flight(index)

    def show_flight(self, index: int) -> None:
        """Plot flight ``index`` here and replay it in the main window with its measured rates."""
        f = self.result.flights[index]
        t = f.t - f.t[0]
        for k in range(3):
            self.fit_curves[k].setData(t, f.w_fitted[:, k])
            self.points[k].setData(t[f.used], f.w_measured[f.used, k])
        for line in self.flip_lines:
            self.plot.removeItem(line)
        self.flip_lines = []
        for flip, style in ((f.flip_time_measured, Qt.DotLine), (f.flip_time_fitted, Qt.DashLine)):
            if flip is not None:
                line = pg.InfiniteLine(pos=flip, angle=90, pen=pg.mkPen("#f5e663", width=1, style=style))
                self.plot.addItem(line, ignoreBounds=True)
                self.flip_lines.append(line)
        self._replay(index)
        self.flight_shown.emit(index)

    def _replay(self, index: int) -> None:
        """The main window runs the flight's scenario; its ω plot gets the measured points."""
        window = self.window_
        if window is None:
            return
        scenario = flight_scenario(self.result, index, self.scale_box.value())
        window.panel.set_scenario(scenario)
        window.apply_scenario(scenario)
        window.window_combo.setCurrentText("all")  # a flight lasts about a second: show all of it
        self._clear_overlay()
        f = self.result.flights[index]
        t = f.t - f.t[0]
        for k in range(3):
            points = pg.ScatterPlotItem(t[f.used], f.w_measured[f.used, k], size=4, pen=None,
                                        brush=pg.mkBrush(AXIS_HEX[k]))
            window.plots.w_plot.addItem(points)
            self._overlay.append(points)

    def _clear_overlay(self) -> None:
        window = self.window_
        for item in self._overlay:
            if window is not None:
                window.plots.w_plot.removeItem(item)
        self._overlay = []

    def _save_dialog(self) -> None:
        index = self.selected_flight() or 0
        f = self.result.flights[index]
        default = f"{Path(f.recording).stem or 'throw'}-fit.toml"
        path, _ = QFileDialog.getSaveFileName(self, "Save as scenario", default, "Scenario (*.toml)")
        if path:
            self.save_scenario(path, index)

    def save_scenario(self, path, index: int | None = None) -> Path:
        """Write the scenario replaying flight ``index`` (the selected one by default)."""
        index = self.selected_flight() if index is None else index
        try:
            write_scenario(self.result, path, self.scale_box.value(), index or 0)
        except (OSError, ParameterError) as err:
            self._say(f"not saved: {getattr(err, 'strerror', None) or err}", ERROR_TEXT)
            raise
        self._say(f"wrote {path}", MUTED_TEXT)
        return Path(path)

    # ------------------------------------------------------------------ closing

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt API
        """Cancel a running fit and join its thread; take the points off the main window."""
        if self.job is not None:
            self.job.cancel.set()
            self.job.thread.join(JOIN_S)
            self.job = None
        self.timer.stop()
        self._clear_overlay()
        super().closeEvent(event)

    def reject(self) -> None:  # Esc
        self.close()


def _fmt(x) -> str:
    return "–" if x is None else f"{x:.3f}"


def open_for(window) -> RecordingDialog:
    """Show a modeless import dialog over the main ``window``."""
    dialog = RecordingDialog(window)
    dialog.setAttribute(Qt.WA_DeleteOnClose)
    dialog.show()
    return dialog

