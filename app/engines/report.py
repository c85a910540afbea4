"""An audit's outputs: the table, the summary CSV and JSON, one CSV per setting, and the plot."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np

from ..atomic import atomic_path
from .audit import Audit, flip_tolerance, label, scored

#: the summary CSV's columns (audit.csv), the run's figures by their --json names
SUMMARY_COLUMNS = ("engine", "setting", "version", "dt", "max_orientation_error", "final_L_drift",
                   "final_E_drift", "separatrix_ratio", "flip_count", "flip_count_reference", "first_flip",
                   "first_flip_reference", "com_error", "seconds")


def _g(x, digits=3) -> str:
    return "-" if x is None else f"{x:.{digits}g}"


def flips_words(run: dict) -> str:
    """The flips a run missed and added in words; for a run not scored, why not."""
    from .score import flip_words

    if not scored(run):
        return f"not scored: {run['not_scored']}"
    return flip_words(run["flips"], run["flips_reference"], flip_tolerance(run["flips_reference"]))


def table_text(summary: dict) -> str:
    """One row per setting, then in words the flips each missed or added."""
    head = (f"{summary['scenario']}: {summary['duration']:g} s sampled every {summary['sample']:g} s, "
            f"against the {'exact solution' if summary['reference'] == 'exact' else 'DOP853 reference (rtol 1e-12)'}")
    rows = [("setting", "version", "max err (rad)", "|L| drift", "E drift", "sep. ratio", "flips", "com err (m)",
             "seconds")]
    for r in summary["runs"]:
        flips = "-" if r["flips"] is None else f"{len(r['flips'])}/{len(r['flips_reference'])}"
        rows.append((label(r), str(r["version"] or "-"), _g(r["max_orientation_error"]), _g(r["final_L_drift"]),
                     _g(r["final_E_drift"]), _g(r["separatrix_ratio"], 4), flips, _g(r["com_error"]),
                     _g(r["seconds"], 2)))
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    lines = [head, ""]
    for i, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(w) if k < 2 else cell.rjust(w) for k, (cell, w) in enumerate(zip(row, widths))))
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines.append("")
    lines += [f"{label(r)}: {flips_words(r)}" for r in summary["runs"]]
    for r in summary["runs"]:
        if r.get("convention_error"):
            for name in ("body", "first_sample"):
                state = r["convention_error"][name]
                lines.append(f"{label(r)}: {name.replace('_', ' ')}: " + ", ".join(
                    f"{k} ({', '.join(f'{x:.9g}' for x in v)})" for k, v in state.items() if v is not None))
        lines += [f"{label(r)}: note: {note}" for note in r.get("notes") or ()]
    return "\n".join(lines)


def summary_rows(summary: dict) -> list[dict]:
    out = []
    for r in summary["runs"]:
        flips, ref = r["flips"], r["flips_reference"]
        out.append({"engine": r["engine"], "setting": r["setting"], "version": r["version"], "dt": r["dt"],
                    "max_orientation_error": r["max_orientation_error"], "final_L_drift": r["final_L_drift"],
                    "final_E_drift": r["final_E_drift"], "separatrix_ratio": r["separatrix_ratio"],
                    "flip_count": None if flips is None else len(flips), "flip_count_reference": len(ref),
                    "first_flip": flips[0] if flips else None, "first_flip_reference": ref[0] if ref else None,
                    "com_error": r["com_error"], "seconds": r["seconds"]})
    return out


def _cell(x) -> str:
    if x is None:
        return ""
    if isinstance(x, float):
        return repr(x)
    text = str(x)
    return '"' + text.replace('"', '""') + '"' if any(ch in text for ch in ',"\n') else text


def run_table(sc, setting_run) -> dict:
    """``tumble simulate``'s columns (those the run has) plus ``orientation_error``."""
    from ..simulation.table import trajectory_table

    traj, figures = setting_run.trajectory, setting_run.figures
    if figures["setting"] != "file":
        table = trajectory_table(sc, traj)
    else:  # a file: only what it held
        table = {"t": traj.t}
        if figures["com_error"] is not None:
            table.update(cx=traj.c[:, 0], cy=traj.c[:, 1], cz=traj.c[:, 2])
        table.update(qw=traj.q[:, 0], qx=traj.q[:, 1], qy=traj.q[:, 2], qz=traj.q[:, 3])
        if figures["flips"] is not None:
            table.update(wx=traj.w[:, 0], wy=traj.w[:, 1], wz=traj.w[:, 2])
    table["orientation_error"] = setting_run.series["orientation_error"]
    return table


