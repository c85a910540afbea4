"""Scenario files: presets shipped in ``resources/scenarios``, TOML parsing and writing.

``resources/`` sits at the top of the repository and is installed as the package data
``app/resources`` (``pyproject.toml`` maps it), so the presets are found the same way in a
wheel, an editable install and a source checkout.
"""

from __future__ import annotations

import importlib.resources
import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

import tomli_w

from ..atomic import write_text
from ..physics.errors import ParameterError
from .schema import Scenario, from_dict, to_dict



def _resources_dir() -> Path:
    """The shipped resources: ``app/resources`` in an installed wheel, else a checkout's ``resources/``."""
    installed = Path(str(importlib.resources.files("app").joinpath("resources")))
    if (installed / "scenarios").is_dir():
        return installed
    return Path(__file__).resolve().parents[2] / "resources"


RESOURCES_DIR = _resources_dir()
PRESETS_DIR = RESOURCES_DIR / "scenarios"


def preset_names() -> list[str]:
    """Names of the shipped presets, sorted."""
    return sorted(p.stem for p in PRESETS_DIR.glob("*.toml"))


def presets() -> list[tuple[str, str]]:
    """(name, one-line description) of every preset."""
    return [(name, load(name).description) for name in preset_names()]


def resolve(name_or_path) -> Path:
    """Path of a preset name or an existing TOML file; raises :class:`ParameterError`."""
    text = str(name_or_path)
    candidate = PRESETS_DIR / f"{text}.toml"
    if "/" not in text and not text.endswith(".toml") and candidate.is_file():
        return candidate
    path = Path(text)
    if path.is_file():
        return path
    raise ParameterError(
        "scenario", text, "be a preset name (" + ", ".join(preset_names()) + ") or an existing TOML file"
    )


def loads_toml(text: str, default_name: str = "untitled", source: str = "scenario", base_dir=None) -> Scenario:
    """Scenario from TOML text; a relative mesh path is looked up in ``base_dir``."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ParameterError(source, str(err).splitlines()[0], "be valid TOML") from None
    return from_dict(data, default_name, base_dir=base_dir)


def load(name_or_path) -> Scenario:
    """Scenario from a preset name or a TOML path."""
    path = resolve(name_or_path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ParameterError("scenario", str(path), f"be a readable UTF-8 file ({err.__class__.__name__})") from None
    return loads_toml(text, default_name=path.stem, source=str(path), base_dir=path.resolve().parent)


#: tomli_w writes every array one item per line; a flat array of numbers of up to this many
#: items (vectors, quaternions, inertia 6-vectors) is written on one line instead
INLINE_ARRAY_ITEMS = 8
#: such an array as tomli_w writes it: "[", then one number (TOML int or float) per line
_NUMBER_LINES = re.compile(r"\[\n((?:[ ]+[-+]?(?:inf|nan|[0-9][0-9_]*(?:\.[0-9_]+)?(?:[eE][-+]?[0-9_]+)?),\n)+)[ ]*\]")


def _inline_number_arrays(text: str) -> str:
    """``text`` with each short flat array of numbers on one line: ``[0.0, 0.0, 1.0]``."""
    def inline(match: re.Match) -> str:
        items = [line.strip().rstrip(",") for line in match.group(1).splitlines()]
        return "[" + ", ".join(items) + "]" if len(items) <= INLINE_ARRAY_ITEMS else match.group(0)

    return _NUMBER_LINES.sub(inline, text)


def dumps(scenario: Scenario, base_dir=None) -> str:
    """TOML text of a scenario (a relative mesh path rewritten relative to ``base_dir``),
    vectors on one line each."""
    return _inline_number_arrays(tomli_w.dumps(to_dict(scenario, base_dir)))


def save(scenario: Scenario, path) -> None:
    """Write a scenario as TOML, atomically."""
    write_text(path, dumps(scenario, Path(path).parent))
