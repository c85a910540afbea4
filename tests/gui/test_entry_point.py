"""The real entry point in a subprocess: ``tumble gui --screenshot`` writes a PNG that shows
the body; a bad scenario fails with one line before any window opens."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import refused, tumble
from PyQt5.QtGui import QColor, QImage

from tumble.scene.style import BACKGROUND, GRID_COLOR

#: a pixel counts as drawn when it differs from the background/grid by this much (0-255 units)
DRAWN_DISTANCE = 40



def scene_rect_in_window(open_window):
    """Where the 3D scene sits in a fresh window (same default layout as the subprocess's)."""
    window = open_window("boxes-complex", paused=True)
    origin = window.scene_view.mapTo(window, window.scene_view.rect().topLeft())
    rect = window.scene_view.rect().translated(origin)
    size = (window.width(), window.height())
    window.close()
    return rect, size


def test_gui_screenshot_shows_the_body(open_window, tmp_path):
    rect, size = scene_rect_in_window(open_window)
    out = tmp_path / "shot.png"
    res = tumble("gui", "boxes-complex", "--paused", "--screenshot", str(out), "--quit-after", "1")
    assert res.returncode == 0, res.stderr
    assert out.is_file()
    assert not list(tmp_path.glob(".shot.png.*")), "the temporary file of the atomic write was left behind"
    image = QImage(str(out))
    assert (image.width(), image.height()) == size
    cx, cy = rect.center().x(), rect.center().y()
    background = np.array(QColor(BACKGROUND).getRgb()[:3])
    grid = np.array(QColor(GRID_COLOR).getRgb()[:3])
    patch = np.array([QColor(image.pixel(cx + dx, cy + dy)).getRgb()[:3]
                      for dx in range(-6, 7, 3) for dy in range(-6, 7, 3)])
    far = (np.abs(patch - background).sum(axis=1) > DRAWN_DISTANCE) & (np.abs(patch - grid).sum(axis=1) > DRAWN_DISTANCE)
    assert far.all(), f"the scene centre shows background, not the body: {patch.tolist()}"
    # a corner of the scene is background: the check above is not fooled by a blank grab
    corner = np.array(QColor(image.pixel(rect.right() - 3, rect.bottom() - 3)).getRgb()[:3])
    assert np.abs(corner - background).sum() < DRAWN_DISTANCE


@pytest.mark.parametrize("args, message", [
    (["gui", "no-such-preset"], "scenario must be a preset name"),
    (["gui", "t-handle", "--view", "nope"], "--view must be one of main"),
])
def test_bad_arguments_fail_with_one_line_before_a_window(args, message):
    refused(tumble(*args, timeout=60), message)
