"""A window in front of a class (issue 27, items 3 and 4): it opens within the screen and is
remembered per screen, its plots keep their height with the Phone open, F11 shows the scene
alone in large type, M slows each flip down."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from PyQt5.QtCore import Qt
from PyQt5.QtGui import QImage
from PyQt5.QtWidgets import QApplication

from tumble.gui.common import settings as keys
from conftest import WAIT_MS

#: the screens a class meets: a projector, a laptop, a monitor
SCREENS = [(1280, 720), (1366, 768), (1920, 1080)]
#: a port nothing listens on (the Phone tab opens and keeps trying)
NO_PHONE = "http://127.0.0.1:9"


def _inside(rect, area) -> bool:
    return area.contains(rect)


def test_the_window_opens_within_the_screen_and_centred(open_window, qtbot):
    window = open_window("t-handle", paused=True)
    area = QApplication.primaryScreen().availableGeometry()
    assert _inside(window.frameGeometry(), area)  # sized for a frame before the window manager framed it
    # centred once framed: the window manager's frame (none here) is measured after the show
    qtbot.waitUntil(lambda: window.screen_fitter.fitted >= 1, timeout=WAIT_MS)
    assert _inside(window.frameGeometry(), area)
    assert window.width() <= 1440 and window.height() <= 900
    centre = window.frameGeometry().center()
    assert abs(centre.x() - area.center().x()) <= 1 and abs(centre.y() - area.center().y()) <= 1


def test_the_geometry_is_remembered_per_screen(open_window, qtbot):
    window = open_window("t-handle", paused=True, persist=True)
    window.resize(1100, 700)
    window.move(40, 30)
    qtbot.waitUntil(lambda: window.width() == 1100, timeout=WAIT_MS)
    window.close()
    screen = QApplication.primaryScreen().geometry()
    key = keys.geometry_key("main", (screen.width(), screen.height()))
    assert key == f"main/geometry-{screen.width()}x{screen.height()}"
    assert keys.open_settings().contains(key)
    again = open_window("t-handle", paused=True, persist=True)
    assert (again.width(), again.height(), again.x(), again.y()) == (1100, 700, 40, 30)
    # a screen of another size starts from the default, cut to it and centred
    other = keys.geometry_key("main", (1280, 720))
    assert not keys.open_settings().contains(other)


def test_the_plots_keep_their_height_with_the_phone_open(open_window, qtbot, plots_drawn):
    from tumble.gui.windows.main_window import PLOT_MIN_HEIGHT

    window = open_window("t-handle", paused=True)
    window.resize(1280, 720)
    qtbot.waitUntil(lambda: window.height() == 720, timeout=WAIT_MS)
    plots_drawn(window.plots)  # laid out at that size (a fixed 200 ms could end first on a busy machine)
    heights = [p.vb.height() for p in window.plots.plots]
    dock = window.connect_phone()
    assert window.side_tabs.currentWidget() is dock and dock.isVisible()
    assert window.height() <= 720 and dock.strip.height() >= 150  # the live strip has room too
    window.side_tabs.setCurrentIndex(0)  # back to the plots: as tall as before
    plots_drawn(window.plots)
    # as tall as before but for the tab bar above them (the Phone dock under them left them 10 px)
    tab_bar = window.side_tabs.tabBar().height()
    for before, after in zip(heights, (p.vb.height() for p in window.plots.plots)):
        assert after >= before - tab_bar / 3 - 1
    assert window.plots.height() >= PLOT_MIN_HEIGHT * 3
    assert min(p.height() for p in window.plots.plots) >= PLOT_MIN_HEIGHT - 10  # with its title


def _xvfb_run() -> str:
    path = shutil.which("xvfb-run")
    if path is None:
        pytest.fail("xvfb-run is not installed (Debian: apt-get install xvfb xauth)")
    return path


@pytest.mark.parametrize("size", SCREENS)
@pytest.mark.parametrize("phone", [False, True])
def test_the_window_fits_each_screen(tmp_path, size, phone):
    """``tumble gui --screenshot`` on an Xvfb screen of each size: the window (its screenshot) within it."""
    from conftest import ROOT, headless_env

    w, h = size
    shot = tmp_path / "window.png"
    args = [sys.executable, "-m", "tumble", "gui", "t-handle", "--screenshot", str(shot), "--quit-after", "1"]
    if phone:
        args[4:4] = ["--live", NO_PHONE]
    res = subprocess.run([_xvfb_run(), "-a", "-s", f"-screen 0 {w}x{h}x24", *args], cwd=ROOT, env=headless_env(),
                         capture_output=True, text=True, timeout=240)
    assert res.returncode == 0, res.stderr
    image = QImage(str(shot))
    assert 0 < image.width() <= w and 0 < image.height() <= h
    assert image.width() >= min(w, 1440) - 1 and image.height() >= min(h, 900) - 1  # the room it had


def test_f11_shows_the_scene_alone_in_large_type_and_back(open_window, qtbot):
    window = open_window("t-handle", paused=True)
    legend_style, legend_height = window.legend.styleSheet(), window.legend.height()
    assert window.presentation.action in window.view_menu.actions()
    qtbot.keyClick(window, Qt.Key_F11)
    qtbot.waitUntil(window.isFullScreen, timeout=WAIT_MS)
    assert window.presentation.active and window.presentation.clock.isVisible()
    assert not window.dock.isVisible() and not window.theory_dock.isVisible() and not window.side_tabs.isVisible()
    assert not window.menuBar().isVisible() and not window.statusBar().isVisible()
    assert not window.playback_toolbar.isVisible()
    screen = QApplication.primaryScreen().geometry()
    qtbot.waitUntil(lambda: (window.scene_view.width(), window.scene_view.height()) == (screen.width(), screen.height()),
                    timeout=WAIT_MS)
    assert "18pt" in window.legend.styleSheet() and window.legend.height() > 1.8 * legend_height  # 8 pt before
    clock = window.presentation.clock
    assert "t =" in clock.text() and "flips 0" in clock.text() and clock.height() > 100
    qtbot.keyClick(window, Qt.Key_F11)
    qtbot.waitUntil(lambda: not window.isFullScreen(), timeout=WAIT_MS)
    assert window.dock.isVisible() and window.side_tabs.isVisible() and window.menuBar().isVisible()
    assert window.legend.styleSheet() == legend_style and not clock.isVisible()
    qtbot.keyClick(window, Qt.Key_F11)
    qtbot.waitUntil(window.isFullScreen, timeout=WAIT_MS)
    qtbot.keyClick(window, Qt.Key_Escape)  # Esc leaves too
    qtbot.waitUntil(lambda: not window.isFullScreen(), timeout=WAIT_MS)
    assert window.statusBar().isVisible()


def test_m_slows_each_flip_and_the_clock_stays_simulated(open_window, qtbot):
    window = open_window("t-handle", paused=False)
    worker = window.worker
    assert not window.presentation.slow
    qtbot.keyClick(window, Qt.Key_M)
    assert window.presentation.slow
    # the T-handle's first flip is at 1.59 s: slowed 4x from 1.09 s
    qtbot.waitUntil(lambda: worker.latest().slowed == 4.0, timeout=WAIT_MS)
    snap = worker.latest()
    assert 1.09 <= snap.t <= 2.1
    qtbot.waitUntil(lambda: "slow motion 4×" in window.status_labels["time"].text(), timeout=WAIT_MS)
    shown = float(window.status_labels["time"].text().split("=")[1].split("s")[0])
    assert 1.0 <= shown <= 2.2  # the simulated time, not the slowed clock's
    window.presentation.set_factor(8.0)
    qtbot.waitUntil(lambda: worker.latest().slowed in (1.0, 8.0) and worker.latest().slowed != 4.0,
                    timeout=WAIT_MS)
    qtbot.keyClick(window, Qt.Key_M)
    qtbot.waitUntil(lambda: worker.latest().slowed == 1.0, timeout=WAIT_MS)


def test_tumble_gui_opens_in_presentation_mode_with_slow_flips(tmp_path):
    from conftest import ROOT, headless_env

    shot = tmp_path / "presentation.png"
    args = [sys.executable, "-m", "tumble", "gui", "t-handle", "--presentation", "--slow-flips", "4",
            "--screenshot", str(shot), "--quit-after", "1"]
    res = subprocess.run([_xvfb_run(), "-a", "-s", "-screen 0 1366x768x24", *args], cwd=ROOT, env=headless_env(),
                         capture_output=True, text=True, timeout=240)
    assert res.returncode == 0, res.stderr
    image = QImage(str(shot))
    assert (image.width(), image.height()) == (1366, 768)  # the scene alone, the whole screen
    res = subprocess.run([sys.executable, "-m", "tumble", "gui", "t-handle", "--slow-flips", "60"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and res.stderr.strip().splitlines() == [
        "tumble: error: --slow-flips must be a number from 1 to 50 (times slower around each flip), got 60"]


@pytest.mark.parametrize("view", ["main", "poinsot", "compare", "stability"])
def test_every_view_shows_its_scene_alone_in_presentation_mode(open_view, qtbot, view):
    window = open_view("t-handle", view=view, paused=True)
    assert window.presentation.action in window.view_menu.actions()
    window.presentation.enter()
    qtbot.waitUntil(window.isFullScreen, timeout=WAIT_MS)
    screen = QApplication.primaryScreen().geometry()
    qtbot.waitUntil(lambda: window.scene_view.width() == screen.width(), timeout=WAIT_MS)
    assert window.presentation.clock.isVisible() and not window.menuBar().isVisible()
    window.presentation.leave()
    qtbot.waitUntil(lambda: not window.isFullScreen(), timeout=WAIT_MS)
    assert window.menuBar().isVisible() and window.scene_view.width() < screen.width()
