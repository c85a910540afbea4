"""A stand-in phone: recordings served over phyphox's remote-access protocol in real time.

What phyphox's own server (``RemoteServer.java`` of phyphox-android) does, and this one too:

- ``GET /config``: the experiment's title, category, buffers and which buffers a sensor fills
  (the gyroscope's ``gyr_time``, ``gyrX``, ``gyrY``, ``gyrZ``, ``gyr``);
- ``GET /get?gyr_time=T&gyrX=T|gyr_time...``: per buffer, ``full`` = every value, empty = the
  last value, ``T`` = the values above T, ``T|ref`` = the values at the indices where buffer
  ``ref`` is above T; T is nudged by 10^floor(log10(T / 1e7)) past the 8 significant digits
  the values carry (``0.#######E0``, NaN as ``null``). After a clear or a new session the next
  request is answered in full, whatever it asks. The answer's ``status`` holds ``session``,
  ``measuring``, ``timedRun`` and ``countDown``;
- ``GET /control?cmd=start|stop|clear`` answers ``{"result": true|false}``;
- one request at a time, no keep-alive (HTTP/1.0, the connection closes after each answer).

The playback runs on the wall clock times ``speed`` (at most MAX_SPEED; the buffers hold the
newest MAX_BUFFER_SAMPLES samples, so answers stay bounded however long a loop plays); the
recordings play one after another
(0.5 s apart) and, with ``loop``, over again. Faults for tests and demos (thread-safe, or
scheduled at playback times from the command line): an outage (requests hang, the phone
goes on measuring), a sleep (requests hang and nothing is measured), dropped connections,
garbage or oversized answers, a clear, a new session. Listens on 127.0.0.1 only.
"""

from __future__ import annotations

import json
import math
import secrets
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qsl, urlsplit

import numpy as np

from ...physics.errors import ParameterError

HOST = "127.0.0.1"
#: the gap (s) between two recordings played one after the other, and between laps
RECORDING_GAP_S = 0.5
#: a hanging request is held at most this long (s) past the end of its fault
HANG_SLICE_S = 0.05
#: the default size (bytes) of an oversized answer
HUGE_BYTES = 100 * 1024 * 1024
#: bytes written per chunk of an oversized or garbage answer
CHUNK_BYTES = 64 * 1024
#: the fastest playback: 1000x plays an hour of a 100 Hz recording in 3.6 s (faster, a loop
#: played laps by the million; the buffers are bounded below anyway)
MAX_SPEED = 1000.0
#: the buffers hold at most this many of the newest samples (five minutes of a 400 Hz
#: gyroscope, the backlog the live client asks for on first contact), so no answer, nor the
#: work of one, grows with the laps played
MAX_BUFFER_SAMPLES = 120_000
GYRO_BUFFERS = ("gyr_time", "gyrX", "gyrY", "gyrZ", "gyr")
TITLE = "Gyroscope (rotation rate)"


def phyphox_number(value: float) -> str:
    """A value as phyphox writes it (Java ``DecimalFormat("0.#######E0")``): 8 significant
    digits, no trailing zeros, ``null`` for NaN and infinities."""
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0E0"
    mantissa, exponent = f"{value:.7E}".split("E")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}E{int(exponent)}"


def nudged_threshold(value: float) -> float:
    """phyphox's threshold: T moved past the 8-digit rounding of the values it was read from
    (``threshold += 10^floor(log10(threshold / 1e7))``; NaN for T < 0, as Java gives)."""
    if value < 0 or math.isnan(value):
        return math.nan
    if value == 0:
        return 0.0
    return value + 10.0 ** math.floor(math.log10(value / 1e7))


def check_speed(speed) -> float:
    """``speed`` if it is a number above 0 and at most MAX_SPEED; else ParameterError."""
    if isinstance(speed, bool) or not (isinstance(speed, (int, float)) and 0 < speed <= MAX_SPEED):
        raise ParameterError("--speed", speed, f"be a number above 0 and at most {MAX_SPEED:g}")
    return float(speed)


