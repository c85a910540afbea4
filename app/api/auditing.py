"""Tumble from Python: the engine audit (``tumble audit``), :func:`audit` and :func:`audit_trajectory`.

The functions return the ``--json`` object of ``tumble audit``; the command line calls
:func:`run` and :func:`run_trajectory`, which keep the scored runs for the files and the plot.
The engines themselves are imported only when a setting runs.
"""

from __future__ import annotations

import io
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
        reference_aside=False):
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
                     executor=executor, progress=progress, cancelled=cancelled, reference_aside=reference_aside)


def audit(sc, engines="all", dt=None, duration=None, sample=None, executor=None, progress=None) -> dict:
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

    Returns
    -------
    dict : ``{"scenario", "reference", "duration", "sample", "runs": [...], "seconds"}``
    """
    return run(sc, engines, dt, duration, sample, executor, progress).summary


def audit_trajectory(sc, path_or_arrays, *, label="trajectory", quaternion="wxyz", omega="body") -> dict:
    """Score another engine's trajectory like an engine run (``tumble audit --trajectory``).

    ``path_or_arrays``: a CSV or NPZ file with ``t, qw, qx, qy, qz`` and optional ``wx, wy, wz`` and
    ``cx, cy, cz``, or a dict of arrays with those keys (or ``q`` (n, 4), ``w`` / ``c`` (n, 3));
    ``quaternion``: the order of its four quaternion numbers (``wxyz`` or ``xyzw``); ``omega``: its
    frame (``body`` or ``world``). Its conventions are checked first (a refusal names the flag
    that fits). Returns the ``--json`` object with one run.
    """
    return run_trajectory(sc, path_or_arrays, label, quaternion, omega).summary


def run_trajectory(sc, path_or_arrays, label="trajectory", quaternion="wxyz", omega="body"):
    from ..engines.audit import audit_arrays

    if not isinstance(label, str) or not label.strip() or len(label) > 100 or any(ch in label for ch in "\n\r,"):
        raise ParameterError("--label", label, "be a name of 1 to 100 characters without commas or line breaks")
    sc = load(sc)
    arrays = read_trajectory(path_or_arrays)
    return audit_arrays(sc, arrays, label.strip(), quaternion, omega)


# ------------------------------------------------------------------ reading a file


def read_trajectory(source):
    """:class:`~app.engines.trajectory.Arrays` from a CSV or NPZ path or a dict of arrays,
    within the recordings' readers' bounds (size, line length, rows)."""
    from ..engines.trajectory import Arrays

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
    data = _read_bytes(path, where)
    if suffix == ".npz":
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as npz:
                mapping = {k: np.asarray(npz[k]) for k in list(npz.files)[:MAX_COLUMNS + 1]}
        except Exception:  # noqa: BLE001 - numpy raises many kinds for a damaged file
            raise ParameterError(where, "a file numpy cannot read", "be an NPZ archive of numeric arrays") from None
        return _from_mapping(mapping, where)
    return _from_csv(data, where, Arrays)


def _read_bytes(path: Path, where: str) -> bytes:
    from ..throws.recordings.limits import MAX_BYTES, open_regular, read_capped

    with open_regular(path, where) as fh:
        return b"".join(read_capped(fh, MAX_BYTES, where))


def _from_csv(data: bytes, where: str, Arrays):
    from ..throws.recordings.limits import MAX_LINE_CHARS, MAX_ROWS

    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ParameterError(where, "bytes that are not UTF-8 text", "be a UTF-8 CSV file") from None
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        raise ParameterError(where, "an empty file", "hold a header t,qw,qx,qy,qz then rows of numbers")
    longest = max(range(len(lines)), key=lambda k: len(lines[k]))
    if len(lines[longest]) > MAX_LINE_CHARS:
        raise ParameterError(where, f"a line of {len(lines[longest]):,} characters",
                             f"have lines of at most {MAX_LINE_CHARS:,} characters")
    if len(lines) - 1 > MAX_ROWS:
        raise ParameterError(where, f"{len(lines) - 1:,} rows", f"hold at most {MAX_ROWS:,} rows")
    header = [h.strip().strip('"').strip() for h in lines[0].split(",")]
    if len(header) > MAX_COLUMNS:
        raise ParameterError(where, f"{len(header)} columns", f"have at most {MAX_COLUMNS} columns")
    columns = _columns(header, where)
    try:
        table = np.loadtxt(io.StringIO("\n".join(lines[1:])), delimiter=",", ndmin=2, dtype=float,
                           usecols=sorted(set(columns.values())))
    except ValueError:
        row = _bad_row(lines[1:], len(header))
        raise ParameterError(where, f"row {row}", f"hold {len(header)} numbers separated by commas") from None
    if table.shape[0] == 0:
        table = np.zeros((0, len(set(columns.values()))))
    index = {c: k for k, c in enumerate(sorted(set(columns.values())))}
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
    except (TypeError, ValueError):
        raise ParameterError(where, "arrays that are not numbers", "hold numeric arrays") from None
    n = len(pick["t"])
    from ..throws.recordings.limits import MAX_ROWS

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
