"""The throw fit's front door: inertia ratios, drag and per-flight launch rates from recordings, and its report.

:func:`fit_recordings` finds the flights (:mod:`.edges`), fits them (:mod:`.consensus` runs the
steps, :mod:`.solver` holds the least-squares problem) and returns a :class:`FitResult`: the
body in the sensor frame with standard errors, and every flight found, fitted or excluded
with its reason.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.spatial.transform import Rotation

from ...physics.body import RELATIVE_SLACK
from ...physics.errors import ParameterError
from . import consensus as cs
from . import flights as fl
from .dynamics import DRAG_MODELS, simulate_rates
from .edges import cut_edge, derivatives, find_flights, flights_with_body, own_start
from ..recordings.reader import Recording
from .consensus import flight_rms_relative
from .solver import FitCancelled, Solution, output_std, principal_summary  # noqa: F401 - FitCancelled: the window's

AXES_MODES = ("sensor", "fit")
#: a throw starts near the intermediate axis when its body momentum J w0 lies within this
#: angle (deg) of it, i.e. that axis carries at least cos^2 = 75% of |L|^2: the flip time
#: (first zero of the intermediate-axis rate) is defined only for such throws
NEAR_INTERMEDIATE_DEG = 30.0
#: most rounds of settling the edges and refitting all flights jointly
EDGE_ROUNDS = 3
#: fitted ratios may fall this share of the largest short of the triangle inequality and still
#: be taken for a flat body's (J1 + J2 = J3, perpendicular axis theorem) that noise put below it
FLAT_TOLERANCE = 0.01
#: the reason of a flight the user left out
USER_EXCLUDED = "excluded by the user"
#: a flip time is found on the fitted curve sampled this finely (s)
FLIP_SAMPLING_S = 1e-3
#: most flights one fit takes: its cost grows with them (tumble fit-bench: 100 flights of 1 s in
#: 13.8 s on a 2-core machine), and a flight lasts at most flights.MAX_FLIGHT_S, so this also
#: bounds the samples fitted. Checked once the flights are found, before any fitting
MAX_FIT_FLIGHTS = 1000


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
    #: what the fit found worth saying (one sentence each): ``--axes sensor`` fitting clearly worse
    notes: tuple = ()

    @property
    def inertia(self) -> np.ndarray:
        """3x3 inertia in the sensor frame (largest principal moment 1)."""
        return self.axes @ np.diag(self.moments) @ self.axes.T

    @property
    def fitted(self) -> list:
        """The flights the fit used (not excluded)."""
        return [f for f in self.flights if not f.excluded]

    @property
    def rms_relative(self) -> float:
        """Median rms / |omega0| of the fitted flights."""
        return float(np.median([f.rms_relative for f in self.fitted]))

    def to_json(self, inertia_scale: float = 1.0) -> dict:
        """The ``tumble fit --json`` object (inertia and drag at ``inertia_scale`` kg m^2)."""
        return {
            "ratios": _floats(self.moments),
            "ratios_std": [_finite_or_none(x) for x in self.moments_std],
            "principal_axes": [_floats(row) for row in self.axes.T],
            "inertia": [_floats(row) for row in self.inertia * inertia_scale],
            "drag": {"model": self.drag_model, "coefficients": _floats(self.drag * inertia_scale)},
            "flights": [{
                "recording": f.recording,
                "start": f.start,
                "end": f.end,
                "omega0": _floats(f.omega0),
                "rms": _finite_or_none(f.rms),
                "rms_relative": _finite_or_none(f.rms_relative),
                "flip_time_measured": f.flip_time_measured,
                "flip_time_fitted": f.flip_time_fitted,
                "excluded": f.excluded,
                "reason": f.reason,
                "cut": f.cut,
            } for f in self.flights],
            "rms_relative": _finite_or_none(self.rms_relative),
            "seconds": self.seconds,
        }


def _finite_or_none(x):
    return float(x) + 0.0 if np.isfinite(x) else None


def _floats(values) -> list[float]:
    """Plain floats, negative zeros made positive (``-0.0 + 0.0`` is ``0.0``)."""
    return [float(x) + 0.0 for x in values]


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


def measured_flip(t, w, used, inertia, axes) -> float | None:
    """THE measured first flip of a flight (every command and window reports this one): the
    first zero of the measured rate about the body's intermediate axis, s after the flight's
    first stamp ``t[0]``, over the unclipped samples ``used``; None where the throw does not
    start near that axis (judged on the measured rate at the start, the local cubic over the
    first samples, so it does not hang on any tool's fitted launch rate) or does not flip."""
    t, w, used = np.asarray(t, dtype=float), np.asarray(w, dtype=float), np.asarray(used, dtype=bool)
    if used.sum() < 2:
        return None
    b = min(len(t), fl.DERIVATIVE_MIN_SAMPLES + 2)
    start = fl.smooth_and_derivative(t[:b], w[:b])[0][0] if b >= 5 else w[0]
    if not is_near_intermediate(inertia, axes, start):
        return None
    return first_zero(t[used] - t[0], w[used] @ axes[:, 1])


def flip_times(inertia, axes, drag_model, drag, t, w_measured, used, w0):
    """(measured, fitted) first flip time after the flight's start, or None where undefined
    (the measured one: :func:`measured_flip`)."""
    measured = measured_flip(t, w_measured, used, inertia, axes)
    if not is_near_intermediate(inertia, axes, w0):
        return measured, None
    mid = axes[:, 1]
    fine = np.arange(FLIP_SAMPLING_S, t[-1] - t[0] + 0.5 * FLIP_SAMPLING_S, FLIP_SAMPLING_S)
    path = simulate_rates(t[0] + fine, t[0], w0, inertia, drag_model, drag)
    fitted = first_zero(np.concatenate(([0.0], fine)), np.concatenate(([np.asarray(w0) @ mid], path @ mid)))
    return measured, fitted


def _flight_fit(rec, k, f, t, wm, wf, used, w0, inertia, axes, drag_model, drag, **marks) -> FlightFit:
    rms = float(np.sqrt(np.mean(np.sum((wf[used] - wm[used]) ** 2, axis=1)))) if used.any() else math.inf
    measured, fitted = flip_times(inertia, axes, drag_model, drag, t, wm, used, w0)
    return FlightFit(rec.name, k, f.i0, f.i1, t.copy(), wm.copy(), wf.copy(), used.copy(), np.asarray(w0) + 0.0,
                     rms, rms / float(np.linalg.norm(w0)), is_near_intermediate(inertia, axes, w0), measured, fitted,
                     **marks)


def _result(recordings, sol: Solution, flights, left_out, seconds) -> FitResult:
    """The report of solution ``sol`` over ``flights``; ``left_out`` holds (flight, reason) of
    excluded ones, each drawn with its own initial rate fitted to the shared body."""
    layout = sol.layout
    j, rot, c, w0s = layout.unpack(sol.x)
    moments, axes, drag = principal_summary(j, rot, c)
    std = output_std(sol)
    inertia = axes @ np.diag(moments) @ axes.T
    model = layout.drag_model
    out = []
    for k, f in enumerate(flights):
        a, b = sol.data.offsets[k], sol.data.offsets[k + 1]
        rec = recordings[f.recording]
        out.append(_flight_fit(rec, f.recording, f, sol.data.t[a:b], sol.data.w[a:b], sol.w_model[a:b],
                               sol.data.used[a:b], w0s[k], inertia, axes, model, drag, cut=cut_edge(rec, f)))
    for f, reason in left_out:
        rec = recordings[f.recording]
        w0, wf = own_start(rec, f, inertia, model, drag)
        out.append(_flight_fit(rec, f.recording, f, rec.t[f.i0:f.i1], rec.w[f.i0:f.i1], wf, ~rec.saturated[f.i0:f.i1],
                               w0, inertia, axes, model, drag, excluded=True, reason=reason, cut=cut_edge(rec, f)))
    out.sort(key=lambda ff: (ff.rec_index, ff.i0))
    angle = float(np.degrees(np.linalg.norm(Rotation.from_matrix(rot).as_rotvec())))
    return FitResult(model, layout.axes_mode, moments, std[:3], axes, drag, std[3:], angle, out,
                     seconds, tuple(r.name for r in recordings))


def triangle_deficit(moments) -> float:
    """How far the two smaller ratios fall short of the largest (> 0: the triangle inequality
    is broken)."""
    m = np.sort(np.asarray(moments, dtype=float))
    return float(m[2] * (1 - RELATIVE_SLACK) - (m[0] + m[1]))


def triangle_violation(moments, std=None) -> str | None:
    """The sentence saying fitted ratios break the triangle inequality (no real body has
    them), or None when they keep it or fall short by no more than a flat body's fit may:
    FLAT_TOLERANCE of the largest, or three of their standard errors ``std`` if larger (a
    racket or a phone is nearly flat, J1 + J2 = J3, and its fitted ratios fall on either side)."""
    m = np.sort(np.asarray(moments, dtype=float))
    tolerance = FLAT_TOLERANCE * m[2]
    if std is not None and np.all(np.isfinite(std)):
        s = np.asarray(std, dtype=float)[np.argsort(np.asarray(moments, dtype=float))]
        tolerance = max(tolerance, 3.0 * float(np.hypot(s[0], s[1])))
    if triangle_deficit(m) <= tolerance:
        return None
    return (f"the fitted ratios {', '.join(f'{x:.4f}' for x in m)} break the triangle inequality "
            f"({m[0]:.4f} + {m[1]:.4f} < {m[2]:.4f}: no rigid body has them); check the flights, or pass "
            "--allow-unphysical to keep them")


def flat_note(moments) -> str | None:
    """The note for ratios that break the triangle inequality within a flat body's tolerance
    (the scenario then says ``allow_unphysical = true``), or None."""
    deficit = triangle_deficit(moments)
    if deficit <= 0:
        return None
    return (f"the fitted ratios fall {deficit:.4f} short of the triangle inequality, within the fit's errors of a "
            "flat body (J1 + J2 = J3): the scenario says allow_unphysical = true")


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
    smoothed = derivatives(recordings)
    flights, inertia, drag = find_flights(recordings, windows, drag_model, smoothed)
    if len(flights) > MAX_FIT_FLIGHTS:  # the fit's cost, sized before any of its work
        raise ParameterError("recordings", f"{len(flights):,} flights",
                             f"hold at most {MAX_FIT_FLIGHTS:,} flights for one fit (fit them in parts, or name "
                             "windows with --flights)")
    if axes_mode == "fit":
        return reported_edges(recordings, fit_flights(recordings, flights, inertia, drag, drag_model, axes_mode,
                                                      windows, say, cancel, exclude, began, include,
                                                      [dw for _, dw in smoothed]), windows, began)
    # the flights are found and their edges settled with the principal axes free to turn: a
    # sensor a few degrees off the body's would otherwise move the edges where the sensor's
    # axes stop matching and split flights (2 of 5 found, 3 extra, with a 2 degree turn)
    try:
        state = settled_fit(recordings, flights, inertia, drag, drag_model, "fit", windows,
                            lambda fraction, message: say(0.9 * fraction, message), cancel, exclude, include,
                            [dw for _, dw in smoothed])
        # their edges too: those of the body with its axes turned, which --axes fit reports (a turned
        # sensor's axes drift from the rates within a quarter second and would put them in the ramp)
        state.final_edges()
        turned = flight_rms_relative(state.sol)
    except ParameterError:
        raise
    except (ValueError, np.linalg.LinAlgError):
        # too little to turn the axes by (one short flight leaves the turn undetermined and the
        # solve non-finite): the flights are settled with the sensor's axes, as the fit asks
        return reported_edges(recordings, fit_flights(recordings, flights, inertia, drag, drag_model, axes_mode,
                                                      windows, say, cancel, exclude, began, include,
                                                      [dw for _, dw in smoothed]), windows, began)
    say(0.92, "fitting the flights with the sensor's axes")
    state.refit_with_axes("sensor")
    result = _result(recordings, state.sol, state.active_flights(), state.excluded_flights(), 0.0)
    result.notes = axes_notes(result, float(np.median(turned)), float(np.median(flight_rms_relative(state.sol))))
    say(0.96, "giving the flights the edges of the body reported")
    result = reported_edges(recordings, result, windows, began)
    say(1.0, "done")
    return result


#: an excluded flight takes the reported body's edges only where they hold this share of it
KEEP_SHARE = cs.KEEP_SHARE


def reported_edges(recordings, result: FitResult, windows=None, began: float | None = None) -> FitResult:
    """``result`` with each flight given THE edges of the body it reports (the one its
    FIT.toml holds, drag clamped at 0): those :func:`~app.throws.fitting.edges.flights_with_body`
    gives on the same samples, as ``tumble predict FIT.toml`` finds them (and ``tumble live``,
    whose last report is this fit's). The body stays as fitted; a flight whose edges moved
    (rarely more than a sample: the fit settled them with the body's axes free to turn, as
    that function judges them) gets its own launch rate fitted again with that body. A flight
    the body does not find keeps its edges, and so does an excluded flight of which it finds
    less than KEEP_SHARE (another object's throw: the body explains only pieces of it, and
    the flight is reported whole, as found)."""
    drag = np.maximum(result.drag, 0.0)
    found = flights_with_body(recordings, result.inertia, result.drag_model, drag, windows)
    taken, out = set(), []
    for ff in result.flights:
        g = next((h for h in found if h.recording == ff.rec_index and h.i0 < ff.i1 and ff.i0 < h.i1), None)
        piece = g is not None and ff.excluded and min(g.i1, ff.i1) - max(g.i0, ff.i0) < KEEP_SHARE * (ff.i1 - ff.i0)
        if g is None or (g.i0, g.i1) == (ff.i0, ff.i1) or (g.recording, g.i0) in taken or piece or \
                any(o is not ff and o.rec_index == g.recording and o.i0 < g.i1 and g.i0 < o.i1 for o in result.flights):
            out.append(ff)
            continue
        taken.add((g.recording, g.i0))
        rec = recordings[g.recording]
        w0, wf = own_start(rec, g, result.inertia, result.drag_model, drag)
        out.append(_flight_fit(rec, g.recording, g, rec.t[g.i0:g.i1], rec.w[g.i0:g.i1], wf, ~rec.saturated[g.i0:g.i1],
                               w0, result.inertia, result.axes, result.drag_model, drag, excluded=ff.excluded,
                               reason=ff.reason, cut=cut_edge(rec, g)))
    result.flights = sorted(out, key=lambda ff: (ff.rec_index, ff.i0))
    if began is not None:
        result.seconds = time.perf_counter() - began
    return result


#: ``--axes sensor`` fits clearly worse than a turned frame when its median rms/|omega0| is over
#: this many times the turned frame's...
AXES_NOTE_FACTOR = 2.0
#: ...and over this (twice what a 0.01 rad/s gyroscope's noise leaves, about 0.001)
AXES_NOTE_FLOOR = 0.002


def axes_notes(result: FitResult, turned: float, sensor: float) -> tuple[str, ...]:
    """The note for a fit with the sensor's axes (median rms/|omega0| ``sensor``) clearly
    worse than with axes turned from them (``turned``, the same flights), or none."""
    if not (sensor > AXES_NOTE_FACTOR * turned and sensor > AXES_NOTE_FLOOR):
        return ()
    return (f"the sensor's axes fit clearly worse than axes turned from them (median rms/|w0| {sensor:.4f} against "
            f"{turned:.4f} on the same flights): the sensor is not aligned with the body's principal axes; "
            "fit with --axes fit",)


def _chosen(recordings, flights, spec) -> set[int]:
    """Indices of ``flights`` named by ``spec`` (ints, or (recording index, time) pairs)."""
    out = set()
    for item in spec:
        if isinstance(item, (int, np.integer)):
            if not 0 <= int(item) < len(flights):
                raise ParameterError("flight number", int(item), f"be from 0 to {len(flights) - 1}")
            out.add(int(item))
            continue
        k, t0 = item[0], item[1]
        out |= {i for i, f in enumerate(flights)
                if k == f.recording and recordings[k].t[f.i0] - 0.2 <= t0 <= recordings[k].t[f.i1 - 1]}
    return out


def fit_flights(recordings, flights, inertia, drag, drag_model="quadratic", axes_mode="sensor", windows=None,
                say=None, cancel=None, exclude=(), began=None, include=(), dws=None) -> FitResult:
    """Fit given flights from an inertia and drag guess (see :mod:`.consensus` for the steps):
    each flight alone, a robust consensus of their bodies as the joint fit's start (candidate
    starts where they disagree), a robust joint fit, flights far off the others excluded, the
    edges settled where the fitted body stops matching, flights the fitted body finds added."""
    began = time.perf_counter() if began is None else began
    state = settled_fit(recordings, flights, inertia, drag, drag_model, axes_mode, windows, say, cancel, exclude,
                        include, dws)
    state.final_edges()
    result = _result(recordings, state.sol, state.active_flights(), state.excluded_flights(), 0.0)
    (say or (lambda *_: None))(1.0, "done")
    result.seconds = time.perf_counter() - began
    return result


def settled_fit(recordings, flights, inertia, drag, drag_model="quadratic", axes_mode="sensor", windows=None,
                say=None, cancel=None, exclude=(), include=(), dws=None) -> cs.JointFit:
    """The :class:`~app.throws.fitting.consensus.JointFit` of :func:`fit_flights`, its edges
    settled and its flights found (before its report)."""
    say = say or (lambda *_: None)
    state = cs.JointFit(recordings, list(flights), drag_model, axes_mode, windows, cancel, dws)
    say(0.05, f"fitting {len(flights)} flights one by one")
    state.start(inertia, drag)
    state.redetect_with_consensus()
    # the user's choices name flights as they are reported: after each was fitted alone
    user_out = _chosen(recordings, state.flights, exclude)
    user_in = _chosen(recordings, state.flights, include) - user_out
    if len(user_out) == len(state.flights):
        raise ParameterError("flights", len(state.flights), "leave at least one flight in the fit")
    state.left_out = {i: USER_EXCLUDED for i in user_out}
    state.keep = user_in
    say(0.35, f"fitting {state.active_count()} flights together")
    state.joint()
    for round_no in range(EDGE_ROUNDS):
        say(0.5 + 0.05 * round_no, "moving the flights' edges")
        if not state.settle():
            break
    say(0.65, "excluding flights far off the others")
    if state.exclude_outliers():
        for round_no in range(EDGE_ROUNDS):
            say(0.7 + 0.05 * round_no, "moving the flights' edges")
            if not state.settle():
                break
    say(0.9, "looking for flights the fitted body finds")
    if state.add_found():
        state.settle()
    return state


def fit_paths(paths, flights: str = "auto", drag_model: str = "quadratic", axes_mode: str = "sensor",
              progress=None, cancel=None, exclude=(), include=()) -> tuple[list[Recording], FitResult]:
    """Read the recordings at ``paths`` and fit them together (``flights``: ``auto`` or
    ``START:END,...`` windows in recording time, s)."""
    from ..recordings.reader import read_recordings

    windows = fl.parse_windows(flights)
    if drag_model not in DRAG_MODELS:
        raise ParameterError("--drag", drag_model, "be one of " + ", ".join(DRAG_MODELS))
    if axes_mode not in AXES_MODES:
        raise ParameterError("--axes", axes_mode, "be one of " + ", ".join(AXES_MODES))
    recordings = read_recordings(paths)  # an Excel file's CSV twin, or a path given twice, counts once
    return recordings, fit_recordings(recordings, windows, drag_model, axes_mode, progress, cancel, exclude, include)


def joint_result(recordings, state: cs.JointFit) -> FitResult:
    """The :class:`FitResult` of a :class:`~app.throws.fitting.consensus.JointFit` in its current state
    (the live stream's fitter warm-starts one from its last fit as each flight lands)."""
    return _result(recordings, state.sol, state.active_flights(), state.excluded_flights(), 0.0)
