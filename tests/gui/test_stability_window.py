"""The stability view in a real Qt + VTK window under Xvfb (pytest-qt), and its entry point."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import WAIT_MS, tumble
from PyQt5.QtCore import Qt
from PyQt5.QtGui import QColor, QImage

#: small maps: the tests check the window, not the physics (tests/test_stability.py does)
DIRECTIONS, DURATION = 300, 6.0


@pytest.fixture
def open_stability(qtbot):
    """Factory: a shown StabilityWindow computing a small map (closed by qtbot)."""
    from tumble.gui.launch import resolve_scenario
    from tumble.gui.windows.stability_window import StabilityWindow

    def make(scenario="t-handle", *, directions=DIRECTIONS, duration=DURATION, wait_map=True):
        sc, preset = resolve_scenario(scenario)
        window = StabilityWindow(sc, preset=preset, persist=False, directions=directions, duration=duration)
        qtbot.addWidget(window)
        with qtbot.waitSignal(window.first_frame_drawn, timeout=WAIT_MS):
            window.show()
        if wait_map:
            qtbot.waitUntil(lambda: window.result is not None, timeout=WAIT_MS)
        return window

    return make


def angle_deg(u, v) -> float:
    u, v = np.asarray(u, float), np.asarray(v, float)
    return float(np.degrees(np.arccos(np.clip(abs(u @ v) / np.linalg.norm(u) / np.linalg.norm(v), -1, 1))))


def test_the_map_is_computed_in_the_background_and_drawn(open_stability, qtbot):
    window = open_stability(wait_map=False)
    assert window.job is not None and window.job.is_alive()  # the window is up while it computes
    assert window.progress_action.isVisible()
    with qtbot.waitSignal(window.map_ready, timeout=WAIT_MS):
        pass
    assert not window.progress_action.isVisible()
    smap = window.result.smap
    assert len(smap.wander) == DIRECTIONS and smap.duration == DURATION
    image = window.image.image
    assert image.shape == window.result.grid.shape and np.all(np.isfinite(image))
    assert image.max() > 150 and image.min() < 20  # degrees: the unstable band and the stable poles
    # the three axes, both signs, marked where the map frame puts them
    places = window.axis_places
    assert places[(1, 1)] == pytest.approx((0.0, 0.0), abs=1e-6)       # intermediate at the centre
    assert abs(places[(2, 1)][0]) == pytest.approx(90.0, abs=1e-6)      # major at longitude +-90
    assert abs(places[(0, 1)][1]) == pytest.approx(90.0, abs=1e-6)      # minor at a pole
    assert window.axis_labels == ("minor: stable", "intermediate: unstable", "major: stable")
    assert "unstable" in window.info.text() and "wanders" in window.info.text()
    assert str(DIRECTIONS) in window.map_status.text()


def test_a_click_at_the_intermediate_axis_loads_that_spin(open_stability, qtbot):
    window = open_stability()
    axes = window.axes
    # click 5 degrees off the marker (its label sits up and to the right of it)
    point = window.map_to_widget(0.0, -5.0)
    with qtbot.waitSignal(window.spin_loaded, timeout=WAIT_MS) as blocker:
        qtbot.mouseClick(window.map_widget.viewport(), Qt.LeftButton, pos=point)
    w0 = blocker.args[0]
    smap = window.result.smap
    assert np.allclose(w0, smap.initial_omega(window.selected_index))
    assert np.linalg.norm(w0) == pytest.approx(window.omega_norm)
    assert angle_deg(w0, axes[:, 1]) < 12.0  # the lattice point nearest the click
    qtbot.waitUntil(lambda: np.allclose(window.worker.latest().scenario.angular_velocity, w0), timeout=WAIT_MS)
    assert "from the stability map" in window.worker.latest().scenario.name
    # omega's track is drawn on the map, starting at the chosen point
    qtbot.waitUntil(lambda: window.track.getData()[0] is not None and len(window.track.getData()[0]) > 5,
                    timeout=WAIT_MS)
    x, y = window.choice_marker.getData()
    assert abs(x[0]) < 12 and abs(y[0]) < 12
    # a click near the major axis loads a spin near it
    with qtbot.waitSignal(window.spin_loaded, timeout=WAIT_MS) as blocker:
        qtbot.mouseClick(window.map_widget.viewport(), Qt.LeftButton, pos=window.map_to_widget(90.0, -5.0))
    assert angle_deg(blocker.args[0], axes[:, 2]) < 12.0
    # a click outside the map loads nothing
    before = window.selected_index
    qtbot.mouseClick(window.map_widget.viewport(), Qt.LeftButton, pos=window.map_to_widget(0.0, 120.0))
    qtbot.wait(100)
    assert window.selected_index == before


def test_open_in_main_view_takes_the_chosen_spin(open_stability, qtbot):
    window = open_stability()
    w0 = window.select_point(90.0, 10.0)
    qtbot.waitUntil(lambda: np.allclose(window.worker.latest().scenario.angular_velocity, w0), timeout=WAIT_MS)
    main = window.open_in_main_view()
    qtbot.addWidget(main)
    qtbot.waitUntil(lambda: main.frames_drawn > 0, timeout=WAIT_MS)
    assert np.allclose(main.worker.latest().scenario.angular_velocity, w0)
    assert main in window.main_windows
    main.close()


def test_a_double_click_on_the_map_loads_that_spin_into_a_main_window(open_stability, qtbot):
    window = open_stability()
    from PyQt5.QtCore import QPointF

    class DoubleClick:
        """pyqtgraph's click event for a double click at a map point (synthetic double
        clicks reach pyqtgraph's scene unreliably; single clicks are tested above)."""

        def button(self):
            return Qt.LeftButton

        def scenePos(self):  # noqa: N802 - pyqtgraph API
            return window.map_plot.vb.mapViewToScene(QPointF(90.0, 10.0))

        def double(self):
            return True

    window._map_clicked(DoubleClick())
    qtbot.waitUntil(lambda: len(window.main_windows) == 1, timeout=WAIT_MS)
    main = window.main_windows[0]
    qtbot.addWidget(main)
    w0 = window.result.smap.initial_omega(window.selected_index)
    assert np.allclose(main.worker.latest().scenario.angular_velocity, w0)
    main.close()


