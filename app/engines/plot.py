"""The audit plot (matplotlib, Agg, no window): per setting, the orientation error (log10 rad)
against time, the intermediate-axis omega over the reference's, and the separatrix ratio; with
several steps, a work-precision panel (error against wall time per simulated second)."""

from __future__ import annotations

import numpy as np

from .audit import Audit, label

#: the smallest error drawn (log10 rad): below it a run is the reference to round-off
ERROR_FLOOR = 1e-16


#: one line style per step, in the order the steps were given
DT_STYLES = ("-", "--", ":", "-.")


def draw_figure(result: Audit):
    """The figure: one colour per setting, one line style per step, one key at the right."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D


    curves = work_precision(result.summary)
    several = any(len(v) > 1 for v in curves.values())
    panels = 4 if several else 3
    fig = Figure(figsize=(12, 2.4 * panels + 0.6), layout="constrained")
    axes = fig.subplots(panels, 1)
    names = list(dict.fromkeys(label({**r.figures, "dt": None}) for r in result.runs))
    dts = list(dict.fromkeys(r.figures["dt"] for r in result.runs))
    palette = matplotlib.colormaps["tab10"].colors
    color = {name: palette[k % len(palette)] for k, name in enumerate(names)}
    style = {dt: DT_STYLES[k % len(DT_STYLES)] for k, dt in enumerate(dts)}
    ref_kind = result.reference.kind
    for run in result.runs:
        name = label({**run.figures, "dt": None})
        kw = dict(color=color[name], ls=style[run.figures["dt"]], lw=1.1)
        t = run.trajectory.t
        axes[0].plot(t, np.log10(np.maximum(run.series["orientation_error"], ERROR_FLOOR)), **kw)
        if run.series["omega2"] is not None:
            axes[1].plot(t, run.series["omega2"], **kw)
        if run.series["separatrix_ratio"] is not None:
            axes[2].plot(t, run.series["separatrix_ratio"], **kw)
    if result.runs:
        axes[1].plot(result.reference.t, result.runs[0].series["omega2_reference"], color="k", lw=2.2, alpha=0.35,
                     zorder=0)
    axes[2].axhline(1.0, color="k", lw=2.2, alpha=0.35, zorder=0)
    axes[0].set_ylabel("orientation error\nlog10 rad")
    axes[1].set_ylabel("ω intermediate\n(rad/s, body)")
    axes[2].set_ylabel("separatrix ratio\nD(t)/D(0)")
    for ax in axes[:3]:
        ax.set_xlabel("t (s)")
    summary = result.summary
    axes[0].set_title(f"{summary['scenario']}: against the {'exact solution' if ref_kind == 'exact' else 'DOP853 reference'}"
                      f" (grey), D = |L|² − 2 E I₂")
    if several:
        ax = axes[3]
        for name, pts in curves.items():
            x, y = zip(*pts)
            ax.loglog(x, np.maximum(y, ERROR_FLOOR), "o-", color=color[name])
        ax.set_xlabel("wall seconds per simulated second")
        ax.set_ylabel("max orientation\nerror (rad)")
    for ax in axes:
        ax.grid(True, alpha=0.3)
    handles = [Line2D([], [], color=color[n], lw=2, label=n) for n in names]
    handles += [Line2D([], [], color="k", ls=style[dt], lw=1.1, label=f"dt {dt:g} s") for dt in dts if dt is not None]
    handles.append(Line2D([], [], color="k", lw=2.2, alpha=0.35, label=f"reference ({ref_kind})"))
    fig.legend(handles=handles, loc="outside right upper", fontsize=8)
    return fig


def work_precision(summary: dict) -> dict:
    """setting label (no dt) -> [(wall seconds per simulated second, max error)] over its dts."""
    curves: dict = {}
    for r in summary["runs"]:
        if r["seconds"] is None or r["dt"] is None:
            continue
        name = label({**r, "dt": None})
        curves.setdefault(name, []).append((r["seconds"] / summary["duration"], r["max_orientation_error"]))
    return {k: sorted(v) for k, v in curves.items()}
