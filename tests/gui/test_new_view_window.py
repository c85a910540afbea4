"""Adding a view is one registry entry: a view that names another view's window opens in it, and shows in every View menu, with no window class of its own (its export: tests/test_new_view.py)."""

from __future__ import annotations


def test_a_registered_view_opens_in_the_window_it_names(open_view, probe_view):
    window = open_view("t-handle", view="probe", paused=True)
    assert window.VIEW == "probe" and window.windowTitle().endswith("Probe — Tumble")  # the application named once, last (issue 34)
    assert set(window.view.scenes) == {"construction", "family"}  # the view's own panes, not main's
    assert window.view_actions["probe"].isChecked() and not window.view_actions["main"].isChecked()


def test_every_window_lists_the_new_view(open_view, probe_view):
    window = open_view("t-handle", view="main", paused=True)
    assert "probe" in window.view_actions

