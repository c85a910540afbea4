"""Predict a throw from its first measured rates with a fitted body: its omega and its first flip."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import flights as fl
from .dynamics import simulate_rates
from .edges import find_flights, settle_edges
from .fit import FitResult, first_zero, is_near_intermediate
from .recording import Recording

#: the launch rate of a predicted throw is the mean of this many first measured samples
FIRST_SAMPLES = 3


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
        flip_measured = first_zero(t[used] - t[0], w[used] @ mid)
        fine = np.arange(t[0], t[-1], 1e-3)
        fine_path = np.vstack([simulate_rates(fine[fine < t_bar][::-1], t_bar, w_bar, inertia, model, drag)[::-1],
                               simulate_rates(fine[fine >= t_bar], t_bar, w_bar, inertia, model, drag)])
        flip_predicted = first_zero(fine - t[0], fine_path @ mid)
    return Prediction(t, w, path, near, flip_measured, flip_predicted)


def predict_recording(result: FitResult, rec: Recording) -> list[Prediction]:
    """Find the flights of ``rec`` with ``result``'s body (edges where that body stops
    matching) and predict each from its first samples."""
    flights, _, _ = find_flights([rec], None, result.drag_model)
    w0s = [rec.w[f.i0] for f in flights]
    flights, _ = settle_edges([rec], flights, w0s, result.inertia, result.drag_model, result.drag, None, None)
    out = []
    for f in flights:
        used = ~rec.saturated[f.i0:f.i1]
        if used.sum() > fl.DERIVATIVE_MIN_SAMPLES:
            out.append(predict(result, rec.t[f.i0:f.i1], rec.w[f.i0:f.i1], used))
    return out
