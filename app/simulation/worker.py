"""The simulation worker: a plain thread that owns the state, paces it to real time and
publishes immutable snapshots plus a bounded history. No Qt here, so it runs headless.

Call tree (one loop iteration of :meth:`SimulationWorker.run`)::

    run
    ├── _drain_commands      queue.Queue -> apply / play / pause / step / reset / kick / speed
    ├── _due_records         wall clock x speed -> how many record intervals are due
    ├── _advance(n)          physics simulate() over n record intervals, diagnostics
    │   ├── history.append   bounded ring, one lock
    │   └── _publish         new frozen Snapshot in the single "latest" slot, one lock
    └── sleep                until the next record interval is due (or a command arrives)

Readers (the GUI timer, tests, the benchmark) call :meth:`SimulationWorker.latest` and
:meth:`SimulationWorker.history`; both return copies, so drawing never holds the lock.
"""

from __future__ import annotations

import math
import queue
import threading
import time
import traceback
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from ..physics import diagnostics
from ..physics.errors import DivergenceError, ParameterError
from ..physics.state import State
from ..scenario import Scenario
from .recording import Span
from .history import WIDTH, History, SLICES

#: simulated time between two history samples at real time or faster (s); slow motion
#: samples more often (see :func:`record_steps`); a run with a larger dt samples every step
RECORD_INTERVAL_S = 0.01
#: history rows kept (about 11 minutes of simulated time at the record interval, 8 MB)
HISTORY_CAPACITY = 65536
#: longest sleep of the idle loop (s); commands wake it earlier
IDLE_WAIT_S = 0.05
#: shortest sleep (s): below this the loop just yields, to keep the GUI thread fed
MIN_SLEEP_S = 0.001
#: least wall time between two batches (s): at high speed a batch covers several record
#: intervals instead of waking the thread (and taking the GUI's interpreter lock) 1000 times
#: a second; 100 publications a second are still more than the display draws
BATCH_INTERVAL_S = 0.01
#: if the worker falls this far behind the wall clock (s of wall time), it drops the backlog
#: and re-anchors instead of trying to catch up (a stalled machine must not spiral)
MAX_LAG_S = 0.25
#: most simulated steps taken in one batch, so commands are never delayed for long
MAX_BATCH_STEPS = 20000
#: wall-clock window over which the real-time factor and steps/s are measured (s)
RATE_WINDOW_S = 1.0
#: one "step" command advances this much wall time at the current speed (one display frame)
STEP_FRAME_S = 1.0 / 30.0
#: a default kick changes omega by this fraction of |omega| (small: a stable spin stays stable)
KICK_FRACTION = 0.15
#: playback speed limits (multiples of real time)
MIN_SPEED, MAX_SPEED = 0.1, 10.0
#: kicks remembered in a snapshot (for plot markers)
KICKS_KEPT = 32
#: flip times remembered in a snapshot
FLIPS_KEPT = 64


@dataclass(frozen=True)
class Snapshot:
    """Everything the GUI draws in one frame; immutable, safe to read from any thread.

    ``run_id`` changes whenever the run restarts (apply, reset, repeat), so readers know to
    clear their curves. ``serial`` changes with every publication. ``ended`` is True while
    the run is paused at its duration (repeat off), until it plays on or restarts.
    """

    serial: int
    run_id: int
    scenario: Scenario
    state: State
    L: np.ndarray                 # world frame, about the centre of mass
    L_norm_drift: float
    E_drift: float
    flips: int
    flip_times: tuple
    kick_times: tuple
    predicted_flip_period: float | None
    running: bool
    speed: float
    repeat: bool
    ended: bool                   # paused at solver.duration (repeat off)
    realtime_factor: float        # simulated seconds per wall second (0 when paused)
    steps_per_second: float
    steps: int                    # steps taken in this run
    sim_elapsed: float            # simulated seconds advanced since the worker started, all runs
    error: str | None = None      # the last failure, shown by the GUI; None when fine
    error_serial: int = 0         # increments with each new error
    error_detail: str = field(default="", repr=False)
    #: the state the current segment started from (the run's start or its last kick): the
    #: exact torque-free solution from here is what the GUI's "exact ghost" draws
    segment_start: State | None = None
    #: what compiles in the background while the run steps uncompiled (:func:`..physics.jit.note`),
    #: "" when nothing does
    compiling: str = ""
    #: how many times slower than ``speed`` the run plays now: a time map's factor inside its
    #: slow-motion window around a flip (:meth:`SimulationWorker.set_time_map`), else 1
    slowed: float = 1.0
    #: the worker's clock (s) at which the pacing aimed the run at this state: ``t`` is where
    #: the clock said the run should be then (to a record interval), however late it is read
    due_wall: float = 0.0
    #: wall seconds the clock skipped after stalls (MAX_LAG_S), all runs: the time a busy
    #: machine did not play, said rather than hidden
    dropped_wall_s: float = 0.0

    @property
    def t(self) -> float:
        return self.state.t


