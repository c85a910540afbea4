"""Tables of gyroscope rates: the header's names and units, and the rows read in bounded chunks.

A table is a header naming a time and an x, y and z rate, then rows of plain decimal numbers:

- separated by commas, tabs, semicolons or runs of spaces; a decimal comma where the separator
  is not a comma (phyphox's "decimal comma" exports);
- ``#`` lines are comments; a ``#`` line right before the first row may be the header
  (``# t (s)  ωₓ (rad/s)  ω_y (rad/s)  ω_z (rad/s)``); names are compared after Unicode
  NFKC normalisation, so ``ωₓ`` is ``ωx``;
- time in s, ms, us or ns (by its header; without a unit, the one that puts the stamps 0.5 ms
  to 0.5 s apart); a stamp far from zero (an epoch) is shifted to start at 0, integer stamps
  exactly (Sensor Logger's ``time`` in ns since 1970; its ``seconds_elapsed`` is preferred);
- rates in rad/s or deg/s, in any column order, named by axis (``wx``, ``gyro_x``,
  ``Gyroscope x (rad/s)``, ``rotationRateX``, ``ωₓ``, or a bare ``x``).

Rows are parsed by numpy's C reader a chunk at a time (a few MB), so memory grows with the
samples kept, not with the file; a cell that is not a plain number is located only then, and
described (never quoted).
"""

from __future__ import annotations

import codecs
import csv
import re
import unicodedata
from dataclasses import dataclass, field

import numpy as np

from ...physics.errors import ParameterError
from . import limits as lim

_TIME_SCALE = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
_TIME_UNIT_WORDS = {"s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s", "ms": "ms", "msec": "ms",
                    "milliseconds": "ms", "us": "us", "μs": "us", "microseconds": "us", "ns": "ns",
                    "nanoseconds": "ns"}
_DEG = np.pi / 180.0
_RATE_UNITS = {"rad/s": 1.0, "rads-1": 1.0, "1/s": 1.0, "s-1": 1.0, "deg/s": _DEG, "°/s": _DEG, "dps": _DEG,
               "degrees/s": _DEG, "degree/s": _DEG, "degs-1": _DEG, "°s-1": _DEG}
#: time columns, best first: Sensor Logger's seconds_elapsed beats its ns-since-1970 time
_TIME_NAMES = ("seconds elapsed", "elapsed time", "time elapsed", "elapsed", "time since start", "experiment time",
               "t", "time", "timestamp", "seconds", "sec")
_RATE_WORDS = (r"(?:gyroscope|gyro|gyr|motion ?rotation ?rate|rotation ?rate|gyro ?rotation|angular ?velocity|"
               r"angular ?rate|rate|omega|ω|w|g)")
#: lines searched for the header
MAX_HEADER_LINES = 200
EXPECTED = ("name a time and three rates (a time like t, time, seconds_elapsed or \"Time (s)\"; "
            "rates like wx, gyro_x, \"Gyroscope x (rad/s)\" or \"ωₓ (rad/s)\")")
#: an unlabelled time's unit puts the median spacing in [this, 1000 x this) s
_INFERRED_SPACING = 5e-4
#: a stamp this far from zero (s) is an epoch: time is shifted to start at 0
EPOCH_S = 1e6


@dataclass
class Table:
    """What a header says: the delimiter (None: runs of spaces), the columns used and their scales."""

    delimiter: str | None
    decimal_comma: bool
    time_col: int
    time_unit: str | None
    rate_cols: list[int]
    rate_scales: list[float]
    notes: list[str] = field(default_factory=list)

    @property
    def cols(self) -> list[int]:
        return [self.time_col, *self.rate_cols]

    def role(self, k: int) -> str:
        """``column 2 (the x rate)``: a column by number and role, never by its (file's) name."""
        col = self.cols[k]
        return f"column {col + 1} ({'the time' if k == 0 else 'the ' + 'xyz'[k - 1] + ' rate'})"


def normalise(name: str) -> str:
    """A header name compared loosely: NFKC (``ₓ`` -> ``x``), lower case, separators as one space."""
    s = unicodedata.normalize("NFKC", name).replace("\u2212", "-").strip().strip('"').strip().lower()
    return re.sub(r"[\s_.\-:]+", " ", s).strip()


