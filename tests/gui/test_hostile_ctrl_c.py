"""Hostile round 5 (issue 35) in this process: Ctrl+C while a window's loop runs, as ``tumble.show`` runs
one (the command line's windows are tried in a child: tests/test_hostile_round5.py)."""

from __future__ import annotations

import os
import signal
import time

import pytest


def test_ctrl_c_closes_the_windows_and_gives_back_the_handler(qapp):
    """In this process (as ``tumble.show`` runs a window): SIGINT closes every top-level window and
    quits the loop; afterwards KeyboardInterrupt is raised and SIGINT's handler is the one before."""
    from PyQt5.QtCore import QTimer
    from PyQt5.QtWidgets import QWidget

    from tumble.gui.common.interrupt import CtrlC

    before = signal.getsignal(signal.SIGINT)
    widget = QWidget()
    with CtrlC(qapp) as ctrl_c:
        widget.show()
        QTimer.singleShot(50, lambda: os.kill(os.getpid(), signal.SIGINT))
        QTimer.singleShot(10_000, qapp.quit)  # the deadline: a loop Ctrl+C did not end
        began = time.monotonic()
        qapp.exec_()
    assert ctrl_c.hit and not widget.isVisible()
    assert time.monotonic() - began < 5.0
    assert signal.getsignal(signal.SIGINT) is before
    with pytest.raises(KeyboardInterrupt):
        ctrl_c.raise_if_hit()
    widget.deleteLater()
