"""Every window action calls its command without Qt's ``checked`` flag (issue 10, 3.12)."""

from __future__ import annotations

import numpy as np
from conftest import WAIT_MS
from PyQt5.QtCore import Qt
from PyQt5.QtWidgets import QMainWindow, QToolBar



def test_an_action_calls_its_slot_without_the_checked_flag(qtbot):
    from tumble.gui.windows.window_parts import add_action

    window = QMainWindow()
    qtbot.addWidget(window)
    calls = []

    def command(impulse=None):  # a default the flag would fill, as SimulationWorker.kick has
        calls.append(impulse)

    action = add_action(window, "Kick", command, "K")
    action.trigger()
    action.setCheckable(True)
    action.trigger()  # checked=True now
    assert calls == [None, None]


def test_kick_in_the_stability_view_kicks_the_spin_and_it_runs_on(qtbot):
    from tumble.gui.launch import resolve_scenario
    from tumble.gui.windows.stability_window import StabilityWindow

    sc, preset = resolve_scenario("t-handle")
    window = StabilityWindow(sc, preset=preset, persist=False, directions=200, duration=2.0)
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.first_frame_drawn, timeout=WAIT_MS):
        window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: window.worker.latest().t > 0.2, timeout=WAIT_MS)

    toolbar = next(tb for tb in window.findChildren(QToolBar) if window.kick_action in tb.actions())
    w_before = window.worker.latest().state.w.copy()
    qtbot.mouseClick(toolbar.widgetForAction(window.kick_action), Qt.LeftButton)  # the Kick button
    qtbot.waitUntil(lambda: len(window.worker.latest().kick_times) == 1, timeout=WAIT_MS)
    qtbot.keyClick(window, Qt.Key_K)
    qtbot.waitUntil(lambda: len(window.worker.latest().kick_times) == 2, timeout=WAIT_MS)
    snap = window.worker.latest()
    assert snap.error is None and snap.running
    assert not np.allclose(snap.state.w, w_before)
    t = snap.t
    qtbot.waitUntil(lambda: window.worker.latest().t > t + 0.2, timeout=WAIT_MS)
    window.close()
