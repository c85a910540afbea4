"""The live stream's flight finder and fitter: episodes past each segment's settled point, a joint
fit of every flight so far, warm-started from the last fit, as each flight lands.

An *episode* is a stretch of fast samples (|w| >= MIN_RATE) that the phone has left for at
least QUIET_S (or whose segment has ended): a throw with its catch. Only episodes past the last
settled point are searched, and the joint fit runs only when a flight lands, from the last
fit's body, so the work per poll does not grow with the session. The first flights are fitted
without drag: a single flight leaves drag and ratios entangled, and such fits crawled for
seconds or broke; from MIN_FLIGHTS_FOR_DRAG flights on the chosen drag model is fitted.
"""

from __future__ import annotations

import numpy as np

from ..physics.errors import ParameterError
from . import flights as fl
from .edges import find_flights, settle_edges
from .fit import FitResult, fit_flights, flip_times
from .predict import predict
from .live import finite_or_none
from .recording import Recording, saturated_samples

#: the phone must stay below MIN_RATE this long (s) after a throw before its episode is searched
QUIET_S = 0.2
#: an episode still going after this long (s) is searched up to HOLD_S before its end
MAX_EPISODE_S = 4.0
HOLD_S = 0.6
#: samples this far (s) before an episode's first fast sample and after its last join the search
PAD_BEFORE_S = 0.5
PAD_AFTER_S = 0.3
#: fewest flights fitted with drag (fewer: no drag)
MIN_FLIGHTS_FOR_DRAG = 3


def fixed_body(path, drag_model: str) -> FitResult:
    """A fit's body from a scenario (``tumble fit --out FIT.toml``): its inertia in the sensor
    frame over the largest moment, and its drag (the file's model, else ``drag_model`` none)."""
    from ..scenario import load

    scenario = load(str(path))
    inertia = np.asarray(scenario.body.build().inertia, dtype=float)
    moments, axes = np.linalg.eigh(0.5 * (inertia + inertia.T))
    top = float(moments[-1])
    model, drag = "none", np.zeros(3)
    for load_spec in scenario.loads:
        if load_spec.kind == "drag":
            model, drag = load_spec.model, np.asarray(load_spec.coefficients, dtype=float) / top
    zeros = np.zeros(3)
    return FitResult(model, "sensor", moments / top, zeros, axes, drag, zeros, 0.0, [], 0.0, (str(path),))


