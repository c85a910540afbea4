"""One flight of a recording replayed: its measured rates turned into the object's orientation, and the fitted model flown beside it.

The orientation is the measured rate integrated by :func:`app.physics.sampled.orientations`
(fourth order in the samples), in the sensor frame, the identity at the flight's first
sample: the "world" is where the sensor's axes pointed at the release. The model is Euler's
equations with the fitted inertia and drag (sensor frame, as :mod:`.dynamics` has them) and
``q' = q ⊗ (0, w/2)``, integrated by scipy's DOP853 from the same start (the identity, and the
measured rate at the first sample as the fit takes it: the local cubic over the flight's first
samples, :func:`.edges.start_rate`). Flights are numbered as ``tumble fit`` lists them
(:func:`listed_flights` runs the same fit).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ...physics import quaternion as quat
from ...physics.body import Body, box, equivalent_box_size, principal
from ...physics.errors import ParameterError, format_value
from ...physics.sampled import interpolate, orientations, orientations_at
from .defaults import DEFAULT_SPEED  # noqa: F401 (the replay's default, here for its users)
from .dynamics import drag_torque
from .edges import start_rate
from .fit import FitResult, fit_recordings
from .predict import FittedBody

#: the phone drawn when no fit gives the object's size: a box of a common phone's edges (m)
#: along the sensor's axes (x across the screen, y along it, z out of it) and its mass (kg)
PHONE_SIZE = (0.071, 0.147, 0.008)
PHONE_MASS = 0.17
#: the model's tolerances (DOP853): far below a gyroscope's 0.01 rad/s noise over a flight
MODEL_RTOL, MODEL_ATOL = 1e-10, 1e-12
#: the model's budget over one flight: steps (a phone's flight takes about 70; a linear drag of
#: 1000 on a body of least moment 0.18 took 733, 0.9 s) and wall-clock seconds
MODEL_MAX_STEPS = 10_000
MODEL_WALL_S = 20.0
#: calls of the right-hand side per DOP853 step (12), with room for rejected steps
DOP853_CALLS_PER_STEP = 16
#: the columns of ``tumble replay --out FILE.csv``, and those a model adds
CSV_COLUMNS = ("t", "qw", "qx", "qy", "qz", "wx", "wy", "wz")
MODEL_COLUMNS = ("model_qw", "model_qx", "model_qy", "model_qz")


@dataclass(frozen=True)
class FlightReplay:
    """A flight replayed: ``t`` (recording time, s), ``w`` the measured rates (sensor frame,
    rad/s), ``q`` the orientation at each stamp (body to world, world = the sensor's frame at
    ``t[0]``), ``saturated`` the clipped samples; ``model`` the fitted body (None: no model)
    started at ``w_start``; ``recording`` its name and ``number`` its place in ``tumble fit``'s
    list (from 1; None when the caller chose the flight itself); ``shape`` the body drawn
    (:func:`drawn_body`), ``solution`` the model's dense solution (scipy's)."""

    recording: str
    t: np.ndarray
    w: np.ndarray
    q: np.ndarray
    saturated: np.ndarray
    model: FittedBody | None = None
    w_start: np.ndarray | None = None
    number: int | None = None
    solution: object = None
    shape: Body | None = None

    @property
    def start(self) -> float:
        return float(self.t[0])

    @property
    def duration(self) -> float:
        return float(self.t[-1] - self.t[0])

    def _flight_times(self, times) -> tuple[np.ndarray, bool]:
        """(``times`` as a 1-D array within the flight, whether one number was given); a time
        outside the flight (beyond rounding) or not a finite number is a :class:`ParameterError`:
        the model exists only over the flight, and 100 s past it its dense solution read 3e22 rad/s."""
        try:
            arr = np.asarray(times, dtype=float)
        except (TypeError, ValueError):
            raise ParameterError("times", times, "be a time or times (s, recording time)") from None
        scalar = arr.ndim == 0
        arr = np.atleast_1d(arr)
        if arr.ndim != 1:
            raise ParameterError("times", times, "be a time or a 1-D list of times (s, recording time)")
        t0, t1 = float(self.t[0]), float(self.t[-1])
        slack = 1e-9 * max(1.0, abs(t0), abs(t1))
        if not np.all(np.isfinite(arr)) or np.any(arr < t0 - slack) or np.any(arr > t1 + slack):
            raise ParameterError("times", times, f"be within the flight, {t0:.6g} to {t1:.6g} s (recording time)")
        return np.clip(arr, t0, t1), scalar

    def measured_at(self, times) -> tuple[np.ndarray, np.ndarray]:
        """(q, w) at ``times`` (recording time, within the flight; one time gives one q and one
        w): the orientation by one step of the same scheme from the stamp before, the rate from
        the same cubic."""
        arr, scalar = self._flight_times(times)
        q, w = orientations_at(self.t, self.w, self.q, arr), interpolate(self.t, self.w, arr)
        return (q[0], w[0]) if scalar else (q, w)

    def model_at(self, times) -> tuple[np.ndarray, np.ndarray] | None:
        """(q, w) of the model at ``times`` (recording time, within the flight; one time gives one
        q and one w), or None without a model."""
        if self.solution is None:
            return None
        arr, scalar = self._flight_times(times)
        y = self.solution.sol(arr).T
        q, w = quat.normalize(y[:, 3:]), y[:, :3]
        return (q[0], w[0]) if scalar else (q, w)

    def columns(self) -> dict:
        """The CSV's columns by name: :data:`CSV_COLUMNS`, and :data:`MODEL_COLUMNS` with a model."""
        out = {"t": self.t}
        for k, name in enumerate(CSV_COLUMNS[1:5]):
            out[name] = self.q[:, k]
        for k, name in enumerate(CSV_COLUMNS[5:]):
            out[name] = self.w[:, k]
        model = self.model_at(self.t)
        if model is not None:
            for k, name in enumerate(MODEL_COLUMNS):
                out[name] = model[0][:, k]
        return out

    def csv_text(self) -> str:
        """The ``--out FILE.csv`` table: a header and one row per measured sample, numbers as
        their shortest exact decimals."""
        columns = self.columns()
        names = list(columns)
        rows = np.column_stack([columns[n] for n in names])
        lines = [",".join(names)]
        lines += [",".join(repr(float(x) + 0.0) for x in row) for row in rows]
        return "\n".join(lines) + "\n"


