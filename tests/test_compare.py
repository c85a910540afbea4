"""The integrator comparison without a window: the pair, drawing both at one time, the
threaded stability job, and ``tumble export --view compare`` with no display."""

from __future__ import annotations

from dataclasses import replace

import threading
import time

import numpy as np
import pytest

from tumble.physics.errors import ParameterError
from tumble.scenario import load
from tumble.scene.compare import SIDE_COLORS
from tumble.scene.style import BACKGROUND
from tumble.simulation.compare import (
    DEFAULT_DT,
    DEFAULT_INTEGRATORS,
    default_pair,
    make_pair,
    pose_at,
    side_label,
    variant,
)
from tumble.simulation.stability_job import StabilityJob
from conftest import headless_env, mp4_frames, refused, tumble_headless as tumble


# ------------------------------------------------------------------ the pair


def test_the_default_pair_differs_only_in_the_integrator():
    sc = load("boxes-complex")
    a, b = default_pair(sc)
    assert (a.solver.integrator, b.solver.integrator) == DEFAULT_INTEGRATORS
    # both at 10 ms, where the first-order side visibly gains energy (the preset takes 1 ms)
    assert a.solver.dt == b.solver.dt == DEFAULT_DT > sc.solver.dt
    for side in (a, b):
        assert side.body == sc.body and side.angular_velocity == sc.angular_velocity
        assert side.velocity == sc.velocity and side.gravity == sc.gravity
        assert side.solver.duration == sc.solver.duration
    assert side_label(a) == "semi-implicit-euler, dt 10 ms"
    assert side_label(b, "\n") == "splitting\ndt 10 ms"
    coarse = sc.replace(solver=replace(sc.solver, dt=0.05))  # a coarser scenario keeps its own
    assert [s.solver.dt for s in default_pair(coarse)] == [0.05, 0.05]


def test_a_side_that_cannot_run_falls_back_or_names_its_field():
    torqued = load("rocket-top")  # an applied torque: the closed form does not apply
    with pytest.raises(ParameterError, match=r"^B\.integrator must be used only without applied torques"):
        variant(torqued, "exact", None, "B")
    a, b = make_pair(load("t-handle"), ("euler", None), (0.01, 0.002))
    assert (a.solver.integrator, a.solver.dt) == ("euler", 0.01)
    assert (b.solver.integrator, b.solver.dt) == (DEFAULT_INTEGRATORS[1], 0.002)
    with pytest.raises(ParameterError, match=r"^A\.dt must be a finite number > 0"):
        variant(load("t-handle"), "rk4", "-1", "A")
    with pytest.raises(ParameterError, match=r"^A\.dt must be <= the scenario's duration \(60 s\)"):
        variant(load("t-handle"), "rk4", 61, "A")
    with pytest.raises(ParameterError, match=r"^B\.integrator must be one of euler"):
        variant(load("t-handle"), "leapfrog", None, "B")


def test_pose_at_interpolates_between_samples_and_clamps_outside():
    t = np.array([0.0, 0.01, 0.02])
    half = np.sqrt(0.5)
    rows = {"t": t, "c": np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0]], float),
            "q": np.array([[1, 0, 0, 0], [half, 0, 0, half], [0, 0, 0, 1]], float),
            "w": np.ones((3, 3)), "L": np.ones((3, 3))}
    c, q, w, L, n = pose_at(rows, 0.015)
    assert np.allclose(c, [1.5, 0, 0]) and n == 2
    assert np.isclose(np.linalg.norm(q), 1.0) and 0 < q[3] < 1 and q[0] > 0
    c, q, *_rest, n = pose_at(rows, 0.01)
    assert np.allclose(c, [1, 0, 0]) and n == 2
    assert np.allclose(pose_at(rows, 5.0)[0], [2, 0, 0]) and pose_at(rows, 5.0)[4] == 3
    assert np.allclose(pose_at(rows, -1.0)[0], [0, 0, 0])
    # the far hemisphere of the same rotation is taken on the near side
    rows["q"][1] *= -1
    _, q, *_ = pose_at(rows, 0.005)
    assert q[0] > 0.9


# ------------------------------------------------------------------ the stability job


