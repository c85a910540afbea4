"""Atomic file writes: write to a temporary file beside the target, then rename over it.

A failed or cancelled write leaves no partial file and never replaces a good one. The
published file gets the permissions of the file it replaces, or those of any new file
(0666 less the umask), not mkstemp's private 0600.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path


def _umask() -> int:
    """The process umask, read without changing it where the system says it (Linux)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def published_mode(target) -> int:
    """Permissions for a file written over ``target``: the old file's, else 0666 less the umask."""
    try:
        return stat.S_IMODE(Path(target).stat().st_mode)
    except OSError:
        return 0o666 & ~_umask()


@contextlib.contextmanager
def atomic_path(target, suffix: str | None = None):
    """Yield a temporary path in the target's folder; on success rename it onto ``target``.

    On any exception (including KeyboardInterrupt) the temporary file is removed and the
    target is untouched. ``suffix`` defaults to the target's own, so writers that choose a
    format by extension (numpy, imageio) still do.
    """
    target = Path(target)
    folder = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=target.suffix if suffix is None else suffix, dir=folder)
    os.close(fd)
    try:
        os.chmod(tmp, published_mode(target))
        yield Path(tmp)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_text(target, text: str) -> None:
    """Write ``text`` to ``target`` atomically (UTF-8)."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")
