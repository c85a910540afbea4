"""Scenario files and presets: every validation rule, through the loader and the CLI."""

import json

import numpy as np
import pytest
from conftest import refused, tumble

from tumble.physics.errors import ParameterError
from tumble.scenario import dumps, load, loads_toml, preset_names, presets

GOOD = """
name = "t"
[body]
shape = "box"
mass = 10.0
size = [0.1, 0.4, 0.9]
[initial]
position = [0.0, 0.0, 0.0]
velocity = [-2.0, 2.0, 8.0]
orientation = [1.0, 0.0, 0.0, 0.0]
angular_velocity = [0.1, 5.0, 0.1]
[world]
gravity = [0.0, 0.0, -9.8]
[solver]
integrator = "rk4"
dt = 0.001
duration = 10.0
"""

# (replace this, with that) -> the field the message must name
BAD = [
    ('mass = 10.0', 'mass = -1.0', "body.mass"),
    ('mass = 10.0', 'mass = 0', "body.mass"),
    ('mass = 10.0', 'mass = nan', "body.mass"),
    ('mass = 10.0', 'mass = "heavy"', "body.mass"),
    ('mass = 10.0\n', '', "body.mass"),
    ('size = [0.1, 0.4, 0.9]', 'size = [0.1, 0.4]', "body.size"),
    ('size = [0.1, 0.4, 0.9]', 'size = [0.1, -0.4, 0.9]', "body.size"),
    ('size = [0.1, 0.4, 0.9]', 'size = [0.1, inf, 0.9]', "body.size"),
    ('shape = "box"', 'shape = "sphere"', "body.shape"),
    ('shape = "box"', 'shape = "box"\ncolour = "red"', "body"),
    ('shape = "box"\nmass = 10.0\nsize = [0.1, 0.4, 0.9]',
     'shape = "custom"\nmass = 1.0\ninertia = [1.0, 1.0, 3.0, 0.0, 0.0, 0.0]', "body.inertia"),  # triangle
    ('shape = "box"\nmass = 10.0\nsize = [0.1, 0.4, 0.9]',
     'shape = "custom"\nmass = 1.0\ninertia = [1.0, 2.0, 2.5, 0.0, 0.0, 5.0]', "body.inertia"),  # not pos. def.
    ('shape = "box"\nmass = 10.0\nsize = [0.1, 0.4, 0.9]',
     'shape = "custom"\nmass = 1.0\ninertia = [1.0, 2.0]', "body.inertia"),
    ('shape = "box"\nmass = 10.0\nsize = [0.1, 0.4, 0.9]',
     'shape = "custom"\nmass = 1.0\ninertia = [1.0, -2.0, 2.5, 0.0, 0.0, 0.0]', "body.inertia"),
    ('orientation = [1.0, 0.0, 0.0, 0.0]', 'orientation = [1.0, 0.1, 0.0, 0.0]', "initial.orientation"),
    ('orientation = [1.0, 0.0, 0.0, 0.0]', 'orientation = [1.0, 0.0, 0.0]', "initial.orientation"),
    ('velocity = [-2.0, 2.0, 8.0]', 'velocity = [-2.0, 2.0, nan]', "initial.velocity"),
    ('angular_velocity = [0.1, 5.0, 0.1]', 'angular_velocity = "fast"', "initial.angular_velocity"),
    ('gravity = [0.0, 0.0, -9.8]', 'gravity = [0.0, 0.0]', "world.gravity"),
    # magnitudes whose squares and products would overflow (a TOML integer past any float)
    ('mass = 10.0', 'mass = 1' + '0' * 400, "body.mass"),
    ('size = [0.1, 0.4, 0.9]', 'size = [1e200, 0.4, 0.9]', "body.size"),
    ('shape = "box"\nmass = 10.0\nsize = [0.1, 0.4, 0.9]',
     'shape = "custom"\nmass = 1.0\ninertia = [1e101, 1e101, 1e101, 0.0, 0.0, 0.0]', "body.inertia"),
    # a spin the integrators would call diverged at once is bad input, not a failed run
    ('angular_velocity = [0.1, 5.0, 0.1]', 'angular_velocity = [2e6, 0.0, 0.0]', "initial.angular_velocity"),
    ('integrator = "rk4"', 'integrator = "leapfrog"', "solver.integrator"),
    ('dt = 0.001', 'dt = 0.0', "solver.dt"),
    ('dt = 0.001', 'dt = -0.001', "solver.dt"),
    ('dt = 0.001', 'dt = 20.0', "solver.dt"),
    ('duration = 10.0', 'duration = -1.0', "solver.duration"),
    ('[solver]', '[solver]\nspeed = 3', "solver"),
    ('name = "t"', 'name = "t"\nauthor = "me"', "scenario"),
    ('[world]', '[[loads]]\nkind = "push"\nvector = [1.0, 0.0, 0.0]\n[world]', "loads[0].kind"),
    ('[world]', '[[loads]]\nkind = "torque"\nframe = "space"\nvector = [1.0, 0.0, 0.0]\n[world]', "loads[0].frame"),
    ('[world]', '[[loads]]\nkind = "force"\nvector = [1.0, 0.0]\n[world]', "loads[0].vector"),
    ('[world]', '[[loads]]\nkind = "torque"\nvector = [1.0, 0.0, 0.0]\npoint = [0.0, 0.0, 1.0]\n[world]', "loads[0].point"),
    ('[world]', '[[loads]]\nkind = "torque"\n[world]', "loads[0].vector"),
    ('name = "t"', 'name = "t" =', "scenario"),  # TOML syntax
]


