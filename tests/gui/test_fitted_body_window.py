"""Issue 34, item 4: ``tumble gui fit.toml`` (a body made by ``tumble fit --out``) runs long
enough to show its flips, several predicted periods, with its ghost on: the same body without
its drag, in closed form. A ghost that cannot apply is greyed out and not shown ticked."""

from __future__ import annotations

import pytest
from conftest import WAIT_MS, tumble

from tumble.physics import theory
from tumble.scenario import load
from tumble.views.base import ghost_scenario

#: the flips a fitted flight's run shows at least (main_window.REPLAY_FLIPS)
FLIPS_SHOWN = 3


@pytest.fixture(scope="module")
def fit_toml(tmp_path_factory):
    out = tmp_path_factory.mktemp("fit") / "fit.toml"
    res = tumble("fit", "phone-throws", "--out", out, timeout=300)
    assert res.returncode == 0, res.stderr
    return out


def test_a_fitted_body_runs_several_periods_with_its_ghost_on(open_view, qtbot, fit_toml):
    from tumble.gui.views import view_factory

    written = load(fit_toml)
    assert written.solver.duration < 1.0  # the flight's own length, as written
    window = view_factory("main")(written, preset=None, paused=False, persist=False, source=str(fit_toml))
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.first_frame_drawn, timeout=WAIT_MS):
        window.show()
    run = window.worker.latest().scenario
    free = ghost_scenario(run)
    period = theory.flip_period(free.rigid_body, free.angular_velocity, free.applied_loads)
    assert run.solver.duration >= FLIPS_SHOWN * period  # several predicted periods
    assert window.ghost.checkbox.isChecked() and window.ghost.checkbox.isEnabled() and window.ghost.active
    assert window.ghost.without_drag and "without its drag" in window.ghost.checkbox.toolTip()
    window.set_speed(2.0)
    qtbot.waitUntil(lambda: window.worker.latest().flips >= FLIPS_SHOWN, timeout=WAIT_MS)
    assert window.view.ghost_visible and window.ghost.reference is not None
    qtbot.waitUntil(lambda: window.ghost.last_error is not None, timeout=WAIT_MS)
    assert "without drag" in window.ghost.plot.titleLabel.text


def test_a_ghost_that_cannot_apply_is_greyed_and_unticked_and_comes_back(open_view, qtbot):
    window = open_view("t-handle", paused=True)
    window.ghost.set_checked(True)
    assert window.ghost.active
    window.load_preset("rocket-top")  # a torque: no closed form
    qtbot.waitUntil(lambda: not window.ghost.checkbox.isEnabled(), timeout=WAIT_MS)
    assert not window.ghost.checkbox.isChecked() and not window.ghost.action.isChecked()
    assert "unavailable" in window.ghost.checkbox.toolTip()
    window.load_preset("t-handle")  # the choice was kept
    qtbot.waitUntil(lambda: window.ghost.checkbox.isEnabled(), timeout=WAIT_MS)
    assert window.ghost.checkbox.isChecked() and window.ghost.active
