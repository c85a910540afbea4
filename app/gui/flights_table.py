"""The import dialog's flights table: one row per flight, fitted or left out, and why.

A flight the fit left out on its own (its residual far above the others') and a flight the
user unticked are both listed, greyed, with the reason in the last column; ticking one puts
it back into the next fit, unticking a fitted one leaves it out. Long recording names (a
phyphox export's file names run to 60 characters) are cut in the middle, the whole path in
the cell's tooltip, so the flip columns stay in view.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from PyQt5.QtCore import Qt, pyqtSignal
from PyQt5.QtGui import QBrush, QColor
from PyQt5.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from .theme import MUTED_TEXT

#: columns of the table
COLUMNS = ("use", "recording", "start\n(s)", "duration\n(s)", "|ω0|\n(rad/s)", "rms\n(rad/s)",
           "flip measured\n(s)", "flip fitted\n(s)", "note")
RECORDING_COLUMN, NOTE_COLUMN = 1, len(COLUMNS) - 1
#: width of the recording column (px); longer names are elided in the middle
RECORDING_WIDTH = 150
#: what the note says of a flight the user left out
USER_EXCLUDED = "left out by you"
#: a flight the user left out is the fit's flight starting within this many seconds of it
#: (the fit moves a flight's edges by less)
SAME_FLIGHT_S = 0.2


@dataclass(frozen=True)
class FlightRow:
    """One row: ``index`` is the flight's index in the fit's result (None for a flight the
    user left out that the fit never saw); ``included`` whether it was fitted."""

    recording: str
    rec_index: int
    start: float
    duration: float
    index: int | None
    included: bool
    omega: float | None = None
    rms: float | None = None
    flip_measured: float | None = None
    flip_fitted: float | None = None
    note: str = ""

    @property
    def key(self) -> tuple[int, float]:
        """(recording index, start) naming the flight to the fit."""
        return self.rec_index, self.start


def flight_rows(result, left_out=()) -> list[FlightRow]:
    """The rows of a fit's ``result``: its flights (those it excluded greyed, with the
    reason), and the flights the user left out that it did not list, in recording order."""
    rows = []
    for k, f in enumerate(result.flights):
        excluded = bool(getattr(f, "excluded", False))
        rows.append(FlightRow(f.recording, f.rec_index, f.start, f.duration, k, not excluded,
                              float(np.linalg.norm(f.omega0)), f.rms, f.flip_time_measured, f.flip_time_fitted,
                              (getattr(f, "reason", None) or "") if excluded else ""))
    for row in left_out:
        if not any(r.rec_index == row.rec_index and abs(r.start - row.start) < SAME_FLIGHT_S for r in rows):
            rows.append(row)
    return sorted(rows, key=lambda r: (r.rec_index, r.start))


def _fmt(x, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


class FlightsTable(QTableWidget):
    """The flights table (GUI thread). ``use_changed(FlightRow, bool)`` when the user ticks or
    unticks a row; ``flight_selected(int)`` with the result index of a fitted row selected."""

    use_changed = pyqtSignal(object, bool)
    flight_selected = pyqtSignal(int)

    def __init__(self, parent=None):
        super().__init__(0, len(COLUMNS), parent)
        self.rows: list[FlightRow] = []
        self._filling = False
        self.setHorizontalHeaderLabels(COLUMNS)
        self.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.setSelectionMode(QAbstractItemView.SingleSelection)
        self.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.setTextElideMode(Qt.ElideMiddle)
        self.setWordWrap(False)
        self.verticalHeader().setVisible(False)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeToContents)
        header.setSectionResizeMode(RECORDING_COLUMN, QHeaderView.Interactive)
        header.setStretchLastSection(True)
        self.setColumnWidth(RECORDING_COLUMN, RECORDING_WIDTH)
        self.setToolTip("Untick a flight and press Fit to leave it out, tick a greyed one to put it back; "
                        "select a fitted one to replay it")
        self.itemSelectionChanged.connect(self._selection_changed)
        self.itemChanged.connect(self._item_changed)

    def set_rows(self, rows: list[FlightRow]) -> None:
        """Show ``rows``; the first fitted one is selected."""
        self._filling = True
        self.clearContents()
        self.setRowCount(len(rows))
        self.rows = list(rows)
        grey = QBrush(QColor(MUTED_TEXT))
        for i, row in enumerate(rows):
            use = QTableWidgetItem()
            use.setFlags(Qt.ItemIsUserCheckable | Qt.ItemIsEnabled | Qt.ItemIsSelectable)
            use.setCheckState(Qt.Checked if row.included else Qt.Unchecked)
            self.setItem(i, 0, use)
            cells = (Path(row.recording).name, f"{row.start:.3f}", f"{row.duration:.3f}", _fmt(row.omega, 2),
                     _fmt(row.rms, 4), _fmt(row.flip_measured), _fmt(row.flip_fitted), row.note)
            for c, text in enumerate(cells, start=1):
                cell = QTableWidgetItem(text)
                left = c in (RECORDING_COLUMN, NOTE_COLUMN)
                cell.setTextAlignment((Qt.AlignLeft if left else Qt.AlignRight) | Qt.AlignVCenter)
                if c == RECORDING_COLUMN:
                    cell.setToolTip(row.recording)
                elif c == NOTE_COLUMN and row.note:
                    cell.setToolTip(row.note)
                if not row.included:
                    cell.setForeground(grey)
                self.setItem(i, c, cell)
        self._filling = False
        first = next((i for i, row in enumerate(rows) if row.included and row.index is not None), None)
        if first is not None:
            self.selectRow(first)

    def choices(self) -> tuple[list[FlightRow], list[tuple[int, float]]]:
        """What the ticks ask of the next fit: (rows to leave out, marked as the user's;
        (recording index, start) of flights the fit excluded that the user put back)."""
        left_out, put_back = [], []
        for i, row in enumerate(self.rows):
            ticked = self.item(i, 0).checkState() == Qt.Checked
            if not ticked and (row.included or row.note == USER_EXCLUDED):
                left_out.append(replace(row, included=False, index=None, rms=None, flip_fitted=None,
                                        note=USER_EXCLUDED))
            elif ticked and not row.included and row.note != USER_EXCLUDED:
                put_back.append(row.key)
        return left_out, put_back

    def clear_rows(self) -> None:
        self.set_rows([])

    def selected_index(self) -> int | None:
        """Result index of the selected row, if it is a fitted flight."""
        selected = self.selectionModel().selectedRows()
        if not selected:
            return None
        row = self.rows[selected[0].row()]
        return row.index if row.included else None

    def _selection_changed(self) -> None:
        index = self.selected_index()
        if index is not None and not self._filling:
            self.flight_selected.emit(index)

    def _item_changed(self, item) -> None:
        if self._filling or item.column() != 0:
            return
        self.use_changed.emit(self.rows[item.row()], item.checkState() == Qt.Checked)