def test_good_scenario_loads_and_round_trips():
    sc = loads_toml(GOOD)
    assert loads_toml(dumps(sc)) == sc
    assert sc.rigid_body.mass == 10.0


@pytest.mark.parametrize("old,new,field", BAD)
def test_every_rule_names_field_value_and_rule(old, new, field):
    assert old in GOOD
    with pytest.raises(ParameterError) as info:
        loads_toml(GOOD.replace(old, new, 1))
    msg = str(info.value)
    assert msg.startswith(field) and " must " in msg and "got" in msg and "\n" not in msg


@pytest.mark.parametrize("old,new,field", BAD[::3])
def test_cli_exits_2_with_one_line(tmp_path, old, new, field):
    path = tmp_path / "bad.toml"
    path.write_text(GOOD.replace(old, new, 1))
    out = tmp_path / "out.csv"
    out.write_text("precious")
    # an existing file is never touched by a failed run
    refused(tumble("simulate", path, "--out", out), field, unwritten=[(out, "precious")])
    refused(tumble("inspect", path))


@pytest.mark.parametrize("args,flag", [
    (["--dt", "-1"], "--dt"), (["--dt", "abc"], "--dt"), (["--duration", "0"], "--duration"),
    (["--integrator", "nope"], "--integrator"), (["--sample", "nan"], "--sample"), (["--dt", "100"], "--dt"),
    # rk4's rows are its own states: a sample between two steps of 1 ms is refused
    (["--sample", "0.0005"], "--sample"), (["--sample", "0.0333"], "--sample"),
    (["--duration", "1e9"], "--duration"),
])
def test_cli_flags_are_validated(tmp_path, args, flag):
    out = tmp_path / "o.csv"
    refused(tumble("simulate", "boxes-complex", *args, "--out", out), flag, unwritten=[out])


def test_cli_out_rules(tmp_path):
    for out, word in [(tmp_path / "x.txt", ".csv"), (tmp_path / "missing" / "x.csv", "folder")]:
        refused(tumble("simulate", "boxes-simple", "--out", out), word, unwritten=[out])


def test_presets_are_all_valid_and_described():
    names = preset_names()
    for required in ["boxes-simple", "boxes-complex", "box-1x4x9", "symmetric-top", "asymmetric-stable",
                     "asymmetric-unstable", "rocket-top", "t-handle"]:
        assert required in names
    for name, desc in presets():
        assert desc and "\n" not in desc
        sc = load(name)
        assert loads_toml(dumps(sc), name) == sc


def test_boxes_presets_are_exactly_as_published():
    c = load("boxes-complex")
    assert c.rigid_body.mass == 10.0 and c.body.size == (0.1, 0.4, 0.9)
    np.testing.assert_allclose(np.diag(c.rigid_body.inertia), 10 / 12 * np.array([0.97, 0.82, 0.17]), rtol=1e-15)
    assert c.gravity == (0.0, 0.0, -9.8) and c.velocity == (-2.0, 2.0, 8.0) and c.angular_velocity == (0.1, 5.0, 0.1)
    s = load("boxes-simple")
    assert s.gravity == (0.0, 0.0, 0.0) and s.velocity == (-0.9, 0.4, 0.1) and s.angular_velocity == (0.5, 0.0, 0.0)


def test_simulate_csv_and_npz_contract(tmp_path):
    cols = "t,cx,cy,cz,vx,vy,vz,qw,qx,qy,qz,wx,wy,wz,Lx,Ly,Lz,T,V,E".split(",")
    csv = tmp_path / "a.csv"
    npz = tmp_path / "a.npz"
    for out in (csv, npz):
        res = tumble("simulate", "boxes-complex", "--duration", "1", "--sample", "0.1", "--out", out)
        assert res.returncode == 0, res.stderr
    assert csv.read_text().splitlines()[0] == ",".join(cols)
    data = np.loadtxt(csv, delimiter=",", skiprows=1)
    assert data.shape == (11, 20)
    with np.load(npz) as z:
        assert list(z.keys()) == cols
        np.testing.assert_array_equal(z["t"], data[:, 0])
        np.testing.assert_array_equal(z["E"], data[:, 19])
    # E = T + V and L = R I w, straight from the file
    np.testing.assert_allclose(data[:, 19], data[:, 17] + data[:, 18], rtol=1e-15)


def test_inspect_json_keys_and_values():
    res = tumble("inspect", "boxes-complex", "--json")
    assert res.returncode == 0, res.stderr
    info = json.loads(res.stdout)
    for key in ["mass", "inertia", "principal_moments", "principal_axes", "intermediate_axis",
                "center_of_mass", "L0", "E0", "flip_period"]:
        assert key in info
    assert info["mass"] == 10.0
    np.testing.assert_allclose(info["intermediate_axis"], [0, 1, 0], atol=1e-15)
    np.testing.assert_allclose(info["L0"], [0.1 * 0.97 / 1.2, 5 * 0.82 / 1.2, 0.1 * 0.17 / 1.2], rtol=1e-14)
    assert info["flip_period"] == pytest.approx(3.02842207901, rel=1e-9)
    stable = json.loads(tumble("inspect", "boxes-simple", "--json").stdout)
    assert stable["flip_period"] is None
