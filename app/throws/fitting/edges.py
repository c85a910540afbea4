"""Flights of whole recordings: found from the rates alone, then their edges settled with a fitted body.

:func:`find_flights` runs :mod:`.flights` over every recording (a first inertia from the
rates, flights by the torque residual, a second inertia from those flights, the flights
again); :func:`settle_edges` moves each flight's edges to where a fitted body, started on
the flight's core, stops matching its measured rates, refitting the flight's initial rate
alone each time; :func:`flight_edges` is THE edges of a flight for one body, which every
command and window reports (``tumble fit`` ends with them, ``tumble predict`` and ``tumble
live`` report them); :func:`cut_edge` says whether a recording begins or ends inside a flight;
:func:`flights_with_body` finds flights with a known body (``tumble predict``).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import leastsq

from ...physics.errors import ParameterError
from . import flights as fl
from .dynamics import initial_rate, rates_and_jacobian, rotation_matrix, simulate_rates, turn_directions
from ..recordings.reader import Recording
from .memo import Store
from .solver import OUTLIER_FACTOR, OUTLIER_FLOOR, OUTLIER_ROUNDS, FitCancelled, flight_rms_relative, solve

#: most passes of moving the flights' edges to where the fit stops matching
EDGE_PASSES = 6
#: the edges' tolerance is set by the fit's rms this far (s) inside them
EDGE_MARGIN_S = 0.1
#: fewest samples in a flight's core for it to be fitted on its own
CORE_MIN_SAMPLES = 20


def merge(recordings, flights):
    """Flights sorted, overlapping ones of one recording joined (never across a pause)."""
    out = []
    for f in sorted(flights, key=lambda f: (f.recording, f.i0)):
        seg = recordings[f.recording].segment
        if out and out[-1].recording == f.recording and f.i0 <= out[-1].i1 and seg[f.i0] == seg[out[-1].i0]:
            out[-1] = fl.Flight(f.recording, out[-1].i0, max(out[-1].i1, f.i1))
        else:
            out.append(f)
    return out


def check_windows(recordings, windows):
    """Every ``--flights`` window must overlap a recording."""
    if windows is None:
        return
    for lo, hi in windows:
        if not any(hi >= r.t[0] and lo <= r.t[-1] for r in recordings):
            spans = ", ".join(f"{r.t[0]:g} to {r.t[-1]:g} s" for r in recordings)
            raise ParameterError("--flights", f"{lo:g}:{hi:g}", f"lie within the recording ({spans})")


def derivatives(recordings) -> list[tuple[np.ndarray, np.ndarray]]:
    """(smoothed w, dw/dt) of each recording (:func:`~app.throws.fitting.flights.smooth_and_derivative`)."""
    return [fl.smooth_and_derivative(rec.t, rec.w) for rec in recordings]


def find_flights(recordings, windows=None, drag_model="quadratic", smoothed=None):
    """(flights, inertia guess, drag guess) from the rates alone (see :mod:`.flights`);
    ``smoothed``: the recordings' :func:`derivatives`, if already known."""
    check_windows(recordings, windows)
    smoothed = derivatives(recordings) if smoothed is None else smoothed
    prepared, steady_s = [], 0.0
    for rec, (smooth, dw) in zip(recordings, smoothed):
        fast = fl.usable_rate(rec.w)
        unknown = fl.affected_by_clipping(rec.t, rec.saturated)
        steady = fl.steady_spin(rec.t, rec.w, rec.segment)
        steady_s += float(np.sum(np.diff(rec.t)[steady[1:]])) if len(rec.t) > 1 else 0.0
        usable = fast & ~unknown & ~steady & fl.smooth_samples(rec.w, smooth)
        if windows is not None:
            inside = np.zeros(len(rec.t), dtype=bool)
            for lo, hi in windows:
                inside |= (rec.t >= lo) & (rec.t <= hi)
            usable &= inside
        usable[0] = False  # stretches never run from one recording into the next
        prepared.append((dw, usable))
    t_all = np.concatenate([r.t for r in recordings])
    w_all = np.concatenate([r.w for r in recordings])
    dw_all = np.concatenate([p[0] for p in prepared])
    usable_all = np.concatenate([p[1] for p in prepared])
    names = ", ".join(r.name for r in recordings)
    spin = (f"; its {steady_s:.0f} s of steady spin (a turntable, a chair) last longer than any throw"
            if steady_s > 0 else "")
    no_flight = ParameterError("recording", names, f"hold a free flight (a spin above {fl.MIN_RATE:g} rad/s "
                               f"lasting {fl.MIN_FLIGHT_S:g} to {fl.MAX_FLIGHT_S:g} s that obeys Euler's equations)"
                               + spin)
    model = "quadratic" if drag_model == "none" else drag_model
    guess = fl.bootstrap_inertia(t_all, w_all, dw_all, usable_all, model)
    if guess is None:
        raise no_flight
    found = []
    for threshold in (fl.BOOTSTRAP_RESIDUAL, fl.FREE_RESIDUAL):
        found = []
        for k, rec in enumerate(recordings):
            found += fl.detect(rec, k, prepared[k][0], guess[0], model, guess[1], windows, threshold)
        if not found:
            raise no_flight
        # a second guess from the flights alone
        mask = np.zeros(len(t_all), dtype=bool)
        base = np.cumsum([0] + [len(r.t) for r in recordings])
        for f in found:
            mask[base[f.recording] + f.i0: base[f.recording] + f.i1] = True
        better = fl.bootstrap_inertia(t_all, w_all, dw_all, usable_all & mask, model)
        guess = better if better is not None else guess
    if windows is not None:
        for lo, hi in windows:
            if not any(lo <= recordings[f.recording].t[f.i0] <= hi for f in found):
                raise ParameterError("--flights", f"{lo:g}:{hi:g}", "hold a free flight (none found in it)")
    inertia, drag = guess
    return merge(recordings, found), inertia, (np.zeros(3) if drag_model == "none" else drag)


