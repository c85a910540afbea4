"""A window that fits its screen: opened within the screen's available area, frame included
(at most its size, centred the first time), remembered per screen, and fitted again once the
window manager has framed it and after it leaves full screen. GUI thread only.

A window manager adds its title bar and borders only after the window is shown (on X11 it
reparents the window some milliseconds later), so the frame's margins are unknown at first.
Before the first show a window is sized for :data:`DEFAULT_FRAME_MARGINS` (or for the margins
an earlier window of this process measured); :class:`ScreenFitter` then waits for the frame,
measures its margins from ``frameGeometry() - geometry()``, and resizes and moves the window so
that the whole frame lies within the available area.
"""

from __future__ import annotations

import time

from PyQt5.QtCore import QByteArray, QEvent, QObject, QRect, QSize, Qt, QTimer
from PyQt5.QtWidgets import QApplication

from ..common import settings as keys

#: the frame's extra (width, height) assumed before a window manager has framed any window (px):
#: more than the title bar and borders of the usual desktops (openbox 2 x 25, GNOME and KDE
#: title bars of 30-40 px), so that the first frame already fits
DEFAULT_FRAME_MARGINS = (16, 48)
#: how often a shown window looks for its frame (ms)
FRAME_POLL_MS = 20
#: how long a shown window waits for a frame before it takes itself to have none (s): no window
#: manager (a bare X server), or one that draws no decorations
FRAME_WAIT_S = 1.0

#: the frame margins measured last in this process (None: none measured yet)
_measured: list = [None]


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


def frame_margins(window) -> tuple:
    """(extra width, extra height) of ``window``'s frame (title bar and borders) as it is now."""
    frame, inner = window.frameGeometry(), window.geometry()
    return frame.width() - inner.width(), frame.height() - inner.height()


def expected_margins() -> tuple:
    """The frame margins to size an unframed window for: the ones measured last, else the default."""
    return _measured[0] if _measured[0] is not None else DEFAULT_FRAME_MARGINS


def fitted_size(wanted: QSize, area: QRect, margins=(0, 0)) -> QSize:
    """``wanted`` cut to ``area`` less the window frame's ``margins`` (extra width, height)."""
    return QSize(min(wanted.width(), area.width() - margins[0]), min(wanted.height(), area.height() - margins[1]))


def fit_window(window, centre: bool = False, wanted: QSize | None = None, margins: tuple | None = None) -> None:
    """Resize ``window`` to ``wanted`` (default: its size now) cut to its screen's available
    area less the frame's ``margins`` (default: as measured now), then move it, frame
    included, inside that area: to the centre with ``centre``, else the least distance."""
    area = available_area(window)
    margins = frame_margins(window) if margins is None else margins
    size = fitted_size(window.size() if wanted is None else wanted, area, margins)
    if size != window.size():
        window.resize(size)
    w, h = size.width() + margins[0], size.height() + margins[1]
    if centre:
        x, y = area.x() + (area.width() - w) // 2, area.y() + (area.height() - h) // 2
    else:
        frame = window.frameGeometry()
        x = min(max(frame.x(), area.left()), area.right() + 1 - w)
        y = min(max(frame.y(), area.top()), area.bottom() + 1 - h)
    window.move(max(x, area.left()), max(y, area.top()))  # move() places the frame


def place_window(window, default: tuple) -> None:
    """Before the first show: ``default`` (width, height) cut to the screen less the frame
    expected, centred; what :class:`ScreenFitter` corrects once the frame is known."""
    fit_window(window, centre=True, wanted=QSize(*default), margins=expected_margins())