#: the summary's files in an --out folder (a run's CSV never takes one of their names)
SUMMARY_FILES = ("audit.json", "audit.csv", "audit.png")


def output_names(labels) -> list[str]:
    """The files an --out folder receives for runs of these labels (:func:`~.audit.label`):
    one CSV per run, in order (its label with anything but letters, digits, dot and dash as _,
    never "audit", each once), then :data:`SUMMARY_FILES`."""
    names, used = [], {"audit"}
    for text in labels:
        stem = re.sub(r"[^A-Za-z0-9.\-]+", "_", text).strip("_") or "run"
        while stem.lower() in used:
            stem += "_"
        used.add(stem.lower())
        names.append(f"{stem}.csv")
    return names + list(SUMMARY_FILES)


def check_outputs(folder, names, flag: str = "--out") -> None:
    """Refuse, before any run, an --out folder where one of ``names`` could not be written: a
    folder (or anything but a file) already under that name."""
    from ..physics.errors import ParameterError

    folder = Path(folder)
    for name in names:
        path = folder / name
        if path.exists() and not path.is_file():
            raise ParameterError(f"{flag} {folder}", f"{'a folder' if path.is_dir() else 'something'} named {name} "
                                 "inside", f"leave {name} to the audit (it writes {', '.join(names[-3:])} and one "
                                 "CSV per run there)")


def write_outputs(sc, result: Audit, folder: Path, plot: Path | None = None) -> list[Path]:
    """Into ``folder``: one CSV per setting, audit.json, audit.csv and audit.png, all or nothing:
    written into a temporary folder beside it, which is renamed to ``folder`` (or whose files
    are renamed into an existing ``folder``) once every file is written; on any failure (a full
    disk) the temporary folder is removed and ``folder`` is untouched. Returns the paths."""
    import shutil
    import uuid

    from ..simulation.table import write_table

    folder = Path(folder)
    names = output_names(label(run.figures) for run in result.runs)
    check_outputs(folder, names)
    parent = folder.parent if str(folder.parent) else Path(".")
    staging = parent / f".{folder.name[:40]}.{uuid.uuid4().hex[:12]}.part"
    staging.mkdir()  # the user's umask applies, as to a folder made by hand
    try:
        for run, name in zip(result.runs, names):
            write_table(staging / name, run_table(sc, run))
        (staging / "audit.json").write_text(json.dumps(result.summary, allow_nan=False, indent=1) + "\n",
                                             encoding="utf-8")
        rows = summary_rows(result.summary)
        (staging / "audit.csv").write_text("\n".join([",".join(SUMMARY_COLUMNS)] + [
            ",".join(_cell(r[k]) for k in SUMMARY_COLUMNS) for r in rows]) + "\n", encoding="utf-8")
        write_plot(result, staging / "audit.png")
        if not folder.exists():
            os.rename(staging, folder)
        else:
            for name in names:
                os.replace(staging / name, folder / name)
            staging.rmdir()
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return [folder / name for name in names]


def write_plot(result: Audit, path) -> Path:
    """The audit plot as a PNG (matplotlib, Agg), written atomically (see :mod:`.plot`)."""
    from .plot import draw_figure

    path = Path(path)
    fig = draw_figure(result)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    return path
