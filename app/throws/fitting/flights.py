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

What a flight never holds: a sample slower than MIN_RATE (a still phone reads exactly 0.000,
a hand's wobble well below the floor), a clipped sample at either edge, a catch (its residual
is high; a gap of clipped samples is bridged only where the body momentum |J w| agrees on its
two sides, which a catch changes), a pause (runs end at a segment's edge), or a steady spin:
a phone on a turntable, an office chair or a drill spins about one axis at a steady rate for
longer than any throw lasts, and obeys Euler's equations all the while (:func:`steady_spin`);
no flight lasts longer than MAX_FLIGHT_S either.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ...physics.errors import ParameterError
from .dynamics import drag_torque, simulate_rates
from .memo import Store
from ..recordings.limits import GAP_MIN_S, GAP_SPACINGS, MAX_WINDOWS, plain_number
from ..recordings.reader import Recording

#: samples with a torque residual below this are free (in flight 0.01-0.03, in a hand > 0.3)
FREE_RESIDUAL = 0.1
#: the same before any inertia is known (the first guess explains flights less well)
BOOTSTRAP_RESIDUAL = 0.15
#: slower spins than this (rad/s) are never a flight: the residual divides by |w|^2
MIN_RATE = 3.0
#: shortest flight kept (s); real ones last 0.4 to 1.2 s
MIN_FLIGHT_S = 0.25
#: longest flight (s): a throw that stays up 4 s rises 20 m
MAX_FLIGHT_S = 4.0
#: a steady spin: fast samples whose speed |w| (averaged over STEADY_SMOOTH samples against
#: the gyroscope's noise) stays within STEADY_SPREAD of its mean in every STEADY_BLOCK_S for
#: STEADY_MIN_S or longer. A throw's free flight is steady at most as long as it lasts (about
#: 1 s; 1-2 blocks), and the hand's ramp and the catch around it are not; a turntable at
#: 4.7 rad/s with a phone's noise (0.02 rad/s) varies by under 2% a block, a chair slowing by
#: friction (about 0.2 rad/s^2) by about 4%
STEADY_MIN_S = MAX_FLIGHT_S
STEADY_BLOCK_S = 1.0
STEADY_SPREAD = 0.1
STEADY_SMOOTH = 5
#: the differentiator's window (s): a cubic fitted over about this span
DERIVATIVE_WINDOW_S = 0.06
#: fewest and most samples in the differentiator's window (odd): stamps microseconds apart
#: (a time column in the wrong unit) must not make a window of thousands of samples
DERIVATIVE_MIN_SAMPLES = 7
DERIVATIVE_MAX_SAMPLES = 31
#: rows of local cubics solved at once (bounds the differentiator's memory on long recordings)
DERIVATIVE_CHUNK = 65536
#: a gap of unknown residual (near clipped samples) this long (s) inside a flight is bridged
#: when the body momentum |J w| on its two sides agrees within BRIDGE_MOMENTUM: a fast flight
#: on a 1000 deg/s sensor is clipped for tenths of a second at a time, while a catch (or a
#: catch and a bounce) changes the momentum by half or more
BRIDGE_S = 0.6
BRIDGE_MOMENTUM = 0.12
#: an edge moves inwards at most this far (s) from where the torque residual put it: the
#: residual already said those samples are free (a bad model must not eat clean flight). The
#: start may move further: the hand ramps the spin up smoothly, so the residual's start can
#: hold the end of the ramp, which only the integrated model tells apart; a catch is a spike
#: the residual places sharply, while the model, integrated from the start, has drifted most
#: by the end (a body fitted with its sensor 2 degrees off the principal axes: 20 times the
#: noise; 0.1 s there cut 0.13 s of clean flight off three of six throws)
EDGE_INWARD_START_S = 0.1
EDGE_INWARD_END_S = 0.05
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


#: smoothings already made (a fit smooths the same stretch again for every body it tries)
_SMOOTHED = Store()


def smooth_and_derivative(t: np.ndarray, w: np.ndarray, window_s: float = DERIVATIVE_WINDOW_S):
    """(smoothed w, dw/dt): the local cubic's value and slope at each stamp (see :func:`derivative`).

    The window holds ``window_s`` of samples at the median spacing, odd, between
    DERIVATIVE_MIN_SAMPLES and DERIVATIVE_MAX_SAMPLES; cubics are solved DERIVATIVE_CHUNK at a
    time, so memory stays bounded whatever the recording's length. The same samples smoothed
    again get the answer already made (:mod:`.memo`: kept by their exact bytes).
    """
    t = np.asarray(t, dtype=float)
    w = np.asarray(w, dtype=float)
    return _SMOOTHED.get((t, w, float(window_s)), lambda: _smooth_and_derivative(t, w, window_s))


def _smooth_and_derivative(t, w, window_s):
    """:func:`smooth_and_derivative` made."""
    n = len(t)
    spacing = float(np.median(np.diff(t))) if n > 1 else 1.0
    # no window spans a gap: the recording's segments end there, and a cubic across 1e3 s of
    # nothing is singular (the stamps of one side all scale to zero)
    steps = np.diff(t)
    cuts = np.flatnonzero(steps > max(GAP_SPACINGS * spacing, GAP_MIN_S)) + 1
    if len(cuts):
        bounds = list(zip(np.concatenate(([0], cuts)), np.concatenate((cuts, [n]))))
        pieces = [_smooth_piece(t[a:b], w[a:b], spacing, window_s) for a, b in bounds]
        return np.concatenate([p[0] for p in pieces]), np.concatenate([p[1] for p in pieces])
    return _smooth_piece(t, w, spacing, window_s)


def _smooth_piece(t, w, spacing, window_s):
    """:func:`smooth_and_derivative` on a stretch without gaps."""
    n = len(t)
    if n < 2:
        return w.copy(), np.zeros_like(w)
    k = int(min(DERIVATIVE_MAX_SAMPLES, max(DERIVATIVE_MIN_SAMPLES, round(window_s / spacing)))) | 1
    if n < k:
        k = n if n % 2 else n - 1
    if k < 5:
        return w.copy(), np.gradient(w, t, axis=0)
    half = k // 2
    m_total = n - k + 1
    c0 = np.empty((m_total, 3))
    c1 = np.empty((m_total, 3))
    ends = {}
    for lo in range(0, m_total, DERIVATIVE_CHUNK):
        hi = min(m_total, lo + DERIVATIVE_CHUNK)
        tw = sliding_window_view(t[lo:hi + k - 1], k)              # (m, k)
        x = tw - tw[:, half:half + 1]
        scale = np.max(np.abs(x), axis=1, keepdims=True)
        x = x / scale
        v = np.stack([np.ones_like(x), x, x * x, x * x * x], axis=-1)  # (m, k, 4)
        ww = sliding_window_view(w[lo:hi + k - 1], k, axis=0)      # (m, 3, k)
        coef = np.linalg.solve(np.einsum("mki,mkj->mij", v, v), np.einsum("mki,mck->mic", v, ww))  # (m, 4, 3)
        c0[lo:hi] = coef[:, 0, :]
        c1[lo:hi] = coef[:, 1, :] / scale
        if lo == 0:
            ends[0] = (coef[0], tw[0, half], scale[0, 0])
        if hi == m_total:
            ends[1] = (coef[-1], tw[-1, half], scale[-1, 0])
    smooth = np.empty_like(w)
    out = np.empty_like(w)
    out[half:n - half] = c1
    smooth[half:n - half] = c0
    # ends: evaluate the first and last window's cubic at the end stamps
    for rows, which in ((range(half), 0), (range(n - half, n), 1)):
        coef, centre, scale = ends[which]
        for i in rows:
            xi = (t[i] - centre) / scale
            out[i] = (coef[1] + 2 * coef[2] * xi + 3 * coef[3] * xi * xi) / scale
            smooth[i] = coef[0] + coef[1] * xi + coef[2] * xi * xi + coef[3] * xi ** 3
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
    ts = np.asarray(t)[np.asarray(saturated, dtype=bool)]
    if not len(ts):
        return np.zeros(len(t), dtype=bool)
    reach = 0.5 * window_s + 1e-9
    k = np.searchsorted(ts, np.asarray(t) - reach)
    return (k < len(ts)) & (ts[np.minimum(k, len(ts) - 1)] <= np.asarray(t) + reach)


def usable_rate(w) -> np.ndarray:
    """Samples that may belong to a flight: at least MIN_RATE rad/s (a still phone reads
    exactly 0.000 on every axis, a hand's wobble well below it)."""
    return np.linalg.norm(np.asarray(w), axis=1) >= MIN_RATE


def steady_spin(t, w, segment=None) -> np.ndarray:
    """Samples of a steady spin (see :data:`STEADY_MIN_S`): never a flight, whatever their
    torque residual. Linear in the samples (blocks are reduced with numpy, not looped over)."""
    t = np.asarray(t, dtype=float)
    w = np.asarray(w, dtype=float)
    n = len(t)
    out = np.zeros(n, dtype=bool)
    if n < 2 or t[-1] - t[0] < STEADY_MIN_S:
        return out
    speed = np.linalg.norm(w, axis=1)
    fast = speed >= MIN_RATE
    kernel = np.ones(STEADY_SMOOTH) / STEADY_SMOOTH
    smooth = np.convolve(speed, kernel, mode="same") if n >= STEADY_SMOOTH else speed
    steps = np.diff(t)
    cut = steps > max(GAP_SPACINGS * float(np.median(steps)), GAP_MIN_S)
    if segment is not None:
        segment = np.asarray(segment)
        cut |= segment[1:] != segment[:-1]
    begins = fast & np.concatenate(([True], cut | ~fast[:-1]))
    ends = fast & np.concatenate((cut | ~fast[1:], [True]))
    starts, stops = np.flatnonzero(begins), np.flatnonzero(ends) + 1
    long_runs = (t[stops - 1] - t[starts]) >= STEADY_MIN_S
    for a, b in zip(starts[long_runs].tolist(), stops[long_runs].tolist()):
        tr, sr = t[a:b], smooth[a:b]
        first = np.unique(np.searchsorted(tr, tr[0] + STEADY_BLOCK_S * np.arange(int((tr[-1] - tr[0]) // STEADY_BLOCK_S)
                                                                                   + 1)))
        first = first[first < len(tr)]
        top, low = np.maximum.reduceat(sr, first), np.minimum.reduceat(sr, first)
        counts = np.diff(np.concatenate((first, [len(tr)])))
        mean = np.add.reduceat(sr, first) / counts
        steady = (top - low) <= STEADY_SPREAD * mean
        # runs of steady blocks lasting STEADY_MIN_S or more
        edges = np.diff(np.concatenate(([0], steady.astype(np.int8), [0])))
        for p, q in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)):
            lo, hi = int(first[p]), int(first[q]) if q < len(first) else len(tr)
            if tr[hi - 1] - tr[lo] >= STEADY_MIN_S - STEADY_BLOCK_S:  # a partial block may begin or end it
                # ...and the blocks on either side (a partial block at the run's end) go with it
                lo = int(np.searchsorted(tr, tr[lo] - STEADY_BLOCK_S))
                hi = int(np.searchsorted(tr, tr[hi - 1] + STEADY_BLOCK_S, side="right"))
                out[a + lo:a + hi] = True
    return out


