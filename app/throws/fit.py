"""Least-squares fit of inertia ratios, drag and per-flight initial rates to recorded flights.

Model: Euler's equations with drag in the sensor frame (:mod:`.dynamics`), ``J = R diag(j) R^T``
with ``R = exp([delta]x)`` (``delta`` a rotation vector, fitted only with ``axes = "fit"``).
Shared parameters: ``log j`` of two axes (the third, the largest at the start, is fixed: Euler's
equations do not change when J and the drag are scaled together, so only ratios are
observable), the drag coefficients, ``delta``; per flight: the rate at its first stamp.
Residuals: integrated minus measured rate at every recorded, unclipped stamp. scipy's
``least_squares`` (trust-region reflective) differentiates by finite differences grouped
with a block-sparse pattern (a flight's initial rate touches only its own rows), so the
cost of a Jacobian does not grow with the number of flights. Standard errors:
``s^2 (A^T A)^-1`` with A the Jacobian and s^2 the residual variance (e.g. Seber & Wild,
*Nonlinear Regression*, 2.1), carried to the ratios by the delta method.
"""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse
from scipy.optimize import least_squares
from scipy.spatial.transform import Rotation

from ..physics.errors import ParameterError
from . import flights as fl
from .edges import FitCancelled, find_flights, settle_edges, start_rate
from .dynamics import DRAG_MODELS, H_MAX, drag_id, propagate_flights, simulate_rates
from .recording import Recording

AXES_MODES = ("sensor", "fit")
#: a throw starts near the intermediate axis when its body momentum J w0 lies within this
#: angle (deg) of it, i.e. that axis carries at least cos^2 = 75% of |L|^2: the flip time
#: (first zero of the intermediate-axis rate) is defined only for such throws
NEAR_INTERMEDIATE_DEG = 30.0
#: most rounds of settling the edges and refitting all flights jointly
EDGE_ROUNDS = 3
#: least_squares: most Jacobians per fit, and lsmr's settings for the trust-region step: its
#: defaults (tolerances 1e-6, at most min(m, n) iterations) leave the Gauss-Newton steps so
#: inexact that a fit near its minimum crawled for 100 to 200 iterations; with these it takes
#: 5 to 15. Drag coefficients are not bounded below: bounds made the fit 1.5x slower, and a
#: coefficient that comes out a little negative is reported as fitted (the scenario clamps it)
MAX_ITERATIONS = 200
LSMR_OPTIONS = {"atol": 1e-10, "btol": 1e-10, "maxiter": 5000}
#: the first fit grows over these horizons (s from each flight's start; None: whole flights)
STAGED_HORIZONS = (0.3, 0.6, None)
#: a flip time is found on the fitted curve sampled this finely (s)
FLIP_SAMPLING_S = 1e-3


