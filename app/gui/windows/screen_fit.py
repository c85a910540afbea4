"""A window that fits its screen: opened within the screen's available area (at most its size,
centred the first time), remembered per screen, and kept inside it once the window manager
has framed it. GUI thread only."""

from __future__ import annotations

from PyQt5.QtCore import QByteArray, QRect, QSize
from PyQt5.QtWidgets import QApplication

from ..common import settings as keys


def screen_of(window):
    """The screen ``window`` is on (or will open on: the primary screen before it is shown)."""
    handle = window.windowHandle()
    screen = handle.screen() if handle is not None else None
    return screen or QApplication.screenAt(window.geometry().center()) or QApplication.primaryScreen()


def available_area(window) -> QRect:
    """The part of ``window``'s screen a window may take (without task bars and docks)."""
    return screen_of(window).availableGeometry()


def screen_size(window) -> tuple:
    """(width, height) of ``window``'s whole screen, the key its geometry is remembered under."""
    size = screen_of(window).geometry().size()
    return size.width(), size.height()


def fitted_size(wanted: QSize, area: QRect, margins=(0, 0)) -> QSize:
    """``wanted`` cut to ``area`` less the window frame's ``margins`` (extra width, height)."""
    return QSize(min(wanted.width(), area.width() - margins[0]), min(wanted.height(), area.height() - margins[1]))


def fit_window(window, centre: bool = False) -> None:
    """Resize ``window`` to fit its screen's available area (frame included once it has one),
    then move it inside that area: to the centre with ``centre``, else the least distance."""
    area = available_area(window)
    frame, inner = window.frameGeometry(), window.geometry()
    margins = (frame.width() - inner.width(), frame.height() - inner.height())
    size = fitted_size(window.size(), area, margins)
    if size != window.size():
        window.resize(size)
    w, h = size.width() + margins[0], size.height() + margins[1]
    if centre:
        x, y = area.x() + (area.width() - w) // 2, area.y() + (area.height() - h) // 2
    else:
        x = min(max(window.x(), area.left()), area.right() + 1 - w)
        y = min(max(window.y(), area.top()), area.bottom() + 1 - h)
    window.move(max(x, area.left()), max(y, area.top()))


def restore_geometry(window, stored, view: str, default: tuple, persist: bool) -> None:
    """Open ``window`` where it was last closed on a screen of this size, or at ``default``
    (width, height) cut to the screen and centred; either way within the screen."""
    saved = stored.value(keys.geometry_key(view, screen_size(window)), QByteArray(), type=QByteArray)
    if persist and not saved.isEmpty() and window.restoreGeometry(saved):
        fit_window(window)
        return
    window.resize(fitted_size(QSize(*default), available_area(window)))
    fit_window(window, centre=True)


def save_geometry(window, stored, view: str) -> None:
    """Remember ``window``'s geometry for screens of this size."""
    stored.setValue(keys.geometry_key(view, screen_size(window)), window.saveGeometry())