def record_steps(dt: float, speed: float = 1.0) -> int:
    """Integrator steps between two history samples (each one a publication).

    About RECORD_INTERVAL_S of simulated time, times the speed below real time, so that slow
    motion still publishes a new state about every 10 ms of wall time (not every 100 ms at
    0.1x); never more than MAX_BATCH_STEPS, so a tiny dt cannot make one batch run for
    seconds.
    """
    interval = RECORD_INTERVAL_S * min(1.0, float(speed))
    return int(min(max(1, round(interval / dt)), MAX_BATCH_STEPS))


def check_runnable(scenario: Scenario) -> None:
    """Raise :class:`ParameterError` if the worker could not step this scenario.

    Thread: any (cheap; nothing is compiled). The GUI calls it before applying, so that a
    refused integrator shows inline instead of stopping the run.
    """
    from ..physics.integrators import Propagator

    solver = scenario.solver
    Propagator(scenario.model, solver.integrator, solver.dt, solver.rtol, solver.atol)


def predicted_period(scenario: Scenario, w_body=None) -> float | None:
    """Closed-form flip period, or None when there is no flip or the free-body theory does not
    apply (:func:`app.physics.theory.applies`: applied torques, a damper or a rotor)."""
    try:
        from ..physics import theory

        w = scenario.angular_velocity if w_body is None else w_body
        return theory.flip_period(scenario.rigid_body, w, scenario.applied_loads)
    except (ImportError, AttributeError, ParameterError, ValueError, ZeroDivisionError, FloatingPointError):
        return None


def default_kick(scenario: Scenario, w_body: np.ndarray) -> np.ndarray:
    """A small angular impulse J (body frame) that adds ``KICK_FRACTION |omega|`` of spin
    about the principal axis least aligned with omega, so it tips the spin instead of
    speeding it up: J = I (dw), whatever the moments (a share of |L| about a small moment
    would tilt a spin by 40 degrees)."""
    body = scenario.rigid_body
    _, axes = body.principal()
    w = np.asarray(w_body, dtype=float)
    rate = float(np.linalg.norm(w))
    if rate == 0.0:
        # nothing spinning: knock it about the intermediate axis at 1 rad/s
        return body.inertia @ axes[:, 1]
    alignment = np.abs(w @ axes)
    return body.inertia @ (KICK_FRACTION * rate * axes[:, int(np.argmin(alignment))])