@dataclass
class FlightFit:
    """One fitted flight: stamps ``t`` (recording time), measured and fitted rates, which
    stamps the fit used (unclipped), and the figures of the JSON report."""

    recording: str
    rec_index: int
    i0: int
    i1: int
    t: np.ndarray
    w_measured: np.ndarray
    w_fitted: np.ndarray
    used: np.ndarray
    omega0: np.ndarray
    rms: float
    rms_relative: float
    near_intermediate: bool
    flip_time_measured: float | None
    flip_time_fitted: float | None
    #: left out of the joint fit (the user's choice, or a residual far above the others'); its
    #: curve is its own launch rate fitted with the shared body
    excluded: bool = False
    #: why it was excluded (one sentence), None when it was fitted
    reason: str | None = None
    #: "start" or "end" when the recording begins or ends inside this flight (cut there)
    cut: str | None = None

    @property
    def start(self) -> float:
        return float(self.t[0])

    @property
    def end(self) -> float:
        return float(self.t[-1])

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass
class FitResult:
    """Everything the fit found, in the sensor frame, scaled to a largest moment of 1."""

    drag_model: str
    axes_mode: str
    moments: np.ndarray          # principal moments, ascending, the last is 1
    moments_std: np.ndarray
    axes: np.ndarray             # columns: principal axes (sensor frame), order of ``moments``
    drag: np.ndarray             # coefficients, sensor frame
    drag_std: np.ndarray
    rotation_deg: float          # angle between sensor and principal axes (axes = fit)
    flights: list = field(default_factory=list)
    seconds: float = 0.0
    recordings: tuple = ()

    @property
    def inertia(self) -> np.ndarray:
        """3x3 inertia in the sensor frame (largest principal moment 1)."""
        return self.axes @ np.diag(self.moments) @ self.axes.T

    @property
    def rms_relative(self) -> float:
        return float(np.median([f.rms_relative for f in self.flights]))

    def to_json(self, inertia_scale: float = 1.0) -> dict:
        """The ``tumble fit --json`` object (inertia and drag at ``inertia_scale`` kg m^2)."""
        return {
            "ratios": [float(x) for x in self.moments],
            "ratios_std": [_finite_or_none(x) for x in self.moments_std],
            "principal_axes": [[float(x) for x in row] for row in self.axes.T],
            "inertia": [[float(x) for x in row] for row in self.inertia * inertia_scale],
            "drag": {"model": self.drag_model, "coefficients": [float(x) for x in self.drag * inertia_scale]},
            "flights": [{
                "recording": f.recording,
                "start": f.start,
                "end": f.end,
                "omega0": [float(x) for x in f.omega0],
                "rms": f.rms,
                "rms_relative": f.rms_relative,
                "flip_time_measured": f.flip_time_measured,
                "flip_time_fitted": f.flip_time_fitted,
                "excluded": f.excluded,
                "reason": f.reason,
                "cut": f.cut,
            } for f in self.flights],
            "rms_relative": self.rms_relative,
            "seconds": self.seconds,
        }


def _finite_or_none(x):
    return float(x) if np.isfinite(x) else None


# ------------------------------------------------------------------ the model's parameters


@dataclass(frozen=True)
class _Layout:
    """Where each parameter sits in the vector least_squares moves."""

    drag_model: str
    axes_mode: str
    fixed: int                   # the sensor-side axis whose log-moment is held at 0
    n_flights: int

    @property
    def n_drag(self) -> int:
        return 0 if self.drag_model == "none" else 3

    @property
    def n_rot(self) -> int:
        return 3 if self.axes_mode == "fit" else 0

    @property
    def n_shared(self) -> int:
        return 2 + self.n_drag + self.n_rot

    def unpack(self, x):
        """(j (3,), R (3, 3), drag (3,), w0s (F, 3)) of parameter vector ``x``."""
        logj = np.zeros(3)
        logj[[k for k in range(3) if k != self.fixed]] = x[0:2]
        k = 2
        drag = np.zeros(3)
        if self.n_drag:
            drag = np.asarray(x[k:k + 3])
            k += 3
        rot = np.eye(3)
        if self.n_rot:
            rot = Rotation.from_rotvec(x[k:k + 3]).as_matrix()
            k += 3
        return np.exp(logj), rot, drag, np.asarray(x[k:]).reshape(self.n_flights, 3)

    def pack(self, j, rotvec, drag, w0s):
        free = [k for k in range(3) if k != self.fixed]
        logj = np.log(np.asarray(j, dtype=float) / j[self.fixed])
        parts = [logj[free]]
        if self.n_drag:
            parts.append(np.asarray(drag, dtype=float) / j[self.fixed])
        if self.n_rot:
            parts.append(np.asarray(rotvec, dtype=float))
        parts.append(np.asarray(w0s, dtype=float).ravel())
        return np.concatenate(parts)


