"""Every file dialog of the app: it starts in the folder used last, remembered in the settings."""

from __future__ import annotations

import os
import re
from pathlib import Path

from PyQt5.QtWidgets import QFileDialog, QMessageBox

from . import settings as keys


def file_stem(name: str) -> str:
    """A file name stem for a scenario's name: "T-handle (edited)" -> "t-handle-edited"."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "scenario"


def last_folder() -> str:
    """The folder of the file chosen last in any dialog, or the working directory."""
    folder = keys.open_settings().value(keys.LAST_FOLDER, "", type=str)
    return folder if folder and os.path.isdir(folder) else os.getcwd()


def remember_folder(path) -> None:
    """Make the folder of ``path`` the one the next dialog starts in."""
    stored = keys.open_settings()
    stored.setValue(keys.LAST_FOLDER, str(Path(path).resolve().parent))
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
