"""The end of a run: it pauses there and says so, or repeats when asked (issue 10, 3.6)."""

from __future__ import annotations

from conftest import WAIT_MS
from PyQt5.QtCore import Qt
from PyQt5.QtWidgets import QCheckBox, QToolBar

from tumble.gui.windows.window_parts import END_OF_RUN
from tumble.scenario import SolverSpec, dumps, load

#: the short run these tests play (s of simulated time)
DURATION = 1.5


def short_run(tmp_path, preset="boxes-complex") -> str:
    sc = load(preset)
    sc = sc.replace(name="Short run", solver=SolverSpec(sc.solver.integrator, sc.solver.dt, DURATION))
    path = tmp_path / "short.toml"
    path.write_text(dumps(sc, base_dir=tmp_path), encoding="utf-8")
    return str(path)


def _toolbar_boxes(window) -> list:
    return [w for tb in window.findChildren(QToolBar) for w in tb.findChildren(QCheckBox) if w.isVisible()]


def test_the_run_pauses_at_its_end_keeps_its_kick_and_says_so(open_window, qtbot, tmp_path):
    window = open_window(short_run(tmp_path), speed=2.0)
    latest = window.worker.latest
    run = latest().run_id
    qtbot.waitUntil(lambda: latest().t > 0.5, timeout=WAIT_MS)
    qtbot.keyClick(window, Qt.Key_K)
    qtbot.waitUntil(lambda: len(latest().kick_times) == 1, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: latest().ended, timeout=WAIT_MS)
    snap = latest()
    assert not snap.running and snap.run_id == run and len(snap.kick_times) == 1
    qtbot.waitUntil(lambda: window.status_labels["rtf"].text() == END_OF_RUN, timeout=WAIT_MS)
    assert "Play" in window.status_labels["rtf"].toolTip()
    assert window.play_action.text() == "Play"
    # it says how to go on, and the frame rate does not read "0 fps" as if the window had frozen
    assert "Space" in END_OF_RUN and "R" in END_OF_RUN
    qtbot.waitUntil(lambda: window.status_labels["fps"].text() == "still", timeout=WAIT_MS)
    qtbot.keyClick(window, Qt.Key_Space)  # plays on past the end, with the kick
    qtbot.waitUntil(lambda: latest().t > DURATION + 0.2, timeout=WAIT_MS)
    assert latest().run_id == run and len(latest().kick_times) == 1


def test_repeat_is_a_toolbar_and_menu_toggle_remembered_in_the_settings(open_window, qtbot, tmp_path):
    # paused until repeat is on: the 0.75 s of wall time the run lasts could end before the test
    # ticks it (a busy machine took that long between the first frame and the tick)
    window = open_window(short_run(tmp_path), speed=2.0, persist=True, paused=True)
    assert window.repeat.checkbox in _toolbar_boxes(window)
    assert not window.repeat.checkbox.isChecked() and not window.worker.latest().repeat
    menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Simulation")
    assert window.repeat.action in menu.actions() and window.repeat.action.isCheckable()
    assert not [b for b in window.panel.findChildren(QCheckBox) if "restart" in b.text()]  # not in the panel
    window.repeat.action.trigger()  # from the menu: the checkbox follows
    assert window.repeat.checkbox.isChecked()
    qtbot.waitUntil(lambda: window.worker.latest().repeat, timeout=WAIT_MS)
    run = window.worker.latest().run_id
    window.worker.play()
    qtbot.waitUntil(lambda: window.worker.latest().run_id > run, timeout=WAIT_MS)  # round again
    assert not window.worker.latest().ended
    window.close()

    again = open_window(short_run(tmp_path), persist=True)
    assert again.repeat.checkbox.isChecked() and again.repeat.action.isChecked()
    assert again.worker.latest().repeat


def test_the_compare_view_pauses_both_runs_at_their_end(open_view, qtbot, tmp_path):
    window = open_view(short_run(tmp_path), view="compare", speed=2.0)
    qtbot.waitUntil(lambda: all(w.latest().ended for w in window.workers), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: window.status_labels["rtf"].text() == END_OF_RUN, timeout=WAIT_MS)
    assert window.repeat.checkbox in _toolbar_boxes(window)
