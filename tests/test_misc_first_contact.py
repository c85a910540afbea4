"""What a new user met on first contact (issue 19, section 2), outside the window: each test
failed before its fix."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from tumble.export import ExportSettings, plan_export
from tumble.physics.errors import ParameterError
from tumble.scenario import SolverSpec, load

ROOT = Path(__file__).resolve().parents[1]


def short_run(seconds: float):
    """The T-handle run for ``seconds``, as a fitted flight lasts (0.87 s)."""
    sc = load("t-handle")
    return sc.replace(solver=SolverSpec(sc.solver.integrator, sc.solver.dt, seconds))


@pytest.mark.parametrize("duration, start", [(3.0, 0.0), (10.0, 0.0), (2.0, 0.3)])
def test_a_clip_longer_than_the_run_names_the_speed_that_shows_it_all(tmp_path, duration, start):
    sc = short_run(0.87)
    with pytest.raises(ParameterError) as info:
        plan_export(sc, ExportSettings(out=tmp_path / "fit.gif", duration=duration, start=start))
    match = re.search(r"speed ([0-9.]+) shows the whole run", str(info.value))
    assert match, str(info.value)
    speed = float(match[1])
    # the speed it names plans without an error and shows all but the last frame's share of the run
    plan = plan_export(sc, ExportSettings(out=tmp_path / "fit.gif", duration=duration, start=start, speed=speed))
    assert plan.end <= 0.87
    assert plan.start + plan.duration * speed >= start + 0.9 * (0.87 - start)


def test_the_readme_and_the_help_name_only_the_png_files_an_export_writes(tmp_path):
    """``--out NAME.png`` writes NAME_0000.png, ... and no NAME.png: no text promises one."""
    from tumble.cli import build_parser
    from tumble.export import sequence_paths

    written = {p.name for p in sequence_paths(tmp_path / "NAME.png", 3)}
    assert "NAME.png" not in written and "NAME_0000.png" in written
    readme = " ".join(ROOT.joinpath("README.md").read_text(encoding="utf-8").split())
    sentence = readme[readme.index("`NAME_0000.png`") - 80:readme.index("`NAME_0000.png`") + 120]
    assert "beside `NAME.png`" not in sentence and "no file `NAME.png`" in sentence, sentence
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    help_out = next(a.help for a in sub.choices["export"]._actions if a.dest == "out")
    assert "beside it" not in help_out and "no FILE.png itself" in help_out


NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?")


def negative_zeros(text: str) -> list:
    """Number tokens of ``text`` that read as a negative zero ("-0", "-0.00")."""
    return [tok for tok in NUMBER.findall(text) if tok.startswith("-") and float(tok) == 0]


def test_inspect_prints_no_negative_zero(capsys):
    from tumble.cli import main
    from tumble.scenario import preset_names

    for name in preset_names():
        assert main(["inspect", name]) == 0
        text = capsys.readouterr().out
        assert not negative_zeros(text), (name, text)
        assert main(["inspect", name, "--json"]) == 0
        info = json.loads(capsys.readouterr().out)

        def walk(x):
            if isinstance(x, float):
                assert not (x == 0 and math.copysign(1.0, x) < 0), (name, info)
            elif isinstance(x, (list, tuple)):
                for y in x:
                    walk(y)
            elif isinstance(x, dict):
                for y in x.values():
                    walk(y)

        walk(info)


HUGE_DAMPED = """
name = "huge"
[body]
shape = "box"
mass = 1e100
size = [1e90, 2e90, 3e90]
[body.damper]
inertia = 1.0
coefficient = 1.0
[initial]
angular_velocity = [1.0, 0.0, 0.0]
"""


def test_inspect_json_is_json_for_a_body_whose_momentum_squared_overflows(tmp_path, capsys):
    """|L| ~ 1e280 overflows |L|^2, but the final energy |L|^2 / (2 (I_max + J)) is below E0
    (it is the least energy |L| allows), so it is finite: printed, never as Infinity."""
    from tumble.cli import main

    path = tmp_path / "huge.toml"
    path.write_text(HUGE_DAMPED, encoding="utf-8")
    assert main(["inspect", str(path), "--json"]) == 0
    text = capsys.readouterr().out
    info = json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} is not JSON: {text}"))
    assert 0 < info["final_energy"] <= info["E0"]
    # the body spins about its major axis already: nothing to drain
    assert info["final_energy"] == pytest.approx(info["E0"], rel=1e-12)


@pytest.mark.parametrize("mesh", ["a\\u0000b.stl", "x" * 5000 + ".stl", ("d" * 300 + "/") * 20 + "m.stl"])
def test_a_mesh_path_the_system_cannot_take_is_one_line_exit_2(tmp_path, mesh):
    from cli_run import tumble

    path = tmp_path / "nul.toml"
    path.write_text(f'name = "nul"\n[body]\nshape = "mesh"\nmesh = "{mesh}"\nmass = 1.0\n', encoding="utf-8")
    done = tumble("inspect", path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tumble: error: body.mesh must ") and "internal" not in lines[0], lines
