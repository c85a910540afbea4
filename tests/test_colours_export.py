"""``tumble export --colours projector``: the frames are drawn in the projector scheme (a light scene
and light plots, no dark background left); glTF's page in it too."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import tumble

from tumble.scene import palette
from tumble.scene.palette import DARK, PROJECTOR

pytestmark = pytest.mark.slow


def _share(pixels, hex_colour) -> float:
    rgb = [round(255 * c) for c in palette.rgb01(hex_colour)]
    return float(np.mean(np.all(pixels.reshape(-1, 3) == rgb, axis=1)))


@pytest.fixture(scope="module")
def projector_frame(tmp_path_factory):
    import imageio.v3 as iio

    folder = tmp_path_factory.mktemp("colours")
    res = tumble("export", "t-handle", "--out", folder / "f.png", "--duration", "0.2", "--fps", "5",
                 "--with-plots", "--colours", "projector")
    assert res.returncode == 0, res.stderr
    return iio.imread(folder / "f_0000.png")[..., :3]


def test_an_export_with_projector_colours_has_a_light_scene_and_plots(projector_frame):
    height, width = projector_frame.shape[:2]
    scene = projector_frame[:, : int(0.55 * width)]
    plots = projector_frame[:, int(0.75 * width):]
    assert _share(scene, PROJECTOR.background) > 0.5
    assert _share(plots, PROJECTOR.background) > 0.3
    assert _share(projector_frame, DARK.background) == 0.0
    # the key's text and the clock: dark on light
    text = [round(255 * c) for c in palette.rgb01(PROJECTOR.text)]
    assert np.any(np.all(np.abs(projector_frame.astype(int) - text) <= 8, axis=2))


def test_the_gltf_page_draws_in_projector_colours(tmp_path):
    res = tumble("export", "t-handle", "--out", tmp_path / "t.html", "--duration", "0.5", "--colours", "projector")
    assert res.returncode == 0, res.stderr
    page = (tmp_path / "t.html").read_text(encoding="utf-8")
    assert f"background: {PROJECTOR.background}" in page and DARK.background not in page


@pytest.mark.engines
def test_an_engines_export_with_projector_colours_has_light_curves_and_rings(tmp_path):
    """The engines view's curves pane (a matplotlib figure) and each body's ring follow the scheme:
    no dark background left anywhere, and each setting's ring shows in its projector colour."""
    import imageio.v3 as iio

    from tumble.scene.engines import ENGINE_COLORS

    res = tumble("export", "t-handle", "--view", "engines", "--engines", "tumble:rk4,tumble:euler",
                 "--out", tmp_path / "e.png", "--duration", "0.2", "--fps", "5", "--colours", "projector")
    assert res.returncode == 0, res.stderr
    frame = iio.imread(tmp_path / "e_0000.png")[..., :3]
    width = frame.shape[1]
    curves = frame[:, int(0.7 * width):]
    assert _share(curves, PROJECTOR.background) > 0.3
    assert _share(frame, DARK.background) < 1e-4  # no dark pane (an anti-aliased glyph's pixel may match)
    for dark in ENGINE_COLORS[:2]:
        assert _share(frame, palette.translate(dark, DARK, PROJECTOR)) > 1e-3, dark
        assert _share(frame, dark) == 0.0, dark
