"""Issue 34, items 12, 13 and 16: Help > About's README, the windows' titles, View > Parameters."""

from __future__ import annotations

import pytest
from conftest import WAIT_MS
from PyQt5.QtGui import QPalette
from PyQt5.QtCore import Qt
from PyQt5.QtWidgets import QDialog, QMessageBox

from tumble.gui.dialogs import help_dialogs


def test_about_offers_the_readme_itself_where_a_clone_has_none(open_window, qtbot, monkeypatch, tmp_path):
    """Item 12: About said ``pip show --verbose tumble`` shows the README; it does not (pip show
    prints no description). Without a clone, About offers the installed package's own copy."""
    window = open_window("t-handle", paused=True)
    monkeypatch.setattr(help_dialogs, "README", tmp_path / "no-README.md")  # an installed wheel
    assert "pip show" not in help_dialogs.about_text()
    box = window.show_about()
    if help_dialogs.readme_text() is None:
        pytest.fail("the installed package's metadata holds no README (pyproject's readme)")
    assert "README button" in box.text() or "http" in box.text()
    qtbot.mouseClick(box.readme_button, Qt.LeftButton)

    def readmes():
        return [d for d in window.findChildren(QDialog) if d.windowTitle() == "Tumble README" and d.isVisible()]

    qtbot.waitUntil(lambda: len(readmes()) == 1, timeout=WAIT_MS)
    dialogs = readmes()
    assert "A 45-minute lesson" in dialogs[0].browser.toPlainText()
    for d in dialogs:
        d.close()
    if isinstance(box, QMessageBox):
        box.close()


@pytest.mark.parametrize("view", ["main", "stability", "compare", "poinsot"])
def test_each_window_names_tumble_once(open_view, view):
    """Item 13: "Tumble: stability map of T-handle — Tumble" (Qt appends the name to a title
    that does not end with it)."""
    window = open_view("t-handle", view=view, paused=True)
    title = window.windowTitle()
    assert title.count("Tumble") == 1 and title.endswith(" — Tumble"), title


def test_view_parameters_hides_and_shows_the_panel_and_no_entry_looks_doubled(open_window, qtbot):
    """Item 16: the dock could not close, so its View menu entry was disabled, and Fusion etched
    its text with a light copy 1 px off: it looked doubled."""
    window = open_window("t-handle", paused=True)
    action = window.dock.toggleViewAction()
    assert action in window.view_menu.actions() and action.isEnabled() and action.isChecked()
    action.trigger()
    qtbot.waitUntil(lambda: not window.dock.isVisible(), timeout=WAIT_MS)
    action.trigger()
    qtbot.waitUntil(window.dock.isVisible, timeout=WAIT_MS)
    from tumble.gui.common.theme import dark_palette

    etch = dark_palette().color(QPalette.Disabled, QPalette.Light)
    assert etch.alpha() == 0  # a disabled entry (the Slow-motion factor's, say) is drawn once