class SimulationWorker(threading.Thread):
    """Owns the running state; paces to real time x speed; applies queued commands.

    Start with :meth:`start`, stop with :meth:`stop` (joins). Every public method except
    :meth:`run` may be called from any thread: it only enqueues a command or copies data.
    """

    def __init__(self, scenario: Scenario, *, running: bool = True, speed: float = 1.0,
                 repeat: bool = False, history_capacity: int = HISTORY_CAPACITY,
                 clock=time.perf_counter):
        super().__init__(name="tumble-simulation", daemon=True)
        self._clock = clock
        self._due_wall = 0.0      # the clock when the state was last due (Snapshot.due_wall)
        self._dropped_wall = 0.0  # wall seconds skipped after stalls (Snapshot.dropped_wall_s)
        self._speed = _clamp_speed(speed)
        self._commands: queue.Queue = queue.Queue()
        self._stop_event = threading.Event()
        self._lock = threading.Lock()
        self.history = History(history_capacity)
        self._serial = 0
        self._run_id = 0
        self._error: str | None = None
        self._error_detail = ""
        self._error_serial = 0
        self._running = bool(running)
        self._repeat = bool(repeat)
        self._ended = False       # paused at the duration
        self._past_end = False    # played on past the duration (it stops there once a run)
        self._rates: deque = deque()
        self._latest: Snapshot | None = None
        self._sim_elapsed = 0.0
        self._make_map = None     # makes the time map of a segment (set_time_map)
        self._map = None
        self._load(scenario)
        self._publish()

    # ------------------------------------------------------------------ commands (any thread)

    def apply(self, scenario: Scenario) -> None:
        """Restart with new parameters at the next step boundary."""
        self._commands.put(("apply", scenario))

    def play(self) -> None:
        self._commands.put(("play", None))

    def pause(self) -> None:
        self._commands.put(("pause", None))

    def toggle(self) -> None:
        """Play if paused, pause if playing."""
        self._commands.put(("toggle", None))

    def step(self) -> None:
        """Pause, then advance one display frame's worth of simulated time."""
        self._commands.put(("step", None))

    def reset(self) -> None:
        """Back to the scenario's initial state (keeps playing or paused as it was)."""
        self._commands.put(("reset", None))

    def kick(self, impulse_body=None) -> None:
        """Apply an angular impulse J (N m s, body frame) at the next step: w += I^-1 J.

        None means :func:`default_kick`.
        """
        self._commands.put(("kick", None if impulse_body is None else np.array(impulse_body, dtype=float)))

    def set_speed(self, speed: float) -> None:
        """Playback speed, a multiple of real time, clamped to [MIN_SPEED, MAX_SPEED]."""
        self._commands.put(("speed", float(speed)))

    def set_time_map(self, make=None) -> None:
        """Pace the run through a time map (slow motion around the flips), or not (None).

        ``make(scenario, state)`` returns the map from ``state`` on: an object with
        ``advance(t, dp)`` (the simulated time ``dp`` of presentation time after ``t``),
        ``presentation_time(t)``, ``slowed(t)``, ``factor`` and ``until`` (how far it knows the
        run); :func:`app.export.timeline.slow_flips_map` makes one. It is called on the worker's
        thread at every new segment (apply, reset, kick, a repeat) and when the run nears ``until``.
        """
        self._commands.put(("time_map", make))

    def set_repeat(self, repeat: bool) -> None:
        """At ``solver.duration``: restart from the initial state (True), or pause there
        (False, the default: a kick or an edit of the running state is not lost; Play goes on
        past the end, Reset starts again)."""
        self._commands.put(("repeat", bool(repeat)))

    def stop(self, timeout: float | None = 5.0) -> None:
        """Stop the loop and join the thread. Thread: any but the worker's own."""
        self._stop_event.set()
        self._commands.put(("wake", None))
        if self.is_alive():
            self.join(timeout)

    # ------------------------------------------------------------------ readers (any thread)

    def latest(self) -> Snapshot:
        """The newest published snapshot (immutable)."""
        with self._lock:
            return self._latest

    def span(self, t0: float | None, t1: float | None = None, max_points: int | None = None) -> Span:
        """The :class:`~.recording.Recording` of the run playing: history rows with
        ``t0 <= t <= t1``, thinned, with the flips the latest snapshot remembers and the
        start of the segment (the run's start or its last kick) at ``t1``. Thread: any."""
        snap = self.latest()
        columns = self.history.snapshot(t0, max_points, until=t1)
        end = snap.t if t1 is None else t1
        flips = np.asarray(snap.flip_times, dtype=float)
        later = int(np.count_nonzero(flips > end))
        lo = -np.inf if t0 is None else t0
        kicks = [k for k in snap.kick_times if k <= end]
        return Span(columns=columns, flips=flips[(flips >= lo) & (flips <= end)], flip_count=snap.flips - later,
                    segment_start=kicks[-1] if kicks else float(snap.scenario.initial_state.t))

    # ------------------------------------------------------------------ the loop (worker thread)

    def run(self) -> None:
        """The worker loop. Thread: the worker's own."""
        self._anchor()
        while not self._stop_event.is_set():
            try:
                self._drain_commands(block=not self._running)
                if self._stop_event.is_set() or not self._running:
                    continue
                due = self._due_records()
                if due > 0:
                    started = self._clock()
                    self._advance(due)
                    self._rest(BATCH_INTERVAL_S - (self._clock() - started))
                else:
                    self._sleep_until_due()
            except Exception as err:  # shown in the GUI; the thread lives on, paused
                self._fail(err)

    def _drain_commands(self, block: bool) -> None:
        try:
            cmd = self._commands.get(timeout=IDLE_WAIT_S) if block else self._commands.get_nowait()
        except queue.Empty:
            return
        while True:
            self._execute(*cmd)
            try:
                cmd = self._commands.get_nowait()
            except queue.Empty:
                return

    def _execute(self, name: str, arg) -> None:
        if name == "apply":
            self._load(arg)
            self._clear_error()
        elif name == "play":
            if not self._running:
                self._running = True
                self._go_past_end()
                self._clear_error()
                self._anchor()
        elif name == "pause":
            self._running = False
        elif name == "toggle":
            self._execute("pause" if self._running else "play", None)
            return
        elif name == "step":
            self._running = False
            self._go_past_end()
            n = max(1, round(STEP_FRAME_S * self._speed / self._record_dt))
            self._advance(n)
            return
        elif name == "reset":
            self._restart()
            self._clear_error()
        elif name == "kick":
            self._kick(arg)
        elif name == "speed":
            self._speed = _clamp_speed(arg)
            self._set_record_interval()
            self._anchor()
        elif name == "repeat":
            self._repeat = arg
        elif name == "time_map":
            self._make_map = arg
            self._remap()
        elif name == "wake":
            return
        self._publish()

    # ------------------------------------------------------------------ internals (worker thread)

    def _load(self, scenario: Scenario) -> None:
        self._scenario = scenario
        solver = scenario.solver
        self._model = scenario.model
        self._integrator = solver.integrator
        self._dt = solver.dt
        self._set_record_interval()
        self._body = scenario.rigid_body
        self._gravity = np.asarray(scenario.gravity, dtype=float)
        self._restart()

    def _set_record_interval(self) -> None:
        slowest = self._speed / (self._map.factor if self._map is not None else 1.0)
        self._record_every = record_steps(self._dt, slowest)
        self._record_dt = self._record_every * self._dt

    def _go_past_end(self) -> None:
        """Play or step from the end: the run goes on past its duration (once a run)."""
        if self._ended:
            self._ended = False
            self._past_end = True

    def _restart(self) -> None:
        if self._ended:  # paused by the run's end, not by the user: the new run plays
            self._running = True
        self._ended = self._past_end = False
        self._state = self._scenario.initial_state
        self._segment_start = self._state
        self._run_id += 1
        self._steps = 0
        self._flip_times: deque = deque(maxlen=FLIPS_KEPT)
        self._flips = 0
        self._kick_times: deque = deque(maxlen=KICKS_KEPT)
        self._predicted = predicted_period(self._scenario)
        self.history.clear()
        self._baseline()
        st = self._state
        row = self._rows(np.array([st.t]), st.c[None], st.v[None], st.q[None], st.w[None],
                         None if st.s is None else st.s[None])
        self._last_row = row[-1]
        self.history.append(row)
        self._remap()

    def _remap(self) -> None:
        """A new time map from the state on (a new segment, or the old map's look-ahead used up)."""
        self._map = None
        if self._make_map is not None:
            from ..physics.compiled import jit  # numba: here, not when the parser reads the speeds

            with jit.never_waiting():
                self._map = self._make_map(self._scenario, self._state)
        self._set_record_interval()
        self._anchor()

    def _baseline(self) -> None:
        s = self._state
        L0 = diagnostics.angular_momentum(self._body, s.q, s.w, s.s)
        self._L0_norm = float(np.linalg.norm(L0))
        self._E0 = self._energy(s.c, s.v, s.w, s.s)

    def _energy(self, c, v, w, s=None):
        """E = T + V; ``s`` is a damper sphere's rate (body frame), None without a damper."""
        return (diagnostics.kinetic_energy(self._body, v, w, s)
                + diagnostics.potential_energy(self._body, self._gravity, c))

    def _anchor(self) -> None:
        self._wall0 = self._due_wall = self._clock()
        self._sim0 = self._state.t
        self._rates.clear()
        self._rates.append((self._wall0, self._state.t, self._steps))

    def _paced(self, wall: float) -> float:
        """The simulated time the clock reaches after ``wall`` seconds from the anchor."""
        if self._map is None:
            return self._sim0 + self._speed * wall
        return self._map.advance(self._sim0, self._speed * wall)

    def _due_records(self) -> int:
        now = self._clock()
        if self._map is not None and self._state.t > self._map.until - 1.0:
            self._remap()  # look further ahead
        target = self._paced(now - self._wall0)
        behind = target - self._state.t
        # a stall: forget the backlog and keep going from here; the allowance always holds
        # one record, or a step longer than the allowance (dt 0.3 s) would never be taken
        allowance = max(MAX_LAG_S * self._speed, self._record_dt)
        if behind > allowance:
            self._dropped_wall += (behind - allowance) / self._speed
            self._wall0 = now - allowance / self._speed
            self._sim0 = self._state.t
            behind = allowance
        self._due_wall = now
        n = int(math.floor(behind / self._record_dt + 1e-9))
        return min(n, max(1, MAX_BATCH_STEPS // self._record_every))

    def _rest(self, wait: float) -> None:
        """Sleep up to ``wait`` seconds; a command ends the rest early."""
        if wait <= 0:
            return
        try:
            cmd = self._commands.get(timeout=wait)
        except queue.Empty:
            return
        self._execute(*cmd)

    def _sleep_until_due(self) -> None:
        next_t = self._state.t + self._record_dt
        ahead = next_t - self._sim0
        if self._map is not None:  # presentation time to it
            ahead = self._map.presentation_time(next_t) - self._map.presentation_time(self._sim0)
        wait = ahead / self._speed - (self._clock() - self._wall0)
        wait = min(max(wait, MIN_SLEEP_S), IDLE_WAIT_S)
        try:
            cmd = self._commands.get(timeout=wait)
        except queue.Empty:
            return
        self._execute(*cmd)

    def _advance(self, n_records: int) -> None:
        from ..physics.integrators import simulate

        duration = self._scenario.solver.duration
        end_clip = False
        if self._repeat or not self._past_end:
            left = duration - self._state.t
            max_records = int(math.floor(left / self._record_dt + 1e-9))
            if max_records <= 0:
                self._end_reached()
                return
            if n_records >= max_records:
                n_records, end_clip = max_records, True
        span = n_records * self._record_dt
        solver = self._scenario.solver
        from ..physics.compiled import jit

        with jit.never_waiting():  # the body moves while a kernel loads or compiles
            traj = simulate(self._model, self._state, self._integrator, self._dt, span, sample=self._record_dt,
                            rtol=solver.rtol, atol=solver.atol)
        rows = self._rows(traj.t[1:], traj.c[1:], traj.v[1:], traj.q[1:], traj.w[1:],
                          None if traj.s is None else traj.s[1:])
        self._count_flips(traj.t, traj.w)
        self._state = traj.state(-1)
        self._sim_elapsed += span
        self._steps += n_records * self._record_every
        self._last_row = rows[-1]
        self.history.append(rows)
        now = self._clock()
        self._rates.append((now, self._state.t, self._steps))
        while len(self._rates) > 2 and now - self._rates[1][0] > RATE_WINDOW_S:
            self._rates.popleft()
        self._publish()
        if end_clip and self._duration_reached(duration):
            self._end_reached()

    def _end_reached(self) -> None:
        """The run is at its duration: start again (repeat), or pause at the end."""
        if self._repeat:
            self._restart()
        else:
            self._running = False
            self._ended = True
        self._publish()

    def _duration_reached(self, duration: float) -> bool:
        return self._state.t >= duration - 1e-9 * max(1.0, duration)

    def _rows(self, t, c, v, q, w, s=None) -> np.ndarray:
        L = diagnostics.angular_momentum(self._body, q, w, s)
        E = self._energy(c, v, w, s)
        rows = np.empty((len(t), WIDTH))
        rows[:, SLICES["t"]] = t
        rows[:, SLICES["c"]] = c
        rows[:, SLICES["q"]] = q
        rows[:, SLICES["w"]] = w
        rows[:, SLICES["L"]] = L
        L_norm = np.linalg.norm(L, axis=-1)
        rows[:, SLICES["L_norm_drift"]] = (L_norm - self._L0_norm) / (self._L0_norm or 1.0)
        rows[:, SLICES["E_drift"]] = (E - self._E0) / (abs(self._E0) or 1.0)
        return rows

    def _count_flips(self, t: np.ndarray, w: np.ndarray) -> None:
        """Sign reversals of the intermediate-axis component of omega in this batch.

        ``t[0], w[0]`` is the state the batch started from (the previous batch's end), so
        every boundary between batches is examined exactly once.
        """
        found = diagnostics.flip_times(self._body, t, w)
        self._flip_times.extend(float(x) for x in found)
        self._flips += len(found)

    def _kick(self, impulse) -> None:
        J = default_kick(self._scenario, self._state.w) if impulse is None else impulse
        s = self._state
        w = s.w + np.linalg.solve(self._body.inertia, J)
        # an impulse on the body's shell: a damper's sphere, coupled only viscously, keeps its rate
        self._state = s.replace(w=w)
        self._segment_start = self._state
        self._kick_times.append(s.t)
        if self._make_map is not None:  # the flips ahead moved
            self._remap()
        self._baseline()  # drifts measure the integrator, not the kick
        self._predicted = predicted_period(self._scenario, w)
        self._last_row = self._rows(np.array([s.t]), s.c[None], s.v[None], s.q[None], w[None],
                                    None if s.s is None else s.s[None])[-1]
        self.history.append(self._last_row[None])

    def _fail(self, err: Exception) -> None:
        self._running = False
        if isinstance(err, (DivergenceError, ParameterError)):
            message = str(err)
        else:
            message = f"internal error in the simulation: {err.__class__.__name__}: {err}"
        self._error = message
        self._error_detail = traceback.format_exc()
        self._error_serial += 1
        self._publish()

    def _clear_error(self) -> None:
        self._error = None
        self._error_detail = ""

    def _publish(self) -> None:
        from ..physics.compiled import jit

        first = self._rates[0] if self._rates else None
        rtf = sps = 0.0
        if self._running and first is not None and len(self._rates) > 1:
            last = self._rates[-1]
            span = last[0] - first[0]
            if span > 0:
                rtf = (last[1] - first[1]) / span
                sps = (last[2] - first[2]) / span
        row = self._last_row
        self._serial += 1
        snap = Snapshot(
            serial=self._serial,
            run_id=self._run_id,
            scenario=self._scenario,
            state=self._state,
            L=np.array(row[SLICES["L"]]),
            L_norm_drift=float(row[SLICES["L_norm_drift"]]),
            E_drift=float(row[SLICES["E_drift"]]),
            flips=self._flips,
            flip_times=tuple(self._flip_times),
            kick_times=tuple(self._kick_times),
            predicted_flip_period=self._predicted,
            running=self._running,
            speed=self._speed,
            repeat=self._repeat,
            ended=self._ended,
            realtime_factor=rtf,
            steps_per_second=sps,
            steps=self._steps,
            sim_elapsed=self._sim_elapsed,
            error=self._error,
            error_serial=self._error_serial,
            error_detail=self._error_detail,
            segment_start=self._segment_start,
            compiling=jit.note(),
            slowed=self._map.factor if self._map is not None and self._map.slowed(self._state.t) else 1.0,
            due_wall=self._due_wall,
            dropped_wall_s=self._dropped_wall,
        )
        snap.L.setflags(write=False)
        with self._lock:
            self._latest = snap


def _clamp_speed(speed) -> float:
    speed = float(speed)
    if not math.isfinite(speed):
        raise ParameterError("speed", speed, f"be a finite number in [{MIN_SPEED:g}, {MAX_SPEED:g}]")
    return min(max(speed, MIN_SPEED), MAX_SPEED)