class LiveFitter:
    """Flights found incrementally in growing segments, fitted jointly as each lands.

    ``fixed``: a body held fixed (``--fit``); else the ratios are fitted to every flight so far.
    """

    def __init__(self, segments: list, drag_model: str = "quadratic", fixed: FitResult | None = None):
        self.drag_model = fixed.drag_model if fixed is not None else drag_model
        self.fixed = fixed
        self.result: FitResult | None = fixed
        self.segments = segments                 # live.Segment objects, appended to by the session
        self.flights: list[fl.Flight] = []       # every flight so far (edges as last settled)
        self.events: list[dict] = []             # every flight event so far
        self.fits = 0
        self._guess = None                       # a first body from the rates alone

    def recordings(self) -> list[Recording]:
        return [s.recording(f"segment {k}") for k, s in enumerate(self.segments)]

    # ------------------------------------------------------------------ finding

    def _episodes(self, k: int):
        """(lo, hi, settle_to) sample ranges of the episodes of segment ``k`` ready to search."""
        seg = self.segments[k]
        t, w = seg.t, seg.w
        if seg.n - seg.settled < 3:
            return []
        fast = np.flatnonzero(np.linalg.norm(w[seg.settled:], axis=1) >= fl.MIN_RATE) + seg.settled
        if not len(fast):
            seg.settled = max(seg.settled, seg.n - 1)
            return []
        breaks = np.flatnonzero(np.diff(t[fast]) > QUIET_S) + 1
        out = []
        for group in np.split(fast, breaks):
            a, b = int(group[0]), int(group[-1])
            lo = int(np.searchsorted(t, t[a] - PAD_BEFORE_S))
            if t[-1] - t[b] >= QUIET_S or seg.closed:
                hi = int(np.searchsorted(t, t[b] + PAD_AFTER_S, side="right"))
                out.append((lo, hi, b + 1))
            elif t[-1] - t[a] > MAX_EPISODE_S:
                hi = int(np.searchsorted(t, t[-1] - HOLD_S))
                out.append((lo, hi, None))
                break
            else:
                break
        return out

    def _candidates(self, k: int, lo: int, hi: int) -> list[fl.Flight]:
        seg = self.segments[k]
        rec = Recording(f"segment {k}", seg.t[lo:hi].copy(), seg.w[lo:hi].copy(), np.zeros(hi - lo, dtype=np.int64),
                        saturated_samples(seg.w[lo:hi]))
        if len(rec.t) < fl.DERIVATIVE_MIN_SAMPLES + 2:
            return []
        try:
            if self.result is not None:
                _, dw = fl.smooth_and_derivative(rec.t, rec.w)
                found = fl.detect(rec, k, dw, self.result.inertia, self.result.drag_model, self.result.drag)
            else:
                found, inertia, drag = find_flights([rec], None, self.drag_model)
                self._guess = (inertia, drag)
        except ParameterError:
            return []
        return [fl.Flight(k, lo + f.i0, lo + f.i1) for f in found]

    def _overlaps(self, f: fl.Flight) -> bool:
        return any(g.recording == f.recording and f.i0 < g.i1 and g.i0 < f.i1 for g in self.flights)

    # ------------------------------------------------------------------ processing

    def process(self) -> list[dict]:
        """Search the episodes that ended; fit and return one event per new flight."""
        new = []
        for k, seg in enumerate(self.segments):
            for lo, hi, settle_to in self._episodes(k):
                for f in self._candidates(k, lo, hi):
                    if settle_to is None and f.i1 >= hi - 2:
                        continue  # still in the air at the held-back edge
                    if not self._overlaps(f) and not any(f.recording == g.recording and f.i0 < g.i1 and g.i0 < f.i1
                                                         for g in new):
                        new.append(f)
                if settle_to is None:
                    ends = [f.i1 for f in new if f.recording == k]
                    settle_to = max(ends) if ends else max(seg.settled, int(np.searchsorted(seg.t, seg.t[hi - 1] - 1.0)))
                seg.settled = max(seg.settled, settle_to)
        if not new:
            return []
        events = self._fit_fixed(new) if self.fixed is not None else self._fit_joint(new)
        self.events += events
        return events

    def _fit_joint(self, new: list[fl.Flight]) -> list[dict]:
        recordings = self.recordings()
        flights = sorted(self.flights + new, key=lambda f: (f.recording, f.i0))
        model = self.drag_model if len(flights) >= MIN_FLIGHTS_FOR_DRAG else "none"
        if self.result is not None:
            inertia = self.result.inertia
            drag = self.result.drag if self.result.drag_model == model else np.zeros(3)
        else:
            inertia, drag = self._guess[0], np.zeros(3)
        try:
            result = fit_flights(recordings, flights, inertia, drag, model)
        except ParameterError as err:
            return [self._excluded_event(recordings, f, str(err)) for f in new]
        except (ArithmeticError, ValueError, np.linalg.LinAlgError) as err:  # a fit that broke down
            return [self._excluded_event(recordings, f, f"the fit failed ({err.__class__.__name__})") for f in new]
        self.result, self.fits = result, self.fits + 1
        self.flights = [fl.Flight(ff.rec_index, ff.i0, ff.i1) for ff in result.flights]
        events = []
        for ff in result.flights:
            if any(f.recording == ff.rec_index and f.i0 < ff.i1 and ff.i0 < f.i1 for f in new):
                events.append(self._event(result, ff.rec_index, ff.t, ff.w_measured, ff.used, ff.omega0,
                                          ff.flip_time_measured))
        return events

    def _fit_fixed(self, new: list[fl.Flight]) -> list[dict]:
        body = self.fixed
        recordings = self.recordings()
        w0s = [recordings[f.recording].w[f.i0] for f in new]
        try:
            flights, w0s = settle_edges(recordings, new, w0s, body.inertia, body.drag_model, body.drag, None, None)
        except ParameterError as err:
            return [self._excluded_event(recordings, f, str(err)) for f in new]
        events = []
        for f, w0 in zip(flights, w0s):
            rec = recordings[f.recording]
            t, w, used = rec.t[f.i0:f.i1], rec.w[f.i0:f.i1], ~rec.saturated[f.i0:f.i1]
            measured, _ = flip_times(body.inertia, body.axes, body.drag_model, body.drag, t, w, used, w0)
            self.flights.append(f)
            events.append(self._event(body, f.recording, t, w, used, w0, measured))
        return events

    def _event(self, result: FitResult, segment, t, w, used, omega0, flip_measured) -> dict:
        predicted = None
        if used.sum() > fl.DERIVATIVE_MIN_SAMPLES:
            predicted = predict(result, t, w, used).flip_predicted
        return {"event": "flight", "segment": int(segment), "start": float(t[0]), "end": float(t[-1]),
                "omega0": [float(x) for x in omega0], "ratios": [float(x) for x in result.moments],
                "ratios_std": finite_or_none(result.moments_std),
                "flights_used": len(result.flights) if self.fixed is None else len(self.flights),
                "flip_time_measured": flip_measured, "flip_time_predicted": predicted,
                "excluded": False, "reason": None}

    def _excluded_event(self, recordings, f: fl.Flight, reason: str) -> dict:
        t = recordings[f.recording].t
        ratios = self.result.moments if self.result is not None else None
        return {"event": "flight", "segment": int(f.recording), "start": float(t[f.i0]), "end": float(t[f.i1 - 1]),
                "omega0": [float(x) for x in recordings[f.recording].w[f.i0]],
                "ratios": None if ratios is None else [float(x) for x in ratios],
                "ratios_std": None if self.result is None else finite_or_none(self.result.moments_std),
                "flights_used": len(self.flights), "flip_time_measured": None, "flip_time_predicted": None,
                "excluded": True, "reason": reason}
