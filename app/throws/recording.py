"""Gyroscope recordings: phyphox folders and zips, single CSV files; pauses and saturated samples.

Formats read (all give time in s and rates in rad/s, sensor frame):

- a phyphox export, as a folder or a ``.zip`` of it: ``Raw Data.csv`` with the columns
  ``"Time (s)","Gyroscope x (rad/s)","Gyroscope y (rad/s)","Gyroscope z (rad/s)","Absolute (rad/s)"``
  and ``meta/time.csv`` with ``START``/``PAUSE`` events (the time axis runs on across a pause,
  so samples on both sides of one look contiguous: each START..PAUSE stretch is a segment,
  and a flight never spans two);
- one CSV file: phyphox's "Gyroscope rotation rate" export, any comma, tab or semicolon
  (decimal comma) separated file whose header names a time and three rates, or ``t,wx,wy,wz``.
"""

from __future__ import annotations

import csv
import io
import math
import re
import zipfile
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from ..physics.errors import ParameterError

#: a rate component at or above this magnitude (rad/s) is taken as clipped: phone gyroscopes
#: saturate at 2000 deg/s = 34.9 rad/s, and the last half rad/s before it is not trusted
SATURATION_RAD_S = 34.5
#: a plateau at the recording's largest magnitude counts as clipping only above this rate
#: (rad/s): slower sensors clip at 250, 500 or 1000 deg/s (4.4, 8.7, 17.5 rad/s)
PLATEAU_MIN_RAD_S = 4.0
#: fewest samples a recording must hold
MIN_SAMPLES = 10
PHYPHOX_DATA = "Raw Data.csv"
PHYPHOX_TIME = "meta/time.csv"

_UNIT_SCALE = {"rad/s": 1.0, "deg/s": math.pi / 180.0, "°/s": math.pi / 180.0, "dps": math.pi / 180.0}
_TIME_SCALE = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
_TIME_NAMES = ("t", "time", "timestamp", "seconds", "elapsed time", "experiment time")
_RATE_WORDS = r"(?:gyroscope|gyro|gyr|rotation rate|angular velocity|angular rate|rate|omega|w|g)"


@dataclass(frozen=True)
class Recording:
    """One recording: ``t`` (N,) s, strictly increasing; ``w`` (N, 3) rad/s, sensor frame;
    ``segment`` (N,) the START..PAUSE stretch each sample belongs to; ``saturated`` (N,)
    samples with a clipped component (kept for display, left out of every fit)."""

    name: str
    t: np.ndarray
    w: np.ndarray
    segment: np.ndarray
    saturated: np.ndarray

    @cached_property
    def clipped(self) -> np.ndarray:
        """(N, 3) which components of each sample are clipped."""
        return clipped_components(self.w)

    @property
    def duration(self) -> float:
        return float(self.t[-1] - self.t[0])

    def segment_bounds(self) -> list[tuple[int, int]]:
        """(first, last + 1) sample index of each segment, in time order."""
        cuts = np.flatnonzero(np.diff(self.segment) != 0) + 1
        starts = np.concatenate(([0], cuts))
        ends = np.concatenate((cuts, [len(self.t)]))
        return list(zip(starts.tolist(), ends.tolist()))


def read_recording(path, name: str | None = None) -> Recording:
    """Read a phyphox folder or zip, or a CSV file; raises :class:`ParameterError` (one line)."""
    p = Path(path)
    label = name or str(path)
    if p.is_dir():
        data = p / PHYPHOX_DATA
        if not data.is_file():
            raise ParameterError("recording", str(path), f"be a phyphox folder holding {PHYPHOX_DATA!r}, "
                                 "a .zip of one, or a CSV file")
        events = _read_text(p / PHYPHOX_TIME, str(p / PHYPHOX_TIME)) if (p / PHYPHOX_TIME).is_file() else None
        return _build(label, _read_text(data, str(data)), events, str(data))
    if not p.is_file():
        raise ParameterError("recording", str(path), "be an existing phyphox folder, .zip or CSV file")
    if zipfile.is_zipfile(p):
        return _read_zip(p, label)
    return _build(label, _read_text(p, str(p)), None, str(p))


def _read_text(path: Path, where: str) -> str:
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise ParameterError("recording", where, f"be readable ({err.strerror or err})") from None
    return _decode(raw, where)


def _decode(raw: bytes, where: str) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ParameterError("recording", where, "be a UTF-8 text file") from None