#: most rounds of turning the body's axes to the flights found and finding them again with it
TURN_ROUNDS = 4


def flights_with_body(recordings, inertia, drag_model, drag, windows=None, cut_min_s: float | None = None) -> list:
    """Flights of ``recordings`` found with a known body (a FIT.toml's): runs of small torque
    residual, each given its edges by :func:`flight_edges`. With ``cut_min_s``, a run cut by
    the end of its recording (or segment) counts from that length on (a clip that ends just
    after the release still holds its launch).

    The edges are judged with the body's principal axes free to turn: a FIT.toml fitted with
    the sensor's axes (the default) says nothing of a sensor turned a degree or two from them,
    and its drag and ratios absorb that turn, a model too rough at 25 rad/s to place an edge
    to the sample. So the body is turned to the flights it finds (one joint solve of the
    axes' turn, the ratios, the drag and each flight's launch rate, from the given body), the
    flights found again with the turned body, and so on until they stay (at most
    TURN_ROUNDS). A function of the samples and the given body alone: ``tumble fit`` reports
    the edges this gives with the body it reports (its FIT.toml's), so ``tumble predict`` with
    that FIT.toml, and ``tumble live``, report the same edges.
    """
    out = _flights_of_body(recordings, inertia, drag_model, drag, windows, cut_min_s)
    turned, c = inertia, drag
    for _ in range(TURN_ROUNDS):
        # turned to the flights any caller finds (a clip's short cut flight, which only
        # tumble predict looks for, must not turn the body tumble fit reports edges with)
        whole = [f for f in out if recordings[f.recording].t[f.i1 - 1] - recordings[f.recording].t[f.i0]
                 >= fl.MIN_FLIGHT_S]
        if not whole:
            return out
        try:  # a turn the flights do not determine (one short flight) leaves the edges of the body given
            turned, c = _turned_body(recordings, whole, turned, drag_model, c)
            c = np.maximum(c, 0.0)
            if not (np.all(np.isfinite(turned)) and np.all(np.isfinite(c))):
                return out
            found = _flights_of_body(recordings, turned, drag_model, c, windows, cut_min_s)
        except (ParameterError, ValueError, np.linalg.LinAlgError):
            return out
        if found == out:
            break
        out = found
    return out


