"""Tumble from Python: the engine audit (``tumble audit``), :func:`audit` and :func:`audit_trajectory`.

The functions return the ``--json`` object of ``tumble audit``; the command line calls
:func:`run` and :func:`run_trajectory`, which keep the scored runs for the files and the plot.
The engines themselves are imported only when a setting runs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .types import load
from ..physics.errors import ParameterError

#: the columns a trajectory file may hold; the rest are ignored (a ``tumble simulate`` CSV has more)
QUATERNION_COLUMNS = ("qw", "qx", "qy", "qz")
OMEGA_COLUMNS = ("wx", "wy", "wz")
COM_COLUMNS = ("cx", "cy", "cz")
#: most columns of a trajectory file's header
MAX_COLUMNS = 256


def run(sc, engines=None, dt=None, duration=None, sample=None, executor=None, progress=None, cancelled=None,
        reference_aside=False, budget=None):
    """The :class:`~app.engines.audit.Audit` of ``sc`` (see :func:`audit`); ``reference_aside``:
    the command line's, see :func:`app.engines.audit.run_audit`."""
    from .types import flag_number
    from ..engines.audit import run_audit

    if executor is not None and not callable(getattr(executor, "map", None)):
        raise ParameterError("executor", type(executor).__name__, "have a map method (concurrent.futures executors do)")
    dts = None if dt is None else [flag_number("--dt", x) for x in (dt if isinstance(dt, (list, tuple)) else [dt])]
    if dts is not None and not dts:
        raise ParameterError("--dt", dt, "be a step (s) or a list of at least one step (an empty list audits nothing)")
    return run_audit(load(sc), engines, dts, flag_number("--duration", duration), flag_number("--sample", sample),
                     executor=executor, progress=progress, cancelled=cancelled, reference_aside=reference_aside,
                     budget_s=flag_number("--budget", budget))


def audit(sc, engines="all", dt=None, duration=None, sample=None, executor=None, progress=None, budget=None) -> dict:
    """Run ``sc``'s body in physics engines and score each against Tumble's exact solution
    (``tumble audit --json``).

    Parameters
    ----------
    sc : Scenario, or a preset name or TOML path (no applied loads, damper or rotor)
    engines : "all" (every installed engine's default and tumble:rk4) or "ENGINE[:SETTING],..." or a list
    dt : a step (s) or a list of steps (default: the scenario's)
    duration : simulated time (s, default the scenario's); sample : interval of the samples scored (s, 0.01)
    executor : anything with ``map`` (a ``ProcessPoolExecutor``): the settings run in its workers
    progress : called with (fraction done, note)
    budget : the wall clock (s) an adaptive setting's run (drake:continuous, tumble:dop853) may take
        before it stops and is reported not scored (default 20 s, or 0.1 ms a step of dt where more)

    Returns
    -------
    dict : ``{"scenario", "reference", "duration", "sample", "runs": [...], "seconds"}``
    """
    return run(sc, engines, dt, duration, sample, executor, progress, budget=budget).summary


def audit_trajectory(sc, path_or_arrays, *, label="trajectory", quaternion="wxyz", omega="body") -> dict:
    """Score another engine's trajectory like an engine run (``tumble audit --trajectory``).

    ``path_or_arrays``: a CSV or NPZ file with ``t, qw, qx, qy, qz`` and optional ``wx, wy, wz`` and
    ``cx, cy, cz``, or a dict of arrays with those keys (or ``q`` (n, 4), ``w`` / ``c`` (n, 3));
    ``quaternion``: the order of its four quaternion numbers (``wxyz`` or ``xyzw``); ``omega``: its
    frame (``body`` or ``world``). Its conventions are checked first (a refusal names the flag
    that fits). Returns the ``--json`` object with one run.
    """
    return run_trajectory(sc, path_or_arrays, label, quaternion, omega).summary


