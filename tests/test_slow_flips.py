"""Slow motion around the flips: one time map (app.export.timeline) that the export samples its
frames with and the window's worker paces its clock with (issue 27, item 4)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from tumble.export.settings import ExportSettings, plan_export
from tumble.export.timeline import (
    SLOW_HALF_WINDOW_S,
    TimeMap,
    simulate_timeline,
    slow_flips_map,
    slow_windows,
)
from tumble.physics.analysis import predicted_first_flip, predicted_flip_period
from tumble.physics.errors import ParameterError
from tumble.scenario import load
from tumble.simulation.lookahead import flips_ahead

#: round-off allowed on times of about 10 s built from a few additions (s)
ROUND_OFF = 1e-12
#: longest wait for the worker to reach a time its clock allows (s)
WAIT_S = 60.0


def test_the_map_slows_by_exactly_x_inside_the_windows_and_runs_at_speed_1_elsewhere():
    windows = slow_windows([1.5, 4.0, 4.6, 9.0])  # 4.0 and 4.6 overlap: one window 3.5 .. 5.1
    assert windows == ((1.0, 2.0), (3.5, 5.1), (8.5, 9.5))
    m = TimeMap(windows, 4.0)
    t = np.linspace(-1.0, 12.0, 130001)  # steps of 1e-4 s
    p = m.presentation_time(t)
    assert np.all(np.diff(p) > 0)  # strictly increasing: monotone and invertible
    slope = np.diff(t) / np.diff(p)
    mid = 0.5 * (t[1:] + t[:-1])
    inside = np.zeros_like(mid, dtype=bool)
    for a, b in windows:
        inside |= (mid > a) & (mid < b)
    edge = np.zeros_like(inside)
    for a, b in windows:  # the steps that straddle an edge mix the two speeds
        edge |= (np.abs(mid - a) < 1e-4) | (np.abs(mid - b) < 1e-4)
    np.testing.assert_allclose(slope[inside & ~edge], 0.25, rtol=1e-8)
    np.testing.assert_allclose(slope[~inside & ~edge], 1.0, rtol=1e-8)
    # continuous: no jump anywhere, the largest step of t is the step of p at speed 1
    assert np.max(np.diff(t) - np.diff(p)) <= ROUND_OFF * 100
    # before the first window p = t; after the last, p = t plus (X - 1) times the slowed seconds
    assert m.presentation_time(0.5) == 0.5
    assert m.presentation_time(11.0) == pytest.approx(11.0 + 3 * (1.0 + 1.6 + 1.0), abs=ROUND_OFF)
    # the inverse is the inverse
    np.testing.assert_allclose(m.sim_time(p), t, atol=1e-11)
    assert m.slowed(1.5) and m.slowed(4.9) and not m.slowed(3.0) and not m.slowed(10.0)
    assert m.rate(1.5) == 0.25 and m.rate(3.0) == 1.0
    assert m.advance(0.0, 1.0 + 4 * 0.5) == pytest.approx(1.5, abs=ROUND_OFF)


def test_no_flips_no_slow_motion():
    m = TimeMap((), 8.0)
    assert m.sim_time(3.25) == 3.25 and m.presentation_time(3.25) == 3.25 and not m.slowed(3.25)
    stable = load("asymmetric-stable")
    assert len(flips_ahead(stable, until=10.0)) == 0
    plain = plan_export(stable, ExportSettings(out="x.mp4"))
    slowed = plan_export(stable, ExportSettings(out="x.mp4", slow_flips=8))
    assert slowed.n_frames == plain.n_frames
    np.testing.assert_allclose(slowed.frame_times, plain.frame_times, atol=ROUND_OFF)


def test_the_windows_are_around_the_flips_the_run_shows():
    sc = load("t-handle")
    m = slow_flips_map(sc, 4.0, until=10.0)
    flips = flips_ahead(sc, until=10.0 + SLOW_HALF_WINDOW_S)
    assert len(flips) == 3 == len(m.windows)
    np.testing.assert_allclose([(a + b) / 2 for a, b in m.windows], flips, atol=ROUND_OFF)
    np.testing.assert_allclose([b - a for a, b in m.windows], 2 * SLOW_HALF_WINDOW_S, atol=ROUND_OFF)
    # the flips the run shows are the closed form's for this torque-free body (rk4 at dt 1 ms:
    # the orientation error after 10 s is far below what moves a flip by a millisecond)
    first = predicted_first_flip(sc.rigid_body, sc.angular_velocity)
    period = predicted_flip_period(sc.rigid_body, sc.angular_velocity)
    np.testing.assert_allclose(flips, first + period * np.arange(3), atol=1e-3)


@pytest.mark.parametrize("factor", [2.0, 4.0, 10.0])
def test_the_export_plays_its_flips_x_times_slower_and_its_frame_count_grows_by_that(factor):
    sc = load("t-handle")
    fps, speed, duration = 30, 1.0, 10.0
    plain = plan_export(sc, ExportSettings(out="clip.mp4", fps=fps, speed=speed, duration=duration))
    slowed = plan_export(sc, ExportSettings(out="clip.mp4", fps=fps, speed=speed, duration=duration,
                                            slow_flips=factor))
    windows = slowed.time_map.windows
    span = duration * speed
    slowed_seconds = sum(min(b, span) - max(a, 0.0) for a, b in windows if b > 0 and a < span)
    assert slowed_seconds == pytest.approx(3.0)  # three whole windows in the T-handle's first 10 s
    assert plain.n_frames == round(duration * fps)
    assert slowed.n_frames == round((span + (factor - 1) * slowed_seconds) / speed * fps)
    # the frames: a frame interval apart outside the windows, X times closer inside
    times = slowed.frame_times
    assert times[0] == 0.0 and times[-1] == pytest.approx(plain.frame_times[-1], abs=1e-9)
    gaps, mid = np.diff(times), 0.5 * (times[1:] + times[:-1])
    inside = np.array([any(a < x - 1 / fps and x + 1 / fps < b for a, b in windows) for x in mid])
    outside = np.array([all(x + 1 / fps < a or x - 1 / fps > b for a, b in windows) for x in mid])
    assert inside.sum() >= 3 * factor * (fps - 2) - 6 and outside.sum() >= (span - 3 - 6 / fps) * fps - 6
    np.testing.assert_allclose(gaps[inside], speed / fps / factor, rtol=1e-9)
    np.testing.assert_allclose(gaps[outside], speed / fps, rtol=1e-9)
    assert np.all(gaps > 0)


def test_every_slowed_frame_is_a_sample_of_the_run_and_the_clip_shows_the_simulated_time():
    sc = load("t-handle")
    plan = plan_export(sc, ExportSettings(out="clip.mp4", duration=3.0, slow_flips=4, start=0.5))
    tl = simulate_timeline(sc, plan)
    np.testing.assert_allclose(tl.t[tl.frame_index], plan.frame_times, atol=1e-9)
    assert np.all(np.diff(tl.t) > 0) and np.max(np.diff(tl.t)) <= 0.01 + 1e-12
    # the flip the clip shows is the one the map slowed around
    assert len(tl.flips) == 1 and plan.time_map.slowed(float(tl.flips[0]))
    from tumble.export.exporter import FrameComposer

    text = FrameComposer.status_text(type("C", (), {"plan": plan})(), float(tl.flips[0]), [1])
    assert text.startswith(f"t = {tl.flips[0]:.2f} s") and "slow motion 4x" in text
    assert "slow motion" not in FrameComposer.status_text(type("C", (), {"plan": plan})(), 0.6, [0])


@pytest.mark.parametrize("bad", [0.5, 0, -2, 51, float("inf"), "fast"])
def test_a_bad_factor_is_refused_naming_the_option(bad):
    with pytest.raises(ParameterError, match="slow-flips"):
        plan_export(load("t-handle"), ExportSettings(out="clip.mp4", slow_flips=bad))


def test_the_command_line_refuses_a_bad_factor_in_one_line(tmp_path):
    from conftest import tumble

    res = tumble("export", "t-handle", "--out", tmp_path / "clip.mp4", "--slow-flips", "0.5")
    assert res.returncode == 2 and not (tmp_path / "clip.mp4").exists()
    assert res.stderr.strip().splitlines() == [
        "tumble: error: --slow-flips must be a number from 1 to 50 (times slower around each flip), got 0.5"]


def test_the_command_line_writes_the_longer_clip(tmp_path):
    from conftest import tumble_headless

    out = tmp_path / "flip.csv"  # the trajectory one row per frame: the frame times without rendering
    res = tumble_headless("export", "t-handle", "--out", out, "--duration", "2.5", "--slow-flips", "3")
    assert res.returncode == 0, res.stderr
    t = np.loadtxt(out, delimiter=",", skiprows=1, usecols=0)
    plan = plan_export(load("t-handle"), ExportSettings(out=out, duration=2.5, slow_flips=3))
    assert len(t) == plan.n_frames == round(30 * (2.5 + 2 * 1.0))  # one whole window in 2.5 s
    np.testing.assert_allclose(t, plan.frame_times, atol=1e-12)


class Clock:
    """A wall clock the test moves by hand."""

    def __init__(self):
        self.now = 0.0
        self.lock = threading.Lock()

    def __call__(self) -> float:
        with self.lock:
            return self.now

    def set(self, value: float) -> None:
        with self.lock:
            self.now = value


def test_the_worker_paces_its_clock_through_the_same_map():
    from tumble.gui.windows.presentation import slow_time_map  # the window's maker
    from tumble.simulation.worker import SimulationWorker, record_steps

    sc = load("t-handle")
    clock = Clock()
    worker = SimulationWorker(sc, speed=1.0, clock=clock)
    serial = worker.latest().serial
    worker.set_time_map(slow_time_map(4.0))
    worker.start()
    try:
        deadline = time.monotonic() + WAIT_S
        while worker.latest().serial == serial:  # the map is made (and the clock anchored) at wall 0
            assert time.monotonic() < deadline, "the worker never took the time map"
            time.sleep(0.01)
        m = slow_flips_map(sc, 4.0)
        record = record_steps(sc.solver.dt, 0.25) * sc.solver.dt  # slow motion records this often
        for wall in np.arange(0.1, 4.01, 0.1):  # small steps: a jump past MAX_LAG_S would be dropped
            clock.set(float(wall))
            target = m.advance(0.0, float(wall))
            while worker.latest().t < target - record - 1e-9:
                assert time.monotonic() < deadline, f"the worker stopped at {worker.latest().t} < {target}"
                time.sleep(0.005)
            snap = worker.latest()
            assert snap.t <= target + 1e-9
            assert snap.slowed == (4.0 if m.slowed(snap.t) else 1.0)
        # 4 s of wall time: the first flip's window (1.09 .. 2.09 s) took 4 of them
        assert snap.t == pytest.approx(m.advance(0.0, 4.0), abs=record)
        assert 1.1 < snap.t < 2.1 and snap.slowed == 4.0
    finally:
        worker.stop()
