"""The Help menu's dialogs: Why does it flip? (the README's plain explanation), About (version, licence, where the
README is) and the keyboard shortcuts."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

from PyQt5.QtCore import Qt
from PyQt5.QtGui import QKeySequence
from PyQt5.QtWidgets import (QAction, QDialog, QDialogButtonBox, QHeaderView, QMessageBox, QTableWidget,
                             QTableWidgetItem, QTextBrowser, QVBoxLayout)

from ... import __version__
from ...scenario.files import RESOURCES_DIR

#: the distribution whose metadata About reads
DISTRIBUTION = "tumble"
#: the README of a clone: next to the ``app`` package
README = Path(__file__).resolve().parents[3] / "README.md"


#: the plain explanation of the flip, the same text as the README's "Why it flips, in plain words"
WHY_IT_FLIPS = RESOURCES_DIR / "texts" / "why-it-flips.md"


def why_it_flips_text() -> str:
    """The plain explanation of the flip (Markdown), as the README has it."""
    return WHY_IT_FLIPS.read_text(encoding="utf-8")


def why_dialog(window) -> QDialog:
    """Help > Why does it flip?: the plain explanation over ``window`` (not modal); its
    ``browser`` attribute is the QTextBrowser showing it."""
    dialog = _closable_dialog(window, "Why does it flip?")
    browser = dialog.browser = QTextBrowser(dialog)
    browser.setMarkdown(why_it_flips_text())  # its paragraphs flow with the dialog's width
    _show_with(dialog, browser, (640, 460))
    return dialog


def _closable_dialog(window, title: str) -> QDialog:
    """A dialog over ``window`` that deletes itself when closed."""
    dialog = QDialog(window)
    dialog.setWindowTitle(title)
    dialog.setAttribute(Qt.WA_DeleteOnClose)
    return dialog


def _show_with(dialog: QDialog, widget, size: tuple[int, int]) -> None:
    """Lay ``widget`` out over a Close button in ``dialog``, size it and show it."""
    buttons = QDialogButtonBox(QDialogButtonBox.Close, dialog)
    buttons.rejected.connect(dialog.close)
    lay = QVBoxLayout(dialog)
    lay.addWidget(widget)
    lay.addWidget(buttons)
    dialog.resize(*size)
    dialog.show()


def _metadata():
    try:
        return importlib.metadata.metadata(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None


def readme_location() -> str:
    """Where the README is: its path in a clone, else the project's URL from the metadata."""
    if README.is_file():
        return str(README)
    meta = _metadata()
    urls = (meta.get_all("Project-URL") or []) if meta is not None else []
    if urls:  # "Label, https://..."
        return urls[0].partition(",")[2].strip() or urls[0]
    return "the README button below (the installed package's own copy)"


def readme_text() -> str | None:
    """The README (Markdown): the clone's file, else the copy the installed package's metadata
    holds as its description (``pip show`` does not print it); None if neither is there."""
    if README.is_file():
        return README.read_text(encoding="utf-8")
    meta = _metadata()
    if meta is None:
        return None
    text = meta.get_payload() or meta.get("Description")
    return text or None


def readme_dialog(window) -> QDialog:
    """The README over ``window`` (not modal); its ``browser`` attribute shows it."""
    dialog = _closable_dialog(window, "Tumble README")
    browser = dialog.browser = QTextBrowser(dialog)
    browser.setMarkdown(readme_text() or "The README is not in this installation.")
    _show_with(dialog, browser, (760, 560))
    return dialog


def licence() -> str:
    """The licence the project's metadata declares."""
    meta = _metadata()
    if meta is None:
        return "unknown (the package is not installed)"
    return meta.get("License-Expression") or meta.get("License") or "unknown"


def about_text() -> str:
    return (f"<b>Tumble {__version__}</b><br>See and measure the free rotation of a rigid body."
            f"<br><br>Licence: {licence()}<br>README: {readme_location()}")


def about_box(window) -> QMessageBox:
    """Help > About, shown (not modal) over ``window``; deleted when closed."""
    box = QMessageBox(QMessageBox.Information, "About Tumble", about_text(), QMessageBox.Ok, window)
    if readme_text() is not None:  # the README itself, wherever Tumble was installed from
        button = box.readme_button = box.addButton("README…", QMessageBox.ActionRole)
        button.clicked.connect(lambda: readme_dialog(window))
    box.setTextFormat(Qt.RichText)
    box.setTextInteractionFlags(Qt.TextSelectableByMouse)
    box.setAttribute(Qt.WA_DeleteOnClose)
    box.show()
    return box


def shortcuts(window) -> list[tuple[str, str, str]]:
    """(keys, command, what it does) of every enabled, visible action of ``window`` that has
    a shortcut, shortest keys first."""
    rows, seen = [], set()
    for action in window.findChildren(QAction):
        key = action.shortcut().toString(QKeySequence.NativeText)
        if not key or not action.isEnabled() or not action.isVisible() or key in seen:
            continue
        seen.add(key)
        text = action.text().replace("&", "")
        tip = action.toolTip().removesuffix(f" ({key})")
        rows.append((key, text.rstrip("…"), "" if tip == text else tip))
    return sorted(rows, key=lambda row: (len(row[0]), row[0]))


def shortcuts_dialog(window) -> QDialog:
    """Help > Keyboard shortcuts: a table made from ``window``'s actions (not modal); its
    ``table`` attribute is the QTableWidget."""
    dialog = _closable_dialog(window, "Keyboard shortcuts")
    rows = shortcuts(window)
    table = dialog.table = QTableWidget(len(rows), 3, dialog)
    table.setHorizontalHeaderLabels(("Keys", "Command", "What it does"))
    table.verticalHeader().hide()
    table.setEditTriggers(QTableWidget.NoEditTriggers)
    # a long description wraps onto more lines of its row instead of ending in "..."
    table.setWordWrap(True)
    table.setTextElideMode(Qt.ElideNone)
    for i, row in enumerate(rows):
        for j, text in enumerate(row):
            item = QTableWidgetItem(text)
            item.setToolTip(text)
            table.setItem(i, j, item)
    table.resizeColumnsToContents()
    header = table.horizontalHeader()
    header.setSectionResizeMode(2, QHeaderView.Stretch)
    # the rows' heights follow the description column's width (known once laid out)
    header.sectionResized.connect(lambda *_: table.resizeRowsToContents())
    _show_with(dialog, table, (760, 440))
    table.resizeRowsToContents()
    return dialog