def _read_zip(path: Path, label: str) -> Recording:
    try:
        with zipfile.ZipFile(path) as zf:
            names = [n for n in zf.namelist() if not n.endswith("/")]
            data = [n for n in names if n.rsplit("/", 1)[-1] == PHYPHOX_DATA]
            if len(data) != 1:
                raise ParameterError("recording", str(path), f"be a phyphox .zip holding one {PHYPHOX_DATA!r}")
            prefix = data[0][: -len(PHYPHOX_DATA)]
            text = _decode(zf.read(data[0]), f"{path}:{data[0]}")
            time_name = prefix + PHYPHOX_TIME
            events = _decode(zf.read(time_name), f"{path}:{time_name}") if time_name in names else None
    except (zipfile.BadZipFile, OSError) as err:
        raise ParameterError("recording", str(path), f"be a readable .zip ({err})") from None
    return _build(label, text, events, f"{path}:{data[0]}")


def _build(label: str, text: str, events: str | None, where: str) -> Recording:
    t, w = parse_rates_csv(text, where)
    segment = _segments(t, events, where) if events is not None else np.zeros(len(t), dtype=np.int64)
    return Recording(label, t, w, segment, saturated_samples(w))


# ------------------------------------------------------------------ CSV


def _split_header(line: str) -> tuple[str, list[str]]:
    """The delimiter of a header line and its stripped field names."""
    delimiter = "\t" if "\t" in line else (";" if ";" in line else ",")
    fields = next(csv.reader([line], delimiter=delimiter))
    return delimiter, [f.strip().strip('"').strip() for f in fields]


def _name_and_unit(field: str) -> tuple[str, str | None]:
    """``"Gyroscope x (rad/s)"`` -> ``("gyroscope x", "rad/s")``; names are lower case."""
    m = re.match(r"^(.*?)\s*[\(\[]\s*([^\)\]]*)\s*[\)\]]\s*$", field)
    if m:
        return m.group(1).strip().lower(), m.group(2).strip().lower()
    return field.strip().lower(), None


def identify_columns(fields: list[str], where: str = "recording") -> tuple[int, float, list[int], list[float]]:
    """Column index and unit scale of the time and of the x, y, z rates, from header names.

    Accepted: a time named ``t``, ``time``, ``timestamp`` (unit s or ms in brackets) and rates
    named like ``wx``, ``omega_x``, ``gyro x``, ``Gyroscope x (rad/s)``, ``x`` (rad/s, or
    deg/s when the header says so).
    """
    parsed = [_name_and_unit(f) for f in fields]
    time_col = next((i for i, (n, _) in enumerate(parsed) if n in _TIME_NAMES), None)
    rate_cols, scales = [], []
    for axis in "xyz":
        pattern = re.compile(rf"^(?:{_RATE_WORDS}[\s_\-]*)?{axis}$")
        found = [i for i, (n, _) in enumerate(parsed) if i != time_col and pattern.match(n)]
        if len(found) != 1:
            rate_cols = None
            break
        rate_cols.append(found[0])
    if time_col is None or rate_cols is None:
        raise ParameterError(f"{where} header", ",".join(fields),
                             "name a time and three rates (t,wx,wy,wz or \"Time (s)\",\"Gyroscope x (rad/s)\",...)")
    t_unit = parsed[time_col][1] or "s"
    if t_unit not in _TIME_SCALE:
        raise ParameterError(f"{where} column {fields[time_col]!r}", t_unit, "be in s or ms")
    for i in rate_cols:
        unit = parsed[i][1] or "rad/s"
        if unit not in _UNIT_SCALE:
            raise ParameterError(f"{where} column {fields[i]!r}", unit, "be in rad/s or deg/s")
        scales.append(_UNIT_SCALE[unit])
    return time_col, _TIME_SCALE[t_unit], rate_cols, scales


