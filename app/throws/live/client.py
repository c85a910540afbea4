"""A phone's gyroscope, live: a small, careful client of phyphox's remote access.

phyphox (RWTH Aachen's phone app) serves a running experiment over HTTP when "Allow remote
access" is on: ``/config`` names the buffers, ``/get?gyr_time=T&gyrX=T|gyr_time...`` answers
the values past T (see :mod:`.phyphox_server` for the protocol as phyphox's sources show it).
The PyPI package ``phyphox-py`` was not used: it opens every URL without a timeout, reads
answers of any size, lets urllib follow redirects to any host, takes only IP addresses, and
notices neither a clear nor a new session.

This client talks to the one host of its URL, one request at a time on a fresh connection
(phyphox breaks on kept-alive ones), each under one deadline for connect, headers and body
together that no peer can stretch (a phone that drips its answer a byte at a time meets it as
surely as a silent one), and a stop asked for (Ctrl+C, ``--duration``, the window's Disconnect)
ends a request within STOP_SLICE_S; answers are bounded in bytes, samples and numbers (a value
that cannot be a float is a bad answer); it follows no redirect and evaluates nothing
(``json.loads`` only). :class:`PhoneStream` polls, reconnects
with a short back-off, and cuts the stream into segments where the phone's time restarts (a
clear) or its session changes (the experiment was reloaded).

Events it reports (dicts, as ``tumble live --json`` prints them): ``connected`` (title,
session), ``reconnecting`` (error), ``cleared`` (segment).
"""

from __future__ import annotations

import errno
import ipaddress
import json
import math
import os
import re
import select
import socket
import threading
import time
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

import numpy as np

from ...physics.errors import ParameterError
from ...scenario.schema import MAX_MAGNITUDE
from ..recordings.limits import MAX_RATE_RAD_S, MIN_SPACING_S

#: the longest a request may wait for its next byte (s): a dropped Wi-Fi leaves requests
#: hanging rather than refused
REQUEST_TIMEOUT_S = 1.0
#: the longest one request may take (s), connect, headers and body together, however its
#: bytes trickle in (a monotonic deadline; every wait inside is cut from it)
ANSWER_DEADLINE_S = 8.0
#: a stop asked for is noticed this often during a request (s)
STOP_SLICE_S = 0.05
#: the largest answer read (bytes): five minutes of a 400 Hz gyroscope's four buffers
MAX_ANSWER_BYTES = 16 * 1024 * 1024
#: the largest status line and headers read (bytes)
MAX_HEADER_BYTES = 64 * 1024
#: most samples in one answer: what MAX_ANSWER_BYTES holds at phyphox's 8 significant digits
#: (13 characters a value, 4 buffers), so that an answer of short numbers ("0,0,0,...") does not
#: hold six times as many; a phone that measured through a half-hour outage at 100 Hz still
#: catches up in one answer
MAX_ANSWER_SAMPLES = 320_000
#: longest number in an answer (characters): phyphox writes 8 significant digits
MAX_NUMBER_CHARS = 40
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
#: most samples a session holds (then it stops, saying so): what ``tumble fit`` reads of one
#: recording, 5.5 hours at 100 Hz (64 MB of samples)
MAX_HELD_SAMPLES = 2_000_000
#: the phone's time may run at most this many times faster than real time (after the first
#: answer's backlog, and AHEAD_SLACK_S more): a replay at 8x still passes, a flood does not
MAX_TIME_RATE = 20.0
AHEAD_SLACK_S = 10.0


class PhoneError(Exception):
    """A request that failed: the message is one short line."""


class Stopped(PhoneError):
    """A request given up because a stop was asked for (no reconnect follows)."""


#: a host name's label (RFC 1123): letters, digits and inner hyphens, at most 63 characters
_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)", re.ASCII)
#: the characters a URL's path may hold as they are (RFC 3986 pchar and '/'; '%' escapes)
_PATH = re.compile(r"(?:[A-Za-z0-9._~!$&'()*+,;=:@/-]|%[0-9A-Fa-f]{2})*", re.ASCII)