def name_and_unit(field_text: str) -> tuple[str, str | None]:
    """``"Gyroscope x (rad/s)"`` -> ``("gyroscope x", "rad/s")``."""
    s = unicodedata.normalize("NFKC", field_text).replace("\u2212", "-").strip().strip('"').strip()
    m = re.match(r"^(.*?)\s*[\(\[]\s*([^\)\]]*)\s*[\)\]]\s*$", s)
    if m:
        unit = re.sub(r"[\s^*·]", "", m.group(2).lower())
        return normalise(m.group(1)), unit
    return normalise(s), None


def _split_header(line: str, delimiter: str | None, n_data: int) -> list[str]:
    """The header's fields; with spaces as separator, a unit in brackets joins its name."""
    if delimiter is not None:
        return [f.strip().strip('"').strip() for f in next(csv.reader([line], delimiter=delimiter))]
    tokens = line.split()
    fields: list[str] = []
    for tok in tokens:
        if fields and (tok[:1] in "([" or fields[-1].count("(") > fields[-1].count(")")
                       or fields[-1].count("[") > fields[-1].count("]")):
            fields[-1] += " " + tok
        else:
            fields.append(tok)
    if len(fields) != n_data:
        wide = [f for f in re.split(r"\s{2,}|\t", line.strip()) if f]
        if len(wide) == n_data:
            return wide
    return fields


def _delimiter(data_line: str) -> str | None:
    """Tab, semicolon or comma when they split the row into single cells; else runs of spaces."""
    for d in ("\t", ";", ","):
        if d in data_line and not any(len(cell.split()) > 1 for cell in data_line.split(d)):
            return d
    return None


def identify(fields: list[str], where: str) -> tuple[int, str | None, list[int], list[float]]:
    """Time column and unit (None: not given), rate columns and their scales to rad/s."""
    parsed = [name_and_unit(f) for f in fields]
    for i, (n, u) in enumerate(parsed):  # a unit written into the name: time_ms, timestamp ns
        m = re.fullmatch(r"(.+) (s|ms|us|μs|ns)", n)
        if u is None and m and m.group(1) in _TIME_NAMES:
            parsed[i] = (m.group(1), m.group(2))
    names = [n for n, _ in parsed]
    time_col = next((names.index(n) for n in _TIME_NAMES if n in names), None)
    if time_col is None:
        raise lim.refuse(f"{where} header", EXPECTED, f"{len(fields)} columns, none of them a time")
    rate_cols, scales = [], []
    for axis in "xyz":
        named = re.compile(rf"^{_RATE_WORDS} ?{axis}(?: axis)?$")
        bare = re.compile(rf"^{axis}(?: axis)?$")
        found = [i for i, n in enumerate(names) if i != time_col and named.match(n)]
        found = found or [i for i, n in enumerate(names) if i != time_col and bare.match(n)]
        if len(found) != 1:
            got = (f"no column for the {axis} rate" if not found else
                   f"{len(found)} columns for the {axis} rate (columns {', '.join(str(i + 1) for i in found)})")
            raise lim.refuse(f"{where} header", EXPECTED, got)
        unit = parsed[found[0]][1] or "rad/s"
        if unit not in _RATE_UNITS:
            raise lim.refuse(f"{where} column {found[0] + 1} (the {axis} rate)", "be in rad/s or deg/s",
                             "another unit")
        rate_cols.append(found[0])
        scales.append(_RATE_UNITS[unit])
    unit = parsed[time_col][1]
    if unit is None and names[time_col] in ("seconds elapsed", "seconds", "sec"):
        unit = "s"
    if unit is not None:
        if unit not in _TIME_UNIT_WORDS:
            raise lim.refuse(f"{where} column {time_col + 1} (the time)", "be in s, ms, us or ns", "another unit")
        unit = _TIME_UNIT_WORDS[unit]
    return time_col, unit, rate_cols, scales


# ------------------------------------------------------------------ reading


