"""The live stream's flight finder and fitter: episodes past each segment's settled point, each
flight reported as soon as it is caught, a joint fit of every flight so far, warm-started from
the last fit, at the next search.

An *episode* is a stretch of fast samples (|w| >= MIN_RATE): a throw with its catch. It is
searched once the phone has left it for QUIET_S (or its segment has ended), and while it goes
on (a bounce, a hand that moves on) up to HOLD_S before the newest sample: a flight is reported
HOLD_S after its catch, whatever follows it. Once a body is known, a new flight is reported at
once with that body's edges (:func:`~app.throws.fitting.edges.flight_edges`, the one edges
function of every command); the joint fit runs at the next search, from the last fit's body,
and reports again (same ``number``, ``refined`` true) the flights whose edges, measured flip
or exclusion it changed and those it fitted for the first time: the last report of a flight
counts (:func:`last_reports`). Only episodes past the last settled point are searched, so the
search per poll does not grow with the session. The first flights are fitted without drag: a
single flight leaves drag and ratios entangled, and such fits crawled for seconds or broke;
from MIN_FLIGHTS_FOR_DRAG flights on the chosen drag model is fitted.
"""

from __future__ import annotations

import numpy as np

from ...physics.errors import ParameterError
from ..fitting import flights as fl
from ..fitting.edges import find_flights, flight_edges
from ..fitting import consensus as cs
from ..fitting.fit import FitResult, fit_flights, fit_recordings, joint_result, measured_flip
from ..fitting.predict import DEFAULT_HORIZON, DEFAULT_LEAD, FittedBody, predict_span
from ..recordings.reader import Recording, saturated_samples

#: the phone must stay below MIN_RATE this long (s) after a throw before its episode is searched
QUIET_S = 0.15
#: an episode still going is searched up to HOLD_S (s) before the data's end: a flight's
#: edges reach EDGE_REACH_S past its catch and the differentiator half its window more
HOLD_S = 0.3
#: before the first fit, the flights of every segment are looked for again once this many
#: samples more came in (half a second of a phone's; the rates alone: a search of the whole session)
FIRST_EVERY_SAMPLES = 50
#: samples this far (s) before an episode's first fast sample and after its last join the search
PAD_BEFORE_S = 0.5
PAD_AFTER_S = 0.3
#: fewest flights fitted with drag (fewer: no drag)
MIN_FLIGHTS_FOR_DRAG = 3
#: a throw in the air is looked for in this much (s) of the newest samples
IN_AIR_WINDOW_S = 1.5
#: before the first fit, flights are looked for in at most this many of each segment's newest
#: samples (10 minutes at 100 Hz): the search's cost does not grow with the session
FIRST_SEARCH_SAMPLES = 60_000


def _steady_lately(t, w) -> bool:
    """The last two STEADY_BLOCK_S of samples all fast and steady (see flights.steady_spin):
    an episode that goes on so is held back until it is known whether it is a steady spin."""
    lo = int(np.searchsorted(t, t[-1] - 2 * fl.STEADY_BLOCK_S))
    speed = np.linalg.norm(w[lo:], axis=1)
    if len(speed) < 2 * fl.STEADY_SMOOTH or speed.min() < fl.MIN_RATE:
        return False
    smooth = np.convolve(speed, np.ones(fl.STEADY_SMOOTH) / fl.STEADY_SMOOTH, mode="valid")
    return float(smooth.max() - smooth.min()) <= fl.STEADY_SPREAD * float(smooth.mean())


def fixed_body(path) -> FittedBody:
    """The body and drag of a scenario (``tumble fit --out FIT.toml``), held fixed."""
    from ...scenario import load

    return FittedBody.of(load(str(path)), "--fit", str(path))


def ratios_of(body: FittedBody) -> np.ndarray:
    """A body's principal moments over the largest, ascending."""
    moments = np.linalg.eigvalsh(0.5 * (body.inertia + body.inertia.T))
    return moments / moments[-1]


def body_of(result: FitResult) -> FittedBody:
    return FittedBody(result.inertia, result.axes, result.drag_model, result.drag)