class _OverBudget(Exception):
    """The model's integration spent its step or wall-clock budget."""


def model_solution(body: FittedBody, t0: float, t1: float, w0, field: str = "--fit"):
    """scipy's dense solution of the model's (w, q) from ``w0`` and the identity at ``t0`` to ``t1``.

    Bounded: at most :data:`MODEL_MAX_STEPS` steps and :data:`MODEL_WALL_S` seconds, else
    :class:`ParameterError` naming ``field``, as is a model that scipy cannot carry to ``t1`` or
    that leaves finite numbers (no warning is printed on the way)."""
    from scipy.integrate import solve_ivp  # here: every command's parser imports this module

    jm = np.asarray(body.inertia, dtype=float)
    ji = np.linalg.inv(jm)
    c = np.asarray(body.drag, dtype=float)
    calls = [0]
    deadline = time.monotonic() + MODEL_WALL_S

    def rhs(_t, y):
        calls[0] += 1
        if calls[0] > MODEL_MAX_STEPS * DOP853_CALLS_PER_STEP or (calls[0] % 1000 == 0 and time.monotonic() > deadline):
            raise _OverBudget
        w = y[:3]
        w0, w1, w2, qw, qx, qy, qz = y
        dw = ji @ (-np.cross(w, jm @ w) + drag_torque(w, body.drag_model, c))
        # q ⊗ (0, w) / 2 written out (the general product costs most of a call)
        return np.array((dw[0], dw[1], dw[2],
                         -0.5 * (qx * w0 + qy * w1 + qz * w2), 0.5 * (qw * w0 + qy * w2 - qz * w1),
                         0.5 * (qw * w1 - qx * w2 + qz * w0), 0.5 * (qw * w2 + qx * w1 - qy * w0)))

    y0 = np.concatenate((np.asarray(w0, dtype=float), [1.0, 0.0, 0.0, 0.0]))
    span = max(t1, t0 + 1e-9) - t0
    try:
        with np.errstate(all="ignore"):
            solution = solve_ivp(rhs, (t0, t0 + span), y0, method="DOP853", dense_output=True,
                                 rtol=MODEL_RTOL, atol=MODEL_ATOL)
    except _OverBudget:
        raise ParameterError(field, f"{body.drag_model} drag {format_value(c)}, inertia {format_value(np.diag(jm))}",
                             f"be a model integrated over the flight ({span:.3g} s) within {MODEL_MAX_STEPS:,} steps "
                             f"and {MODEL_WALL_S:g} s (DOP853 at rtol {MODEL_RTOL:g}): this one is too stiff") from None
    if solution.status != 0 or not np.all(np.isfinite(solution.y)):
        raise ParameterError(field, f"{body.drag_model} drag {format_value(c)}, inertia {format_value(np.diag(jm))}",
                             f"be a model that integrates over the flight ({span:.3g} s) with finite rates "
                             f"(DOP853 stopped: {solution.message})")
    return solution