def free_runs(t, free, unknown, segment, min_s: float = MIN_FLIGHT_S, momentum=None) -> list[tuple[int, int]]:
    """(i0, i1) runs of free samples within one segment lasting ``min_s`` or more, bridging
    gaps of only unknown samples up to BRIDGE_S long; with ``momentum`` (|J w| per sample)
    only where it agrees within BRIDGE_MOMENTUM on the gap's two sides."""
    t = np.asarray(t)
    free = np.asarray(free, dtype=bool)
    segment = np.asarray(segment)
    new_seg = np.concatenate(([True], segment[1:] != segment[:-1], [True]))
    prev_free = np.concatenate(([False], free[:-1]))
    next_free = np.concatenate((free[1:], [False]))
    starts = np.flatnonzero(free & (~prev_free | new_seg[:-1]))
    ends = np.flatnonzero(free & (~next_free | new_seg[1:])) + 1
    if not len(starts):
        return []
    state_unknown = np.concatenate(([0], np.cumsum(~np.asarray(unknown, dtype=bool) & ~np.asarray(free, dtype=bool))))
    merged = [[int(starts[0]), int(ends[0])]]
    for a, b in zip(starts[1:].tolist(), ends[1:].tolist()):
        p0, p1 = merged[-1]
        bridge = (segment[a] == segment[p1 - 1] and state_unknown[a] == state_unknown[p1]
                  and t[a] - t[p1 - 1] <= BRIDGE_S)
        if bridge and momentum is not None:
            m0, m1 = float(momentum[p1 - 1]), float(momentum[a])
            bridge = abs(m1 - m0) <= BRIDGE_MOMENTUM * max(m0, m1)
        if bridge:
            merged[-1][1] = b
        else:
            merged.append([a, b])
    return [(a, b) for a, b in merged if t[b - 1] - t[a] >= min_s]


