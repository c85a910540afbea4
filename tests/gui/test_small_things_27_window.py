"""Small things seen in the window in front of a class (issue 27, item 10)."""

from __future__ import annotations
from conftest import WAIT_MS



def test_the_montgomery_phase_is_shown_only_once_the_polhode_period_is_seen(open_window, qtbot):
    """The observed phase is the turn over one observed polhode period: never before that period."""
    window = open_window("t-handle", speed=10.0)
    panel = window.theory
    both = []

    def phase_shown() -> bool:
        if panel.observed["montgomery_phase"] is None:
            return False
        both.append(panel.observed["polhode_period"] is not None)
        return True

    qtbot.waitUntil(phase_shown, timeout=2 * WAIT_MS)  # a whole polhode period (6.4 s simulated) must pass first
    assert both == [True]


def test_the_poinsot_view_shows_no_world_axes_upside_down(open_view):
    window = open_view("t-handle", view="poinsot", paused=True)
    camera_up = window.scene_view.camera.up
    assert camera_up[2] < 0  # the plane is the floor: up is -L, and L points along world z here
    assert not window.scene_view.renderer.axes_enabled  # so a world gizmo would show z pointing down
    main = open_view("t-handle", paused=True)
    assert main.scene_view.renderer.axes_enabled  # the main view keeps its gizmo, z up