def replay_flight(recording, i0: int, i1: int, model: FittedBody | FitResult | None = None,
                  number: int | None = None) -> FlightReplay:
    """Replay samples ``i0`` to ``i1 - 1`` of ``recording`` (a flight), with ``model`` (a
    fitted body, a fit's result or a FIT.toml's scenario; None for none) flown beside it and
    drawn as :func:`drawn_body` has it."""
    if not (0 <= i0 < i1 <= len(recording.t)) or i1 - i0 < 2:
        raise ParameterError("flight", f"samples {i0} to {i1}", f"be at least two samples of the recording "
                             f"(0 to {len(recording.t)})")
    t = np.asarray(recording.t[i0:i1], dtype=float)
    w = np.asarray(recording.w[i0:i1], dtype=float)
    q = orientations(t, w)
    body = w_start = solution = None
    if model is not None:
        body = FittedBody.of(model, "--fit")
        w_start = start_rate(recording, i0, i1)
        solution = model_solution(body, float(t[0]), float(t[-1]), w_start)
    return FlightReplay(recording.name, t, w, q, np.asarray(recording.saturated[i0:i1], dtype=bool), body,
                        w_start, number, solution, drawn_body(model))


def drawn_body(model=None) -> Body:
    """The object drawn: a FIT.toml's own shape when it gives one (a box, a mesh: the user's
    edit); else the uniform box of the fitted inertia (a phone of the fitted proportions),
    scaled to a phone's length; with no model, a phone (:data:`PHONE_SIZE`)."""
    shape = getattr(getattr(model, "body", None), "shape", "custom")
    if model is not None and shape != "custom" and hasattr(model, "rigid_body"):
        return model.rigid_body
    if model is None:
        return box(PHONE_MASS, PHONE_SIZE)
    inertia = np.asarray(FittedBody.of(model).inertia, dtype=float)
    moments, _ = principal(inertia)
    edges = equivalent_box_size(PHONE_MASS, moments)
    longest = float(np.max(edges)) if np.all(np.isfinite(edges)) and np.max(edges) > 0 else 0.0
    scale = (max(PHONE_SIZE) / longest) ** 2 if longest > 0 else 1.0
    return Body(PHONE_MASS, inertia * scale, "custom", (), allow_unphysical=True)


def listed_flights(recordings, progress=None, cancel=None) -> FitResult:
    """The flights as ``tumble fit`` lists them (its fit, with its defaults)."""
    return fit_recordings(list(recordings), progress=progress, cancel=cancel)


def pick_flight(result: FitResult, number) -> int:
    """The index in ``result.flights`` of flight ``number`` (from 1, as ``tumble fit`` lists
    them); :class:`ParameterError` naming ``--flight`` and how many there are."""
    count = len(result.flights)
    ok = isinstance(number, (int, np.integer)) and not isinstance(number, bool) and 1 <= number <= count
    if not ok:
        there = f"there {'is' if count == 1 else 'are'} {count} flight{'' if count == 1 else 's'}"
        raise ParameterError("--flight", number, f"be a flight number from 1 to {count} ({there}, numbered as "
                             "tumble fit lists them)")
    return int(number) - 1


def replay_listed(recordings, result: FitResult, number: int, model=None) -> FlightReplay:
    """Flight ``number`` of ``result`` (as ``tumble fit`` lists it) replayed, with ``model``."""
    f = result.flights[pick_flight(result, number)]
    return replay_flight(recordings[f.rec_index], f.i0, f.i1, model, number)
