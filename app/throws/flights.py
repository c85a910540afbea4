"""Free flights in a recording: the torque residual, a first inertia from it, and the flights' edges.

In free flight a rate obeys Euler's equations up to air drag, so the torque residual

    r = |J w' + w x J w - tau_drag(w)| / |w|^2      (J scaled to a largest moment of 1)

is about 0.01-0.03 there and above 0.3 while a hand pushes or at the catch (measured on real
throws). Jerk alone cannot tell the two apart: the hand ramps the spin up smoothly. The
derivative is a Savitzky-Golay differentiator (Savitzky & Golay 1964, Anal. Chem. 36:1627):
a local cubic fitted by least squares, here on the actual, possibly irregular, stamps.

J is not known at first. :func:`bootstrap_inertia` finds it from the data alone: Euler's
equations with drag are linear in J's six entries and the drag coefficients, so a trimmed
total-least-squares fit over the fast samples, kept to those it explains, converges on the
flights. Flights are then runs of samples with a small residual; :func:`refine_edges` moves
their edges to where the integrated fit stops matching the measured rates.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..physics.errors import ParameterError
from .dynamics import drag_torque, simulate_rates
from .limits import MAX_WINDOWS, plain_number
from .recording import Recording

#: samples with a torque residual below this are free (in flight 0.01-0.03, in a hand > 0.3)
FREE_RESIDUAL = 0.1
#: the same before any inertia is known (the first guess explains flights less well)
BOOTSTRAP_RESIDUAL = 0.15
#: slower spins than this (rad/s) are never a flight: the residual divides by |w|^2
MIN_RATE = 3.0
#: shortest flight kept (s); real ones last 0.4 to 1.2 s
MIN_FLIGHT_S = 0.25
#: the differentiator's window (s): a cubic fitted over about this span
DERIVATIVE_WINDOW_S = 0.06
#: fewest samples in the differentiator's window (odd)
DERIVATIVE_MIN_SAMPLES = 7
#: a gap of unknown residual (near clipped samples) this short (s) inside a flight is bridged
BRIDGE_S = 0.15
#: an edge moves while the measured rate stays within this many times the rms of the fit
#: inside the flight
EDGE_TOLERANCE = 3.0
#: ...and never closer than this (rad/s): twice a phone gyroscope's noise per component, summed
EDGE_FLOOR = 0.04
#: how far (s) an edge may move out of the flight found by the residual
EDGE_REACH_S = 0.15
#: bootstrap: refitting rounds, candidate stretches (s) and most candidates tried
BOOTSTRAP_ROUNDS = 12
BOOTSTRAP_CHUNK_S = 0.3
BOOTSTRAP_CANDIDATES = 60
#: bootstrap: a sample is smooth when it lies within this (rad/s) plus ROUGH_RELATIVE |w| of
#: the local cubic (flights: about 0.02 rad/s; a catch's burst: several rad/s)
ROUGH_ABSOLUTE = 0.1
ROUGH_RELATIVE = 0.02


@dataclass(frozen=True)
class Flight:
    """A free flight: samples ``i0`` to ``i1 - 1`` of recording number ``recording``."""

    recording: int
    i0: int
    i1: int

    def times(self, rec: Recording) -> tuple[float, float]:
        return float(rec.t[self.i0]), float(rec.t[self.i1 - 1])


def derivative(t: np.ndarray, w: np.ndarray, window_s: float = DERIVATIVE_WINDOW_S) -> np.ndarray:
    """dw/dt at every stamp: a cubic least-squares fit over a centred window of stamps
    (Savitzky-Golay, on the actual stamps so irregular spacing is exact); the ends use the
    nearest full window."""
    return smooth_and_derivative(t, w, window_s)[1]


def smooth_and_derivative(t: np.ndarray, w: np.ndarray, window_s: float = DERIVATIVE_WINDOW_S):
    """(smoothed w, dw/dt): the local cubic's value and slope at each stamp (see :func:`derivative`)."""
    n = len(t)
    spacing = float(np.median(np.diff(t)))
    k = max(DERIVATIVE_MIN_SAMPLES, int(round(window_s / spacing)) | 1)
    if n < k:
        k = n if n % 2 else n - 1
    if k < 5:
        return np.asarray(w, dtype=float).copy(), np.gradient(w, t, axis=0)
    half = k // 2
    tw = sliding_window_view(t, k)                      # (n-k+1, k)
    centre = tw[:, half:half + 1]
    x = tw - centre
    scale = np.max(np.abs(x), axis=1, keepdims=True)
    x = x / scale
    v = np.stack([np.ones_like(x), x, x * x, x * x * x], axis=-1)  # (m, k, 4)
    ww = sliding_window_view(w, k, axis=0)              # (m, 3, k)
    vtv = np.einsum("mki,mkj->mij", v, v)
    vty = np.einsum("mki,mck->mic", v, ww)
    coef = np.linalg.solve(vtv, vty)                    # (m, 4, 3)
    out = np.empty_like(w, dtype=float)
    smooth = np.empty_like(w, dtype=float)
    out[half:n - half] = coef[:, 1, :] / scale           # value and slope at the window's centre
    smooth[half:n - half] = coef[:, 0, :]
    # ends: evaluate the first and last window's cubic at the end stamps
    for rows, m in ((range(half), 0), (range(n - half, n), len(coef) - 1)):
        for i in rows:
            xi = (t[i] - tw[m, half]) / scale[m, 0]
            out[i] = (coef[m, 1] + 2 * coef[m, 2] * xi + 3 * coef[m, 3] * xi * xi) / scale[m, 0]
            smooth[i] = coef[m, 0] + coef[m, 1] * xi + coef[m, 2] * xi * xi + coef[m, 3] * xi ** 3
    return smooth, out


