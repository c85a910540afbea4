"""The compare view in a real Qt + VTK window under Xvfb (pytest-qt), and its entry point."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import WAIT_MS, tumble
from PyQt5.QtCore import Qt
from PyQt5.QtGui import QColor, QImage

from tumble.scene.compare import SIDE_COLORS
from tumble.scene.style import BACKGROUND, GRID_COLOR

#: a pixel counts as drawn when it differs from the background/grid by this much (0-255 units)
DRAWN_DISTANCE = 40


@pytest.fixture
def open_compare(qtbot):
    """Factory: a shown CompareWindow whose first frame has been drawn (closed by qtbot)."""
    from tumble.gui.windows.compare_window import CompareWindow
    from tumble.gui.launch import resolve_scenario

    def make(scenario="boxes-complex", *, speed=None, paused=False, integrators=(None, None), dts=(None, None)):
        sc, preset = resolve_scenario(scenario)
        window = CompareWindow(sc, preset=preset, paused=paused, persist=False, integrators=integrators, dts=dts)
        qtbot.addWidget(window)
        if speed is not None:
            window.set_speed(speed)
        with qtbot.waitSignal(window.first_frame_drawn, timeout=WAIT_MS):
            window.show()
        window.activateWindow()
        qtbot.waitUntil(window.isActiveWindow, timeout=WAIT_MS)
        return window

    return make


def rotation(actor) -> np.ndarray:
    return np.array(actor.user_matrix)[:3, :3]


def snaps(window):
    return [w.latest() for w in window.workers]


def degrees_between(r1, r2) -> float:
    """The angle (degrees) of the turn from one rotation matrix to the other."""
    return float(np.degrees(np.arccos(np.clip((np.trace(r1.T @ r2) - 1) / 2, -1, 1))))


def test_two_labelled_bodies_whose_poses_part_over_time(open_compare, qtbot, wait_frames):
    # opened paused: at 10x the two sides part within a fraction of a second
    window = open_compare("t-handle", speed=10.0, paused=True, integrators=("euler", "splitting"), dts=(0.01, 0.01))
    a, b = (s.actors["body"] for s in window.scene.scenes)
    assert window.scene.labels == ("A: euler\ndt 10 ms", "B: splitting\ndt 10 ms")
    assert [s.scenario.solver.integrator for s in snaps(window)] == ["euler", "splitting"]
    start = rotation(a).copy()
    # side by side: the same start, at two offsets along the screen's horizontal
    assert np.allclose(rotation(a), rotation(b))
    offset = window.scene.offsets[1] - window.scene.offsets[0]
    assert np.linalg.norm(offset) > 3 * window.scene.radius
    window.toggle_play()
    qtbot.waitUntil(lambda: min(s.t for s in snaps(window)) > 8.0, timeout=WAIT_MS)
    window.toggle_play()  # paused where each side got to: their poses are compared with their runs
    # a paused window draws nothing new: wait until it has posed the bodies at the last snapshots
    qtbot.waitUntil(lambda: not any(s.running for s in snaps(window))
                    and window.drawn_serials == tuple(s.serial for s in snaps(window)), timeout=WAIT_MS)
    assert not np.allclose(rotation(a), start)
    # both sides are drawn at one simulated time (the earlier of the two sides' latest), each in
    # its own integrator's pose then: the angle between the two bodies drawn is the angle between
    # the two integrators' offline runs at that time (the mesh's own turn is the same on both
    # sides and leaves that angle as it is). Euler's energy grows by a fifth in 10 s at this step:
    # the two poses are 100-180 degrees apart at 8-10 s (they pass close again near 14 s, so the
    # angle is compared with the runs', not with a fixed floor).
    import tumble
    from tumble.physics import quaternion as quat

    t = window.drawn_time
    assert t > 8.0
    runs = [tumble.simulate("t-handle", integrator=name, dt=0.01, duration=t + 0.5) for name in ("euler", "splitting")]
    at = [quat.to_matrix(run.q[np.argmin(abs(run.t - t))]) for run in runs]
    assert all(abs(run.t[np.argmin(abs(run.t - t))] - t) < 1e-9 for run in runs)  # a step time of both
    assert degrees_between(rotation(a), rotation(b)) == pytest.approx(degrees_between(*at), abs=0.05)
    centres = [np.array(s.actors["body"].user_matrix)[:3, 3] for s in window.scene.scenes]
    assert np.allclose(centres[1] - centres[0], offset, atol=1e-6)


def test_drift_plots_get_both_sides_and_euler_drifts_more(open_compare, qtbot, plots_drawn):
    window = open_compare("boxes-complex", speed=5.0, integrators=("euler", "splitting"), dts=(0.01, 0.01))
    qtbot.waitUntil(lambda: min(s.t for s in snaps(window)) > 3.0, timeout=WAIT_MS)
    plots_drawn(window.plots)
    for curve in window.plots.curves:
        x, y = curve.getData()
        assert x is not None and len(x) > 50 and np.all(np.isfinite(y))
    a, b = snaps(window)
    assert abs(a.E_drift) > 1e-2 and abs(a.L_norm_drift) > 1e-2
    assert abs(a.E_drift) > 1e4 * abs(b.E_drift)
    assert abs(b.L_norm_drift) < 1e-12  # splitting: |L| to round-off
    # log mode (the default here) plots log10 of the magnitudes
    assert window.log_drift.isChecked()
    _, ea = window.plots.E_curves[0].getData()
    _, lb = window.plots.L_curves[1].getData()
    assert ea[-1] > -2.5 and np.max(lb) < -12
    window.log_drift.setChecked(False)
    plots_drawn(window.plots)
    _, ea = window.plots.E_curves[0].getData()
    assert abs(ea[-1]) > 1e-2
    assert "ΔE/E₀" in window.summary.text()


def test_choosers_restart_both_sides_and_refuse_a_bad_step(open_compare, qtbot):
    window = open_compare("t-handle")
    qtbot.waitUntil(lambda: min(s.t for s in snaps(window)) > 0.3, timeout=WAIT_MS)
    runs = [s.run_id for s in snaps(window)]
    combo = window.integrator_combos[1]
    combo.setCurrentText("rk4")
    combo.activated.emit(combo.currentIndex())
    qtbot.waitUntil(lambda: snaps(window)[1].scenario.solver.integrator == "rk4", timeout=WAIT_MS)
    # both restarted (A with its own, unchanged, parameters), so they start together
    qtbot.waitUntil(lambda: all(s.run_id != r for s, r in zip(snaps(window), runs)), timeout=WAIT_MS)
    assert snaps(window)[0].scenario.solver.integrator == "semi-implicit-euler"
    qtbot.waitUntil(lambda: window.scene.labels[1] == "B: rk4\ndt 10 ms", timeout=WAIT_MS)
    before = [s.scenario for s in snaps(window)]
    field = window.dt_fields[0]
    field.setFocus()
    field.selectAll()
    qtbot.keyClicks(field, "0")
    qtbot.keyClick(field, Qt.Key_Return)
    assert "A.dt must be a finite number > 0" in window.choice_error.text()
    assert field.property("invalid") is True
    t = min(s.t for s in snaps(window))
    qtbot.waitUntil(lambda: min(s.t for s in snaps(window)) > t + 0.2, timeout=WAIT_MS)
    assert [s.scenario for s in snaps(window)] == before
    field.setText("0.004")
    assert window.apply_choices()
    qtbot.waitUntil(lambda: snaps(window)[0].scenario.solver.dt == 0.004, timeout=WAIT_MS)
    assert window.choice_error.text() == "" and field.property("invalid") is False


def test_play_pause_step_and_reset_drive_both(open_compare, qtbot):
    window = open_compare("boxes-simple")
    qtbot.waitUntil(lambda: min(s.t for s in snaps(window)) > 0.3, timeout=WAIT_MS)
    qtbot.keyClick(window, Qt.Key_Space)
    qtbot.waitUntil(lambda: not any(s.running for s in snaps(window)), timeout=WAIT_MS)
    times = [s.t for s in snaps(window)]
    qtbot.wait(300)
    assert [s.t for s in snaps(window)] == times
    window.step_action.trigger()
    qtbot.waitUntil(lambda: all(s.t > t for s, t in zip(snaps(window), times)), timeout=WAIT_MS)
    qtbot.keyClick(window, Qt.Key_R)
    qtbot.waitUntil(lambda: all(s.t == 0.0 for s in snaps(window)), timeout=WAIT_MS)
    qtbot.keyClick(window, Qt.Key_Space)
    qtbot.waitUntil(lambda: all(s.running and s.t > 0.2 for s in snaps(window)), timeout=WAIT_MS)
    # both drawn at one simulated time, whichever worker is ahead
    assert window.drawn_time <= min(s.t for s in snaps(window)) + 1e-12


def test_switching_scenario_keeps_the_chosen_integrators(open_compare, qtbot):
    window = open_compare("t-handle", integrators=("rk4", "splitting4"))
    old = window.scene.scenes[0].actors["body"]
    window.load_preset("boxes-complex")
    qtbot.waitUntil(lambda: all(s.scenario.name == "Boxes complex" for s in snaps(window)), timeout=WAIT_MS)
    assert [s.scenario.solver.integrator for s in snaps(window)] == ["rk4", "splitting4"]
    qtbot.waitUntil(lambda: window.scene.scenes[0].actors["body"] is not old, timeout=WAIT_MS)
    assert window.preset_combo.currentText() == "boxes-complex"


def test_closing_stops_both_workers(open_compare):
    window = open_compare("t-handle")
    workers = window.workers
    window.close()
    assert not any(w.is_alive() for w in workers)
    assert not window.frame_timer.isActive()


# ------------------------------------------------------------------ the real entry point


def test_gui_screenshot_of_the_compare_view(open_compare, tmp_path):
    window = open_compare("boxes-complex", paused=True)
    origin = window.scene_view.mapTo(window, window.scene_view.rect().topLeft())
    rect = window.scene_view.rect().translated(origin)
    size = (window.width(), window.height())
    window.close()
    out = tmp_path / "compare.png"
    res = tumble("gui", "boxes-complex", "--view", "compare", "--paused", "--screenshot", out, "--quit-after", "1",
                 timeout=120)
    assert res.returncode == 0, res.stderr
    image = QImage(str(out))
    assert (image.width(), image.height()) == size
    pixels = np.array([[QColor(image.pixel(x, y)).getRgb()[:3] for x in range(rect.left(), rect.right(), 3)]
                       for y in range(rect.top(), rect.bottom(), 3)])
    background = np.array(QColor(BACKGROUND).getRgb()[:3])
    grid = np.array(QColor(GRID_COLOR).getRgb()[:3])
    drawn = (np.abs(pixels - background).sum(-1) > DRAWN_DISTANCE) & (np.abs(pixels - grid).sum(-1) > DRAWN_DISTANCE)
    half = pixels.shape[1] // 2
    # a body in each half of the scene, and each side's label in its own colour
    assert drawn[:, :half].mean() > 0.01 and drawn[:, half:].mean() > 0.01
    for k, colour in enumerate(SIDE_COLORS):
        rgb = np.array(QColor(colour).getRgb()[:3])
        close = np.abs(pixels - rgb).sum(-1) < 60
        side = close[:, :half] if k == 0 else close[:, half:]
        assert side.sum() > 20, f"no label of side {'AB'[k]} in its half of the scene"
