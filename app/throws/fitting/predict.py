"""Predict throws with a fitted body: the launch rate fitted on a flight's first samples, then its first flip.

:func:`predict_flights` is the one implementation behind ``tumble predict``, the import
dialog's Predict tab and ``tumble.predict``. For each flight the launch rate omega0 is fitted
(least squares, the body and drag held) on the flight's first ``lead`` seconds only, then the
flight is simulated for ``horizon`` seconds from its start: nothing measured after
``start + lead`` enters the prediction (it only measures it).

:func:`predict` (the mean of the first samples as the launch rate) is what ``tumble fit-bench``
compares against.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares

from ...physics.errors import ParameterError
from . import flights as fl
from .dynamics import H_MAX, fastest_rates, simulate_rates
from .fit import FitResult, first_zero, is_near_intermediate, measured_flip
from ..recordings.reader import Recording

#: the launch rate of :func:`predict` is the mean of this many first measured samples
FIRST_SAMPLES = 3
#: defaults of ``tumble predict``: the launch rate is fitted on this much of each flight (s),
#: and each flight is simulated this long (s)
DEFAULT_LEAD = 0.1
DEFAULT_HORIZON = 2.0
#: with ``windows = "auto"``, a flight cut by the end of its recording counts from this length
#: (s) on: a clip ending 0.1 s after the release still holds its launch
CUT_FLIGHT_MIN_S = 0.05
#: the predicted path is sampled this finely (s) to find its first flip
FLIP_SAMPLING_S = 1e-3
#: largest lead and horizon accepted (s): a flight lasts about a second
MAX_LEAD = 10.0
MAX_HORIZON = 60.0
#: the keys of one predicted flight, in order (``tumble predict --json``)
#: a FIT.toml's model is checked at this rate (rad/s): three times the fastest phone gyroscope's
#: range (34.9 rad/s, 2000 deg/s)
MODEL_CHECK_RATE = 100.0
#: the fastest a model's rate may change there (1/s): the compiled RK4's largest step, H_MAX =
#: 2.5 ms, is stable up to 2.78 / H_MAX = 1,114/s; a body that satisfies the triangle inequality
#: gives at most MODEL_CHECK_RATE, air drag on a phone about 5/s
MAX_MODEL_RATE = 1000.0
FLIGHT_KEYS = ("recording", "start", "end", "omega0", "flip_time_predicted", "flip_time_measured", "rms_relative")


# ------------------------------------------------------------------ the body of a FIT.toml


@dataclass(frozen=True)
class FittedBody:
    """What a prediction needs from a scenario: inertia (sensor frame), its principal axes
    (columns, ascending moments) and the drag."""

    inertia: np.ndarray
    axes: np.ndarray
    drag_model: str
    drag: np.ndarray

    @staticmethod
    def of(scenario, field: str = "the model (FIT.toml)", name: str | None = None) -> "FittedBody":
        """From a :class:`~app.scenario.Scenario` (a FIT.toml): its body's inertia and its drag
        load (other torques, forces and gravity would not be a throw's free flight); or from a
        :class:`~app.throws.fitting.fit.FitResult` as it is. A scenario's body must be rigid (a
        damper or a rotor is no part of these equations) and steppable (:func:`check_steppable`);
        a refusal names ``field`` and ``name`` (default: the scenario's name)."""
        if isinstance(scenario, FittedBody):
            return scenario
        if isinstance(scenario, FitResult):
            return FittedBody(scenario.inertia, scenario.axes, scenario.drag_model, np.maximum(scenario.drag, 0.0))
        body = scenario.rigid_body
        name = scenario.name if name is None else name
        for part in ("damper", "rotor"):
            if getattr(body, part, None) is not None:
                raise ParameterError(field, name, f"be a rigid body to model a throw: its {part} is no part "
                                     "of the fit's equations (remove [body." + part + "])")
        loads = scenario.applied_loads
        if loads.torques or loads.forces:
            raise ParameterError("scenario loads", scenario.name, "hold only a drag to predict throws (a FIT.toml "
                                 "from tumble fit)")
        models = {d.model for d in loads.drags}
        if len(models) > 1:
            raise ParameterError("scenario loads", ", ".join(sorted(models)), "hold one drag model to predict throws")
        model = models.pop() if models else "none"
        drag = np.sum([np.asarray(d.coefficients, dtype=float) for d in loads.drags], axis=0) if loads.drags \
            else np.zeros(3)
        inertia = np.asarray(body.inertia, dtype=float)
        check_steppable(inertia, model, drag, name, field)
        _, axes = body.principal()
        return FittedBody(inertia, axes, model, drag)


def check_steppable(inertia, drag_model: str, drag, name: str, field: str) -> None:
    """:class:`ParameterError` naming ``field`` unless the model's rate changes at most
    :data:`MAX_MODEL_RATE` times a second at |w| = :data:`MODEL_CHECK_RATE`
    (:func:`.dynamics.fastest_rates`): a drag of 1e10, or an inertia of 1e-100 under a fitted
    drag, made every step of the compiled RK4 blow up (0 flights found) and replay's DOP853 run
    for ever."""
    gyro, damp = fastest_rates(inertia, drag_model, drag, MODEL_CHECK_RATE)
    if gyro + damp <= MAX_MODEL_RATE:
        return
    raise ParameterError(field, name, f"be a model whose rate changes at most {MAX_MODEL_RATE:,.0f} times a second at "
                         f"|w| = {MODEL_CHECK_RATE:g} rad/s (a step of {H_MAX * 1e3:g} ms stays stable); its "
                         f"{'drag' if damp >= gyro else 'inertia'} makes it {gyro + damp:.3g}/s")


# ------------------------------------------------------------------ the one implementation


def predict_flights(scenario, recordings, windows="auto", lead: float = DEFAULT_LEAD,
                    horizon: float = DEFAULT_HORIZON) -> list[dict]:
    """Predict every flight of ``recordings`` with the body and drag of ``scenario``.

    Parameters
    ----------
    scenario : Scenario, FitResult or FittedBody
        A FIT.toml loaded with :func:`app.scenario.load` (its body's inertia in the sensor
        frame and its drag), a fit's result, or a :class:`FittedBody`.
    recordings : list of Recording or paths
        Recordings (paths are read with :func:`~app.throws.recordings.reader.read_recording`).
    windows : "auto" or list of (start, end)
        ``"auto"``: the flights found as ``tumble fit`` finds them (with this body; a flight
        cut by the end of its recording counts from CUT_FLIGHT_MIN_S on);
        a list: each window (recording time, s) is one flight exactly as given, in every
        recording it overlaps (no search inside it; any length: a 0.1 s window holding only
        the launch is the normal case).
    lead : float
        The launch rate omega0 is fitted (least squares) on the flight's first ``lead`` s
        (all of the flight if shorter); nothing after ``start + lead`` is used to predict.
    horizon : float
        Each flight is simulated this long (s) from its start.

    Returns
    -------
    list of dict
        One dict per flight, keys :data:`FLIGHT_KEYS`: ``recording`` (its name), ``start``
        and ``end`` (s, recording time, first and last sample), ``omega0`` (3 floats, rad/s,
        sensor frame, at ``start``), ``flip_time_predicted`` and ``flip_time_measured`` (s
        after ``start``: the first zero of the rate about the body's intermediate principal
        axis; None where the throw is not near that axis (body momentum more than 30 deg
        from it), where it does not flip within the horizon, or where the data end before a
        measured flip) and ``rms_relative`` (RMS of |predicted - measured| over the flight's
        measured, unclipped samples within the horizon, over |omega0|).
    """
    body = FittedBody.of(scenario)
    lead, horizon = check_lead_horizon(lead, horizon)
    recs = [r if isinstance(r, Recording) else _read(r) for r in recordings]
    if isinstance(windows, str):
        windows = fl.parse_windows(windows)
    elif windows is not None:
        windows = [check_window(w) for w in windows]
    out = []
    found = _auto_spans(recs, body) if windows is None else None
    for k, rec in enumerate(recs):
        spans = _window_spans(rec, windows) if windows is not None else found[k]
        for i0, i1 in spans:
            out.append(predict_span(body, rec, i0, i1, lead, horizon))
    if windows is not None and not out:
        text = ",".join(f"{a:g}:{b:g}" for a, b in windows)
        raise ParameterError("--flights", text, "hold samples of the recordings (none of the windows does)")
    return out


def check_lead_horizon(lead, horizon) -> tuple[float, float]:
    """``lead`` and ``horizon`` as floats within (0, MAX]; else ParameterError."""
    for name, value, top in (("--lead", lead, MAX_LEAD), ("--horizon", horizon, MAX_HORIZON)):
        if not (isinstance(value, (int, float)) and math.isfinite(value) and 0 < value <= top):
            raise ParameterError(name, value, f"be a number of seconds above 0 and at most {top:g}")
    return float(lead), float(horizon)


def check_window(window) -> tuple[float, float]:
    """One (start, end) window as floats, finite with start < end; else ParameterError."""
    try:
        lo, hi = (float(x) for x in window)
    except (TypeError, ValueError):
        raise ParameterError("window", window, "be a (start, end) pair of times in s") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ParameterError("window", window, "have a finite start before a finite end (s)")
    return lo, hi


def _read(path) -> Recording:
    from ..recordings.reader import read_recording

    return read_recording(Path(path) if not isinstance(path, Path) else path)


def _window_spans(rec: Recording, windows) -> list[tuple[int, int]]:
    """(i0, i1) of the samples inside each window, where the window holds at least one."""
    spans = []
    for lo, hi in windows:
        i0 = int(np.searchsorted(rec.t, lo, "left"))
        i1 = int(np.searchsorted(rec.t, hi, "right"))
        if i1 > i0 and (~rec.saturated[i0:i1]).any():
            spans.append((i0, i1))
    return spans


def _auto_spans(recs, body: FittedBody) -> list[list[tuple[int, int]]]:
    """(i0, i1) of each recording's flights, found in all of them together as ``tumble fit``
    finds them with the body it reports (:func:`~app.throws.fitting.edges.flights_with_body`)."""
    from .edges import flights_with_body

    out = [[] for _ in recs]
    for f in flights_with_body(recs, body.inertia, body.drag_model, body.drag, cut_min_s=CUT_FLIGHT_MIN_S):
        out[f.recording].append((f.i0, f.i1))
    return out


def fit_launch_rate(body: FittedBody, t, w, used, lead: float) -> np.ndarray:
    """omega0 at ``t[0]``: least squares of the integrated body over the unclipped samples
    within ``lead`` s of ``t[0]`` (all of them if the flight is shorter)."""
    t = np.asarray(t, dtype=float)
    first = np.flatnonzero(used & (t <= t[0] + lead + 1e-12))
    if len(first) == 0:
        first = np.flatnonzero(used)[:1]
    ts, ws = t[first], w[first]
    guess = ws[0].copy() if first[0] == 0 else simulate_rates([t[0]], ts[0], ws[0], body.inertia, body.drag_model,
                                                               body.drag)[0]
    if len(first) < 2:
        return guess
    later = ts > t[0]

    def residuals(w0):
        model = np.empty_like(ws)
        model[~later] = w0
        if later.any():
            model[later] = simulate_rates(ts[later], t[0], w0, body.inertia, body.drag_model, body.drag)
        return (model - ws).ravel()

    return least_squares(residuals, guess, method="lm", xtol=1e-12, ftol=1e-12).x


def predict_span(body: FittedBody, rec: Recording, i0: int, i1: int, lead: float, horizon: float) -> dict:
    """The prediction dict of samples ``i0:i1`` of ``rec`` (see :func:`predict_flights`)."""
    t, w = rec.t[i0:i1], rec.w[i0:i1]
    used = ~rec.saturated[i0:i1]
    w0 = fit_launch_rate(body, t, w, used, lead)
    mid = body.axes[:, 1]
    near = is_near_intermediate(body.inertia, body.axes, w0)
    fine = np.arange(FLIP_SAMPLING_S, horizon + 0.5 * FLIP_SAMPLING_S, FLIP_SAMPLING_S)
    path = simulate_rates(t[0] + fine, t[0], w0, body.inertia, body.drag_model, body.drag)
    predicted = first_zero(np.concatenate(([0.0], fine)), np.concatenate(([w0 @ mid], path @ mid))) if near else None
    measured = measured_flip(t, w, used, body.inertia, body.axes)
    if measured is not None and measured > horizon:
        measured = None
    within = used & (t <= t[0] + horizon + 1e-12)
    model = np.empty((int(within.sum()), 3))
    tw = t[within]
    at_start = tw <= t[0]
    model[at_start] = w0
    if (~at_start).any():
        model[~at_start] = simulate_rates(tw[~at_start], t[0], w0, body.inertia, body.drag_model, body.drag)
    dev = model - w[within]
    rms = float(np.sqrt(np.mean(np.sum(dev * dev, axis=1)))) if len(dev) else 0.0
    norm = float(np.linalg.norm(w0))
    return {"recording": rec.name, "start": float(t[0]), "end": float(t[-1]), "omega0": [float(x) + 0.0 for x in w0],
            "flip_time_predicted": predicted, "flip_time_measured": measured,
            "rms_relative": rms / norm if norm > 0 else None}


def predicted_curve(body: FittedBody, omega0, horizon: float) -> tuple[np.ndarray, np.ndarray]:
    """(t after the start, w) of the prediction from ``omega0``, every FLIP_SAMPLING_S to ``horizon``."""
    fine = np.arange(0.0, horizon + 0.5 * FLIP_SAMPLING_S, FLIP_SAMPLING_S)
    w = np.empty((len(fine), 3))
    w[0] = omega0
    w[1:] = simulate_rates(fine[1:], 0.0, np.asarray(omega0, dtype=float), body.inertia, body.drag_model, body.drag)
    return fine, w


# ------------------------------------------------------------------ the mean of the first samples (fit-bench)


@dataclass(frozen=True)
class Prediction:
    """One predicted flight: stamps, measured and predicted rates, and the first flip
    (s after the flight's start; None when undefined or not seen)."""

    t: np.ndarray
    w_measured: np.ndarray
    w_predicted: np.ndarray
    near_intermediate: bool
    flip_measured: float | None
    flip_predicted: float | None

    @property
    def omega0(self) -> float:
        return float(np.linalg.norm(self.w_measured[0]))

    @property
    def rms_relative(self) -> float:
        """RMS of |predicted - measured| over the flight, over |omega0|."""
        return float(np.sqrt(np.mean(np.sum((self.w_predicted - self.w_measured) ** 2, axis=1)))) / self.omega0

    @property
    def flip_error(self) -> float | None:
        """|predicted - measured| / measured first flip time, where both exist."""
        if self.flip_measured is None or self.flip_predicted is None or self.flip_measured <= 0:
            return None
        return abs(self.flip_predicted - self.flip_measured) / self.flip_measured


def predict(result: FitResult, t: np.ndarray, w: np.ndarray, used: np.ndarray | None = None) -> Prediction:
    """Predict a flight's rates at stamps ``t`` from the mean of its first FIRST_SAMPLES
    unclipped measurements (placed at the mean of their stamps), with ``result``'s body."""
    used = np.ones(len(t), dtype=bool) if used is None else used
    first = np.flatnonzero(used)[:FIRST_SAMPLES]
    t_bar, w_bar = float(np.mean(t[first])), np.mean(w[first], axis=0)
    before, after = t < t_bar, t >= t_bar
    inertia, model, drag = result.inertia, result.drag_model, result.drag
    path = np.empty((len(t), 3))
    if before.any():
        path[before] = simulate_rates(t[before][::-1], t_bar, w_bar, inertia, model, drag)[::-1]
    if after.any():
        path[after] = simulate_rates(t[after], t_bar, w_bar, inertia, model, drag)
    near = is_near_intermediate(inertia, result.axes, w_bar)
    flip_measured = flip_predicted = None
    if near:
        mid = result.axes[:, 1]
        flip_measured = measured_flip(t, w, used, inertia, result.axes)
        fine = np.arange(t[0], t[-1], FLIP_SAMPLING_S)
        fine_path = np.vstack([simulate_rates(fine[fine < t_bar][::-1], t_bar, w_bar, inertia, model, drag)[::-1],
                               simulate_rates(fine[fine >= t_bar], t_bar, w_bar, inertia, model, drag)])
        flip_predicted = first_zero(fine - t[0], fine_path @ mid)
    return Prediction(t, w, path, near, flip_measured, flip_predicted)


def predict_recording(result: FitResult, rec: Recording) -> list[Prediction]:
    """Find the flights of ``rec`` with ``result``'s body (edges where that body stops
    matching) and predict each from its first samples."""
    from .edges import flights_with_body

    out = []
    for f in flights_with_body([rec], result.inertia, result.drag_model, result.drag):
        used = ~rec.saturated[f.i0:f.i1]
        if used.sum() > fl.DERIVATIVE_MIN_SAMPLES:
            out.append(predict(result, rec.t[f.i0:f.i1], rec.w[f.i0:f.i1], used))
    return out