def labels(sc, engines=None, dt=None, duration=None, sample=None) -> list[str]:
    """The labels of the runs :func:`run` would make, in order (the request checked as it checks
    it, nothing run): what names an --out folder's files before the first run."""
    from .types import flag_number
    from ..engines.audit import label, plan

    dts = None if dt is None else [flag_number("--dt", x) for x in (dt if isinstance(dt, (list, tuple)) else [dt])]
    pairs, _, _, dts = plan(load(sc), engines, dts, flag_number("--duration", duration), flag_number("--sample", sample))
    return [label({"engine": e, "setting": s, "dt": step}) for step in dts for e, s in pairs]


def check_label(label) -> str:
    """A trajectory's ``--label``: 1 to 100 printable characters, no commas (it is a CSV cell and a
    line of the table); returned stripped."""
    if not isinstance(label, str) or not label.strip() or len(label) > 100 or "," in label or \
            not label.isprintable():
        raise ParameterError("--label", label, "be a name of 1 to 100 printable characters without commas (no "
                             "line breaks or terminal escape sequences)")
    return label.strip()


def run_trajectory(sc, path_or_arrays, label="trajectory", quaternion="wxyz", omega="body"):
    from ..engines.audit import audit_arrays

    label = check_label(label)
    sc = load(sc)
    arrays = read_trajectory(path_or_arrays)
    return audit_arrays(sc, arrays, label, quaternion, omega)


# ------------------------------------------------------------------ reading a file


def read_trajectory(source):
    """:class:`~app.engines.trajectory.Arrays` from a CSV or NPZ path or a dict of arrays,
    within the recordings' readers' bounds (size, line length, lines, rows), read as a stream."""
    if isinstance(source, dict):
        return _from_mapping(dict(source), "trajectory")
    if not isinstance(source, (str, Path)):
        raise ParameterError("--trajectory", type(source).__name__, "be a CSV or NPZ path or a dict of arrays")
    if "\0" in str(source):
        raise ParameterError("--trajectory", str(source), "be a path without NUL characters")
    path = Path(source)
    where = f"--trajectory {path.name}"
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".npz"):
        raise ParameterError("--trajectory", str(source), "end in .csv or .npz")
    if suffix == ".npz":
        return _from_mapping(_read_npz(path, where), where)
    return _read_csv(path, where)


# the NPZ: its members read through the recordings' bounded, CRC-checked zip reader, each
# member's rows checked from its .npy header before any of its data is read


#: the members of an NPZ that are read (any other is ignored, never decompressed)
NPZ_MEMBERS = ("t", "q", "w", "c", *QUATERNION_COLUMNS, *OMEGA_COLUMNS, *COM_COLUMNS)


def _read_npz(path: Path, where: str) -> dict:
    """name -> array of the :data:`NPZ_MEMBERS` an NPZ holds, each read through
    :class:`~app.throws.recordings.limits.BoundedMember` (checked before it is opened, decompressed
    chunk by chunk, its CRC checked) after its .npy header said it holds at most the rows allowed
    of real numbers."""
    import zipfile

    from ..throws.recordings import limits as lim

    with lim.open_regular(path, where) as fh:
        not_npz = ParameterError(where, "a file that is not a readable NPZ", "be an NPZ archive of numeric arrays "
                                 "(numpy.savez)")
        try:
            try:
                lim.check_zip_directory(fh, where)
            except ParameterError as err:
                if "readable .zip" in str(err):
                    raise not_npz from None
                raise
            with zipfile.ZipFile(fh) as zf:
                infos = {}
                for info in zf.infolist():
                    name = info.filename[:-4] if info.filename.endswith(".npy") else None
                    if name in NPZ_MEMBERS and name not in infos:
                        infos[name] = info
                mapping = {}
                for name, info in infos.items():
                    member_where = f"{where} member {info.filename}"
                    lim.check_member(info, member_where, lim.MAX_BYTES)
                    with lim.BoundedMember(zf, info) as member:
                        mapping[name] = _read_npy(member, member_where, lim.member_cap(info, lim.MAX_BYTES))
        except ParameterError:
            raise
        except lim.ZIP_ERRORS:
            raise not_npz from None
    return mapping