def _turned_body(recordings, flights, inertia, drag_model, drag):
    """(inertia, drag) of one joint solve of ``flights`` with the axes free to turn, from the
    given body; a flight far off the others (another object thrown, a catch taken for flight:
    rms/|w0| over OUTLIER_FACTOR times the others' median and OUTLIER_FLOOR, as the fit
    excludes them) is left out, worst first, and the rest solved again."""
    flights = list(flights)
    w0s = np.array([start_rate(recordings[f.recording], f.i0, f.i1) for f in flights])
    sol = solve(recordings, flights, inertia, drag_model, drag, "fit", w0s)
    for _ in range(OUTLIER_ROUNDS):
        rel = flight_rms_relative(sol)
        if len(rel) < 3:
            break
        others = np.array([np.median(np.delete(rel, k)) for k in range(len(rel))])
        far = (rel > OUTLIER_FACTOR * others) & (rel > OUTLIER_FLOOR)
        if not far.any():
            break
        k = int(np.argmax(np.where(far, rel / others, -np.inf)))
        del flights[k]
        w0s = np.delete(np.asarray(sol.w0s), k, axis=0)
        inertia, drag = sol.body()
        sol = solve(recordings, flights, inertia, drag_model, np.maximum(drag, 0.0), "fit", w0s)
    return sol.body()


def _flights_of_body(recordings, inertia, drag_model, drag, windows, cut_min_s) -> list:
    """:func:`flights_with_body` for exactly this body."""
    found = []
    for k, rec in enumerate(recordings):
        _, dw = fl.smooth_and_derivative(rec.t, rec.w)
        runs = fl.detect(rec, k, dw, inertia, drag_model, drag, windows,
                         min_s=fl.MIN_FLIGHT_S if cut_min_s is None else min(cut_min_s, fl.MIN_FLIGHT_S))
        ends = {b for _, b in rec.segment_bounds()}
        found += [f for f in runs if rec.t[f.i1 - 1] - rec.t[f.i0] >= fl.MIN_FLIGHT_S or f.i1 in ends]
    out = []
    for f in merge(recordings, found):
        g = flight_edges(recordings[f.recording], f, inertia, drag_model, drag, windows)[0]
        if not any(h.recording == g.recording and h.i0 < g.i1 and g.i0 < h.i1 for h in out):
            out.append(g)
    return out


#: the torque residual around a flight is computed over this much (s) on either side of it:
#: far more than the differentiator's half window and an edge's reach, so the flight's edges
#: do not depend on where the samples around it end (a live stream's newest sample, a clip)
EDGES_CONTEXT_S = 1.0


