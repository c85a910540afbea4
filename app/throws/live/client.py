"""A phone's gyroscope, live: a small, careful client of phyphox's remote access.

phyphox (RWTH Aachen's phone app) serves a running experiment over HTTP when "Allow remote
access" is on: ``/config`` names the buffers, ``/get?gyr_time=T&gyrX=T|gyr_time...`` answers
the values past T (see :mod:`.phyphox_server` for the protocol as phyphox's sources show it).
The PyPI package ``phyphox-py`` was not used: it opens every URL without a timeout, reads
answers of any size, lets urllib follow redirects to any host, takes only IP addresses, and
notices neither a clear nor a new session.

This client talks to the one host of its URL, one request at a time on a fresh connection
(phyphox breaks on kept-alive ones), each with a timeout and a bounded answer; it follows no
redirect and evaluates nothing (``json.loads`` only). :class:`PhoneStream` polls, reconnects
with a short back-off, and cuts the stream into segments where the phone's time restarts (a
clear) or its session changes (the experiment was reloaded).

Events it reports (dicts, as ``tumble live --json`` prints them): ``connected`` (title,
session), ``reconnecting`` (error), ``cleared`` (segment).
"""

from __future__ import annotations

import http.client
import json
import math
import socket
import time
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

import numpy as np

from ...physics.errors import ParameterError

#: every request's timeout (s): a dropped Wi-Fi leaves requests hanging rather than refused
REQUEST_TIMEOUT_S = 1.0
#: the longest a whole answer may take to arrive (s), however it trickles in
ANSWER_DEADLINE_S = 8.0
#: the largest answer read (bytes): five minutes of a 400 Hz gyroscope's four buffers
MAX_ANSWER_BYTES = 16 * 1024 * 1024
#: poll periods (s) while the phone measures and while it does not (phyphox's own page
#: polls every 30 and 250 ms; 100 ms keeps a flight's report well within its 2 s)
POLL_MEASURING_S = 0.1
POLL_IDLE_S = 0.25
#: back-off after a failure (s): first, growth factor, longest (a phone may sleep for minutes)
BACKOFF_FIRST_S = 0.2
BACKOFF_FACTOR = 2.0
BACKOFF_MAX_S = 2.0
#: while measuring with no new sample for this long (s), ask the phone's last time: a clear
#: whose forced full answer someone else received (the phone's own web page) shows only
#: there, and only until the new time passes the last one received (a sensor's batches
#: arrive well within this)
PROBE_AFTER_S = 0.3
#: on first contact, samples older than this (s of phone time) are not asked for
BACKLOG_S = 300.0
#: the gyroscope experiment's buffers, if /config names none
DEFAULT_BUFFERS = {"t": "gyr_time", "x": "gyrX", "y": "gyrY", "z": "gyrZ"}
#: longest buffer name or session id taken from the phone
MAX_NAME_CHARS = 64


class PhoneError(Exception):
    """A request that failed: the message is one short line."""


def parse_url(url: str) -> tuple[str, int, str]:
    """(host, port, path prefix) of a phyphox URL such as ``http://192.168.1.23:8080``;
    raises :class:`ParameterError` naming ``URL``."""
    try:
        parts = urlsplit(str(url).strip())
        port = parts.port
    except ValueError:
        raise ParameterError("URL", url, "be http://HOST:PORT as phyphox shows it") from None
    if parts.scheme != "http" or not parts.hostname:
        raise ParameterError("URL", url, "be http://HOST:PORT as phyphox shows it (http only)")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise ParameterError("URL", url, "hold no user, query or fragment (http://HOST:PORT)")
    return parts.hostname, port or 80, parts.path.rstrip("/")


