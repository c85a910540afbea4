"""``tumble audit`` and ``tumble.audit``: the JSON contract, the table, the files, the refusals."""

from __future__ import annotations

import csv
import json
import sys

import numpy as np
import pytest

import tumble
from tumble.engines import registry
from conftest import refused, tumble as run_tumble

#: every test here runs the other physics engines (`-m 'not engines'` leaves them out)
pytestmark = pytest.mark.engines

RUN_KEYS = {"engine", "setting", "version", "dt", "max_orientation_error", "final_L_drift", "final_E_drift",
            "separatrix_ratio", "flips", "flips_reference", "com_error", "seconds", "settings", "not_scored",
            "convention_error", "notes"}


@pytest.fixture(scope="module")
def json_run():
    res = run_tumble("audit", "t-handle", "--engines", "mujoco,mujoco:rk4,pybullet,drake:continuous,tumble:rk4",
                     "--dt", "0.01,0.005", "--duration", "7", "--json")
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_json_holds_the_promised_keys_and_one_run_per_setting_and_step(json_run):
    d = json_run
    assert set(d) == {"scenario", "reference", "duration", "sample", "runs", "seconds"}
    assert d["reference"] == "exact" and d["duration"] == 7.0 and d["sample"] == 0.01
    assert [(r["engine"], r["setting"], r["dt"]) for r in d["runs"]] == [
        (e, s, dt) for dt in (0.01, 0.005) for e, s in
        [("mujoco", "euler"), ("mujoco", "rk4"), ("pybullet", "default"), ("drake", "continuous"), ("tumble", "rk4")]]
    for r in d["runs"]:
        assert set(r) == RUN_KEYS
        assert isinstance(r["flips"], list) and isinstance(r["settings"], dict) and r["seconds"] > 0
        # every engine started on the body's start and printed nothing that matters
        assert r["not_scored"] is None and r["convention_error"] is None and r["notes"] == [], r


def test_the_figures_tell_the_engines_apart(json_run):
    runs = {(r["engine"], r["setting"], r["dt"]): r for r in json_run["runs"]}
    ref = runs[("tumble", "rk4", 0.005)]["flips_reference"]
    assert len(ref) == 2  # the T-handle flips about every 3.2 s: at about 1.6 and 4.8 s
    # RK4 is the reference to the step's fourth power; its flips within 2 ms
    rk4 = runs[("mujoco", "rk4", 0.005)]
    assert rk4["max_orientation_error"] < 1e-6
    assert np.allclose(rk4["flips"], ref, atol=2e-3)
    assert abs(rk4["separatrix_ratio"] - 1) < 1e-6
    # semi-implicit Euler gains energy: E drift positive, the same sign as |L|'s
    euler = runs[("mujoco", "euler", 0.01)]
    assert euler["final_E_drift"] > 0 and euler["final_L_drift"] > 0
    # PyBullet's default damping drains the spin
    assert runs[("pybullet", "default", 0.01)]["final_E_drift"] < -0.5
    assert runs[("pybullet", "default", 0.01)]["settings"]["damping"]["angular"] == 0.04


def test_table_names_each_setting_and_says_which_flips_were_missed():
    res = run_tumble("audit", "t-handle", "--engines", "pybullet,tumble:rk4", "--duration", "7")
    assert res.returncode == 0, res.stderr
    assert "pybullet dt 0.001" in res.stdout and "tumble:rk4 dt 0.001" in res.stdout
    assert "tumble:rk4 dt 0.001: all 2 flips" in res.stdout
    assert "pybullet dt 0.001: missed" in res.stdout


def test_out_writes_a_csv_per_setting_the_summary_and_the_plot(tmp_path):
    out = tmp_path / "audit"
    plot = tmp_path / "p.png"
    res = run_tumble("audit", "boxes-complex", "--engines", "dart,tumble:splitting", "--duration", "2",
                     "--out", out, "--plot", plot)
    assert res.returncode == 0, res.stderr
    names = sorted(p.name for p in out.iterdir())
    assert names == ["audit.csv", "audit.json", "audit.png", "dart_dt_0.001.csv", "tumble_splitting_dt_0.001.csv"]
    with open(out / "dart_dt_0.001.csv") as fh:
        rows = list(csv.reader(fh))
    header = rows[0]
    simulate = run_tumble("simulate", "boxes-complex", "--duration", "0.01", "--out", tmp_path / "s.csv")
    assert simulate.returncode == 0
    assert header == (tmp_path / "s.csv").read_text().splitlines()[0].split(",") + ["orientation_error"]
    assert len(rows) == 1 + 201
    summary = json.loads((out / "audit.json").read_text())
    assert float(rows[-1][-1]) <= summary["runs"][0]["max_orientation_error"]
    with open(out / "audit.csv") as fh:
        table = list(csv.DictReader(fh))
    assert [r["engine"] for r in table] == ["dart", "tumble"]
    assert float(table[0]["max_orientation_error"]) == summary["runs"][0]["max_orientation_error"]
    for png in (out / "audit.png", plot):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_api_returns_the_json_object():
    d = tumble.audit("t-handle", engines="dart", dt=0.01, duration=1.0)
    assert d["reference"] == "exact" and [r["engine"] for r in d["runs"]] == ["dart"]
    assert set(d["runs"][0]) == RUN_KEYS


