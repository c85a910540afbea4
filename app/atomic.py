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

#: bytes of the target's name kept in the temporary file's name (the rest is random), so
#: that a target whose name is as long as the system allows still has a temporary
TEMP_NAME_KEEP = 80
#: bytes the longest name of a written file may exceed the target's own (a PNG sequence's
#: ``_0000`` and up to nine-digit frame numbers)
NAME_SPARE = 10


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
    kept = target.name.encode("utf-8", "surrogateescape")[:TEMP_NAME_KEEP].decode("utf-8", "ignore")
    fd, tmp = tempfile.mkstemp(prefix=f".{kept}.", suffix=target.suffix if suffix is None else suffix, dir=folder)
    os.close(fd)
    try:
        os.chmod(tmp, published_mode(target))
        yield Path(tmp)
        os.replace(tmp, target)
    except BaseException as err:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(err, OSError) and str(err.filename) == tmp:  # the user knows the target, not our temporary
            err.filename = str(target)
        raise


def write_text(target, text: str) -> None:
    """Write ``text`` to ``target`` atomically (UTF-8)."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


def can_create_in(folder) -> bool:
    """Whether a file can be made in ``folder`` (root passes os.access on read-only mounts,
    and /proc takes no new files)."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".tumble-probe-", dir=folder)
    except OSError:
        return False
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(probe)
    return True


def check_target(out, field: str = "out") -> Path:
    """The path of a file to write, checked before any work; raises
    :class:`~app.physics.errors.ParameterError` naming ``field``.

    Refused: a name ending in a slash (it names a folder; the file would be written over
    the folder's namesake), a folder, a missing or read-only folder, and a name or path
    longer than the system takes.
    """
    from .physics.errors import ParameterError

    text = os.fspath(out)
    if not text or text.endswith(("/", os.sep)):
        raise ParameterError(field, text, "name a file (a trailing slash names a folder)")
    if "\0" in text:
        raise ParameterError(field, text, "be a path without NUL characters")
    path = Path(text)
    folder = path.parent if str(path.parent) else Path(".")
    try:
        name_max = os.pathconf(folder if folder.is_dir() else ".", "PC_NAME_MAX")
    except (OSError, ValueError):
        name_max = 255
    if len(path.name.encode("utf-8", "surrogateescape")) > name_max - NAME_SPARE:
        raise ParameterError(field, text, f"have a file name of at most {name_max - NAME_SPARE} bytes")
    try:
        if not folder.is_dir():
            raise ParameterError(field, text, "be in an existing folder")
        if path.is_dir():
            raise ParameterError(field, text, "be a file, not a folder")
        if not os.access(folder, os.W_OK | os.X_OK) or not can_create_in(folder):
            raise ParameterError(field, text, "be in a writable folder")
    except OSError as err:  # a path longer than the system takes, a loop of links
        raise ParameterError(field, text, f"be a path the system accepts ({err.strerror or err})") from None
    return path
