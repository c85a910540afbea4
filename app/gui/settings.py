"""Persistent settings (QSettings): window geometry, the last scenario, view toggles."""

from __future__ import annotations

from PyQt5.QtCore import QSettings

ORGANIZATION = "Tumble"
APPLICATION = "tumble"
#: keys
GEOMETRY = "window/geometry"
WINDOW_STATE = "window/state"
LAST_SCENARIO = "scenario/last_toml"
LAST_PRESET = "scenario/last_preset"
SPEED = "playback/speed"
REPEAT = "playback/repeat"
FOLLOW = "view/follow"
TRAIL = "view/trail"
GHOST = "view/exact_ghost"
PLOT_WINDOW = "view/plot_window"


def open_settings() -> QSettings:
    """The app's settings store (tests redirect it with ``QSettings.setPath``)."""
    return QSettings(QSettings.IniFormat, QSettings.UserScope, ORGANIZATION, APPLICATION)


def last_preset() -> str | None:
    """The preset name of the last scenario, if it was an unedited preset."""
    return open_settings().value(LAST_PRESET, "", type=str) or None


def last_scenario():
    """The scenario the user last ran, or None if there is none or it no longer loads."""
    from ..physics.errors import ParameterError
    from ..scenario import loads_toml

    text = open_settings().value(LAST_SCENARIO, "", type=str)
    if not text:
        return None
    try:
        return loads_toml(text, source="the saved last scenario")
    except ParameterError:
        return None