def normalised(inertia: np.ndarray, coefficients) -> tuple[np.ndarray, np.ndarray]:
    """Inertia and drag divided by the largest principal moment (only ratios are observable)."""
    top = float(np.max(np.linalg.eigvalsh(inertia)))
    return inertia / top, np.asarray(coefficients, dtype=float) / top


def torque_residual(w, dw, inertia, drag_model: str = "none", coefficients=(0.0, 0.0, 0.0)) -> np.ndarray:
    """|J w' + w x J w - tau_drag| / |w|^2 at each sample (J scaled to a largest moment of 1)."""
    jm, c = normalised(np.asarray(inertia, dtype=float), coefficients)
    lw = w @ jm.T
    torque = dw @ jm.T + np.cross(w, lw) - drag_torque(w, drag_model, c)
    n2 = np.maximum(np.sum(w * w, axis=1), 1e-300)
    return np.linalg.norm(torque, axis=1) / n2


def _linear_rows(w, dw, drag_model):
    """Rows M (n, 3, 6 + drag) with M x = J w' + w x J w + c-terms for x = [J6, c]."""
    basis = []
    for a, b in ((0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1)):
        e = np.zeros((3, 3))
        e[a, b] = e[b, a] = 1.0
        basis.append(e)
    cols = [dw @ e.T + np.cross(w, w @ e.T) for e in basis]
    if drag_model != "none":
        n = np.linalg.norm(w, axis=1, keepdims=True) if drag_model == "quadratic" else 1.0
        for i in range(3):
            col = np.zeros_like(w)
            col[:, i] = (n * w)[:, i] if drag_model == "quadratic" else w[:, i]
            cols.append(col)
    return np.stack(cols, axis=-1)


def _tensor(x6):
    jxx, jyy, jzz, jyz, jxz, jxy = x6
    return np.array([[jxx, jxy, jxz], [jxy, jyy, jyz], [jxz, jyz, jzz]])


def _tls(rows):
    """x minimising |rows x| with |x| = 1, scaled to a largest moment of 1; None if J is
    not positive somewhere."""
    _, _, vt = np.linalg.svd(rows.reshape(-1, rows.shape[-1]), full_matrices=False)
    x = vt[-1]
    if np.trace(_tensor(x[:6])) < 0:
        x = -x
    top = np.linalg.eigvalsh(_tensor(x[:6]))[-1]
    return None if top <= 0 else x / top


