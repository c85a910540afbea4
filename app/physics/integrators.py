"""Integrators by name, and the two ways to run them: :func:`simulate` and :class:`Propagator`.

Fixed-step methods run in the compiled kernels (:mod:`.kernels`); ``dop853`` goes through
scipy's ``solve_ivp`` (dt is its largest step); ``exact`` evaluates the closed-form
torque-free solution (:mod:`.exact`) at each output time, so no error accumulates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import kernels
from .errors import DivergenceError, ParameterError
from .model import Model, compile_model
from .state import State, Trajectory

#: every integrator the physics core offers, in the order menus show them
INTEGRATORS = (
    "euler",
    "semi-implicit-euler",
    "rk4",
    "midpoint",
    "splitting",
    "splitting4",
    "dop853",
    "exact",
    "rotmat-euler",
    "lie-rk4",
)
#: one-line descriptions for menus and ``--help``
DESCRIPTIONS = {
    "euler": "explicit Euler, 1st order, quaternion renormalised",
    "semi-implicit-euler": "semi-implicit (symplectic-style) Euler of the course notes, 1st order",
    "rk4": "classic Runge-Kutta, 4th order, quaternion renormalised",
    "midpoint": "implicit midpoint, 2nd order, conserves |L| and E of the free body",
    "splitting": "Lie-Poisson splitting, 2nd order, |L| and world L to round-off",
    "splitting4": "Yoshida composition of the splitting, 4th order",
    "dop853": "adaptive Dormand-Prince 8(5,3) via scipy, dt = largest step",
    "exact": "closed-form torque-free solution (Jacobi elliptic functions)",
    "rotmat-euler": "course-notes Euler on a rotation matrix, re-orthonormalised every k steps",
    "lie-rk4": "Runge-Kutta-Munthe-Kaas 4 on SO(3), exponential map, no renormalisation",
}
#: theoretical order of convergence of each method
ORDERS = {"euler": 1, "semi-implicit-euler": 1, "rk4": 4, "midpoint": 2, "splitting": 2, "splitting4": 4,
          "rotmat-euler": 1, "lie-rk4": 4}
#: rotmat-euler re-orthonormalisation: schemes by name, and the default (every step, polar)
REORTHO_SCHEMES = {"polar": kernels.REORTHO_POLAR, "gram-schmidt": kernels.REORTHO_GRAM_SCHMIDT}
DEFAULT_REORTHO = "polar"
DEFAULT_REORTHO_EVERY = 1
#: default tolerances of the adaptive integrator
DOP853_RTOL = 1e-10
DOP853_ATOL = 1e-12
#: a sample interval within this relative amount of a whole number of steps counts as whole
STEP_FIT_SLACK = 1e-9
#: most samples one run may return (each is 13 numbers per body, and the diagnostics
#: copy them several times): past this, a run would fail for memory, not for its physics
MAX_SAMPLES = 20_000_000


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
    if name not in INTEGRATORS:
        raise ParameterError("integrator", name, "be one of " + ", ".join(INTEGRATORS))
    return name


def validate_dt(dt, duration=None) -> float:
    try:
        ok = math.isfinite(float(dt)) and float(dt) > 0
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ParameterError("dt", dt, "be a finite number > 0 (s)")
    if duration is not None and float(dt) > float(duration):
        raise ParameterError("dt", dt, f"be <= duration ({float(duration):.6g} s)")
    return float(dt)


#: methods whose sub-flows are exact free rigid-body rotations: a damper or a rotor breaks them
SPLITTINGS = ("splitting", "splitting4")


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
    """Raise unless ``integrator`` can step ``model``: ``exact`` as
    :func:`check_exact_applies`; the splittings refuse a damper or a rotor, whose coupling
    is not among their exactly solved sub-flows (the other methods all carry both)."""
    if integrator == "exact":
        check_exact_applies(model)
    elif integrator in SPLITTINGS and not model.body.is_rigid:
        part = "a damper" if model.body.damper is not None else "a rotor"
        raise ParameterError("integrator", integrator, f"not be a splitting method for a body with {part} "
                             "(its sub-flows are the free rigid body's; use rk4, lie-rk4 or dop853)")


def integrator_options(reorthonormalize: str = DEFAULT_REORTHO, every: int = DEFAULT_REORTHO_EVERY) -> np.ndarray:
    """Kernel options of ``rotmat-euler``: re-orthonormalise every ``every`` steps (0 or
    scheme ``"none"``: never) by ``"polar"`` decomposition or ``"gram-schmidt"``."""
    if reorthonormalize != "none" and reorthonormalize not in REORTHO_SCHEMES:
        raise ParameterError("reorthonormalize", reorthonormalize, "be one of polar, gram-schmidt, none")
    if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or every < 0:
        raise ParameterError("reorthonormalize_every", every, "be a whole number >= 0")
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
    if float(duration) / float(sample) > MAX_SAMPLES:
        raise ParameterError("sample", sample, f"leave at most {MAX_SAMPLES:,} samples over the duration "
                             f"({float(duration):g} s)")
    times = sample_times(float(duration), float(sample))
    options = integrator_options(reorthonormalize, reorthonormalize_every)
    return _run(model, state0, times, integrator, float(dt), rtol, atol, progress, options)[0]


def _run(model, state0, times, integrator, dt, rtol, atol, progress=None, options=None, rows0=None):
    """(trajectory, final rows) of a run over ``times`` (relative to state0.t)."""
    single = state0.c.ndim == 1
    width = kernels.ROTMAT_ROW_WIDTH if integrator == "rotmat-euler" else kernels.ROW_WIDTH
    check_integrator_applies(model, integrator)
    if rows0 is None:
        rows0 = model.to_rows(state0.c, state0.v, state0.q, state0.w, width, s=state0.s)
    options = integrator_options() if options is None else options
    if integrator == "exact":
        rows = _run_exact(model, rows0, times)
    elif integrator == "dop853":
        rows = _run_dop853(model, rows0, times, dt, rtol, atol, state0.t)
    else:
        rows = _run_fixed(model, rows0, times, integrator, dt, state0.t, progress, options)
    c, v, q, w = model.from_rows(rows)
    matrices = model.matrices_from_rows(rows) if width > kernels.ROW_WIDTH else None
    s = model.damper_from_rows(rows)
    if single:
        c, v, q, w = c[:, 0], v[:, 0], q[:, 0], w[:, 0]
        matrices = None if matrices is None else matrices[:, 0]
        s = None if s is None else s[:, 0]
    return Trajectory(state0.t + times, c, v, q, w, matrices, s), rows[-1].copy()


#: how many output samples a kernel call covers at most, so that progress can be reported
PROGRESS_CHUNK = 2000


def _run_fixed(model, rows0, times, integrator, dt, t0, progress, options) -> np.ndarray:
    method = kernels.METHOD_IDS[integrator]
    order = splitting_order(model.moments)
    n_bodies = rows0.shape[0]
    out = np.empty((len(times), n_bodies, rows0.shape[1]))
    out[0] = rows0
    ys = np.ascontiguousarray(rows0.copy())
    intervals = np.diff(times)
    k = 0
    while k < len(intervals):
        # group consecutive intervals that need the same number of equal steps
        n_sub = max(1, math.ceil(intervals[k] / dt * (1 - STEP_FIT_SLACK)))
        h = intervals[k] / n_sub
        j = k + 1
        while j < len(intervals) and j - k < PROGRESS_CHUNK and abs(intervals[j] - intervals[k]) <= STEP_FIT_SLACK * dt:
            j += 1
        block = out[k + 1 : j + 1]
        status, body, step_no = kernels.run(
            ys, method, h, j - k, n_sub, model.params, model.points, model.wforces, order, block, options
        )
        if status:
            steps_before = int(sum(max(1, math.ceil(iv / dt * (1 - STEP_FIT_SLACK))) for iv in intervals[:k]))
            t_fail = t0 + times[k] + step_no * h
            reason = (
                "non-finite state or |omega| > 1e6 rad/s"
                if status == 1
                else "the implicit midpoint iteration did not converge (dt too large for this spin)"
            )
            raise DivergenceError(t_fail, steps_before + step_no, reason)
        k = j
        if progress is not None:
            progress(k / len(intervals))
    return out


def _run_dop853(model, rows0, times, dt, rtol, atol, t0) -> np.ndarray:
    from scipy.integrate import solve_ivp

    n, width = rows0.shape

    def rhs(_t, y):
        return kernels.deriv_batch(y.reshape(n, width), model.params, model.points, model.wforces).ravel()

    steps = [0]
    limit2 = kernels.OMEGA_LIMIT ** 2

    def runaway(_t, y):
        """Crosses zero downwards when some |omega| passes OMEGA_LIMIT (solve_ivp calls an
        event once after every accepted step, so the calls also count the steps)."""
        steps[0] += 1
        w = y.reshape(n, width)[:, 10:13]
        margin = limit2 - float(np.max(np.sum(w * w, axis=1)))
        return margin if math.isfinite(margin) else -1.0

    runaway.terminal = True
    runaway.direction = -1
    sol = solve_ivp(
        rhs, (times[0], times[-1]), rows0.ravel(), method="DOP853", t_eval=times,
        rtol=rtol, atol=atol, max_step=dt, events=runaway,
    )
    if sol.status == 1:  # the event ended the run
        raise DivergenceError(t0 + float(sol.t_events[0][0]), max(1, steps[0] - 1),
                              "non-finite state or |omega| > 1e6 rad/s")
    if not sol.success or sol.y.shape[1] != len(times):
        t_fail = t0 + (sol.t[-1] if len(sol.t) else 0.0)
        raise DivergenceError(t_fail, max(1, steps[0] - 1), f"DOP853 failed: {sol.message}")
    rows = sol.y.T.reshape(len(times), n, width).copy()
    rows[..., 6:10] /= np.linalg.norm(rows[..., 6:10], axis=-1, keepdims=True)
    if not np.all(np.isfinite(rows)) or np.max(np.linalg.norm(rows[..., 10:13], axis=-1)) > kernels.OMEGA_LIMIT:
        bad = np.argmax(~np.all(np.isfinite(rows.reshape(len(times), -1)), axis=1) |
                        (np.max(np.linalg.norm(rows[..., 10:13], axis=-1), axis=1) > kernels.OMEGA_LIMIT))
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