class LiveFitter:
    """Flights found incrementally in growing segments, fitted jointly as each lands.

    ``fixed``: a body held fixed (``--fit``, a :class:`FittedBody`); else the ratios are fitted
    to every flight so far. Runs in the session's thread only.
    """

    def __init__(self, drag_model: str = "quadratic", fixed: FittedBody | None = None):
        self.drag_model = drag_model
        self.fixed = fixed
        self.result: FitResult | None = None     # the last joint fit
        self.body: FittedBody | None = fixed     # the body that finds flights: fixed, or the last fit's
        self.segments: list = []                 # live.SegmentView of each segment, as of the last search
        self.settled: list[int] = []             # per segment: samples before this index have been searched
        self.flights: list[fl.Flight] = []       # every flight so far, fitted or excluded (edges as settled)
        self.events: list[dict] = []             # every flight event so far
        self.fits = 0
        self._guess = None                       # a first body from the rates alone
        self.exclude: tuple = ()                 # (segment, a time inside) of flights the user left out
        self.include: tuple = ()                 # ... and of those the fit left out that the user put back
        self._refined: list[dict] = []           # events of a full fit's refined flights, not emitted yet
        self._fit_due = False                    # flights were reported with the last body: fit them all
        self._unfitted: set = set()              # numbers of those flights: the fit reports them again
        self._first_tried = -FIRST_EVERY_SAMPLES  # samples received at the last search for the first flights

    @property
    def ratios(self):
        """(ratios, standard errors) of the body now, or (None, None)."""
        if self.fixed is not None:
            return ratios_of(self.fixed), np.zeros(3)
        if self.result is not None:
            return self.result.moments, self.result.moments_std
        return None, None

    def recordings(self) -> list[Recording]:
        return [s.recording(f"segment {k}") for k, s in enumerate(self.segments)]

    # ------------------------------------------------------------------ finding

    def _episodes(self, k: int):
        """(lo, hi, settle_to) sample ranges of the episodes of segment ``k`` ready to search;
        settle_to None: an episode still going, searched up to HOLD_S before the data's end."""
        seg, settled = self.segments[k], self.settled[k]
        t, w = seg.t, seg.w
        if seg.n - settled < 3:
            return []
        fast = np.flatnonzero(np.linalg.norm(w[settled:], axis=1) >= fl.MIN_RATE) + settled
        if not len(fast):
            self.settled[k] = max(settled, seg.n - 1)
            return []
        breaks = np.flatnonzero(np.diff(t[fast]) > QUIET_S) + 1
        out = []
        for group in np.split(fast, breaks):
            a, b = int(group[0]), int(group[-1])
            lo = int(np.searchsorted(t, t[a] - PAD_BEFORE_S))
            if t[-1] - t[b] >= QUIET_S or seg.closed:
                if self._steady_spin(seg, a, b + 1):  # a turntable that stopped: nothing to search
                    self.settled[k] = max(self.settled[k], b + 1)
                    continue
                hi = int(np.searchsorted(t, t[b] + PAD_AFTER_S, side="right"))
                out.append((lo, hi, b + 1))
            else:
                if self._steady_spin(seg, a, seg.n):  # spinning steadily on: never a flight
                    self.settled[k] = max(self.settled[k], seg.n - 1)
                    break
                if _steady_lately(t, w):  # perhaps a steady spin's start: wait until that is known
                    break
                # still going (a catch's bounce, a hand that moves on): searched up to HOLD_S
                # before the data's end, so a flight is reported HOLD_S after its catch
                hi = int(np.searchsorted(t, t[-1] - HOLD_S))
                if hi - lo > 4 * fl.DERIVATIVE_MIN_SAMPLES:
                    out.append((lo, hi, None))
                break
        return out

    @staticmethod
    def _steady_spin(seg, a: int, b: int) -> bool:
        """Whether samples a..b-1 of a segment belong to a steady spin, judged with the
        samples up to a steady spin's length before them (the search settles a long spin
        a little at a time)."""
        ext = int(np.searchsorted(seg.t, seg.t[a] - fl.STEADY_MIN_S - fl.STEADY_BLOCK_S))
        return bool(fl.steady_spin(seg.t[ext:b], seg.w[ext:b])[a - ext:].any())

    def _candidates(self, k: int, lo: int, hi: int, first_found) -> list[fl.Flight]:
        """Flights of samples lo..hi of segment ``k``: with the body found so far, or (before
        the first fit) those ``first_found`` holds there."""
        if self.body is None:
            return [f for f in first_found if f.recording == k and lo <= f.i0 and f.i1 <= hi]
        seg = self.segments[k]
        rec = Recording(f"segment {k}", seg.t[lo:hi].copy(), seg.w[lo:hi].copy(), np.zeros(hi - lo, dtype=np.int64),
                        saturated_samples(seg.w[lo:hi]))
        if len(rec.t) < fl.DERIVATIVE_MIN_SAMPLES + 2:
            return []
        _, dw = fl.smooth_and_derivative(rec.t, rec.w)
        found = fl.detect(rec, k, dw, self.body.inertia, self.body.drag_model, self.body.drag)
        return [fl.Flight(k, lo + f.i0, lo + f.i1) for f in found]

    def _find_first(self) -> list[fl.Flight]:
        """Before any fit: the flights and first body of every segment so far, found as
        ``tumble fit`` finds them (the rates alone, all recordings together)."""
        recordings = self.recordings()
        enough = [k for k, r in enumerate(recordings) if len(r.t) > 4 * fl.DERIVATIVE_MIN_SAMPLES]
        first = {k: max(0, len(recordings[k].t) - FIRST_SEARCH_SAMPLES) for k in enough}
        recent = [Recording(r.name, r.t[first[k]:], r.w[first[k]:], r.segment[first[k]:], r.saturated[first[k]:])
                  for k, r in ((k, recordings[k]) for k in enough)]
        try:
            found, inertia, drag = find_flights(recent, None, self.drag_model)
        except (ParameterError, ValueError):
            return []
        self._guess = (inertia, drag)
        return [fl.Flight(enough[f.recording], first[enough[f.recording]] + f.i0, first[enough[f.recording]] + f.i1)
                for f in found]

    def _known(self, k: int, i0: int, i1: int, flights) -> bool:
        return any(g.recording == k and i0 < g.i1 and g.i0 < i1 for g in flights)

    def in_air(self, k: int) -> dict | None:
        """The throw in the air now in segment ``k``: its newest samples free under the body
        for at least the prediction's lead. ``{"segment", "start", "flip_time_predicted"}``
        (the flip in s after ``start``, None where it is undefined), or None."""
        if self.body is None or k >= len(self.segments):
            return None
        seg = self.segments[k]
        if seg.n < 4 * fl.DERIVATIVE_MIN_SAMPLES or np.linalg.norm(seg.w[seg.n - 1]) < fl.MIN_RATE:
            return None
        lo = int(np.searchsorted(seg.t, seg.t[-1] - IN_AIR_WINDOW_S))
        rec = Recording(f"segment {k}", seg.t[lo:].copy(), seg.w[lo:].copy(), np.zeros(seg.n - lo, dtype=np.int64),
                        saturated_samples(seg.w[lo:]))
        _, dw = fl.smooth_and_derivative(rec.t, rec.w)
        r = fl.torque_residual(rec.w, dw, self.body.inertia, self.body.drag_model, self.body.drag)
        free = (r < fl.FREE_RESIDUAL) & (np.linalg.norm(rec.w, axis=1) >= fl.MIN_RATE) & ~rec.saturated
        tail = 3  # the newest samples' derivative leans on one side only: a stray one may pass
        if not free[-tail:].any():
            return None
        held = np.flatnonzero(~free[:len(free) - tail])
        start = int(held[-1]) + 1 if len(held) else 0
        if start == 0 or rec.t[-1] - rec.t[start] < DEFAULT_LEAD:
            return None  # no release seen yet, or too little of the flight to predict from
        predicted = predict_span(self.body, rec, start, len(free), DEFAULT_LEAD, DEFAULT_HORIZON)
        return {"segment": k, "start": float(rec.t[start]), "flip_time_predicted": predicted["flip_time_predicted"]}

    # ------------------------------------------------------------------ processing

    def process(self, views: list) -> list[dict]:
        """Search the episodes of ``views`` (live.SegmentView, one per segment) that ended;
        fit and return one event per new flight."""
        self.segments = list(views)
        self.settled += [0] * (len(self.segments) - len(self.settled))
        new = []
        ready = [(k, episode) for k in range(len(self.segments)) for episode in self._episodes(k)]
        first_found = []
        if ready and self.body is None:
            received = sum(v.n for v in self.segments)
            if received - self._first_tried >= FIRST_EVERY_SAMPLES or any(e[2] is not None for _, e in ready):
                self._first_tried = received
                first_found = self._find_first()
        for k, (lo, hi, settle_to) in ready:
            seg = self.segments[k]
            for f in self._candidates(k, lo, hi, first_found):
                if settle_to is None and f.i1 >= hi - 2:
                    continue  # still in the air at the held-back edge
                if not self._known(k, f.i0, f.i1, self.flights) and not self._known(k, f.i0, f.i1, new):
                    new.append(f)
            if settle_to is None:
                ends = [f.i1 for f in new if f.recording == k]
                settle_to = max(ends) if ends else int(np.searchsorted(seg.t, seg.t[hi - 1] - 1.0))
            self.settled[k] = max(self.settled[k], settle_to)
        if not new and not self._fit_due:
            return []
        before = len(self.events)
        if self.fixed is not None:
            events = self._fit_fixed(new)
        elif new and self.body is not None:
            # reported at once with the body fitted so far (the fit of every flight takes longer
            # than a class waits); the joint fit runs at the next search and reports again
            # the flights whose edges it moved
            events = self._quick(new)
            self._fit_due = True
        else:
            self._fit_due = False
            events = self._fit_joint(new)
        del self.events[before:]  # _refresh appended them as it went
        self.events += events
        return events

    def _quick(self, new: list[fl.Flight]) -> list[dict]:
        """Events of ``new`` flights, each given its edges by the body fitted so far (its
        exclusion, if any, comes with the next joint fit)."""
        body, recordings = self.body, self.recordings()
        events = []
        for f in new:
            f, w0 = flight_edges(recordings[f.recording], f, body.inertia, body.drag_model, body.drag)
            if self._known(f.recording, f.i0, f.i1, self.flights):
                continue
            self.flights.append(f)
            rec = recordings[f.recording]
            predicted = predict_span(body, rec, f.i0, f.i1, DEFAULT_LEAD, DEFAULT_HORIZON)
            used = ~rec.saturated[f.i0:f.i1]
            flip = measured_flip(rec.t[f.i0:f.i1], rec.w[f.i0:f.i1], used, body.inertia, body.axes)
            events.append(self._event(f.recording, float(rec.t[f.i0]), float(rec.t[f.i1 - 1]), w0, flip,
                                      predicted["flip_time_predicted"]))
            self.events.append(events[-1])
            self._unfitted.add(events[-1]["number"])
        return events

    def _fit_joint(self, new: list[fl.Flight]) -> list[dict]:
        recordings = self.recordings()
        flights = sorted(self.flights + new, key=lambda f: (f.recording, f.i0))
        model = self.drag_model if len(flights) >= MIN_FLIGHTS_FOR_DRAG else "none"
        if self.result is not None:
            inertia = self.result.inertia
            drag = self.result.drag if self.result.drag_model == model else np.zeros(3)
        else:
            inertia, drag = self._guess[0], (self._guess[1] if model != "none" else np.zeros(3))
        try:
            if self.result is not None and self.result.drag_model == model:
                result = self._warm(recordings, flights, model)
            else:
                result = fit_flights(recordings, flights, inertia, drag, model)
        except ParameterError as err:
            return self._failed(recordings, new, str(err))
        except (ArithmeticError, ValueError, np.linalg.LinAlgError) as err:  # a fit that broke down
            why = "the flights so far do not tell the ratios" if self.result is None else "the fit failed"
            return self._failed(recordings, new, f"not fitted yet: {why} ({err.__class__.__name__})")
        self.result, self.body, self.fits = result, body_of(result), self.fits + 1
        self.flights = [fl.Flight(ff.rec_index, ff.i0, ff.i1) for ff in result.flights]
        return self._refresh(recordings)

    def _last_report(self, k: int, start: float, end: float) -> dict | None:
        """The last event of the flight of segment ``k`` that overlaps ``start``..``end``."""
        return next((e for e in reversed(self.events) if e["segment"] == k and e["start"] < end and start < e["end"]),
                    None)

    def _refresh(self, recordings) -> list[dict]:
        """Events of the last fit's flights not reported yet, and again of those whose edges,
        measured flip or exclusion the fit changed (a later fit's body settles the edges of
        flights reported before it: the last report of a flight counts)."""
        events = []
        for ff in self.result.flights:
            last = self._last_report(ff.rec_index, ff.start, ff.end)
            if last is not None and last["number"] not in self._unfitted and \
                    (last["start"], last["end"], last["flip_time_measured"], last["excluded"]) == \
                    (ff.start, ff.end, ff.flip_time_measured, ff.excluded):
                continue
            rec = recordings[ff.rec_index]
            predicted = predict_span(self.body, rec, ff.i0, ff.i1, DEFAULT_LEAD, DEFAULT_HORIZON)
            events.append(self._event(ff.rec_index, ff.start, ff.end, ff.omega0, ff.flip_time_measured,
                                      predicted["flip_time_predicted"], ff.excluded, ff.reason,
                                      number=None if last is None else last["number"]))
            self.events.append(events[-1])  # a later flight of this fit must not take it for its own
        self._unfitted = set()
        return events

    @property
    def flight_count(self) -> int:
        """Flights reported so far (a flight reported again with refined edges counts once)."""
        return len({e["number"] for e in self.events})

    def take_refined(self) -> list[dict]:
        """The events of flights the last full fit (:meth:`finish`, :meth:`choose`) reported
        again, once each (the session emits them)."""
        out, self._refined = self._refined, []
        return out

    def finish(self) -> bool:
        """The full fit of every flight, as ``tumble fit`` runs it, with the user's choices (at
        the end of a session, or when they change; the warm fits as flights land skip its
        single-flight fits and candidate starts). False if it failed: the last fit stands."""
        if self.fixed is not None or self.result is None:
            return False
        try:  # the same call as tumble fit: the same samples give the same flights and edges
            self.result = fit_recordings(self.recordings(), None, self.result.drag_model, "sensor", exclude=self.exclude,
                                         include=self.include)
        except (ParameterError, ArithmeticError, ValueError, np.linalg.LinAlgError):
            return False
        self.body = body_of(self.result)
        self._refined += self._refresh(self.recordings())
        return True

    def choose(self, exclude, include) -> bool:
        """The user leaves flights out or puts them back (keys: segment and a time inside
        each); the flights are fitted again. False if that fit failed."""
        self.exclude, self.include = tuple(exclude), tuple(include)
        return self.finish()

    def _warm(self, recordings, flights, model) -> FitResult:
        """The robust joint fit (:mod:`.consensus`) started from the last fit alone: its body,
        each known flight's initial rate and exclusion, its robust scale; no single-flight
        fits and no candidate starts (that start is what they look for)."""
        last = self.result
        state = cs.JointFit(recordings, flights, model, "sensor", None, None)
        for i, f in enumerate(flights):
            for ff in last.flights:
                if ff.rec_index == f.recording and ff.i0 < f.i1 and f.i0 < ff.i1:
                    state.w0s[i] = ff.omega0 if ff.i0 == f.i0 else state.w0s[i]
                    if ff.excluded:
                        state.left_out[i] = ff.reason
        for i, f in enumerate(flights):
            t = recordings[f.recording].t
            if any(k == f.recording and t[f.i0] <= inside <= t[f.i1 - 1] for k, inside in self.include):
                state.keep.add(i)
                state.left_out.pop(i, None)
        rms = [ff.rms for ff in last.fitted]
        state.f_scale = max(cs.ROBUST_FLOOR, cs.ROBUST_SCALE * float(np.median(rms)) / np.sqrt(3)) if rms \
            else cs.ROBUST_FLOOR
        state.candidates = [(last.inertia, last.drag)]
        state.joint()
        # the edges each flight's report gives (flight_edges) settle them here: its own rounds
        state.final_edges()
        if state.exclude_outliers():
            state.final_edges()
        return joint_result(recordings, state)

    def _fit_fixed(self, new: list[fl.Flight]) -> list[dict]:
        body = self.fixed
        recordings = self.recordings()
        try:
            settled = [flight_edges(recordings[f.recording], f, body.inertia, body.drag_model, body.drag) for f in new]
        except ParameterError as err:
            return self._failed(recordings, new, str(err))
        events = []
        for f, w0 in settled:
            if self._known(f.recording, f.i0, f.i1, self.flights):
                continue
            self.flights.append(f)
            rec = recordings[f.recording]
            predicted = predict_span(body, rec, f.i0, f.i1, DEFAULT_LEAD, DEFAULT_HORIZON)
            events.append(self._event(f.recording, float(rec.t[f.i0]), float(rec.t[f.i1 - 1]), w0,
                                      predicted["flip_time_measured"], predicted["flip_time_predicted"]))
            self.events.append(events[-1])
        del self.events[len(self.events) - len(events):]
        return events

    def _number(self) -> int:
        """The number of a flight reported for the first time (1, 2, ...)."""
        return max((e["number"] for e in self.events), default=0) + 1

    def _event(self, segment, start, end, omega0, flip_measured, flip_predicted, excluded=False, reason=None,
               number=None) -> dict:
        """A flight event; ``number`` that of the flight it reports again with refined edges
        (None: a new flight). The last event of a number counts."""
        ratios, std = self.ratios
        used = len(self.result.fitted) if self.fixed is None else len(self.flights)
        return {"event": "flight", "number": self._number() if number is None else int(number),
                "refined": number is not None, "segment": int(segment), "start": float(start), "end": float(end),
                "omega0": [float(x) for x in omega0], "ratios": [float(x) for x in ratios],
                "ratios_std": finite_or_none(std), "flights_used": used,
                "flip_time_measured": flip_measured, "flip_time_predicted": flip_predicted,
                "excluded": bool(excluded), "reason": reason}

    def _failed(self, recordings, new: list[fl.Flight], reason: str) -> list[dict]:
        """Events of flights no fit took (one stable spin alone does not tell the ratios):
        excluded, with the reason; the last body stays, and the next fit takes them in."""
        ratios, std = self.ratios
        events = []
        for f in new:
            self.flights.append(f)
            t, w = recordings[f.recording].t, recordings[f.recording].w
            events.append({"event": "flight", "number": self._number() + len(events), "refined": False,
                           "segment": int(f.recording), "start": float(t[f.i0]),
                           "end": float(t[f.i1 - 1]), "omega0": [float(x) for x in w[f.i0]],
                           "ratios": None if ratios is None else [float(x) for x in ratios],
                           "ratios_std": None if std is None else finite_or_none(std),
                           "flights_used": 0 if self.result is None else len(self.result.fitted),
                           "flip_time_measured": None, "flip_time_predicted": None,
                           "excluded": True, "reason": reason})
        return events


def last_reports(events) -> list[dict]:
    """The flight events that count: the last report of each flight (a flight is reported
    again when a later fit refines its edges), in the order the flights were first reported."""
    last: dict = {}
    for e in events:
        if e.get("event") == "flight":
            last[e["number"]] = e
    return list(last.values())


def finite_or_none(values) -> list:
    """Floats, with None where a value is not finite (JSON has no NaN)."""
    return [float(x) if np.isfinite(x) else None for x in values]