def flight_edges(rec: Recording, flight, inertia, drag_model, drag, windows=None):
    """(flight, initial rate): THE edges of the flight of ``rec`` that ``flight`` overlaps, for
    one body (``tumble fit``, ``tumble predict``, ``tumble live``, the window and the import
    dialog all report these).

    They depend on the recording's samples and the body alone, never on how the flight was
    first found: the anchor is the run of small torque residual under this body over
    ``flight`` (the longest overlapping it; ``flight`` itself where there is none), and the
    edges are settled from it (:func:`settle_edges`: moved to where the body, fitted to the
    flight's core, stops matching the measured rates).
    """
    t = rec.t
    lo = int(np.searchsorted(t, t[flight.i0] - EDGES_CONTEXT_S))
    hi = int(np.searchsorted(t, t[flight.i1 - 1] + EDGES_CONTEXT_S, "right"))
    part = Recording(rec.name, t[lo:hi], rec.w[lo:hi], rec.segment[lo:hi], rec.saturated[lo:hi])
    anchor = flight
    if hi - lo > fl.DERIVATIVE_MIN_SAMPLES + 2:
        _, dw = fl.smooth_and_derivative(part.t, part.w)
        runs = [fl.Flight(flight.recording, g.i0 + lo, g.i1 + lo)
                for g in fl.detect(part, flight.recording, dw, inertia, drag_model, drag, windows, min_s=0.0)]
        over = [g for g in runs if g.i0 < flight.i1 and flight.i0 < g.i1]
        if over:
            anchor = max(over, key=lambda g: (min(g.i1, flight.i1) - max(g.i0, flight.i0), g.i1 - g.i0))
    w0 = refit_start(rec, anchor, start_rate(rec, anchor.i0, anchor.i1), inertia, drag_model, drag)
    try:
        flights, w0s, _ = settle_edges({flight.recording: rec}, [anchor], [w0], inertia, drag_model, drag, windows,
                                       None)
    except ParameterError:
        return anchor, w0
    g, w0 = flights[0], w0s[0]
    i0, i1 = _local_edge(rec, g, g.i0, w0, inertia, drag_model, drag, windows, anchor, "start"), g.i1
    i1 = _local_edge(rec, fl.Flight(g.recording, i0, g.i1), None, None, inertia, drag_model, drag, windows, anchor,
                     "end")
    if (i0, i1) == (g.i0, g.i1) or t[i1 - 1] - t[i0] < fl.MIN_FLIGHT_S:
        return g, w0
    h = fl.Flight(g.recording, i0, i1)
    guess = w0 if i0 == g.i0 else simulate_rates([t[i0]], t[g.i0], w0, inertia, drag_model, drag)[0]
    return h, refit_start(rec, h, guess, inertia, drag_model, drag)


#: each edge is judged last by the body fitted to this much (s) of the flight next to it (its
#: launch rate and its axes' turn): a body a little off (a sensor turned a degree from the
#: body's axes, the ratios of a fit of other flights) drifts from the rates over a whole
#: flight, which would move the edges with it, but hardly over this stretch, where the
#: hand's ramp or the catch stands out alone
LOCAL_EDGE_S = 0.25
#: ...starting this far (s) inside the edge as first settled, which may hold a few samples of
#: the hand's ramp or of the catch (the edge then walks out to where the rates stop matching)
LOCAL_MARGIN_S = 0.05


