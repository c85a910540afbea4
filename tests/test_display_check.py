"""A window asked for on an X display that does not answer: one line naming DISPLAY and exit 2,
never Qt's abort (SIGABRT and a message about reinstalling the application); a display that
refuses for a moment (a busy X server) is asked again (app.gui.common.display)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import headless_env, refused, tumble
from tumble import display


def test_a_display_that_refuses_for_a_moment_is_asked_again():
    tries = []

    def opener():
        tries.append(1)
        return len(tries) >= 3  # refused twice, then accepted

    assert display.answers(opener, within_s=5.0) and len(tries) == 3


def test_a_display_that_never_answers_is_given_up_after_its_time():
    tries = []
    assert not display.answers(lambda: tries.append(1) or False, within_s=0.35)
    # asked at once, then every ASK_EVERY_S until the time is up
    assert 2 <= len(tries) <= 0.35 / display.ASK_EVERY_S + 2


def test_only_an_x11_window_is_asked_for(monkeypatch):
    monkeypatch.setattr(display.sys, "platform", "linux")
    monkeypatch.setenv("DISPLAY", ":5")
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert display.uses_x11()
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert not display.uses_x11()
    monkeypatch.delenv("QT_QPA_PLATFORM")
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    assert not display.uses_x11()


def _unused_display() -> str:
    """A display number no X server here listens on (no socket in /tmp/.X11-unix)."""
    taken = {p.name for p in Path("/tmp/.X11-unix").glob("X*")} if Path("/tmp/.X11-unix").is_dir() else set()
    return ":" + str(next(n for n in range(917, 1000) if f"X{n}" not in taken))


@pytest.mark.skipif(display._xlib() is None, reason="Xlib is what asks the display")
@pytest.mark.parametrize("command", [("gui", "t-handle", "--quit-after", "0"),
                                     ("replay", "phone-throws", "--flight", "1")], ids=["gui", "replay"])
def test_a_window_on_a_display_that_does_not_answer_is_one_line_and_exit_2(command, tmp_path):
    where = _unused_display()
    env = headless_env(DISPLAY=where, HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"))
    env.pop("QT_QPA_PLATFORM", None)
    res = tumble(*command, env=env, cwd=tmp_path)
    # (replay says which flight it found before it opens the window)
    line = refused(res, "DISPLAY must name an X server that accepts a connection", where, quiet=command[0] == "gui")
    assert "reinstalling" not in line and "could not connect" not in res.stderr


def test_an_export_with_a_display_that_does_not_answer_renders_without_it(tmp_path):
    """An export needs no display: with a DISPLAY no server answers on, it renders with EGL after
    asking, and says nothing of it (VTK's own try printed "bad X server connection" first)."""
    env = headless_env(DISPLAY=_unused_display(), HOME=str(tmp_path))
    res = tumble("export", "t-handle", "--out", "a.gif", "--duration", "0.5", "--size", "160x120", env=env,
                 cwd=tmp_path)
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert (tmp_path / "a.gif").stat().st_size > 0
