"""The Recording protocol: one way to cut a run, the same samples live and offline."""

import numpy as np
import pytest

from tumble.export.settings import ExportSettings, plan_export
from tumble.export.timeline import TRAIL_SECONDS, simulate_timeline
from tumble.scenario import load
from tumble.scene.body_scene import TRAIL_POINTS
from tumble.simulation.history import WIDTH, History
from tumble.simulation.recording import thin


@pytest.mark.parametrize("lo,hi,n", [(0, 10, None), (0, 10, 3), (5, 6, 1), (2, 1000, 7), (0, 7, 7), (3, 3, 4)])
def test_thin_keeps_newest_and_bounds_count(lo, hi, n):
    idx = thin(lo, hi, n)
    if hi <= lo:
        assert len(idx) == 0
        return
    assert idx[-1] == hi - 1 and idx[0] >= lo
    assert np.all(np.diff(idx) > 0)
    if n:
        assert len(idx) <= n
    assert len(set(np.diff(idx).tolist())) <= 1  # one stride


def test_history_until_bounds_the_newest_row():
    h = History(50)
    rows = np.zeros((30, WIDTH))
    rows[:, 0] = np.arange(30) * 0.5
    h.append(rows)
    got = h.snapshot(2.0, None, until=6.0)["t"]
    assert got[0] == 2.0 and got[-1] == 6.0 and len(got) == 9


def test_timeline_span_is_the_trail():
    sc = load("t-handle")
    plan = plan_export(sc, ExportSettings(out="x.mp4", duration=1.0, fps=10))
    tl = simulate_timeline(sc, plan)
    for k in tl.frame_index:
        t = tl.t[k]
        span = tl.span(t - TRAIL_SECONDS, t, TRAIL_POINTS)
        np.testing.assert_array_equal(span["q"], tl.trail(k))
        assert span["t"][-1] == t
        assert span.flip_count == tl.flip_count(k)
