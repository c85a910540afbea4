"""Atomic file writes: write to a temporary file beside the target, then rename over it.

A failed or cancelled write leaves no partial file and never replaces a good one.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


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
