"""Every registered view's window (its ViewSpec.window): it opens and takes a screenshot, and what it draws is what the export draws for the same run at the same time."""

from __future__ import annotations

import imageio.v3 as iio
import numpy as np
import pytest
from conftest import WAIT_MS

from tumble.views import get_view, view_names

#: the window's pose and the export's pose of the same run at the same time: the same
#: function of the same recorded rows, so they agree to round-off
POSE_TOLERANCE = 1e-12
#: the window is stepped (paused) until its runs pass this simulated time (s)
STEP_TO_S = 1.5
#: a pixel of the scene differs from the background by more than this (0-255, any channel)
PIXEL_CONTRAST = 40


def _scene_pixels(window, path):
    """The scene's area of a screenshot of the whole window (as File > Save screenshot
    writes it, without waiting for a stability map), (h, w, 3) uint8."""
    from tumble.gui.windows.window_parts import save_window_png

    save_window_png(window, path)
    image = iio.imread(path)[..., :3]
    view = window.scene_view
    top_left = view.mapTo(window, view.rect().topLeft())
    ratio = image.shape[1] / window.width()
    x0, y0 = round(top_left.x() * ratio), round(top_left.y() * ratio)
    return image[y0:y0 + round(view.height() * ratio), x0:x0 + round(view.width() * ratio)]


@pytest.mark.parametrize("name", view_names())
def test_the_view_s_window_opens_and_draws_its_scene(open_view, tmp_path, name):
    window = open_view("t-handle", view=name, paused=True)
    assert type(window).__name__ == get_view(name).window.rpartition(":")[2]
    scene = _scene_pixels(window, tmp_path / "shot.png")
    assert scene.shape[0] > 100 and scene.shape[1] > 100
    # the background is the most common colour of the scene's border rows; the body and its
    # arrows differ from it (not a blank or black picture)
    border = np.concatenate([scene[2], scene[-3]])
    colours, counts = np.unique(border, axis=0, return_counts=True)
    background = colours[np.argmax(counts)].astype(int)
    drawn = np.abs(scene.astype(int) - background).max(axis=2) > PIXEL_CONTRAST
    assert drawn.mean() > 0.005, f"{drawn.mean():.4f} of the scene's pixels drawn"


def _step_window(window, qtbot, t_end: float) -> None:
    """Step the paused window's runs (the shell's Step: every worker alike) past ``t_end``."""
    while min(w.latest().t for w in window.workers) < t_end:
        serials = [w.latest().serial for w in window.workers]
        window.step()
        qtbot.waitUntil(lambda: all(w.latest().serial != s for w, s in zip(window.workers, serials)),
                        timeout=WAIT_MS)


@pytest.mark.parametrize("name", view_names())
def test_the_window_draws_what_the_export_draws(open_view, qtbot, tmp_path, name, pose_numbers):
    """The window stepped while paused, then drawn; the same run re-simulated by the export
    (a Timeline) and posed on its off-screen canvas at the window's drawn time: every exported
    actor's matrix and every trail's end point equal the window's (the ghost's too where the
    window shows it)."""
    from tumble.export import ExportSettings, Overlay, plan_export
    from tumble.export.exporter import FrameComposer
    from tumble.export.timeline import simulate_timeline

    window = open_view("t-handle", view=name, paused=True)
    ghost = getattr(window, "ghost", None)
    if ghost is not None:
        ghost.set_checked(True)
    _step_window(window, qtbot, STEP_TO_S)
    latest = tuple(w.latest().serial for w in window.workers)
    qtbot.waitUntil(lambda: window.drawn_serials == latest, timeout=WAIT_MS)
    t_live = window.drawn_time
    assert t_live == min(w.latest().t for w in window.workers) >= STEP_TO_S
    qtbot.waitUntil(lambda: set(window.posed_times.values()) == {t_live}, timeout=WAIT_MS)  # the slower panes too
    live = pose_numbers(window.view)
    ghost_on = window.view.ghost_visible
    assert ghost_on == (ghost is not None)

    spec = window.spec
    runs = tuple(w.latest().scenario for w in window.workers)
    # the worker's time is a sum of steps: the export starts there without its round-off
    plan = plan_export(runs[0], ExportSettings(out=tmp_path / "x.png", fps=10, duration=0.1, start=round(t_live, 9),
                                               size=(320, 240), overlay=Overlay(ghost=ghost_on)))
    timelines = [simulate_timeline(sc, plan) for sc in runs]
    composer = FrameComposer(spec, runs, plan, timelines)
    try:
        assert float(timelines[0].t[timelines[0].frame_index[0]]) == pytest.approx(t_live, abs=1e-12)
        composer.frame(0)
        exported = pose_numbers(composer.view)
    finally:
        composer.close()
    shown = {p.name for p in spec.panes if p.exported} | ({f"ghost{k}" for k in range(9)} if ghost_on else set())
    live = {k: v for k, v in live.items() if k.split("/")[0] in shown or k == "track"}
    exported = {k: v for k, v in exported.items() if k.split("/")[0] in shown or k == "track"}
    assert set(exported) == set(live) and len(live) > 10
    for key, value in live.items():
        np.testing.assert_allclose(exported[key], value, rtol=POSE_TOLERANCE, atol=POSE_TOLERANCE, err_msg=key)
