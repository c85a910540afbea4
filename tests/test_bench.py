"""``tumble bench``: its JSON contract and files (figures are printed, never asserted as times)."""

import json

import pytest
from conftest import refused, tumble

KEYS = ["scenario", "integrator", "dt", "pos_err_max", "pos_err_rms", "vel_err_max", "vel_err_rms",
        "angle_err_max", "angle_err_rms", "omega_err_max", "omega_err_rms", "E_drift_max", "L_drift_max",
        "wall_per_sim_s", "steps_per_s", "batch_body_steps_per_s"]


def run(*args):
    return tumble("bench", *args)


def test_bench_json_rows_and_accuracy_ordering(tmp_path):
    res = run("boxes-complex", "--integrators", "euler", "rk4", "splitting", "exact", "--dt", "0.01", "0.005",
              "--json", "--out", str(tmp_path))
    assert res.returncode == 0, res.stderr
    rows = json.loads(res.stdout)
    assert len(rows) == 8
    for r in rows:
        assert all(k in r for k in KEYS)
    by = {(r["integrator"], r["dt"]): r for r in rows}
    # orders: halving dt divides rk4's error by ~16, euler's by ~2 (first-order engines' 1e-2 class)
    assert by[("rk4", 0.01)]["angle_err_max"] / by[("rk4", 0.005)]["angle_err_max"] == pytest.approx(16, rel=0.3)
    assert by[("euler", 0.01)]["angle_err_max"] / by[("euler", 0.005)]["angle_err_max"] == pytest.approx(2, rel=0.3)
    assert by[("splitting", 0.01)]["L_drift_max"] < 1e-12
    assert by[("exact", 0.01)]["angle_err_max"] < 1e-10
    # the centre of mass of every method here but euler follows the parabola to round-off
    assert by[("rk4", 0.01)]["pos_err_max"] < 1e-10 and by[("euler", 0.01)]["pos_err_max"] > 1e-3
    assert (tmp_path / "bench.csv").read_text().splitlines()[0].startswith("scenario,integrator,dt")
    assert (tmp_path / "work-precision.png").read_bytes()[:4] == b"\x89PNG"


def test_bench_markdown_and_torqued_reference():
    res = run("rocket-top", "--integrators", "rk4", "exact", "--dt", "0.01", "--wide")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.strip().splitlines()
    assert lines[0].startswith("| scenario | integrator | dt |") and len(lines) == 4
    assert "n/a" in lines[3] and "exact" in lines[3]  # the closed form refuses torques, said in the row


def test_bench_table_fits_100_columns_and_says_why_a_row_does_not_apply():
    res = run("rocket-top", "--integrators", "semi-implicit-euler", "exact", "--dt", "0.01")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert max(len(line) for line in lines) <= 100, res.stdout
    row = next(line for line in lines if line.startswith("exact"))
    assert "n/a [1]" in row
    assert any(line.startswith("[1] exact, dt 0.01:") and "torques" in line for line in lines)


def test_text_table_fits_100_columns_at_its_widest():
    """Every cell at its longest: the longest integrator name, 7-character steps, figures with
    three-digit exponents, and a long reason a row does not apply."""
    from tumble.physics.integrators import INTEGRATORS
    from tumble.simulation.benchmark import COLUMNS, text_table

    rows = [{"scenario": "s" * 200, "integrator": name, "dt": 2.5e-05,
             **{k: 1.2345e-300 for k in COLUMNS[3:]}, "wall_per_sim_s": 1.234e+200,
             "batch_body_steps_per_s": 1.234e-200} for name in INTEGRATORS]
    rows.append({"scenario": "s" * 200, "integrator": "exact", "dt": 1e-5, "error": "x " * 300})
    assert max(len(line) for line in text_table(rows).splitlines()) <= 100


@pytest.mark.parametrize("args,word", [(["--dt", "0"], "--dt"), (["nope"], "scenario"),
                                       (["--integrators", "magic"], "--integrator")])
def test_bench_bad_input(args, word):
    refused(run(*args), word)


def test_bench_json_is_strict_json_with_null_where_a_row_does_not_apply():
    res = run("rocket-top", "--integrators", "rk4", "exact", "--dt", "0.01", "--json")
    assert res.returncode == 0, res.stderr
    rows = json.loads(res.stdout, parse_constant=lambda name: pytest.fail(f"not JSON: {name}"))
    by = {r["integrator"]: r for r in rows}
    assert by["exact"]["angle_err_max"] is None and "exact" in by["exact"]["error"]
    assert isinstance(by["rk4"]["angle_err_max"], float) and by["rk4"]["angle_err_max"] >= 0.0
