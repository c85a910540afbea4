"""A command starts with only what it needs: headless commands import no drawing code, the
static list of view names the parser offers is the registry's, ``presets`` builds no body."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import refused, tumble

#: top-level packages only a drawing command may import
DRAWING = ("PyQt5", "vtkmodules", "pyvista", "pyvistaqt", "pyqtgraph", "matplotlib", "trimesh")


def _imported_by(*argv, tmp_path) -> set[str]:
    """Top-level modules imported by ``tumble ARGV`` run in a child from ``tmp_path``."""
    code = ("import sys, json\nfrom tumble.cli.core import main\nstatus = main(sys.argv[1:])\n"
            "print(json.dumps({'status': status, 'modules': sorted({m.split('.')[0] for m in sys.modules})}),"
            " file=sys.stderr)")
    res = subprocess.run([sys.executable, "-c", code, *argv], cwd=tmp_path, capture_output=True, text=True,
                         timeout=600)
    report = json.loads(res.stderr.strip().splitlines()[-1])
    assert report["status"] == 0, res.stderr
    return set(report["modules"])


@pytest.mark.parametrize("argv", [("presets",), ("inspect", "t-handle", "--json"),
                                  ("simulate", "t-handle", "--duration", "0.5", "--out", "x.csv")])
def test_a_headless_command_imports_no_drawing_code(argv, tmp_path):
    assert not _imported_by(*argv, tmp_path=tmp_path) & set(DRAWING)


def test_the_parsers_view_names_are_the_registrys():
    from tumble.api.arguments import VIEW_NAMES
    from tumble.views import view_names

    assert list(VIEW_NAMES) == view_names()


def test_export_still_offers_every_views_options(capsys):
    from tumble.cli.core import build_parser
    from tumble.views import get_view, view_names

    for argv in (None, ["export", "t-handle", "--help"]):
        with pytest.raises(SystemExit):
            build_parser(argv).parse_args(["export", "--help"])
        text = capsys.readouterr().out
        flags = [option.flag for name in view_names() for option in get_view(name).options]
        assert "--view" in text and flags and all(flag in text for flag in flags)
    with pytest.raises(SystemExit):
        build_parser(["presets"]).parse_args(["--help"])
    assert "export" in capsys.readouterr().out  # the top-level help still lists it


def test_presets_lists_each_presets_own_description():
    from tumble.scenario import load, presets

    assert presets() and all(desc == load(name).description for name, desc in presets())


@pytest.mark.parametrize("argv", [(), ("gui", "t-handle"), ("gui", "--screenshot", "x.png"), ("bench", "--gui")])
def test_no_display_is_one_line_saying_how_to_run_headless_and_exit_2(argv, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["XDG_CONFIG_HOME"] = str(tmp_path)  # no last scenario of the user's
    refused(tumble(*argv, cwd=tmp_path, env=env, timeout=300), "no display found", "xvfb-run -a tumble", "tumble export")
    assert not list(tmp_path.glob("*.png"))
