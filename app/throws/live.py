"""Throws fitted as they land: a phone's live stream cut into flights, each reported at its catch.

Call tree (one thread runs it all; the window runs it in a worker and reads copies)::

    LiveSession.run(should_stop)
      PhoneStream.run                      (live_client: poll, reconnect, segments)
        on_samples -> Segment.append, SegmentCsv.write      (every sample, as it arrives)
        idle       -> LiveFitter.process                    (at most every PROCESS_EVERY_S)
                        episodes past each segment's settled point -> candidate flights
                        -> fit_flights on every flight so far, warm-started (or the fixed body)
                        -> one ``flight`` event per new flight

An *episode* is a stretch of fast samples (|w| >= MIN_RATE) that the phone has left for at
least QUIET_S: a throw with its catch. Only episodes past the last settled point are searched,
and the joint fit runs only when a flight lands, from the last fit's body, so the work per
poll does not grow with the session.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np

from ..physics.errors import ParameterError
from . import flights as fl
from .edges import find_flights, settle_edges
from .fit import FitResult, fit_flights, flip_times
from .live_client import PhoneStream
from .predict import predict
from .recording import Recording, saturated_samples

#: the phone must stay below MIN_RATE this long (s) after a throw before its episode is searched
QUIET_S = 0.2
#: an episode still going after this long (s) is searched up to HOLD_S before its end
MAX_EPISODE_S = 4.0
HOLD_S = 0.6
#: samples this far (s) before an episode's first fast sample and after its last join the search
PAD_BEFORE_S = 0.5
PAD_AFTER_S = 0.3
#: the flight finder runs at most this often (s)
PROCESS_EVERY_S = 0.2
#: the CSV files are flushed at least this often (s)
FLUSH_EVERY_S = 0.5
CSV_HEADER = '"Time (s)","Gyroscope x (rad/s)","Gyroscope y (rad/s)","Gyroscope z (rad/s)","Absolute (rad/s)"\n'
FIT_NAME = "fit.toml"


class Segment:
    """One segment's samples (appended; arrays grow by doubling) and its settled point."""

    def __init__(self):
        self._t = np.empty(1024)
        self._w = np.empty((1024, 3))
        self.n = 0
        self.settled = 0

    def append(self, t, w) -> None:
        need = self.n + len(t)
        if need > len(self._t):
            size = max(need, 2 * len(self._t))
            self._t = np.concatenate((self._t[:self.n], np.empty(size - self.n)))
            self._w = np.concatenate((self._w[:self.n], np.empty((size - self.n, 3))))
        self._t[self.n:need], self._w[self.n:need] = t, w
        self.n = need

    @property
    def t(self) -> np.ndarray:
        return self._t[:self.n]

    @property
    def w(self) -> np.ndarray:
        return self._w[:self.n]

    def recording(self, name: str) -> Recording:
        t, w = self.t.copy(), self.w.copy()
        return Recording(name, t, w, np.zeros(len(t), dtype=np.int64), saturated_samples(w))


class SegmentCsv:
    """Every received sample written as it arrives: one phyphox-layout CSV per segment in a folder."""

    def __init__(self, folder):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        taken = sorted(self.folder.glob("segment-*.csv"))
        if taken:
            raise ParameterError("--out", str(folder), f"not already hold a live session ({taken[0].name})")
        self._files: dict[int, object] = {}
        self._flushed = time.monotonic()

    def path(self, segment: int) -> Path:
        return self.folder / f"segment-{segment:03d}.csv"

    def write(self, segment: int, t, w) -> None:
        fh = self._files.get(segment)
        if fh is None:
            for other in self._files.values():
                other.flush()
            fh = self._files[segment] = open(self.path(segment), "w", encoding="utf-8", newline="")
            fh.write(CSV_HEADER)
        absolute = np.linalg.norm(w, axis=1)
        fh.write("".join(f"{ti!r},{x!r},{y!r},{z!r},{a!r}\n"
                         for ti, (x, y, z), a in zip(t.tolist(), w.tolist(), absolute.tolist())))
        self.tick()

    def tick(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._flushed >= FLUSH_EVERY_S:
            for fh in self._files.values():
                fh.flush()
            self._flushed = now

    def close(self) -> None:
        for fh in self._files.values():
            fh.close()
        self._files.clear()


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


def _std(values) -> list:
    return [float(x) if np.isfinite(x) else None for x in values]


class LiveFitter:
    """Flights found incrementally in growing segments, fitted jointly as each lands.

    ``fixed``: a body held fixed (``--fit``); else the ratios are fitted to every flight so far.
    """

    def __init__(self, drag_model: str = "quadratic", fixed: FitResult | None = None):
        self.drag_model = fixed.drag_model if fixed is not None else drag_model
        self.fixed = fixed
        self.result: FitResult | None = fixed
        self.segments: list[Segment] = []
        self.flights: list[fl.Flight] = []       # every flight so far (edges as last settled)
        self.events: list[dict] = []             # every flight event so far
        self.fits = 0
        self._guess = None                       # a first body from the rates alone

    def segment(self, k: int) -> Segment:
        while len(self.segments) <= k:
            self.segments.append(Segment())
        return self.segments[k]

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
            if t[-1] - t[b] >= QUIET_S:
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
                found = fl.detect(rec, k, dw, self.result.inertia, self.drag_model, self.result.drag)
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
        inertia, drag = (self.result.inertia, self.result.drag) if self.result is not None else self._guess
        try:
            result = fit_flights(recordings, flights, inertia, drag, self.drag_model)
        except ParameterError as err:
            return [self._excluded_event(recordings, f, str(err)) for f in new]
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
                "ratios_std": _std(result.moments_std),
                "flights_used": len(result.flights) if self.fixed is None else len(self.flights),
                "flip_time_measured": flip_measured, "flip_time_predicted": predicted,
                "excluded": False, "reason": None}

    def _excluded_event(self, recordings, f: fl.Flight, reason: str) -> dict:
        t = recordings[f.recording].t
        ratios = self.result.moments if self.result is not None else None
        return {"event": "flight", "segment": int(f.recording), "start": float(t[f.i0]), "end": float(t[f.i1 - 1]),
                "omega0": [float(x) for x in recordings[f.recording].w[f.i0]],
                "ratios": None if ratios is None else [float(x) for x in ratios],
                "ratios_std": None if self.result is None else _std(self.result.moments_std),
                "flights_used": len(self.flights), "flip_time_measured": None, "flip_time_predicted": None,
                "excluded": True, "reason": reason}


