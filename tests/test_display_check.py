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


@pytest.fixture(scope="module")
def resetting_x_server():
    """An Xvfb of this test's own, as ``xvfb-run`` starts it: it resets itself whenever its last
    client leaves, and drops a connection made during that reset."""
    import os
    import shutil
    import subprocess

    if shutil.which("Xvfb") is None:
        pytest.fail("Xvfb is not installed (Debian: apt-get install xvfb)")
    read, write = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-nolisten", "tcp", "-screen", "0", "320x240x24"],
                              pass_fds=[write], stderr=subprocess.DEVNULL)
    os.close(write)
    number = b""
    while not number.endswith(b"\n"):
        got = os.read(read, 1)
        assert got, "Xvfb ended before it said its display"
        number += got
    os.close(read)
    yield ":" + number.decode().strip()
    server.terminate()
    server.wait(10)


RESETS = """
import ctypes, sys, time
from tumble import display
if sys.argv[1] == "check":
    display.check_display()
x = ctypes.CDLL("libX11.so.6")
x.XOpenDisplay.restype = ctypes.c_void_p
x.XOpenDisplay.argtypes = [ctypes.c_char_p]
x.XCloseDisplay.argtypes = [ctypes.c_void_p]
x.XInternAtom.restype = ctypes.c_ulong
x.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]

def connection():
    for _ in range(100):  # one made during a reset is dropped: asked again
        d = x.XOpenDisplay(None)
        if d:
            return d
        time.sleep(0.05)
    raise SystemExit("no connection")

# an atom lives until the server resets
d = connection()
x.XInternAtom(d, b"TUMBLE_RESET_PROBE", 0)
x.XCloseDisplay(d)
time.sleep(1.0)  # for the server to see that client leave (and reset, if it was its last)
d = connection()
print("reset" if x.XInternAtom(d, b"TUMBLE_RESET_PROBE", 1) == 0 else "kept")
dropped = 0
for _ in range(int(sys.argv[2])):  # Qt and VTK connect right after the check
    x.XCloseDisplay(d)
    d = x.XOpenDisplay(None)
    dropped += not d
    d = d or connection()
print(dropped)
"""


@pytest.mark.skipif(display._xlib() is None, reason="Xlib is what asks the display")
def test_after_the_check_the_x_server_never_resets_under_the_window(resetting_x_server):
    """The check keeps its connection open, so the server has a client and never resets between
    the check and Qt's or VTK's own connection (closing it had made that reset: Qt's "could not
    connect to display" and VTK's "bad X server connection" on a busy machine). A reset is seen as
    an atom forgotten; then 200 connections, one after another, none dropped."""
    import subprocess
    import sys

    env = headless_env(DISPLAY=resetting_x_server)
    env.pop("QT_QPA_PLATFORM", None)

    def run(mode, connections):
        res = subprocess.run([sys.executable, "-c", RESETS, mode, str(connections)], env=env,
                             capture_output=True, text=True, timeout=60)
        assert res.returncode == 0, res.stderr
        said, dropped = res.stdout.split()
        return said, int(dropped)

    assert run("bare", 0)[0] == "reset"  # the phenomenon: its last client gone, the server resets
    assert run("check", 200) == ("kept", 0)
