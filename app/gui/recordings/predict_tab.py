"""The import dialog's Predict tab: ``tumble predict`` in the window, on the same code.

Each flight's launch rate is fitted on its first LEAD seconds with a fitted body, then the
flight is simulated for HORIZON seconds and its first flip compared with the measured one
(:func:`app.throws.fitting.predict.predict_flights`). The body is the dialog's fit (as its FIT.toml
would hold it) or a FIT.toml; the recordings are the dialog's or others (held-out throws).
The prediction runs in the dialog's worker process (Cancel kills it), one job at a time with
the dialog's fit.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PyQt5.QtCore import Qt, QTimer, pyqtSignal
from PyQt5.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...physics.errors import ParameterError
from ...scenario import load
from ...throws.fitting.predict import (
    DEFAULT_HORIZON,
    DEFAULT_LEAD,
    MAX_HORIZON,
    MAX_LEAD,
    FittedBody,
    predicted_curve,
)
from ...throws.fitting.report import flight_scenario, flip_error
from ..dialogs.file_dialogs import open_path, open_recordings_paths
from .flights_table import fmt, name_cell, setup_table
from ..plots.rates_plot import MEASURED_FLIP, MODEL_FLIP, RatesPlot
from .job import RecordingJob, predict_job
from ..common.theme import ERROR_TEXT, MUTED_TEXT

#: how often the tab reads its job (ms)
POLL_MS = 50
#: columns of the predictions table
COLUMNS = ("#", "recording", "start\n(s)", "end\n(s)", "|ω0|\n(rad/s)", "flip predicted\n(s)",
           "flip measured\n(s)", "flip\nerror", "rms/|ω0|")
RECORDING_COLUMN = 1
#: a predicted flip counts as good within this relative error (the README's figure)
GOOD_FLIP_ERROR = 0.05
#: what the body and recording choosers offer
FIT_BODY, FILE_BODY = "the fit above", "a FIT.toml…"
FIT_RECORDINGS, OTHER_RECORDINGS = "the recordings above", "other recordings…"


class PredictTab(QWidget):
    """Predict flights with a fitted body (GUI thread). ``dialog`` gives the fit and recordings
    and says whether its own job runs. Signals: ``predicted(list)`` with the flights' dicts,
    ``failed(str)``, ``cancelled()``."""

    predicted = pyqtSignal(list)
    failed = pyqtSignal(str)
    cancelled = pyqtSignal()

    def __init__(self, dialog, parent=None):
        super().__init__(parent)
        self.dialog = dialog
        self.job: RecordingJob | None = None
        self.body_path: str | None = None
        self.other_paths: list[str] = []
        self.flights: list[dict] = []
        self.body: FittedBody | None = None
        self.recordings: list = []
        self._given: list | None = None     # the dialog's recordings the running job predicts
        self.horizon = DEFAULT_HORIZON
        self._build()
        self.timer = QTimer(self)
        self.timer.timeout.connect(self._poll)

    def _build(self) -> None:
        lay = QVBoxLayout(self)
        row = QHBoxLayout()
        row.addWidget(QLabel("body"))
        self.body_combo = QComboBox()
        self.body_combo.addItems([FIT_BODY, FILE_BODY])
        self.body_combo.setToolTip("The fitted body and drag: the fit in this dialog, or a FIT.toml of tumble fit")
        self.body_combo.activated.connect(self._body_chosen)
        row.addWidget(self.body_combo)
        row.addWidget(QLabel("recordings"))
        self.recordings_combo = QComboBox()
        self.recordings_combo.addItems([FIT_RECORDINGS, OTHER_RECORDINGS])
        self.recordings_combo.setToolTip("Predict the throws the body was fitted on, or held-out ones")
        self.recordings_combo.activated.connect(self._recordings_chosen)
        row.addWidget(self.recordings_combo)
        self.source_label = QLabel("")
        self.source_label.setObjectName("hint")
        self.source_label.setMinimumWidth(1)
        row.addWidget(self.source_label, 1)
        lay.addLayout(row)

        row = QHBoxLayout()
        row.addWidget(QLabel("flights"))
        self.windows_edit = QLineEdit("auto")
        self.windows_edit.setToolTip("auto: found as tumble fit finds them; or START:END,... windows (s, recording "
                                     "time), each one flight exactly as given in every recording")
        row.addWidget(self.windows_edit, 1)
        self.lead_box = _seconds_box(DEFAULT_LEAD, MAX_LEAD, "The launch rate is fitted on each flight's first "
                                     "seconds only; nothing later enters the prediction")
        self.horizon_box = _seconds_box(DEFAULT_HORIZON, MAX_HORIZON, "Each flight is simulated this long from "
                                        "its start")
        for text, box in (("lead", self.lead_box), ("horizon", self.horizon_box)):
            row.addWidget(QLabel(text))
            row.addWidget(box)
        self.predict_button = QPushButton("Predict")
        self.predict_button.clicked.connect(self.start)
        row.addWidget(self.predict_button)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        row.addWidget(self.cancel_button)
        lay.addLayout(row)

        self.status = QLabel("Fit a recording (or choose a FIT.toml), then Predict.")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextSelectableByMouse)
        lay.addWidget(self.status)
        split = QSplitter(Qt.Horizontal)
        self.table = QTableWidget(0, len(COLUMNS))
        setup_table(self.table, COLUMNS, RECORDING_COLUMN)
        self.table.itemSelectionChanged.connect(self._selection_changed)
        split.addWidget(self.table)
        self.plot = RatesPlot("measured (points) and predicted (lines) ω, sensor frame")
        split.addWidget(self.plot)
        split.setSizes([720, 500])
        lay.addWidget(split, 1)

    # ------------------------------------------------------------------ choices

    def _body_chosen(self) -> None:
        if self.body_combo.currentText() == FILE_BODY:
            path = open_path(self, "Body to predict with (a FIT.toml)", "Scenario (*.toml);;All files (*)")
            if not path:
                self.body_combo.setCurrentText(FIT_BODY if self.body_path is None else FILE_BODY)
                return
            self.body_path = path
        self._show_sources()

    def _recordings_chosen(self) -> None:
        if self.recordings_combo.currentText() == OTHER_RECORDINGS:
            paths = open_recordings_paths(self)
            if not paths:
                self.recordings_combo.setCurrentText(FIT_RECORDINGS if not self.other_paths else OTHER_RECORDINGS)
                return
            self.other_paths = paths
        self._show_sources()

    def _show_sources(self) -> None:
        parts = []
        if self.body_combo.currentText() == FILE_BODY and self.body_path:
            parts.append(f"body {Path(self.body_path).name}")
        if self.recordings_combo.currentText() == OTHER_RECORDINGS and self.other_paths:
            parts.append(", ".join(Path(p).name for p in self.other_paths))
        self.source_label.setText("; ".join(parts))
        self.source_label.setToolTip("\n".join(filter(None, [self.body_path, *self.other_paths])))

    def use_file_body(self, path) -> None:
        """Predict with the FIT.toml at ``path``."""
        self.body_path = str(path)
        self.body_combo.setCurrentText(FILE_BODY)
        self._show_sources()

    def use_other_recordings(self, paths) -> None:
        """Predict the recordings at ``paths`` (not the dialog's)."""
        self.other_paths = [str(p) for p in paths]
        self.recordings_combo.setCurrentText(OTHER_RECORDINGS)
        self._show_sources()

    # ------------------------------------------------------------------ the job

    @property
    def running(self) -> bool:
        return self.job is not None

    def start(self) -> None:
        """Predict in the background; a missing body or recording is one line in the status."""
        if self.running or self.dialog.running:
            self._say("one job at a time: wait for the fit or cancel it", MUTED_TEXT)
            return
        try:
            scenario = self._scenario()
            paths, recordings = self._sources()
        except ParameterError as err:
            self._say(str(err), ERROR_TEXT)
            self.failed.emit(str(err))
            return
        windows, lead, horizon = self.windows_edit.text().strip() or "auto", self.lead_box.value(), \
            self.horizon_box.value()

        self.horizon = horizon
        self._given = recordings
        self.job = predict_job(self.dialog.worker(), paths, recordings, self.dialog.reader, scenario, windows, lead,
                               horizon)
        self.job.start()
        self.timer.start(POLL_MS)
        self.predict_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.dialog.set_busy(True)
        self._say("reading the recordings" if recordings is None else "predicting", MUTED_TEXT)

    def _scenario(self):
        if self.body_combo.currentText() == FILE_BODY and self.body_path:
            return load(self.body_path)
        result = self.dialog.result
        if result is None:
            raise ParameterError("body", "none", "be a fit (open a recording above) or a FIT.toml")
        # the fit as its FIT.toml holds it; predicting with ratios no body has is only a prediction
        return flight_scenario(result, None, self.dialog.scale_box.value(), allow_unphysical=True)

    def _sources(self):
        if self.recordings_combo.currentText() == OTHER_RECORDINGS and self.other_paths:
            return self.other_paths, None
        if self.dialog.recordings is None:
            raise ParameterError("recordings", "none", "be the dialog's (open a recording above) or others")
        return self.dialog.paths, self.dialog.recordings

    def cancel(self) -> None:
        if self.job is not None:
            self.job.cancel.set()
            self._say("cancelling…", MUTED_TEXT)

    def _poll(self) -> None:
        """Timer (GUI thread): take the job's outcome when it is done."""
        job = self.job
        if job is None:
            self.timer.stop()
            return
        (_, message), outcome = job.take()
        if outcome is None:
            if not job.cancel.is_set():
                self._say(message, MUTED_TEXT)
            return
        self.stop_job()
        kind, value = outcome
        if kind == "done":
            read, (self.body, self.flights) = value
            self.recordings = read if read is not None else self._given
            self._show()
            self.predicted.emit(self.flights)
        elif kind == "cancelled":
            self._say("cancelled; the last predictions stay" if self.flights else "cancelled", MUTED_TEXT)
            self.cancelled.emit()
        else:
            self._say(value, ERROR_TEXT)
            self.failed.emit(value)

    def stop_job(self, cancel: bool = False, join_s: float | None = None) -> None:
        """Forget the job (cancelled first with ``cancel``, joined), controls back."""
        if self.job is not None:
            if cancel:
                self.job.cancel.set()
            self.job.thread.join(join_s)
            self.job = None
        self.timer.stop()
        self.predict_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.dialog.set_busy(False)

    def _say(self, text: str, color: str) -> None:
        self.status.setText(text)
        self.status.setToolTip(text)
        self.status.setStyleSheet(f"color: {color};")

    # ------------------------------------------------------------------ results

    def _show(self) -> None:
        flights = self.flights
        self.table.clearContents()
        self.table.setRowCount(len(flights))
        for i, f in enumerate(flights):
            error = flip_error(f)
            rel = f["rms_relative"]
            cells = (str(i + 1), f["recording"], f"{f['start']:.3f}", f"{f['end']:.3f}",
                     f"{np.linalg.norm(f['omega0']):.2f}", fmt(f["flip_time_predicted"]), fmt(f["flip_time_measured"]),
                     "–" if error is None else f"{100 * error:.2f}%", fmt(rel, 4))
            for c, text in enumerate(cells):
                cell = name_cell(text) if c == RECORDING_COLUMN else QTableWidgetItem(text)
                if c != RECORDING_COLUMN:
                    cell.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
                self.table.setItem(i, c, cell)
        errors = [e for e in map(flip_error, flights) if e is not None]
        text = f"{len(flights)} flight{'s' if len(flights) != 1 else ''} predicted from their first " \
               f"{self.lead_box.value():g} s"
        if errors:
            text += (f"; median flip error {100 * float(np.median(errors)):.2f}% over {len(errors)} with both flip "
                     f"times, {100 * float(np.mean(np.array(errors) <= GOOD_FLIP_ERROR)):.0f}% within "
                     f"{100 * GOOD_FLIP_ERROR:.0f}%")
        self._say(text, MUTED_TEXT)
        if flights:
            self.table.selectRow(0)
        else:
            self.plot.clear_rates()

    def clear(self) -> None:
        """Predictions of recordings no longer shown go (a new recording was opened above)."""
        self.flights, self.recordings, self.body = [], [], None
        self.table.setRowCount(0)
        self.plot.clear_rates()

    def _selection_changed(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if rows and self.flights:
            self.show_prediction(rows[0].row())

    def show_prediction(self, index: int) -> None:
        """Plot flight ``index``: its measured rates over the predicted curve, and both flips."""
        f = self.flights[index]
        rec = next(r for r in self.recordings if r.name == f["recording"])
        inside = (rec.t >= f["start"]) & (rec.t <= min(f["end"], f["start"] + self.horizon)) & ~rec.saturated
        t_model, w_model = predicted_curve(self.body, f["omega0"], self.horizon)
        self.plot.show_rates(t_model, w_model, rec.t[inside] - f["start"], rec.w[inside],
                             ((f["flip_time_measured"], MEASURED_FLIP), (f["flip_time_predicted"], MODEL_FLIP)))


def _seconds_box(value: float, top: float, tip: str) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setDecimals(3)
    box.setRange(0.001, top)
    box.setSingleStep(0.05)
    box.setValue(value)
    box.setSuffix(" s")
    box.setToolTip(tip)
    return box
