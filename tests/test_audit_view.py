"""The engines view: the export draws each engine's body in its colour with the curves beside
them (the window's own test: tests/gui/test_audit_window.py)."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import tumble_headless

#: every test here runs the other physics engines (`-m 'not engines'` leaves them out)
pytestmark = pytest.mark.engines

#: a pixel of a label counts as that colour within this distance (0-255, each channel)
COLOR_SLACK = 25


def _has_color(image: np.ndarray, hex_color: str, least: int = 20) -> bool:
    rgb = np.array([int(hex_color[i:i + 2], 16) for i in (1, 3, 5)])
    return int(np.sum(np.all(np.abs(image.astype(int) - rgb) <= COLOR_SLACK, axis=-1))) >= least


def test_export_draws_every_setting_in_its_colour_and_the_curves(tmp_path):
    import imageio.v3 as iio

    from tumble.scene.engines import ENGINE_COLORS

    out = tmp_path / "clip.png"
    res = tumble_headless("export", "t-handle", "--view", "engines", "--engines", "dart,mujoco:rk4,tumble:splitting",
                          "--start", "30", "--duration", "0.2", "--fps", "10", "--size", "640x360", "--out", out,
                          timeout=300)
    assert res.returncode == 0, res.stderr
    frames = sorted(tmp_path.glob("clip_*.png"))
    assert len(frames) == 2
    image = iio.imread(frames[-1])[..., :3]
    scene, curves = image[:, : int(0.62 * 640) - 4], image[:, int(0.62 * 640) + 4:]
    for color in ENGINE_COLORS[:3]:
        assert _has_color(scene, color), color  # each label
        assert _has_color(curves, color), color  # each setting's curves
    assert _has_color(curves, "#f5e663", least=50)  # the time cursor


def test_export_refuses_a_fifth_setting_and_a_scenario_with_loads(tmp_path):
    res = tumble_headless("export", "t-handle", "--view", "engines", "--engines",
                          "dart,mujoco,mujoco:rk4,drake,pybullet", "--out", tmp_path / "x.mp4")
    assert res.returncode == 2 and "at most 4" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    res = tumble_headless("export", "rocket-top", "--view", "engines", "--out", tmp_path / "x.mp4")
    assert res.returncode == 2 and "loads must" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_gui_refuses_engines_with_another_view_in_one_line():
    from conftest import tumble

    res = tumble("gui", "t-handle", "--view", "compare", "--engines", "dart")
    assert res.returncode == 2 and "--engines must go with --view engines" in res.stderr
