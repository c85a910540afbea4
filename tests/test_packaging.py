"""A wheel carries every subpackage and the shipped resources; the version is one string."""

import subprocess
import sys
import zipfile

import pytest
from conftest import ROOT, tumble

from tumble import __version__

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def test_every_subpackage_is_listed_for_the_wheel(root):
    listed = set(tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    on_disk = {
        ".".join(("tumble", *init.parent.relative_to(root / "app").parts))
        for init in (root / "app").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert on_disk <= listed, f"add {sorted(on_disk - listed)} to [tool.setuptools] packages"
    assert "tumble.resources" in listed




@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--disable-pip-version-check", "--no-deps", "-w", str(out), str(ROOT)],
        check=True, capture_output=True, timeout=300,
    )
    (path,) = out.glob("tumble-*.whl")
    return path


def test_the_wheel_carries_presets_and_meshes(root, wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for folder in ("scenarios", "meshes", "recordings"):
        for shipped in (root / "resources" / folder).iterdir():
            if shipped.suffix in (".toml", ".stl", ".zip", ".csv"):
                assert f"tumble/resources/{folder}/{shipped.name}" in names
    for module in (root / "app").rglob("*.py"):  # every module of every room, at its place
        assert "tumble/" + module.relative_to(root / "app").as_posix() in names
    # the shared-flip page (tumble export --out FILE.html): its template, the vendored viewer and its licence
    assert {"tumble/export/viewer_page.html", "tumble/resources/viewer/three-viewer.min.js",
            "tumble/resources/viewer/LICENSE-three.txt", "tumble/resources/viewer/VERSION.txt"} <= names
    assert not any(name.startswith("resources/") for name in names), "resources must install inside tumble/"
    assert not any(name.startswith("app/") for name in names), "nothing installs as the top-level name app"


def test_the_wheel_has_the_package_version(wheel):
    assert wheel.name.startswith(f"tumble-{__version__}-")


def test_version_flag():
    done = tumble("--version", timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"tumble {__version__}"


def test_presets_are_found_through_the_installed_package():
    from tumble.scenario.files import PRESETS_DIR, preset_names

    assert PRESETS_DIR.is_dir()
    assert {"t-handle", "book", "tennis-racket"} <= set(preset_names())