def _read_npy(member, where: str, cap: int) -> np.ndarray:
    """One .npy member: its header read and checked (real numbers, at most the rows allowed,
    its data within ``cap`` bytes), then its data, then the rest of the member for its CRC."""
    from numpy.lib import format as npy

    from ..engines.trajectory import MAX_ROWS

    try:
        version = npy.read_magic(member)
        if version == (1, 0):
            shape, fortran, dtype = npy.read_array_header_1_0(member)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = npy.read_array_header_2_0(member)
        else:
            raise ValueError(f"npy version {version}")
    except ValueError:
        raise ParameterError(where, "a member that is not a .npy array", "be an array numpy.save wrote") from None
    if dtype.kind not in "fiub" or dtype.hasobject:
        raise ParameterError(where, f"an array of {'complex numbers' if dtype.kind == 'c' else dtype.name}",
                             "hold real numbers (float or integer)")
    rows = shape[0] if shape else 1
    if rows > MAX_ROWS:
        raise ParameterError(where, f"{rows:,} rows", f"hold at most {MAX_ROWS:,} rows")
    count = 1
    for n in shape:
        count *= n
    if count > 4 * MAX_ROWS or count * dtype.itemsize > cap:
        raise ParameterError(where, f"an array of shape {shape}", f"hold at most {MAX_ROWS:,} rows of at most 4 "
                             "numbers (within the member's stated size)")
    need = count * dtype.itemsize
    buffer = bytearray(need)
    view, got = memoryview(buffer), 0
    while got < need:
        block = member.read(min(need - got, 4 * 2**20))
        if not block:
            raise ParameterError(where, "a member cut short", "hold the data its header announces")
        view[got:got + len(block)] = block
        got += len(block)
    while member.read(4 * 2**20):  # the rest, so that the CRC is checked
        pass
    array = np.frombuffer(buffer, dtype=dtype, count=count)
    return array.reshape(shape[::-1]).T if fortran else array.reshape(shape)


# the CSV: read as a stream, its lines counted and measured as they come (the recordings' line
# cutter), its rows parsed a chunk at a time, so memory holds one chunk of text besides the numbers


def _utf8(chunks, where: str):
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    try:
        for block in chunks:
            yield decoder.decode(block)
        yield decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise ParameterError(where, "bytes that are not UTF-8 text", "be a UTF-8 CSV file") from None


def _read_csv(path: Path, where: str):
    import warnings

    from ..engines.trajectory import MAX_ROWS
    from ..throws.recordings import limits as lim
    # the recordings' line cutter: lines counted (blank and comment lines too) and measured before any split
    from ..throws.recordings.formats import text_lines

    header = columns = usecols = None
    blocks, rows = [], 0
    with lim.open_regular(path, where) as fh:
        for _, lines, _ in text_lines(_utf8(lim.read_capped(fh, lim.MAX_BYTES, where), where), where):
            data = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
            if header is None and data:
                header = [h.strip().strip('"').strip() for h in data[0].split(",")]
                if len(header) > MAX_COLUMNS:
                    raise ParameterError(where, f"{len(header)} columns", f"have at most {MAX_COLUMNS} columns")
                columns = _columns(header, where)
                usecols = sorted(set(columns.values()))
                data = data[1:]
            if not data:
                continue
            if rows + len(data) > MAX_ROWS:
                raise ParameterError(where, "more rows", f"hold at most {MAX_ROWS:,} rows")
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    block = np.loadtxt(data, delimiter=",", ndmin=2, dtype=float, usecols=usecols)
            except ValueError:
                row = rows + _bad_row(data, len(header)) - 1
                raise ParameterError(where, f"row {row + 1}", f"hold {len(header)} numbers separated by "
                                     "commas") from None
            blocks.append(block)
            rows += len(data)
    if header is None:
        raise ParameterError(where, "an empty file", "hold a header t,qw,qx,qy,qz then rows of numbers")
    table = np.concatenate(blocks) if blocks else np.zeros((0, len(usecols)))
    del blocks
    index = {c: k for k, c in enumerate(usecols)}
    pick = {name: table[:, index[col]] for name, col in columns.items()}
    return _arrays(pick, where)


