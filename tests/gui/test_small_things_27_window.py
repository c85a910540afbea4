"""Small things seen in the window in front of a class (issue 27, item 10)."""

from __future__ import annotations

WAIT_MS = 60000


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

    qtbot.waitUntil(phase_shown, timeout=WAIT_MS)
    assert both == [True]