class Timeline:
    """Concatenated recordings: stamps from ~0 (s) and rates (rad/s); a lap's period for loops."""

    def __init__(self, pieces, jitter_s: float = 0.0, seed: int = 0):
        ts, ws, offset = [], [], 0.0
        for t, w in pieces:
            t = np.asarray(t, dtype=float)
            spacing = float(np.median(np.diff(t))) if len(t) > 1 else 0.01
            local = t - t[0] + spacing + offset
            ts.append(local)
            ws.append(np.asarray(w, dtype=float))
            offset = float(local[-1]) + RECORDING_GAP_S
        self.t = np.concatenate(ts)
        self.w = np.concatenate(ws)
        if jitter_s > 0:  # irregular stamps that still increase: each moves less than half its gap
            gaps = np.diff(self.t)
            room = 0.45 * np.minimum(np.concatenate(([gaps[0]], gaps)), np.concatenate((gaps, [gaps[-1]])))
            shift = np.random.default_rng(seed).normal(0.0, jitter_s, len(self.t))
            self.t = self.t + np.clip(shift, -room, room)
        self.period = float(self.t[-1]) + RECORDING_GAP_S

    def __len__(self):
        return len(self.t)

    def time_of(self, g: np.ndarray) -> np.ndarray:
        """Timeline time of global sample indices ``g`` (laps continue the time axis)."""
        lap, i = np.divmod(g, len(self.t))
        return self.t[i] + lap * self.period

    def count_at(self, position: float, loop: bool) -> int:
        """How many samples have been played by timeline time ``position``."""
        if not loop:
            return int(np.searchsorted(self.t, position, side="right"))
        lap = int(position // self.period)
        return lap * len(self.t) + int(np.searchsorted(self.t, position - lap * self.period, side="right"))


class PhyphoxReplay:
    """The stand-in phone's state and its HTTP server (all methods thread-safe).

    ``served_until(epoch)`` tells tests which samples were ever answered: every sample of an
    epoch (the stretch between two clears or sessions) up to that global index.
    """

    def __init__(self, pieces, *, speed: float = 1.0, loop: bool = False, jitter_s: float = 0.0,
                 batch_s: float = 0.0, port: int = 0, seed: int = 0, title: str = TITLE):
        check_speed(speed)
        self.timeline = Timeline(pieces, jitter_s, seed)
        self.speed, self.loop, self.batch_s, self.title = float(speed), bool(loop), float(batch_s), title
        self._lock = threading.Lock()
        self.session = self._new_session_id()
        self._started = time.monotonic()
        self._paused_total = 0.0       # wall seconds the playback stood still (stop, sleep)
        self._paused_since = None
        self._measuring = True
        self._first = 0                # the first global index of the current epoch
        self._epoch_origin = 0.0       # timeline time that reads 0 on the phone
        self._skipped: list[tuple[int, int]] = []  # global index ranges never recorded (a sleep)
        self._force_full = False
        self._hang_until = 0.0
        self._drops = self._garbage = self._huge = self._redirects = 0
        self._huge_bytes = HUGE_BYTES
        self.epoch = 0
        self._served: dict[int, int] = {}
        self.requests = 0
        self._schedule: list[tuple[float, object]] = []
        self._stopping = threading.Event()
        self.httpd = _Server((HOST, port), _Handler)
        self.httpd.replay = self
        self._thread = None

    # ------------------------------------------------------------------ clock

    @staticmethod
    def _new_session_id() -> str:
        return secrets.token_hex(3)

    def _wall_elapsed(self, now: float) -> float:
        paused = self._paused_total + (now - self._paused_since if self._paused_since is not None else 0.0)
        return now - self._started - paused

    def position(self) -> float:
        """The timeline time played so far (s)."""
        with self._lock:
            return self._position(time.monotonic())

    def _position(self, now: float) -> float:
        pos = self._wall_elapsed(now) * self.speed
        if self.batch_s > 0:  # the sensor delivers its samples in batches
            pos = math.floor(pos / self.batch_s) * self.batch_s
        return pos

    def _played(self, now: float) -> int:
        n = self.timeline.count_at(self._position(now), self.loop)
        return n if self.loop else min(n, len(self.timeline))

    def _pause(self, now):
        if self._paused_since is None:
            self._paused_since = now

    def _resume(self, now):
        if self._paused_since is not None:
            self._paused_total += now - self._paused_since
            self._paused_since = None

    def _run_schedule(self, now: float) -> None:
        pos = self._position(now)
        due = [a for at, a in self._schedule if at <= pos]
        self._schedule = [(at, a) for at, a in self._schedule if at > pos]
        for action in due:
            action(now)

    def finished(self) -> bool:
        """True once a playback without loop has played its last sample."""
        with self._lock:
            return not self.loop and self._played(time.monotonic()) >= len(self.timeline)

    # ------------------------------------------------------------------ faults

    def outage(self, seconds: float) -> None:
        """Requests hang for ``seconds`` (wall) and get no answer; the phone goes on measuring."""
        with self._lock:
            self._hang_until = time.monotonic() + seconds

    def sleep(self, seconds: float) -> None:
        """The phone sleeps: requests hang and what it would have measured is never recorded."""
        with self._lock:
            self._sleep(time.monotonic(), seconds)

    def _sleep(self, now, seconds):
        self._hang_until = now + seconds
        start = self._played(now)
        stop = self.timeline.count_at(self._position(now) + seconds * self.speed, self.loop)
        self._skipped.append((start, stop))

    def drop(self, count: int = 1) -> None:
        """The next ``count`` requests are closed without an answer."""
        with self._lock:
            self._drops += count

    def garbage(self, count: int = 1) -> None:
        """The next ``count`` answers to /get are bytes that are no JSON."""
        with self._lock:
            self._garbage += count

    def huge(self, count: int = 1, nbytes: int = HUGE_BYTES) -> None:
        """The next ``count`` answers to /get stream ``nbytes`` without a declared length."""
        with self._lock:
            self._huge, self._huge_bytes = self._huge + count, int(nbytes)

    def redirect(self, count: int = 1) -> None:
        """The next ``count`` requests are redirected to another host (a client must not follow)."""
        with self._lock:
            self._redirects += count

    def clear(self, restart: bool = True) -> None:
        """The clear button: buffers empty, the time restarts at 0; with ``restart`` someone
        presses start at once, else the phone waits for ``/control?cmd=start``."""
        with self._lock:
            self._clear(time.monotonic(), restart)

    def _clear(self, now, restart):
        self._first = self._played(now)
        self._epoch_origin = self._position(now)
        self._force_full = True
        self.epoch += 1
        if not restart:
            self._measuring = False
            self._pause(now)

    def new_session(self) -> None:
        """The experiment is reloaded: a new session id, empty buffers, time from 0."""
        with self._lock:
            self._clear(time.monotonic(), True)
            self.session = self._new_session_id()

    def schedule(self, at: float, action: str, seconds: float = 0.0) -> None:
        """Run fault ``action`` (outage, sleep, drop, redirect, garbage, huge, clear, session) when the
        playback reaches timeline time ``at`` (s)."""
        acts = {"outage": lambda now: setattr(self, "_hang_until", now + seconds),
                "sleep": lambda now: self._sleep(now, seconds),
                "drop": lambda now: setattr(self, "_drops", self._drops + 1),
                "garbage": lambda now: setattr(self, "_garbage", self._garbage + 1),
                "huge": lambda now: setattr(self, "_huge", self._huge + 1),
                "redirect": lambda now: setattr(self, "_redirects", self._redirects + 1),
                "clear": lambda now: self._clear(now, True),
                "session": lambda now: (self._clear(now, True), setattr(self, "session", self._new_session_id()))}
        with self._lock:
            self._schedule.append((float(at), acts[action]))

    def served_until(self, epoch: int) -> int:
        """The global index past the last sample of ``epoch`` any answer has held (0: none)."""
        with self._lock:
            return self._served.get(epoch, 0)

    def epoch_first(self) -> int:
        """The first global sample index of the current epoch."""
        with self._lock:
            return self._first

    @property
    def epoch_origin(self) -> float:
        """The timeline time that reads 0 on the phone in the current epoch (s)."""
        with self._lock:
            return self._epoch_origin

    # ------------------------------------------------------------------ answers

    def fault_for(self, path: str) -> str | None:
        """What the next request meets: None (an answer), hang, drop, redirect, garbage or huge."""
        with self._lock:
            now = time.monotonic()
            self._run_schedule(now)
            self.requests += 1
            if now < self._hang_until:
                return "hang"
            if self._drops:
                self._drops -= 1
                return "drop"
            if self._redirects:
                self._redirects -= 1
                return "redirect"
            if path == "/get" and self._garbage:
                self._garbage -= 1
                return "garbage"
            if path == "/get" and self._huge:
                self._huge -= 1
                return "huge"
            return None

    def hanging(self) -> bool:
        with self._lock:
            return time.monotonic() < self._hang_until and not self._stopping.is_set()

    def config(self) -> dict:
        buffers = [{"name": n, "size": 0} for n in GYRO_BUFFERS]
        outputs = [{"x": "gyrX"}, {"y": "gyrY"}, {"z": "gyrZ"}, {"abs": "gyr"}, {"t": "gyr_time"}]
        labels = ("Time (s)", "Gyroscope x (rad/s)", "Gyroscope y (rad/s)", "Gyroscope z (rad/s)",
                  "Absolute (rad/s)")
        return {"crc32": "5fb1c0de", "title": self.title, "localTitle": self.title, "category": "Raw Sensors",
                "localCategory": "Raw Sensors", "buffers": buffers,
                "inputs": [{"source": "gyroscope", "outputs": outputs}],
                "export": [{"set": "Gyroscope", "sources": [{"label": lab, "buffer": b} for lab, b in
                                                            zip(labels, ("gyr_time", "gyrX", "gyrY", "gyrZ", "gyr"))]}]}

    def control(self, cmd: str | None) -> bool:
        with self._lock:
            now = time.monotonic()
            if cmd == "start":
                self._measuring = True
                self._resume(now)
            elif cmd == "stop":
                self._measuring = False
                self._pause(now)
            elif cmd == "clear":
                self._clear(now, restart=False)
            else:
                return False
            return True

    def _visible(self, now):
        """(global indices, phone times, rates) of the samples in the buffers now (the newest
        MAX_BUFFER_SAMPLES of them)."""
        played = self._played(now)
        g = np.arange(max(self._first, played - MAX_BUFFER_SAMPLES), played)
        for a, b in self._skipped:
            g = g[(g < a) | (g >= b)]
        i = g % len(self.timeline)
        t = self.timeline.time_of(g) - self._epoch_origin
        return g, t, self.timeline.w[i]

    def get(self, query: str) -> str:
        """The text of a ``/get`` answer (raises ValueError on a threshold that is no number)."""
        params = parse_qsl(query, keep_blank_values=True)
        with self._lock:
            now = time.monotonic()
            g, t, w = self._visible(now)
            columns = {"gyr_time": t, "gyrX": w[:, 0], "gyrY": w[:, 1], "gyrZ": w[:, 2],
                       "gyr": np.linalg.norm(w, axis=1)}
            force = self._force_full and bool(params)  # a request with buffers uses the forced update up
            if params:
                self._force_full = False
            parts, top = [], -1
            for name, value in params:
                if name not in columns:
                    continue
                data = columns[name]
                if value == "" and not force:
                    mode, cells = "single", [phyphox_number(float(data[-1])) if len(data) else "null"]
                elif value == "full" or force:
                    mode, cells = "full", [phyphox_number(float(v)) for v in data]
                    top = max(top, len(data) - 1)
                else:
                    raw, _, ref = value.partition("|")
                    threshold = nudged_threshold(float(raw))
                    if math.isnan(threshold):
                        mode, cells = "single", [phyphox_number(float(data[-1])) if len(data) else "null"]
                    else:
                        against = columns.get(ref, data) if ref else data
                        picked = np.flatnonzero(against > threshold)
                        mode, cells = "partial", [phyphox_number(float(data[k])) for k in picked]
                        if len(picked):
                            top = max(top, int(picked[-1]))
                parts.append(f'"{name}":{{"size":0,"updateMode":"{mode}", "buffer":[{",".join(cells)}]}}')
            if top >= 0:
                self._served[self.epoch] = max(self._served.get(self.epoch, 0), int(g[top]) + 1)
            status = (f'"session":"{self.session}", "measuring":{str(self._measuring).lower()}, '
                      f'"timedRun":false, "countDown":0')
        return '{"buffer":{\n' + ",\n".join(parts) + "\n},\n\"status\":{\n" + status + "\n}\n}\n"

    # ------------------------------------------------------------------ serving

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> "PhyphoxReplay":
        """Serve from a daemon thread (tests); :meth:`stop` ends it."""
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="phyphox-replay", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(5.0)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


class _Server(HTTPServer):
    """One request at a time (no threads), on loopback; a client that went away is no error."""

    allow_reuse_address = True
    request_queue_size = 16
    replay: PhyphoxReplay

    def handle_error(self, request, client_address):  # noqa: D401 - HTTPServer API
        pass  # a client that gave up before the answer (BrokenPipe, reset): nothing to report


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # the connection closes after every answer: no keep-alive
    server: _Server

    def log_message(self, *args):  # noqa: D401 - quiet
        pass

    def do_GET(self):  # noqa: N802 - http.server API
        replay = self.server.replay
        parts = urlsplit(self.path)
        fault = replay.fault_for(parts.path)
        if fault == "hang":
            while replay.hanging():
                time.sleep(HANG_SLICE_S)
            self.close_connection = True
            self._abort()
            return
        if fault == "drop":
            self._abort()
            return
        if fault == "redirect":
            self.send_response(302)
            self.send_header("Location", "http://192.0.2.1:8080" + self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if fault == "garbage":
            self._send(200, b"\x00\xff<html>not json {{{ " * 20, "text/html")
            return
        if fault == "huge":
            self._stream_huge(replay._huge_bytes)
            return
        if parts.path == "/config":
            self._send(200, json.dumps(replay.config()).encode())
        elif parts.path == "/get":
            try:
                body = replay.get(parts.query)
            except ValueError:
                self._send(500, b"")
                return
            self._send(200, body.encode())
        elif parts.path == "/control":
            cmd = dict(parse_qsl(parts.query)).get("cmd")
            self._send(200, json.dumps({"result": replay.control(cmd)}).encode())
        else:
            self._send(404, b"")

    def _send(self, code: int, body: bytes, kind: str = "application/json"):
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def _stream_huge(self, nbytes: int):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        chunk = (b'{"buffer":{"gyr_time":{"size":0,"updateMode":"full","buffer":['
                 + b"1.2345678E0," * (CHUNK_BYTES // 12))
        sent = 0
        while sent < nbytes and not self.server.replay._stopping.is_set():
            self.wfile.write(chunk)
            sent += len(chunk)

    def _abort(self):
        """Close without a word (what a dropped Wi-Fi or a killed app leaves)."""
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def replay_recordings(paths, **options) -> PhyphoxReplay:
    """A :class:`PhyphoxReplay` of the recordings at ``paths`` (any format ``tumble fit`` reads)."""
    from ..recordings.reader import read_recording

    check_speed(options.get("speed", 1.0))  # before any recording is read
    recs = [read_recording(p) for p in paths]
    return PhyphoxReplay([(r.t, r.w) for r in recs], **options)