def _bad_row(lines, width) -> int:
    for k, line in enumerate(lines):
        cells = line.split(",")
        if len(cells) != width:
            return k + 2
        try:
            [float(c) for c in cells]
        except ValueError:
            return k + 2
    return 2


def _columns(header: list[str], where: str) -> dict:
    """name -> column index of the columns read; the quaternion's four in file order as q0..q3."""
    missing = [c for c in ("t", *QUATERNION_COLUMNS) if c not in header]
    if missing:
        raise ParameterError(where, f"a header without {', '.join(missing)}",
                             "have columns t,qw,qx,qy,qz (and optionally wx,wy,wz and cx,cy,cz)")
    for group in (OMEGA_COLUMNS, COM_COLUMNS):
        present = [c for c in group if c in header]
        if present and len(present) != 3:
            raise ParameterError(where, f"a header with {', '.join(present)} only", f"have all of {','.join(group)} or none")
    for name in ("t", *QUATERNION_COLUMNS, *OMEGA_COLUMNS, *COM_COLUMNS):
        if header.count(name) > 1:
            raise ParameterError(where, f"a header naming {name} twice", "name each column once")
    # the quaternion: the four numbers in the order the file holds them (--quaternion says which order)
    q_positions = sorted(header.index(c) for c in QUATERNION_COLUMNS)
    columns = {"t": header.index("t"), **{f"q{k}": p for k, p in enumerate(q_positions)}}
    for group in (OMEGA_COLUMNS, COM_COLUMNS):
        if group[0] in header:
            columns.update({c: header.index(c) for c in group})
    return columns


def _from_mapping(mapping: dict, where: str):
    for key, value in mapping.items():
        if np.iscomplexobj(value):
            raise ParameterError(where, f"{key} of complex numbers", "hold real numbers")
    pick = {}
    try:
        if "t" not in mapping:
            raise KeyError("t")
        pick["t"] = np.asarray(mapping["t"], dtype=float).reshape(-1)
        if "q" in mapping:
            q = np.asarray(mapping["q"], dtype=float)
            if q.ndim != 2 or q.shape[1] != 4:
                raise ParameterError(where, f"q of shape {q.shape}", "hold q as (n, 4)")
            pick.update({f"q{k}": q[:, k] for k in range(4)})
        else:
            pick.update({f"q{k}": np.asarray(mapping[c], dtype=float).reshape(-1) for k, c in enumerate(QUATERNION_COLUMNS)})
        for key, group in (("w", OMEGA_COLUMNS), ("c", COM_COLUMNS)):
            if key in mapping:
                x = np.asarray(mapping[key], dtype=float)
                if x.ndim != 2 or x.shape[1] != 3:
                    raise ParameterError(where, f"{key} of shape {x.shape}", f"hold {key} as (n, 3)")
                pick.update({c: x[:, k] for k, c in enumerate(group)})
            elif any(c in mapping for c in group):
                pick.update({c: np.asarray(mapping[c], dtype=float).reshape(-1) for c in group})
    except KeyError as err:
        raise ParameterError(where, f"no {err.args[0]}", "hold t, the quaternion (qw,qx,qy,qz or q) and optionally "
                             "omega (wx,wy,wz or w) and the centre of mass (cx,cy,cz or c)") from None
    except ParameterError:
        raise
    except (TypeError, ValueError):
        raise ParameterError(where, "arrays that are not numbers", "hold numeric arrays") from None
    n = len(pick["t"])
    from ..engines.trajectory import MAX_ROWS

    if n > MAX_ROWS:
        raise ParameterError(where, f"{n:,} rows", f"hold at most {MAX_ROWS:,} rows")
    if any(len(v) != n for v in pick.values()):
        raise ParameterError(where, "arrays of different lengths", "hold one row per time")
    return _arrays(pick, where)


def _arrays(pick: dict, where: str):
    from ..engines.trajectory import Arrays

    stack = lambda names: np.column_stack([pick[c] for c in names]) if names[0] in pick else None  # noqa: E731
    return Arrays(pick["t"], np.column_stack([pick[f"q{k}"] for k in range(4)]), stack(OMEGA_COLUMNS),
                  stack(COM_COLUMNS), where)