def principal_summary(j, rot, drag):
    """(moments ascending over the largest, axes as columns, drag over the largest)."""
    order = np.argsort(j)
    top = float(j.max())
    axes = rot[:, order].copy()
    for k in range(3):  # each axis points along its dominant sensor component
        if axes[np.argmax(np.abs(axes[:, k])), k] < 0:
            axes[:, k] = -axes[:, k]
    if np.linalg.det(axes) < 0:
        axes[:, 2] = -axes[:, 2]
    return j[order] / top, axes, np.asarray(drag) / top


def _initial_axes(inertia, axes_mode):
    """(j, rotation vector) to start from: the guess's diagonal, or its principal axes matched
    to the nearest sensor axes (``axes = "fit"``)."""
    if axes_mode == "sensor":
        return np.maximum(np.diag(inertia), 1e-3 * np.max(np.diag(inertia))), np.zeros(3)
    moments, vecs = np.linalg.eigh(inertia)
    perm = np.zeros(3, dtype=int)
    free = [0, 1, 2]
    for col in np.argsort(-np.max(np.abs(vecs), axis=0)):  # the clearest axes pick first
        row = max(free, key=lambda r: abs(vecs[r, col]))
        perm[row] = col
        free.remove(row)
    rot = vecs[:, perm]
    rot = rot * np.sign(np.diag(rot))[None, :]
    if np.linalg.det(rot) < 0:
        return np.maximum(np.diag(inertia), 1e-3 * np.max(np.diag(inertia))), np.zeros(3)
    return moments[perm], Rotation.from_matrix(rot).as_rotvec()


# ------------------------------------------------------------------ the fit itself


@dataclass
class _Data:
    """Flights laid end to end for the compiled integrator."""

    t: np.ndarray
    w: np.ndarray
    used: np.ndarray
    offsets: np.ndarray

    @staticmethod
    def of(recordings, flights, horizon=None):
        """The flights' stamps, rates and unclipped masks; with ``horizon`` (s) only that much
        of each flight from its start."""
        ts, ws, us, offsets = [], [], [], [0]
        for f in flights:
            rec = recordings[f.recording]
            i1 = f.i1 if horizon is None else min(f.i1, int(np.searchsorted(rec.t, rec.t[f.i0] + horizon, "right")))
            ts.append(rec.t[f.i0:i1])
            ws.append(rec.w[f.i0:i1])
            us.append(~rec.saturated[f.i0:i1])
            offsets.append(offsets[-1] + i1 - f.i0)
        return _Data(np.ascontiguousarray(np.concatenate(ts)), np.concatenate(ws), np.concatenate(us),
                     np.asarray(offsets, dtype=np.int64))


def _sparsity(data: _Data, layout: _Layout):
    rows_per_sample = np.repeat(np.arange(len(data.offsets) - 1), np.diff(data.offsets))[data.used]
    n_rows = 3 * len(rows_per_sample)
    flight_of_row = np.repeat(rows_per_sample, 3)
    n_cols = layout.n_shared + 3 * layout.n_flights
    r_idx = [np.repeat(np.arange(n_rows), layout.n_shared)]
    c_idx = [np.tile(np.arange(layout.n_shared), n_rows)]
    for k in range(3):
        r_idx.append(np.arange(n_rows))
        c_idx.append(layout.n_shared + 3 * flight_of_row + k)
    r, c = np.concatenate(r_idx), np.concatenate(c_idx)
    return sparse.csr_matrix((np.ones(len(r)), (r, c)), shape=(n_rows, n_cols))