def bootstrap_inertia(t, w, dw, usable, drag_model: str = "quadratic"):
    """(inertia, drag coefficients) from the rates alone, scaled to a largest moment of 1.

    ``J w' + w x J w + drag = 0`` is linear in J's six entries and the drag coefficients.
    Each stretch of about :data:`BOOTSTRAP_CHUNK_S` of ``usable`` samples gives a candidate
    by total least squares (rows divided by |w|^2); the candidate that explains the most
    samples (residual below :data:`BOOTSTRAP_RESIDUAL`) wins, as in RANSAC (Fischler & Bolles
    1981), and is refitted on the samples it explains until they no longer change.
    Returns None when no candidate gives a positive-definite J.
    """
    idx = np.flatnonzero(usable)
    if len(idx) < 20:
        return None
    rows = _linear_rows(w[idx], dw[idx], drag_model) / np.sum(w[idx] ** 2, axis=1)[:, None, None]
    # candidates: consecutive usable samples cut into chunks of BOOTSTRAP_CHUNK_S
    breaks = np.flatnonzero(np.diff(idx) > 1) + 1
    chunks = []
    for run in np.split(np.arange(len(idx)), breaks):
        if len(run) == 0:
            continue
        edges = np.searchsorted(t[idx[run]], t[idx[run[0]]] + BOOTSTRAP_CHUNK_S * np.arange(1, 100))
        for part in np.split(run, np.unique(edges[edges < len(run)])):
            if len(part) >= 10:
                chunks.append(part)
    if len(chunks) > BOOTSTRAP_CANDIDATES:
        chunks = [chunks[k] for k in np.linspace(0, len(chunks) - 1, BOOTSTRAP_CANDIDATES).astype(int)]
    best, best_score = None, -1
    for part in chunks + [np.arange(len(idx))]:
        x = _tls(rows[part])
        if x is None:
            continue
        score = int(np.sum(np.linalg.norm(rows @ x, axis=1) < BOOTSTRAP_RESIDUAL))
        if score > best_score:
            best, best_score = x, score
    if best is None:
        return None
    keep = np.linalg.norm(rows @ best, axis=1) < BOOTSTRAP_RESIDUAL
    for _ in range(BOOTSTRAP_ROUNDS):
        if keep.sum() < 20:
            break
        x = _tls(rows[keep])
        if x is None:
            break
        best = x
        new = np.linalg.norm(rows @ best, axis=1) < BOOTSTRAP_RESIDUAL
        if np.array_equal(new, keep):
            break
        keep = new
    jm = _tensor(best[:6])
    moments, axes = np.linalg.eigh(jm)
    if moments[0] <= 0.02 * moments[-1]:  # not positive definite: clamp to a plausible body
        moments = np.maximum(moments, 0.02 * moments[-1])
        jm = axes @ np.diag(moments) @ axes.T
    drag = np.asarray(best[6:9]) if drag_model != "none" else np.zeros(3)
    return jm / moments[-1], np.maximum(drag, 0.0) / moments[-1]


def smooth_samples(w, smooth) -> np.ndarray:
    """Samples that lie close to their local cubic: not the burst of a catch."""
    rough = np.linalg.norm(np.asarray(w) - smooth, axis=1)
    return rough < ROUGH_ABSOLUTE + ROUGH_RELATIVE * np.linalg.norm(w, axis=1)


def affected_by_clipping(t, saturated, window_s: float = DERIVATIVE_WINDOW_S) -> np.ndarray:
    """Samples whose derivative window holds a clipped sample (their residual is unknown)."""
    if not saturated.any():
        return np.zeros(len(t), dtype=bool)
    out = np.zeros(len(t), dtype=bool)
    reach = 0.5 * window_s + 1e-9
    for ts in t[saturated]:
        lo, hi = np.searchsorted(t, ts - reach), np.searchsorted(t, ts + reach, side="right")
        out[lo:hi] = True
    return out


def free_runs(t, free, unknown, segment, min_s: float = MIN_FLIGHT_S) -> list[tuple[int, int]]:
    """(i0, i1) runs of free samples within one segment, bridging short unknown gaps."""
    n = len(t)
    state = np.where(free, 1, np.where(unknown, 0, -1))
    runs = []
    i = 0
    while i < n:
        if state[i] != 1:
            i += 1
            continue
        j = i + 1
        while j < n and segment[j] == segment[i]:
            if state[j] == 1:
                j += 1
                continue
            if state[j] == 0:  # look past a gap of unknown samples
                k = j
                while k < n and state[k] == 0 and segment[k] == segment[i]:
                    k += 1
                if k < n and state[k] == 1 and segment[k] == segment[i] and t[k] - t[j] <= BRIDGE_S:
                    j = k
                    continue
            break
        end = j
        while end > i and state[end - 1] != 1:
            end -= 1
        if t[end - 1] - t[i] >= min_s:
            runs.append((i, end))
        i = j
    return runs


