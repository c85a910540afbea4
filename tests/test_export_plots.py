"""The export's plot panel draws each curve a PlotSpec declares from the recording column it names,
revealed up to the frame's time (app/export/plots.py)."""

from __future__ import annotations

import numpy as np
import pytest

from tumble.export.plots import POINTS_PER_PIXEL, PlotPanel
from tumble.views.plots import COMPARE_PLOTS, MAIN_PLOTS

SIZE = (300, 480)


def expected(curve, tl) -> np.ndarray:
    """The values a curve declares, read straight from the timeline's arrays."""
    data = getattr(tl, curve.column)
    if curve.component == "norm":
        return np.sqrt((data ** 2).sum(axis=1))
    return data if curve.component is None else data[:, curve.component]


def drawn(panel, row: int):
    return [(c, line.get_xdata(), line.get_ydata()) for i, c, line, _ in panel.lines if i == row]


def test_every_main_curve_is_drawn_from_its_column_up_to_the_frame_time(synthetic_timeline):
    tl = synthetic_timeline()
    panel = PlotPanel(SIZE, MAIN_PLOTS, (tl,), float(tl.t[-1]), t_start=0.0)
    t_frame = 5.0
    image = panel.render(t_frame)
    assert image.shape == (SIZE[1], SIZE[0], 3)
    assert len(panel.lines) == sum(len(row.curves) for row in MAIN_PLOTS.rows)
    titles = [ax.get_title(loc="left") for ax in panel.canvas.figure.axes]
    for r, row in enumerate(MAIN_PLOTS.rows):
        for curve, x, y in drawn(panel, r):
            assert 0 < len(x) <= POINTS_PER_PIXEL * SIZE[0]
            assert x[-1] <= t_frame and t_frame - x[-1] < 2 * (tl.t[1] - tl.t[0]) * len(tl.t) / len(x)
            idx = np.searchsorted(tl.t, x)
            assert np.array_equal(tl.t[idx], x)  # samples of the recording, not resampled
            # L and omega are plain numbers (in PLAIN_RANGE); the drifts of 4e-12 read in 10⁻¹²
            scale = 1e12 if row.unit == "" else 1.0
            np.testing.assert_allclose(y, scale * expected(curve, tl)[idx], rtol=1e-12, atol=1e-15)
    assert "×10⁻¹²" in titles[2] and "kg m²/s" in titles[0] and "rad/s" in titles[1]


def test_the_whole_run_is_drawn_at_the_last_frame_and_its_flips_as_they_pass(synthetic_timeline):
    tl = synthetic_timeline()
    panel = PlotPanel(SIZE, MAIN_PLOTS, (tl,), float(tl.t[-1]), t_start=0.0)
    panel.render(float(tl.t[-1]))
    for curve, x, _ in drawn(panel, 0):
        assert x[-1] == tl.t[-1] and x[0] - tl.t[0] < 2 * tl.t[-1] / len(x)
    (ax, marks, *_), = panel._markers
    assert ax is panel.canvas.figure.axes[1]  # the omega row declares the markers
    panel.render(3.2)
    xs = marks.get_xdata()
    assert sorted(set(xs[np.isfinite(xs)])) == [1.5, 3.0]


def test_the_compare_drifts_are_each_runs_own_as_log10_magnitude(synthetic_timeline):
    runs = (synthetic_timeline(1.0), synthetic_timeline(1e3))
    names = ("A: rk4, dt 1 ms", "B: euler, dt 10 ms")
    panel = PlotPanel(SIZE, COMPARE_PLOTS, runs, float(runs[0].t[-1]), t_start=2.0, names=names)
    panel.render(float(runs[0].t[-1]))
    for r, row in enumerate(COMPARE_PLOTS.rows):
        lines = drawn(panel, r)
        assert [c.run for c, _, _ in lines] == [0, 1]
        for curve, x, y in lines:
            tl = runs[curve.run]
            idx = np.searchsorted(tl.t, x)
            assert x[0] >= 2.0 - 1e-12
            np.testing.assert_allclose(y, np.log10(np.maximum(np.abs(expected(curve, tl)[idx]), 1e-17)), rtol=1e-12)
    # one key for both rows, with the runs' names in their colours
    legend = panel.canvas.figure.legends[0]
    assert [t.get_text() for t in legend.get_texts()] == list(names)
    assert [t.get_color() for t in legend.get_texts()] == [c.color for c in COMPARE_PLOTS.rows[0].curves]


def test_the_former_call_draws_the_main_plots_of_a_timeline_by_sample_index(synthetic_timeline):
    tl = synthetic_timeline()
    k = int(tl.frame_index[3])
    old = PlotPanel(SIZE, tl, float(tl.t[tl.frame_index[-1]]))
    new = PlotPanel(SIZE, MAIN_PLOTS, (tl,), float(tl.t[tl.frame_index[-1]]), t_start=float(tl.t[tl.first]))
    assert np.array_equal(old.render(k), new.render(float(tl.t[k])))


@pytest.mark.parametrize("size", [(240, 360), (480, 720)])
def test_titles_and_keys_never_overlap_and_stay_in_the_panel(size, synthetic_timeline):
    panel = PlotPanel(size, MAIN_PLOTS, (synthetic_timeline(),), 8.0, t_start=0.0)
    renderer = panel.canvas.get_renderer()
    for ax, title in zip(panel.canvas.figure.axes, panel.titles):
        box, key = title.get_window_extent(renderer), ax.get_legend().get_window_extent(renderer)
        assert not box.overlaps(key), title.get_text()
        assert box.y1 <= size[1] and key.x1 <= size[0] + 1
        assert box.y0 >= ax.get_window_extent(renderer).y1  # above its plot, not on the curves


def test_a_run_that_leaves_the_finite_world_still_gets_finite_axes(synthetic_timeline):
    tl = synthetic_timeline()
    tl.w[1500:, 1] = np.nan
    tl.w[1600:, 2] = np.inf
    panel = PlotPanel(SIZE, MAIN_PLOTS, (tl,), float(tl.t[-1]), t_start=0.0)
    panel.render(float(tl.t[-1]))
    lo, hi = panel.canvas.figure.axes[1].get_ylim()
    finite = tl.w[np.isfinite(tl.w)]
    assert np.isfinite([lo, hi]).all() and lo < finite.min() and hi > finite.max()


@pytest.mark.parametrize("t_end", [0.0, 1e-4, 0.15])
def test_a_clip_of_a_frame_or_two_labels_its_time_axis_readably(synthetic_timeline, t_end):
    """A one-frame (or 0.2 s, slow-motion) clip from the run's start spanned 1e-9 s of time, and
    the axis read 0.0000000000 at every tick: the axis spans at least MIN_AXIS_SPAN."""
    from tumble.export.plots import MIN_AXIS_SPAN

    panel = PlotPanel(SIZE, MAIN_PLOTS, (synthetic_timeline(),), t_end, t_start=0.0)
    ax = panel.canvas.figure.axes[-1]
    lo, hi = ax.get_xlim()
    assert lo == 0.0 and hi == pytest.approx(max(t_end, MIN_AXIS_SPAN), rel=1e-6)
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert len(labels) >= 2 and len(set(labels)) == len(labels), labels
    assert max(len(label) for label in labels) <= 6, labels
