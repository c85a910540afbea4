"""The import dialog's flights table: one row per flight, fitted or left out, and why.

A flight the fit left out on its own (its residual far above the others') and a flight the
user unticked are both listed, greyed, with the reason in the last column; ticking one puts
it back into the next fit, unticking a fitted one leaves it out. Long recording names (a
phyphox export's file names run to 60 characters) are cut in the middle, the whole path in
the cell's tooltip, so the flip columns stay in view.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from PyQt5.QtCore import Qt, pyqtSignal
from PyQt5.QtGui import QBrush, QColor
from PyQt5.QtWidgets import QAbstractItemView, QHeaderView, QPushButton, QTableWidget, QTableWidgetItem

from ...throws.fitting.fit import USER_EXCLUDED
from ..common.theme import MUTED_TEXT

#: columns of the table
COLUMNS = ("use", "recording", "start\n(s)", "duration\n(s)", "|ω0|\n(rad/s)", "rms\n(rad/s)",
           "flip\nmeasured\n(s)", "flip\nfitted\n(s)", "note", "")
#: the note, then each flight's "Replay in 3D" button, after every column that was there before it
RECORDING_COLUMN, NOTE_COLUMN, REPLAY_COLUMN = 1, 8, 9
REPLAY_TEXT = "Replay in 3D"
#: width of the recording column (px); longer names are elided in the middle
RECORDING_WIDTH = 130
#: the least width of the note column (px): a note is cut there, and shown in full under the table
NOTE_MIN_WIDTH = 60


@dataclass(frozen=True)
class FlightRow:
    """One row: ``index`` is the flight's index in the fit's result; ``included`` whether it
    was fitted, ``by_user`` whether the user left it out."""

    recording: str
    rec_index: int
    start: float
    duration: float
    index: int
    included: bool
    omega: float | None = None
    rms: float | None = None
    flip_measured: float | None = None
    flip_fitted: float | None = None
    note: str = ""
    by_user: bool = False

    @property
    def key(self) -> tuple[int, float]:
        """(recording index, a time inside the flight) naming it to the next fit, whose
        edges may have moved a little: the middle of the flight."""
        return self.rec_index, self.start + 0.5 * self.duration


def flight_rows(result) -> list[FlightRow]:
    """The rows of a fit's ``result``: every flight it found, those it left out greyed with
    the reason (the user's choice or a residual far off the others'), in recording order."""
    rows = []
    for k, f in enumerate(result.flights):
        notes = [f.reason] if f.excluded and f.reason else []
        if f.cut:
            notes.append(f"cut at the recording's {f.cut}")
        rows.append(FlightRow(f.recording, f.rec_index, f.start, f.duration, k, not f.excluded,
                              float(np.linalg.norm(f.omega0)), f.rms, f.flip_time_measured, f.flip_time_fitted,
                              "; ".join(notes), f.excluded and f.reason == USER_EXCLUDED))
    return sorted(rows, key=lambda r: (r.rec_index, r.start))


def setup_table(table: QTableWidget, columns, name_column: int) -> None:
    """Headers, whole-row single selection, read-only cells; columns as wide as their
    contents but the recording's (``name_column``), which is cut in the middle, and the
    last, which takes the rest."""
    table.setHorizontalHeaderLabels(columns)
    table.setSelectionBehavior(QAbstractItemView.SelectRows)
    table.setSelectionMode(QAbstractItemView.SingleSelection)
    table.setEditTriggers(QAbstractItemView.NoEditTriggers)
    table.setTextElideMode(Qt.ElideMiddle)
    table.setWordWrap(False)
    table.verticalHeader().setVisible(False)
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeToContents)
    header.setSectionResizeMode(name_column, QHeaderView.Interactive)
    header.setStretchLastSection(True)
    table.setColumnWidth(name_column, RECORDING_WIDTH)


def name_cell(path: str) -> QTableWidgetItem:
    """A recording's cell: its file name (cut in the middle when long), its path as tooltip."""
    cell = QTableWidgetItem(Path(path).name or str(path))
    cell.setToolTip(str(path))
    cell.setTextAlignment(Qt.AlignLeft | Qt.AlignVCenter)
    return cell


