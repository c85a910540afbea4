"""The default camera shows the body with omega and L outside it, whatever axis it spins
about (issue 10, 3.9): an eraser spun about world y hid both arrows behind itself."""

from __future__ import annotations

import colorsys

import numpy as np
import pytest
from conftest import WAIT_MS

from tumble.physics import quaternion as quat
from tumble.scene.style import L_COLOR, OMEGA_COLOR

#: a 1 x 2 x 3 cm eraser (8 g) spun about its 2 cm edge, world y (its intermediate axis)
ERASER = """
name = "Eraser"
description = "a 1 x 2 x 3 cm eraser spun about world y, its intermediate axis"
[body]
shape = "box"
mass = 0.008
size = [0.01, 0.02, 0.03]
[initial]
angular_velocity = [0.05, 8.0, 0.05]
[solver]
integrator = "rk4"
dt = 0.001
duration = 10.0
"""
#: an arrow's head is its last 22% (app.scene.meshes.unit_arrow): its middle
HEAD_MIDDLE = 1 - 0.22 / 2
#: a pixel shows an arrow when its hue is this close to the arrow's (deg) and it is coloured
HUE_TOLERANCE_DEG = 25.0
MIN_SATURATION = 0.3


def _hue(rgb) -> tuple[float, float]:
    h, _l, s = colorsys.rgb_to_hls(*(np.asarray(rgb[:3], dtype=float) / 255.0))
    return 360.0 * h, s


def _hex_hue(color: str) -> float:
    return _hue([int(color[k:k + 2], 16) for k in (1, 3, 5)])[0]


def _shows(pixel, color: str) -> bool:
    hue, saturation = _hue(pixel)
    gap = abs((hue - _hex_hue(color) + 180.0) % 360.0 - 180.0)
    return saturation >= MIN_SATURATION and gap <= HUE_TOLERANCE_DEG


def _pixel(plotter, image, point):
    renderer = plotter.renderer
    renderer.SetWorldPoint(*point, 1.0)
    renderer.WorldToDisplay()
    x, y, _ = renderer.GetDisplayPoint()
    h, w = image.shape[:2]
    col, row = int(round(x)), h - 1 - int(round(y))
    assert 0 <= col < w and 0 <= row < h, f"{point} is out of the view"
    return image[row, col]


def _inside_box(point, c, q, half) -> bool:
    local = quat.to_matrix(q).T @ (np.asarray(point) - c)
    return bool(np.all(np.abs(local) <= half * 1.02))


def _check_arrows(window) -> None:
    """Each arrow's head shows its colour, and its axis outside the body shows an arrow."""
    view = window.scene_view
    view.render()
    image = view.screenshot(return_img=True)
    snap = window.worker.latest()
    c, q = snap.state.c, snap.state.q
    sc = snap.scenario
    half = np.asarray(sc.body.size, dtype=float) / 2 if sc.body.shape == "box" else None
    for name, color in (("omega", OMEGA_COLOR), ("L", L_COLOR)):
        m = np.array(window.scene.actors[name].user_matrix)
        start, shaft = m[:3, 3], m[:3, 0]  # the unit arrow along x, scaled to its length
        head = _pixel(view, image, start + HEAD_MIDDLE * shaft)
        assert _shows(head, color), f"{name}'s head is hidden: the pixel there is {head[:3]}"
        if half is None:
            continue
        # every point of its axis outside the body shows an arrow, not the body or the floor
        for s in np.linspace(0.05, 0.97, 24):
            p = start + s * shaft
            if not _inside_box(p, c, q, half):
                pixel = _pixel(view, image, p)
                assert _shows(pixel, OMEGA_COLOR) or _shows(pixel, L_COLOR), \
                    f"{name} at {s:.2f} of its length is hidden: the pixel there is {pixel[:3]}"


@pytest.mark.parametrize("scenario", ["eraser", "boxes-complex", "t-handle"])
def test_the_default_view_shows_omega_and_l_outside_the_body(open_window, qtbot, tmp_path, scenario):
    if scenario == "eraser":
        path = tmp_path / "eraser.toml"
        path.write_text(ERASER, encoding="utf-8")
        scenario = str(path)
    _check_arrows(open_window(scenario, paused=True))


def test_the_stability_view_frames_the_spin_for_its_shape(qtbot, tmp_path):
    """Its scene is tall and narrow: the camera is fitted again once it has its shape."""
    from PyQt5.QtWidgets import QApplication

    from tumble.gui.windows.stability_window import StabilityWindow
    from tumble.scenario import load

    path = tmp_path / "eraser.toml"
    path.write_text(ERASER, encoding="utf-8")
    window = StabilityWindow(load(str(path)), paused=True, persist=False, directions=100, duration=1.0)
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.first_frame_drawn, timeout=WAIT_MS):
        window.show()
    qtbot.waitUntil(lambda: window.result is not None, timeout=WAIT_MS)
    QApplication.processEvents()  # the resizes the map's arrival asked for
    qtbot.waitUntil(lambda: not window.camera_fitter.pending, timeout=WAIT_MS)  # the re-fit after the last one
    _check_arrows(window)