def _one_blas_thread():
    """BLAS on one thread: lsmr's thousands of dot products of 30000-long vectors each wake
    OpenBLAS's thread pool, and on a busy 2-core machine that made the fit of 100 flights
    3.5x slower (measured: 33 s against 9.4 s for the first round)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a dependency; without it only speed suffers
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def solve(recordings, flights, inertia, drag_model, drag, axes_mode, w0s, cancel=None, horizon=None, ftol=1e-9):
    """One least-squares fit; returns (layout, x, covariance of x, data, model rates)."""
    if drag_model not in DRAG_MODELS:
        raise ParameterError("--drag", drag_model, "be one of " + ", ".join(DRAG_MODELS))
    data = _Data.of(recordings, flights, horizon)
    j0, rotvec0 = _initial_axes(inertia, axes_mode)
    layout = _Layout(drag_model, axes_mode, int(np.argmax(j0)), len(flights))
    n_res = 3 * int(data.used.sum())
    if n_res <= layout.n_shared + 3 * len(flights) + 3:
        raise ParameterError("recording", ", ".join(r.name for r in recordings),
                             f"hold enough unclipped samples in flight to fit (got {int(data.used.sum())})")
    x0 = layout.pack(j0, rotvec0, np.maximum(drag, 0.0), w0s)
    model_id = drag_id(drag_model)
    out = np.empty_like(data.w)

    def model(x):
        j, rot, c, w_starts = layout.unpack(x)
        jm = rot @ np.diag(j) @ rot.T
        propagate_flights(data.t, data.offsets, np.ascontiguousarray(w_starts), jm, np.linalg.inv(jm), model_id,
                          c, H_MAX, out)
        return out

    def residuals(x):
        if cancel is not None and cancel():
            raise FitCancelled()
        m = model(x)
        r = (m - data.w)[data.used].ravel()
        return np.where(np.isfinite(r), r, 1e6)

    with _one_blas_thread():
        res = least_squares(residuals, x0, jac_sparsity=_sparsity(data, layout), method="trf", x_scale="jac",
                            ftol=ftol, xtol=1e-10, gtol=1e-10, max_nfev=MAX_ITERATIONS,
                            tr_options=dict(LSMR_OPTIONS))
    a = res.jac
    ata = (a.T @ a).toarray() if sparse.issparse(a) else a.T @ a
    dof = max(len(res.fun) - len(res.x), 1)
    s2 = 2.0 * res.cost / dof
    try:
        cov = np.linalg.inv(ata) * s2
    except np.linalg.LinAlgError:
        cov = np.full_like(ata, np.inf)
    w_model = model(res.x).copy()
    return layout, res.x, cov, data, w_model


def solve_staged(recordings, flights, inertia, drag_model, drag, axes_mode, w0s, cancel=None, horizons=(None,)):
    """:func:`solve` over growing horizons, each stage starting from the last one's answer.

    Near the intermediate axis a flight's rates depend on its initial rate ever more steeply
    with time (exponentially, between flips), so Gauss-Newton started far off can wander in
    the long valleys of the full flights; the first few tenths of a second are nearly linear
    in the parameters and bring the start close enough (continuation in the horizon).
    """
    for horizon in horizons:
        layout, x, cov, data, w_model = solve(recordings, flights, inertia, drag_model, drag, axes_mode, w0s,
                                              cancel, horizon)
        j, rot, drag, w0s = layout.unpack(x)
        inertia = rot @ np.diag(j) @ rot.T
    return layout, x, cov, data, w_model


def _shared_outputs(layout, x):
    j, rot, c, _ = layout.unpack(x)
    moments, axes, drag = principal_summary(j, rot, c)
    return np.concatenate([moments, drag])


def _output_std(layout, x, cov):
    """Standard errors of (moments ascending, drag) by the delta method on the shared part."""
    k = layout.n_shared
    base = _shared_outputs(layout, x)
    grad = np.zeros((len(base), k))
    for i in range(k):
        step = 1e-6 * max(1.0, abs(x[i]))
        xp = x.copy()
        xp[i] += step
        grad[:, i] = (_shared_outputs(layout, xp) - base) / step
    sub = cov[:k, :k]
    if not np.all(np.isfinite(sub)):
        return np.full(len(base), np.inf)
    return np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", grad, sub, grad), 0.0))


def is_near_intermediate(inertia, axes, w0) -> bool:
    """True if the body momentum J w0 lies within NEAR_INTERMEDIATE_DEG of the intermediate axis."""
    m = inertia @ np.asarray(w0, dtype=float)
    n = np.linalg.norm(m)
    return bool(n > 0 and abs(m @ axes[:, 1]) / n >= math.cos(math.radians(NEAR_INTERMEDIATE_DEG)))


def first_zero(t, s) -> float | None:
    """Time of the first sign change of ``s`` after its start (linear interpolation), or None."""
    s = np.asarray(s)
    sign0 = np.sign(s[0])
    if sign0 == 0:
        return None
    cross = np.flatnonzero(np.sign(s[1:]) == -sign0)
    if not len(cross):
        return None
    k = int(cross[0])
    s0, s1 = s[k], s[k + 1]
    return float(t[k] + (t[k + 1] - t[k]) * s0 / (s0 - s1))


def flip_times(inertia, axes, drag_model, drag, t, w_measured, used, w0):
    """(measured, fitted) first flip time after the flight's start, or None where undefined."""
    if not is_near_intermediate(inertia, axes, w0):
        return None, None
    mid = axes[:, 1]
    measured = first_zero(t[used] - t[0], w_measured[used] @ mid)
    fine = np.arange(FLIP_SAMPLING_S, t[-1] - t[0] + 0.5 * FLIP_SAMPLING_S, FLIP_SAMPLING_S)
    path = simulate_rates(t[0] + fine, t[0], w0, inertia, drag_model, drag)
    fitted = first_zero(np.concatenate(([0.0], fine)), np.concatenate(([np.asarray(w0) @ mid], path @ mid)))
    return measured, fitted


