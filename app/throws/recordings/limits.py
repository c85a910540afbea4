"""Bounds on everything a recording may make Tumble read: bytes, lines, rows, stamps, rates, zip members.

Every limit is checked before the work it bounds: a file's size before it is opened, a zip
member's stated size and compression ratio before it is decompressed, the bytes actually read
whatever a header claims, a line's length before it is split, the stamps' spacing before any
derivative. A refusal is one :class:`ParameterError` naming the file and the rule; it never
quotes the file's content (a description of what was found stands in for it).
"""

from __future__ import annotations

import bz2
import copy
import errno
import lzma
import os
import stat
import struct
import zipfile
import zlib
from pathlib import Path

from ...physics.errors import ParameterError
# the one rule for a number a user wrote, and its bound, as the readers and --flights apply them
from ...scenario.document import NUMBER_TEXT as PLAIN_NUMBER, plain_number  # noqa: F401
from ...scenario.schema import MAX_MAGNITUDE  # noqa: F401

#: most bytes read from one recording (a file, or a zip member once decompressed): a 3-hour
#: phyphox session at 100 Hz is about 80 MB
MAX_BYTES = 256 * 2**20
#: most rows (samples) of one recording: 5.5 hours at 100 Hz, 1.4 hours at 400 Hz
MAX_ROWS = 2_000_000
#: most lines of one recording, blank and comment lines included: twice the rows (a blank
#: line after every row, as a doubled line end leaves) and a header's worth more. Counted as
#: the lines are cut, so a file of nothing but line ends is refused after a few MB
MAX_LINES = 2 * MAX_ROWS + 1000
#: longest line (characters): a row of a time and a few rates is under 200; a header of many
#: sensors' columns under 2,000
MAX_LINE_CHARS = 4096
#: largest rate magnitude (rad/s) a gyroscope reading may have: phones clip at 35-70 rad/s
MAX_RATE_RAD_S = 1000.0
#: the stamps' median spacing (s) must lie in this range: gyroscopes sample at 1 Hz to 10 kHz
MIN_SPACING_S = 1e-4
MAX_SPACING_S = 1.0
#: a step between stamps this many times the median spacing, and at least GAP_MIN_S, is a gap:
#: the recording is split there (nothing is integrated or differentiated across it)
GAP_SPACINGS = 25
GAP_MIN_S = 0.2
#: most segments (pauses and gaps) one recording may hold
MAX_SEGMENTS = 10_000
#: a zip: most entries, largest central directory (bytes), highest compression ratio of the
#: member read (CSV numbers compress 3-10x, a still phone's exact zeros about 30x)
MAX_ZIP_ENTRIES = 10_000
MAX_ZIP_DIRECTORY = 4 * 2**20
MAX_ZIP_RATIO = 100
#: smaller members (phyphox's meta/time.csv) are read up to this many bytes
MAX_META_BYTES = 2**20
#: bytes read at a time from a file or a zip member
CHUNK_BYTES = 4 * 2**20
#: compressed bytes fed to a zip member's decompressor at a time
RAW_CHUNK_BYTES = 256 * 2**10
#: compression methods read: stored, deflate, bzip2, LZMA
ZIP_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate",
               zipfile.ZIP_BZIP2: "bzip2", zipfile.ZIP_LZMA: "LZMA"}

#: most --flights windows
MAX_WINDOWS = 10_000