def parse_url(url: str) -> tuple[str, int, str]:
    """(host, port, path prefix) of a phyphox URL such as ``http://192.168.1.23:8080``;
    raises :class:`ParameterError` naming ``URL``: a host name of RFC 1123 labels (each at most
    63 characters, 253 in all) or an IP address, a port from 1 to 65535, a path of plain URL
    characters (no space or control character)."""
    text = str(url).strip()
    if any(c.isspace() or not c.isprintable() for c in text):  # urlsplit would drop CR, LF and tabs unseen
        raise ParameterError("URL", url, "have a path of plain URL characters (no space or control character)")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        raise ParameterError("URL", url, "be http://HOST:PORT as phyphox shows it (a port from 1 to 65535)") from None
    if parts.scheme != "http" or not parts.hostname:
        raise ParameterError("URL", url, "be http://HOST:PORT as phyphox shows it (http only)")
    if parts.username or parts.password or parts.query or parts.fragment or "?" in text or "#" in text:
        raise ParameterError("URL", url, "hold no user, query or fragment (http://HOST:PORT)")
    host = parts.hostname
    try:
        ipaddress.ip_address(host)
    except ValueError:
        if len(host) > 253 or not all(_LABEL.fullmatch(label) for label in host.rstrip(".").split(".")):
            raise ParameterError("URL", url, "name a host of letters, digits and hyphens (labels of at most 63 "
                                             "characters, 253 in all) or an IP address") from None
    if port is not None and not 1 <= port <= 65535:
        raise ParameterError("URL", url, "name a port from 1 to 65535")
    if ":" in parts.netloc.rsplit("]", 1)[-1] and port is None:
        raise ParameterError("URL", url, "name a port from 1 to 65535 after its ':'")
    if not _PATH.fullmatch(parts.path):
        raise ParameterError("URL", url, "have a path of plain URL characters (no space or control character)")
    return host, port or 80, parts.path.rstrip("/")


class PhyphoxClient:
    """One request at a time to one host: fresh connection, one deadline, bounded answer, JSON only."""

    def __init__(self, url: str, timeout: float = REQUEST_TIMEOUT_S, max_bytes: int = MAX_ANSWER_BYTES,
                 deadline: float = ANSWER_DEADLINE_S):
        self.host, self.port, self.prefix = parse_url(url)
        self.timeout, self.max_bytes, self.deadline = timeout, max_bytes, deadline

    def get_json(self, path: str, should_stop=None) -> dict:
        """The JSON object the phone answers to ``path``; raises :class:`PhoneError`, and
        :class:`Stopped` within STOP_SLICE_S of ``should_stop()`` turning true."""
        body = self.get(path, should_stop)
        try:
            data = json.loads(body, parse_int=_number, parse_constant=lambda _name: None)
        except (ValueError, RecursionError):
            raise PhoneError(f"answer is not JSON ({len(body)} bytes)") from None
        if not isinstance(data, dict):
            raise PhoneError("answer is not a JSON object")
        return data

    def get(self, path: str, should_stop=None) -> bytes:
        """The body of a 200 answer to ``path`` (at most ``max_bytes``), within ``deadline`` s."""
        wire = _Wire(self.deadline, self.timeout, should_stop or (lambda: False))
        sock = wire.connect(self.host, self.port)
        try:
            target = self.prefix + path
            host = f"[{self.host}]" if ":" in self.host else self.host  # an IPv6 address
            wire.send(sock, (f"GET {target} HTTP/1.1\r\nHost: {host}:{self.port}\r\n"
                             "Connection: close\r\nAccept: application/json\r\n\r\n").encode("ascii"))
            reader = _Reader(sock, wire)
            status, headers = _head(reader.until_blank(MAX_HEADER_BYTES))
            if status != 200:
                where = (f" to {headers.get('location', '?')[:80]!r} (not followed)" if 300 <= status < 400 else "")
                raise PhoneError(f"HTTP {status}{where}")
            if "chunked" in headers.get("transfer-encoding", "").lower():
                return reader.chunked(self.max_bytes)
            declared = headers.get("content-length")
            if declared is not None:
                if not declared.strip().isdigit() or len(declared.strip()) > 12:
                    raise PhoneError("answer has a Content-Length that is no number")
                if int(declared) > self.max_bytes:
                    raise PhoneError(f"answer of {int(declared)} bytes, over the {self.max_bytes} read")
                return reader.exactly(int(declared))
            return reader.to_close(self.max_bytes)
        except OSError as err:
            raise PhoneError(_describe(err)) from None
        finally:
            sock.close()


