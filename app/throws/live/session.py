"""Throws fitted as they land: a phone's live stream, its CSV files and its flights.

Call tree (the window runs it in a worker thread and reads copies)::

    LiveSession.run(should_stop)
      PhoneStream.run                      (client: poll, reconnect, segments)
        on_samples -> Segment.append, SegmentCsv.write      (every sample, as it arrives)
      the search thread, every PROCESS_EVERY_S:
        LiveFitter.process(views of the segments)           (fitter: flights that landed, fits)
                        -> one ``flight`` event per new flight

The fitter's modules (scipy, the compiled integrator) load in a thread as the session starts,
so the first poll does not wait for them.
"""

from __future__ import annotations

import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...physics.errors import ParameterError
from .client import PhoneStream
from .demo import is_demo, start_demo
from ..recordings.limits import MAX_BYTES, MAX_ROWS
from ..recordings.reader import Recording, saturated_samples

#: the search thread looks for flights this often (s)
PROCESS_EVERY_S = 0.1
CSV_HEADER = '"Time (s)","Gyroscope x (rad/s)","Gyroscope y (rad/s)","Gyroscope z (rad/s)","Absolute (rad/s)"\n'
FIT_NAME = "fit.toml"
#: a segment's CSV file goes on in a new part before it would hold more rows or bytes than
#: ``tumble fit`` reads of one recording (a tenth of the bytes kept spare)
PART_ROWS = MAX_ROWS
PART_BYTES = MAX_BYTES - MAX_BYTES // 10
#: how long an abandoned session (the window closing) waits for a search under way (s)
ABANDON_JOIN_S = 0.5


@dataclass(frozen=True)
class SegmentView:
    """A segment's samples as they were at one moment: ``t`` (n,), ``w`` (n, 3), and whether
    the segment is ``closed`` (the phone's time restarted after it). Appends never touch
    the samples a view holds, so it may be read without a lock."""

    t: np.ndarray
    w: np.ndarray
    closed: bool

    @property
    def n(self) -> int:
        return len(self.t)

    def recording(self, name: str) -> Recording:
        t, w = self.t.copy(), self.w.copy()
        return Recording(name, t, w, np.zeros(len(t), dtype=np.int64), saturated_samples(w))


class Segment:
    """One segment's samples, appended as they arrive (arrays grow by doubling)."""

    def __init__(self):
        self._t = np.empty(1024)
        self._w = np.empty((1024, 3))
        self.n = 0
        self.closed = False      # the phone's time restarted after it: it grows no more

    def append(self, t, w) -> None:
        """Append samples (past ``n`` only: what a view holds never changes)."""
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

    def view(self) -> SegmentView:
        return SegmentView(self.t, self.w, self.closed)


class SegmentCsv:
    """Every received sample written as it arrives: one phyphox-layout CSV per segment in a
    folder, going on in a new part file (``segment-003-part-2.csv``) before one would hold
    more than PART_ROWS rows or PART_BYTES bytes, so that ``tumble fit`` reads every file."""

    def __init__(self, folder, part_rows: int = PART_ROWS, part_bytes: int = PART_BYTES):
        self.folder = Path(folder)
        try:  # a folder no file can be made in (/proc, a read-only mount) is refused now, not at the first sample
            self.folder.mkdir(parents=True, exist_ok=True)
            tempfile.NamedTemporaryFile(dir=self.folder, prefix=".tumble-probe-").close()
        except OSError as err:
            raise ParameterError("--out", str(folder), f"be a folder files can be written in ({err.strerror or err})") \
                from None
        taken = sorted(self.folder.glob("segment-*.csv"))
        if taken:
            raise ParameterError("--out", str(folder), f"not already hold a live session ({taken[0].name})")
        self.part_rows, self.part_bytes = part_rows, part_bytes
        self._files: dict[int, list] = {}   # segment -> [file, part, rows, bytes]

    def path(self, segment: int, part: int = 1) -> Path:
        return self.folder / (f"segment-{segment:03d}.csv" if part == 1 else f"segment-{segment:03d}-part-{part}.csv")

    def paths(self) -> list[Path]:
        """Every file written so far."""
        return sorted(self.folder.glob("segment-*.csv"))

    def _open(self, segment: int, part: int) -> list:
        fh = open(self.path(segment, part), "w", encoding="utf-8", newline="")
        fh.write(CSV_HEADER)
        return [fh, part, 0, len(CSV_HEADER)]

    def write(self, segment: int, t, w) -> None:
        absolute = np.linalg.norm(w, axis=1)
        lines = [f"{ti!r},{x!r},{y!r},{z!r},{a!r}\n"
                 for ti, (x, y, z), a in zip(t.tolist(), w.tolist(), absolute.tolist())]
        entry = self._files.get(segment)
        if entry is None:
            entry = self._files[segment] = self._open(segment, 1)
        at = 0
        while at < len(lines):
            room = self.part_rows - entry[2]
            take, size = 0, 0
            while take < min(room, len(lines) - at) and entry[3] + size + len(lines[at + take]) <= self.part_bytes:
                size += len(lines[at + take])
                take += 1
            if take == 0:  # this part is full: the segment goes on in the next one
                entry[0].close()
                entry = self._files[segment] = self._open(segment, entry[1] + 1)
                continue
            entry[0].write("".join(lines[at:at + take]))
            entry[2] += take
            entry[3] += size
            at += take
        entry[0].flush()  # one write per poll (about every 0.1 s): a crash, even during a fit, loses nothing received

    def close(self) -> None:
        for entry in self._files.values():
            entry[0].close()
        self._files.clear()