class ScreenFitter(QObject):
    """Keeps ``window`` (frame included) within its screen's available area (GUI thread).

    On the first show, and each time the window leaves full screen or maximised, it waits
    (polling every :data:`FRAME_POLL_MS`) until the window manager has framed the window, or
    :data:`FRAME_WAIT_S` without a frame, then sizes the window to ``wanted`` (its size when it
    was first shown, or the size it had before full screen) cut to the area less the frame, and
    moves it inside. ``fitted`` counts the fits done (a test waits for it).
    """

    def __init__(self, window, centre: bool = True):
        super().__init__(window)
        self.window = window
        self.centre = centre
        self.fitted = 0
        self.wanted: QSize | None = None
        self._shown = False
        self._since = 0.0
        self._size_then = QSize()
        self._keep_wanted = False
        self._timer = QTimer(self)  # a child: it dies with the window
        self._timer.setInterval(FRAME_POLL_MS)
        self._timer.timeout.connect(self._poll)
        window.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt API
        kind = event.type()
        if kind == QEvent.Show and not self._shown:
            self._shown = True
            self.fit_when_framed(self.wanted or self.window.size())
        elif kind == QEvent.WindowStateChange and self._shown:
            before, now = event.oldState(), self.window.windowState()
            if before & (Qt.WindowFullScreen | Qt.WindowMaximized) and not now & (
                    Qt.WindowFullScreen | Qt.WindowMaximized | Qt.WindowMinimized):
                # the size it had before (see :meth:`remember`): what the window manager passes
                # through on the way back (the whole work area, on a busy machine for a while) is
                # not a size the user chose
                self.fit_when_framed(centre=False, keep_wanted=True)
        return False

    def remember(self) -> None:
        """The window's size now is the one to come back to (before it goes full screen)."""
        if not self.window.windowState() & (Qt.WindowFullScreen | Qt.WindowMaximized):
            self.wanted = self.window.size()

    def fit_when_framed(self, wanted: QSize | None = None, centre: bool | None = None,
                        keep_wanted: bool = False) -> None:
        """Fit the window to ``wanted`` once the window manager has framed it (a size the window
        took meanwhile is wanted instead, unless ``keep_wanted``)."""
        if wanted is not None:
            self.wanted = QSize(wanted)
        self._keep_wanted = keep_wanted
        self._centre_next = self.centre if centre is None else centre
        self._since = time.perf_counter()
        self._size_then = self.window.size()
        self._timer.start()

    def _poll(self) -> None:
        w = self.window
        if getattr(w, "_closing", False) or not w.isVisible():
            self._timer.stop()
            return
        if w.windowState() & (Qt.WindowFullScreen | Qt.WindowMaximized | Qt.WindowMinimized):
            return  # the window manager is still leaving that state, or the user entered it again
        margins = frame_margins(w)
        framed = margins != (0, 0)
        if not framed and time.perf_counter() - self._since < FRAME_WAIT_S:
            return
        self._timer.stop()
        _measured[0] = margins  # none after FRAME_WAIT_S: this display frames no window
        if w.size() != self._size_then and not self._keep_wanted:  # resized meanwhile (the user, a test): wanted
            self.wanted, self._centre_next = w.size(), False
        fit_window(w, centre=self._centre_next, wanted=self.wanted, margins=margins)
        self.fitted += 1

    @property
    def waiting(self) -> bool:
        """Whether a fit is still to come (the frame awaited)."""
        return self._timer.isActive()


def restore_geometry(window, stored, view: str, default: tuple, persist: bool, fitter=None) -> None:
    """Open ``window`` where it was last closed on a screen of this size, or at ``default``
    (width, height) cut to the screen and centred; either way within the screen, frame
    included (sized for the frame expected before the window manager has framed it). The
    ``fitter`` (a :class:`ScreenFitter`) learns the size wanted and whether to centre."""
    saved = stored.value(keys.geometry_key(view, screen_size(window)), QByteArray(), type=QByteArray)
    if persist and not saved.isEmpty() and window.restoreGeometry(saved):
        wanted, centre = window.size(), False
        fit_window(window, margins=expected_margins())
    else:
        wanted, centre = QSize(*default), True
        place_window(window, default)
    if fitter is not None:
        fitter.wanted, fitter.centre = wanted, centre


def save_geometry(window, stored, view: str) -> None:
    """Remember ``window``'s geometry for screens of this size."""
    stored.setValue(keys.geometry_key(view, screen_size(window)), window.saveGeometry())
