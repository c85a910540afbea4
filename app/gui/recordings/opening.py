"""Recordings given to the window: ``tumble gui RECORDING`` and files dropped on it open the import dialog
(``tumble gui RECORDING`` itself is :func:`tumble.gui.launch.run_gui_on_recording`).

Qt is imported inside the functions that need it: ``tumble gui`` asks :func:`is_recording`
before any window exists.
"""

from __future__ import annotations

from pathlib import Path

#: file name endings read as a scenario, never as a recording
SCENARIO_SUFFIXES = (".toml",)


def is_recording(text) -> bool:
    """Whether ``text`` (a ``tumble gui`` argument or a dropped path) names a recording: an
    existing folder (a phyphox export), an existing file that is neither a scenario
    (``.toml``) nor a preset's name, or a shipped sample's name (``tumble samples``)."""
    from ...scenario import preset_names
    from ...throws.recordings.samples import find

    text = str(text)
    if "/" not in text and text in preset_names():
        return False
    if find(text) is not None:
        return True
    try:
        path = Path(text)
        return path.is_dir() or (path.is_file() and path.suffix.lower() not in SCENARIO_SUFFIXES)
    except (OSError, ValueError):  # a name too long for the system, or a NUL in it
        return False


def open_recordings(window, paths):
    """The import dialog over ``window`` (raised if it is open already), reading and fitting ``paths``."""
    from .dialog import open_for

    dialog = open_for(window)
    dialog.open_paths(paths)
    return dialog