def detect(rec: Recording, rec_index: int, dw, inertia, drag_model, coefficients, windows=None,
           threshold: float = FREE_RESIDUAL, min_s: float = MIN_FLIGHT_S) -> list[Flight]:
    """Flights of one recording for a trial inertia and drag, lasting ``min_s`` or more; with
    ``windows`` ((start, end) pairs in recording time), only inside them and the longest free
    run of each."""
    fast = usable_rate(rec.w)
    r = np.full(len(rec.t), np.inf)
    r[fast] = torque_residual(rec.w[fast], dw[fast], inertia, drag_model, coefficients)
    unknown = affected_by_clipping(rec.t, rec.saturated) & fast
    free = fast & ~unknown & (r < threshold) & ~steady_spin(rec.t, rec.w, rec.segment)
    momentum = np.linalg.norm(rec.w @ np.asarray(inertia, dtype=float).T, axis=1)

    def throws(runs):  # no throw stays up longer than MAX_FLIGHT_S
        return [(a, b) for a, b in runs if rec.t[b - 1] - rec.t[a] <= MAX_FLIGHT_S]

    if windows is None:
        return [Flight(rec_index, a, b)
                for a, b in throws(free_runs(rec.t, free, unknown, rec.segment, min_s, momentum))]
    flights = []
    for lo, hi in windows:
        inside = (rec.t >= lo) & (rec.t <= hi)
        runs = throws(free_runs(rec.t, free & inside, unknown & inside, rec.segment, min_s, momentum))
        if runs:
            a, b = max(runs, key=lambda ab: rec.t[ab[1] - 1] - rec.t[ab[0]])
            flights.append(Flight(rec_index, a, b))
    return flights


