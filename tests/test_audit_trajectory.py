"""``tumble audit --trajectory``: another engine's file scored like an engine run, its conventions
checked before anything else, and every bad file one line with exit status 2."""

from __future__ import annotations

import numpy as np
import pytest

import tumble
from tumble.physics import quaternion as quat
from tumble.physics.reference import ExactReference
from conftest import refused, tumble as run_tumble

#: the T-handle's exact motion, sampled unevenly (times need not be uniform)
T = np.cumsum(np.r_[0.0, np.tile([0.004, 0.007, 0.011], 200)])


@pytest.fixture(scope="module")
def exact():
    sc = tumble.load("t-handle")
    c, q, w = ExactReference(sc.model, sc.initial_state).at(T)
    return c, q, w


def write(path, columns: dict):
    names = list(columns)
    data = np.column_stack([columns[k] for k in names])
    path.write_text(",".join(names) + "\n" + "\n".join(",".join(repr(float(x)) for x in row) for row in data) + "\n")
    return path


def table(q, w=None, c=None, order=("qw", "qx", "qy", "qz")):
    cols = {"t": T}
    cols.update({name: q[:, k] for k, name in enumerate(order)})
    if w is not None:
        cols.update(wx=w[:, 0], wy=w[:, 1], wz=w[:, 2])
    if c is not None:
        cols.update(cx=c[:, 0], cy=c[:, 1], cz=c[:, 2])
    return cols




def test_a_known_orientation_error_is_scored_to_one_percent(tmp_path, exact):
    c, q, w = exact
    # turn the body away from the exact pose about a body axis by an angle growing to 0.05 rad
    angle = 0.05 * (T / T[-1]) ** 2
    off = quat.multiply(q, quat.from_axis_angle(np.array([0.6, 0.0, 0.8]), angle))
    path = write(tmp_path / "godot.csv", table(off, w, c))
    res = run_tumble("audit", "t-handle", "--trajectory", path, "--label", "godot", "--json")
    assert res.returncode == 0, res.stderr
    import json

    run = json.loads(res.stdout)["runs"][0]
    assert run["engine"] == "godot" and run["setting"] == "file"
    assert run["max_orientation_error"] == pytest.approx(0.05, rel=0.01)
    assert len(run["flips"]) == len(run["flips_reference"]) >= 1
    assert np.allclose(run["flips"], run["flips_reference"], atol=2e-3)
    assert abs(run["final_L_drift"]) < 1e-9 and run["com_error"] < 1e-12


def test_the_python_api_takes_arrays(exact):
    c, q, w = exact
    d = tumble.audit_trajectory("t-handle", {"t": T, "q": q, "w": w})
    assert d["runs"][0]["max_orientation_error"] < 1e-9 and d["reference"] == "exact"


@pytest.mark.parametrize("variant, flag", [("world", "--omega world"), ("xyzw", "--quaternion xyzw")])
def test_another_convention_is_refused_naming_the_flag_and_accepted_with_it(tmp_path, exact, variant, flag):
    c, q, w = exact
    if variant == "world":
        cols = table(q, quat.rotate(q, w))
    else:  # the four numbers x, y, z, w under the header's four quaternion columns
        cols = table(q[:, [1, 2, 3, 0]], w)
    path = write(tmp_path / f"{variant}.csv", cols)
    refused(run_tumble("audit", "t-handle", "--trajectory", path), flag)
    res = run_tumble("audit", "t-handle", "--trajectory", path, *flag.split(), "--json")
    assert res.returncode == 0, res.stderr
    import json

    assert json.loads(res.stdout)["runs"][0]["max_orientation_error"] < 1e-9


def test_xyzw_written_under_its_own_header_is_the_same_flag(tmp_path, exact):
    c, q, w = exact
    path = write(tmp_path / "named.csv", table(q[:, [1, 2, 3, 0]], w, order=("qx", "qy", "qz", "qw")))
    refused(run_tumble("audit", "t-handle", "--trajectory", path), "--quaternion xyzw")
    assert run_tumble("audit", "t-handle", "--trajectory", path, "--quaternion", "xyzw").returncode == 0


