"""The tests' shared helpers, one of each: the repository root, the longest GUI wait, the real
command line in a child process as a user types it (run to its end, or kept running and read
line by line, every wait with its deadline), and the one check of a refusal (exit 2, one line,
nothing written).

``conftest.py`` hands them to tests as fixtures (``root``, ``refused``, ``simulate_refuses``);
test modules import them from here at module level (``tests/`` is on ``sys.path`` through its
conftest), because a ``conftest`` module is not importable by name: ``tests/gui/conftest.py``
takes the name ``conftest`` as soon as it is collected.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: the longest a GUI test waits for one thing (a first frame, a signal, a run's end) (ms): the
#: slowest first frame of a view measured here took about a third of it on a busy machine
WAIT_MS = 30_000

#: the longest a test waits for a command to end, or for a running one's next line (s)
CHILD_S = 180


def headless_env(**extra) -> dict:
    """This environment without a display, as on a server (plus ``extra`` variables)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.update(extra)
    return env


def _command(args) -> list[str]:
    return [sys.executable, "-m", "tumble", *map(str, args)]


def _env(env):
    """``env``, or this environment, without TUMBLE_DEBUG (a traceback would hide the one line)."""
    env = dict(os.environ if env is None else env)
    env.pop("TUMBLE_DEBUG", None)
    return env


def tumble(*args, env=None, cwd=ROOT, timeout=CHILD_S, input=None) -> subprocess.CompletedProcess:
    """``tumble ARGS`` run to its end in a child, from ``cwd`` (the repository root), in this
    environment (or ``env``); fails the test past ``timeout`` seconds."""
    return subprocess.run(_command(args), cwd=cwd, env=_env(env), capture_output=True, text=True, timeout=timeout,
                          input=input)


def tumble_headless(*args, env=None, timeout=CHILD_S) -> subprocess.CompletedProcess:
    """``tumble ARGS`` with no display (or in ``env``), as an export runs on a server."""
    return tumble(*args, env=env or headless_env(), timeout=timeout)


class Running:
    """``tumble ARGS`` kept running in a child: its stdout read line by line (each line within a
    deadline), stdin open when asked for; killed on leaving a ``with`` block if still running.

    Two daemon threads drain stdout and stderr, so that neither pipe ever fills and blocks the child."""

    def __init__(self, *args, env=None, cwd=ROOT, stdin=False):
        self.proc = subprocess.Popen(_command(args), cwd=cwd, env=_env(env), text=True, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, stdin=subprocess.PIPE if stdin else None)
        self._lines: queue.Queue = queue.Queue()
        self._err: list[str] = []
        self._readers = [threading.Thread(target=self._drain, args=(self.proc.stdout, self._lines.put), daemon=True),
                         threading.Thread(target=self._drain, args=(self.proc.stderr, self._err.append), daemon=True)]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _drain(pipe, put):
        for line in pipe:
            put(line)
        put(None)

    def readline(self, timeout=CHILD_S) -> str:
        """The child's next line of stdout ('' once it has closed stdout); fails the test when
        none comes within ``timeout`` seconds."""
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"tumble printed no line within {timeout} s") from None
        if line is None:
            self._lines.put(None)
            return ""
        return line

    def send(self, text: str) -> None:
        self.proc.stdin.write(text)
        self.proc.stdin.flush()

    def finish(self, timeout=CHILD_S) -> tuple[str, str]:
        """(rest of stdout, all of stderr) once the child has ended, within ``timeout`` seconds."""
        self.proc.wait(timeout=timeout)
        for reader in self._readers:
            reader.join(timeout)
        rest = []
        while (line := self.readline(timeout)) != "":
            rest.append(line)
        return "".join(rest), "".join(line for line in self._err if line is not None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=CHILD_S)
        for reader in self._readers:
            reader.join(CHILD_S)
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()


def refused(res, *words, unwritten=(), quiet=False) -> str:
    """The one refusal check: ``res`` (a finished command: ``returncode``, ``stderr``) exited 2
    with a single line on stderr holding every one of ``words``, none of the files ``unwritten``
    exists (or kept its old text, given as ``(path, text)``), and with ``quiet`` nothing went to
    stdout. Returns the line."""
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1, (res.returncode, res.stderr)
    for word in words:
        assert word in lines[0], (word, lines[0])
    assert "Traceback" not in res.stderr
    for item in unwritten:
        if isinstance(item, tuple):
            assert Path(item[0]).read_text() == item[1], f"{item[0]} changed"
        else:
            assert not Path(item).exists(), f"{item} was written"
    if quiet:
        assert res.stdout == "", res.stdout
    return lines[0]


class Ran:
    """A finished in-process command, shaped as :class:`subprocess.CompletedProcess` is."""

    def __init__(self, returncode: int, stdout: str, stderr: str):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def tumble_here(capsys, *args) -> Ran:
    """``tumble ARGS`` run in this process (the parser and ``main`` as the entry point calls them)."""
    from tumble.cli.core import main

    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return Ran(status, out, err)
