"""While a kernel compiles on a first run, the window's status bar says what and for about how
long, beside the real-time factor, and says nothing of it once the kernel is ready."""

from __future__ import annotations

import pytest

from tumble.physics.compiled import jit
from conftest import WAIT_MS

NOTE = "compiling rk4-free (about 9 s), running uncompiled"


@pytest.mark.parametrize("view", ["main", "compare"])
def test_the_status_bar_says_what_compiles(open_view, qtbot, monkeypatch, view):
    monkeypatch.setattr(jit, "note", lambda: NOTE)  # as the worker publishes it during a compile
    window = open_view("t-handle", view=view)
    label = window.status_labels["rtf"]
    qtbot.waitUntil(lambda: NOTE in label.text() and label.text().startswith("real time ×"), timeout=WAIT_MS)
    assert "uncompiled" in label.toolTip()
    monkeypatch.setattr(jit, "note", lambda: "")  # compiled: the note goes
    qtbot.waitUntil(lambda: "compiling" not in label.text() and "real time ×" in label.text(), timeout=WAIT_MS)
