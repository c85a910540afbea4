"""The simulation worker, headless: pacing, commands, history bounds, flips, errors, stop."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from tumble.physics import diagnostics
from tumble.physics.errors import DivergenceError, ParameterError
from tumble.physics.integrators import simulate
from tumble.scenario import SolverSpec, load
from tumble.simulation import History, SimulationWorker, check_runnable
from tumble.simulation.history import WIDTH
from tumble.simulation.worker import KICK_FRACTION, MAX_BATCH_STEPS, RECORD_INTERVAL_S, record_steps
from conftest import WAIT_MS

#: the longest a test waits for the worker to reach a state (s): the GUI tests' wait; a wait that
#: passes returns at once, so only a failing test waits this long (10 s ran out on a busy machine)
WAIT_S = WAIT_MS / 1000


def wait_for(predicate, timeout=WAIT_S, poll=0.01):
    end = time.perf_counter() + timeout
    while time.perf_counter() < end:
        if predicate():
            return True
        time.sleep(poll)
    return predicate()


@pytest.fixture
def make_worker():
    workers = []

    def make(scenario="t-handle", **kw):
        sc = load(scenario) if isinstance(scenario, str) else scenario
        w = SimulationWorker(sc, **kw)
        w.start()
        workers.append(w)
        return w

    yield make
    for w in workers:
        w.stop()
        assert not w.is_alive()


def test_history_ring_wraps_and_thins():
    h = History(10)
    for k in range(25):
        row = np.zeros((1, WIDTH))
        row[0, 0] = k
        h.append(row)
    assert len(h) == 10
    assert h.snapshot()["t"].tolist() == list(range(15, 25))
    assert h.snapshot(since=20.5)["t"].tolist() == [21, 22, 23, 24]
    thin = h.snapshot(max_points=3)["t"]
    assert len(thin) <= 3 and thin[-1] == 24
    big = np.zeros((30, WIDTH))
    big[:, 0] = np.arange(100, 130)
    h.append(big)
    assert h.snapshot()["t"].tolist() == list(range(120, 130))


def _played_rate(w, wall_s: float = 1.0) -> float:
    """Simulated s per wall s over about ``wall_s``, on the worker's own stamps: each snapshot says
    when its state was due and how much wall time stalls made it skip (a busy machine stalls the
    worker, and the test thread reads late; neither is pacing)."""
    a = w.latest()
    time.sleep(wall_s)
    assert wait_for(lambda: w.latest().due_wall > a.due_wall + 0.5 * wall_s)
    b = w.latest()
    return (b.t - a.t) / ((b.due_wall - a.due_wall) - (b.dropped_wall_s - a.dropped_wall_s))


def test_paces_to_real_time_and_speed(make_worker):
    w = make_worker(repeat=False)
    assert wait_for(lambda: w.latest().t > 0.05)  # first batch compiles / loads the kernels
    assert 0.85 < _played_rate(w) < 1.1
    w.set_speed(5.0)
    assert wait_for(lambda: w.latest().speed == 5.0)
    assert 4.3 < _played_rate(w) < 5.5
    assert w.latest().speed == 5.0
    w.set_speed(1000.0)
    assert wait_for(lambda: w.latest().speed == 10.0)


def test_pause_step_reset(make_worker):
    w = make_worker(repeat=False)
    assert wait_for(lambda: w.latest().t > 0.2)
    w.pause()
    assert wait_for(lambda: not w.latest().running)
    t_paused = w.latest().t
    time.sleep(0.3)
    assert w.latest().t == t_paused
    w.step()
    assert wait_for(lambda: w.latest().t > t_paused)
    assert not w.latest().running
    assert w.latest().t - t_paused == pytest.approx(1 / 30, abs=RECORD_INTERVAL_S)
    run_id = w.latest().run_id
    w.reset()
    assert wait_for(lambda: w.latest().run_id != run_id)
    snap = w.latest()
    assert snap.t == 0.0 and not snap.running
    np.testing.assert_array_equal(snap.state.w, load("t-handle").angular_velocity)
    w.play()
    assert wait_for(lambda: w.latest().t > 0.1)


def test_kick_adds_inverse_inertia_times_impulse(make_worker):
    sc = load("boxes-simple")
    w = make_worker(sc, running=False)
    J = np.array([0.0, 0.02, 0.0])
    w.kick(J)
    assert wait_for(lambda: w.latest().kick_times)
    snap = w.latest()
    expected = np.asarray(sc.angular_velocity) + np.linalg.solve(sc.rigid_body.inertia, J)
    np.testing.assert_allclose(snap.state.w, expected, rtol=1e-12)
    assert snap.E_drift == 0.0  # drifts are measured from the kick on
    w.kick()  # the default kick tips the spin by KICK_FRACTION |omega|, whatever the moments
    assert wait_for(lambda: len(w.latest().kick_times) == 2)
    dw = w.latest().state.w - snap.state.w
    assert np.linalg.norm(dw) == pytest.approx(KICK_FRACTION * np.linalg.norm(snap.state.w), rel=1e-12)
    # a third kick of the paused run applies too, again by KICK_FRACTION of the |omega| it meets
    before = w.latest().state.w
    w.kick()
    assert wait_for(lambda: len(w.latest().kick_times) == 3)
    dw = w.latest().state.w - before
    assert np.linalg.norm(dw) == pytest.approx(KICK_FRACTION * np.linalg.norm(before), rel=1e-12)


def test_flips_match_an_offline_run(make_worker):
    sc = load("boxes-complex")
    w = make_worker(sc, speed=10.0, repeat=False)
    assert wait_for(lambda: w.latest().t > 6.0)
    w.pause()
    assert wait_for(lambda: not w.latest().running)
    snap = w.latest()
    traj = simulate(sc.model, sc.initial_state, sc.solver.integrator, sc.solver.dt, snap.t, sample=RECORD_INTERVAL_S)
    expected = diagnostics.flip_times(sc.rigid_body, traj.t, traj.w)
    assert snap.flips == len(expected) >= 2
    np.testing.assert_allclose(snap.flip_times, expected, atol=1e-9)
    hist = w.span(None)
    assert np.all(np.diff(hist["t"]) > 0)
    assert np.all(np.isfinite(hist["E_drift"])) and np.max(np.abs(hist["E_drift"])) < 1e-6
    assert np.max(np.abs(hist["L_norm_drift"])) < 1e-6


def test_history_is_bounded_and_repeat_restarts(make_worker):
    sc = load("boxes-simple")
    sc = sc.replace(solver=SolverSpec("rk4", 1e-3, 2.0))
    w = make_worker(sc, speed=10.0, repeat=True, history_capacity=50)
    first = w.latest().run_id
    assert wait_for(lambda: w.latest().run_id >= first + 2)
    assert len(w.history) <= 50
    assert w.latest().t <= 2.0


def test_without_repeat_the_run_pauses_at_its_end_with_its_kick_and_play_goes_on(make_worker):
    sc = load("boxes-complex")
    sc = sc.replace(solver=SolverSpec("rk4", 1e-3, 1.0))
    w = make_worker(sc, speed=5.0)  # repeat is off unless asked for
    assert wait_for(lambda: w.latest().t > 0.3)
    w.kick()
    assert wait_for(lambda: len(w.latest().kick_times) == 1)
    run = w.latest().run_id
    assert wait_for(lambda: w.latest().ended)
    snap = w.latest()
    assert not snap.running and snap.run_id == run and len(snap.kick_times) == 1
    # it stops at the duration itself (a whole number of record intervals here)
    assert snap.t == pytest.approx(sc.solver.duration, abs=1e-9)
    time.sleep(0.2)
    assert w.latest().t == snap.t
    w.play()  # goes on past the end, kick and all
    assert wait_for(lambda: w.latest().t > sc.solver.duration + 0.2)
    snap = w.latest()
    assert snap.running and not snap.ended and snap.run_id == run and len(snap.kick_times) == 1
    w.reset()
    assert wait_for(lambda: w.latest().run_id != run and not w.latest().ended)


def test_reset_or_a_new_scenario_at_the_end_plays_the_new_run(make_worker):
    sc = load("boxes-simple").replace(solver=SolverSpec("rk4", 1e-3, 0.2))
    w = make_worker(sc, speed=5.0)
    for restart in (w.reset, lambda: w.apply(sc.replace(name="again"))):
        assert wait_for(lambda: w.latest().ended)
        run = w.latest().run_id
        restart()  # the end paused the run, not the user: the new run plays
        # playing, or already played to its end: the new 0.2 s run lasts 40 ms of wall time at 5x,
        # which a busy machine's test thread can sleep through
        assert wait_for(lambda: (lambda s: s.run_id != run and s.t > 0.05 and (s.running or s.ended))(w.latest()))


def test_a_user_pause_survives_a_reset(make_worker):
    w = make_worker("boxes-simple", speed=5.0)
    assert wait_for(lambda: w.latest().t > 0.1)
    w.pause()
    assert wait_for(lambda: not w.latest().running)
    run = w.latest().run_id
    w.reset()
    assert wait_for(lambda: w.latest().run_id != run)
    assert not w.latest().running and not w.latest().ended


def test_a_step_at_the_end_goes_on(make_worker):
    sc = load("boxes-simple").replace(solver=SolverSpec("rk4", 1e-3, 0.2))
    w = make_worker(sc, speed=5.0)
    assert wait_for(lambda: w.latest().ended)
    t_end = w.latest().t
    w.step()
    assert wait_for(lambda: w.latest().t > t_end)
    assert not w.latest().running


def test_turning_repeat_on_after_the_end_restarts(make_worker):
    sc = load("boxes-simple").replace(solver=SolverSpec("rk4", 1e-3, 0.2))
    w = make_worker(sc, speed=5.0)
    assert wait_for(lambda: w.latest().ended)
    run = w.latest().run_id
    w.set_repeat(True)
    w.play()
    assert wait_for(lambda: w.latest().run_id > run)
    assert w.latest().repeat and w.latest().t <= 0.2


def test_divergence_is_reported_and_the_thread_lives(make_worker, monkeypatch):
    import tumble.physics.integrators as integrators

    def broken(*args, **kwargs):
        raise DivergenceError(1.25, 42, "non-finite state")

    w = make_worker(running=False)
    monkeypatch.setattr(integrators, "simulate", broken)
    w.play()
    assert wait_for(lambda: w.latest().error is not None)
    snap = w.latest()
    assert "diverged at t = 1.25" in snap.error and not snap.running
    monkeypatch.undo()
    w.reset()
    w.play()
    assert wait_for(lambda: w.latest().error is None and w.latest().t > 0.05)


def test_apply_switches_scenario(make_worker):
    w = make_worker()
    w.apply(load("boxes-simple"))
    assert wait_for(lambda: w.latest().scenario.name == "Boxes simple")


def test_check_runnable_refuses_exact_with_torques():
    sc = load("rocket-top").replace(solver=SolverSpec("exact", 1e-3, 10.0))
    with pytest.raises(ParameterError, match="integrator"):
        check_runnable(sc)


def test_stop_joins_quickly(make_worker):
    w = make_worker()
    t0 = time.perf_counter()
    w.stop()
    assert not w.is_alive() and time.perf_counter() - t0 < 1.0
    assert w not in threading.enumerate()  # joined: no thread of the worker's is left


def _with_solver(name, **changes):
    sc = load(name)
    return sc.replace(solver=SolverSpec(**{**sc.solver.__dict__, **changes}))


def test_a_step_longer_than_the_lag_allowance_is_still_taken(make_worker):
    """dt = 0.3 s is longer than the backlog the worker lets build up (0.25 s at 1x): it
    used to drop the backlog before every step and sit at t = 0 for good."""
    w = make_worker(_with_solver("t-handle", integrator="euler", dt=0.3))
    assert wait_for(lambda: w.latest().t >= 0.6 - 1e-9)
    assert w.latest().error is None


def test_slow_motion_samples_more_often(make_worker):
    """At 0.1x a sample every 10 ms of simulated time would be a new state every 100 ms of
    wall time; the worker samples every 1 ms instead (one step at dt 1e-3)."""
    w = make_worker("t-handle", speed=0.1)
    assert wait_for(lambda: len(w.span(None)["t"]) > 20)
    spacing = np.diff(w.span(None)["t"][1:])
    np.testing.assert_allclose(spacing, 1e-3, rtol=1e-9)
    w.set_speed(1.0)
    t_switch = w.latest().t
    assert wait_for(lambda: w.latest().t > t_switch + 0.1)
    later = w.span(t_switch + 0.02)["t"]
    np.testing.assert_allclose(np.diff(later), RECORD_INTERVAL_S, rtol=1e-9)


def test_a_tiny_step_keeps_batches_short_and_stops_promptly(make_worker):
    """dt = 1e-7: a history sample would be 10^5 steps; it is capped at MAX_BATCH_STEPS, so
    the worker publishes every batch and its stop (a join) waits for one short batch. (A
    scenario takes at most 1e8 steps: over 5 s, dt 1e-7 is within it.)"""
    assert record_steps(1e-7) == MAX_BATCH_STEPS and record_steps(1e-3) == 10
    assert record_steps(1e-3, speed=0.1) == 1 and record_steps(0.3) == 1
    w = make_worker(_with_solver("t-handle", dt=1e-7, duration=5.0))
    assert wait_for(lambda: w.latest().steps >= 2 * MAX_BATCH_STEPS)
    w.stop()
    assert not w.is_alive()
