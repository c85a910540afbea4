"""The engines window at 1280x720: each body drawn large, apart from the others, its label above
it, ringed in its setting's colour, the same colour as its curve (read from the curves' lines)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import WAIT_MS

from test_engines_layout import BODY_SHARE, _disjoint, _screen_boxes, label_box

#: every test here runs the other physics engines and opens a window
pytestmark = [pytest.mark.engines, pytest.mark.slow]

#: a ring's pixel counts as its colour within this distance (0-255, each channel): the ring is
#: unlit, so its pixels are its colour; the lit arrows and faces rarely come this near
COLOR_SLACK = 12
#: at least this many pixels of a body's colour inside its own box, at most a tenth as many elsewhere
LEAST_PIXELS = 300


def _hex_rgb(color) -> np.ndarray:
    from matplotlib.colors import to_hex

    text = to_hex(color)
    return np.array([int(text[i:i + 2], 16) for i in (1, 3, 5)])


def _count(image, box, rgb) -> int:
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    part = image[max(y0, 0):max(y1, 0), max(x0, 0):max(x1, 0)].astype(int)
    return int(np.sum(np.all(np.abs(part - rgb) <= COLOR_SLACK, axis=-1)))


def _grab(widget) -> np.ndarray:
    from PyQt5.QtGui import QImage

    image = widget.grab().toImage().convertToFormat(QImage.Format_RGB888)
    w, h = image.width(), image.height()
    data = np.frombuffer(image.constBits().asstring(image.bytesPerLine() * h), dtype=np.uint8)
    return data.reshape(h, image.bytesPerLine())[:, : 3 * w].reshape(h, w, 3)


def test_bodies_large_apart_labelled_and_coloured_as_their_curves(qtbot):
    from dataclasses import replace

    from tumble.gui.windows.engines_window import NONE_ITEM, EnginesWindow
    from tumble.scenario import load

    base = load("t-handle")
    sc = base.replace(solver=replace(base.solver, duration=3.0))
    window = EnginesWindow(sc, preset="t-handle", paused=True, persist=False,
                           engines="mujoco,tumble:rk4,tumble:splitting,tumble:midpoint")
    qtbot.addWidget(window)
    try:
        with qtbot.waitSignal(window.first_frame_drawn, timeout=WAIT_MS):
            window.show()
        window.showNormal()
        window.resize(1280, 720)
        qtbot.waitUntil(lambda: (window.width(), window.height()) == (1280, 720), timeout=WAIT_MS)
        for n in (4, 3, 2):
            if n < 4:
                window.setting_combos[n].setCurrentText(NONE_ITEM)
                window.apply_choices()
            view = window.view
            scene = view.scenes["bodies"]
            qtbot.waitUntil(lambda: view.audit is not None, timeout=4 * WAIT_MS)
            window.step()
            qtbot.waitUntil(lambda: window.drawn_time > 0 and window.curves.picture is not None
                            and len(window.curves.picture.lines) == n, timeout=WAIT_MS)
            plotter = scene.plotter
            width, height = plotter.window_size
            qtbot.waitUntil(lambda: scene.layout_size == (width, height), timeout=WAIT_MS)
            assert len(scene.scenes) == n
            # a body radius spans the layout's scale: the sphere holding the body, as drawn
            cam = plotter.camera
            ren = plotter.renderer
            forward = np.subtract(cam.focal_point, cam.position)
            forward /= np.linalg.norm(forward)
            right = np.cross(forward, np.asarray(cam.up, dtype=float))
            up = np.cross(right / np.linalg.norm(right), forward)  # the screen's up, in the world
            for s in scene.scenes:
                c = np.asarray(s.actors["body"].user_matrix)[:3, 3]
                ys = []
                for sign in (-1, 1):
                    ren.SetWorldPoint(*(c + sign * scene.radius * up), 1.0)
                    ren.WorldToDisplay()
                    ys.append(ren.GetDisplayPoint()[1])
                assert abs(ys[1] - ys[0]) >= BODY_SHARE * height, n
            groups = [[a for name, a in s.actors.items() if name != "grid"] + [ring, *g.actors.values()]
                      for s, ring, g in zip(scene.scenes, scene.rings, view.ghosts[0].scenes)]
            boxes = _screen_boxes(plotter, groups)
            labels = [label_box(plotter, label) for label in scene._labels]
            key = window.legend.geometry()
            key_box = (key.left(), key.top(), key.right() + 1, key.bottom() + 1)
            assert np.all(boxes[:, :2] >= 0) and np.all(boxes[:, 2] <= width) and np.all(boxes[:, 3] <= height)
            for k, (a, b) in enumerate(zip(boxes, labels)):
                assert b[3] <= a[1] + 1 and b[0] < a[2] and a[0] < b[2], (n, k)  # above its own body
                assert b[0] >= 0 and b[1] >= 0 and b[2] <= width
                assert _disjoint(a, key_box) and _disjoint(b, key_box)
                assert b[3] - b[1] >= 12  # readable: 12 px and more
            for (a, la), (b, lb) in itertools.combinations(zip(boxes, labels), 2):
                assert _disjoint(a, b) and _disjoint(la, lb) and _disjoint(a, lb) and _disjoint(la, b)
            # each body's colour is its curve's
            image = _grab(window.scene_view)
            assert image.shape[:2] == (height, width)
            colors = [_hex_rgb(line.get_color()) for line in window.curves.picture.lines]
            for k, rgb in enumerate(colors):
                inside = _count(image, boxes[k], rgb)
                assert inside >= LEAST_PIXELS, (n, k, inside)
                for j in range(n):
                    if j != k:
                        assert _count(image, boxes[j], rgb) <= inside / 10, (n, k, j)
    finally:
        window.close()