def _decoded(chunks, where: str):
    """Text from byte chunks: UTF-8 (or UTF-16 with its BOM); a first chunk that is not UTF-8
    is read as Windows-1252 (an old spreadsheet's export)."""
    decoder = None
    for block in chunks:
        if decoder is None:
            if block[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
                decoder = codecs.getincrementaldecoder("utf-16")()
            else:
                decoder = codecs.getincrementaldecoder("utf-8-sig")()
                try:
                    yield decoder.decode(block)
                    continue
                except UnicodeDecodeError:
                    decoder = codecs.getincrementaldecoder("cp1252")(errors="replace")
        try:
            yield decoder.decode(block)
        except UnicodeDecodeError:
            raise lim.refuse(where, "be UTF-8 text", "bytes that are not") from None
    if decoder is not None:
        yield decoder.decode(b"", final=True)


#: shortest row of a time and three rates ("0,0,0,0"): a shorter line may be blank
_SHORTEST_ROW = 7


def text_lines(texts, where: str):
    """(first line number, lines, plain) batches; every line checked for length before any
    split; ``plain``: no comment or blank line among them (the rows go to numpy as they are)."""
    carry, number = "", 1
    for text in texts:
        if not text:
            continue
        text = carry + text
        hold = "\r" if text.endswith("\r") else ""  # its "\n" may open the next chunk
        text = text[:len(text) - len(hold)].replace("\r\n", "\n").replace("\r", "\n")  # Windows, old Mac ends
        cut = text.rfind("\n")
        if cut < 0:
            carry = text + hold
            if len(carry) > lim.MAX_LINE_CHARS:
                _too_long(where, number, len(carry))
            continue
        carry = text[cut + 1:] + hold
        lines = text[:cut].split("\n")
        if number + len(lines) > lim.MAX_LINES + 1:
            raise lim.refuse(where, f"hold at most {lim.MAX_LINES:,} lines (blank and comment lines too)", "more")
        if max(map(len, lines)) > lim.MAX_LINE_CHARS:
            k = next(i for i, s in enumerate(lines) if len(s) > lim.MAX_LINE_CHARS)
            _too_long(where, number + k, len(lines[k]))
        if len(carry) > lim.MAX_LINE_CHARS:
            _too_long(where, number + len(lines), len(carry))
        yield number, lines, min(map(len, lines)) >= _SHORTEST_ROW and "#" not in text[:cut]
        number += len(lines)
    if carry.rstrip("\r"):
        yield number, [carry.rstrip("\r")], False


def _too_long(where, line_no, n):
    raise lim.refuse(f"{where} line {line_no}", f"be at most {lim.MAX_LINE_CHARS:,} characters long",
                     f"a line of {n:,} characters or more")


def _is_comment_or_blank(s: str) -> bool:
    s = s.strip()
    return not s or s.startswith("#")


def _header(first: int, lines: list[str], last_comment, where: str):
    """(table or None, index of the first line after the header, last comment seen): the header is
    the first line that is not a comment, or the comment right before a first row of numbers."""
    for k, raw in enumerate(lines):
        s = raw.strip().lstrip("\ufeff")
        if not s:
            continue
        if s.startswith("#"):
            last_comment = (first + k, s.lstrip("#").strip())
            continue
        if first + k > MAX_HEADER_LINES:
            break
        delimiter = _delimiter(s)
        cells = s.split(delimiter) if delimiter else s.split()
        if lim.PLAIN_NUMBER.fullmatch(cells[0].strip().strip('"').replace(",", ".")):
            if last_comment is None:
                raise lim.refuse(where, "begin with a header that would " + EXPECTED,
                                 "numbers with no header before them")
            (header_no, header), data_line, after = last_comment, s, k
        else:
            header_no, header, after = first + k, s, k + 1
            data_line = next((x.strip() for x in lines[k + 1:] if not _is_comment_or_blank(x)), s)
        delimiter = _delimiter(data_line)
        n_data = len(data_line.split(delimiter) if delimiter else data_line.split())
        tc, unit, rc, scales = identify(_split_header(header, delimiter, n_data), f"{where} line {header_no}")
        comma = delimiter != "," and any("," in x for x in lines[after:after + 100])  # a decimal comma
        return Table(delimiter, comma, tc, unit, rc, scales), after, last_comment
    if first + len(lines) > MAX_HEADER_LINES:
        raise lim.refuse(where, f"have its header within its first {MAX_HEADER_LINES} lines", "none")
    return None, len(lines), last_comment


def read_table(chunks, where: str) -> tuple[np.ndarray, np.ndarray, Table, float]:
    """(t s, w rad/s, table, offset s subtracted from t) from a bounded stream of byte chunks."""
    table, last_comment = None, None
    times, rates, int_times = [], [], []
    rows, previous = 0, None
    for first, lines, plain in text_lines(_decoded(chunks, where), where):
        if table is None:
            table, after, last_comment = _header(first, lines, last_comment, where)
            if table is None:
                continue
            lines, first, plain = lines[after:], first + after, False
        if table.decimal_comma:
            lines = [s.replace(",", ".") for s in lines]
        if plain and len(lines) + rows > lim.MAX_ROWS:
            plain = False  # the slow way below counts the rows and refuses past the cap
        if plain:
            try:  # most chunks: every line a row, straight to numpy
                keep = range(len(lines))
                values, ints = _parse_rows(lines, table, where, first, keep)
            except ParameterError:  # a line of spaces, say: the slow way names the right line
                plain = False
        if not plain:
            keep = [i for i, s in enumerate(lines) if s and not s.isspace() and not s.lstrip().startswith("#")]
            if not keep:
                continue
            if len(keep) + rows > lim.MAX_ROWS:
                raise lim.refuse(where, f"hold at most {lim.MAX_ROWS:,} rows", "more")
            values, ints = _parse_rows([lines[i] for i in keep], table, where, first, keep)
        rows += len(keep)
        stamps = ints if ints is not None else values[:, 0]
        _increasing(stamps, previous, table, where, first, keep)
        previous = stamps[-1]
        times.append(values[:, 0])
        rates.append(values[:, 1:])
        if ints is not None:
            int_times.append(ints)
    if table is None:
        if last_comment is None:
            raise lim.refuse(where, "not be empty (a header that would " + EXPECTED + ", then rows of numbers)",
                             "no text")
        raise lim.refuse(where, "hold rows of data below its header", "none")
    if not times:
        raise lim.refuse(where, "hold rows of data below its header", "none")
    raw_t = np.concatenate(times)
    w = np.concatenate(rates) * np.asarray(table.rate_scales)
    exact = np.concatenate(int_times) if len(int_times) == len(times) else None
    t, offset = _times(raw_t, exact, table, where)
    return t, w, table, offset


def _parse_rows(data: list[str], table: Table, where: str, first: int, keep: list[int]):
    """Values (n, 4) of the used columns; integer stamps of more than 15 digits also as int64."""
    cols = table.cols
    kwargs = {"delimiter": table.delimiter, "usecols": cols, "ndmin": 2, "comments": None}
    if table.delimiter is not None:
        kwargs["quotechar"] = '"'
    try:
        values = np.loadtxt(data, dtype=float, **kwargs)
    except ValueError:
        _locate(data, table, where, first, keep)
        raise lim.refuse(where, "hold only numbers below its header", "a row that is not") from None
    if values.shape[1] != len(cols):  # pragma: no cover - loadtxt keeps usecols
        raise lim.refuse(where, "hold a time and three rates per row", "fewer")
    bad = ~np.isfinite(values)
    big = np.abs(values[:, 1:]) * np.asarray(table.rate_scales) > lim.MAX_RATE_RAD_S
    if bad.any() or big.any() or np.any(np.abs(values[:, 0]) > lim.MAX_MAGNITUDE):
        _locate(data, table, where, first, keep)
        r, c = np.argwhere(np.column_stack([bad[:, :1] | (np.abs(values[:, :1]) > lim.MAX_MAGNITUDE),
                                            bad[:, 1:] | big]))[0]
        raise lim.refuse(f"{where} line {first + keep[r]} {table.role(c)}",
                         "be a rate of at most " f"{lim.MAX_RATE_RAD_S:g} rad/s in magnitude" if c else
                         f"be at most {lim.MAX_MAGNITUDE:g} in magnitude", "a larger number")
    ints = None
    head = data[0].split(table.delimiter) if table.delimiter else data[0].split()
    cell = head[table.time_col].strip().strip('"') if len(head) > table.time_col else ""
    if cell.lstrip("+-").isdigit() and len(cell) > 15:
        try:
            ints = np.loadtxt(data, dtype=np.int64, **{**kwargs, "usecols": (table.time_col,)}).reshape(-1)
        except (ValueError, OverflowError):
            ints = None
    return values, ints


def _locate(data, table: Table, where: str, first: int, keep: list[int]) -> None:
    """Raise for the first cell that is not a plain finite number (described, not quoted)."""
    need = max(table.cols) + 1
    rows = csv.reader(data, delimiter=table.delimiter) if table.delimiter else (s.split() for s in data)
    for k, row in enumerate(rows):
        line = f"{where} line {first + keep[k]}"
        if len(row) < need:
            raise lim.refuse(line, f"have at least {need} fields", f"{len(row)}")
        for j, c in enumerate(table.cols):
            cell = row[c].strip().strip('"').strip()
            if not lim.PLAIN_NUMBER.fullmatch(cell):
                raise lim.refuse(f"{line} {table.role(j)}", "be a plain decimal number", lim.describe_cell(cell))
            value = float(cell)
            if j and not (np.isfinite(value) and abs(value) * table.rate_scales[j - 1] <= lim.MAX_RATE_RAD_S):
                raise lim.refuse(f"{line} {table.role(j)}",
                                 f"be a rate of at most {lim.MAX_RATE_RAD_S:g} rad/s in magnitude", "a larger one")
            if not np.isfinite(value) or abs(value) > lim.MAX_MAGNITUDE:
                raise lim.refuse(f"{line} {table.role(j)}", f"be at most {lim.MAX_MAGNITUDE:g} in magnitude",
                                 "a larger number")


def _increasing(stamps, previous, table: Table, where: str, first: int, keep) -> None:
    """Stamps must increase, checked chunk by chunk (a file of one repeated row stops at once)."""
    bad = np.diff(stamps) <= 0
    if previous is not None and stamps[0] <= previous:
        k = 0
    elif bad.any():
        k = int(np.argmax(bad)) + 1
    else:
        return
    raise lim.refuse(f"{where} line {first + keep[k]} {table.role(0)}", "increase from row to row",
                     "a stamp at or before the one above it")


def _spacing_words(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds:.3g} s"


def _times(raw: np.ndarray, exact, table: Table, where: str) -> tuple[np.ndarray, float]:
    """Stamps in s from the first one (an epoch shifted away), their unit checked by their spacing."""
    rel = (exact - exact[0]).astype(float) if exact is not None else raw - raw[0]
    steps = np.diff(rel)
    if len(rel) < 2:
        raise lim.refuse(where, "hold at least 2 rows", f"{len(rel)}")
    median = float(np.median(steps))
    fits = [u for u, s in _TIME_SCALE.items() if lim.MIN_SPACING_S <= median * s <= lim.MAX_SPACING_S]
    unit = table.time_unit
    if unit is None:
        guess = [u for u, s in _TIME_SCALE.items() if _INFERRED_SPACING <= median * s < 1000 * _INFERRED_SPACING]
        unit = guess[0] if guess else None
        if unit is None:
            raise lim.refuse(f"{where} {table.role(0)}", "have stamps 0.5 ms to 0.5 s apart in s, ms, us or ns "
                             "(a gyroscope's 2 Hz to 2 kHz; name the unit in the header, like \"t (ms)\")",
                             f"a median spacing of {median:.3g} in its own unit")
        if unit != "s":
            table.notes.append(f"time read in {unit} (the header names no unit; the stamps are "
                               f"{_spacing_words(median * _TIME_SCALE[unit])} apart)")
    spacing = median * _TIME_SCALE[unit]
    if not lim.MIN_SPACING_S <= spacing <= lim.MAX_SPACING_S:
        said = "its header says" if table.time_unit else "read in"
        hint = f", and in {fits[0]} they would be {_spacing_words(median * _TIME_SCALE[fits[0]])} apart" if fits else ""
        raise lim.refuse(f"{where} {table.role(0)}",
                         f"have stamps {_spacing_words(lim.MIN_SPACING_S)} to {_spacing_words(lim.MAX_SPACING_S)} "
                         f"apart (a gyroscope's 1 Hz to 10 kHz; {said} {unit}{hint})",
                         f"stamps {_spacing_words(spacing)} apart (median)")
    scale = _TIME_SCALE[unit]
    start = float(exact[0]) * scale if exact is not None else float(raw[0]) * scale
    if abs(start) >= EPOCH_S:
        table.notes.append(f"time starts at 0 (its first stamp, {start:.6f} s, was subtracted)")
        return rel * scale, start
    return (rel * scale + start if exact is not None else raw * scale), 0.0
