"""The stability map's geometry on screen: map points and body-frame directions, omega's
track across the map's edge, and the principal axes' marks."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg

from ...views.stability import map_position

#: marker symbol of each principal axis (ascending moments: minor, intermediate, major)
AXIS_SYMBOLS = ("o", "star", "s")


def body_direction(lon_deg: float, lat_deg: float, frame: np.ndarray) -> np.ndarray:
    """Body-frame unit vector at a map point (degrees), ``frame`` rows the map axes."""
    lo, la = math.radians(lon_deg), math.radians(lat_deg)
    d_map = np.array([math.cos(la) * math.cos(lo), math.cos(la) * math.sin(lo), math.sin(la)])
    return d_map @ np.asarray(frame, dtype=float)


def add_axis_markers(plot, axes, frame, labels) -> dict:
    """Mark and label each principal axis, both signs, with its name and verdict on the map
    ``plot``; returns ``{(k, sign): (lon, lat)}`` of the marks (degrees)."""
    places: dict = {}
    for k, label in enumerate(labels):
        name, _, verdict = label.partition(": ")
        unstable = verdict.startswith("unstable")
        for sign in (1, -1):
            lon, lat = map_position(sign * axes[:, k], frame)
            if abs(lat) > 89.999:
                lon = 0.0  # a pole's longitude is round-off
            if lon > 179.999:
                lon = -180.0
            places[(k, sign)] = (lon, lat)
            spots = [(lon, lat)] + ([(180.0, lat)] if lon <= -179.999 else [])
            for x, y in spots:
                for pen, size in ((pg.mkPen("#000000", width=5), 17), (pg.mkPen("#ffffff", width=2), 17)):
                    plot.addItem(pg.ScatterPlotItem([x], [y], symbol=AXIS_SYMBOLS[k], size=size, pen=pen,
                                                    brush=pg.mkBrush(0, 0, 0, 0)))
            if lat > 80:
                anchor = (0.5, -0.25)   # below a top pole
            elif lat < -80:
                anchor = (0.5, 1.25)    # above a bottom pole
            elif lon > 150:
                anchor = (1.1, 1.05)    # left of a point at the right edge
            else:
                anchor = (-0.1, 1.05)   # right of and above the point
            colour = "#ff7b72" if unstable else "#7ee787"
            text = pg.TextItem(html=f"<div style='color:#ffffff; font-size:8pt'>{'+' if sign > 0 else '−'}{name}"
                                    f"<br><b style='color:{colour}'>{verdict}</b></div>",
                               anchor=anchor, fill=pg.mkBrush(0, 0, 0, 150))
            text.setPos(lon, lat)
            plot.addItem(text)
    return places