def _warm_up() -> None:
    """Load the fitter's modules and the compiled integrator's cache (a worker thread)."""
    from ..fitting import dynamics
    from . import fitter  # noqa: F401  (loaded here, off the poll thread)

    dynamics.warm_up()


class LiveSession:
    """A phone's stream, its CSV files and its flights: what ``tumble live`` and the window run.

    Two threads: the one that calls :meth:`run` polls the phone and writes the CSV files;
    a search thread it starts looks for flights and fits them on views of the samples, so
    a fit never holds up the polls (a clear empties what was not fetched yet). ``emit(event)``
    is called from either, one event at a time. :meth:`snapshot` and :meth:`recordings` may
    be called from any thread: they return copies taken under the lock. ``fixed``: a body
    held fixed (a ``predict.FittedBody``).
    """

    def __init__(self, url: str, emit=None, drag_model: str = "quadratic", fixed=None, out_dir=None):
        # "demo": a stand-in phone serving a shipped sample in this process, stopped when run() ends
        self.demo = start_demo() if is_demo(url) else None
        self._lap = 1                               # the stand-in phone's pass through its sample
        url = self.demo.url if self.demo is not None else url
        self._emit_to = emit or (lambda event: None)
        self._emit_lock = threading.Lock()
        self.drag_model, self.fixed = drag_model, fixed
        self.segments: list[Segment] = []
        self.fitter = None                          # made at the first search, once its modules load
        self.csv = SegmentCsv(out_dir) if out_dir is not None else None
        self.out_dir = Path(out_dir) if out_dir is not None else None
        self.stream = PhoneStream(url, self._on_event, self._on_samples)
        self.lock = threading.Lock()
        self.state = "connecting"
        self.last_event: dict | None = None
        self._searching = threading.Event()         # set while the search thread should go on
        self._choices = None                        # the user's last exclude/include, not yet applied
        self.show_in_air = False                    # look for a throw in the air (the window shows it)
        self.current_throw: dict | None = None      # the throw in the air now (LiveFitter.in_air)
        self.abandoned = False                      # the window closes: no final fit, no long wait
        self._warming = threading.Thread(target=_warm_up, name="live-warm-up", daemon=True)
        self._warming.start()

    def emit(self, event: dict) -> None:
        """Hand an event on (either thread; one at a time)."""
        with self._emit_lock:
            self._emit_to(event)

    def _on_event(self, event: dict) -> None:
        with self.lock:
            self.state = event["event"]
            self.last_event = event
            if event["event"] == "cleared":  # the segment before it is complete
                for seg in self.segments[:event["segment"]]:
                    seg.closed = True
        self.emit(event)

    def _on_samples(self, segment: int, t, w) -> None:
        with self.lock:
            while len(self.segments) <= segment:
                self.segments.append(Segment())
            self.segments[segment].append(t, w)
        if self.csv is not None:
            self.csv.write(segment, t, w)
        if self.demo is not None and len(t):
            self._say_lap(float(t[-1]))

    def _say_lap(self, newest: float) -> None:
        """The stand-in phone plays its sample over and over: a ``looped`` event (``lap`` from
        2, ``period`` s) when its newest sample is from a new pass (its throws come again)."""
        period = float(self.demo.timeline.period)
        lap = int(newest // period) + 1 if period > 0 else 1
        if lap > self._lap:
            self._lap = lap
            self.emit({"event": "looped", "lap": lap, "period": period})

    def search(self) -> None:
        """Search the samples received so far for flights that landed; fit and emit them (the
        search thread, and once more at the end)."""
        if self._warming.is_alive():
            return
        if self.fitter is None:
            from .fitter import LiveFitter

            self.fitter = LiveFitter(self.drag_model, self.fixed)
        with self.lock:
            views = [seg.view() for seg in self.segments]
            segment = self.stream.segment
            choices, self._choices = self._choices, None
        if not views:
            return
        events = self.fitter.process(views)
        in_air = self.fitter.in_air(segment) if self.show_in_air else None
        with self.lock:
            self.current_throw = in_air
        if choices is not None and self.fitter.choose(*choices) and self.out_dir is not None and self.fixed is None:
            self._write_fit()
        for event in events + self.fitter.take_refined():
            self.emit(event)
        if events and self.out_dir is not None and self.fitter.result is not None and self.fixed is None:
            self._write_fit()

    def _search_loop(self) -> None:
        """The search thread: a search every PROCESS_EVERY_S while the stream runs."""
        while self._searching.is_set():
            began = time.monotonic()
            self.search()
            time.sleep(max(0.0, PROCESS_EVERY_S - (time.monotonic() - began)))

    def choose(self, exclude, include) -> None:
        """Any thread: leave flights out of the fit or put them back (``exclude`` and ``include``
        as the flights table gives them: segment and a time inside each); applied at the next search."""
        with self.lock:
            self._choices = (list(exclude), list(include))

    def finish(self) -> None:
        """Search what came in since the last search, then fit every flight in full (after
        the stream and the search thread stopped); nothing to do without a sample, nor for
        an abandoned session."""
        with self.lock:
            received = any(seg.n for seg in self.segments)
        if not received or self.abandoned:
            return
        self._warming.join()
        self.search()
        if self.fitter is not None and self.fitter.result is not None:
            self.fitter.finish()
            for event in self.fitter.take_refined():  # flights the full fit gave refined edges: reported again
                self.emit(event)
            if self.out_dir is not None and self.fixed is None:
                self._write_fit()

    def _write_fit(self) -> None:
        from ..fitting.report import write_scenario

        result = self.fitter.result
        try:
            write_scenario(result, self.out_dir / FIT_NAME, index=len(result.flights) - 1)
        except ParameterError:
            pass  # a fit whose body no scenario takes: the last good file stays

    def run(self, should_stop) -> None:
        """Poll until ``should_stop()`` (the search thread looks for flights meanwhile), then
        search what came in since and fit every flight in full; the files are closed on the
        way out. An error nothing foresaw leaves the state ``failed`` (with the error as the
        last event, for the window to show) before it is raised."""
        self._searching.set()
        searcher = threading.Thread(target=self._search_loop, name="tumble-live-search", daemon=True)
        searcher.start()
        try:
            self.stream.run(lambda: self.abandoned or should_stop())
            self.finish_after(searcher)
        except Exception as err:
            with self.lock:
                self.state = "failed"
                self.last_event = {"event": "failed", "error": f"{err.__class__.__name__}: {err}"[:200]}
            raise
        finally:
            self._searching.clear()
            if self.csv is not None:
                self.csv.close()
            if self.demo is not None:
                self.demo.stop()

    def finish_after(self, searcher: threading.Thread) -> None:
        """Stop the search thread and fit every flight in full (an abandoned session waits
        for a search under way at most ABANDON_JOIN_S, and fits nothing more)."""
        self._searching.clear()
        searcher.join(ABANDON_JOIN_S if self.abandoned else None)
        self.finish()
        with self.lock:
            if self.state != "stopped":
                self.state = "ended"

    def abandon(self) -> None:
        """Any thread: end the session at once (the window closes): the stream stops within
        the client's stop slice and no final fit runs."""
        self.abandoned = True

    @property
    def result(self):
        """The last joint fit (a ``FitResult``), or None."""
        return None if self.fitter is None else self.fitter.result

    @property
    def ratios(self):
        """(ratios, standard errors) of the body now (the fixed one or the last fit's), or (None, None)."""
        return (None, None) if self.fitter is None else self.fitter.ratios

    @property
    def events(self) -> list[dict]:
        return [] if self.fitter is None else self.fitter.events

    def end_event(self) -> dict:
        """The ``end`` event: samples, segments, flights and the last ratios."""
        ratios, std = self.ratios
        if std is not None:  # only a fitter has standard errors
            from .fitter import finite_or_none

            std = finite_or_none(std)
        return {"event": "end", "samples": int(self.stream.samples), "segments": sum(1 for s in self.segments if s.n),
                "flights": 0 if self.fitter is None else self.fitter.flight_count,
                "ratios": None if ratios is None else [float(x) for x in ratios],
                "ratios_std": std}

    def snapshot(self, tail_s: float = 10.0) -> dict:
        """Copies for another thread: the current segment's last ``tail_s`` of samples, the
        flight events, the last fit, the connection state and the sample rate."""
        with self.lock:
            k = self.stream.segment
            if k < len(self.segments) and self.segments[k].n:
                t, w = self.segments[k].t, self.segments[k].w
                lo = int(np.searchsorted(t, t[-1] - tail_s))
                t, w = t[lo:].copy(), w[lo:].copy()
            else:
                t, w = np.empty(0), np.empty((0, 3))
            return {"segment": k, "t": t, "w": w, "events": list(self.events), "result": self.result,
                    "state": self.state, "rate_hz": self.stream.rate_hz, "samples": self.stream.samples,
                    "last_event": self.last_event, "in_air": self.current_throw}

    def recordings(self) -> list[Recording]:
        """Copies of every segment received (the window keeps them after a disconnect)."""
        with self.lock:
            views = [s.view() for s in self.segments]
        return [v.recording(f"segment {k}") for k, v in enumerate(views)]