def _local_edge(rec, g, i_start, w_start, inertia, drag_model, drag, windows, anchor, side: str) -> int:
    """The ``side`` ("start" or "end") index of flight ``g`` where the body, fitted to the
    LOCAL_EDGE_S of the flight next to that edge alone, stops matching the rates
    (:func:`~app.throws.fitting.flights.refine_edges` on that stretch)."""
    t = rec.t
    if side == "start":  # fitted from LOCAL_MARGIN_S inside the edge: the edge found may hold the ramp's end
        a = int(np.searchsorted(t, t[g.i0] + LOCAL_MARGIN_S))
        part = fl.Flight(g.recording, a, int(np.searchsorted(t, t[a] + LOCAL_EDGE_S, "right")))
    else:
        b = int(np.searchsorted(t, t[g.i1 - 1] - LOCAL_MARGIN_S, "right"))
        part = fl.Flight(g.recording, int(np.searchsorted(t, t[b - 1] - LOCAL_EDGE_S)), b)
    part = fl.Flight(g.recording, max(part.i0, g.i0), min(part.i1, g.i1))
    if part.i1 - part.i0 < CORE_MIN_SAMPLES // 2:
        return g.i0 if side == "start" else g.i1
    guess = rec.w[part.i0] if rec.saturated[part.i0] else start_rate(rec, part.i0, part.i1)
    used = ~rec.saturated[part.i0:part.i1]
    if used.sum() < CORE_MIN_SAMPLES // 2:
        return g.i0 if side == "start" else g.i1
    measured = rec.w[part.i0:part.i1]
    inertia = np.asarray(inertia, dtype=float)

    def turned(x):
        r = rotation_matrix(x[3:])
        return r @ inertia @ r.T

    def residuals(x):
        return (_flight_model(rec, part, x[:3], turned(x), drag_model, drag) - measured)[used].ravel()

    def jacobian(x):
        body = turned(x)
        return _flight_jacobian(rec, part, x[:3], body, drag_model, drag, used, turn_directions(x[3:], body))

    # the launch rate and the body's axes turned (a sensor a few degrees off them, which the
    # body may or may not know): the edge then does not hang on which axes the body has
    x = levenberg_marquardt(residuals, jacobian, np.concatenate((np.asarray(guess, dtype=float), np.zeros(3))),
                            xtol=1e-10, ftol=1e-10)
    body = turned(x)
    dev = residuals(x).reshape(-1, 3)
    rms = float(np.sqrt(np.mean(np.sum(dev * dev, axis=1))))
    moved = fl.refine_edges(rec, part, x[:3], body, drag_model, drag, rms, windows, anchor)
    return moved.i0 if side == "start" else moved.i1


def levenberg_marquardt(fun, jac, x0, xtol: float = 1e-8, ftol: float = 1e-8, gtol: float = 1e-8) -> np.ndarray:
    """The minimum ``scipy.optimize.least_squares(fun, x0, jac=jac, method="lm", ...)`` finds, to
    the bit: the same MINPACK lmder, asked for the same residuals and Jacobians at the same
    points (each kept for the last point asked, as least_squares keeps them), with the same
    tolerances, step bound and evaluation limit, and the same ValueError for a start not a
    number, residuals not finite at the start or fewer than the unknowns; without least_squares' own wrapping around it,
    nor the Jacobian it computes again at the end for figures this caller does not use."""
    x0 = np.atleast_1d(np.asarray(x0, dtype=float))
    if not np.all((x0 >= -np.inf) & (x0 <= np.inf)):  # least_squares' words for a start not a number
        raise ValueError("Initial guess is outside of provided bounds")
    kept = {"x": None, "f": None, "J": None}

    def at(x):
        if kept["x"] is None or not np.array_equal(x, kept["x"]):
            kept.update(x=np.array(x, dtype=float), f=None, J=None)

    def f(x):
        at(x)
        if kept["f"] is None:
            kept["f"] = np.atleast_1d(fun(kept["x"].copy()))
        return kept["f"].copy()

    def j(x):
        at(x)
        if kept["J"] is None:
            kept["J"] = np.atleast_2d(jac(kept["x"].copy()))
        return kept["J"].copy()

    f0 = f(x0)
    j(x0)
    if f0.ndim != 1:
        raise ValueError(f"`fun` must return at most 1-d array_like. f0.shape: {f0.shape}")
    if not np.all(np.isfinite(f0)):
        raise ValueError("Residuals are not finite in the initial point.")
    if f0.size < x0.size:
        raise ValueError("Method 'lm' doesn't work when the number of residuals is less than the number of "
                         "variables.")
    return leastsq(f, x0.copy(), Dfun=j, full_output=True, col_deriv=False, ftol=ftol, xtol=xtol, gtol=gtol,
                   maxfev=100 * x0.size, factor=100.0, diag=None)[0]


def start_rate(rec: Recording, i: int, i1: int) -> np.ndarray:
    """The rate at sample ``i`` from the local cubic over the flight's first samples (a
    better start than one noisy sample)."""
    b = min(i1, i + fl.DERIVATIVE_MIN_SAMPLES + 2)
    if b - i < 5:
        return rec.w[i].copy()
    smooth, _ = fl.smooth_and_derivative(rec.t[i:b], rec.w[i:b])
    return smooth[0]