def refine_edges(rec: Recording, flight: Flight, w_start, inertia, drag_model, coefficients, rms: float,
                 windows=None, anchor: Flight | None = None) -> Flight:
    """Move the flight's edges to where the integrated fit stops matching the measurements.

    From the fitted rate at the first stamp the model is integrated backwards over the samples
    before the flight and forwards from the last stamp over those after it; an edge moves out
    while the measured rate stays within ``EDGE_TOLERANCE * rms`` (at least ``EDGE_FLOOR``) of
    the model, and in while the flight's own first or last samples do not. A clipped sample
    fits when its other components do and the model runs beyond the clipped one: a throw that
    starts faster than the sensor reads still starts at its release, but no flight begins or
    ends on a clipped sample, nor on one slower than MIN_RATE. Edges stay within EDGE_REACH_S
    outside and EDGE_INWARD_START_S / EDGE_INWARD_END_S inside ``anchor`` (the flight the torque residual found).
    """
    t, w, seg = rec.t, rec.w, rec.segment
    tol = max(EDGE_TOLERANCE * rms, EDGE_FLOOR)
    anchor = anchor or flight
    i0, i1 = flight.i0, flight.i1
    lo_t = min(t[i0], t[anchor.i0]) - EDGE_REACH_S - 1e-9
    hi_t = max(t[i1 - 1], t[anchor.i1 - 1]) + EDGE_REACH_S + 1e-9
    a, b = int(np.searchsorted(t, lo_t)), int(np.searchsorted(t, hi_t, "right"))
    same = np.flatnonzero(seg[a:b] == seg[i0]) + a  # one segment: a contiguous stretch
    a, b = int(same[0]), int(same[-1]) + 1
    tl, wl = t[a:b], w[a:b]
    inside = np.ones(b - a, dtype=bool)
    if windows is not None:
        inside[:] = False
        for lo, hi in windows:
            if lo <= t[i0] <= hi:
                inside |= (tl >= lo) & (tl <= hi)
    fast = usable_rate(wl)
    ok = ~rec.saturated[a:b] & inside & fast
    # the model over [a, b): backwards from i0, forwards from i0
    model = np.empty((b - a, 3))
    model[i0 - a] = w_start
    if i0 > a:
        model[: i0 - a] = simulate_rates(t[a:i0][::-1], t[i0], w_start, inertia, drag_model, coefficients)[::-1]
    if b > i0 + 1:
        model[i0 - a + 1:] = simulate_rates(t[i0 + 1:b], t[i0], w_start, inertia, drag_model, coefficients)
    good = (np.linalg.norm(wl - model, axis=1) <= tol) & ok
    # a clipped sample fits when its unclipped components do and the model runs past the clip
    clipped = rec.clipped[a:b]
    dev = np.abs(wl - model)
    beyond = (np.sign(model) == np.sign(wl)) & (np.abs(model) >= np.abs(wl) - tol)
    clip_fits = np.all(np.where(clipped, beyond, dev <= tol), axis=1) & clipped.any(axis=1)
    good |= clip_fits & inside & fast
    # the first edge: the earliest start from which every sample up to the old start fits
    i1 = min(i1, b)
    start = i0
    while start - 1 >= a and good[start - 1 - a]:
        start -= 1
    while start < i1 - 1 and not good[start - a]:
        start += 1
    end = i1
    while end < b and good[end - a]:
        end += 1
    while end - 1 > start and not good[end - 1 - a]:
        end -= 1
    # within reach of the residual's flight, never on a clipped or slow sample
    latest = int(np.searchsorted(t, t[anchor.i0] + EDGE_INWARD_START_S, "right")) - 1
    earliest_end = int(np.searchsorted(t, t[anchor.i1 - 1] - EDGE_INWARD_END_S, "left")) + 1
    start = max(min(start, latest), int(np.searchsorted(t, t[anchor.i0] - EDGE_REACH_S - 1e-9)), a)
    end = min(max(end, earliest_end), int(np.searchsorted(t, t[anchor.i1 - 1] + EDGE_REACH_S + 1e-9, "right")), b)
    while start < end - 1 and not ok[start - a]:
        start += 1
    while end - 1 > start and not ok[end - 1 - a]:
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
