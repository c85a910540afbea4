"""No module uses another module's private names (``from m import _x`` or ``m._x``): a helper
shared across modules is public in the module that owns it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import ROOT

APP = ROOT / "app"
#: the packages and modules scanned: all of app/
SCANNED = tuple(sorted(p.name for p in APP.iterdir() if p.is_dir() and (p / "__init__.py").exists())) + tuple(
    sorted(p.name for p in APP.glob("*.py")))


def private_uses(path: Path) -> list[str]:
    """``line: name`` of every private name ``path`` takes from another module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules, found = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                if a.name.startswith("_") and not a.name.startswith("__"):
                    found.append(f"{node.lineno}: from {'.' * node.level}{node.module or ''} import {a.name}")
                else:
                    modules.add(a.asname or a.name)  # maybe a module (from . import exact)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                and isinstance(node.value, ast.Name) and node.value.id in modules):
            found.append(f"{node.lineno}: {node.value.id}.{node.attr}")
    return found


def files():
    for name in SCANNED:
        target = APP / name
        yield from (sorted(target.rglob("*.py")) if target.is_dir() else [target])


#: another package's private modules that one of ours may import, each because that package has
#: no public way to the same thing: numba's C helper tables, whose addresses LLVM is given to map
#: the kernels' saved machine code (numba registers the same ones itself when its compiler starts)
OTHER_PACKAGES_PRIVATE = {
    "physics/compiled/native.py": {"from numba import _dynfunc", "from numba import _helperlib",
                          "from numba.core.runtime import _nrt_python"},
    # the standard library's documented exit without clean-up: after Ctrl+C in a window, once the
    # windows are closed and the line printed, Qt's and VTK's own shutdown would take 1-2 s more
    "cli/core.py": {"os._exit"},
    "gui/common/interrupt.py": {"os._exit"},
    # Ctrl+C while the modules load: the interpreter would unwind a half-done import
    "cli/__init__.py": {"os._exit"},
}


@pytest.mark.parametrize("path", list(files()), ids=lambda p: str(p.relative_to(APP)))
def test_no_private_name_crosses_a_module(path):
    allowed = OTHER_PACKAGES_PRIVATE.get(str(path.relative_to(APP)), set())
    assert [use for use in private_uses(path) if use.split(": ", 1)[1] not in allowed] == []


def test_only_other_packages_private_names_are_allowed():
    """The exceptions name another package's modules, never ours (ours make a shared helper public)."""
    for uses in OTHER_PACKAGES_PRIVATE.values():
        for use in uses:
            module = use.split()[1] if use.startswith("from ") else use.split(".")[0]
            assert not module.startswith((".", "tumble", "app")), use


def test_the_scan_finds_both_forms(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("from .a import ok, _hidden\nfrom . import exact\nx = exact._classify(1)\ny = self._own\n")
    assert private_uses(src) == ["1: from .a import _hidden", "3: exact._classify"]