def _result(recordings, flights, layout, x, cov, data, w_model, seconds):
    j, rot, c, w0s = layout.unpack(x)
    moments, axes, drag = principal_summary(j, rot, c)
    std = _output_std(layout, x, cov)
    inertia = axes @ np.diag(moments) @ axes.T
    out = []
    for k, f in enumerate(flights):
        a, b = data.offsets[k], data.offsets[k + 1]
        rec = recordings[f.recording]
        t, wm, wf, used = data.t[a:b], data.w[a:b], w_model[a:b], data.used[a:b]
        rms = float(np.sqrt(np.mean(np.sum((wf[used] - wm[used]) ** 2, axis=1))))
        w0 = w0s[k]
        measured, fitted = flip_times(inertia, axes, layout.drag_model, drag, t, wm, used, w0)
        out.append(FlightFit(rec.name, f.recording, f.i0, f.i1, t.copy(), wm.copy(), wf.copy(), used.copy(),
                             w0.copy(), rms, rms / float(np.linalg.norm(w0)),
                             is_near_intermediate(inertia, axes, w0), measured, fitted))
    angle = float(np.degrees(np.linalg.norm(Rotation.from_matrix(rot).as_rotvec())))
    return FitResult(layout.drag_model, layout.axes_mode, moments, std[:3], axes, drag, std[3:], angle, out,
                     seconds, tuple(r.name for r in recordings))


# ------------------------------------------------------------------ the whole pipeline


def fit_recordings(recordings: list[Recording], windows=None, drag_model: str = "quadratic", axes_mode: str = "sensor",
                   progress=None, cancel=None, exclude=(), include=()) -> FitResult:
    """Find the flights, fit them, move their edges to where the fit stops matching, refit.

    ``progress(fraction, message)`` is called between stages; ``cancel()`` returning True
    stops the fit with :class:`FitCancelled`. ``exclude`` names flights the user leaves out,
    ``include`` flights the user puts back after the fit excluded them automatically; each
    entry is a (recording index, time) pair (the flight of that recording holding that time,
    s) or an int (the flight's 0-based number among the flights found, as the report lists
    them). Every flight found is in the result; excluded ones carry ``excluded`` and ``reason``.
    """
    if drag_model not in DRAG_MODELS:
        raise ParameterError("--drag", drag_model, "be one of " + ", ".join(DRAG_MODELS))
    if axes_mode not in AXES_MODES:
        raise ParameterError("--axes", axes_mode, "be one of " + ", ".join(AXES_MODES))
    began = time.perf_counter()

    def say(fraction, message):
        if progress is not None:
            progress(fraction, message)
        if cancel is not None and cancel():
            raise FitCancelled()

    say(0.0, "finding the flights")
    flights, inertia, drag = find_flights(recordings, windows, drag_model)
    return fit_flights(recordings, flights, inertia, drag, drag_model, axes_mode, windows, say, cancel, exclude,
                       began, include)


