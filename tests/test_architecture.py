"""The house: the layering contracts of pyproject.toml hold (import-linter), no module imports itself
round a circle, the root stays small and every room says what it holds."""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CHILD_S, ROOT


def test_import_contracts_hold():
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    assert exe, "import-linter is part of the test extra"
    res = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=CHILD_S)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "0 broken" in res.stdout


def _modules():
    """Every module of app/ by its dotted name: (path, is a package)."""
    found = {}
    for path in (ROOT / "app").rglob("*.py"):
        parts = list(path.relative_to(ROOT / "app").with_suffix("").parts)
        package = parts[-1] == "__init__"
        found[".".join(["tumble", *(parts[:-1] if package else parts)])] = (path, package)
    return found


def _imports(name, path, package, modules):
    """The modules of app/ that ``name`` imports anywhere in its file: at the top, inside functions,
    under ``if``; ``from X import y`` counts X.y when y is a module, else X."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = alias.name
                while target not in modules and "." in target:
                    target = target.rsplit(".", 1)[0]
                found.add(target)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if package else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                found.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in modules else target)
    return {m for m in found if m in modules and m != name}


def test_no_circle_of_imports_counting_imports_inside_functions():
    modules = _modules()
    graph = {name: _imports(name, path, package, modules) for name, (path, package) in modules.items()}
    # Tarjan's strongly connected components, iteratively: a component of two or more is a circle
    index, low, on_stack, stack, circles, counter = {}, {}, set(), [], [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        circles.append(sorted(component))
    assert circles == [], circles


def test_the_circle_finder_finds_a_circle(tmp_path, monkeypatch):
    """The check above is not vacuous: two modules importing each other inside functions are found."""
    app = tmp_path / "app"
    (app / "room").mkdir(parents=True)
    (app / "__init__.py").write_text("")
    (app / "room" / "__init__.py").write_text('"""A room."""\n')
    (app / "room" / "a.py").write_text("def f():\n    from .b import g\n")
    (app / "room" / "b.py").write_text("def g():\n    from . import a\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    modules = _modules()
    graph = {name: _imports(name, path, package, modules) for name, (path, package) in modules.items()}
    assert graph["tumble.room.a"] == {"tumble.room.b"} and graph["tumble.room.b"] == {"tumble.room.a"}
    with pytest.raises(AssertionError):
        test_no_circle_of_imports_counting_imports_inside_functions()


def test_the_root_keeps_at_most_four_modules_and_every_room_says_what_lives_there():
    root_modules = sorted(p.name for p in (ROOT / "app").glob("*.py"))
    assert len(root_modules) <= 4, root_modules
    for init in (ROOT / "app").rglob("__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc and doc.strip(), f"{init.relative_to(ROOT)} says nothing of what lives there"
