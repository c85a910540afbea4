"""Files written by ``tumble bench --out DIR``: the rows as CSV and a work-precision plot."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

from ..atomic import atomic_path, write_text
from .benchmark import COLUMNS


def write_bench_outputs(rows: list[dict], folder: Path) -> list[Path]:
    """Write ``bench.csv`` and ``work-precision.png`` (orientation error vs wall time)."""
    folder = Path(folder)
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(list(COLUMNS) + ["error"])
    for r in rows:
        writer.writerow([r.get(k, "") for k in COLUMNS] + [r.get("error", "")])
    csv_path = folder / "bench.csv"
    write_text(csv_path, buf.getvalue())

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scenarios = list(dict.fromkeys(r["scenario"] for r in rows))
    fig, axes = plt.subplots(1, len(scenarios), figsize=(6.5 * len(scenarios), 5), squeeze=False)
    for ax, sc in zip(axes[0], scenarios):
        by_integrator = {}
        for r in rows:
            if r["scenario"] != sc:
                continue
            wall = r.get("wall_per_sim_s", math.nan)
            err = r.get("angle_err_max", math.nan)
            if math.isfinite(wall) and math.isfinite(err):
                by_integrator.setdefault(r["integrator"], []).append((wall, max(err, 1e-17), r["dt"]))
        for name, pts in by_integrator.items():
            pts.sort()
            ax.loglog([p[0] for p in pts], [p[1] for p in pts], "o-", label=name)
        ax.set_title(f"{sc}: work-precision")
        ax.set_xlabel("wall seconds per simulated second")
        ax.set_ylabel("max orientation error (rad)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    png_path = folder / "work-precision.png"
    with atomic_path(png_path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
    return [csv_path, png_path]