def _excluded(recordings, f, exclude):
    rec = recordings[f.recording]
    return any(k == f.recording and rec.t[f.i0] - 0.2 <= t0 <= rec.t[f.i1 - 1] for k, t0 in exclude)


def fit_flights(recordings, flights, inertia, drag, drag_model="quadratic", axes_mode="sensor", windows=None,
                say=None, cancel=None, exclude=(), began=None, include=()) -> FitResult:
    """Fit given flights from an inertia and drag guess.

    A first joint fit (over growing horizons) on the flights as the residual found them;
    then, with the shared parameters held, each flight's edges move to where the integrated
    fit stops matching and its initial rate is refitted alone, until the edges settle; a
    joint fit on the settled flights follows, and the two alternate until no edge moves.
    """
    began = time.perf_counter() if began is None else began
    say = say or (lambda *_: None)
    kept = [f for f in flights if not _excluded(recordings, f, exclude)]
    if not kept:
        raise ParameterError("flights", len(flights), "leave at least one flight in the fit")
    flights = kept
    w0s = np.array([start_rate(recordings[f.recording], f.i0, f.i1) for f in flights])
    say(0.1, f"fitting {len(flights)} flights")
    layout, x, cov, data, w_model = solve_staged(recordings, flights, inertia, drag_model, drag, axes_mode, w0s,
                                                 cancel, STAGED_HORIZONS)
    j, rot, drag, w0s = layout.unpack(x)
    inertia = rot @ np.diag(j) @ rot.T
    for round_no in range(EDGE_ROUNDS):
        say(0.5 + 0.1 * round_no, "moving the flights' edges")
        settled = settle_edges(recordings, flights, list(w0s), inertia, drag_model, drag, windows, cancel)
        if settled[0] == flights:
            break
        flights, w0s = settled
        say(0.55 + 0.1 * round_no, f"fitting {len(flights)} flights again")
        layout, x, cov, data, w_model = solve(recordings, flights, inertia, drag_model, drag, axes_mode,
                                              np.array(w0s), cancel)
        j, rot, drag, w0s = layout.unpack(x)
        inertia = rot @ np.diag(j) @ rot.T
    result = _result(recordings, flights, layout, x, cov, data, w_model, 0.0)
    say(1.0, "done")
    result.seconds = time.perf_counter() - began
    return result


def fit_paths(paths, flights: str = "auto", drag_model: str = "quadratic", axes_mode: str = "sensor",
              progress=None, cancel=None, exclude=(), include=()) -> tuple[list[Recording], FitResult]:
    """Read the recordings at ``paths`` and fit them together (``flights``: ``auto`` or
    ``START:END,...`` windows in recording time, s)."""
    from .recording import read_recording

    windows = fl.parse_windows(flights)
    if drag_model not in DRAG_MODELS:
        raise ParameterError("--drag", drag_model, "be one of " + ", ".join(DRAG_MODELS))
    if axes_mode not in AXES_MODES:
        raise ParameterError("--axes", axes_mode, "be one of " + ", ".join(AXES_MODES))
    recordings = [read_recording(p) for p in paths]
    return recordings, fit_recordings(recordings, windows, drag_model, axes_mode, progress, cancel, exclude, include)