def detect(rec: Recording, rec_index: int, dw, inertia, drag_model, coefficients, windows=None,
           threshold: float = FREE_RESIDUAL) -> list[Flight]:
    """Flights of one recording for a trial inertia and drag; with ``windows`` ((start, end)
    pairs in recording time), only inside them and the longest free run of each."""
    r = torque_residual(rec.w, dw, inertia, drag_model, coefficients)
    fast = np.linalg.norm(rec.w, axis=1) >= MIN_RATE
    unknown = affected_by_clipping(rec.t, rec.saturated) & fast
    free = fast & ~unknown & (r < threshold)
    if windows is None:
        return [Flight(rec_index, a, b) for a, b in free_runs(rec.t, free, unknown, rec.segment)]
    flights = []
    for lo, hi in windows:
        inside = (rec.t >= lo) & (rec.t <= hi)
        runs = free_runs(rec.t, free & inside, unknown & inside, rec.segment)
        if runs:
            a, b = max(runs, key=lambda ab: rec.t[ab[1] - 1] - rec.t[ab[0]])
            flights.append(Flight(rec_index, a, b))
    return flights


def refine_edges(rec: Recording, flight: Flight, w_start, inertia, drag_model, coefficients, rms: float,
                 windows=None) -> Flight:
    """Move the flight's edges to where the integrated fit stops matching the measurements.

    From the fitted rate at the first stamp the model is integrated backwards over the samples
    before the flight and forwards from the last stamp over those after it; an edge moves out
    while the measured rate stays within ``EDGE_TOLERANCE * rms`` (at least ``EDGE_FLOOR``) of
    the model, and in while the flight's own first or last samples do not. A clipped sample
    fits when its other components do and the model runs beyond the clipped one: a throw that
    starts faster than the sensor reads still starts at its release.
    """
    t, w, seg = rec.t, rec.w, rec.segment
    tol = max(EDGE_TOLERANCE * rms, EDGE_FLOOR)
    i0, i1 = flight.i0, flight.i1
    lo_t, hi_t = t[i0] - EDGE_REACH_S, t[i1 - 1] + EDGE_REACH_S
    inside = np.ones(len(t), dtype=bool)
    if windows is not None:
        inside = np.zeros(len(t), dtype=bool)
        for a, b in windows:
            if a <= t[i0] <= b:
                inside |= (t >= a) & (t <= b)
    ok = (seg == seg[i0]) & ~rec.saturated & inside
    span = np.flatnonzero((t >= lo_t) & (t <= hi_t) & (seg == seg[i0]))
    a, b = span[0], span[-1] + 1
    # the model over [a, b): backwards from i0, forwards from i0
    model = np.empty((b - a, 3))
    model[i0 - a] = w_start
    if i0 > a:
        model[: i0 - a] = simulate_rates(t[a:i0][::-1], t[i0], w_start, inertia, drag_model, coefficients)[::-1]
    if b > i0 + 1:
        model[i0 - a + 1:] = simulate_rates(t[i0 + 1:b], t[i0], w_start, inertia, drag_model, coefficients)
    good = (np.linalg.norm(w[a:b] - model, axis=1) <= tol) & ok[a:b]
    # a clipped sample fits when its unclipped components do and the model runs past the clip
    clipped = rec.clipped[a:b]
    dev = np.abs(w[a:b] - model)
    beyond = (np.sign(model) == np.sign(w[a:b])) & (np.abs(model) >= np.abs(w[a:b]) - tol)
    clip_fits = np.all(np.where(clipped, beyond, dev <= tol), axis=1) & clipped.any(axis=1)
    good |= clip_fits & (seg[a:b] == seg[i0]) & inside[a:b]
    # the first edge: the earliest start from which every sample up to the old start fits
    start = i0
    while start - 1 >= a and good[start - 1 - a]:
        start -= 1
    while start < i1 - 1 and not good[start - a] and start - a < len(good):
        start += 1
    end = i1
    while end < b and good[end - a]:
        end += 1
    while end - 1 > start and not good[end - 1 - a]:
        end -= 1
    return Flight(flight.recording, start, end)


def parse_windows(text: str) -> list[tuple[float, float]] | None:
    """``auto`` -> None; ``START:END,...`` (s, plain ASCII decimals, at most 1e100 in magnitude)
    -> [(start, end), ...]; else ParameterError."""
    if text is None or text.strip() == "auto":
        return None
    parts = text.split(",")
    if len(parts) > MAX_WINDOWS:
        raise ParameterError("--flights", text, f"hold at most {MAX_WINDOWS:,} windows")
    out = []
    for part in parts:
        ends = part.split(":")
        if len(ends) != 2:
            raise ParameterError("--flights", text, "be auto or START:END windows in s separated by commas")
        lo, hi = (plain_number(x.strip(), "--flights", "be auto or START:END windows in s separated by commas")
                  for x in ends)
        if not lo < hi:
            raise ParameterError("--flights", part, "be a window START:END with finite START < END (s)")
        out.append((lo, hi))
    return out
