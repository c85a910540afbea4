"""The plots read at a glance: no sideways text, legends beside the curves rather than on
them, and every marker explained (issue 10, 3.7)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import WAIT_MS
from PyQt5.QtWidgets import QGraphicsTextItem



def _sideways_texts(widget) -> list:
    """The visible text items of a pyqtgraph widget drawn at an angle (an axis label)."""
    found = []
    for item in widget.scene().items():
        if isinstance(item, QGraphicsTextItem) and item.isVisible() and item.toPlainText().strip():
            if abs(item.sceneTransform().m12()) > 1e-9:  # rotated in the scene
                found.append(item.toPlainText())
    return found


def _points_under_legend(plot) -> int:
    """How many drawn curve points of ``plot`` the legend covers (scene pixels)."""
    legend = plot.legend
    box = legend.sceneBoundingRect()
    # the view's range is set by a refresh and reaches its transform only when the view paints
    # next (pyqtgraph defers it); a busy machine measures in between: take the transform that
    # paint will draw with, that of the curves' data now
    plot.vb.updateMatrix()
    tr = plot.vb.childGroup.sceneTransform()
    count = 0
    for item in plot.listDataItems():
        x, y = item.getData()
        if x is None or not len(x):
            continue
        sx = tr.m11() * x + tr.m21() * y + tr.dx()
        sy = tr.m12() * x + tr.m22() * y + tr.dy()
        inside = (sx >= box.left()) & (sx <= box.right()) & (sy >= box.top()) & (sy <= box.bottom())
        count += int(np.count_nonzero(inside))
    return count


def _legend_names(plot) -> list:
    return [label.text for _sample, label in plot.legend.items]


@pytest.mark.parametrize("size", [(1440, 900), (1280, 720)])
def test_the_main_plots_have_no_sideways_labels_and_nothing_under_their_legends(open_window, qtbot, plots_drawn, size):
    window = open_window("t-handle", speed=5.0)
    window.resize(*size)
    window.ghost.set_checked(True)  # a fourth row: shorter plots
    qtbot.waitUntil(lambda: window.worker.latest().flips >= 2, timeout=WAIT_MS)
    plots_drawn(window.plots)  # refreshed in the layout of the new size and the fourth row
    plots = window.plots
    assert _sideways_texts(plots) == []
    for plot in (plots.L_plot, plots.w_plot, plots.d_plot):
        assert _points_under_legend(plot) == 0, plot.titleLabel.text
    assert "rad/s" in plots.w_plot.titleLabel.text and "ω" in plots.w_plot.titleLabel.text
    names = _legend_names(plots.w_plot)
    assert "flip" in names and "kick" in names
    window.log_drift.setChecked(True)
    plots_drawn(window.plots)  # the new title laid out, then the plots refreshed in it
    assert "log₁₀" in plots.d_plot.titleLabel.text and _sideways_texts(plots) == []
    assert _points_under_legend(plots.d_plot) == 0


def test_tiny_values_show_their_power_of_ten_in_the_title(open_window, qtbot, plots_drawn):
    window = open_window("t-handle", speed=5.0)
    qtbot.waitUntil(lambda: window.worker.latest().t > 2.0, timeout=WAIT_MS)
    plots_drawn(window.plots)
    plots = window.plots
    # |L| of the T-handle is about 2e-4 kg m²/s: the ticks read 0..200 in units of 10⁻⁶
    assert "10⁻⁶ kg m²/s" in plots.L_plot.titleLabel.text
    assert plots.L_plot.getAxis("left").scale == pytest.approx(1e6)
    # the drifts of rk4 at dt 1e-3 are round-off, about 1e-15
    assert "×10⁻" in plots.d_plot.titleLabel.text


def test_the_compare_plots_have_no_sideways_labels_and_nothing_under_their_legends(open_view, qtbot, plots_drawn):
    window = open_view("t-handle", view="compare", speed=5.0)
    window.log_drift.setChecked(False)
    qtbot.waitUntil(lambda: window.workers[0].latest().t > 3.0, timeout=WAIT_MS)
    plots_drawn(window.plots)
    assert _sideways_texts(window.plots) == []
    for plot in (window.plots.E_plot, window.plots.L_plot):
        assert _points_under_legend(plot) == 0, plot.titleLabel.text
