"""The audit plot (matplotlib, Agg, no window): per setting, the orientation error (log10 rad)
against time, the intermediate-axis omega over the reference's, and the separatrix ratio; with
several steps, a work-precision panel (error against wall time per simulated second)."""

from __future__ import annotations

import numpy as np

from .audit import Audit, label

#: the smallest error drawn (log10 rad): below it a run is the reference to round-off
ERROR_FLOOR = 1e-16


def draw_figure(result: Audit):
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    from .report import work_precision

    curves = work_precision(result.summary)
    several = any(len(v) > 1 for v in curves.values())
    panels = 4 if several else 3
    fig = Figure(figsize=(10, 2.6 * panels), layout="constrained")
    axes = fig.subplots(panels, 1)
    ref_t = result.reference.t
    for run in result.runs:
        name = label(run.figures)
        t = run.trajectory.t
        err = np.maximum(run.series["orientation_error"], ERROR_FLOOR)
        axes[0].plot(t, np.log10(err), lw=1, label=name)
        if run.series["omega2"] is not None:
            axes[1].plot(t, run.series["omega2"], lw=1, label=name)
        if run.series["separatrix_ratio"] is not None:
            axes[2].plot(t, run.series["separatrix_ratio"], lw=1, label=name)
    if result.runs:
        first = result.runs[0]
        axes[1].plot(ref_t, first.series["omega2_reference"], "k--", lw=1.2, label=f"reference ({result.reference.kind})")
    axes[2].axhline(1.0, color="k", ls="--", lw=1.2, label=f"reference ({result.reference.kind})")
    axes[0].set_ylabel("orientation error\nlog10 rad")
    axes[1].set_ylabel("ω intermediate\n(rad/s, body)")
    axes[2].set_ylabel("separatrix ratio\nD(t)/D(0)")
    axes[2].set_xlabel("t (s)")
    summary = result.summary
    axes[0].set_title(f"{summary['scenario']}: engines against the "
                      f"{'exact solution' if summary['reference'] == 'exact' else 'DOP853 reference'}, "
                      "D = |L|² − 2 E I₂")
    if several:
        ax = axes[3]
        for name, pts in curves.items():
            x, y = zip(*pts)
            ax.loglog(x, np.maximum(y, ERROR_FLOOR), "o-", label=name)
        ax.set_xlabel("wall seconds per simulated second")
        ax.set_ylabel("max orientation\nerror (rad)")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="best")
    return fig
