"""The window shell every view shares: the View menu switches between every registered view
on the running scenario, Help, the first frame announced after the paint, errors shown once."""

from __future__ import annotations

import pytest
from conftest import WAIT_MS
from PyQt5.QtCore import Qt

from tumble import __version__
from tumble.views import view_names

VIEWS = view_names()
#: the stability map the tests compute: small, the tests check the window
SMALL_MAP = {"directions": 200, "duration": 2.0}


@pytest.fixture
def open_any(open_view):
    """Factory: a shown window of any registered view on a preset (a small stability map)."""
    def make(view, preset="t-handle", paused=False):
        return open_view(preset, view=view, paused=paused, **(SMALL_MAP if view == "stability" else {}))

    return make


def test_every_view_is_registered():
    assert {"main", "poinsot", "compare", "stability"} <= set(VIEWS)


@pytest.mark.parametrize("view", VIEWS)
def test_the_view_menu_lists_every_view_and_switches_on_the_same_scenario(open_any, qtbot, view):
    window = open_any(view, preset="boxes-complex", paused=True)
    entries = [a for a in window.view_menu.actions() if a in window.view_actions.values()]
    assert [a.text() for a in entries] == [f"{name.capitalize()} view" for name in VIEWS]
    assert [a.isChecked() for a in entries] == [name == view for name in VIEWS]
    assert all(a.shortcut().toString() == f"Ctrl+{k + 1}" for k, a in enumerate(entries))
    # the existing View items stay
    assert window.camera_action in window.view_menu.actions()
    target = VIEWS[(VIEWS.index(view) + 1) % len(VIEWS)]
    scenario = window.current_scenario()[0]
    size = window.size()
    workers = window.workers
    qtbot.keyClick(window, Qt.Key_1 + VIEWS.index(target), Qt.ControlModifier)
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=WAIT_MS)
    from tumble.gui.windows import window_parts

    new = next(w for w in window_parts._switched if w.VIEW == target)
    assert new.isVisible() and new.view_actions[target].isChecked()
    assert new.current_scenario()[0] == scenario
    assert new.size() == size
    assert not any(w.is_alive() for w in workers) and not window.frame_timer.isActive()
    with qtbot.waitSignal(new.destroyed, timeout=WAIT_MS):
        new.close()  # it deletes itself; the leak guard checks its threads and widgets are gone


def test_choosing_the_current_view_keeps_the_window(open_any):
    window = open_any("main", paused=True)
    assert window.switch_view("main") is window and window.isVisible()
    assert window.view_actions["main"].isChecked()


def test_help_about_shows_the_version_the_licence_and_the_readme(open_any):
    from tumble.gui.dialogs.help_dialogs import README

    window = open_any("main", paused=True)
    menu_texts = [a.text() for a in window.help_menu.actions()]
    assert "About Tumble" in menu_texts and "Keyboard shortcuts" in menu_texts
    box = window.show_about()
    text = box.text()
    assert __version__ in text and "MIT" in text and str(README) in text
    box.close()


def test_help_why_does_it_flip_shows_the_readme_s_plain_explanation(open_any):
    from tumble.gui.dialogs.help_dialogs import why_it_flips_text

    window = open_any("main", paused=True)
    assert "Why does it flip?" in [a.text() for a in window.help_menu.actions()]
    dialog = window.show_why()
    shown = " ".join(dialog.browser.toPlainText().split())
    for paragraph in why_it_flips_text().split("\n\n"):  # every paragraph, as plain text
        first_words = " ".join(paragraph.split()[:12]).replace("`", "")
        assert first_words in shown, first_words
    assert "intermediate" in shown and "separatrix" in shown
    dialog.close()


@pytest.mark.parametrize("view", ["main", "stability", "compare"])
def test_the_shortcuts_dialog_is_made_from_the_window_actions(open_any, view):
    window = open_any(view, paused=True)
    dialog = window.show_shortcuts()
    table = dialog.table
    rows = {table.item(i, 0).text(): table.item(i, 1).text() for i in range(table.rowCount())}
    assert rows["Space"] in ("Play", "Pause") and rows["R"] == "Reset" and rows["Ctrl+Q"] == "Quit"
    assert rows["Ctrl+1"] == "Main view"
    assert "Ctrl+E" in rows  # every view exports
    assert ("K" in rows) == (view != "compare")  # the compare view offers no kick: not listed
    dialog.close()


@pytest.mark.parametrize("view", VIEWS)
def test_the_first_frame_is_announced_after_the_paint(qtbot, view):
    """A listener of first_frame_drawn may close the window: it must not run inside the render."""
    from tumble.gui.views import view_factory
    from tumble.scenario import load

    window = view_factory(view)(load("t-handle"), persist=False, **(SMALL_MAP if view == "stability" else {}))
    qtbot.addWidget(window)
    rendering = []
    ren_win = window.scene_view.ren_win
    # added after the window's own EndEvent observer, so it runs after it
    ren_win.AddObserver("StartEvent", lambda *_a: rendering.append(True))
    ren_win.AddObserver("EndEvent", lambda *_a: rendering.clear())
    inside = []
    window.first_frame_drawn.connect(lambda _t: inside.append(bool(rendering)))
    with qtbot.waitSignal(window.first_frame_drawn, timeout=WAIT_MS):
        window.show()
    assert inside == [False]


def test_the_stability_view_shows_a_worker_error_once(open_any, qtbot, monkeypatch):
    import tumble.physics.integrators as integrators
    from tumble.physics.errors import DivergenceError

    window = open_any("stability")
    qtbot.waitUntil(lambda: window.result is not None, timeout=WAIT_MS)

    def diverge(*args, **kwargs):
        raise DivergenceError(1.5, 1500, "non-finite state")

    monkeypatch.setattr(integrators, "simulate", diverge)
    with qtbot.waitSignal(window.simulation_failed, timeout=WAIT_MS):
        pass
    assert "Simulation stopped" in window.error_label.text()
    writes = []
    window.error_label.setText = writes.append  # each frame's writes, from here on
    frames = window.frames_drawn
    qtbot.wait(400)  # ~25 display frames
    assert writes == [], f"the error label was written {len(writes)} times after {window.frames_drawn - frames} renders"