class Said:
    """A value described in words instead of quoted (a file's content is never repeated)."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


def refuse(where: str, rule: str, found: str) -> ParameterError:
    """``{where} must {rule}, got {found}``, ``found`` being a description, never content."""
    return ParameterError(where, Said(found), rule)


def describe_cell(cell: str) -> str:
    """What a cell that is not a plain number holds, in words."""
    s = cell.strip().strip('"').strip()
    if not s:
        return "an empty cell"
    if s.lower() in ("nan", "-nan", "+nan"):
        return "NaN"
    if s.lower().lstrip("+-") in ("inf", "infinity"):
        return "an infinity"
    if "\x00" in s:
        return "a NUL byte"
    if "_" in s and PLAIN_NUMBER.fullmatch(s.replace("_", "")):
        return "a number with '_' separators"
    if any(c.isdigit() and not c.isascii() for c in s):
        return "digits of another script"
    return f"text of {len(s)} characters that is not a plain decimal number"


def size_words(n: int, beside: int | None = None) -> str:
    """``n`` bytes in words; in bytes when it would read the same as the limit ``beside`` it
    (256 MB and a header's worth more are not "256.0 MB, got 256.0 MB")."""
    if n >= 2**20 and (beside is None or f"{n / 2**20:,.1f}" != f"{beside / 2**20:,.1f}"):
        return f"{n / 2**20:,.1f} MB"
    return f"{n:,} bytes"


# ------------------------------------------------------------------ files


def open_regular(path: Path, where: str, follow: bool = True):
    """A binary file object for a regular file of at most :data:`MAX_BYTES`.

    ``follow=False`` refuses a symbolic link (a member of a phyphox folder). A FIFO or a device
    is refused without blocking (opened non-blocking, checked with fstat)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | (0 if follow else getattr(os, "O_NOFOLLOW", 0))
    if not follow and path.is_symlink():
        raise refuse(where, "not be a symbolic link (a phyphox export holds plain files)", "a symbolic link")
    try:
        fd = os.open(path, flags)
    except OSError as err:
        if not follow and err.errno == errno.ELOOP:  # a link appeared since the check above
            raise refuse(where, "not be a symbolic link", "a symbolic link") from None
        raise refuse(where, "be a readable file", err.strerror or "an unreadable file") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise refuse(where, "be a regular file", "a folder" if stat.S_ISDIR(info.st_mode) else
                         "a device, pipe or socket")
        if info.st_size > MAX_BYTES:
            raise refuse(where, f"be at most {size_words(MAX_BYTES)}", size_words(info.st_size, MAX_BYTES))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_capped(stream, limit: int, where: str, chunk: int | None = None, check=None):
    """Yield the stream's bytes in chunks; refuse as soon as more than ``limit`` arrive,
    whatever a header said (a zip member is decompressed chunk by chunk). ``check()`` is
    called before each chunk (a Cancel raises from it)."""
    total, chunk = 0, chunk or CHUNK_BYTES
    while True:
        if check is not None:
            check()
        block = stream.read(min(chunk, limit + 1 - total))
        if not block:
            return
        total += len(block)
        if total > limit:
            raise refuse(where, f"hold at most {size_words(limit)}", "more than that")
        yield block


# ------------------------------------------------------------------ zips

_EOCD = struct.Struct("<4s4H2LH")
_ZIP64_LOCATOR = struct.Struct("<4sLQL")
_ZIP64_EOCD = struct.Struct("<4sQ2H2L4Q")


def check_zip_directory(fh, where: str) -> None:
    """Refuse a zip whose central directory is too large to list, before zipfile reads it."""
    fh.seek(0, os.SEEK_END)
    size = fh.tell()
    tail_len = min(size, _EOCD.size + 65535)
    fh.seek(size - tail_len)
    tail = fh.read(tail_len)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < _EOCD.size:
        raise refuse(where, "be a readable .zip", "no zip directory")
    _, _, _, _, entries, dir_size, _, _ = _EOCD.unpack_from(tail, at)
    if at >= _ZIP64_LOCATOR.size and tail[at - _ZIP64_LOCATOR.size:at - _ZIP64_LOCATOR.size + 4] == b"PK\x06\x07":
        _, _, offset, _ = _ZIP64_LOCATOR.unpack_from(tail, at - _ZIP64_LOCATOR.size)
        if offset > size - _ZIP64_EOCD.size:
            raise refuse(where, "be a readable .zip", "a damaged ZIP64 directory")
        fh.seek(offset)
        record = fh.read(_ZIP64_EOCD.size)
        if len(record) < _ZIP64_EOCD.size or record[:4] != b"PK\x06\x06":
            raise refuse(where, "be a readable .zip", "a damaged ZIP64 directory")
        fields = _ZIP64_EOCD.unpack(record)
        entries, dir_size = fields[7], fields[8]
    if entries > MAX_ZIP_ENTRIES:
        raise refuse(where, f"hold at most {MAX_ZIP_ENTRIES:,} entries", f"{entries:,}")
    if dir_size > MAX_ZIP_DIRECTORY:
        raise refuse(where, f"have a directory of at most {size_words(MAX_ZIP_DIRECTORY)}", size_words(dir_size))
    fh.seek(0)


def check_member(info: zipfile.ZipInfo, where: str, limit: int) -> None:
    """Refuse an entry before reading it: encrypted, a link, an unknown compression, too
    large or too compressed by its own header."""
    if info.flag_bits & 0x1:
        raise refuse(where, "not be encrypted", "an encrypted entry")
    if stat.S_ISLNK(info.external_attr >> 16):
        raise refuse(where, "be a plain file", "a symbolic link entry")
    if info.compress_type not in ZIP_METHODS:
        raise refuse(where, "be compressed by " + ", ".join(ZIP_METHODS.values()),
                     f"compression method {info.compress_type}")
    if info.file_size > limit:
        raise refuse(where, f"hold at most {size_words(limit)}", size_words(info.file_size, limit))
    if info.file_size > MAX_ZIP_RATIO * max(info.compress_size, 1) + 4096:
        raise refuse(where, f"be compressed at most {MAX_ZIP_RATIO}:1",
                     f"{size_words(info.file_size)} from {size_words(info.compress_size)}")


def member_cap(info: zipfile.ZipInfo, limit: int) -> int:
    """Most bytes decompressed from an entry, whatever it turns out to hold."""
    return min(limit, info.file_size, MAX_ZIP_RATIO * max(info.compress_size, 1) + 4096)


def _lzma_filters(props: bytes) -> list[dict]:
    """The raw LZMA1 filter of a zip member's 5 property bytes (lc, lp, pb and the dictionary
    size, as the LZMA SDK writes them: ``(pb * 5 + lp) * 9 + lc``, then 4 bytes little-endian)."""
    if len(props) != 5 or props[0] >= 9 * 5 * 5:
        raise lzma.LZMAError("bad LZMA properties")
    pb, rest = divmod(props[0], 45)
    lp, lc = divmod(rest, 9)
    if int.from_bytes(props[1:], "little") > MAX_BYTES:  # the decoder allocates its dictionary up front
        raise lzma.LZMAError("an LZMA dictionary larger than any recording read")
    return [{"id": lzma.FILTER_LZMA1, "lc": lc, "lp": lp, "pb": pb, "dict_size": int.from_bytes(props[1:], "little")}]


class BoundedMember:
    """A zip member's bytes decompressed chunk by chunk, never more than asked for at a time,
    whatever the method (stored, deflate, bzip2, LZMA) and whatever its header claims.

    zipfile's own reader inflates bzip2 and LZMA members with no output limit: one read of
    a 905-byte bzip2 bomb grew to 2.24 GB. Here zipfile reads the member's raw bytes (stored),
    and the decompressors of zlib, bz2 and lzma run with ``max_length``; the CRC is checked
    at the end."""

    def __init__(self, zf: zipfile.ZipFile, info: zipfile.ZipInfo):
        raw = copy.copy(info)
        raw.compress_type, raw.file_size = zipfile.ZIP_STORED, info.compress_size
        raw.CRC = None  # zipfile checks no CRC of the raw bytes; ours is checked on the output
        self.method, self.crc, self.expected = info.compress_type, 0, info.CRC
        self.size, self.total = info.file_size, 0
        self.raw = zf.open(raw)
        self.done = False
        try:
            if self.method == zipfile.ZIP_DEFLATED:
                self.dec = zlib.decompressobj(-15)
            elif self.method == zipfile.ZIP_BZIP2:
                self.dec = bz2.BZ2Decompressor()
            elif self.method == zipfile.ZIP_LZMA:
                head = self.raw.read(4)
                if len(head) < 4:
                    raise EOFError("LZMA header cut short")
                size = int.from_bytes(head[2:4], "little")
                self.dec = lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=_lzma_filters(self.raw.read(size)))
            elif self.method == zipfile.ZIP_STORED:
                self.dec = None
            else:
                raise NotImplementedError(f"compression method {self.method}")
        except BaseException:
            self.raw.close()
            raise

    def read(self, n: int) -> bytes:
        """At most ``n`` decompressed bytes (b"" at the end)."""
        n = max(1, int(n))
        if self.done:
            return b""
        out = self.raw.read(n) if self.dec is None else self._inflate(n)
        if out:
            self.crc = zlib.crc32(out, self.crc)
            self.total += len(out)
            return out
        self.done = True
        if self.expected is not None and self.crc != self.expected:
            raise zipfile.BadZipFile("bad CRC-32")
        return b""

    def _input(self) -> bytes | None:
        """More compressed bytes; None at their end when the output has its stated size (an
        LZMA stream written without its end marker ends so), else EOFError."""
        data = self.raw.read(RAW_CHUNK_BYTES)
        if not data:
            if self.total == self.size:
                return None
            raise EOFError("compressed data cut short")
        return data

    def _inflate(self, n: int) -> bytes:
        """Up to ``n`` bytes more of output; b"" only at the end of the compressed stream."""
        while not self.dec.eof:
            if self.method == zipfile.ZIP_DEFLATED:
                data = self.dec.unconsumed_tail or self._input()
            else:  # bzip2 and LZMA keep their unused input themselves
                data = self._input() if self.dec.needs_input else b""
            if data is None:
                return b""
            out = self.dec.decompress(data, n)
            if out:
                return out
        return b""

    def close(self) -> None:
        self.raw.close()

    def __enter__(self) -> "BoundedMember":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


#: what a damaged zip raises while it is read
ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError, RuntimeError,
              NotImplementedError, struct.error, IndexError, KeyError, OverflowError, zlib.error, lzma.LZMAError)
#: ...of which these mean the compressed bytes themselves are damaged
CORRUPT_DATA = (zlib.error, lzma.LZMAError, EOFError)