def test_a_conjugated_quaternion_is_named_and_no_convention_is_said_so(tmp_path, exact):
    c, q, w = exact
    refused(run_tumble("audit", "t-handle", "--trajectory", write(tmp_path / "c.csv", table(quat.conjugate(q), w))),
              "conjugated")
    scrambled = w[:, [1, 0, 2]] * np.array([1.0, -1.0, 0.5])
    refused(run_tumble("audit", "t-handle", "--trajectory", write(tmp_path / "n.csv", table(q, scrambled))),
              "none fits")


def test_the_convention_check_comes_before_the_start_check(tmp_path, exact):
    c, q, w = exact
    # xyzw numbers: the start also looks wrong as declared, but the flag is what the line names
    path = write(tmp_path / "x.csv", table(q[:, [1, 2, 3, 0]], w))
    refused(run_tumble("audit", "t-handle", "--trajectory", path), "--quaternion xyzw")
    # without omega, the start check still names the order that fits
    path = write(tmp_path / "y.csv", table(q[:, [1, 2, 3, 0]]))
    refused(run_tumble("audit", "t-handle", "--trajectory", path), "--quaternion xyzw")


def _bad(tmp_path, exact, kind):
    c, q, w = exact
    cols = table(q.copy(), w.copy())
    if kind == "few rows":
        return write(tmp_path / "f.csv", {k: v[:2] for k, v in cols.items()})
    if kind == "times":
        cols["t"] = T.copy()
        cols["t"][5] = cols["t"][4]
    if kind == "nan":
        cols["qx"] = cols["qx"].copy()
        cols["qx"][7] = np.nan
    if kind == "norm":
        for k in ("qw", "qx", "qy", "qz"):
            cols[k] = cols[k] * 1.01
    if kind == "start":
        turned = quat.multiply(q, quat.from_axis_angle(np.array([1.0, 0, 0]), np.full(len(T), 0.01)))
        cols = table(turned, w)
    if kind == "header":
        cols = {"time": T, "qw": q[:, 0], "qx": q[:, 1], "qy": q[:, 2], "qz": q[:, 3]}
    if kind == "text":
        path = write(tmp_path / "t.csv", cols)
        path.write_text(path.read_text().replace("\n0.004,", "\n0.004x,", 1))
        return path
    if kind == "binary":
        path = tmp_path / "b.csv"
        path.write_bytes(b"\xff\xfe\x00garbage")
        return path
    return write(tmp_path / f"{kind}.csv", cols)


@pytest.mark.parametrize("kind, words", [
    ("few rows", "at least 3 rows"), ("times", "increase"), ("nan", "finite"), ("norm", "unit quaternions"),
    ("start", "initial orientation"), ("header", "t,qw,qx,qy,qz"), ("text", "row 3"), ("binary", "UTF-8"),
])
def test_bad_files_are_one_line(tmp_path, exact, kind, words):
    refused(run_tumble("audit", "t-handle", "--trajectory", _bad(tmp_path, exact, kind)), "--trajectory", words)


def test_missing_files_and_other_suffixes_are_one_line(tmp_path):
    refused(run_tumble("audit", "t-handle", "--trajectory", tmp_path / "none.csv"), "readable file")
    (tmp_path / "x.txt").write_text("t,qw,qx,qy,qz\n")
    refused(run_tumble("audit", "t-handle", "--trajectory", tmp_path / "x.txt"), ".csv or .npz")
    (tmp_path / "x.npz").write_bytes(b"not a zip")
    refused(run_tumble("audit", "t-handle", "--trajectory", tmp_path / "x.npz"), "NPZ")


def test_an_npz_is_read_like_a_csv(tmp_path, exact):
    c, q, w = exact
    np.savez(tmp_path / "r.npz", t=T, q=q, w=w, c=c)
    res = run_tumble("audit", "t-handle", "--trajectory", tmp_path / "r.npz", "--out", tmp_path / "o")
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "o" / "trajectory.csv").read_text().splitlines()[0] == \
        "t,cx,cy,cz,qw,qx,qy,qz,wx,wy,wz,orientation_error"
