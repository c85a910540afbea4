"""Gyroscope recordings: which file of an export holds the rates, its segments (pauses and gaps), clipped samples.

Read (all give time in s and rates in rad/s, sensor frame; the table formats are in
:mod:`.formats`, the bounds in :mod:`.limits`):

- a phyphox export, as a folder or a ``.zip`` of it, from Android or iOS: ``Raw Data.csv``
  (``"Time (s)","Gyroscope x (rad/s)",...``) and ``meta/time.csv`` with ``START``/``PAUSE``
  events (the time axis runs on across a pause, so samples on both sides of one look
  contiguous: each START..PAUSE stretch is a segment, and a flight never spans two);
- phyphox's single-file export ("Gyroscope rotation rate.csv"), a Sensor Logger export
  (``Gyroscope.csv`` alone or in its folder or zip), or any table of a time and three rates;
- an Excel file (``.xls``, ``.xlsx``) is not read: the CSV of the same name beside it is (phyphox
  exports both), once, with a note, also when both are given.

A step between stamps of more than :data:`~.limits.GAP_SPACINGS` median spacings (and
:data:`~.limits.GAP_MIN_S`) also ends a segment: nothing is differentiated or integrated across a gap.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import os
import zipfile
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from ...physics.errors import ParameterError
from . import limits as lim
from .formats import read_table
from .samples import find as find_sample

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
#: spreadsheet files: never read, the CSV export of the same name is
EXCEL_SUFFIXES = (".xls", ".xlsx", ".ods")
#: files of a folder or zip that may hold a table
TABLE_SUFFIXES = (".csv", ".tsv", ".txt", ".dat")
#: most START/PAUSE events read from meta/time.csv
MAX_EVENTS = 10_000
EXPECTED_EXPORT = (f"be a phyphox export (a folder or .zip holding {PHYPHOX_DATA!r}), a .zip or folder holding one "
                   "gyroscope table (Gyroscope.csv), or a table of a time and three rates (.csv, .txt)")


@dataclass(frozen=True)
class Recording:
    """One recording: ``t`` (N,) s, strictly increasing; ``w`` (N, 3) rad/s, sensor frame;
    ``segment`` (N,) the stretch (between pauses and gaps) each sample belongs to;
    ``saturated`` (N,) samples with a clipped component (kept for display, left out of every
    fit); ``notes``: what the reader decided for the user to know (a unit inferred, an epoch
    shifted, an Excel twin skipped); ``t_offset`` (s) was subtracted from the file's stamps."""

    name: str
    t: np.ndarray
    w: np.ndarray
    segment: np.ndarray
    saturated: np.ndarray
    notes: tuple = ()
    t_offset: float = 0.0

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


def check_path(path, field: str = "recording") -> str:
    """``path`` as text if it can name a recording: a str or path-like, not empty (an empty path
    read the current folder), without NUL characters (the system refuses them); else
    :class:`ParameterError` naming ``field``."""
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
        kind = type(path).__name__
        raise ParameterError(field, lim.Said(f"{'an' if kind[:1].lower() in 'aeiou' else 'a'} {kind}"),
                             "be a path (str or pathlib.Path) of a phyphox folder, .zip or CSV file, or a sample's name")
    text = os.fspath(path)
    if not isinstance(text, str):
        raise ParameterError(field, lim.Said(f"a {type(text).__name__} path"), "be a path given as text")
    if not text.strip():
        raise ParameterError(field, text, "be a path (an empty one would read the current folder)")
    if "\0" in text:
        raise ParameterError(field, text, "be a path without NUL characters")
    return text


def read_recordings(paths, check=None) -> list[Recording]:
    """Read every path once: an Excel file whose CSV twin is also given, or a path given twice,
    adds a note to the recording already read instead of a second copy of the same throws.
    ``check()`` is called between chunks (see :func:`read_recording`)."""
    out: list[Recording] = []
    seen: dict[str, int] = {}
    for path in paths:
        check_path(path)
        sample = find_sample(path)
        p = sample.path if sample is not None else Path(path)
        twin = _csv_twin(p)
        key = os.path.realpath(twin or p)
        if key in seen:
            k = seen[key]
            note = f"{p.name} holds the same data as {Path(out[k].name).name}: read once"
            out[k] = dataclasses.replace(out[k], notes=(*out[k].notes, note))
            continue
        seen[key] = len(out)
        out.append(read_recording(path, check=check))
    return out


