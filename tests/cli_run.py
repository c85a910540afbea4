"""The real command line in a child process, as a user types it: one helper for every test file
(``tests/`` is on ``sys.path`` through its conftest)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def headless_env(**extra) -> dict:
    """This environment without a display, as on a server (plus ``extra`` variables)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.update(extra)
    return env


def tumble(*args, env=None, timeout=180) -> subprocess.CompletedProcess:
    """``tumble ARGS`` run from the repository root in this environment (or ``env``)."""
    return subprocess.run([sys.executable, "-m", "tumble", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def tumble_headless(*args, env=None, timeout=180) -> subprocess.CompletedProcess:
    """``tumble ARGS`` with no display (or in ``env``), as an export runs on a server."""
    return tumble(*args, env=env or headless_env(), timeout=timeout)
