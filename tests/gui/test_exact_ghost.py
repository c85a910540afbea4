"""The exact ghost in the main window: it follows the closed-form solution, its error plot
tells an accurate integrator from a coarse one, and it is refused, with the reason, where
the closed form does not apply."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import WAIT_MS

from tumble.physics import quaternion as quat
from tumble.physics.reference import ExactReference



def settle_paused(window, qtbot):
    """Pause, and wait until the frame drawn is the newest snapshot."""
    window.worker.pause()
    qtbot.waitUntil(lambda: not window.worker.latest().running, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: window.drawn_serials == (window.worker.latest().serial,), timeout=WAIT_MS)
    return window.worker.latest()


def test_the_ghost_follows_the_closed_form_and_rk4_stays_on_it(open_view, qtbot):
    window = open_view("t-handle", speed=2.0)  # rk4 at dt 1e-3
    ghost = window.ghost
    assert ghost.reason is None and ghost.checkbox.isEnabled()
    assert not ghost.scene.actors["shell"].GetVisibility()  # off by default
    assert not ghost.plot.isVisible()
    qtbot.keyClick(window, "g")  # the View menu's shortcut
    assert ghost.checkbox.isChecked() and ghost.active
    qtbot.waitUntil(lambda: window.worker.latest().t > 4.0, timeout=WAIT_MS)  # past the first flip
    snap = settle_paused(window, qtbot)
    assert ghost.scene.actors["shell"].GetVisibility() and ghost.plot.isVisible()
    # drawn where the closed form puts the body at the displayed time (from the run's start)
    _, q_exact, _ = ExactReference(snap.scenario.model, snap.scenario.initial_state).at(snap.t)
    pose = np.array(ghost.scene.actors["shell"].user_matrix)
    np.testing.assert_allclose(pose[:3, :3], quat.to_matrix(q_exact), atol=1e-12)
    # and rk4 at dt 1e-3 sits on it: the error is that of a 4th-order method, not of drawing
    assert ghost.last_error < 1e-7
    qtbot.waitUntil(lambda: len(ghost.trace[0]) > 100, timeout=WAIT_MS)
    t, err = ghost.trace
    assert t[0] == pytest.approx(0.0, abs=0.02) and np.all(np.diff(t) > 0)
    assert np.all(err < 1e-7)
    x, y = ghost.plot.curve.getData()
    assert len(x) > 100 and np.all(np.isfinite(y))
    ghost.set_checked(False)
    qtbot.waitUntil(lambda: not ghost.scene.actors["shell"].GetVisibility(), timeout=WAIT_MS)
    assert not ghost.plot.isVisible()


def test_euler_at_a_coarse_step_parts_from_the_ghost(open_view, qtbot):
    window = open_view("t-handle", integrator="euler", dt=0.02, speed=4.0)
    ghost = window.ghost
    ghost.set_checked(True)
    qtbot.waitUntil(lambda: window.worker.latest().t > 8.0, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: len(ghost.trace[0]) and ghost.trace[0][-1] > 7.0, timeout=WAIT_MS)
    t, err = ghost.trace
    assert t[0] == pytest.approx(0.0, abs=0.02)
    assert err.max() > 0.3  # radians: visibly apart
    assert err.max() > 100 * err[t <= 0.5].max()  # and it grows from small
    # the same figure the closed form gives for the recorded orientations
    hist = window.worker.span(None)
    keep = np.isin(hist["t"], t)
    ref = ExactReference(window.worker.latest().scenario.model, window.worker.latest().scenario.initial_state)
    np.testing.assert_allclose(np.sort(ref.orientation_error(hist["t"][keep], hist["q"][keep])),
                               np.sort(err[np.isin(t, hist["t"])]), rtol=1e-9, atol=1e-15)


def test_a_kick_restarts_the_ghost_from_the_kicked_state(open_view, qtbot):
    window = open_view("boxes-simple")
    ghost = window.ghost
    ghost.set_checked(True)
    qtbot.waitUntil(lambda: window.worker.latest().t > 0.5, timeout=WAIT_MS)
    window.kick()
    qtbot.waitUntil(lambda: len(window.worker.latest().kick_times) == 1, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: window.worker.latest().t > window.worker.latest().kick_times[0] + 0.5,
                    timeout=WAIT_MS)
    snap = settle_paused(window, qtbot)
    assert ghost.reference.start.t == snap.kick_times[0]
    assert ghost.last_error < 1e-7  # rk4 follows the kicked motion; the ghost restarted with it


def test_unavailable_with_the_reason_for_applied_torques(open_view, qtbot):
    window = open_view("rocket-top")
    ghost = window.ghost
    qtbot.waitUntil(lambda: ghost.reason is not None, timeout=WAIT_MS)
    assert not ghost.checkbox.isEnabled() and not ghost.action.isEnabled()
    assert "torques or forces" in ghost.checkbox.toolTip()
    assert "unavailable" in ghost.checkbox.toolTip()
    ghost.set_checked(True)  # even if asked, nothing is drawn
    qtbot.wait(200)
    assert not ghost.active
    assert not ghost.scene.actors["shell"].GetVisibility() and not ghost.plot.isVisible()
    # switching to a torque-free preset makes it available again
    window.load_preset("t-handle")
    qtbot.waitUntil(lambda: ghost.reason is None, timeout=WAIT_MS)
    assert ghost.checkbox.isEnabled() and ghost.active
    qtbot.waitUntil(lambda: ghost.scene.actors["shell"].GetVisibility(), timeout=WAIT_MS)
