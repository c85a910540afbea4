"""Issue 34, item 2: presentation mode never ends silently. A run that reaches its duration
while the scene is shown plays on (and the big clock says so), a repeating run says that it
repeats, and a run already paused at its end says "end of run, Space to go on" in big letters."""

from __future__ import annotations

from conftest import WAIT_MS
from PyQt5.QtCore import Qt

from tumble.gui.windows.presentation import BANNER_PX, END_BANNER

from .test_run_end import DURATION, short_run


def test_a_run_that_ends_while_shown_plays_on_and_says_so(open_window, qtbot, tmp_path):
    window = open_window(short_run(tmp_path), speed=2.0, paused=True)
    latest = window.worker.latest
    run = latest().run_id
    window.presentation.enter()
    qtbot.waitUntil(window.isFullScreen, timeout=WAIT_MS)
    window.worker.play()  # the run ends while the scene is shown
    qtbot.waitUntil(lambda: latest().t > DURATION + 0.5, timeout=WAIT_MS)  # past the end, the same run
    assert latest().running and latest().run_id == run
    clock = window.presentation.clock
    qtbot.waitUntil(lambda: f"played on past the run's {DURATION:g} s" in clock.text(), timeout=WAIT_MS)
    assert not window.presentation.banner.isVisible()
    window.presentation.leave()
    qtbot.waitUntil(lambda: not window.isFullScreen(), timeout=WAIT_MS)


def test_a_repeating_run_says_it_repeats(open_window, qtbot, tmp_path):
    window = open_window(short_run(tmp_path), speed=2.0, paused=True)
    window.set_repeat(True)
    window.worker.play()
    window.presentation.enter()
    clock = window.presentation.clock
    qtbot.waitUntil(lambda: f"repeats every {DURATION:g} s" in clock.text(), timeout=WAIT_MS)
    run = window.worker.latest().run_id
    qtbot.waitUntil(lambda: window.worker.latest().run_id > run, timeout=WAIT_MS)  # round again
    assert not window.presentation.banner.isVisible()
    window.presentation.leave()


def test_an_ended_run_says_end_of_run_in_big_letters_until_space(open_window, qtbot, tmp_path):
    window = open_window(short_run(tmp_path), speed=2.0)
    latest = window.worker.latest
    qtbot.waitUntil(lambda: latest().ended, timeout=WAIT_MS)
    window.presentation.enter()
    qtbot.waitUntil(window.isFullScreen, timeout=WAIT_MS)
    banner = window.presentation.banner
    qtbot.waitUntil(banner.isVisible, timeout=WAIT_MS)
    assert banner.text() == END_BANNER and "Space" in END_BANNER
    assert banner.fontInfo().pixelSize() >= BANNER_PX - 1 and banner.height() > BANNER_PX
    scene = window.scene_view
    assert scene.rect().contains(banner.geometry())  # whole, on the scene
    assert not latest().running  # it stays at its end: the class is told, not surprised
    qtbot.keyClick(window, Qt.Key_Space)
    qtbot.waitUntil(lambda: latest().t > DURATION + 0.2, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: not banner.isVisible(), timeout=WAIT_MS)
    window.presentation.leave()
    qtbot.waitUntil(lambda: not window.isFullScreen(), timeout=WAIT_MS)
