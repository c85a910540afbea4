"""Integrators by name, and the two ways to run them: :func:`simulate` and :class:`Propagator`.

Fixed-step methods run in the compiled kernels (:mod:`.compiled.kernels`); ``dop853`` goes through
scipy's ``solve_ivp`` (dt is its largest step); ``exact`` evaluates the closed-form
torque-free solution (:mod:`.exact`) at each output time, so no error accumulates.

Every fact about an integrator (name, description, order, torque-free only, row width,
kernel id...) lives in one :class:`IntegratorInfo` entry of :data:`REGISTRY`, which the
scenario, the command line and the window read. Adding an integrator is one entry there
plus its step function in :mod:`.compiled.kernels` and its entry kernel in :mod:`.compiled.runs`; :mod:`.compiled.jit` hands
out each entry kernel compiled, or uncompiled while it compiles in the background.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .compiled import layout  # the kernels' numbers; the kernels themselves (numba) on first use
from .errors import DivergenceError, ParameterError
from .model import Model, compile_model
from .state import State, Trajectory

# ---------------------------------------------------------------- limits of one run
# Every run is sized before any work is done (:func:`check_run_size`), so bad input is
# refused at once with the limit named, never after minutes or gigabytes.

#: most steps one run may take, counted over all the bodies stepped together (a stability
#: map steps thousands): the largest run took 13 s with rk4 and 52 s with midpoint here
#: (``tumble simulate boxes-complex --duration 1e5 --sample 100``), with progress shown.
#: ``exact`` counts duration / dt too: the window advances it dt at a time.
MAX_STEPS = 100_000_000
#: dop853 steps in Python through scipy, at least duration / dt of them: 1e6 took 64 s here.
#: A run stops at twice this many, where its tolerances force steps far below dt
MAX_STEPS_DOP853 = 1_000_000
#: most samples one run may return after its first, times the bodies: ``tumble simulate``
#: peaks at about 0.5 KB a sample (0.8 KB with every ``--outputs`` group; measured), so
#: about 1 GB at most
MAX_SAMPLES = 1_000_000
#: scipy's DOP853 raises a smaller rtol to 100 machine epsilon, with a warning
MIN_RTOL = 100 * float(np.finfo(float).eps)
#: most steps between two re-orthonormalisations of ``rotmat-euler`` (0 means never)
MAX_REORTHO_EVERY = MAX_STEPS
#: most body-steps one call of the compiled kernels takes (0.1 to 0.5 s here): between two
#: calls progress is reported and Ctrl+C is noticed
STEPS_PER_CALL = 500_000
#: the same while the kernel runs uncompiled (:mod:`.compiled.jit`; 20-100 ms), so that a run asks again
#: for the compiled kernel soon
PLAIN_STEPS_PER_CALL = 5_000


@dataclass(frozen=True)
class IntegratorInfo:
    """What the program knows about one integrator; :data:`REGISTRY` holds one per method."""

    #: the name users type (``--integrator``, ``solver.integrator``, the window's menu)
    name: str
    #: one line for menus and ``--help``
    description: str
    #: theoretical order of convergence; None where no step error accumulates (``exact``)
    order: int | None
    #: the method id (:data:`.runs.RUNS` maps it to its entry kernel), or None for a method run outside the
    #: compiled kernels (``dop853`` through scipy, ``exact`` from the closed form), which
    #: can also sample at any time rather than on its own steps
    kernel_id: int | None
    #: numbers in one state row (:mod:`.compiled.kernels`); a damper adds ``layout.DAMPER_WIDTH``
    row_width: int = layout.ROW_WIDTH
    #: the closed form of the free body: no applied torque or force, no damper or rotor
    torque_free_only: bool = False
    #: its sub-flows are exact free rigid-body rotations, so a damper or a rotor breaks it
    rigid_only: bool = False
    #: the ``[solver]`` fields it reads besides integrator, dt and duration
    solver_options: tuple[str, ...] = ()
    #: most steps one run may take (:func:`check_run_size`)
    max_steps: int = MAX_STEPS

    @property
    def fixed_step(self) -> bool:
        """True if it runs in the compiled kernels, one output per whole number of steps."""
        return self.kernel_id is not None


#: every integrator the physics core offers, in the order menus show them (sources of each
#: method: :mod:`.compiled.kernels`, :mod:`.exact`); the one table every reader uses
REGISTRY: tuple[IntegratorInfo, ...] = (
    IntegratorInfo("euler", "explicit Euler, 1st order, quaternion renormalised", 1, layout.EULER),
    IntegratorInfo("semi-implicit-euler", "semi-implicit (symplectic-style) Euler of the course notes, 1st order",
                   1, layout.SEMI_IMPLICIT_EULER),
    IntegratorInfo("rk4", "classic Runge-Kutta, 4th order, quaternion renormalised", 4, layout.RK4),
    IntegratorInfo("midpoint", "implicit midpoint, 2nd order, conserves |L| and E of the free body", 2,
                   layout.MIDPOINT),
    IntegratorInfo("splitting", "Lie-Poisson splitting, 2nd order, |L| and world L to round-off", 2,
                   layout.SPLITTING, rigid_only=True),
    IntegratorInfo("splitting4", "Yoshida composition of the splitting, 4th order", 4, layout.SPLITTING4,
                   rigid_only=True),
    IntegratorInfo("dop853", "adaptive Dormand-Prince 8(5,3) via scipy, dt = largest step", 8, None,
                   solver_options=("rtol", "atol"), max_steps=MAX_STEPS_DOP853),
    IntegratorInfo("exact", "closed-form torque-free solution (Jacobi elliptic functions)", None, None,
                   torque_free_only=True, rigid_only=True),
    IntegratorInfo("rotmat-euler", "course-notes Euler on a rotation matrix, re-orthonormalised every k steps",
                   1, layout.ROTMAT_EULER, row_width=layout.ROTMAT_ROW_WIDTH,
                   solver_options=("reorthonormalize", "reorthonormalize_every")),
    IntegratorInfo("lie-rk4", "Runge-Kutta-Munthe-Kaas 4 on SO(3), exponential map, no renormalisation", 4,
                   layout.LIE_RK4),
)
_BY_NAME = {info.name: info for info in REGISTRY}
#: derived views of :data:`REGISTRY`: the names in menu order, and their descriptions
INTEGRATORS = tuple(_BY_NAME)
DESCRIPTIONS = {info.name: info.description for info in REGISTRY}
#: theoretical order of each fixed-step (kernel) method
ORDERS = {info.name: info.order for info in REGISTRY if info.fixed_step}


def integrator_info(name: str) -> IntegratorInfo:
    """The registry entry of ``name``; raises :class:`ParameterError` for an unknown one."""
    try:
        return _BY_NAME[name]
    except (KeyError, TypeError):  # TypeError: an unhashable value from a file
        raise ParameterError("integrator", name, "be one of " + ", ".join(INTEGRATORS)) from None


#: rotmat-euler re-orthonormalisation: schemes by name, and the default (every step, polar)
REORTHO_SCHEMES = {"polar": layout.REORTHO_POLAR, "gram-schmidt": layout.REORTHO_GRAM_SCHMIDT}
DEFAULT_REORTHO = "polar"
DEFAULT_REORTHO_EVERY = 1
#: default tolerances of the adaptive integrator
DOP853_RTOL = 1e-10
DOP853_ATOL = 1e-12
#: a sample interval within this relative amount of a whole number of steps counts as whole
STEP_FIT_SLACK = 1e-9

def max_steps(integrator: str) -> int:
    """The step budget of one run of ``integrator`` (see :data:`MAX_STEPS`)."""
    return integrator_info(integrator).max_steps


def check_run_size(integrator: str, dt: float, duration: float, sample: float | None = None,
                   n_bodies: int = 1, blame: str = "step", names: dict | None = None,
                   samples: bool = True) -> None:
    """Refuse, before any work, a run past the step or the sample budget.

    Steps are ``duration / min(dt, sample)`` times ``n_bodies``; samples ``duration / sample``
    (after the initial one) times ``n_bodies`` (``sample`` defaults to dt), checked only if
    ``samples`` (a scenario alone keeps none: the window's history is bounded). ``blame`` is the input the message
    asks to change: ``"step"`` (dt, or the sample interval where that is what is too small),
    ``"duration"`` or ``"bodies"`` (a given ``sample`` is named instead of the duration when
    it is what makes the run too long or too large); ``names`` maps ``"dt"``, ``"sample"``, ``"duration"`` and
    ``"bodies"`` to the names the user knows them by. Arguments must already be finite and
    > 0. Raises :class:`ParameterError`.
    """
    names = {"dt": "dt", "sample": "sample", "duration": "duration", "bodies": "bodies", **(names or {})}
    dt, duration, n = float(dt), float(duration), int(n_bodies)
    given_sample = sample is not None
    sample = dt if sample is None else float(sample)
    together = "" if n == 1 else f", {n:,} bodies stepped together"

    limit = max_steps(integrator)
    step = min(dt, sample)
    per_body = duration / step
    if per_body * n > limit * (1 + STEP_FIT_SLACK):
        budget = f"a run of {integrator} takes at most {limit:,} steps" if limit != MAX_STEPS else \
            f"a run takes at most {limit:,} steps"
        if blame == "bodies":
            raise ParameterError(names["bodies"], n, f"be <= {max(1, int(limit // per_body)):,} "
                                 f"({budget} in all; here {per_body:.3g} for each)")
        if blame == "duration" and not (given_sample and sample < dt):  # else the sample is the knob
            raise ParameterError(names["duration"], duration, f"be <= {limit * step / n:.4g} s "
                                 f"({budget}; here of {step:.4g} s{together})")
        role = "sample" if sample < dt else "dt"
        raise ParameterError(names[role], sample if role == "sample" else dt,
                             f"be >= {duration * n / limit:.4g} s ({budget}; here over {duration:g} s{together})")

    per_body = duration / sample
    if samples and per_body * n > MAX_SAMPLES * (1 + STEP_FIT_SLACK):
        budget = f"a run keeps at most {MAX_SAMPLES:,} samples in memory"
        if blame == "bodies":
            raise ParameterError(names["bodies"], n, f"be <= {max(1, int(MAX_SAMPLES // per_body)):,} ({budget})")
        if blame == "duration" and not given_sample:  # else the sample interval is the knob
            raise ParameterError(names["duration"], duration, f"be <= {MAX_SAMPLES / n * sample:.4g} s "
                                 f"({budget}; here one every {sample:.4g} s{together})")
        role = "sample" if given_sample else "dt"
        raise ParameterError(names[role], sample, f"be >= {duration * n / MAX_SAMPLES:.4g} s "
                             f"({budget}; here over {duration:g} s{together})")


def splitting_order(moments) -> np.ndarray:
    """Axis sequence (a, b, c) of the Strang splitting ``a(h/2) b(h/2) c(h) b(h/2) a(h/2)``.

    The error constant depends strongly on the order. Measured here over all six
    permutations (dt = 1e-3, 10 s, max orientation error against DOP853 at rtol 1e-13) on
    seven bodies and spins (the Boxes body, the Matlab report's I = [2, 8, 4] both ways, a
    T-handle, generic bodies near each axis): the sequence with the SMALLEST moment's axis
    outermost and the LARGEST moment's axis in the middle (full step) was the most accurate
    in four cases and within 2x to 14x of the best in the others, while putting the
    smallest moment's axis in the middle was always among the worst (36x worse on the
    Boxes body). The moments are sorted here, so any input order gives that sequence.
    """
    order = np.argsort(np.asarray(moments))
    return np.array([order[0], order[1], order[2]], dtype=np.int64)


def validate_integrator(name: str) -> str:
    """``name`` if it is a registered integrator; raises :class:`ParameterError`."""
    return integrator_info(name).name


def check_step_fits(dt: float, duration: float, names: dict | None = None, blame: str = "step") -> None:
    """Refuse a step longer than its run (``dt <= duration``): the one place this rule lives.

    ``names`` maps ``"dt"`` and ``"duration"`` to what the user knows them by (the field of
    the error, or the words its rule refers to the other one with: "the scenario's duration");
    ``blame`` is the one the message asks to change: ``"step"`` (dt, the default) or
    ``"duration"``. Both must already be numbers. Raises :class:`ParameterError`.
    """
    names = {"dt": "dt", "duration": "duration", **(names or {})}
    if float(dt) <= float(duration):
        return
    if blame == "duration":
        raise ParameterError(names["duration"], duration, f"be >= {names['dt']} ({float(dt):g} s)")
    raise ParameterError(names["dt"], dt, f"be <= {names['duration']} ({float(duration):g} s)")


def validate_dt(dt, duration=None) -> float:
    """``dt`` as a float if finite, > 0 and (given ``duration``) no longer than the run;
    raises :class:`ParameterError`."""
    try:
        ok = math.isfinite(float(dt)) and float(dt) > 0
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise ParameterError("dt", dt, "be a finite number > 0 (s)")
    if duration is not None:
        check_step_fits(dt, duration)
    return float(dt)


def validate_tolerances(rtol, atol) -> tuple[float, float]:
    """(rtol, atol) of ``dop853`` if finite and > 0, rtol at least :data:`MIN_RTOL`
    (scipy would raise it with a warning); raises :class:`ParameterError`."""
    for name, value in (("rtol", rtol), ("atol", atol)):
        try:
            ok = math.isfinite(float(value)) and float(value) > 0
        except (TypeError, ValueError, OverflowError):
            ok = False
        if not ok:
            raise ParameterError(name, value, "be a finite number > 0")
    if float(rtol) < MIN_RTOL * (1 - 1e-12):
        raise ParameterError("rtol", rtol, f"be >= {MIN_RTOL:.3g} (100 machine epsilon, the smallest scipy's DOP853 uses)")
    return float(rtol), float(atol)


def check_exact_applies(model: Model) -> None:
    """Raise unless the closed form applies (no applied torque or force, no damper or rotor;
    gravity is fine)."""
    if model.loads.has_torque or model.loads.has_force:
        raise ParameterError(
            "integrator", "exact", "be used only without applied torques or forces (the closed form is torque-free)"
        )
    if not model.body.is_rigid:
        raise ParameterError(
            "integrator", "exact", "be used only for a rigid body without a damper or a rotor (the closed form "
            "is the free rigid body's)"
        )


def check_integrator_applies(model: Model, integrator: str) -> None:
    """Raise unless ``integrator`` can step ``model``: a torque-free-only method (``exact``)
    as :func:`check_exact_applies`; a rigid-only one (the splittings) refuses a damper or a
    rotor, whose coupling is not among its exactly solved sub-flows (the others carry both)."""
    info = integrator_info(integrator)
    if info.torque_free_only:
        check_exact_applies(model)
    elif info.rigid_only and not model.body.is_rigid:
        part = "a damper" if model.body.damper is not None else "a rotor"
        raise ParameterError("integrator", integrator, f"not be a splitting method for a body with {part} "
                             "(its sub-flows are the free rigid body's; use rk4, lie-rk4 or dop853)")


def integrator_options(reorthonormalize: str = DEFAULT_REORTHO, every: int = DEFAULT_REORTHO_EVERY) -> np.ndarray:
    """Kernel options of ``rotmat-euler``: re-orthonormalise every ``every`` steps (0 or
    scheme ``"none"``: never) by ``"polar"`` decomposition or ``"gram-schmidt"``."""
    if reorthonormalize != "none" and reorthonormalize not in REORTHO_SCHEMES:
        raise ParameterError("reorthonormalize", reorthonormalize, "be one of polar, gram-schmidt, none")
    if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or not 0 <= every <= MAX_REORTHO_EVERY:
        # compared as an integer first: float() of a 400-digit one overflows
        raise ParameterError("reorthonormalize_every", every, f"be a whole number from 0 to {MAX_REORTHO_EVERY:,}")
    if reorthonormalize == "none":
        return np.array([0.0, 0.0])
    return np.array([float(every), float(REORTHO_SCHEMES[reorthonormalize])])


@dataclass
class Propagator:
    """Steps a state forward, one call per batch of steps (used by the simulation worker).

    Methods with hidden state (the matrix of ``rotmat-euler``) carry it from one call to the
    next when the state passed in is the one last returned.
    Thread: any, but one thread per instance (it holds no lock; the worker owns it).
    """

    model: Model
    integrator: str
    dt: float
    rtol: float = DOP853_RTOL
    atol: float = DOP853_ATOL
    reorthonormalize: str = DEFAULT_REORTHO
    reorthonormalize_every: int = DEFAULT_REORTHO_EVERY

    def __post_init__(self):
        validate_integrator(self.integrator)
        validate_dt(self.dt)
        check_integrator_applies(self.model, self.integrator)
        self._options = integrator_options(self.reorthonormalize, self.reorthonormalize_every)
        self._last = None  # (state, rows) of the previous call

    def advance(self, state: State, n_steps: int) -> State:
        """The state ``n_steps * dt`` later. Raises :class:`DivergenceError`."""
        times = np.array([0.0, n_steps * self.dt])
        rows0 = self._last[1] if self._last is not None and self._last[0] is state else None
        traj, rows = _run(self.model, state, times, self.integrator, self.dt, self.rtol, self.atol,
                          options=self._options, rows0=rows0)
        new = traj.state(-1)
        self._last = (new, rows)
        return new


def sample_times(duration: float, sample: float) -> np.ndarray:
    """Output times 0, s, 2s, ... up to ``duration``, which is always the last one."""
    n = int(math.floor(duration / sample * (1 + STEP_FIT_SLACK)))
    times = np.arange(n + 1) * sample
    if duration - times[-1] > STEP_FIT_SLACK * sample:
        return np.append(times, duration)
    times[-1] = duration  # snap the last sample onto the end
    return times


def simulate(
    body_or_model,
    state0: State,
    integrator: str,
    dt: float,
    duration: float,
    sample: float | None = None,
    loads=None,
    rtol: float = DOP853_RTOL,
    atol: float = DOP853_ATOL,
    progress: Callable[[float], None] | None = None,
    reorthonormalize: str = DEFAULT_REORTHO,
    reorthonormalize_every: int = DEFAULT_REORTHO_EVERY,
) -> Trajectory:
    """Integrate from ``state0`` for ``duration`` seconds, sampled every ``sample`` (default dt).

    ``state0`` may hold one body or a batch (leading axis N); the trajectory arrays then have
    shape (n_samples, N, ...). Fixed-step methods take steps of ``dt`` (an interval that is
    not a whole number of steps is covered by equal steps no larger than dt).
    ``reorthonormalize``/``reorthonormalize_every`` set ``rotmat-euler``'s scheme.

    Raises :class:`ParameterError` before any work for a run past :data:`MAX_STEPS` or
    :data:`MAX_SAMPLES` (:func:`check_run_size`), and :class:`DivergenceError`.
    """
    model = body_or_model if isinstance(body_or_model, Model) else compile_model(body_or_model, loads)
    validate_integrator(integrator)
    try:
        ok = math.isfinite(float(duration)) and float(duration) > 0
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ParameterError("duration", duration, "be a finite number > 0 (s)")
    validate_dt(dt, duration)
    sample = dt if sample is None else sample
    try:
        ok = math.isfinite(float(sample)) and float(sample) > 0
    except (TypeError, ValueError):
        ok = False
    if not ok or float(sample) > float(duration):
        raise ParameterError("sample", sample, "be a finite number > 0 and <= duration (s)")
    check_run_size(integrator, dt, duration, None if sample == dt else sample,
                   n_bodies=1 if state0.c.ndim == 1 else len(state0.c))
    if "rtol" in integrator_info(integrator).solver_options:
        rtol, atol = validate_tolerances(rtol, atol)
    times = sample_times(float(duration), float(sample))
    options = integrator_options(reorthonormalize, reorthonormalize_every)
    return _run(model, state0, times, integrator, float(dt), rtol, atol, progress, options)[0]


def _run(model, state0, times, integrator, dt, rtol, atol, progress=None, options=None, rows0=None):
    """(trajectory, final rows) of a run over ``times`` (relative to state0.t)."""
    single = state0.c.ndim == 1
    info = integrator_info(integrator)
    width = info.row_width
    check_integrator_applies(model, integrator)
    if rows0 is None:
        rows0 = model.to_rows(state0.c, state0.v, state0.q, state0.w, width, s=state0.s)
    options = integrator_options() if options is None else options
    if info.fixed_step:
        rows = _run_fixed(model, rows0, times, info.kernel_id, dt, state0.t, progress, options)
    elif info.torque_free_only:
        rows = _run_exact(model, rows0, times)
    else:
        rows = _run_dop853(model, rows0, times, dt, rtol, atol, state0.t)
    c, v, q, w = model.from_rows(rows)
    matrices = model.matrices_from_rows(rows) if width > layout.ROW_WIDTH else None
    s = model.damper_from_rows(rows)
    if single:
        c, v, q, w = c[:, 0], v[:, 0], q[:, 0], w[:, 0]
        matrices = None if matrices is None else matrices[:, 0]
        s = None if s is None else s[:, 0]
    return Trajectory(state0.t + times, c, v, q, w, matrices, s), rows[-1].copy()


#: how many output samples a kernel call covers at most, so that progress can be reported
PROGRESS_CHUNK = 2000


def _run_fixed(model, rows0, times, method, dt, t0, progress, options) -> np.ndarray:
    from .compiled import jit  # numba starts here, not when the parser reads the registry
    from .compiled.runs import run_name

    order = splitting_order(model.moments)
    name = run_name(method, model.params, model.points)
    n_bodies = rows0.shape[0]
    out = np.empty((len(times), n_bodies, rows0.shape[1]))
    out[0] = rows0
    ys = np.ascontiguousarray(rows0.copy())
    intervals = np.diff(times)
    steps_done = 0  # per body, before interval k
    k = 0
    while k < len(intervals):
        # group consecutive intervals that need the same number of equal steps, at most
        # STEPS_PER_CALL body-steps per kernel call (PLAIN_STEPS_PER_CALL while the compiled
        # kernel is not ready, so that the run switches to it soon after it is)
        kernel = jit.kernel(name)
        per_call = STEPS_PER_CALL if jit.is_compiled(kernel) else PLAIN_STEPS_PER_CALL
        n_sub = max(1, math.ceil(intervals[k] / dt * (1 - STEP_FIT_SLACK)))
        h = intervals[k] / n_sub
        group = max(1, min(PROGRESS_CHUNK, per_call // (n_sub * n_bodies)))
        # the intervals after k that match it, up to the group's size (one array operation: a Python
        # loop over 60,000 intervals took 25 ms of a 1 s `tumble simulate`)
        ahead = intervals[k + 1:k + group]
        differ = np.flatnonzero(np.abs(ahead - intervals[k]) > STEP_FIT_SLACK * dt)
        j = k + 1 + (int(differ[0]) if len(differ) else len(ahead))
        pieces = [(j - k, n_sub)] if j - k > 1 or n_sub * n_bodies <= per_call else \
            _split_steps(n_sub, max(1, per_call // n_bodies))
        taken = 0
        for n_out, every in pieces:
            block = out[k + 1 : j + 1] if n_out == j - k else out[k + 1 : k + 2]
            status, body, step_no = kernel(ys, float(h), n_out, every, model.params, model.points, model.wforces,
                                           order, block, options)
            if status:
                t_fail = t0 + times[k] + (taken + step_no) * h
                reason = (
                    "non-finite state or |omega| > 1e6 rad/s"
                    if status == 1
                    else "the implicit midpoint iteration did not converge (dt too large for this spin)"
                )
                raise DivergenceError(t_fail, steps_done + taken + step_no, reason)
            taken += n_out * every
            if progress is not None and len(pieces) > 1:
                progress((k + taken / n_sub) / len(intervals))
        steps_done += taken
        k = j
        if progress is not None:
            progress(k / len(intervals))
    return out


def _split_steps(n_steps: int, per_call: int) -> list[tuple[int, int]]:
    """(n_out, every) kernel calls that take ``n_steps`` steps of one interval, at most
    ``per_call`` each; every call writes its last state to the interval's one output row."""
    calls = [(1, per_call)] * (n_steps // per_call)
    if n_steps % per_call:
        calls.append((1, n_steps % per_call))
    return calls


class _TooManySteps(Exception):
    """DOP853 passed its step budget at simulated time ``t`` (relative to the run's start)."""

    def __init__(self, t: float):
        super().__init__(t)
        self.t = float(t)


def _run_dop853(model, rows0, times, dt, rtol, atol, t0) -> np.ndarray:
    from scipy.integrate import solve_ivp

    from .compiled import jit

    n, width = rows0.shape

    def rhs(_t, y):
        return jit.kernel("deriv_batch")(np.ascontiguousarray(y.reshape(n, width)), model.params, model.points,
                           model.wforces).ravel()

    steps = [0]
    limit2 = layout.OMEGA_LIMIT ** 2

    def runaway(_t, y):
        """Crosses zero downwards when some |omega| passes OMEGA_LIMIT (solve_ivp calls an
        event once after every accepted step, so the calls also count the steps)."""
        steps[0] += 1
        if steps[0] > 2 * MAX_STEPS_DOP853:  # its tolerances ask for steps far below dt
            raise _TooManySteps(_t)
        w = y.reshape(n, width)[:, 10:13]
        margin = limit2 - float(np.max(np.sum(w * w, axis=1)))
        return margin if math.isfinite(margin) else -1.0

    runaway.terminal = True
    runaway.direction = -1
    try:
        sol = solve_ivp(
            rhs, (times[0], times[-1]), rows0.ravel(), method="DOP853", t_eval=times,
            rtol=rtol, atol=atol, max_step=dt, events=runaway,
        )
    except _TooManySteps as stop:
        raise DivergenceError(t0 + stop.t, 2 * MAX_STEPS_DOP853,
                              f"DOP853 took more than {2 * MAX_STEPS_DOP853:,} steps (rtol and atol ask for steps "
                              f"far below dt here: loosen them)") from None
    if sol.status == 1:  # the event ended the run
        raise DivergenceError(t0 + float(sol.t_events[0][0]), max(1, steps[0] - 1),
                              "non-finite state or |omega| > 1e6 rad/s")
    if not sol.success or sol.y.shape[1] != len(times):
        t_fail = t0 + (sol.t[-1] if len(sol.t) else 0.0)
        raise DivergenceError(t_fail, max(1, steps[0] - 1), f"DOP853 failed: {sol.message}")
    rows = sol.y.T.reshape(len(times), n, width).copy()
    rows[..., 6:10] /= np.linalg.norm(rows[..., 6:10], axis=-1, keepdims=True)
    if not np.all(np.isfinite(rows)) or np.max(np.linalg.norm(rows[..., 10:13], axis=-1)) > layout.OMEGA_LIMIT:
        bad = np.argmax(~np.all(np.isfinite(rows.reshape(len(times), -1)), axis=1) |
                        (np.max(np.linalg.norm(rows[..., 10:13], axis=-1), axis=1) > layout.OMEGA_LIMIT))
        raise DivergenceError(t0 + times[bad], int(bad), "non-finite state or |omega| > 1e6 rad/s")
    return rows


def _run_exact(model, rows0, times) -> np.ndarray:
    from . import exact

    out = np.empty((len(times), rows0.shape[0], 13))
    g = model.params[4:7]
    for b, y0 in enumerate(rows0):
        c, v = exact.com_motion(y0[0:3], y0[3:6], g, times)
        q, w = exact.torque_free(model.moments, y0[6:10], y0[10:13], times)
        out[:, b, 0:3] = c
        out[:, b, 3:6] = v
        out[:, b, 6:10] = q
        out[:, b, 10:13] = w
    return out