def fmt(x, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


class FlightsTable(QTableWidget):
    """The flights table (GUI thread). ``use_changed(FlightRow, bool)`` when the user ticks or
    unticks a row; ``flight_selected(int)`` with the result index of the flight selected;
    ``replay_requested(int)`` with the result index of the flight whose "Replay in 3D" was pressed."""

    use_changed = pyqtSignal(object, bool)
    flight_selected = pyqtSignal(int)
    replay_requested = pyqtSignal(int)

    def __init__(self, parent=None, *, ask_for_room: bool = True, one_source: bool = False):
        """``ask_for_room``: the table's least width shows every column whole (the import
        dialog); ``one_source``: its rows all come from one source (a phone), so the
        recording column, which would say the same on every row, is hidden."""
        super().__init__(0, len(COLUMNS), parent)
        self.ask_for_room = ask_for_room
        self.one_source = one_source
        self.rows: list[FlightRow] = []
        self._filling = False
        setup_table(self, COLUMNS, RECORDING_COLUMN)
        self.horizontalHeader().setSectionResizeMode(NOTE_COLUMN, QHeaderView.Stretch)  # cut; in full below
        self.horizontalHeader().setStretchLastSection(False)  # the note stretches, not the buttons
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
        grey = QBrush(QColor(str(MUTED_TEXT)))  # the scheme in use
        for i, row in enumerate(rows):
            use = QTableWidgetItem()
            use.setFlags(Qt.ItemIsUserCheckable | Qt.ItemIsEnabled | Qt.ItemIsSelectable)
            use.setCheckState(Qt.Checked if row.included else Qt.Unchecked)
            self.setItem(i, 0, use)
            cells = (row.recording, f"{row.start:.3f}", f"{row.duration:.3f}", fmt(row.omega, 2),
                     fmt(row.rms, 4), fmt(row.flip_measured), fmt(row.flip_fitted), row.note)
            for c, text in enumerate(cells, start=1):
                cell = name_cell(text) if c == RECORDING_COLUMN else QTableWidgetItem(text)
                if c != RECORDING_COLUMN:
                    left = c == NOTE_COLUMN
                    cell.setTextAlignment((Qt.AlignLeft if left else Qt.AlignRight) | Qt.AlignVCenter)
                if c == NOTE_COLUMN and row.note:
                    cell.setToolTip(row.note)
                if not row.included:
                    cell.setForeground(grey)
                self.setItem(i, c, cell)
            button = QPushButton(REPLAY_TEXT)
            button.setToolTip("This flight in 3D: its measured rates turned into the object's orientation, "
                              "the fitted model beside it as a ghost (tumble replay)")
            button.clicked.connect(lambda _checked=False, index=row.index: self.replay_requested.emit(index))
            self.setCellWidget(i, REPLAY_COLUMN, button)
        self._filling = False
        self.setColumnHidden(RECORDING_COLUMN, self.one_source)
        if self.ask_for_room:
            self._ask_for_room()
        first = next((i for i, row in enumerate(rows) if row.included), None)
        if first is not None:
            self.selectRow(first)

    def needed_width(self) -> int:
        """The width (px) that shows every column whole, the note at :data:`NOTE_MIN_WIDTH`
        and each "Replay in 3D" button's whole text."""
        header = self.horizontalHeader()
        widths = []
        for c in range(self.columnCount()):
            if self.isColumnHidden(c):
                continue
            if c == NOTE_COLUMN:
                widths.append(NOTE_MIN_WIDTH)
            elif c == REPLAY_COLUMN:
                widths.append(max(header.sectionSizeHint(c), QPushButton(REPLAY_TEXT).sizeHint().width() + 4))
            elif c == RECORDING_COLUMN:
                widths.append(RECORDING_WIDTH)
            else:
                widths.append(max(header.sectionSizeHint(c), self.sizeHintForColumn(c)))
        return sum(widths) + 2 * self.frameWidth() + self.verticalScrollBar().sizeHint().width()

    def _ask_for_room(self) -> None:
        """At least :meth:`needed_width` wide, the buttons' column as wide as a button: at
        1280x720 the table's last columns were cut off behind a scroll bar."""
        self.setColumnWidth(REPLAY_COLUMN, QPushButton(REPLAY_TEXT).sizeHint().width() + 4)
        self.horizontalHeader().setSectionResizeMode(REPLAY_COLUMN, QHeaderView.Fixed)
        self.setMinimumWidth(self.needed_width())

    def choices(self) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
        """What the ticks ask of the next fit, as its ``exclude`` and ``include``: the flights
        the user leaves out (unticked now, or before and still), and those the fit excluded
        on its own that the user puts back."""
        exclude, include = [], []
        for i, row in enumerate(self.rows):
            ticked = self.item(i, 0).checkState() == Qt.Checked
            if not ticked and (row.included or row.by_user):
                exclude.append(row.key)
            elif ticked and not row.included and not row.by_user:
                include.append(row.key)
        return exclude, include

    def clear_rows(self) -> None:
        self.set_rows([])

    def selected_row(self) -> FlightRow | None:
        selected = self.selectionModel().selectedRows()
        return self.rows[selected[0].row()] if selected else None

    def selected_index(self) -> int | None:
        """Result index of the selected row's flight (fitted or not), or None."""
        row = self.selected_row()
        return None if row is None else row.index

    def _selection_changed(self) -> None:
        index = self.selected_index()
        if index is not None and not self._filling:
            self.flight_selected.emit(index)

    def _item_changed(self, item) -> None:
        if self._filling or item.column() != 0:
            return
        self.use_changed.emit(self.rows[item.row()], item.checkState() == Qt.Checked)


def open_replay(recording, result, index: int):
    """Open the replay window on flight ``index`` of ``result`` (a fit over ``recording``'s
    recordings), its fitted body as the model: the window the replay view names, imported by
    that name (it lives in a room above this one). Returns the window."""
    import importlib

    from ...throws.fitting.replay import replay_flight
    from ...views.replay import spec

    f = result.flights[index]
    replay = replay_flight(recording, f.i0, f.i1, result, number=index + 1)
    module, _, name = spec(True).window.partition(":")
    return getattr(importlib.import_module(module), name).open(replay)
