"""``import tumble``: each name against the command line of the same install (``python -m
tumble`` in a child process), pickling, refusals with the command's own line, and an import
that takes no Qt, VTK, pyvista or matplotlib."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import textwrap
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest
from conftest import ROOT, refused, tumble as cli

import tumble
from tumble.api.draw import export_result

#: CSV numbers are written as their shortest exact decimals (exact round trip); what the two sides compute is the same
#: code on the same numbers, so they agree to the last bit; 1e-12 leaves room for nothing else
TOL = 1e-12


def read_csv(path) -> dict:
    with open(path, encoding="utf-8") as fh:
        header = fh.readline().strip().split(",")
    data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    return {name: data[:, k] for k, name in enumerate(header)}


def cli_error(*args) -> str:
    """The one line ``tumble ARGS`` prints on refusal, without ``tumble: error: ``."""
    line = refused(cli(*args))
    assert line.startswith("tumble: error: "), line
    return line[len("tumble: error: "):]


def test_import_tumble_takes_no_gui_or_plotting_modules():
    code = textwrap.dedent("""
        import sys
        import tumble
        sc = tumble.load("t-handle").with_values({"solver.duration": 1.0})
        run = tumble.simulate(sc)
        tumble.inspect(sc)
        tumble.presets()
        tumble.stability(sc, directions=20, duration=1.0)
        heavy = sorted({m.split(".")[0] for m in sys.modules} & {"PyQt5", "vtk", "vtkmodules", "pyvista",
                                                                  "pyvistaqt", "pyqtgraph", "matplotlib"})
        print(",".join(heavy) or "none")
    """)
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "none"


def test_version_is_the_commands():
    res = cli("--version")
    assert res.stdout.strip() == f"tumble {tumble.__version__}"


def test_presets_are_the_commands():
    res = cli("presets")
    assert res.returncode == 0
    rows = [line.split(None, 1) for line in res.stdout.strip().splitlines()]
    assert {name: desc.strip() for name, desc in rows} == tumble.presets()


@pytest.mark.parametrize("options", [
    {},
    {"integrator": "dop853", "dt": 0.01, "duration": 2.0, "sample": 0.05},
    {"integrator": "splitting", "dt": 0.002, "duration": 1.5, "sample": 0.01,
     "outputs": "AngularVelocity,Rotation,Position,AccelerationLocal", "point": [0.1, -0.02, 0.3]},
])
def test_simulate_columns_are_the_csv_of_the_command(tmp_path, options):
    sc = tumble.load("t-handle")
    if not options:
        sc = sc.with_values({"solver.duration": 2.0})
        sc.save(tmp_path / "short.toml")
    source = str(tmp_path / "short.toml") if not options else "t-handle"
    flags = []
    for key, value in options.items():
        text = ",".join(map(repr, value)) if key == "point" else str(value)
        flags.append(f"--{key}={text}")
    res = cli("simulate", source, *flags, "--out", tmp_path / "x.csv")
    assert res.returncode == 0, res.stderr
    run = tumble.simulate(sc, **options)
    expected = read_csv(tmp_path / "x.csv")
    assert list(run.columns) == list(expected)
    for name, column in expected.items():
        np.testing.assert_allclose(run.columns[name], column, rtol=TOL, atol=TOL, err_msg=name)
    np.testing.assert_array_equal(run.t, run.columns["t"])
    np.testing.assert_array_equal(run.omega, np.column_stack([run.columns[k] for k in ("wx", "wy", "wz")]))
    assert run.q.shape == (len(run.t), 4) and run.L.shape == (len(run.t), 3) and run.E.shape == (len(run.t),)
    assert f"| flips (intermediate-axis reversals) | {len(run.flips)} |" in res.stdout


def test_run_writes_the_commands_files(tmp_path):
    res = cli("simulate", "book", "--duration=1", "--out", tmp_path / "cli.npz")
    assert res.returncode == 0, res.stderr
    run = tumble.simulate("book", duration=1)
    run.to_npz(tmp_path / "api.npz")
    run.to_csv(tmp_path / "api.csv")
    with np.load(tmp_path / "cli.npz") as a, np.load(tmp_path / "api.npz") as b:
        assert list(a) == list(b)
        for key in a:
            np.testing.assert_array_equal(a[key], b[key])
    cli("simulate", "book", "--duration=1", "--out", tmp_path / "cli.csv")
    assert (tmp_path / "cli.csv").read_bytes() == (tmp_path / "api.csv").read_bytes()


def test_the_flips_are_the_ones_the_command_counts(tmp_path):
    res = cli("simulate", "t-handle", "--duration=20", "--out", tmp_path / "x.csv")
    run = tumble.simulate("t-handle", duration=20)
    assert len(run.flips) > 2
    assert f"| flips (intermediate-axis reversals) | {len(run.flips)} |" in res.stdout
    assert f"| observed mean flip period (s) | {np.mean(np.diff(run.flips)):.6f} |" in res.stdout


@pytest.mark.parametrize("name", ["t-handle", "gyrostat", "boxes-complex"])
def test_inspect_is_the_commands_json(name):
    res = cli("inspect", name, "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(json.dumps(tumble.inspect(tumble.load(name)))) == json.loads(res.stdout)


def test_with_values_edits_by_dotted_keys_and_round_trips(tmp_path):
    sc = tumble.load("t-handle")
    edited = sc.with_values({"solver.duration": 5.0, "initial.angular_velocity": [0.1, 6, 0],
                             "body.mass": 2.5})
    assert edited.solver.duration == 5.0 and edited.angular_velocity == (0.1, 6.0, 0.0)
    assert edited.body.mass == 2.5 and sc.solver.duration != 5.0  # a new one; the first is unchanged
    with pytest.raises(dataclasses_frozen()):
        edited.name = "x"
    assert tumble.Scenario.from_dict(edited.to_dict()) == edited
    path = edited.save(tmp_path / "edited.toml")
    assert tumble.load(path) == tumble.Scenario.from_dict(edited.to_dict())
    with_load = tumble.load("gyrostat").with_values({"loads": [{"kind": "torque", "frame": "body",
                                                                 "vector": [0.0, 0.0, 0.01]}]})
    assert with_load.with_values({"loads.0.vector": [0.0, 0.02, 0.0]}).loads[0].vector == (0.0, 0.02, 0.0)


def dataclasses_frozen():
    import dataclasses

    return dataclasses.FrozenInstanceError


def test_scenario_and_run_pickle():
    sc = tumble.load("gyrostat").with_values({"solver.duration": 1.0})
    back = pickle.loads(pickle.dumps(sc))
    assert back == sc and isinstance(back, tumble.Scenario)
    run = tumble.simulate(sc)
    again = pickle.loads(pickle.dumps(run))
    assert list(again.columns) == list(run.columns)
    for name in run.columns:
        np.testing.assert_array_equal(again.columns[name], run.columns[name])
    np.testing.assert_array_equal(again.flips, run.flips)
    assert again.scenario == sc


def test_scenario_and_run_show_themselves_in_jupyter():
    sc = tumble.load("t-handle")
    assert "T-handle" in sc._repr_markdown_()
    html = tumble.simulate(sc, duration=2.0)._repr_html_()
    assert "<b>T-handle</b>" in html and 'src="data:image/png;base64,iVBORw0KGgo' in html  # a PNG's signature


def test_executor_map_of_simulate_over_processes():
    scenarios = [tumble.load("t-handle").with_values({"solver.duration": 1.0 + k / 2}) for k in range(3)]
    with ProcessPoolExecutor(2) as pool:
        runs = list(pool.map(tumble.simulate, scenarios))
    for sc, run in zip(scenarios, runs):
        here = tumble.simulate(sc)
        for name in here.columns:
            np.testing.assert_allclose(run.columns[name], here.columns[name], rtol=TOL, atol=TOL)


def test_a_refusal_crosses_a_process_pool():
    with ProcessPoolExecutor(1) as pool:
        with pytest.raises(tumble.ParameterError) as err:
            list(pool.map(tumble.load, ["no-such-preset"]))
    with pytest.raises(tumble.ParameterError) as here:
        tumble.load("no-such-preset")
    assert str(err.value) == str(here.value)


@pytest.mark.parametrize("flags, call", [
    (["simulate", "nope", "--out", "{out}"], lambda p: tumble.simulate("nope")),
    (["simulate", "t-handle", "--dt=0", "--out", "{out}"], lambda p: tumble.simulate("t-handle", dt=0)),
    (["simulate", "t-handle", "--duration=-1", "--out", "{out}"], lambda p: tumble.simulate("t-handle", duration=-1)),
    (["simulate", "t-handle", "--sample=100", "--out", "{out}"], lambda p: tumble.simulate("t-handle", sample=100)),
    (["simulate", "t-handle", "--sample=0.0015", "--out", "{out}"],
     lambda p: tumble.simulate("t-handle", sample=0.0015)),
    (["simulate", "t-handle", "--outputs", "Foo", "--out", "{out}"],
     lambda p: tumble.simulate("t-handle", outputs="Foo")),
    (["simulate", "t-handle", "--integrator", "xx", "--out", "{out}"],
     lambda p: tumble.simulate("t-handle", integrator="xx")),
    (["simulate", "t-handle", "--point", "1,2,3", "--out", "{out}"],
     lambda p: tumble.simulate("t-handle", point=[1, 2, 3])),
    (["simulate", "t-handle", "--duration=1e9", "--out", "{out}"],
     lambda p: tumble.simulate("t-handle", duration=1e9)),
    (["inspect", "nope"], lambda p: tumble.inspect("nope")),
    (["stability", "t-handle", "--directions=0", "--out", "{npz}"],
     lambda p: tumble.stability("t-handle", directions=0)),
    (["stability", "t-handle", "--duration=0", "--out", "{npz}"],
     lambda p: tumble.stability("t-handle", duration=0)),
    (["export", "t-handle", "--fps=0", "--out", "{gif}"], lambda p: tumble.export("t-handle", p["gif"], fps=0)),
    (["export", "t-handle", "--overlay", "clock", "--out", "{gif}"],
     lambda p: tumble.export("t-handle", p["gif"], overlay="clock")),
    (["export", "t-handle", "--size", "642x360", "--duration=1e6", "--out", "{gif}"],
     lambda p: tumble.export("t-handle", p["gif"], size=(642, 360), duration=1e6)),
    (["export", "t-handle", "--view", "compare", "--integrator", "rk4", "--out", "{gif}"],
     lambda p: export_result("t-handle", p["gif"], view="compare", integrator="rk4")),
])
def test_a_bad_value_is_the_commands_one_line(tmp_path, flags, call):
    paths = {"out": tmp_path / "x.csv", "npz": tmp_path / "x.npz", "gif": tmp_path / "x.gif"}
    line = cli_error(*[f.format(**paths) for f in flags])
    with pytest.raises(tumble.ParameterError) as err:
        call(paths)
    assert isinstance(err.value, ValueError)
    assert str(err.value) == line
    assert not any(p.exists() for p in paths.values())


@pytest.mark.parametrize("name, argv", [
    ("simulate", ["simulate", "book", "--duration=0.5", "--out", "{tmp}/x.csv"]),
    ("inspect", ["inspect", "book", "--json"]),
    ("presets", ["presets"]),
    ("stability_map", ["stability", "book", "--directions=10", "--duration=0.5", "--out", "{tmp}/x.npz"]),
])
def test_each_command_calls_the_api(tmp_path, monkeypatch, capsys, name, argv):
    """The command is a layer over the API function, not a copy of it: it calls it."""
    import tumble.api.functions as api
    from tumble.cli.core import main

    calls = []
    original = getattr(api, name)

    def spy(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(api, name, spy)
    assert main([a.format(tmp=tmp_path) for a in argv]) == 0
    assert len(calls) == 1


def test_export_command_calls_the_api(tmp_path, monkeypatch, capsys):
    import tumble.api.draw as api_draw
    from tumble.cli.core import main

    calls = []
    original = api_draw.export_result
    monkeypatch.setattr(api_draw, "export_result", lambda *a, **k: calls.append(a) or original(*a, **k))
    assert main(["export", "book", "--duration=1", "--fps=5", "--out", str(tmp_path / "x.csv")]) == 0
    assert len(calls) == 1 and (tmp_path / "x.csv").exists()


@pytest.mark.parametrize("call", [
    lambda: tumble.load(5),
    lambda: tumble.load("book").with_values("solver.duration=5"),
    lambda: tumble.load("book").with_values({"solver..duration": 5}),
    lambda: tumble.load("book").with_values({"solver.speed": 5}),
    lambda: tumble.load("book").with_values({"loads.3.vector": [0, 0, 1]}),
    lambda: tumble.simulate("book", outputs=5),
    lambda: tumble.simulate("book", outputs=["Position"], point=[1, 2]),
    lambda: tumble.simulate("book", dt="fast"),
    lambda: tumble.simulate("book", duration=True),
    lambda: tumble.stability("book", executor="many"),
    lambda: tumble.stability("book", directions=2.5),
    lambda: tumble.render("book", t=-1),
    lambda: tumble.render("book", size=(321, 240)),
    lambda: tumble.render("book", view="side"),
    lambda: tumble.export("book", "clip.avi"),
    lambda: tumble.export("book", "clip.gif", overlay=["time", "date"]),
    lambda: tumble.fit([]),
    lambda: tumble.simulate("book").to_csv("x.txt"),
])
def test_every_bad_value_is_a_parameter_error(tmp_path, monkeypatch, call):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(tumble.ParameterError) as err:
        call()
    assert isinstance(err.value, ValueError) and "\n" not in str(err.value) and " must " in str(err.value)
    assert list(tmp_path.iterdir()) == []
