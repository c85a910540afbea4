"""Ctrl+C in a window: SIGINT closes every window and ends the event loop, as the command line ends.

Qt's event loop runs in C++, where Python's own SIGINT handler cannot raise until some Python code
runs next (a timer's slot, a VTK observer), and there its KeyboardInterrupt is a traceback in the
middle of a paint that the loop survives. Here SIGINT only wakes the loop (``signal.set_wakeup_fd``
writes the signal's number to a socket a :class:`QSocketNotifier` watches); the Python handler then
runs at once and asks the loop, through a zero-delay timer, to close every top-level window (each
window's ``closeEvent`` stops and joins its workers) and quit. After the loop,
:meth:`CtrlC.raise_if_hit` raises the KeyboardInterrupt the command line turns into its one line
and exit status 130. A second Ctrl+C while the windows close ends the process at once (130).

Thread: the GUI thread (the main thread: only it receives Python's signal handlers).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import threading

#: exit status of a process ended by Ctrl+C (128 + SIGINT), as a shell reports it
EXIT_INTERRUPTED = 128 + signal.SIGINT

_hit = threading.Event()


def interrupted() -> bool:
    """Whether Ctrl+C has asked this process's windows to close: a window's ``closeEvent`` then
    waits for no background job (its threads are daemons, and the process is ending)."""
    return _hit.is_set()


class CtrlC:
    """Within a ``with`` block around ``app.exec_()``, SIGINT closes every top-level window and
    quits the loop; :attr:`hit` says whether it came. Outside the main thread it does nothing."""

    def __init__(self, app):
        self.app = app
        self.hit = False
        self._armed = False

    def __enter__(self) -> "CtrlC":
        if threading.current_thread() is not threading.main_thread():
            return self
        from PyQt5.QtCore import QSocketNotifier

        self._reader, self._writer = socket.socketpair()
        for end in (self._reader, self._writer):
            end.setblocking(False)
        self._previous_handler = signal.signal(signal.SIGINT, self._handle)
        self._previous_fd = signal.set_wakeup_fd(self._writer.fileno(), warn_on_full_buffer=False)
        self._notifier = QSocketNotifier(self._reader.fileno(), QSocketNotifier.Read)
        self._notifier.activated.connect(self._drain)  # Python runs: the handler below is called
        self._armed = True
        return self

    def _drain(self, *_args) -> None:
        with contextlib.suppress(OSError):
            while self._reader.recv(512):
                pass

    def _handle(self, _signum, _frame) -> None:
        if self.hit:  # a second Ctrl+C: the windows did not close in time, end here
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.write("tumble: interrupted\n")
                sys.stderr.flush()
            os._exit(EXIT_INTERRUPTED)
        self.hit = True
        _hit.set()
        from PyQt5.QtCore import QTimer

        QTimer.singleShot(0, self._close_all)  # not inside whatever Python code the signal interrupted

    def _close_all(self) -> None:
        for widget in self.app.topLevelWidgets():
            if widget.isVisible():
                widget.close()
        self.app.quit()  # ends nested loops (a modal dialog's) too

    def __exit__(self, *exc) -> None:
        if not self._armed:
            return
        self._armed = False
        self._notifier.setEnabled(False)
        self._notifier.deleteLater()
        signal.set_wakeup_fd(self._previous_fd)
        signal.signal(signal.SIGINT, self._previous_handler)
        self._reader.close()
        self._writer.close()

    def raise_if_hit(self) -> None:
        """Raise KeyboardInterrupt if Ctrl+C ended the loop (call it once the window is gone)."""
        if self.hit:
            raise KeyboardInterrupt