class PhyphoxClient:
    """One request at a time to one host: fresh connection, timeout, bounded answer, JSON only."""

    def __init__(self, url: str, timeout: float = REQUEST_TIMEOUT_S, max_bytes: int = MAX_ANSWER_BYTES):
        self.host, self.port, self.prefix = parse_url(url)
        self.timeout, self.max_bytes = timeout, max_bytes

    def get_json(self, path: str) -> dict:
        """The JSON object the phone answers to ``path``; raises :class:`PhoneError`."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            conn.request("GET", self.prefix + path, headers={"Connection": "close", "Accept": "application/json"})
            resp = conn.getresponse()
            if resp.status != 200:
                where = f" to {resp.getheader('Location', '?')[:80]!r} (not followed)" if 300 <= resp.status < 400 else ""
                raise PhoneError(f"HTTP {resp.status}{where}")
            declared = resp.getheader("Content-Length")
            if declared is not None and declared.strip().isdigit() and int(declared) > self.max_bytes:
                raise PhoneError(f"answer of {int(declared)} bytes, over the {self.max_bytes} read")
            body = self._read(resp)
        except (OSError, http.client.HTTPException) as err:
            raise PhoneError(_describe(err)) from None
        finally:
            conn.close()
        try:
            data = json.loads(body, parse_constant=lambda _name: None)
        except (ValueError, RecursionError):
            raise PhoneError(f"answer is not JSON ({len(body)} bytes)") from None
        if not isinstance(data, dict):
            raise PhoneError("answer is not a JSON object")
        return data

    def _read(self, resp) -> bytes:
        chunks, size, deadline = [], 0, time.monotonic() + ANSWER_DEADLINE_S
        while True:
            chunk = resp.read(64 * 1024)
            if not chunk:
                return b"".join(chunks)
            size += len(chunk)
            if size > self.max_bytes:
                raise PhoneError(f"answer over the {self.max_bytes} bytes read")
            if time.monotonic() > deadline:
                raise PhoneError(f"answer took over {ANSWER_DEADLINE_S:g} s")
            chunks.append(chunk)


def _describe(err: Exception) -> str:
    if isinstance(err, (socket.timeout, TimeoutError)):
        return "no answer (timed out)"
    if isinstance(err, ConnectionRefusedError):
        return "connection refused (is remote access on?)"
    if isinstance(err, http.client.RemoteDisconnected):
        return "connection closed without an answer"
    text = str(err).strip() or err.__class__.__name__
    return text.splitlines()[0][:120]


def buffer_names(config: dict) -> dict:
    """{t, x, y, z} buffer names of the gyroscope from a ``/config`` answer."""
    names = dict(DEFAULT_BUFFERS)
    for source in config.get("inputs") or []:
        if isinstance(source, dict) and source.get("source") == "gyroscope":
            for out in source.get("outputs") or []:
                if isinstance(out, dict):
                    for key, value in out.items():
                        if key in names and isinstance(value, str) and 0 < len(value) <= MAX_NAME_CHARS:
                            names[key] = value
    return names


def _title(config: dict) -> str:
    title = config.get("localTitle") or config.get("title") or ""
    return str(title)[:MAX_NAME_CHARS] if isinstance(title, str) else ""


@dataclass
class Status:
    session: str
    measuring: bool

    @staticmethod
    def of(answer: dict) -> "Status":
        status = answer.get("status")
        if not isinstance(status, dict):
            raise PhoneError("answer holds no status")
        session = status.get("session")
        return Status(str(session)[:MAX_NAME_CHARS] if session is not None else "",
                      status.get("measuring") is True)


def columns(answer: dict, names: dict) -> tuple[np.ndarray, np.ndarray, str]:
    """(t, w (n, 3), update mode of t) from a ``/get`` answer; rows with a missing or
    non-finite value are dropped."""
    buffers = answer.get("buffer")
    if not isinstance(buffers, dict):
        raise PhoneError("answer holds no buffers")
    cols, mode = [], "partial"
    for key in ("t", "x", "y", "z"):
        entry = buffers.get(names[key])
        if not isinstance(entry, dict) or not isinstance(entry.get("buffer"), list):
            raise PhoneError(f"answer lacks buffer {names[key]!r}")
        if key == "t":
            mode = str(entry.get("updateMode", "partial"))
        values = entry["buffer"]
        if not all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in values):
            raise PhoneError(f"buffer {names[key]!r} holds something other than numbers")
        cols.append(np.array([math.nan if v is None else v for v in values], dtype=float))
    n = min(len(c) for c in cols)
    data = np.stack([c[:n] for c in cols], axis=1) if n else np.empty((0, 4))
    data = data[np.all(np.isfinite(data), axis=1)]
    return data[:, 0], data[:, 1:4], mode


def _value(x: float) -> str:
    return repr(float(x))


class PhoneStream:
    """Polls a phone and hands on its samples, segment by segment.

    ``on_event(dict)`` gets ``connected``, ``reconnecting`` and ``cleared``;
    ``on_samples(segment, t, w)`` every new run of samples (times strictly increasing within a
    segment). Both are called from the thread that runs :meth:`run`.
    """

    def __init__(self, url: str, on_event, on_samples, client: PhyphoxClient | None = None):
        self.client = client or PhyphoxClient(url)
        self.on_event, self.on_samples = on_event, on_samples
        self.segment = 0
        self.session: str | None = None
        self.last_t: float | None = None     # the last time received in this segment
        self.after: float | None = None       # ask for samples past this time (None: full)
        self.names = dict(DEFAULT_BUFFERS)
        self.connected = False
        self.measuring = False
        self.samples = 0
        self.rate_hz = 0.0
        self._quiet_since = time.monotonic()
        self._rate_marks: list[tuple[float, int]] = []

    # ------------------------------------------------------------------ queries

    def _query(self, after: float | None) -> str:
        t = quote(self.names["t"], safe="")
        if after is None:
            value, ref = "full", "full"
        else:
            value, ref = _value(after), f"{_value(after)}|{t}"
        rest = "&".join(f"{quote(self.names[k], safe='')}={quote(ref, safe='|')}" for k in "xyz")
        return f"/get?{t}={quote(value, safe='')}&{rest}"

    def _last_time(self) -> tuple[float | None, Status]:
        """The phone's last time (None: its buffers are empty) and its status."""
        answer = self.client.get_json(f"/get?{quote(self.names['t'], safe='')}=")
        entry = (answer.get("buffer") or {}).get(self.names["t"]) if isinstance(answer.get("buffer"), dict) else None
        values = entry.get("buffer") if isinstance(entry, dict) else None
        last = values[-1] if isinstance(values, list) and values else None
        last = float(last) if isinstance(last, (int, float)) and not isinstance(last, bool) else None
        return (last if last is not None and math.isfinite(last) else None), Status.of(answer)

    # ------------------------------------------------------------------ segments

    def _new_segment(self) -> None:
        if self.samples or self.last_t is not None:
            self.segment += 1
            self.on_event({"event": "cleared", "segment": self.segment})
        self.last_t = self.after = None

    def _connect(self) -> None:
        config = self.client.get_json("/config")
        self.names = buffer_names(config)
        last, status = self._last_time()
        if self.session is not None and status.session != self.session:
            self._new_segment()
        elif self.last_t is not None and (last is None or last < self.last_t):
            self._new_segment()  # the time went back while we were away: a clear
        elif self.last_t is None and last is not None and last > BACKLOG_S:
            self.after = last - BACKLOG_S  # a long-running phone: only its recent past
        self.session, self.measuring = status.session, status.measuring
        self.connected = True
        self.on_event({"event": "connected", "title": _title(config), "session": status.session})

    # ------------------------------------------------------------------ the loop

    def poll(self) -> None:
        """One round: (re)connect if needed, ask for the new samples, hand them on."""
        if not self.connected:
            self._connect()
        asked_full = self.after is None
        answer = self.client.get_json(self._query(self.after))
        status = Status.of(answer)
        self.measuring = status.measuring
        if status.session != self.session:
            self.session = status.session
            self._new_segment()  # a reloaded experiment: ask again, in full
            return
        t, w, mode = columns(answer, self.names)
        if self.last_t is not None and (t[0] < self.last_t if len(t) else not asked_full and mode == "full"):
            self._new_segment()  # the time went back, or a full answer to a partial request is empty: a clear
        if self.last_t is not None:
            keep = t > self.last_t
            t, w = t[keep], w[keep]
        if len(t) > 1:  # strictly increasing within a segment
            keep = np.concatenate(([True], np.diff(t) > 0))
            if not keep.all():
                keep = t > np.maximum.accumulate(np.concatenate(([-math.inf], t[:-1])))
            t, w = t[keep], w[keep]
        now = time.monotonic()
        if len(t):
            self.last_t = self.after = float(t[-1])
            self.samples += len(t)
            self._quiet_since = now
            self._note_rate(now)
            self.on_samples(self.segment, t, w)
        elif self.measuring and self.last_t is not None and now - self._quiet_since > PROBE_AFTER_S:
            self._quiet_since = now
            last, _ = self._last_time()
            if last is None or last < self.last_t:
                self._new_segment()  # the buffers were emptied, or the time went back

    def _note_rate(self, now: float) -> None:
        self._rate_marks.append((now, self.samples))
        while len(self._rate_marks) > 2 and now - self._rate_marks[0][0] > 2.0:
            self._rate_marks.pop(0)
        (t0, n0), (t1, n1) = self._rate_marks[0], self._rate_marks[-1]
        self.rate_hz = (n1 - n0) / (t1 - t0) if t1 > t0 else self.rate_hz

    def run(self, should_stop) -> None:
        """Poll until ``should_stop()`` (checked at least every 50 ms while waiting)."""
        backoff = BACKOFF_FIRST_S
        while not should_stop():
            began = time.monotonic()
            try:
                self.poll()
                backoff = BACKOFF_FIRST_S
                period = POLL_MEASURING_S if self.measuring else POLL_IDLE_S
            except PhoneError as err:
                self.connected = False
                self.on_event({"event": "reconnecting", "error": str(err)})
                period = backoff
                backoff = min(backoff * BACKOFF_FACTOR, BACKOFF_MAX_S)
            _wait(began + period, should_stop)


def _wait(until: float, should_stop) -> None:
    while not should_stop():
        left = until - time.monotonic()
        if left <= 0:
            return
        time.sleep(min(left, 0.05))