def _number(text: str) -> float:
    """An integer of a phone's answer, as a float: at most MAX_NUMBER_CHARS characters, finite
    and at most MAX_MAGNITUDE in magnitude (float() of 10**400 overflows). Decimal numbers are
    read by json's own float (fast; one past a float's range reads as an infinity, which
    :func:`columns` refuses like this)."""
    if len(text) > MAX_NUMBER_CHARS:
        raise PhoneError(f"answer holds a number of {len(text)} characters (at most {MAX_NUMBER_CHARS})")
    value = float(text)
    if not math.isfinite(value) or abs(value) > MAX_MAGNITUDE:
        raise PhoneError(f"answer holds a number beyond {MAX_MAGNITUDE:g} in magnitude")
    return value


class _Wire:
    """The one deadline of a request and the stop check every wait inside it is cut from."""

    def __init__(self, deadline_s: float, silence_s: float, should_stop):
        self.deadline_s, self.silence_s, self.should_stop = deadline_s, silence_s, should_stop
        self.deadline = time.monotonic() + deadline_s
        self.heard = time.monotonic()

    def slice(self) -> float:
        """The next wait (s): at most STOP_SLICE_S, never past the deadline nor the silence allowed."""
        if self.should_stop():
            raise Stopped("stopped")
        now = time.monotonic()
        if now >= self.deadline:
            raise PhoneError(f"answer took over {self.deadline_s:g} s")
        if now - self.heard >= self.silence_s:
            raise PhoneError("no answer (timed out)")
        return max(1e-3, min(STOP_SLICE_S, self.deadline - now, self.heard + self.silence_s - now))

    def resolve(self, host: str, port: int):
        """getaddrinfo's first TCP address, looked up in a helper thread (it takes no timeout)."""
        try:
            ip = ipaddress.ip_address(host)
            return (socket.AF_INET6 if ip.version == 6 else socket.AF_INET), (host, port)
        except ValueError:
            pass
        found: list = []

        def look():
            try:
                found.append(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
            except (OSError, UnicodeError) as err:
                found.append(err)

        helper = threading.Thread(target=look, name="tumble-live-resolve", daemon=True)
        helper.start()
        while helper.is_alive():
            helper.join(self.slice())
        self.heard = time.monotonic()
        answer = found[0] if found else OSError("no address")
        if isinstance(answer, Exception) or not answer:
            raise PhoneError(f"no address for {host} ({_describe(answer) if isinstance(answer, Exception) else 'none'})")
        family, _, _, _, address = answer[0]
        return family, address

    def connect(self, host: str, port: int) -> socket.socket:
        family, address = self.resolve(host, port)
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setblocking(False)
            err = sock.connect_ex(address)
            while err not in (0, errno.EISCONN):
                if err not in (errno.EINPROGRESS, errno.EALREADY, errno.EWOULDBLOCK):
                    raise PhoneError(_describe(_os_error(err)))
                _, ready, _ = select.select([], [sock], [], self.slice())
                if ready:
                    err = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                    if err == 0:
                        break
                    raise PhoneError(_describe(_os_error(err)))
            self.heard = time.monotonic()
            return sock
        except BaseException:
            sock.close()
            raise

    def send(self, sock: socket.socket, data: bytes) -> None:
        view = memoryview(data)
        while view:
            sock.settimeout(self.slice())
            try:
                sent = sock.send(view)
            except (socket.timeout, BlockingIOError):
                continue
            view = view[sent:]
            self.heard = time.monotonic()

    def recv(self, sock: socket.socket, size: int) -> bytes:
        while True:
            sock.settimeout(self.slice())
            try:
                data = sock.recv(size)
            except (socket.timeout, BlockingIOError):
                continue
            self.heard = time.monotonic()
            return data


def _os_error(err: int) -> OSError:
    return (ConnectionRefusedError if err == errno.ECONNREFUSED else OSError)(err, os.strerror(err))


class _Reader:
    """An answer's bytes through one :class:`_Wire`: lines, exact lengths, chunks, to the close."""

    def __init__(self, sock, wire: _Wire):
        self.sock, self.wire, self.buf = sock, wire, bytearray()

    def _more(self, want: int = 64 * 1024) -> bool:
        data = self.wire.recv(self.sock, want)
        self.buf += data
        return bool(data)

    def until_blank(self, limit: int) -> bytes:
        while True:
            at = self.buf.find(b"\r\n\r\n")
            if at >= 0:
                head = bytes(self.buf[:at])
                del self.buf[:at + 4]
                return head
            if len(self.buf) > limit:
                raise PhoneError(f"answer's headers over {limit} bytes")
            if not self._more():
                raise PhoneError("connection closed without an answer")

    def exactly(self, n: int) -> bytes:
        while len(self.buf) < n:
            if not self._more(min(64 * 1024, n - len(self.buf))):
                raise PhoneError(f"answer cut short ({len(self.buf)} of {n} bytes)")
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def to_close(self, limit: int) -> bytes:
        while self._more():
            if len(self.buf) > limit:
                raise PhoneError(f"answer over the {limit} bytes read")
        if len(self.buf) > limit:
            raise PhoneError(f"answer over the {limit} bytes read")
        return bytes(self.buf)

    def _line(self) -> bytes:
        while True:
            at = self.buf.find(b"\r\n")
            if at >= 0:
                line = bytes(self.buf[:at])
                del self.buf[:at + 2]
                return line
            if len(self.buf) > 1024:
                raise PhoneError("answer's chunk header is too long")
            if not self._more():
                raise PhoneError("answer cut short")

    def chunked(self, limit: int) -> bytes:
        out = bytearray()
        while True:
            size_text = self._line().split(b";", 1)[0].strip()
            if not size_text or len(size_text) > 8 or not all(c in b"0123456789abcdefABCDEF" for c in size_text):
                raise PhoneError("answer's chunk size is no number")
            size = int(size_text, 16)
            if size == 0:
                return bytes(out)
            if len(out) + size > limit:
                raise PhoneError(f"answer over the {limit} bytes read")
            out += self.exactly(size)
            self.exactly(2)


def _head(head: bytes) -> tuple[int, dict]:
    """(status, lower-cased headers) of an answer's status line and headers."""
    lines = head.decode("latin-1").split("\r\n")
    first = lines[0].split(" ", 2)
    if len(first) < 2 or not first[0].startswith("HTTP/") or not (first[1].isdigit() and len(first[1]) == 3):
        raise PhoneError("answer is not HTTP")
    headers = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return int(first[1]), headers


def _describe(err: Exception) -> str:
    if isinstance(err, (socket.timeout, TimeoutError)):
        return "no answer (timed out)"
    if isinstance(err, ConnectionRefusedError):
        return "connection refused (is remote access on?)"
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
    non-finite value are dropped. An answer of more than MAX_ANSWER_SAMPLES samples, a rate
    beyond MAX_RATE_RAD_S or stamps closer than MIN_SPACING_S (faster than any gyroscope
    samples) is a bad answer (:class:`PhoneError`)."""
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
        if len(values) > MAX_ANSWER_SAMPLES:
            raise PhoneError(f"answer of {len(values)} samples, over the {MAX_ANSWER_SAMPLES} taken from one answer")
        if not all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in values):
            raise PhoneError(f"buffer {names[key]!r} holds something other than numbers")
        cols.append(np.array([math.nan if v is None else v for v in values], dtype=float))
    n = min(len(c) for c in cols)
    data = np.stack([c[:n] for c in cols], axis=1) if n else np.empty((0, 4))
    if np.isinf(data).any() or (np.abs(data[np.isfinite(data)]) > MAX_MAGNITUDE).any():  # null is NaN, not inf
        raise PhoneError(f"answer holds a number beyond {MAX_MAGNITUDE:g} in magnitude")
    data = data[np.all(np.isfinite(data), axis=1)]
    if len(data) and float(np.max(np.abs(data[:, 1:4]))) > MAX_RATE_RAD_S:
        raise PhoneError(f"answer holds a rate of {float(np.max(np.abs(data[:, 1:4]))):.3g} rad/s, beyond the "
                         f"{MAX_RATE_RAD_S:g} rad/s a gyroscope reads")
    if len(data) > 2:
        steps = np.diff(data[:, 0])
        steps = steps[steps > 0]
        if len(steps) and float(np.median(steps)) < MIN_SPACING_S:
            raise PhoneError(f"answer's stamps are {float(np.median(steps)):.3g} s apart, closer than the "
                             f"{MIN_SPACING_S:g} s of any gyroscope")
    return data[:, 0], data[:, 1:4], mode


def _value(x: float) -> str:
    return repr(float(x))


class PhoneStream:
    """Polls a phone and hands on its samples, segment by segment.

    ``on_event(dict)`` gets ``connected``, ``reconnecting``, ``cleared`` and, when a bound of
    the session is hit, ``stopped`` (reason) before :meth:`run` returns; ``on_samples(segment,
    t, w)`` every new run of samples (times strictly increasing within a segment). Both are
    called from the thread that runs :meth:`run`.
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
        self._origin: tuple[float, float] | None = None   # (phone time, wall time) of the segment's first sample
        self.should_stop = lambda: False
        self.stopped: str | None = None       # the bound that ended the session, if one did

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
        answer = self.client.get_json(f"/get?{quote(self.names['t'], safe='')}=", self.should_stop)
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
        self._origin = None

    def _connect(self) -> None:
        config = self.client.get_json("/config", self.should_stop)
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
        answer = self.client.get_json(self._query(self.after), self.should_stop)
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
            self._check_pace(t, now)
            if self.samples + len(t) > MAX_HELD_SAMPLES:
                t, w = t[:MAX_HELD_SAMPLES - self.samples], w[:MAX_HELD_SAMPLES - self.samples]
                self.stopped = (f"{MAX_HELD_SAMPLES:,} samples held, the most a session keeps (what tumble fit "
                                "reads of one recording)")
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

    def _check_pace(self, t: np.ndarray, now: float) -> None:
        """Refuse samples whose time runs far ahead of real time (a bad answer)."""
        if self._origin is None:
            self._origin = (float(t[0]), now)
        t0, wall0 = self._origin
        allowed = BACKLOG_S + AHEAD_SLACK_S + MAX_TIME_RATE * (now - wall0)
        if float(t[-1]) - t0 > allowed:
            raise PhoneError(f"the phone's time ran {float(t[-1]) - t0:.4g} s in {now - wall0:.1f} s of real time "
                             f"(at most {MAX_TIME_RATE:g}x real time after a backlog of {BACKLOG_S:g} s)")

    def _note_rate(self, now: float) -> None:
        self._rate_marks.append((now, self.samples))
        while len(self._rate_marks) > 2 and now - self._rate_marks[0][0] > 2.0:
            self._rate_marks.pop(0)
        (t0, n0), (t1, n1) = self._rate_marks[0], self._rate_marks[-1]
        self.rate_hz = (n1 - n0) / (t1 - t0) if t1 > t0 else self.rate_hz

    def run(self, should_stop) -> None:
        """Poll until ``should_stop()`` (checked at least every STOP_SLICE_S, inside a request
        too) or a bound of the session is hit (a ``stopped`` event names it)."""
        self.should_stop = should_stop
        backoff = BACKOFF_FIRST_S
        while not should_stop():
            began = time.monotonic()
            try:
                self.poll()
                backoff = BACKOFF_FIRST_S
                period = POLL_MEASURING_S if self.measuring else POLL_IDLE_S
            except Stopped:
                return
            except PhoneError as err:
                self.connected = False
                self.on_event({"event": "reconnecting", "error": str(err)})
                period = backoff
                backoff = min(backoff * BACKOFF_FACTOR, BACKOFF_MAX_S)
            if self.stopped is not None:
                self.on_event({"event": "stopped", "reason": self.stopped})
                return
            _wait(began + period, should_stop)


def _wait(until: float, should_stop) -> None:
    while not should_stop():
        left = until - time.monotonic()
        if left <= 0:
            return
        time.sleep(min(left, 0.05))
