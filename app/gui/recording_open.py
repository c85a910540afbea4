"""Recordings given to the window: ``tumble gui RECORDING`` and files dropped on it open the import dialog.

Qt is imported inside the functions that need it: ``tumble gui`` asks :func:`is_recording`
before any window exists.
"""

from __future__ import annotations

from pathlib import Path

#: file name endings read as a scenario, never as a recording
SCENARIO_SUFFIXES = (".toml",)
#: how often ``tumble gui RECORDING`` looks for its window to open the dialog over (ms)
WAIT_FOR_WINDOW_MS = 50


def is_recording(text) -> bool:
    """Whether ``text`` (a ``tumble gui`` argument or a dropped path) names a recording: an
    existing folder (a phyphox export), or an existing file that is neither a scenario
    (``.toml``) nor a preset's name."""
    from ..scenario import preset_names

    text = str(text)
    if "/" not in text and text in preset_names():
        return False
    try:
        path = Path(text)
        return path.is_dir() or (path.is_file() and path.suffix.lower() not in SCENARIO_SUFFIXES)
    except (OSError, ValueError):  # a name too long for the system, or a NUL in it
        return False


def open_recordings(window, paths):
    """The import dialog over ``window`` (raised if it is open already), reading and fitting ``paths``."""
    from .recording_dialog import open_for

    dialog = open_for(window)
    dialog.open_paths(paths)
    return dialog


def run_gui_on_recording(paths, *, view: str = "main", paused: bool = False, screenshot: str | None = None,
                         quit_after: float | None = None) -> int:
    """``tumble gui RECORDING...``: the window on the last scenario (as plain ``tumble gui``
    opens it) with the import dialog fitting ``paths``; same options and exit status as
    :func:`~app.gui.launch.run_gui`."""
    from ..physics.errors import ParameterError
    from .launch import qt_application, run_gui

    if view not in ("main", "poinsot"):
        raise ParameterError("--view", view, "be main or poinsot with a recording (its flights replay there)")
    app = qt_application()
    from PyQt5.QtCore import QTimer

    from .main_window import MainWindow

    def open_dialog():
        windows = [w for w in app.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
        if windows:
            waiting.stop()
            open_recordings(windows[0], paths)

    waiting = QTimer(app)  # until run_gui's event loop shows the window
    waiting.timeout.connect(open_dialog)
    waiting.start(WAIT_FOR_WINDOW_MS)
    try:
        return run_gui(None, paused=paused, view=view, screenshot=screenshot, quit_after=quit_after)
    finally:
        waiting.stop()
        waiting.deleteLater()
