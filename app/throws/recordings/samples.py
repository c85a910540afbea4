"""The shipped sample recordings (``resources/recordings``): their names, what each is, its true body.

Each sample is a recording file (a phyphox export ``.zip`` or a ``.csv``) with a TOML beside it
of the same stem naming what it is, the body it was made with (the true inertia ratios,
ascending, the largest 1) and how it was made (the generator and its seed:
:mod:`app.throws.benches.samples` writes both). ``tumble samples`` lists them, and every command
that takes a recording takes a sample's name too: :func:`find` turns a name that is no file
into its sample.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from ...scenario.files import RESOURCES_DIR

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SAMPLES_DIR = RESOURCES_DIR / "recordings"
#: the recording files a sample may be (the TOML beside one names it)
SAMPLE_SUFFIXES = (".zip", ".csv")


@dataclass(frozen=True)
class Sample:
    """One shipped recording: ``name`` (what the commands take), ``what`` (one line), ``path``
    (the recording file), the true ``ratios`` (ascending, the largest 1), ``made`` (how) and
    ``seed`` (the generator's)."""

    name: str
    what: str
    path: Path
    ratios: tuple
    made: str
    seed: int

    def to_dict(self) -> dict:
        """The object ``tumble samples --json`` lists."""
        return {"name": self.name, "what": self.what, "file": self.path.name, "ratios": list(self.ratios),
                "made": self.made, "seed": self.seed}


def samples() -> list[Sample]:
    """Every shipped sample, by name (none when the folder is missing)."""
    out = []
    for meta in sorted(SAMPLES_DIR.glob("*.toml")) if SAMPLES_DIR.is_dir() else ():
        doc = tomllib.loads(meta.read_text(encoding="utf-8"))
        path = meta.parent / str(doc["file"])
        if path.suffix.lower() in SAMPLE_SUFFIXES and path.is_file():
            out.append(Sample(str(doc["name"]), str(doc["what"]), path, tuple(float(r) for r in doc["ratios"]),
                              str(doc["made"]), int(doc["seed"])))
    return out


def sample_names() -> list[str]:
    """The names of the shipped samples."""
    return [s.name for s in samples()]


def find(text) -> Sample | None:
    """The sample named ``text``, or None: a file, folder or link of that name wins (a user's own
    ``phone-throws`` in the current folder is read as given, a dangling link is refused as the
    missing file it names), and a path is never a name."""
    text = str(text)
    if not text or "/" in text or "\\" in text:
        return None
    try:
        if Path(text).exists() or Path(text).is_symlink():
            return None
    except (OSError, ValueError):  # a name too long for the system, or a NUL in it
        return None
    return next((s for s in samples() if s.name == text), None)
