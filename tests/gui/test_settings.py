"""A bad value in the settings file never stops the app: the default is used and the
status bar names the file and the key."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import tumble
from PyQt5.QtCore import QByteArray

from tumble.gui.common import settings as keys



def write_ini(folder: Path, text: str) -> Path:
    path = folder / keys.ORGANIZATION / f"{keys.APPLICATION}.ini"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, key, kind, default", [
    ("[playback]\nspeed=abc\n", keys.SPEED, float, 1.0),
    ("[playback]\nspeed=nan\n", keys.SPEED, float, 1.0),
    ("[playback]\nspeed=inf\n", keys.SPEED, float, 1.0),
    ("[playback]\nspeed=1, 2\n", keys.SPEED, float, 1.0),
    ("[playback]\nspeed=50\n", keys.SPEED, float, 1.0),
    ("[view]\nfollow=abc\n", keys.FOLLOW, bool, True),
    ("[view]\nplot_window=10 s, 30 s\n", keys.PLOT_WINDOW, str, "10 s"),
    ("[stability]\ndirections=2000.5\n", "stability/directions", int, 2000),
    ("[window]\ngeometry=1, 2\n", keys.GEOMETRY, QByteArray, QByteArray()),
])
def test_a_bad_value_gives_the_default_and_a_note(private_settings, text, key, kind, default):
    path = write_ini(private_settings, text)
    keys.take_notes()
    assert keys.open_settings().value(key, default, type=kind) == default
    notes = keys.take_notes()
    section, _, name = key.partition("/")
    assert len(notes) == 1 and str(path) in notes[0] and f"[{section}] {name} =" in notes[0]


def test_good_values_are_read_without_a_note(private_settings):
    write_ini(private_settings, "[playback]\nspeed=2.5\n[view]\nfollow=false\ntrail=true\n"
                                "[stability]\ndirections=500\n")
    keys.take_notes()
    stored = keys.open_settings()
    assert stored.value(keys.SPEED, 1.0, type=float) == 2.5
    assert stored.value(keys.FOLLOW, True, type=bool) is False
    assert stored.value(keys.TRAIL, False, type=bool) is True
    assert stored.value("stability/directions", 2000, type=int) == 500
    assert stored.value(keys.GHOST, False, type=bool) is False  # missing: the default, no note
    stored.setValue(keys.SPEED, 0.5)  # what the app writes reads back
    assert keys.open_settings().value(keys.SPEED, 1.0, type=float) == 0.5
    assert keys.take_notes() == []


def test_the_window_opens_with_a_bad_speed_and_says_so(private_settings, open_window):
    path = write_ini(private_settings, "[playback]\nspeed=abc\n[view]\ntrail=maybe\n")
    window = open_window("t-handle", paused=True)
    assert window.worker.latest().speed == 1.0
    assert window.trail_box.isChecked()  # the default
    message = window.statusBar().currentMessage()
    assert str(path) in message and "[playback] speed = abc" in message and "[view] trail = maybe" in message


def test_a_last_scenario_that_no_longer_loads_is_noted(private_settings):
    from tumble.gui.launch import resolve_scenario

    path = write_ini(private_settings, '[scenario]\nlast_toml="name = 3"\n')
    keys.take_notes()
    sc, preset = resolve_scenario(None)
    assert preset == "t-handle"
    notes = keys.take_notes()
    assert len(notes) == 1 and str(path) in notes[0] and "last_toml" in notes[0]


@pytest.mark.parametrize("speed", ["abc", "nan"])
def test_tumble_gui_starts_with_a_bad_speed(private_settings, speed):
    write_ini(private_settings, f"[playback]\nspeed={speed}\n")
    env = dict(os.environ, XDG_CONFIG_HOME=str(private_settings))
    res = tumble("gui", "t-handle", "--paused", "--quit-after", "0.2", env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "error" not in res.stderr


def test_a_view_reads_where_an_older_version_kept_a_setting_and_writes_under_its_name(private_settings):
    write_ini(private_settings, "[playback]\nspeed=2.5\n[window]\ngeometry=abc\n[compare]\ngeometry=xyz\n")
    stored = keys.open_settings()
    assert keys.view_key("main", "speed", stored) == keys.SPEED
    assert keys.view_key("compare", "speed", stored) == keys.SPEED  # every view read the one speed
    assert keys.view_key("poinsot", "geometry", stored) == keys.GEOMETRY  # it was the main window's
    assert keys.view_key("stability", "geometry", stored) == "stability/geometry"  # not the main layout
    assert keys.view_key("compare", "geometry", stored) == "compare/geometry"
    assert keys.view_key("main", "speed") == "main/speed"  # what a window writes
    stored.setValue("main/speed", 0.5)
    assert keys.view_key("main", "speed", stored) == "main/speed"  # once written, its own wins


def test_the_window_keeps_the_speed_an_older_version_saved(private_settings, open_window, qtbot):
    write_ini(private_settings, "[playback]\nspeed=2.5\n")
    window = open_window("t-handle", paused=True, persist=True)
    assert window.worker.latest().speed == pytest.approx(2.5, rel=0.03)  # the slider's log steps
    window.set_speed(0.5)
    qtbot.waitUntil(lambda: window.worker.latest().speed == pytest.approx(0.5, rel=0.03), timeout=10_000)
    window.close()
    stored = keys.open_settings()
    assert stored.value("main/speed", 1.0, type=float) == pytest.approx(0.5, rel=0.03)
    assert stored.value(keys.SPEED, 1.0, type=float) == 2.5  # the old key is left as it was