def own_start(rec: Recording, f, inertia, drag_model, drag):
    """(initial rate, model rates) of flight ``f`` fitted alone to a given body."""
    w0 = refit_start(rec, f, start_rate(rec, f.i0, f.i1), inertia, drag_model, drag)
    return w0, _flight_model(rec, f, w0, inertia, drag_model, drag)


def _flight_model(rec, f, w0, inertia, drag_model, drag):
    """The model's rates at the flight's stamps from ``w0`` at its first stamp."""
    out = np.empty((f.i1 - f.i0, 3))
    out[0] = w0
    out[1:] = simulate_rates(rec.t[f.i0 + 1:f.i1], rec.t[f.i0], w0, inertia, drag_model, drag)
    return out


def _flight_jacobian(rec, f, w0, inertia, drag_model, drag, used, directions=None):
    """d(model rates at the flight's unclipped stamps)/d(w0, then each inertia direction), as
    least squares wants it (rows: the residuals of :func:`_flight_model`)."""
    _, sens = rates_and_jacobian(rec.t[f.i0:f.i1], w0, inertia, drag_model, drag, directions)
    return sens[used].reshape(-1, sens.shape[2])


#: answers of :func:`core_start` and :func:`refit_start` already found (settling edges asks again
#: of a flight that did not move, a round that did not change the body asks again of them all)
_CORES = Store(max_bytes=16 * 2 ** 20)
_STARTS = Store(max_bytes=16 * 2 ** 20)


def _flight_inputs(rec, f, w0, inertia, drag_model, drag) -> tuple:
    """The exact inputs a flight's own fit reads: its samples (the stretch ``f`` of ``rec``
    alone), the start and the body."""
    return (rec.t[f.i0:f.i1], rec.w[f.i0:f.i1], rec.saturated[f.i0:f.i1], np.asarray(w0), np.asarray(inertia),
            drag_model, None if drag is None else np.asarray(drag))


def core_start(rec, f, w0, inertia, drag_model, drag) -> tuple[np.ndarray, float]:
    """(rate at the flight's first stamp, rms) of the flight's core, EDGE_MARGIN_S inside its
    edges, fitted alone and integrated back to the first stamp: a hand's ramp or a catch still
    inside the flight then stands out against the model instead of bending it. A function of
    the flight's own samples, start and body: asked again, the answer already found."""
    return _CORES.get(_flight_inputs(rec, f, w0, inertia, drag_model, drag),
                      lambda: _core_start(rec, f, w0, inertia, drag_model, drag))


def _core_start(rec, f, w0, inertia, drag_model, drag) -> tuple[np.ndarray, float]:
    """:func:`core_start` found."""
    t = rec.t
    i0c = int(np.searchsorted(t, t[f.i0] + EDGE_MARGIN_S))
    i1c = int(np.searchsorted(t, t[f.i1 - 1] - EDGE_MARGIN_S, "right"))
    if i1c - i0c < CORE_MIN_SAMPLES or (~rec.saturated[i0c:i1c]).sum() < CORE_MIN_SAMPLES:
        model = _flight_model(rec, f, w0, inertia, drag_model, drag)
        used = ~rec.saturated[f.i0:f.i1]
        dev = (model - rec.w[f.i0:f.i1])[used]
        return w0, float(np.sqrt(np.mean(np.sum(dev * dev, axis=1))))
    core = fl.Flight(f.recording, i0c, i1c)
    guess = simulate_rates([t[i0c]], t[f.i0], w0, inertia, drag_model, drag)[0]
    wc = refit_start(rec, core, guess, inertia, drag_model, drag)
    model = _flight_model(rec, core, wc, inertia, drag_model, drag)
    used = ~rec.saturated[i0c:i1c]
    dev = (model - rec.w[i0c:i1c])[used]
    back = simulate_rates([t[f.i0]], t[i0c], wc, inertia, drag_model, drag)[0]
    return back, float(np.sqrt(np.mean(np.sum(dev * dev, axis=1))))