def parse_rates_csv(text: str, where: str = "recording") -> tuple[np.ndarray, np.ndarray]:
    """(t, w) from CSV text with a header; every bad row is a one-line :class:`ParameterError`."""
    lines = text.splitlines()
    first = next((k for k, line in enumerate(lines) if line.strip()), None)
    if first is None:
        raise ParameterError("recording", where, "not be empty (a header and rows of time and three rates)")
    delimiter, fields = _split_header(lines[first])
    time_col, t_scale, rate_cols, scales = identify_columns(fields, where)
    cols = [time_col, *rate_cols]
    body = [line for line in lines[first + 1:] if line.strip()]
    if not body:
        raise ParameterError("recording", where, "hold rows of data below its header")
    rows = list(csv.reader(io.StringIO("\n".join(body)), delimiter=delimiter))
    need = max(cols) + 1
    try:
        cells = [[row[c] for c in cols] for row in rows]
        if delimiter == ";":
            cells = [[c.replace(",", ".") for c in row] for row in cells]
        values = np.array(cells, dtype=float)
    except (IndexError, ValueError):
        values = None
    if values is None:  # find the first bad row to name it
        for k, row in enumerate(rows):
            if len(row) < need:
                raise ParameterError(f"{where} row {first + 2 + k}", delimiter.join(row),
                                     f"have at least {need} fields") from None
            for c in cols:
                cell = row[c].strip().replace(",", ".") if delimiter == ";" else row[c].strip()
                try:
                    float(cell)
                except ValueError:
                    raise ParameterError(f"{where} row {first + 2 + k} column {fields[c]!r}", row[c],
                                         "be a number") from None
        raise ParameterError("recording", where, "hold only numbers below its header")  # pragma: no cover
    bad = ~np.isfinite(values)
    if bad.any():
        k, c = np.argwhere(bad)[0]
        raise ParameterError(f"{where} row {first + 2 + k} column {fields[cols[c]]!r}", rows[k][cols[c]],
                             "be a finite number")
    t = values[:, 0] * t_scale
    w = values[:, 1:4] * np.array(scales)
    steps = np.diff(t)
    if np.any(steps <= 0):
        k = int(np.argmax(steps <= 0)) + 1
        raise ParameterError(f"{where} row {first + 2 + k} time", float(values[k, 0]),
                             f"increase (the row before has {values[k - 1, 0]:.10g})")
    if len(t) < MIN_SAMPLES:
        raise ParameterError("recording", where, f"hold at least {MIN_SAMPLES} samples, got {len(t)}")
    return t, w


def _segments(t: np.ndarray, events_text: str, where: str) -> np.ndarray:
    """Segment index of each sample from phyphox ``meta/time.csv`` (START/PAUSE events)."""
    lines = [line for line in events_text.splitlines() if line.strip()]
    if not lines:
        return np.zeros(len(t), dtype=np.int64)
    delimiter, fields = _split_header(lines[0])
    names = [f.lower() for f in fields]
    if "event" not in names or "experiment time" not in names:
        raise ParameterError(f"{where} events header", ",".join(fields), 'name "event" and "experiment time"')
    ie, it = names.index("event"), names.index("experiment time")
    starts, pauses = [], []
    for k, row in enumerate(csv.reader(io.StringIO("\n".join(lines[1:])), delimiter=delimiter)):
        try:
            event, when = row[ie].strip().upper(), float(row[it].replace(",", ".") if delimiter == ";" else row[it])
        except (IndexError, ValueError):
            raise ParameterError(f"{where} events row {k + 2}", delimiter.join(row),
                                 "hold an event and its experiment time") from None
        if not math.isfinite(when):
            raise ParameterError(f"{where} events row {k + 2} experiment time", row[it], "be a finite number")
        if event == "START":
            starts.append(when)
        elif event == "PAUSE":
            pauses.append(when)
    # every START after the first opens a new segment; a PAUSE closes the current one, and
    # the time axis runs on across it, so the next START is where the next segment begins
    cuts = sorted(set(starts[1:]) | set(pauses))
    return np.searchsorted(np.asarray(cuts, dtype=float), t, side="right").astype(np.int64)


# ------------------------------------------------------------------ saturation


#: samples within this relative distance of the recording's largest magnitude sit at its top,
#: and PLATEAU_COUNT of them (any component, any sign) mark the sensor's range
PLATEAU_TOLERANCE = 1e-4
PLATEAU_COUNT = 3


def clipped_components(w: np.ndarray) -> np.ndarray:
    """(N, 3) components taken as clipped, judged per recording from its own data: at or above
    :data:`SATURATION_RAD_S`; at the recording's largest magnitude over all components when
    that value (within PLATEAU_TOLERANCE) occurs PLATEAU_COUNT times or more (a sensor's range,
    whatever it is: 17.45 rad/s = 1000 deg/s on many Android phones, 34.9 on iPhones; a real
    peak is not repeated to the last digit); or on a plateau (two or more consecutive samples)
    at the largest magnitude of that component."""
    a = np.abs(np.asarray(w, dtype=float))
    clipped = a >= SATURATION_RAD_S
    if not a.size:
        return clipped
    top = float(a.max())
    if top >= PLATEAU_MIN_RAD_S:
        at_top = a >= top * (1.0 - PLATEAU_TOLERANCE)
        if int(at_top.sum()) >= PLATEAU_COUNT:
            clipped |= at_top
    for k in range(3):
        top = float(a[:, k].max())
        if top < PLATEAU_MIN_RAD_S:
            continue
        at_top = a[:, k] >= top * (1.0 - 1e-9)
        padded = np.concatenate(([False], at_top, [False]))
        if np.any(at_top & (padded[:-2] | padded[2:])):  # two neighbours at the top: a plateau
            clipped[:, k] |= at_top
    return clipped


def saturated_samples(w: np.ndarray) -> np.ndarray:
    """Samples with a clipped component (see :func:`clipped_components`)."""
    return clipped_components(w).any(axis=1)
