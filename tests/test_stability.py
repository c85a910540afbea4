"""Stability map: stable axes barely wander, the intermediate one flips; the batch equals
single runs; the npz and PNG contracts; bad input exits 2 with one line."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tumble.physics.integrators import simulate
from tumble.physics.state import State
from tumble.scenario import load
from tumble.simulation.stability import (
    SAMPLE_ANGLE,
    STEP_ANGLE,
    fibonacci_sphere,
    lat_lon,
    map_frame,
    stability_map,
    write_png,
)
from conftest import refused, tumble

NPZ_KEYS = {"directions", "wander", "flip_period", "first_flip", "moments", "principal_axes", "map_frame",
            "axis_wander", "axis_labels", "omega_norm", "duration", "dt", "integrator"}


@pytest.fixture(scope="module")
def boxes_map():
    sc = load("boxes-complex")
    return sc, stability_map(sc.rigid_body, float(np.linalg.norm(sc.angular_velocity)), 600, 10.0)


def stable_wander_bound(moments, k, eps):
    """Largest wander of a spin eps rad off stable principal axis k (linearised Euler).

    Near axis k the two other components obey c_i w_i^2 + c_j w_j^2 = const with
    c_i = I_i |I_k - I_i| (energy and |L|^2 combined), an ellipse through the start; omega's
    tip moves at most its diameter, 2 eps |w| sqrt(c_max / c_min), from where it began."""
    others = [i for i in range(3) if i != k]
    c = [moments[i] * abs(moments[k] - moments[i]) for i in others]
    return 2.0 * eps * math.sqrt(max(c) / min(c))


def test_stable_axes_barely_wander_and_the_intermediate_one_flips(boxes_map):
    sc, smap = boxes_map
    assert smap.axis_labels == ("minor: stable", "intermediate: unstable", "major: stable")
    for k in (0, 2):
        for sign in (1, -1):
            axis = sign * smap.axes[:, k]
            j = smap.nearest(axis)
            eps = math.acos(min(1.0, smap.directions[j] @ axis))
            assert 0 < eps < 0.15
            # 10% slack for the terms the linearisation drops (eps^2 ~ 1e-2)
            assert smap.wander[j] <= 1.1 * stable_wander_bound(smap.moments, k, eps)
    for sign in (1, -1):
        j = smap.nearest(sign * smap.axes[:, 1])
        assert smap.wander[j] > math.pi - 0.3  # omega reaches nearly its opposite: a flip
    aw = smap.axis_wander()
    assert aw[0] < 0.3 and aw[2] < 0.3 and aw[1] > 2.8
    # a broad band around the separatrices flips, the caps round the stable axes do not
    assert 0.2 < np.mean(smap.wander > math.pi / 2) < 0.8


def test_batch_equals_single_runs(boxes_map):
    """The map's batched run gives, for any direction, what a one-body run gives."""
    sc, smap = boxes_map
    body = sc.rigid_body
    for j in (0, 137, 599):
        w0 = smap.initial_omega(j)
        every = int(SAMPLE_ANGLE // STEP_ANGLE)  # the map's sampling
        traj = simulate(body, State.initial(angular_velocity=w0), smap.integrator, smap.dt, smap.duration,
                        sample=every * smap.dt)
        w = traj.w / np.linalg.norm(traj.w, axis=1)[:, None]
        wander = np.max(np.arccos(np.clip(w @ smap.directions[j], -1, 1)))
        assert abs(wander - smap.wander[j]) <= 1e-9


def test_fibonacci_lattice_is_near_uniform():
    d = fibonacci_sphere(2000)
    np.testing.assert_allclose(np.linalg.norm(d, axis=1), 1.0, rtol=1e-15)
    assert np.linalg.norm(d.mean(axis=0)) < 1e-3
    # every point of a fine probe set has a lattice point within ~1.5 mean spacings
    from scipy.spatial import cKDTree

    spacing = math.sqrt(4 * math.pi / 2000)
    dist, _ = cKDTree(d).query(fibonacci_sphere(20011) @ np.linalg.qr(np.random.default_rng(1).normal(size=(3, 3)))[0])
    assert dist.max() < 1.5 * spacing


def test_map_frame_puts_the_intermediate_axis_at_the_centre():
    body = load("boxes-complex").rigid_body
    _, axes = body.principal()
    frame = map_frame(axes)
    np.testing.assert_allclose(frame @ frame.T, np.eye(3), atol=1e-15)
    assert np.linalg.det(frame) > 0
    lat, lon = lat_lon(np.array([axes[:, 1], axes[:, 2], axes[:, 0]]), frame)
    np.testing.assert_allclose(lat[:2], 0, atol=1e-15)
    np.testing.assert_allclose(lon[:2], [0, math.pi / 2], atol=1e-15)
    assert abs(abs(lat[2]) - math.pi / 2) < 1e-12


def test_cli_npz_keys_and_shapes(tmp_path):
    out = tmp_path / "map.npz"
    res = tumble("stability", "boxes-complex", "--directions", 300, "--duration", 4, "--out", out)
    assert res.returncode == 0, res.stderr
    assert res.stderr == ""  # no progress bar when stderr is not a terminal
    assert "wrote" in res.stdout
    with np.load(out) as data:
        assert set(data.files) == NPZ_KEYS
        assert data["directions"].shape == (300, 3) and data["wander"].shape == (300,)
        assert data["flip_period"].shape == (300,) and data["first_flip"].shape == (300,)
        assert data["moments"].shape == (3,) and data["principal_axes"].shape == (3, 3)
        np.testing.assert_allclose(np.linalg.norm(data["directions"], axis=1), 1.0, rtol=1e-15)
        assert np.all((data["wander"] >= 0) & (data["wander"] <= math.pi))
        assert float(data["duration"]) == 4.0
        assert float(data["omega_norm"]) == pytest.approx(np.linalg.norm([0.1, 5.0, 0.1]), rel=1e-15)
        assert str(data["integrator"]) == "rk4"
    assert not list(tmp_path.glob(".map.npz.*"))  # no temporary left behind


def test_png_map_is_drawn_with_the_axes_marked(tmp_path, boxes_map):
    import matplotlib.image as mpimg

    _, smap = boxes_map
    out = tmp_path / "map.png"
    pixels = write_png(smap, out)
    img = mpimg.imread(out)
    assert img.shape[:2] == (616, 1100)
    assert len(np.unique((img[..., :3] * 255).astype(np.uint8).reshape(-1, 3), axis=0)) > 200

    def luminance(key):
        """Mean luminance 16 px from a marker toward the map's middle row (clear of the
        marker, and of its label, which sits to the right)."""
        col, row = pixels[key]
        down = 16 if row < img.shape[0] / 2 else -16
        patch = img[int(row) + down - 2:int(row) + down + 3, int(col) - 2:int(col) + 3, :3]
        return float(np.mean(patch @ np.array([0.2126, 0.7152, 0.0722])))

    # the magma map is near black where omega stays put and bright where it flips
    for key in ((2, 1), (2, -1), (0, 1), (0, -1)):
        assert luminance(key) < 0.2, key
    assert luminance((1, 1)) > 0.6


def test_cli_png(tmp_path):
    out = tmp_path / "map.png"
    res = tumble("stability", "t-handle", "--directions", 200, "--duration", 2, "--out", out)
    assert res.returncode == 0, res.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 20_000


def write_zero_spin(folder):
    path = folder / "still.toml"
    path.write_text('[body]\nshape = "box"\nmass = 1.0\nsize = [0.1, 0.2, 0.3]\n')
    return path


BAD = [
    (["--directions", "0"], "--directions must be a whole number from 1"),
    (["--directions", "many"], "--directions must be a whole number"),
    (["--directions", "2.5"], "--directions must be a whole number"),
    (["--duration", "-1"], "--duration must be a finite number > 0"),
    (["--duration", "nan"], "--duration must be a finite number > 0"),
    (["--out", "map.txt"], "--out must end in .npz or .png"),
    (["--out", "no/such/folder/map.npz"], "--out must be in an existing folder"),
    (["SCENARIO=nope"], "scenario must be a preset name"),
    (["SCENARIO=still"], "must be non-zero"),
    (["OUT="], "the following arguments are required: --out"),
]


@pytest.mark.parametrize("extra,words", BAD, ids=[b[1] for b in BAD])
def test_cli_bad_input_exits_2_with_one_line(tmp_path, monkeypatch, extra, words):
    monkeypatch.chdir(tmp_path)
    scenario, out = "boxes-complex", ["--out", "map.npz"]
    if extra[0] == "SCENARIO=nope":
        scenario, extra = "nope", []
    elif extra[0] == "SCENARIO=still":
        scenario, extra = write_zero_spin(tmp_path), []
    elif extra[0] == "OUT=":
        out, extra = [], []
    elif extra[0] == "--out":
        out = []
    res = tumble("stability", scenario, *extra, *out, "--directions", 10) if "--directions" not in extra else \
        tumble("stability", scenario, *extra, *out)
    refused(res, words)
    assert not list(tmp_path.glob("*.npz")) and not list(tmp_path.glob(".*npz*"))


def test_predicted_flips_agree_with_the_body_frame_wrappers(boxes_map):
    """The map's closed-form columns are those of app.physics.analysis, direction by direction."""
    from tumble.physics.analysis import predicted_first_flip, predicted_flip_period

    sc, smap = boxes_map
    for j in (3, 250, 598):
        w0 = smap.initial_omega(j)
        p, f = predicted_flip_period(sc.rigid_body, w0), predicted_first_flip(sc.rigid_body, w0)
        assert (np.isnan(smap.flip_period[j]) if p is None else smap.flip_period[j] == pytest.approx(p, rel=1e-12))
        assert (np.isnan(smap.first_flip[j]) if f is None else smap.first_flip[j] == pytest.approx(f, rel=1e-12))
    # near the intermediate axis the map's wander shows the flip the closed form predicts
    j = smap.nearest(smap.axes[:, 1])
    assert smap.first_flip[j] < smap.duration and smap.wander[j] > 2.8
