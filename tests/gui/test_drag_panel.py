"""The drag load in the panel's loads editor, in a real window under Xvfb (pytest-qt)."""

from __future__ import annotations

import numpy as np
from conftest import WAIT_MS
from PyQt5.QtCore import Qt


DRAG_TOML = """\
name = "dragged box"
[body]
shape = "box"
mass = 1.0
size = [0.1, 0.4, 0.9]
[initial]
angular_velocity = [0.1, 5.0, 0.1]
[[loads]]
kind = "drag"
model = "linear"
coefficients = [0.001, 0.002, 0.0005]
[solver]
integrator = "rk4"
dt = 0.001
duration = 10.0
"""


def latest(window):
    return window.worker.latest()


def _row(panel, r):
    cells = [panel.loads.item(r, c).text() for c in range(2, 8)]
    return panel.loads.cellWidget(r, 0).currentText(), panel.loads.cellWidget(r, 1).currentText(), cells


def test_a_scenario_with_drag_shows_it_and_runs_it(open_window, qtbot, tmp_path):
    path = tmp_path / "drag.toml"
    path.write_text(DRAG_TOML)
    window = open_window(str(path))
    kind, model, cells = _row(window.panel, 0)
    assert (kind, model) == ("drag", "linear")
    assert cells[:3] == ["0.001", "0.002", "0.0005"] and cells[3:] == ["", "", ""]
    assert not window.panel.loads.item(0, 5).flags() & Qt.ItemIsEditable
    # the running model dissipates: |omega| falls
    w0 = np.linalg.norm(latest(window).state.w)
    qtbot.waitUntil(lambda: np.linalg.norm(latest(window).state.w) < 0.995 * w0, timeout=WAIT_MS)
    assert "turned by the applied loads" in window.legend.text()


def test_a_drag_added_in_the_panel_restarts_the_run_with_it(open_window, qtbot):
    window = open_window("boxes-simple")
    panel = window.panel
    buttons = {b.text(): b for b in panel.findChildren(type(panel.apply_button))}
    qtbot.mouseClick(buttons["+ drag"], Qt.LeftButton)
    r = panel.loads.rowCount() - 1
    assert _row(panel, r)[:2] == ("drag", "quadratic")
    panel.loads.cellWidget(r, 1).setCurrentText("linear")
    for k, v in enumerate(("0.01", "0.02", "0.03")):
        panel.loads.item(r, 2 + k).setText(v)
    assert panel.apply()
    qtbot.waitUntil(lambda: bool(latest(window).scenario.applied_loads.drags), timeout=WAIT_MS)
    (drag,) = latest(window).scenario.applied_loads.drags
    assert drag.model == "linear"
    np.testing.assert_array_equal(drag.coefficients, [0.01, 0.02, 0.03])
    assert latest(window).scenario.model.params[20] != 0  # the kernels see it


def test_a_negative_coefficient_is_refused_inline_and_the_run_goes_on(open_window, qtbot):
    window = open_window("boxes-simple")
    panel = window.panel
    before = latest(window).scenario
    buttons = {b.text(): b for b in panel.findChildren(type(panel.apply_button))}
    qtbot.mouseClick(buttons["+ drag"], Qt.LeftButton)
    r = panel.loads.rowCount() - 1
    panel.loads.item(r, 3).setText("-0.5")
    assert not panel.apply()
    assert f"loads[{r}].coefficients[1] must be >= 0" in panel.error.text()
    t = latest(window).t
    qtbot.waitUntil(lambda: latest(window).t > t + 0.2, timeout=WAIT_MS)
    assert latest(window).scenario is before


def test_switching_a_row_to_drag_and_back_keeps_its_numbers(open_window):
    window = open_window("boxes-simple", paused=True)
    panel = window.panel
    buttons = {b.text(): b for b in panel.findChildren(type(panel.apply_button))}
    buttons["+ torque"].click()
    r = panel.loads.rowCount() - 1
    for k, v in enumerate(("0.1", "0.2", "0.3")):
        panel.loads.item(r, 2 + k).setText(v)
    combo = panel.loads.cellWidget(r, 0)
    combo.setCurrentText("drag")
    combo.activated.emit(combo.currentIndex())
    kind, model, cells = _row(panel, r)
    assert (kind, model, cells[:3]) == ("drag", "quadratic", ["0.1", "0.2", "0.3"])
    (drag,) = panel.build().applied_loads.drags
    np.testing.assert_array_equal(drag.coefficients, [0.1, 0.2, 0.3])
    combo = panel.loads.cellWidget(r, 0)
    combo.setCurrentText("force")
    combo.activated.emit(combo.currentIndex())
    kind, frame, cells = _row(panel, r)
    assert (kind, frame, cells) == ("force", "body", ["0.1", "0.2", "0.3", "0", "0", "0"])
