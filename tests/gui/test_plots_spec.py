"""The live plot panel draws each curve a PlotSpec declares from the recording column it names
(app/gui/plots.py), for one run and for the compare view's two."""

from __future__ import annotations

import numpy as np

from tumble.gui.plots.live_plots import DriftPlots, PlotsPanel, SpecPlots
from tumble.views.plots import COMPARE_PLOTS, FLIP_COLOR, MAIN_PLOTS


def expected(curve, span, log=False) -> np.ndarray:
    """The values a curve declares, read straight from the span's columns."""
    data = span[curve.column]
    if curve.component == "norm":
        data = np.sqrt((data ** 2).sum(axis=1))
    elif curve.component is not None:
        data = data[:, curve.component]
    return np.log10(np.maximum(np.abs(data), 1e-17)) if log else data


def legend_names(plot) -> list:
    return [label.text for _sample, label in plot.legend.items]


def test_each_main_curve_is_drawn_from_its_column_and_the_flips_marked(qtbot, synthetic_timeline):
    panel = PlotsPanel()
    qtbot.addWidget(panel)
    span = synthetic_timeline().span(2.0, 7.0, 500)
    for log in (False, True):
        panel.set_log_drift(log)
        panel.refresh(span)
        for row, plot, curves in zip(MAIN_PLOTS.rows, panel.plots, panel.row_curves):
            assert legend_names(plot) == [c.label for c in row.curves] + (["flip", "kick"] if row.markers else [])
            for spec_curve, curve in zip(row.curves, curves):
                x, y = curve.getData()
                np.testing.assert_array_equal(x, span["t"])
                np.testing.assert_allclose(y, expected(spec_curve, span, log and row.log_magnitude), rtol=1e-12)
    assert "log₁₀" in panel.d_plot.titleLabel.text
    # the span's flips are marked on the rows that declare markers, and only there
    marked = {plot: sorted(item.value() for item in plot.items if hasattr(item, "value")) for plot in panel.plots}
    assert marked[panel.w_plot] == [3.0, 6.5]
    assert marked[panel.L_plot] == marked[panel.d_plot] == []
    line = next(item for item in panel.w_plot.items if hasattr(item, "value"))
    assert line.pen.color().name() == FLIP_COLOR
    panel.release()


def test_each_compare_curve_is_its_runs_own(qtbot, synthetic_timeline):
    panel = DriftPlots()
    qtbot.addWidget(panel)
    runs = [synthetic_timeline(1.0).span(None), synthetic_timeline(1e3).span(None)]
    panel.set_names(["A: rk4", "B: euler"])
    assert panel.log_drift is COMPARE_PLOTS.log_default is True
    panel.refresh(runs)
    for row, plot, curves in zip(COMPARE_PLOTS.rows, panel.plots, panel.row_curves):
        assert legend_names(plot) == ["A: rk4", "B: euler"]
        for spec_curve, curve in zip(row.curves, curves):
            x, y = curve.getData()
            span = runs[spec_curve.run]
            np.testing.assert_array_equal(x, span["t"])
            np.testing.assert_allclose(y, expected(spec_curve, span, log=True), rtol=1e-12)
            assert curve.opts["pen"].color().name() == spec_curve.color
    panel.release()


def test_any_spec_gets_one_plot_a_row_sharing_the_first_ones_time_axis(qtbot, synthetic_timeline):
    panel = SpecPlots(COMPARE_PLOTS)
    qtbot.addWidget(panel)
    assert len(panel.plots) == len(COMPARE_PLOTS.rows) and panel.first_plot is panel.plots[0]
    assert all(p.getViewBox().linkedView(0) is panel.first_plot.getViewBox() for p in panel.plots[1:])
    panel.set_window("last 5 s")
    panel.refresh([synthetic_timeline().span(None), synthetic_timeline().span(None)])
    x0, x1 = panel.first_plot.getViewBox().viewRange()[0]
    assert np.allclose((x0, x1), (3.0, 8.0))
    panel.release()


def test_the_box_starts_at_the_specs_window_and_log_option(qtbot):
    from tumble.gui.plots.live_plots import PlotsBox

    for spec in (MAIN_PLOTS, COMPARE_PLOTS):
        plots = SpecPlots(spec)
        box = PlotsBox(plots, "not a window", "tip", "tip")
        qtbot.addWidget(box)
        assert box.window_combo.currentText() == spec.default_window
        assert box.log_drift.isChecked() is spec.log_default
        plots.release()


def test_refresh_from_cuts_the_scrolling_window_out_of_each_recording(qtbot, synthetic_timeline):
    from types import SimpleNamespace

    panel = SpecPlots(MAIN_PLOTS)
    qtbot.addWidget(panel)
    tl = synthetic_timeline()
    panel.set_window("last 5 s")
    snap = SimpleNamespace(t=6.0, run_id=1, flip_times=(1.5, 3.0), kick_times=(2.0,))
    (span,) = panel.refresh_from([tl], [snap])
    x, _ = panel.row_curves[0][0].getData()
    np.testing.assert_array_equal(x, span["t"])
    assert x[0] >= 1.0 and x[0] - 1.0 < 0.011 and x[-1] == tl.t[-1]
    # the snapshot's flips and kicks are the markers
    assert sorted(item.value() for item in panel.plots[1].items if hasattr(item, "value")) == [1.5, 2.0, 3.0]
    panel.release()
