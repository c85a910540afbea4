"""Every file dialog of the app: it starts in the folder used last, remembered in the settings."""

from __future__ import annotations

import os
import re
from pathlib import Path

from PyQt5.QtWidgets import QDialog, QFileDialog, QMessageBox

from ...scenario import plain_name
from ...throws.recordings.reader import PHYPHOX_DATA
from ..common import settings as keys

#: what the recording picker lists (folders are always listed: a phyphox export is one)
RECORDING_FILTERS = "Recordings (*.zip *.csv *.txt *.tsv);;All files (*)"
#: longest file name stem made from a scenario's name (characters)
MAX_STEM = 80


def file_stem(name: str) -> str:
    """A file name stem for a scenario's name: "T-handle (edited)" -> "t-handle-edited"."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "scenario"


def export_stem(name: str) -> str:
    """A file name (no extension) for a scenario called ``name``: lower case, words joined
    by "-", without the notes the window appends in brackets ("(edited)", "(from the
    stability map)") or characters a file name should not hold; "tumble" if nothing is left.
    """
    stem = re.sub(r"[^\w.]+", "-", plain_name(name).lower()).strip("-.")
    return stem[:MAX_STEM].rstrip("-.") or "tumble"


def last_folder(key: str = keys.LAST_FOLDER) -> str:
    """The folder of the file chosen last in any dialog (under ``key``: one kind of file),
    else the last of any dialog, else the working directory."""
    stored = keys.open_settings()
    for k in dict.fromkeys((key, keys.LAST_FOLDER)):
        folder = stored.value(k, "", type=str)
        if folder and os.path.isdir(folder):
            return folder
    return os.getcwd()


def remember_folder(path, key: str = keys.LAST_FOLDER) -> None:
    """Make the folder of ``path`` the one the next dialog starts in (the next of its kind
    with ``key``; every dialog's fallback as well)."""
    stored = keys.open_settings()
    folder = str(Path(path).resolve().parent)
    for k in dict.fromkeys((key, keys.LAST_FOLDER)):
        stored.setValue(k, folder)
    stored.sync()


def open_path(parent, title: str, filters: str) -> str:
    """An existing file the user picks, or "" if cancelled."""
    path, _ = QFileDialog.getOpenFileName(parent, title, last_folder(), filters)
    if path:
        remember_folder(path)
    return path


def save_path(parent, title: str, name: str, filters: str, selected: str = "") -> tuple[str, str]:
    """(path, chosen filter) of a file to write, or ("", "") if cancelled. ``name`` is a file
    name, proposed in the last folder, or a path, proposed as it is."""
    start = name if os.path.dirname(name) else os.path.join(last_folder(), name)
    path, chosen = QFileDialog.getSaveFileName(parent, title, start, filters, selected)
    if path:
        remember_folder(path)
    return path, chosen


def save_with_dialog(window, title: str, default: str, filters: str, write, failed: str, saved: str,
                     message_ms: int) -> None:
    """Ask where to save, then ``write(path)``: a failure in a message box titled ``failed``,
    success as "Saved ``saved`` to PATH" in ``window``'s status bar for ``message_ms``."""
    path, _ = save_path(window, title, default, filters)
    if not path:
        return
    try:
        write(path)
    except OSError as err:
        QMessageBox.warning(window, failed, f"{path}: {err.strerror or err}")
        return
    window.statusBar().showMessage(f"Saved {saved} to {path}", message_ms)


def is_phyphox_folder(path) -> bool:
    """A folder holding phyphox's data file: it is picked as one recording, not entered."""
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, PHYPHOX_DATA))


class RecordingPicker(QFileDialog):
    """Pick recordings: CSV files, zips AND phyphox folders, several at once (fitted together).

    Native dialogs pick files or folders, never both, so this is Qt's own dialog: a phyphox
    folder selected (or the one the dialog is in, with nothing selected) is chosen rather
    than entered, and phyphox's data file chosen inside its folder stands for the folder (its
    pauses are read with it). Any other folder is entered as usual.
    """

    def __init__(self, parent=None, folder: str | None = None):
        super().__init__(parent, "Open recording", folder or last_folder(keys.LAST_RECORDING_FOLDER),
                         RECORDING_FILTERS)
        self.setOption(QFileDialog.DontUseNativeDialog, True)
        self.setFileMode(QFileDialog.ExistingFiles)
        self.setLabelText(QFileDialog.Accept, "Open")
        self.chosen: list[str] = []

    def accept(self) -> None:
        picked = [os.path.normpath(p) for p in self.selectedFiles()] or [self.directory().absolutePath()]
        if all(is_phyphox_folder(p) or os.path.isfile(p) for p in picked):
            self.chosen = [_folder_of_data(p) for p in picked]
            remember_folder(self.chosen[0], keys.LAST_RECORDING_FOLDER)
            QDialog.accept(self)
        else:
            super().accept()  # a plain folder: go into it


def _folder_of_data(path: str) -> str:
    """phyphox's data file inside a phyphox folder -> that folder; any other path unchanged."""
    folder = os.path.dirname(path)
    return folder if os.path.basename(path) == PHYPHOX_DATA and is_phyphox_folder(folder) else path


def open_recordings_paths(parent) -> list[str]:
    """Recordings the user picks with a :class:`RecordingPicker`, or [] if cancelled."""
    picker = RecordingPicker(parent)
    return picker.chosen if picker.exec_() == QDialog.Accepted else []