def read_recording(path, name: str | None = None, check=None) -> Recording:
    """Read a phyphox folder or zip, a table file, or the CSV twin of an Excel file; raises
    :class:`ParameterError` (one line naming the file, never quoting it).

    ``check()``, if given, is called before each chunk of about 4 MB is read: a window's
    Cancel raises from it to stop the reading at once. A shipped sample's name (``tumble
    samples``) that names no file reads that sample, labelled with its name.
    """
    check_path(path)
    sample = find_sample(path)
    if sample is not None:
        return read_recording(sample.path, name or sample.name, check)
    p = Path(path)
    where = str(path)
    if p.suffix.lower() in EXCEL_SUFFIXES:
        twin = _csv_twin(p)
        if twin is None:
            raise lim.refuse(where, "be a CSV export (Tumble reads the CSV phyphox writes beside its Excel file, "
                             "not the Excel file)", "a spreadsheet with no .csv of the same name beside it")
        rec = read_recording(twin, name, check)
        note = f"read {twin.name} beside {p.name} (the same data; the spreadsheet is not read)"
        return dataclasses.replace(rec, notes=(note, *rec.notes))
    label = name or where
    if p.is_dir():
        return _read_folder(p, label, check)
    if not p.exists():
        raise lim.refuse(where, "be an existing phyphox folder, .zip or CSV file",
                         "a link to a missing file" if p.is_symlink() else "no such file")
    with lim.open_regular(p, where) as fh:
        head = fh.read(4)
        fh.seek(0)
        if head in (b"PK\x03\x04", b"PK\x05\x06") or p.suffix.lower() == ".zip":
            return _read_zip(fh, label, where, check)
        events = _events_beside(p)
        return _build(label, lim.read_capped(fh, lim.MAX_BYTES, where, check=check), events, where)


def _events_beside(p: Path) -> str | None:
    """phyphox's events for a ``Raw Data.csv`` given by itself inside its unpacked export."""
    events = p.parent / PHYPHOX_TIME
    if p.name != PHYPHOX_DATA or not events.is_file() or events.parent.is_symlink():
        return None
    with lim.open_regular(events, str(events), follow=False) as ev:
        return _text(lim.read_capped(ev, lim.MAX_META_BYTES, str(events)), str(events))


def _csv_twin(p: Path) -> Path | None:
    """The ``.csv`` beside an Excel file ``p`` (same name), if there is one."""
    if p.suffix.lower() not in EXCEL_SUFFIXES:
        return None
    twin = p.with_suffix(".csv")
    return twin if twin.is_file() else None


def _pick(names: list[str], where: str) -> tuple[str, str | None]:
    """The member holding the rates, and phyphox's events beside it (None without)."""
    files = [n for n in names if not n.endswith("/")]
    base = {n: n.rsplit("/", 1)[-1] for n in files}
    phyphox = [n for n in files if base[n] == PHYPHOX_DATA]
    if len(phyphox) == 1:
        prefix = phyphox[0][: -len(PHYPHOX_DATA)]
        events = prefix + PHYPHOX_TIME
        return phyphox[0], events if events in files else None
    tables = [n for n in files if base[n].lower().endswith(TABLE_SUFFIXES) and "/meta/" not in "/" + n
              and not base[n].startswith(".")]
    gyro = [n for n in tables if "gyro" in base[n].lower() and "uncalibrated" not in base[n].lower()]
    for group in (gyro, tables):
        if len(group) == 1:
            return group[0], None
    found = f"{len(phyphox)} files named {PHYPHOX_DATA!r}" if phyphox else f"{len(tables)} tables"
    raise lim.refuse(where, EXPECTED_EXPORT, found)


def _read_folder(p: Path, label: str, check=None) -> Recording:
    where = str(p)
    names = []
    try:
        with os.scandir(p) as it:
            for entry in it:
                names.append(entry.name)
                if len(names) > lim.MAX_ZIP_ENTRIES:
                    raise lim.refuse(where, f"hold at most {lim.MAX_ZIP_ENTRIES:,} files", "more")
        if (p / "meta").is_symlink():
            raise lim.refuse(str(p / "meta"), "not be a symbolic link (a phyphox export holds plain files)",
                             "a symbolic link")
        if (p / "meta").is_dir():
            names += ["meta/" + n for n in sorted(os.listdir(p / "meta"))[: lim.MAX_ZIP_ENTRIES]]
    except OSError as err:
        raise lim.refuse(where, "be a readable folder", err.strerror or "an unreadable folder") from None
    data, events = _pick(names, where)
    member = p / data
    with lim.open_regular(member, str(member), follow=False) as fh:
        events_text = None
        if events is not None:
            with lim.open_regular(p / events, str(p / events), follow=False) as ev:
                events_text = _text(lim.read_capped(ev, lim.MAX_META_BYTES, str(p / events)), str(p / events))
        return _build(label, lim.read_capped(fh, lim.MAX_BYTES, str(member), check=check), events_text, str(member))


