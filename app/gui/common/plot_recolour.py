"""Re-colour open pyqtgraph plots in place from one colour scheme to another (View > Projector colours).

Walks a graphics view's items: backgrounds, curve pens, markers, axes, legends, titles and text;
each colour that has a role in the old scheme gets that role's colour in the new one, its alpha,
width and dash kept. GUI thread only.
"""

from __future__ import annotations

import pyqtgraph as pg
from PyQt5.QtGui import QBrush, QColor, QPen

from ...scene.palette import Palette, role_of, translate_text


def _colour(qcolor: QColor, source: Palette, target: Palette) -> QColor | None:
    role = role_of(qcolor.name(), source)
    if role is None:
        return None
    new = QColor(target.roles[role])
    new.setAlpha(qcolor.alpha())
    return new


def _swapped(style, source, target):
    """``style`` (a QPen or a QBrush of its own) in ``target``'s colour of its role, or None."""
    new = _colour(style.color(), source, target)
    if new is None:
        return None
    style.setColor(new)
    return style


def _pen(pen, source, target):
    return _swapped(QPen(pg.mkPen(pen)), source, target)


def _brush(brush, source, target):
    return _swapped(QBrush(pg.mkBrush(brush)), source, target)


def recolour_graphics(view, source: Palette, target: Palette) -> None:
    """Re-colour the pyqtgraph graphics view ``view`` (a GraphicsLayoutWidget, a PlotWidget) from
    ``source``'s scheme to ``target``'s (call :func:`~app.gui.common.theme.configure_pyqtgraph` for
    ``target`` first: the axes take its foreground)."""
    background = view.backgroundBrush().color()
    new = _colour(background, source, target)
    if new is not None:
        view.setBackground(new)
    for item in view.scene().items():
        if isinstance(item, pg.PlotDataItem):
            pen = _pen(item.opts["pen"], source, target) if item.opts.get("pen") is not None else None
            if pen is not None:
                item.setPen(pen)
            for key, make, setter in (("symbolPen", _pen, item.setSymbolPen), ("symbolBrush", _brush, item.setSymbolBrush)):
                value = item.opts.get(key)
                if value is not None and not isinstance(value, (list, tuple)):
                    swapped = make(value, source, target)
                    if swapped is not None:
                        setter(swapped)
        elif isinstance(item, pg.PlotCurveItem) and not isinstance(item.parentItem(), pg.PlotDataItem):
            pen = _pen(item.opts["pen"], source, target)
            if pen is not None:
                item.setPen(pen)
        elif isinstance(item, pg.InfiniteLine):
            pen = _pen(item.pen, source, target)
            if pen is not None:
                item.setPen(pen)
        elif isinstance(item, pg.AxisItem):
            item.setPen()
            item.setTextPen()
        elif isinstance(item, pg.LegendItem):
            brush = _brush(item.opts["brush"], source, target)
            if brush is not None:
                item.setBrush(brush)
            item.setLabelTextColor(pg.getConfigOption("foreground"))
            for _sample, label in item.items:
                label.setText(label.text)
        elif isinstance(item, pg.LabelItem):
            colour = item.opts.get("color")
            if colour is not None:
                swapped = _colour(pg.mkColor(colour), source, target)
                if swapped is not None:
                    item.opts["color"] = swapped
            item.setText(translate_text(item.text, source, target))
        elif isinstance(item, pg.TextItem):
            html = item.textItem.toHtml()
            colour = _colour(item.textItem.defaultTextColor(), source, target)
            if colour is not None:
                item.setColor(colour)
            if "#" in html:
                item.setHtml(translate_text(html, source, target))
        elif isinstance(item, pg.ScatterPlotItem):
            pen = _pen(item.opts["pen"], source, target)
            brush = _brush(item.opts["brush"], source, target)
            if pen is not None:
                item.setPen(pen)
            if brush is not None:
                item.setBrush(brush)
