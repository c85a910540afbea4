"""Persistent settings (QSettings): window geometry, the last scenario, view toggles.

A value the user (or another version) left in the file that cannot be read as what the
app expects never stops the app: :class:`Settings` returns the default instead and keeps a
note naming the file and the key, which the next window shows in its status bar.
"""

from __future__ import annotations

import math

from PyQt5.QtCore import QByteArray, QSettings

ORGANIZATION = "Tumble"
APPLICATION = "tumble"
#: keys
GEOMETRY = "window/geometry"
WINDOW_STATE = "window/state"
LAST_SCENARIO = "scenario/last_toml"
LAST_PRESET = "scenario/last_preset"
LAST_FOLDER = "files/last_folder"
LAST_RECORDING_FOLDER = "files/last_recording_folder"
SPEED = "playback/speed"
REPEAT = "playback/repeat"
FOLLOW = "view/follow"
TRAIL = "view/trail"
GHOST = "view/exact_ghost"
PLOT_WINDOW = "view/plot_window"
#: the colour scheme ("dark" or "projector"), shared by every window and view
COLOURS = "view/colours"
#: where the views kept these settings before each view had its own prefix: read while the
#: view's own key is absent, so a user's settings survive the change
LEGACY_KEYS = {"speed": SPEED, "repeat": REPEAT, "follow": FOLLOW, "trail": TRAIL, "exact_ghost": GHOST,
               "plot_window": PLOT_WINDOW}
#: ... and the window layout the main view shared with the Poinsot view (built on it then)
LEGACY_LAYOUT_KEYS = {"geometry": GEOMETRY, "state": WINDOW_STATE}
LEGACY_LAYOUT_VIEWS = ("main", "poinsot")
#: how long a window's status bar shows the notes about unreadable settings (ms)
NOTE_MS = 20000

#: notes about values that could not be read, kept until a window shows them
_notes: list[str] = []


def _speed_ok(value: float) -> bool:
    from ...simulation import MAX_SPEED, MIN_SPEED

    return MIN_SPEED <= value <= MAX_SPEED


#: rules beyond the type: key -> (test, what the value must be)
RULES = {SPEED: (_speed_ok, "a number from 0.1 to 10")}
#: what each type the app reads must look like, for the notes
TYPE_RULES = {bool: "true or false", int: "a whole number", float: "a finite number", str: "text",
              QByteArray: "saved window data"}


class Settings(QSettings):
    """The app's QSettings whose :meth:`value` never raises for a bad stored value."""

    def value(self, key, defaultValue=None, type=None):  # noqa: A002, N803 - QSettings' API
        """The stored value of ``key`` as ``type``; ``defaultValue`` if there is none, or,
        with a note (:func:`take_notes`), if it cannot be read as ``type`` or breaks the
        key's rule in :data:`RULES`."""
        raw = super().value(key)
        if type is None:
            return defaultValue if raw is None else raw
        if raw is None:
            return type() if defaultValue is None else defaultValue
        try:
            value = _convert(raw, type)
        except (TypeError, ValueError, OverflowError):
            return self._refuse(key, raw, TYPE_RULES.get(type, type.__name__), defaultValue, type)
        test, rule = RULES.get(key, (None, ""))
        if test is not None and not test(value):
            return self._refuse(key, raw, rule, defaultValue, type)
        return value

    def _refuse(self, key: str, raw, rule: str, default, kind):
        default = kind() if default is None else default
        shown = "" if isinstance(default, QByteArray) else f"; using {_ini_text(default)}"
        self.note(key, f"= {_ini_text(raw)} must be {rule}{shown}")
        return default

    def note(self, key: str, what: str) -> None:
        """Keep a note about ``key``'s stored value (``what`` is wrong with it)."""
        section, _, name = key.rpartition("/")
        note = f"Settings file {self.fileName()}: [{section or 'General'}] {name} {what}"
        if note not in _notes:
            _notes.append(note)


def _ini_text(value) -> str:
    """A value as the ini file spells it (cut short)."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, (list, tuple)):
        text = ", ".join(str(v) for v in value)
    else:
        text = f"{value:g}" if isinstance(value, float) else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _convert(raw, kind):
    """``raw`` (an ini string, or the typed value QSettings cached) as ``kind``; raises
    ValueError when it is not one."""
    if kind is QByteArray:
        if isinstance(raw, QByteArray):
            return raw
        if isinstance(raw, str):
            return QByteArray(raw.encode("utf-8"))
        raise ValueError(raw)
    if isinstance(raw, (list, tuple, dict)):
        raise ValueError(raw)
    if kind is bool:
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("true", "1"):
            return True
        if text in ("false", "0"):
            return False
        raise ValueError(raw)
    if kind is str:
        if not isinstance(raw, str):
            raise ValueError(raw)
        return raw
    if isinstance(raw, bool):
        raise ValueError(raw)
    if kind is int:
        return int(str(raw).strip())
    if kind is float:
        value = float(str(raw).strip())
        if not math.isfinite(value):
            raise ValueError(raw)
        return value
    raise TypeError(kind)


def view_key(view: str, name: str, stored: QSettings | None = None) -> str:
    """The key of ``view``'s setting ``name``: ``"VIEW/NAME"`` (what a window writes). Given
    the ``stored`` settings (to read), the key an older version used when only that one is there."""
    key = f"{view}/{name}"
    if stored is None or stored.contains(key):
        return key
    legacy = LEGACY_KEYS.get(name) or (LEGACY_LAYOUT_KEYS.get(name) if view in LEGACY_LAYOUT_VIEWS else None)
    return legacy if legacy is not None and stored.contains(legacy) else key


def geometry_key(view: str, screen_size) -> str:
    """The key of ``view``'s window geometry on a screen of ``screen_size`` (width, height in
    pixels): a window is remembered per screen, so a layout made on a 1920x1080 monitor is not
    forced on the 1280x720 projector (``"main/geometry-1280x720"``)."""
    w, h = (int(v) for v in screen_size)
    return f"{view}/geometry-{w}x{h}"


def take_notes() -> list[str]:
    """The notes about unreadable settings since the last call (then forgotten)."""
    notes = list(_notes)
    _notes.clear()
    return notes


def show_notes(status_bar) -> None:
    """Show the pending notes about unreadable settings in a window's status bar."""
    notes = take_notes()
    if notes:
        status_bar.showMessage("  ·  ".join(notes), NOTE_MS)


def open_settings() -> Settings:
    """The app's settings store (tests redirect it with ``QSettings.setPath``)."""
    return Settings(QSettings.IniFormat, QSettings.UserScope, ORGANIZATION, APPLICATION)


def last_preset() -> str | None:
    """The preset name of the last scenario, if it was an unedited preset."""
    return open_settings().value(LAST_PRESET, "", type=str) or None


def last_scenario():
    """The scenario the user last ran, or None if there is none or it no longer loads."""
    from ...physics.errors import ParameterError
    from ...scenario import loads_toml

    stored = open_settings()
    text = stored.value(LAST_SCENARIO, "", type=str)
    if not text:
        return None
    try:
        return loads_toml(text, source="the saved last scenario")
    except ParameterError as err:
        stored.note(LAST_SCENARIO, f"is not a scenario that loads ({err}); not used")
        return None
