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
from .document import from_dict, to_dict
from .schema import Scenario

#: largest scenario file read (characters): a scenario is well under a few kilobytes (a
#: mesh body's triangles live in their own file)
MAX_TOML_CHARS = 1_000_000
#: deepest nesting of arrays and inline tables (a scenario needs 1; tomllib recurses once
#: per level and would hit Python's recursion limit near 1000)
MAX_TOML_DEPTH = 32
#: most parts of one dotted key (a scenario needs 2; tomllib's work and memory grow with
#: the square of it: 20,000 parts took 1.6 GB)
MAX_KEY_PARTS = 32


def _resources_dir() -> Path:
    """The shipped resources: ``app/resources`` in an installed wheel, else a checkout's ``resources/``."""
    installed = Path(str(importlib.resources.files("tumble").joinpath("resources")))
    if (installed / "scenarios").is_dir():
        return installed
    return Path(__file__).resolve().parents[2] / "resources"


RESOURCES_DIR = _resources_dir()
PRESETS_DIR = RESOURCES_DIR / "scenarios"


def preset_names() -> list[str]:
    """Names of the shipped presets, sorted."""
    return sorted(p.stem for p in PRESETS_DIR.glob("*.toml"))


def presets() -> list[tuple[str, str]]:
    """(name, one-line description) of every preset, read from its file alone: building a mesh
    preset's body would import trimesh and take seconds (the presets are checked by the tests)."""
    return [(name, str(tomllib.loads((PRESETS_DIR / f"{name}.toml").read_text(encoding="utf-8"))
                       .get("description", ""))) for name in preset_names()]


def plain_name(name: str) -> str:
    """A scenario's name without the notes the window appends in brackets at its end
    ("T-handle (edited)", "Book (from the stability map) (edited)" -> "T-handle", "Book");
    "" if nothing else is left."""
    base = str(name)
    while True:  # notes at the end, innermost last: "X (edited) (edited)"
        stripped = re.sub(r"\s*\([^()]*\)\s*$", "", base)
        if stripped == base:
            break
        base = stripped
    return base.strip()


def resolve(name_or_path) -> Path:
    """Path of a preset name or an existing TOML file; raises :class:`ParameterError`."""
    text = str(name_or_path)
    candidate = PRESETS_DIR / f"{text}.toml"
    if "/" not in text and not text.endswith(".toml") and _is_file(candidate):
        return candidate
    path = Path(text)
    if _is_file(path):
        return path
    raise ParameterError(
        "scenario", text, "be a preset name (" + ", ".join(preset_names()) + ") or an existing TOML file"
    )


def _is_file(path: Path) -> bool:
    """Whether ``path`` is a regular file; False for a name too long for the system or
    one with a NUL in it (pathlib raises for those)."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def check_toml_shape(text: str, source: str = "scenario") -> None:
    """Refuse TOML text that would cost the parser more than a scenario can need: longer
    than :data:`MAX_TOML_CHARS`, arrays and inline tables nested deeper than
    :data:`MAX_TOML_DEPTH`, a dotted key of more than :data:`MAX_KEY_PARTS` parts.

    A small scanner of TOML's lexical structure (strings, comments, keys, values; TOML
    1.0) counts them before ``tomllib`` sees the text. Text that is not valid TOML may be
    counted loosely; the parser then refuses it.
    """
    if len(text) > MAX_TOML_CHARS:
        raise ParameterError(source, f"{len(text):,} characters", f"be at most {MAX_TOML_CHARS:,} characters long")
    n, i = len(text), 0
    stack = []          # open '[' (array) and '{' (inline table) of values
    key, parts = True, 1  # reading a key (line start, or in an inline table), its parts so far
    line = 1
    while i < n:
        c = text[i]
        if c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c in "\"'":
            i = _string_end(text, i)
            continue
        if c == "\n":
            line += 1
            if not stack:
                key, parts = True, 1
        elif key:
            if c == ".":
                parts += 1
                if parts > MAX_KEY_PARTS:
                    raise ParameterError(source, f"a dotted key on line {line}",
                                         f"have keys of at most {MAX_KEY_PARTS} dotted parts")
            elif c == "=":
                key, parts = False, 1
            elif c == "}" and stack and stack[-1] == "{":  # an empty inline table
                stack.pop()
                key = False
        elif c in "[{":
            stack.append(c)
            if len(stack) > MAX_TOML_DEPTH:
                raise ParameterError(source, f"nesting on line {line}",
                                     f"nest arrays and inline tables at most {MAX_TOML_DEPTH} deep")
            if c == "{":
                key, parts = True, 1
        elif c in "]}":
            if stack:
                stack.pop()
        elif c == "," and stack and stack[-1] == "{":
            key, parts = True, 1
        i += 1


def _string_end(text: str, i: int) -> int:
    """Index just after the TOML string that starts at ``text[i]`` (a quote); an
    unterminated one ends at the end of its line (single-line) or of the text."""
    q = text[i]
    if text.startswith(q * 3, i):  # multi-line: ends at the first unescaped triple quote
        j = i + 3
        while True:
            k = text.find(q * 3, j)
            if k < 0:
                return len(text)
            if q == '"' and _escaped(text, k):
                j = k + 1
                continue
            end = k + 3
            while end < len(text) and end < k + 5 and text[end] == q:  # up to 2 more quotes belong inside
                end += 1
            return end
    j = i + 1
    while j < len(text):
        c = text[j]
        if c == "\n":
            return j
        if c == "\\" and q == '"':
            j += 2
            continue
        if c == q:
            return j + 1
        j += 1
    return j


def _escaped(text: str, k: int) -> bool:
    """Whether ``text[k]`` follows an odd number of backslashes."""
    count = 0
    while k - count - 1 >= 0 and text[k - count - 1] == "\\":
        count += 1
    return count % 2 == 1


def loads_toml(text: str, default_name: str = "untitled", source: str = "scenario", base_dir=None) -> Scenario:
    """Scenario from TOML text; a relative mesh path is looked up in ``base_dir``."""
    check_toml_shape(text, source)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ParameterError(source, str(err).splitlines()[0], "be valid TOML") from None
    except ValueError:  # int() of a TOML integer past Python's 4300-digit limit
        raise ParameterError(source, "an integer of more than 4300 digits",
                             "hold integers of at most 4300 digits") from None
    except RecursionError:  # pragma: no cover - check_toml_shape bounds the depth first
        raise ParameterError(source, "deep nesting",
                             f"nest arrays and inline tables at most {MAX_TOML_DEPTH} deep") from None
    return from_dict(data, default_name, base_dir=base_dir)


def load(name_or_path) -> Scenario:
    """Scenario from a preset name or a TOML path."""
    path = resolve(name_or_path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read(MAX_TOML_CHARS + 1)  # a longer file is refused without reading it all
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
