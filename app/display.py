"""The X display a window is about to open on, asked first whether it answers.

Qt's xcb platform aborts the process (SIGABRT, "could not connect to display", a message about
reinstalling the application) when the X server named by ``DISPLAY`` does not accept the
connection: no ``try`` catches that. Here the display is opened with Xlib first; one that
refuses is asked again for a short while, and one that never answers is a
:class:`ParameterError`: one line naming ``DISPLAY``, exit status 2, no core dump.

The connection that answered is kept open for the process's life (:data:`_held`, one per
display). An X server (Xvfb, ``xvfb-run``) resets itself when its last client leaves, and a
connection made during that reset is dropped at once (ECONNRESET: Qt's "could not connect to
display", VTK's "bad X server connection"). Opening and closing a connection to ask made that
very reset, just before Qt or VTK connected: on a busy 2-core machine, 20 of 30 connections made
right after such a check were dropped. While this one is open the server has a client and never
resets under us.

Thread: the GUI thread, before the QApplication exists.
"""

from __future__ import annotations

import ctypes
import os
import sys
import time

from .physics.errors import ParameterError

#: how long a display that refuses the connection is asked again (s), and how often (s)
ANSWER_WITHIN_S = 3.0
ASK_EVERY_S = 0.1
#: the rule said when it never answers
RULE = "name an X server that accepts a connection (none answered there)"
#: the Xlib connections that answered, by ``DISPLAY``, kept open (see the module's note)
_held: dict = {}


def _xlib():
    for name in ("libX11.so.6", "libX11.so"):
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        lib.XOpenDisplay.restype = ctypes.c_void_p
        lib.XOpenDisplay.argtypes = [ctypes.c_char_p]
        lib.XCloseDisplay.argtypes = [ctypes.c_void_p]
        return lib
    return None


def uses_x11() -> bool:
    """Whether Qt will open its windows on X11: Linux, ``DISPLAY`` set, and neither another
    platform (``QT_QPA_PLATFORM``) nor Wayland (``WAYLAND_DISPLAY``) chosen."""
    return (sys.platform.startswith("linux") and bool(os.environ.get("DISPLAY"))
            and not os.environ.get("QT_QPA_PLATFORM") and not os.environ.get("WAYLAND_DISPLAY"))


def answers(opener=None, within_s: float = ANSWER_WITHIN_S) -> bool:
    """Whether the display accepts a connection within ``within_s`` seconds (asked every
    :data:`ASK_EVERY_S`), the one that answered kept open; True where Xlib is not there to ask
    (Qt then says what it finds)."""
    if opener is None:
        lib = _xlib()
        if lib is None:
            return True

        def opener():
            name = os.environ.get("DISPLAY", "")
            if not _held.get(name):
                _held[name] = lib.XOpenDisplay(name.encode())
            return bool(_held[name])

    deadline = time.monotonic() + within_s
    while True:
        if opener():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(ASK_EVERY_S)


def check_display() -> None:
    """Raise :class:`ParameterError` (field ``DISPLAY``) when Qt would open its window on an X
    server that does not accept a connection."""
    if uses_x11() and not answers():
        raise ParameterError("DISPLAY", os.environ.get("DISPLAY"), RULE)