def refit_start(rec, f, w0, inertia, drag_model, drag):
    """The flight's initial rate fitted alone, the shared parameters held (asked again, the
    answer already found)."""
    return _STARTS.get(_flight_inputs(rec, f, w0, inertia, drag_model, drag),
                       lambda: _refit_start(rec, f, w0, inertia, drag_model, drag))


def _refit_start(rec, f, w0, inertia, drag_model, drag):
    """:func:`refit_start` found."""
    used = ~rec.saturated[f.i0:f.i1]
    measured = rec.w[f.i0:f.i1]
    w0 = np.asarray(w0, dtype=float)
    if not np.all(np.isfinite(w0)):  # a start integrated through a body that blew up: the measured rate
        w0 = start_rate(rec, f.i0, f.i1)
    return initial_rate(rec.t[f.i0:f.i1], measured, used, w0, inertia, drag_model, drag)


def settle_edges(recordings, flights, w0s, inertia, drag_model, drag, windows, cancel, anchors=None):
    """(flights, initial rates, anchors) after moving edges and refitting starts until nothing
    moves. ``anchors`` are the flights as the torque residual found them (default: ``flights``):
    each edge stays within reach of its anchor's (see :func:`~app.throws.fitting.flights.refine_edges`)."""
    anchors = list(flights) if anchors is None else list(anchors)
    for _ in range(EDGE_PASSES):
        if cancel is not None and cancel():
            raise FitCancelled()
        moved, changed = [], False
        for f, w0, anchor in zip(flights, w0s, anchors):
            rec = recordings[f.recording]
            w_edge, rms = core_start(rec, f, w0, inertia, drag_model, drag)
            g = fl.refine_edges(rec, f, w_edge, inertia, drag_model, drag, rms, windows, anchor)
            if rec.t[g.i1 - 1] - rec.t[g.i0] < fl.MIN_FLIGHT_S:
                g = f  # too short once trimmed: keep the residual's edges (the fit judges it)
            if g != f:
                changed = True
                start = w_edge if g.i0 == f.i0 else simulate_rates([rec.t[g.i0]], rec.t[f.i0], w_edge, inertia,
                                                                   drag_model, drag)[0]
                w0 = refit_start(rec, g, start, inertia, drag_model, drag)
            moved.append((g, w0, anchor))
        merged = merge(recordings, [g for g, _, _ in moved])
        if len(merged) != len(moved):  # two flights grew into one: it starts where the first did
            firsts = {(g.recording, g.i0): (w, a) for g, w, a in moved}
            joined = []
            for g in merged:
                w, a = firsts[(g.recording, g.i0)]
                last = max((m for m in moved if m[0].recording == g.recording and g.i0 <= m[0].i0 < g.i1),
                           key=lambda m: m[2].i1)[2]
                joined.append((g, refit_start(recordings[g.recording], g, w, inertia, drag_model, drag),
                               fl.Flight(g.recording, a.i0, max(a.i1, last.i1))))
            moved = joined
        flights, w0s, anchors = [m[0] for m in moved], [m[1] for m in moved], [m[2] for m in moved]
        if not changed:
            break
    return flights, w0s, anchors


def cut_edge(rec: Recording, f) -> str | None:
    """"start" or "end" when the recording (or its segment) begins or ends inside flight
    ``f``: its first or last sample is the segment's and still fast. None otherwise."""
    lo, hi = next(((a, b) for a, b in rec.segment_bounds() if a <= f.i0 < b), (0, len(rec.t)))
    fast = fl.usable_rate(rec.w[[lo, hi - 1]])
    if f.i0 <= lo + 1 and fast[0]:
        return "start"
    if f.i1 >= hi - 1 and fast[1]:
        return "end"
    return None
