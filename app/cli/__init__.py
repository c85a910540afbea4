"""The command line: the parser and ``main`` (core), and one module per group of commands (export, live, throws).
Each reads its flags strictly, calls the API and turns its errors into one line and an exit status.

:func:`main` is the ``tumble`` command (``tumble.cli:main``) and ``python -m tumble``: it loads the
commands' modules (numpy, and more for some commands: up to seconds on a busy machine) with
Ctrl+C answered at once, then runs :func:`.core.main`."""

from __future__ import annotations

import os
import signal
import sys
import threading

from .words import EXIT_INTERRUPTED, INTERRUPTED_LINE


def _interrupted_while_loading(_signum, _frame) -> None:
    """Ctrl+C before any command ran: nothing was written; one line, no traceback."""
    sys.stderr.write(INTERRUPTED_LINE + "\n")
    sys.stderr.flush()
    os._exit(EXIT_INTERRUPTED)


def main(argv=None) -> int:
    """``tumble``: :func:`.core.main` once its modules are loaded (Ctrl+C while they load ends the
    process with one line: a traceback from deep inside an import used to be printed)."""
    watch = argv is None and threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, _interrupted_while_loading) if watch else None
    try:
        from .core import main as run
    finally:
        if watch:
            signal.signal(signal.SIGINT, previous)
    return run(argv)