def _read_zip(fh, label: str, where: str, check=None) -> Recording:
    try:
        lim.check_zip_directory(fh, where)
        with zipfile.ZipFile(fh) as zf:
            infos = {i.filename: i for i in zf.infolist()}
            data, events = _pick(list(infos), where)
            inside = f"{where}:{data}"
            events_text = None
            if events is not None:
                info = infos[events]
                lim.check_member(info, f"{where}:{events}", lim.MAX_META_BYTES)
                with lim.BoundedMember(zf, info) as ev:
                    events_text = _text(lim.read_capped(ev, lim.member_cap(info, lim.MAX_META_BYTES),
                                                        f"{where}:{events}"), f"{where}:{events}")
            info = infos[data]
            lim.check_member(info, inside, lim.MAX_BYTES)
            with lim.BoundedMember(zf, info) as stream:
                return _build(label, lim.read_capped(stream, lim.member_cap(info, lim.MAX_BYTES), inside,
                                                     check=check), events_text, inside)
    except ParameterError:
        raise
    except lim.ZIP_ERRORS as err:
        what = ("corrupt compressed data" if isinstance(err, lim.CORRUPT_DATA) else
                "a damaged or unsupported entry" if isinstance(err, (NotImplementedError, RuntimeError)) else
                "a damaged zip")
        raise lim.refuse(where, "be a readable .zip", what) from None


def _text(chunks, where: str) -> str:
    raw = b"".join(chunks)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise lim.refuse(where, "be UTF-8 text", "bytes that are not") from None


def _build(label: str, chunks, events: str | None, where: str) -> Recording:
    t, w, table, offset = read_table(chunks, where)
    if len(t) < MIN_SAMPLES:
        raise lim.refuse(where, f"hold at least {MIN_SAMPLES} samples", f"{len(t)}")
    segment = _segments(t + offset, events, where) if events is not None else np.zeros(len(t), dtype=np.int64)
    segment = split_at_gaps(t, segment, where)
    return Recording(label, t, w, segment, saturated_samples(w), tuple(table.notes), offset)


def split_at_gaps(t: np.ndarray, segment: np.ndarray, where: str = "recording") -> np.ndarray:
    """Segments also end at gaps: a step of more than GAP_SPACINGS median spacings (and GAP_MIN_S)."""
    steps = np.diff(t)
    if len(steps) == 0:
        return segment
    gap = steps > max(lim.GAP_SPACINGS * float(np.median(steps)), lim.GAP_MIN_S)
    out = segment + np.concatenate(([0], np.cumsum(gap)))
    _, first = np.unique(out, return_index=True)
    if len(first) > lim.MAX_SEGMENTS:
        raise lim.refuse(where, f"hold at most {lim.MAX_SEGMENTS:,} segments (pauses and gaps)", f"{len(first):,}")
    return out.astype(np.int64)


def _segments(t: np.ndarray, events_text: str, where: str) -> np.ndarray:
    """Segment index of each sample from phyphox ``meta/time.csv`` (START/PAUSE events);
    ``t`` in the file's own time (before any shift)."""
    where = f"{where} events"
    lines = [line for line in events_text.splitlines() if line.strip()]
    if not lines:
        return np.zeros(len(t), dtype=np.int64)
    if len(lines) > MAX_EVENTS + 1 or max(map(len, lines)) > lim.MAX_LINE_CHARS:
        raise lim.refuse(where, f"hold at most {MAX_EVENTS:,} short lines", "more or longer")
    delimiter = next((d for d in ("\t", ";", ",") if d in lines[0]), ",")
    names = [f.strip().strip('"').strip().lower() for f in next(csv.reader([lines[0]], delimiter=delimiter))]
    if "event" not in names or "experiment time" not in names:
        raise lim.refuse(f"{where} header", 'name "event" and "experiment time"', "other names")
    ie, it = names.index("event"), names.index("experiment time")
    starts, pauses = [], []
    for k, row in enumerate(csv.reader(io.StringIO("\n".join(lines[1:])), delimiter=delimiter)):
        if len(row) <= max(ie, it):
            raise lim.refuse(f"{where} row {k + 2}", "hold an event and its experiment time", f"{len(row)} fields")
        cell = row[it].strip().strip('"')
        cell = cell.replace(",", ".") if delimiter != "," else cell
        if not lim.PLAIN_NUMBER.fullmatch(cell) or abs(float(cell)) > lim.MAX_MAGNITUDE:
            raise lim.refuse(f"{where} row {k + 2} experiment time", "be a plain decimal number",
                             lim.describe_cell(cell) if not lim.PLAIN_NUMBER.fullmatch(cell) else "a larger one")
        event, when = row[ie].strip().strip('"').upper(), float(cell)
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
#: ...one of which recurs, to within this relative distance (the same number in the file: a
#: sensor's range is one reading, written the same way each time), while a smooth peak's samples
#: near its top all differ (a noise-free recording, a steady spin's rate: dozens within
#: PLATEAU_TOLERANCE of its top, microradians per second apart)
REPEAT_TOLERANCE = 1e-12


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
        if int(at_top.sum()) >= PLATEAU_COUNT and _repeats(a[at_top], top):
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


def _repeats(values: np.ndarray, top: float) -> bool:
    """Whether two of ``values`` (the samples at the top) are one reading (within
    REPEAT_TOLERANCE of ``top``; see there)."""
    v = np.sort(values)
    return bool(np.any(np.diff(v) <= REPEAT_TOLERANCE * top))


def saturated_samples(w: np.ndarray) -> np.ndarray:
    """Samples with a clipped component (see :func:`clipped_components`)."""
    return clipped_components(w).any(axis=1)
