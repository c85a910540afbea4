"""The engines window: the engines run on its thread, a missing one is greyed out with the
install line, and each body is posed from its engine's run."""

from __future__ import annotations

import numpy as np
import pytest

#: every test here runs the other physics engines (`-m 'not engines'` leaves them out)
pytestmark = pytest.mark.engines


def test_window_greys_a_missing_engine_and_poses_each_body_from_its_run(qtbot, monkeypatch):
    from tumble.engines import registry
    from tumble.gui.windows.engines_window import EnginesWindow
    from tumble.scenario import load
    from tumble.physics import quaternion as quat
    from tumble.views.engines import interpolate

    real = registry.installed
    monkeypatch.setattr(registry, "installed", lambda engine: engine != "pybullet" and real(engine))
    from dataclasses import replace

    base = load("t-handle")
    sc = base.replace(solver=replace(base.solver, duration=3.0))
    window = EnginesWindow(sc, preset="t-handle", paused=True, persist=False, engines="dart,pybullet,mujoco:rk4")
    qtbot.addWidget(window)
    try:
        with qtbot.waitSignal(window.first_frame_drawn, timeout=30000):
            window.show()
        combo = window.setting_combos[1]
        index = combo.findText("pybullet")
        assert combo.currentText() == "pybullet"
        assert not combo.model().item(index).isEnabled()
        assert registry.INSTALL_LINE in combo.itemData(index, 3)  # Qt.ToolTipRole
        assert [f"{e}:{s}" for e, s in window.view.pairs] == ["dart:default", "mujoco:rk4"]
        qtbot.waitUntil(lambda: window.view.audit is not None, timeout=120000)
        window.step()
        qtbot.waitUntil(lambda: window.drawn_time > 0, timeout=30000)
        t = window.drawn_time
        scene = window.view.scenes["bodies"]
        for k, run in enumerate(window.view.audit.runs):
            traj = run.trajectory
            _, q, _ = interpolate(traj.t, traj.c, traj.q, traj.w, t)
            shown = np.asarray(scene.scenes[k].actors["body"].user_matrix)[:3, :3]
            np.testing.assert_allclose(shown, quat.to_matrix(q), atol=1e-12)
        poses = window.view.poses_at(t)
        assert not np.allclose(poses[0][1], poses[1][1])  # the engines differ at t
    finally:
        window.close()
