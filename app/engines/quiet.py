"""Engines kept quiet: what they print from C (to file descriptors 1 and 2) is captured while they
run, and what matters of it becomes a few one-line notes of the run.

PyBullet prints "pybullet build time" when imported and a b3Warning per refused inertia; MuJoCo
prints a warning per unstable step and DART one per non-finite state (about 2,000 lines for a
gravity of -1e100). Python's ``sys.stdout`` would not see them: they are written by the engines'
C code straight to the descriptors, so the descriptors themselves are pointed at a temporary file
for the length of the run and restored after it, and ``--json`` stays one JSON object.

Thread: the caller's. The descriptors are the whole process's, so they are pointed away only on
the main thread (a command's run): a run on another thread (the engines view's audit) leaves them
alone, or a line the main thread prints meanwhile (Ctrl+C's "interrupted") would be captured too.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import threading
from contextlib import contextmanager

#: most bytes of an engine's output read back for its notes (the rest is counted, not read)
MAX_CAPTURED_BYTES = 1 << 20
#: most notes one run carries (one per kind of line, the most frequent first)
MAX_NOTES = 3
#: longest note (characters)
MAX_NOTE_CHARS = 200
#: lines that say nothing about the run (PyBullet's banner when imported)
NOISE = (re.compile(r"^pybullet build time"),)


@contextmanager
def captured(lines: list):
    """Point file descriptors 1 and 2 at a temporary file while the block runs; on leaving it, put
    the lines written there into ``lines`` (at most :data:`MAX_CAPTURED_BYTES` of them read)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    if threading.current_thread() is not threading.main_thread():
        yield lines
        return
    with tempfile.TemporaryFile() as sink:
        saved = []
        try:
            for fd in (1, 2):
                saved.append((fd, os.dup(fd)))
                os.dup2(sink.fileno(), fd)
        except OSError:  # a descriptor closed (a daemon without stdout): capture nothing
            for fd, copy in saved:
                os.dup2(copy, fd)
                os.close(copy)
            saved = []
        try:
            yield lines
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (AttributeError, OSError, ValueError):
                    pass
            for fd, copy in saved:
                os.dup2(copy, fd)
                os.close(copy)
            if saved:
                sink.seek(0)
                text = sink.read(MAX_CAPTURED_BYTES).decode("utf-8", "replace")
                lines.extend(line.strip() for line in text.splitlines() if line.strip())


#: a terminal's colour codes (DART colours its warnings)
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
#: Bullet's prefix of a message, the source file and line it came from
B3_PREFIX = re.compile(r"^(b3(?:Warning|Error|Printf))\[[^\]]*\]:?\s*")


def _joined(lines: list[str]):
    """The lines, a prefix alone on its line (Bullet's ``b3Warning[file,line]:``) joined to the next."""
    held = ""
    for line in lines:
        line = ANSI.sub("", line)
        line = B3_PREFIX.sub(r"\1: ", line).strip()
        if held:
            line, held = held + line, ""
        if re.fullmatch(r"b3\w+:", line):
            held = line + " "
            continue
        yield line
    if held:
        yield held.strip()


def notes(engine: str, lines: list[str], verb: str = "printed") -> list[str]:
    """At most :data:`MAX_NOTES` one-line notes of what ``engine`` printed (or, with ``verb``
    "warned", the warnings a handler took): one per kind of line (lines that differ only in their
    numbers are one kind), with how many times it came."""
    kinds: dict[str, list] = {}
    for line in _joined(lines):
        if any(p.search(line) for p in NOISE):
            continue
        key = re.sub(r"[-+]?\d[\d.eE+-]*", "#", line)
        kinds.setdefault(key, [0, line])[0] += 1
    out = []
    unit = "line" if verb == "printed" else "time"
    for count, first in sorted(kinds.values(), key=lambda x: -x[0])[:MAX_NOTES]:
        text = "".join(ch if ch.isprintable() else " " for ch in first)
        text = text if len(text) <= MAX_NOTE_CHARS else text[:MAX_NOTE_CHARS - 3] + "..."
        out.append(f"{engine} {verb} {count:,} {unit}s like: {text}" if count > 1 else f"{engine} {verb}: {text}")
    return out
