"""The main window in a real Qt + VTK window under Xvfb (pytest-qt)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import WAIT_MS
from PyQt5.QtCore import Qt

from tumble.physics.analysis import predicted_flip_period
from tumble.scenario import load



def latest(window):
    return window.worker.latest()


def test_opens_on_the_default_preset_and_the_body_moves(open_window, qtbot):
    window = open_window()  # no scenario and no saved settings: the default preset
    assert window.panel.preset.currentText() == "t-handle"
    assert latest(window).scenario.name == "T-handle"
    assert window.worker.is_alive()
    body = window.scene.actors["body"]
    first_pose = np.array(body.user_matrix)
    q0 = latest(window).state.q
    qtbot.waitUntil(lambda: latest(window).t > 0.5, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: not np.allclose(np.array(body.user_matrix), first_pose), timeout=WAIT_MS)
    assert not np.allclose(latest(window).state.q, q0)
    frames = window.frames_drawn
    qtbot.waitUntil(lambda: window.frames_drawn > frames + 5, timeout=WAIT_MS)


def test_boxes_complex_flips_within_the_predicted_period(open_window, qtbot):
    sc = load("boxes-complex")
    period = predicted_flip_period(sc.rigid_body, sc.angular_velocity)
    assert period is not None and 2.0 < period < 4.0
    window = open_window("boxes-complex", speed=10.0)
    run_id = latest(window).run_id
    qtbot.waitUntil(lambda: latest(window).flips >= 1, timeout=WAIT_MS)
    snap = latest(window)
    assert snap.run_id == run_id  # the flip belongs to the run the window opened with
    assert 0.0 < snap.flip_times[0] <= period
    assert snap.predicted_flip_period == pytest.approx(period)
    qtbot.waitUntil(lambda: "flips" in window.status_labels["flips"].text()
                    and window.status_labels["flips"].text() != "flips 0", timeout=WAIT_MS)
    assert f"{period:.3f}" in window.status_labels["period"].text()


def test_space_pauses_and_plays_step_reset_and_kick(open_window, qtbot):
    window = open_window("boxes-simple")
    qtbot.waitUntil(lambda: latest(window).t > 0.3, timeout=WAIT_MS)
    qtbot.keyClick(window, Qt.Key_Space)
    qtbot.waitUntil(lambda: not latest(window).running, timeout=WAIT_MS)
    t_paused = latest(window).t
    qtbot.wait(300)
    assert latest(window).t == t_paused
    qtbot.waitUntil(lambda: window.play_action.text() == "Play", timeout=WAIT_MS)

    window.step_action.trigger()
    qtbot.waitUntil(lambda: latest(window).t > t_paused, timeout=WAIT_MS)
    assert not latest(window).running

    w_before = latest(window).state.w.copy()
    qtbot.keyClick(window, Qt.Key_K)
    qtbot.waitUntil(lambda: len(latest(window).kick_times) == 1, timeout=WAIT_MS)
    assert not np.allclose(latest(window).state.w, w_before)

    run_id = latest(window).run_id
    qtbot.keyClick(window, Qt.Key_R)
    qtbot.waitUntil(lambda: latest(window).run_id != run_id, timeout=WAIT_MS)
    assert latest(window).t == 0.0 and latest(window).kick_times == ()

    qtbot.keyClick(window, Qt.Key_Space)
    qtbot.waitUntil(lambda: latest(window).running and latest(window).t > 0.2, timeout=WAIT_MS)


@pytest.mark.parametrize("field, text, message", [
    ("mass", "-1", "body.mass must be a finite number > 0"),
    ("mass", "heavy", "must be a number"),
    ("dt", "0", "solver.dt must be a finite number > 0"),
    ("mass", "1e200", "body.mass must be at most 1e+100 in magnitude"),
])
def test_an_invalid_edit_is_refused_inline_and_the_run_goes_on(open_window, qtbot, field, text, message):
    window = open_window("t-handle")
    before = latest(window).scenario
    widget = getattr(window.panel, field)
    widget.setFocus()
    widget.selectAll()
    qtbot.keyClicks(widget, text)
    qtbot.keyClick(widget, Qt.Key_Return)
    assert message in window.panel.error.text()
    assert widget.property("invalid") is True
    t = latest(window).t
    qtbot.waitUntil(lambda: latest(window).t > t + 0.2, timeout=WAIT_MS)
    assert latest(window).scenario is before
    window.panel.revert()
    assert window.panel.error.text() == ""


def test_a_valid_edit_restarts_with_the_new_parameters(open_window, qtbot):
    window = open_window("boxes-simple")
    for f, v in zip(window.panel.omega, ("0.2", "3", "0.1")):
        f.setText(v)
    window.panel.spin_axis.setCurrentIndex(1)
    assert window.panel.apply()
    qtbot.waitUntil(lambda: latest(window).scenario.angular_velocity == (0.2, 3.0, 0.1), timeout=WAIT_MS)
    assert latest(window).scenario.name.endswith("(edited)")
    assert window.panel.preset.currentText() == "Boxes simple (edited)"


def test_switching_preset_rebuilds_the_mesh(open_window, qtbot):
    window = open_window("t-handle")
    old_actor = window.scene.actors["body"]
    old_points = old_actor.mapper.dataset.n_points
    combo = window.panel.preset
    index = combo.findText("boxes-complex")
    combo.setCurrentIndex(index)
    combo.activated.emit(index)
    qtbot.waitUntil(lambda: latest(window).scenario.name == "Boxes complex", timeout=WAIT_MS)
    qtbot.waitUntil(lambda: window.scene.actors["body"] is not old_actor, timeout=WAIT_MS)
    new_mesh = window.scene.actors["body"].mapper.dataset
    assert new_mesh.n_points != old_points
    assert np.allclose(np.ptp(new_mesh.points, axis=0), (0.1, 0.4, 0.9))
    assert window.panel.shape.currentText() == "box"


def test_plots_receive_data_and_drifts_are_finite(open_window, qtbot, plots_drawn):
    window = open_window("boxes-complex", speed=5.0)
    qtbot.waitUntil(lambda: latest(window).t > 3.0, timeout=WAIT_MS)
    plots_drawn(window.plots)
    for curve in window.plots.curves:
        x, y = curve.getData()
        assert x is not None and len(x) > 50
        assert np.all(np.isfinite(y))
    _, e = window.plots.E_curve.getData()
    assert np.max(np.abs(e)) < 1e-6
    window.log_drift.setChecked(True)
    plots_drawn(window.plots)
    _, loge = window.plots.E_curve.getData()
    assert np.all(np.isfinite(loge)) and np.max(loge) < -6
    window.window_combo.setCurrentText("all")
    plots_drawn(window.plots)
    x, _ = window.plots.L_curves[0].getData()
    assert x[0] == pytest.approx(0.0, abs=0.02)


def test_a_worker_failure_is_shown_and_the_window_lives(open_window, qtbot, monkeypatch):
    import tumble.physics.integrators as integrators
    from tumble.physics.errors import DivergenceError

    window = open_window("t-handle")

    def diverge(*args, **kwargs):
        raise DivergenceError(1.5, 1500, "non-finite state")

    monkeypatch.setattr(integrators, "simulate", diverge)
    with qtbot.waitSignal(window.simulation_failed, timeout=WAIT_MS) as blocker:
        pass
    assert "diverged" in blocker.args[0]
    assert "Simulation stopped" in window.error_label.text()
    monkeypatch.undo()
    qtbot.keyClick(window, Qt.Key_R)
    qtbot.keyClick(window, Qt.Key_Space)
    qtbot.waitUntil(lambda: latest(window).running and latest(window).t > 0.2, timeout=WAIT_MS)
    assert window.error_label.text() == ""


def test_closing_stops_the_worker_and_saves_the_last_scenario(open_window, qtbot):
    from tumble.gui.launch import resolve_scenario

    window = open_window("boxes-simple", persist=True)
    worker = window.worker
    window.close()
    assert not worker.is_alive()
    assert not window.frame_timer.isActive()
    sc, preset = resolve_scenario(None)
    # an unedited preset comes back under its name, so the picker does not say "(edited)"
    assert sc.name == "Boxes simple" and preset == "boxes-simple"


def test_a_mesh_preset_draws_its_own_surface(open_window, qtbot):
    window = open_window("t-handle")
    window.load_preset("tennis-racket")
    qtbot.waitUntil(lambda: latest(window).scenario.body.shape == "mesh", timeout=WAIT_MS)
    qtbot.waitUntil(lambda: window.scene.body is latest(window).scenario.rigid_body, timeout=WAIT_MS)
    body = latest(window).scenario.rigid_body
    drawn = window.scene.actors["body"].mapper.dataset
    assert drawn.n_cells == len(body.mesh_faces)
    assert window.panel.shape.currentText() == "mesh" and "tennis-racket.stl" in window.panel.mesh_label.text()
    assert window.panel.apply()  # the unchanged panel builds a runnable mesh scenario


def test_a_spin_past_the_divergence_limit_is_refused_inline(open_window, qtbot):
    window = open_window("t-handle")
    before = latest(window).scenario
    window.panel.omega[0].setText("2e6")
    assert not window.panel.apply()
    assert "initial.angular_velocity must have a magnitude <= 1e+06 rad/s" in window.panel.error.text()
    assert latest(window).scenario is before


def test_revert_brings_back_the_values_and_the_preset_name(open_window):
    window = open_window("boxes-complex", paused=True)
    window.panel.mass.setText("3")
    window.panel.mass.textEdited.emit("3")
    assert window.panel.preset.currentText() == "Boxes complex (edited)"
    window.panel.revert()
    assert window.panel.mass.text() == "10"
    assert window.panel.preset.currentText() == "boxes-complex"


def test_a_symmetric_body_has_no_intermediate_axis_marked(open_window):
    window = open_window("symmetric-top", paused=True)
    text = window.panel.moments.text()
    assert "intermediate" not in text.replace("no intermediate axis", "")
    assert "symmetric" in text
    window.load_preset("t-handle")
    assert "<b>intermediate</b>" in window.panel.moments.text()


def test_the_key_says_when_l_is_not_fixed_in_space(open_window, qtbot):
    window = open_window("t-handle", paused=True)
    qtbot.waitUntil(lambda: "fixed in space" in window.legend.text(), timeout=WAIT_MS)
    window.load_preset("rocket-top")  # two thrusters: a torque turns L
    qtbot.waitUntil(lambda: "turned by the applied loads" in window.legend.text(), timeout=WAIT_MS)
    assert "fixed in space" not in window.legend.text()