def test_the_stability_job_computes_the_map_and_its_grid():
    sc = load("t-handle")
    job = StabilityJob(sc.rigid_body, float(np.linalg.norm(sc.angular_velocity)), 200, 5.0)
    seen = []
    job.start()
    deadline = time.monotonic() + 120  # a map of 200 spins over 5 s takes a second or two
    while job.is_alive():
        assert time.monotonic() < deadline, "the stability job never ended"
        seen.append(job.progress)
        time.sleep(0.005)
    job.join(5)
    assert job.error is None and job.finished
    res = job.result
    assert res is not None and job.progress == 1.0
    assert seen == sorted(seen)
    assert res.grid.shape == (len(res.lat_edges) - 1, len(res.lon_edges) - 1)
    minor, middle, major = res.smap.axis_wander()
    assert middle > 2.5 and minor < 0.5 and major < 0.5


def test_stopping_the_stability_job_ends_its_thread_at_once():
    sc = load("t-handle")
    job = StabilityJob(sc.rigid_body, 6.0, 20000, 60.0)  # 9e7 body-steps: most of the budget, long if left alone
    job.start()
    time.sleep(0.3)
    t0 = time.perf_counter()
    job.stop()
    assert time.perf_counter() - t0 < 2.0
    assert not job.is_alive() and job.result is None and job.error is None
    assert job not in threading.enumerate()


def test_a_stability_job_reports_a_bad_input_as_one_line():
    job = StabilityJob(load("t-handle").rigid_body, 6.0, 10, -1.0)
    job.start()
    job.join(10)
    assert job.result is None and job.error.startswith("duration must be a finite number > 0")


# ------------------------------------------------------------------ the export, no display


def _colour_pixels(image: np.ndarray, hex_colour: str, tol: int = 40) -> int:
    rgb = np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)])
    return int(np.sum(np.abs(image[..., :3].astype(int) - rgb).sum(axis=-1) < tol))


def test_export_view_compare_draws_both_labelled_bodies_headless(tmp_path):
    out = tmp_path / "pair.mp4"
    res = tumble("export", "t-handle", "--view", "compare", "--integrators", "euler", "splitting",
                 "--dts", "0.01", "0.01", "--out", out, "--duration", "2", "--fps", "10", "--size", "640x360",
                 "--with-plots", env=headless_env())
    assert res.returncode == 0, res.stderr
    assert "bad X server" not in res.stderr
    frames = mp4_frames(out)
    assert len(frames) == 20 and frames[0].shape == (360, 640, 3)
    last = frames[-1]
    scene_w = 640 - 2 * round(640 * 0.375 / 2)
    background = np.array([int(BACKGROUND[i:i + 2], 16) for i in (1, 3, 5)])
    for half in (last[:, : scene_w // 2], last[:, scene_w // 2: scene_w]):
        drawn = np.abs(half.astype(int) - background).sum(axis=-1) > 120
        assert drawn.mean() > 0.01, "a body is missing from its half of the scene"
    for colour in SIDE_COLORS:  # each side's label in the scene, its curves in the panel
        assert _colour_pixels(last[:, :scene_w], colour) > 30
        assert _colour_pixels(last[:, scene_w:], colour) > 30


@pytest.mark.parametrize("args, message", [
    (["--view", "compare", "--out", "{d}/x.csv"], "--out must end in .mp4, .gif or .png with --view compare"),
    (["--integrators", "rk4", "euler", "--out", "{d}/x.mp4"], "--integrators must come with --view compare"),
    (["--view", "compare", "--integrator", "rk4", "--out", "{d}/x.mp4"], "--integrator must not be used with --view compare"),
    (["--view", "compare", "--dts", "0.01", "100", "--out", "{d}/x.mp4"], "--dts: B.dt must be <= the scenario's duration"),
    (["--view", "nope", "--out", "{d}/x.mp4"], "invalid choice: 'nope'"),
])
def test_bad_compare_export_input_is_one_line_exit_2(tmp_path, args, message):
    refused(tumble("export", "t-handle", *[a.format(d=tmp_path) for a in args]), message)
    assert not list(tmp_path.iterdir())
