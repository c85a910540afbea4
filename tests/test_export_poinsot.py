"""``tumble export --view poinsot``: the Poinsot view rendered off screen from a re-simulated
run, with the window's own scenes; the command line runs with no display."""

from __future__ import annotations

import imageio.v3 as iio
import numpy as np
import pytest

from tumble.export import ExportSettings, plan_export, sequence_paths
from tumble.physics import quaternion as quat
from tumble.scenario import load
from tumble.scene.style import BACKGROUND
from conftest import refused, tumble_headless as tumble

BACKGROUND_RGB = np.array([int(BACKGROUND[k:k + 2], 16) for k in (1, 3, 5)])
#: a pixel counts as drawn when it differs from the background by this much (sum of 0-255 units)
DRAWN_DISTANCE = 40


def test_cli_writes_the_poinsot_view_with_no_display(tmp_path):
    out = tmp_path / "poinsot.png"
    res = tumble("export", "t-handle", "--view", "poinsot", "--out", out, "--duration", "0.5", "--fps", "4",
                 "--start", "2", "--size", "640x360")
    assert res.returncode == 0, res.stderr
    frames = [iio.imread(p) for p in sequence_paths(out, 2)]
    for frame in frames:
        assert frame.shape == (360, 640, 3)
        drawn = np.abs(frame.astype(int) - BACKGROUND_RGB).sum(axis=-1) > DRAWN_DISTANCE
        left, right = drawn[:, :384], drawn[:, 384:]  # the construction, the polhode family
        assert left.mean() > 0.15 and right.mean() > 0.05
    assert np.any(frames[0] != frames[1])  # it rolls


def test_data_formats_are_refused_for_the_view(tmp_path):
    refused(tumble("export", "t-handle", "--view", "poinsot", "--out", tmp_path / "rows.csv"),
            "--out must end in .mp4, .gif or .png with --view poinsot")
    assert not list(tmp_path.iterdir())


def test_frames_draw_the_construction_of_each_sample(tmp_path):
    """In process: the renderer's construction is the timeline's state, and the ellipsoid's
    centre and half-axes project onto drawn pixels."""
    from tumble.export.exporter import FrameComposer
    from tumble.export.timeline import simulate_timeline
    from tumble.views import get_view

    sc = load("t-handle")
    plan = plan_export(sc, ExportSettings(out=tmp_path / "x.mp4", duration=0.5, fps=4, start=3.0,
                                          size=(640, 360), with_plots=True))
    tl = simulate_timeline(sc, plan)
    maker = FrameComposer(get_view("poinsot"), (sc,), plan, [tl])
    try:
        for i in range(plan.n_frames):
            frame = maker.frame(i)
            assert frame.shape == (360, 640, 3)
            k = int(tl.frame_index[i])
            scene = maker.view.scenes["construction"]
            np.testing.assert_allclose(scene.construction.contact_world, quat.rotate(tl.q[k], tl.w[k]), rtol=1e-12)
            I = sc.rigid_body.inertia
            L = quat.rotate(tl.q[k], I @ tl.w[k])
            assert scene.construction.plane_distance == pytest.approx(tl.w[k] @ I @ tl.w[k] / np.linalg.norm(L),
                                                                      rel=1e-12)
            her = scene.herpolhode
            assert len(her) > 100
            np.testing.assert_allclose(her @ scene.construction.plane_normal, scene.construction.plane_distance,
                                       rtol=1e-9)
            renderer = maker.canvas.plotter.renderers[0]
            m = np.array(scene.actors["ellipsoid"].user_matrix)[:3, :3]
            for p in [np.zeros(3)] + [0.5 * s * m[:, j] for j in range(3) for s in (1, -1)]:
                renderer.SetWorldPoint(*p, 1.0)
                renderer.WorldToDisplay()
                x, y, _ = renderer.GetDisplayPoint()
                pixel = frame[360 - 1 - round(y), round(x)].astype(int)
                assert np.abs(pixel - BACKGROUND_RGB).sum() > DRAWN_DISTANCE, (p, pixel)
    finally:
        maker.close()
