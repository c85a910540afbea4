"""The steps of a throw fit that cannot be fooled silently: each flight alone, a robust consensus, outliers out.

Real sessions hold flights a joint least-squares fit would bend itself around: a still phone's
recording taken for a flight, a throw of another object, a bounce. So (:class:`JointFit`):

1. each flight is fitted alone (its own ratios, drag and launch rate, over a growing window,
   then all of it);
2. the element-wise median of their bodies (a robust consensus) starts the joint fit; where
   the flights' own ratios disagree, a few of them are tried as starts too, on the first
   STAGED_HORIZONS[0] s of every flight, and the lowest cost wins;
3. the joint fit uses a robust loss (soft L1: residuals beyond a few times the noise weigh
   less), grown over STAGED_HORIZONS;
4. a flight whose rms / |omega0| under the joint body is over OUTLIER_FACTOR times the
   median of the others' (and above OUTLIER_FLOOR) is excluded, worst first, and the rest
   refitted; the user may put it back;
5. edges settle where the fitted body stops matching (:func:`.edges.settle_edges`), and
   flights the fitted body's torque residual finds that the first guess missed are added.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...physics.errors import ParameterError
from . import flights as fl
from .edges import flight_edges, refit_start, merge, settle_edges, start_rate
# the outlier rule lives with the solution it reads (the edges' turned body applies it too)
from .solver import OUTLIER_FACTOR, OUTLIER_FLOOR, OUTLIER_ROUNDS, Solution, flight_rms_relative, solve

#: the joint fit grows over these horizons (s from each flight's start; None: whole flights)
STAGED_HORIZONS = (0.3, 0.6, None)
#: each flight alone grows over these
SINGLE_HORIZONS = (0.3, None)
#: at most this many flights are fitted alone for the consensus (evenly chosen)
SINGLE_FITS_MAX = 24
#: the robust loss and its scale: f_scale = ROBUST_SCALE x the flights' own rms per
#: component, at least ROBUST_FLOOR rad/s (twice a phone gyroscope's noise)
ROBUST_LOSS = "soft_l1"
ROBUST_SCALE = 3.0
ROBUST_FLOOR = 0.02
#: flights disagree when the median absolute deviation of their own ratios exceeds this;
#: then up to CANDIDATES_MAX of their bodies are tried as starts
DISAGREEMENT = 0.02
CANDIDATES_MAX = 4
#: a flight found again with the consensus body is replaced by the longest run of small
#: residual over it when that run lasts at least this share of it; else it is judged whole
KEEP_SHARE = 0.5
#: a flight fitted alone looks this far (s) beyond its edges for more samples its own body explains
GROW_S = 1.0
#: most rounds of giving the flights the fitted body's edges and refitting
FINAL_ROUNDS = 3


class JointFit:
    """The state of one fit: every flight found (with the anchor the torque residual gave
    it), which are left out and why, and the current joint solution."""

    def __init__(self, recordings, flights, drag_model, axes_mode, windows, cancel, dws=None):
        self.recordings = recordings
        self.dws = dws
        self.flights = list(flights)
        self.anchors = list(flights)
        self.w0s = [start_rate(recordings[f.recording], f.i0, f.i1) for f in flights]
        self.drag_model, self.axes_mode = drag_model, axes_mode
        self.windows, self.cancel = windows, cancel
        self.left_out: dict[int, str] = {}
        self.keep: set[int] = set()
        self.sol: Solution | None = None
        self.f_scale = ROBUST_FLOOR

    # -------------------------------------------------------------- bookkeeping

    def active(self) -> list[int]:
        return [i for i in range(len(self.flights)) if i not in self.left_out]

    def active_count(self) -> int:
        return len(self.active())

    def active_flights(self):
        return [self.flights[i] for i in self.active()]

    def excluded_flights(self):
        return [(self.flights[i], reason) for i, reason in sorted(self.left_out.items())]

    def _solve(self, inertia, drag, horizon=None, w0s=None):
        idx = self.active()
        w0s = np.array([self.w0s[i] for i in idx]) if w0s is None else w0s
        return solve(self.recordings, [self.flights[i] for i in idx], inertia, self.drag_model, drag, self.axes_mode,
                     w0s, self.cancel, horizon, loss=ROBUST_LOSS, f_scale=self.f_scale)

    def _take(self, sol: Solution):
        self.sol = sol
        for i, w0 in zip(self.active(), sol.w0s):
            self.w0s[i] = w0

    # -------------------------------------------------------------- 1-2: each flight alone, the consensus

    def start(self, inertia, drag):
        """Fit flights alone; set the robust scale and the joint fit's start."""
        idx = self.active()
        if len(idx) > SINGLE_FITS_MAX:
            idx = [idx[k] for k in np.linspace(0, len(idx) - 1, SINGLE_FITS_MAX).astype(int)]
        bodies, scales = [], []
        for i in idx:
            body = self._single(i, inertia, drag)
            if body is not None:
                bodies.append(body[:2])
                scales.append(body[2])
        if scales:
            self.f_scale = max(ROBUST_FLOOR, ROBUST_SCALE * float(np.median(scales)))
        # the first guess from the rates alone starts the joint fit only when no flight could be
        # fitted alone: degenerate (a moment clamped at 2% of the largest) it won on a short horizon
        self.candidates = candidate_starts(bodies) if bodies else [(inertia, drag)]

    def _single(self, i, inertia, drag):
        """(diagonal of J over its largest, drag over it, rms per component) of flight i alone."""
        f = self.flights[i]
        w0s = np.array([self.w0s[i]])
        try:
            sol = None
            for horizon in SINGLE_HORIZONS:
                sol = solve(self.recordings, [f], inertia, self.drag_model, drag, "sensor", w0s, self.cancel, horizon,
                            bounded=False)
                inertia, drag = sol.body()
                w0s = sol.w0s
        except ParameterError:
            return None
        j = np.diag(inertia)
        if not np.all(np.isfinite(j)) or j.max() <= 0:
            return None
        self._grow(i, inertia, drag)
        n = max(len(sol.weighted), 1)
        return j / j.max(), np.asarray(drag) / j.max(), float(np.sqrt(2 * sol.cost / n))

    def _grow(self, i, inertia, drag):
        """Extend flight i to the run of small residual its own body finds over it, when longer
        (a throw of another object, of which the first guess found only a part: judged whole)."""
        f = self.flights[i]
        rec = self.recordings[f.recording]
        a = int(np.searchsorted(rec.t, rec.t[f.i0] - GROW_S))
        b = int(np.searchsorted(rec.t, rec.t[f.i1 - 1] + GROW_S, "right"))
        dw = self.dws[f.recording][a:b] if self.dws is not None else fl.smooth_and_derivative(rec.t, rec.w)[1][a:b]
        part = dataclasses.replace(rec, t=rec.t[a:b], w=rec.w[a:b], segment=rec.segment[a:b],
                                   saturated=rec.saturated[a:b])
        for g in fl.detect(part, f.recording, dw, inertia, self.drag_model, np.maximum(drag, 0.0), self.windows):
            if g.i0 + a <= f.i0 and g.i1 + a >= f.i1 and (g.i0 + a, g.i1 + a) != (f.i0, f.i1):
                grown = fl.Flight(f.recording, g.i0 + a, g.i1 + a)
                self.flights[i] = self.anchors[i] = grown
                self.w0s[i] = start_rate(rec, grown.i0, grown.i1)
                return

    # -------------------------------------------------------------- 3: the robust joint fit

    def joint(self):
        """Try each candidate start on the first horizon; grow the best to whole flights."""
        best = None
        for inertia, drag in self.candidates:
            try:
                sol = self._solve(inertia, drag, STAGED_HORIZONS[0])
            except ParameterError:
                continue
            if best is None or sol.cost < best.cost:
                best = sol
        if best is None:
            raise ParameterError("recording", ", ".join(r.name for r in self.recordings),
                                 "hold enough unclipped samples in flight to fit")
        for horizon in STAGED_HORIZONS[1:]:
            inertia, drag = best.body()
            best = self._solve(inertia, drag, horizon, best.w0s)
        self._take(best)

    def refit_with_axes(self, axes_mode: str):
        """Fit the active flights again, whole, from the current body with ``axes_mode`` (the
        flights and their edges as they are: ``--axes sensor`` fits the flights found with the
        axes free to turn)."""
        inertia, drag = self.sol.body()
        self.axes_mode = axes_mode
        self._take(self._solve(inertia, drag, None, np.array([self.w0s[i] for i in self.active()])))

    # -------------------------------------------------------------- 4: outliers

    def exclude_outliers(self) -> bool:
        """Exclude, worst first, flights far off the others (not those the user kept); True
        if any was."""
        excluded = False
        for _ in range(OUTLIER_ROUNDS):
            idx = self.active()
            if len(idx) < 2:
                return excluded
            rel = flight_rms_relative(self.sol)
            worst = None
            for k, i in enumerate(idx):
                if i in self.keep:
                    continue
                others = float(np.median(np.delete(rel, k)))
                if rel[k] > OUTLIER_FLOOR and rel[k] > OUTLIER_FACTOR * others:
                    if worst is None or rel[k] / others > worst[1]:
                        worst = (i, rel[k] / others, rel[k], others)
            if worst is None:
                return excluded
            excluded = True
            i, factor, value, others = worst
            self.left_out[i] = (f"rms/‖ω0‖ {value:.4f} against the other flights' median {others:.4f} ({factor:.0f}x, "
                                f"over {OUTLIER_FACTOR:g}x): not a free flight of this body")
            inertia, drag = self.sol.body()
            self._take(self._solve(inertia, drag))
        return excluded

    # -------------------------------------------------------------- 5: edges, flights found with the fitted body

    def settle(self) -> bool:
        """Move the active flights' edges; refit if any moved. True if something moved."""
        idx = self.active()
        inertia, drag = self.sol.body()
        flights = [self.flights[i] for i in idx]
        moved, w0s, anchors = settle_edges(self.recordings, flights, [self.w0s[i] for i in idx], inertia,
                                           self.drag_model, drag, self.windows, self.cancel,
                                           [self.anchors[i] for i in idx])
        if moved == flights:
            return False
        out = [(self.flights[i], self.w0s[i], self.anchors[i], reason) for i, reason in self.left_out.items()]
        kept_times = [(self.flights[i].recording, self.flights[i].i0, self.flights[i].i1) for i in self.keep]
        rows = [(g, w, a, None) for g, w, a in zip(moved, w0s, anchors)] + out
        self._reset(rows, kept_times)
        self._take(self._solve(inertia, drag, None, np.array([self.w0s[i] for i in self.active()])))
        return True

    def _reset(self, rows, kept_times):
        rows.sort(key=lambda r: (r[0].recording, r[0].i0))
        self.flights = [r[0] for r in rows]
        self.w0s = [r[1] for r in rows]
        self.anchors = [r[2] for r in rows]
        self.left_out = {k: r[3] for k, r in enumerate(rows) if r[3] is not None}
        self.keep = {k for k, r in enumerate(rows)
                     if any(rec == r[0].recording and i0 < r[0].i1 and r[0].i0 < i1 for rec, i0, i1 in kept_times)}

    def final_edges(self) -> bool:
        """Give every flight fitted THE edges of the fitted body (:func:`.edges.flight_edges`, the
        body as a FIT.toml holds it: drag clamped at 0), refitting until they stay (at most
        FINAL_ROUNDS); an excluded flight keeps the edges it was found with (the body does not
        describe it: its runs of small residual are pieces of it). True if any moved."""
        moved = False
        for _ in range(FINAL_ROUNDS):
            inertia, drag = self.sol.body()
            drag = np.maximum(drag, 0.0)
            rows, changed = [], False
            for i, f in enumerate(self.flights):
                if i in self.left_out:  # not a free flight of this body: its edges are the ones found
                    rows.append((f, self.w0s[i], self.anchors[i], self.left_out[i]))
                    continue
                g, w0 = flight_edges(self.recordings[f.recording], f, inertia, self.drag_model, drag, self.windows)
                if any(r[0].recording == g.recording and r[0].i0 < g.i1 and g.i0 < r[0].i1 for r in rows):
                    g, w0 = f, self.w0s[i]  # another flight's edges already hold it: leave it be
                changed |= g != f
                rows.append((g, w0 if g != f else self.w0s[i], g if g != f else self.anchors[i], self.left_out.get(i)))
            if not changed:
                break
            moved = True
            kept_times = [(self.flights[i].recording, self.flights[i].i0, self.flights[i].i1) for i in self.keep]
            self._reset(rows, kept_times)
            inertia, drag = self.sol.body()
            self._take(self._solve(inertia, drag, None, np.array([self.w0s[i] for i in self.active()])))
        return moved

    def add_found(self) -> bool:
        """Add flights the fitted body's torque residual finds apart from every known one;
        a known flight's anchor becomes the residual's run over it. True if any was added."""
        inertia, drag = self.sol.body()
        added = self._redetect(inertia, drag, replace=False)
        if added:
            self._take(self._solve(inertia, drag, None, np.array([self.w0s[i] for i in self.active()])))
        return added

    def redetect_with_consensus(self):
        """Find the flights again with the consensus body (a first guess from the rates alone
        can take a hand's ramp or a catch into a flight, which the consensus body does not)."""
        inertia, drag = self.candidates[0]
        self._redetect(inertia, drag, replace=True)

    def _redetect(self, inertia, drag, replace: bool) -> bool:
        """Runs of small torque residual with a body: a known flight's anchor becomes the
        longest run over it (``replace``: the flight too); runs apart from every known flight
        are added. True if any was added."""
        added = []
        for k, rec in enumerate(self.recordings):
            dw = self.dws[k] if self.dws is not None else fl.smooth_and_derivative(rec.t, rec.w)[1]
            runs = {}
            for g in fl.detect(rec, k, dw, inertia, self.drag_model, drag, self.windows):
                over = [i for i, f in enumerate(self.flights) if f.recording == k and g.i0 < f.i1 and f.i0 < g.i1]
                if not over:
                    added.append(g)
                for i in over:
                    if i not in self.left_out and (i not in runs or g.i1 - g.i0 > runs[i].i1 - runs[i].i0):
                        runs[i] = g
            for i, g in runs.items():
                f = self.flights[i]
                if replace and rec.t[g.i1 - 1] - rec.t[g.i0] < KEEP_SHARE * (rec.t[f.i1 - 1] - rec.t[f.i0]):
                    continue  # the body explains little of it: judged whole (another object's throw)
                self.anchors[i] = g
                if replace:
                    rec_i = self.recordings[g.recording]
                    self.flights[i] = g
                    self.w0s[i] = start_rate(rec_i, g.i0, g.i1)
        if replace:  # two flights that became one run
            seen, rows = set(), []
            for i, (f, w, a) in enumerate(zip(self.flights, self.w0s, self.anchors)):
                if (f.recording, f.i0) not in seen:
                    seen.add((f.recording, f.i0))
                    rows.append((f, w, a, self.left_out.get(i)))
            kept_times = [(self.flights[i].recording, self.flights[i].i0, self.flights[i].i1) for i in self.keep]
            self._reset(rows, kept_times)
        if not added:
            return False
        rows = [(f, w, a, self.left_out.get(i)) for i, (f, w, a) in enumerate(zip(self.flights, self.w0s, self.anchors))]
        for g in merge(self.recordings, added):
            rec = self.recordings[g.recording]
            rows.append((g, refit_start(rec, g, start_rate(rec, g.i0, g.i1), inertia, self.drag_model, drag), g, None))
        kept_times = [(self.flights[i].recording, self.flights[i].i0, self.flights[i].i1) for i in self.keep]
        self._reset(rows, kept_times)
        return True


def candidate_starts(bodies) -> list[tuple[np.ndarray, np.ndarray]]:
    """Starts for the joint fit from flights' own (J diagonal, drag): their element-wise
    median first; where they disagree, a few of them spread over their range too. Their axes
    are the sensor's (``axes = "fit"`` then turns them: a mounting is off by a few degrees,
    while a first guess from the rates alone may be off by anything)."""
    js = np.array([b[0] for b in bodies])
    drags = np.array([b[1] for b in bodies])

    def tensor(j):
        return np.diag(j)

    median_j, median_drag = np.median(js, axis=0), np.maximum(np.median(drags, axis=0), 0.0)
    out = [(tensor(median_j), median_drag)]
    spread = np.median(np.abs(js - median_j), axis=0)
    if len(bodies) >= 3 and np.max(spread) > DISAGREEMENT:
        axis = int(np.argmax(spread))
        order = np.argsort(js[:, axis])
        picks = order[np.linspace(0, len(order) - 1, CANDIDATES_MAX + 2).astype(int)[1:-1]]
        out += [(tensor(js[k]), np.maximum(drags[k], 0.0)) for k in dict.fromkeys(picks.tolist())]
    return out
