"""The damper and rotor in the window: the panel's fields, the threshold and the h slider, the
status field, in a real window under Xvfb (pytest-qt)."""

from __future__ import annotations

import math
import re

import numpy as np
from conftest import WAIT_MS
from tumble.gui.panels.gyro_editor import SLIDER_STEPS
from tumble.physics import gyrostat
from tumble.physics.diagnostics import rotational_energy



def latest(window):
    return window.worker.latest()


def _status_number(window, label):
    """The number after ``label`` in the parts status field."""
    match = re.search(re.escape(label) + r"\s*([-0-9.]+)", window.parts_status.text())
    return float(match.group(1)) if match else math.nan


def test_the_gyrostat_shows_its_threshold_and_the_slider_lets_it_wander(open_window, qtbot):
    window = open_window("gyrostat", speed=4)
    gyro = window.panel.gyro
    sc = latest(window).scenario
    critical = gyrostat.rotor_threshold(sc.rigid_body, sc.angular_velocity)
    assert gyro.rotor_on.isChecked() and not gyro.damper_on.isChecked()
    assert f"{critical:.4g}" in gyro.threshold.text() and "stable" in gyro.threshold.text()
    assert gyro.slider.isVisible() and not gyro.damper_inertia.isVisible()
    qtbot.waitUntil(lambda: window.parts_status.isVisible() and "ω∠rotor" in window.parts_status.text(),
                    timeout=WAIT_MS)
    # above the threshold the spin keeps near the rotor axis for a whole run
    qtbot.waitUntil(lambda: latest(window).t > 8.0, timeout=WAIT_MS)
    assert _status_number(window, "ω∠rotor") < 10.0
    # a step of the slider (keyboard: no release) to half the threshold restarts the run with it
    run = latest(window).run_id
    gyro.slider.setFocus()
    gyro.slider.setValue(SLIDER_STEPS // 4)  # the slider spans 0 .. 2 h_crit
    qtbot.waitUntil(lambda: latest(window).run_id != run, timeout=WAIT_MS)
    h = latest(window).scenario.rigid_body.rotor.momentum
    assert h == gyro.rotor_momentum.value() and abs(h / critical - 0.5) < 0.01  # the field holds h exactly
    assert "unstable" in gyro.threshold.text()
    qtbot.waitUntil(lambda: _status_number(window, "ω∠rotor") > 15.0, timeout=WAIT_MS)


def test_explorer_1_shows_the_nutation_growing_and_the_energy_falling(open_window, qtbot):
    window = open_window("explorer-1", speed=10)
    gyro = window.panel.gyro
    assert gyro.damper_on.isChecked() and not gyro.rotor_on.isChecked()
    assert (gyro.damper_inertia.text(), gyro.damper_coefficient.text()) == ("0.015", "0.01")
    sc = latest(window).scenario
    final = gyrostat.final_energy(sc.rigid_body, sc.angular_velocity)
    qtbot.waitUntil(lambda: f"→ {final:.4g} J" in window.parts_status.text(), timeout=WAIT_MS)
    assert _status_number(window, "L∠minor") < 10.0
    # within a minute of simulated time the long axis turns broadside to L
    qtbot.waitUntil(lambda: _status_number(window, "L∠minor") > 80.0, timeout=60000)
    assert latest(window).t < 60.0 + 5.0
    start = float(rotational_energy(sc.rigid_body, sc.initial_state.w, sc.initial_state.s))
    assert final < _status_number(window, "E_rot") < 0.2 * start


def test_switching_a_damper_on_and_off_in_the_panel(open_window, qtbot):
    window = open_window("boxes-simple")
    panel, gyro = window.panel, window.panel.gyro
    assert not window.parts_status.isVisible()
    gyro.damper_on.setChecked(True)
    assert gyro.damper_inertia.isVisible() and panel.status.text().startswith("Edited")
    gyro.damper_inertia.setText("0.02")
    gyro.damper_coefficient.setText("0.03")
    assert panel.apply()
    qtbot.waitUntil(lambda: latest(window).scenario.rigid_body.damper is not None, timeout=WAIT_MS)
    damper = latest(window).scenario.rigid_body.damper
    assert (damper.inertia, damper.coefficient) == (0.02, 0.03)
    np.testing.assert_array_equal(latest(window).scenario.initial_state.s, latest(window).scenario.angular_velocity)
    qtbot.waitUntil(lambda: "E_rot" in window.parts_status.text(), timeout=WAIT_MS)
    gyro.damper_on.setChecked(False)
    assert panel.apply()
    qtbot.waitUntil(lambda: latest(window).scenario.rigid_body.is_rigid, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: not window.parts_status.isVisible(), timeout=WAIT_MS)


def test_a_bad_damper_or_rotor_is_refused_inline_and_the_run_goes_on(open_window, qtbot):
    window = open_window("boxes-simple")
    panel, gyro = window.panel, window.panel.gyro
    before = latest(window).scenario
    gyro.damper_on.setChecked(True)
    gyro.damper_inertia.setText("-1")
    assert not panel.apply()
    assert "body.damper.inertia must be > 0" in panel.error.text()
    assert gyro.damper_inertia.property("invalid")
    gyro.damper_inertia.setText("0.01")
    gyro.rotor_on.setChecked(True)
    for f in gyro.rotor_axis:
        f.setText("0")
    assert not panel.apply()
    assert "body.rotor.axis must be a non-zero direction" in panel.error.text()
    gyro.rotor_axis[1].setText("1")
    panel.integrator.setCurrentText("splitting")
    assert not panel.apply()
    assert "integrator must not be a splitting method" in panel.error.text()
    t = latest(window).t
    qtbot.waitUntil(lambda: latest(window).t > t + 0.2, timeout=WAIT_MS)
    assert latest(window).scenario is before
