"""Hostile round 5 (issue 35), the command line's and the API's part: Ctrl+C in every window,
``--quit-after`` past a timer's range, ``--screenshot`` checked first, replay's model bounded,
the demo's own sample, a slow replay clip that covers its flight, a full disk during a GIF, the
API's own errors, and options that were silently ignored.

Windows run in a child on the test session's Xvfb display (pytest-xvfb); a window is "up" once
the child maps a visible window (``xdotool search --pid``).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time

import pytest

from conftest import Running, refused, tumble
from tumble import ParameterError

# ------------------------------------------------------------------ item 6: Ctrl+C in every window

#: the promise: Ctrl+C ends a window within this long (s)
CTRL_C_S = 1.0
#: what a machine shared by several test runs adds to it (s): a close that stops and joins the
#: window's workers took 0.05-0.6 s here under load
LOAD_MARGIN_S = 1.0
#: the longest a window takes to open on a loaded machine, numba's cache warm (s)
OPEN_S = 120.0
#: after a window is mapped, this long for its first frames and the jobs it starts (an audit, a
#: map, the live demo's phone) to be running when Ctrl+C comes (s)
RUNNING_S = 2.0

WINDOWS = {
    "main": ("gui", "t-handle"),
    "replay": ("replay", "phone-throws", "--flight", "1"),
    "live": ("gui", "--live", "demo"),
    "engines": ("gui", "--view", "engines"),
    "stability": ("gui", "--view", "stability"),
}


def window_env(tmp_path) -> dict:
    """This environment (with the session's Xvfb DISPLAY), the settings in a folder of the test's own."""
    env = dict(os.environ, HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"))
    env.setdefault("XDG_RUNTIME_DIR", str(tmp_path))
    return env


def visible(pid: int) -> bool:
    return subprocess.run(["xdotool", "search", "--onlyvisible", "--pid", str(pid)], capture_output=True,
                          timeout=30).returncode == 0


def wait_visible(child: Running) -> None:
    deadline = time.monotonic() + OPEN_S
    while not visible(child.proc.pid):
        assert child.proc.poll() is None, f"the window ended before it opened: {child.finish()[1]}"
        assert time.monotonic() < deadline, f"no window within {OPEN_S} s"
        time.sleep(0.1)


def interrupt(child: Running) -> tuple[float, str]:
    """(seconds from SIGINT to the child's end, its stderr)."""
    began = time.monotonic()
    child.proc.send_signal(signal.SIGINT)
    try:
        child.proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        raise AssertionError("still running 30 s after Ctrl+C") from None
    seconds = time.monotonic() - began
    return seconds, child.finish()[1]


def no_traceback(stderr: str) -> None:
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert "Caught a Ctrl-C" not in stderr, stderr  # VTK's exit(1) from a callback
    assert stderr.strip().splitlines()[-1] == "tumble: interrupted, nothing written", stderr


needs_xdotool = pytest.mark.skipif(shutil.which("xdotool") is None or not os.environ.get("DISPLAY"),
                                   reason="xdotool and a display (pytest-xvfb) tell when a child's window is up")


@pytest.mark.slow
@pytest.mark.gui
@needs_xdotool
@pytest.mark.parametrize("window", WINDOWS)
def test_ctrl_c_ends_every_window_within_a_second(window, tmp_path):
    with Running(*WINDOWS[window], env=window_env(tmp_path)) as child:
        wait_visible(child)
        time.sleep(RUNNING_S)
        seconds, stderr = interrupt(child)
    print(f"{window}: Ctrl+C to exit {seconds:.3f} s")
    assert child.proc.returncode == 130, stderr
    no_traceback(stderr)
    assert seconds < CTRL_C_S + LOAD_MARGIN_S, seconds


@pytest.mark.slow
@pytest.mark.gui
@needs_xdotool
def test_ctrl_c_while_a_window_opens_closes_it_as_it_opens(tmp_path):
    """Before the window is mapped (its view building, an engine importing), Ctrl+C raises in no
    callback: the window closes as soon as its event loop runs, with the same line and status."""
    with Running(*WINDOWS["engines"], env=window_env(tmp_path)) as child:
        deadline = time.monotonic() + OPEN_S
        while "QtWidgets" not in mapped(child.proc.pid):  # Qt loaded: the window is being built
            assert time.monotonic() < deadline and child.proc.poll() is None
            time.sleep(0.05)
        assert not visible(child.proc.pid)
        seconds, stderr = interrupt(child)
    assert child.proc.returncode == 130, stderr
    no_traceback(stderr)
    assert seconds < OPEN_S


def mapped(pid: int) -> str:
    """The libraries the child has mapped (/proc/PID/maps)."""
    try:
        with open(f"/proc/{pid}/maps") as fh:
            return fh.read()
    except OSError:
        return ""


# ------------------------------------------------------------------ item 9: --quit-after past a Qt timer's range

#: a refusal before any window or recording: the parser's start-up and the check, on a loaded machine (s)
REFUSAL_S = 20.0


def timed(*args, **kwargs):
    began = time.monotonic()
    res = tumble(*args, **kwargs)
    return res, time.monotonic() - began


@pytest.mark.parametrize("command", [("gui", "t-handle"), ("replay", "phone-throws")], ids=["gui", "replay"])
@pytest.mark.parametrize("value", ["1e9", "1000000.5", "-1", "inf"])
def test_quit_after_past_a_timers_range_is_refused_in_one_line(command, value, tmp_path):
    res, seconds = timed(*command, "--quit-after", value, env=window_env(tmp_path))
    refused(res, "--quit-after must be a number of seconds from 0 to 1,000,000", value, quiet=True)
    assert seconds < REFUSAL_S


def test_the_window_launchers_check_quit_after_too():
    """tumble.gui.launch is also what the API's windows call: the same rule, before any window."""
    from tumble.gui.launch import check_quit_after

    check_quit_after(None)
    check_quit_after(1e6)
    for bad in (1e6 + 1, float("nan"), -0.5):
        with pytest.raises(ParameterError, match="--quit-after must be a number of seconds from 0 to 1,000,000"):
            check_quit_after(bad)


# ------------------------------------------------------------------ item 15: --screenshot checked before the window


@pytest.mark.parametrize("command", [("gui", "t-handle"), ("replay", "phone-throws")], ids=["gui", "replay"])
@pytest.mark.parametrize("shot, words", [
    ("/proc/x.png", "must be in a writable folder"),
    ("./", "must name a file"),
    ("a" * 296 + ".png", "must have a file name of at most"),
    ("x.jpg", "must end in .png"),
    ("missing-folder/x.png", "must be in an existing folder"),
], ids=["proc", "folder", "300 characters", "jpeg", "no folder"])
def test_a_screenshot_path_is_checked_before_the_window_opens(command, shot, words, tmp_path):
    """Each failed with exit 1 after the window's 6 s (x.jpg got PNG data): now one line, exit 2,
    before a window or a recording's fit; nothing written where the name points."""
    res, seconds = timed(*command, "--screenshot", shot, "--quit-after", "0", env=window_env(tmp_path), cwd=tmp_path)
    refused(res, "--screenshot " + words, unwritten=[tmp_path / "x.jpg"] if shot == "x.jpg" else [], quiet=True)
    assert seconds < REFUSAL_S


@pytest.mark.parametrize("option", [("--screenshot", "x.png"), ("--quit-after", "1")])
def test_replay_out_refuses_the_windows_options(option, tmp_path):
    """--out writes off screen: --screenshot or --quit-after beside it did nothing, without a word."""
    gif = tmp_path / "slow.gif"
    res, seconds = timed("replay", "phone-throws", "--out", gif, *option, cwd=tmp_path)
    refused(res, f"{option[0]} must go with the window, not with --out", unwritten=[gif, tmp_path / "x.png"], quiet=True)
    assert seconds < REFUSAL_S