def test_closing_while_computing_stops_the_job_and_the_worker(open_stability):
    window = open_stability(directions=20000, duration=60.0, wait_map=False)  # 9e7 body-steps: within the budget
    job, worker = window.job, window.worker
    assert job.is_alive()
    window.close()
    assert not job.is_alive() and not worker.is_alive()


def test_recompute_with_new_settings(open_stability, qtbot):
    window = open_stability()
    window.directions_box.setValue(500)
    window.duration_box.setValue(3.0)
    with qtbot.waitSignal(window.map_ready, timeout=WAIT_MS):
        window.compute_button.click()
    assert len(window.result.smap.wander) == 500 and window.result.smap.duration == 3.0


# ------------------------------------------------------------------ the real entry point


def test_gui_screenshot_of_the_stability_view(open_stability, tmp_path):
    window = open_stability(wait_map=False)
    size = (window.width(), window.height())

    def where(lon, lat):
        p = window.map_widget.mapTo(window, window.map_to_widget(lon, lat))
        return p.x(), p.y()

    unstable = where(0.0, -20.0)   # in the band around the intermediate axis, clear of its marker
    stable = [where(90.0, -12.0), where(-90.0, -12.0), where(30.0, 80.0)]  # near the major and minor axes
    window.close()
    out = tmp_path / "stability.png"
    res = tumble("gui", "t-handle", "--view", "stability", "--screenshot", out, "--quit-after", "0.5", timeout=120)
    assert res.returncode == 0, res.stderr
    image = QImage(str(out))
    assert (image.width(), image.height()) == size

    def brightness(x, y):
        patch = [QColor(image.pixel(x + dx, y + dy)).getRgb()[:3] for dx in (-2, 0, 2) for dy in (-2, 0, 2)]
        return float(np.mean(np.sum(patch, axis=1)))

    # the screenshot waited for the map: bright (magma near 180 deg) around the unstable axis,
    # dark (near 0 deg) around the stable ones
    assert brightness(*unstable) > 450, brightness(*unstable)
    for x, y in stable:
        assert brightness(x, y) < 200, brightness(x, y)