class LiveSession:
    """A phone's stream, its CSV files and its flights: what ``tumble live`` and the window run.

    ``emit(event)`` is called from the thread that runs :meth:`run` for every event.
    :meth:`snapshot` may be called from any thread: it returns copies taken under the lock.
    """

    def __init__(self, url: str, emit=None, drag_model: str = "quadratic", fixed: FitResult | None = None,
                 out_dir=None):
        self.emit = emit or (lambda event: None)
        self.fitter = LiveFitter(drag_model, fixed)
        self.csv = SegmentCsv(out_dir) if out_dir is not None else None
        self.out_dir = Path(out_dir) if out_dir is not None else None
        self.stream = PhoneStream(url, self._on_event, self._on_samples)
        self.lock = threading.Lock()
        self.state = "connecting"
        self.last_event: dict | None = None
        self._processed = 0.0
        self._fits_written = 0

    def _on_event(self, event: dict) -> None:
        with self.lock:
            self.state = event["event"]
            self.last_event = event
        self.emit(event)

    def _on_samples(self, segment: int, t, w) -> None:
        with self.lock:
            self.fitter.segment(segment).append(t, w)
        if self.csv is not None:
            self.csv.write(segment, t, w)

    def idle(self) -> None:
        """Between polls: flush the files, search for flights when it is time."""
        if self.csv is not None:
            self.csv.tick()
        now = time.monotonic()
        if now - self._processed < PROCESS_EVERY_S:
            return
        self._processed = now
        with self.lock:
            events = self.fitter.process()
        for event in events:
            self.emit(event)
        if events and self.out_dir is not None and self.fitter.result is not None and self.fitter.fixed is None:
            self._write_fit()

    def _write_fit(self) -> None:
        from .report import write_scenario

        result = self.fitter.result
        try:
            write_scenario(result, self.out_dir / FIT_NAME, index=len(result.flights) - 1)
        except ParameterError:
            pass  # a fit whose body no scenario takes: the last good file stays

    def run(self, should_stop) -> None:
        """Poll and fit until ``should_stop()``; files are flushed and closed on the way out."""
        try:
            self.stream.run(should_stop, self.idle)
        finally:
            if self.csv is not None:
                self.csv.close()

    def end_event(self) -> dict:
        """The ``end`` event: samples, segments, flights and the last ratios."""
        result = self.fitter.result
        segments = sum(1 for s in self.fitter.segments if s.n)
        return {"event": "end", "samples": int(self.stream.samples), "segments": segments,
                "flights": len(self.fitter.events),
                "ratios": None if result is None else [float(x) for x in result.moments],
                "ratios_std": None if result is None else _std(result.moments_std)}

    def snapshot(self, tail_s: float = 10.0) -> dict:
        """Copies for another thread: the current segment's last ``tail_s`` of samples, the
        flight events, the last fit, the connection state and sample rate."""
        with self.lock:
            segs = self.fitter.segments
            k = self.stream.segment
            if k < len(segs) and segs[k].n:
                t, w = segs[k].t, segs[k].w
                lo = int(np.searchsorted(t, t[-1] - tail_s))
                t, w = t[lo:].copy(), w[lo:].copy()
            else:
                t, w = np.empty(0), np.empty((0, 3))
            return {"segment": k, "t": t, "w": w, "events": list(self.fitter.events), "result": self.fitter.result,
                    "state": self.state, "rate_hz": self.stream.rate_hz, "samples": self.stream.samples,
                    "last_event": self.last_event}

    def recordings(self) -> list[Recording]:
        """Copies of every segment received (the window keeps them after a disconnect)."""
        with self.lock:
            return self.fitter.recordings()