def test_all_is_every_installed_engines_default_and_tumble_rk4():
    assert registry.parse("all") == [("mujoco", "euler"), ("pybullet", "default"), ("dart", "default"),
                                     ("drake", "discrete"), ("tumble", "rk4")]


# ------------------------------------------------------------------ refusals


def refused_quietly(res, *words):
    """A refusal (one line, exit 2) that printed nothing on stdout."""
    return refused(res, *words, quiet=True)




def test_an_unknown_engine_lists_the_known_ones():
    res = run_tumble("audit", "t-handle", "--engines", "mujoco,godot")
    refused_quietly(res, "--engines", "godot", "mujoco:rk4", "drake:continuous", "tumble:rk4")
    refused_quietly(run_tumble("audit", "t-handle", "--engines", "mujoco:verlet"), "mujoco:verlet", "mujoco:implicitfast")


def test_an_engine_not_installed_names_the_install_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "mujoco", None)  # find_spec then reports it missing
    with pytest.raises(tumble.ParameterError) as err:
        tumble.audit("t-handle", engines="mujoco:rk4", duration=0.1)
    assert 'pip install "tumble[engines]"' in str(err.value) and err.value.field == "--engines"
    # and "all" leaves it out rather than failing
    assert ("mujoco", "euler") not in registry.parse("all")


@pytest.mark.parametrize("preset, field", [("rocket-top", "loads"), ("explorer-1", "body.damper"),
                                           ("gyrostat", "body.rotor")])
def test_what_an_engine_cannot_take_is_refused(preset, field):
    refused_quietly(run_tumble("audit", preset, "--engines", "dart", "--duration", "1"), field + " must")


@pytest.mark.parametrize("args, flag", [
    # the flag the user gave is named (--sample was its default): issue 35 item 19
    (["--dt", "0.003"], "--dt must divide the sample interval (0.01 s, --sample's default)"),
    (["--dt", "0,0.01"], "--dt"),
    (["--sample", "100"], "--sample"),
    (["--duration", "-1"], "--duration"),
    (["--plot", "x.jpg"], "--plot"),
    (["--trajectory", "x.csv", "--engines", "dart"], "--engines"),
])
def test_bad_numbers_and_combinations_are_one_line(args, flag):
    refused_quietly(run_tumble("audit", "t-handle", "--duration", "1", *args) if "--duration" not in args
              else run_tumble("audit", "t-handle", *args), flag)


def test_an_executor_spreads_the_settings_and_changes_no_figure():
    import concurrent.futures

    alone = tumble.audit("t-handle", engines="dart,mujoco:rk4", duration=1.0)
    with concurrent.futures.ProcessPoolExecutor(2) as executor:
        spread = tumble.audit("t-handle", engines="dart,mujoco:rk4", duration=1.0, executor=executor)
    for a, b in zip(alone["runs"], spread["runs"]):
        assert {k: v for k, v in a.items() if k != "seconds"} == {k: v for k, v in b.items() if k != "seconds"}


def test_a_body_an_engine_refuses_is_one_line_naming_the_engine(tmp_path):
    # a tensor that breaks the triangle inequality (allowed on request in Tumble): MuJoCo's compiler refuses it
    path = tmp_path / "flat.toml"
    path.write_text('name = "flat"\n[body]\nshape = "custom"\nmass = 1.0\ninertia = [1.0, 1.0, 3.0, 0.0, 0.0, 0.0]\n'
                    'allow_unphysical = true\n[initial]\nangular_velocity = [0.1, 5.0, 0.1]\n')
    refused_quietly(run_tumble("audit", path, "--engines", "dart,mujoco", "--duration", "1"), "--engines", "mujoco",
              "A + B >= C")
