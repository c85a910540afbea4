"""One flight's rates in the import dialog: measured points over a model's lines, and its flips.

The Flights tab draws the fitted curve, the Predict tab the predicted one; both read seconds
after the flight's start (no pyqtgraph scale factor after the unit).
"""

from __future__ import annotations

import pyqtgraph as pg
from PyQt5.QtCore import Qt

from ...scene.style import AXIS_HEX, tone
from .live_plots import set_title

#: the least width of the plot (px): the flights table beside it takes what it needs first
MIN_WIDTH = 300
#: colour of the vertical lines at the flips
FLIP_COLOR = "#f5e663"


class RatesPlot(pg.PlotWidget):
    """Measured ω as points, a model's ω as lines, flip times as vertical lines (GUI thread)."""

    def __init__(self, title: str, parent=None):
        super().__init__(parent)
        self.setMenuEnabled(False)
        self.hideButtons()
        self.showGrid(x=True, y=True, alpha=0.25)
        for side, label in (("left", "ω (rad/s)"), ("bottom", "t − start (s)")):
            self.getAxis(side).enableAutoSIPrefix(False)  # no "(x0.001)" after a label in seconds
            self.setLabel(side, label)
        set_title(self.plotItem, title)  # no least width from its text: the flights table beside it needs the room
        self.setMinimumWidth(MIN_WIDTH)
        self.addLegend(offset=(-4, 1), labelTextSize="8pt", colCount=3)
        self.curves = [self.plot(pen=pg.mkPen(tone(AXIS_HEX[k]), width=1.6), name=f"ω{'xyz'[k]}") for k in range(3)]
        self.points = [pg.ScatterPlotItem(size=4, pen=None, brush=pg.mkBrush(tone(AXIS_HEX[k]))) for k in range(3)]
        for p in self.points:
            self.addItem(p)
        self.flip_lines: list = []

    def show_rates(self, t_model, w_model, t_points, w_points, flips=()) -> None:
        """Lines ``w_model`` (N, 3) at ``t_model``, points ``w_points`` at ``t_points``, and a
        vertical line at each (time, Qt pen style) of ``flips`` whose time is not None."""
        for k in range(3):
            self.curves[k].setData(t_model, w_model[:, k])
            self.points[k].setData(t_points, w_points[:, k])
        self._clear_flips()
        for flip, style in flips:
            if flip is not None:
                line = pg.InfiniteLine(pos=flip, angle=90, pen=pg.mkPen(tone(FLIP_COLOR), width=1, style=style))
                self.addItem(line, ignoreBounds=True)
                self.flip_lines.append(line)

    def clear_rates(self) -> None:
        for k in range(3):
            self.curves[k].setData([], [])
            self.points[k].setData([], [])
        self._clear_flips()

    def _clear_flips(self) -> None:
        for line in self.flip_lines:
            self.removeItem(line)
        self.flip_lines = []


#: pen styles of the measured and the model's flip lines
MEASURED_FLIP, MODEL_FLIP = Qt.DotLine, Qt.DashLine
