"""The theory dock of the main window: predicted values, and values observed from the run."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import WAIT_MS

from tumble.gui.panels.theory_panel import ROWS, _format
from tumble.physics import exact, theory
from tumble.scenario import load
from tumble.simulation.worker import RECORD_INTERVAL_S



def test_t_handle_shows_predictions_and_observes_the_polhode_period(open_window, qtbot):
    sc = load("t-handle")
    expected = theory.predict(sc.rigid_body, sc.angular_velocity, sc.applied_loads)
    window = open_window("t-handle", speed=10.0)
    panel = window.theory
    assert window.theory_dock.isVisible()
    qtbot.waitUntil(lambda: panel.predicted == expected, timeout=WAIT_MS)
    for key, _label, unit, _tip in ROWS:
        assert panel.cells[key][0].text() == _format(getattr(expected, key), unit)
    assert panel.cells["polhode_period"][0].text() == f"{expected.polhode_period:.6g} s"

    # one to two periods in (10x speed): the last two zero crossings in one direction of
    # omega's intermediate component, samples 10 ms apart in the history, each off by at most
    # (lam^2 / 3) h^3 / (6 sqrt 3) by linear interpolation (sn is odd about its zeros);
    # rk4 at 1 ms adds ~1e-10
    qtbot.waitUntil(lambda: panel.observed["polhode_period"] is not None, timeout=WAIT_MS)
    moments, axes = sc.rigid_body.principal()
    lam = exact.classify(moments, np.asarray(sc.angular_velocity) @ axes).lam
    crossing = lam**2 / 3.0 * RECORD_INTERVAL_S**3 / (6.0 * np.sqrt(3.0))
    observed = panel.observed["polhode_period"]
    assert observed == pytest.approx(expected.polhode_period, abs=2.2 * crossing + 1e-8)
    qtbot.waitUntil(lambda: panel.cells["polhode_period"][1].text() == _format(observed, "s")
                    or panel.observed["polhode_period"] != observed, timeout=WAIT_MS)
    # the rotation about L over the first whole period: rk4 plus Hermite interpolation
    qtbot.waitUntil(lambda: panel.observed["montgomery_phase"] is not None, timeout=WAIT_MS)
    gap = (panel.observed["montgomery_phase"] - expected.montgomery_phase + np.pi) % (2 * np.pi) - np.pi
    assert abs(gap) < 2e-6
    assert panel.observed["growth_rate"] is not None
    assert panel.observed["flip_period"] == pytest.approx(expected.flip_period, abs=2.2 * crossing + 1e-8)


def test_a_kick_starts_new_predictions_and_torques_have_none(open_window, qtbot):
    window = open_window("t-handle", speed=10.0)
    panel = window.theory
    qtbot.waitUntil(lambda: panel.predicted.polhode_period is not None, timeout=WAIT_MS)
    before = panel.predicted
    window.kick()
    qtbot.waitUntil(lambda: bool(window.worker.latest().kick_times) and panel.predicted != before,
                    timeout=WAIT_MS)
    snap = window.worker.latest()
    expected = theory.predict(snap.scenario.rigid_body, snap.segment_start.w)
    if theory.intermediate_deviation(snap.scenario.rigid_body, snap.segment_start.w) > theory.GROWTH_MAX_DEVIATION:
        expected = dataclasses.replace(expected, growth_rate=None)  # the linear theory is the axis's only
    assert panel.predicted == expected
    assert panel.note.text().startswith(f"After the kick at t = {snap.segment_start.t:.2f} s")
    window.load_preset("rocket-top")
    qtbot.waitUntil(lambda: panel.predicted == theory.Theory() and panel.note.text() != "", timeout=WAIT_MS)
    assert all(cells[0].text() == "—" for cells in panel.cells.values())
