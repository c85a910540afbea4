"""What a fit gives back: the scenario of a flight, the plot of every flight, a text summary."""

from __future__ import annotations

import math

import numpy as np

from ..atomic import atomic_path
from ..physics.body import RELATIVE_SLACK
from ..scenario import Scenario, from_dict, save
from .fit import FitResult

#: the scenario's mass (kg): rotation never reads it; with --inertia-scale the real moment,
#: the equivalent box drawn in the window has about the object's size
SCENARIO_MASS = 1.0
#: the scenario's step (s), or a tenth of a very short flight
SCENARIO_DT = 1e-3
#: most flights drawn in one plot (a grid of small panels)
PLOT_MAX_FLIGHTS = 40


def _vector6(inertia: np.ndarray) -> list[float]:
    """Exudyn's order ``[Jxx, Jyy, Jzz, Jyz, Jxz, Jxy]`` of a symmetric tensor."""
    j = 0.5 * (inertia + inertia.T)
    return [float(j[0, 0]), float(j[1, 1]), float(j[2, 2]), float(j[1, 2]), float(j[0, 2]), float(j[0, 1])]


def scenario_dict(result: FitResult, index: int = 0, inertia_scale: float = 1.0) -> dict:
    """The TOML document of a scenario that replays flight ``index``: a custom body with the
    fitted inertia in the sensor frame (so a rate measured by the same sensor is its
    ``angular_velocity`` unchanged), the fitted drag as a load, no gravity, the flight's length."""
    f = result.flights[index]
    moments = result.moments * inertia_scale
    body = {"shape": "custom", "mass": SCENARIO_MASS, "inertia": _vector6(result.inertia * inertia_scale)}
    if moments[0] + moments[1] < moments[2] * (1 - RELATIVE_SLACK):
        body["allow_unphysical"] = True  # fitted ratios may break the triangle inequality a little
    ratios = ", ".join(f"{m:.4f}" for m in result.moments)
    doc = {
        "name": f"Fit of {_short(f.recording)}, flight at {f.start:.2f} s",
        "description": f"tumble fit: ratios {ratios}, {result.drag_model} drag; replays the flight "
                       f"from {f.start:.3f} s to {f.end:.3f} s",
        "body": body,
        "initial": {"angular_velocity": [float(x) for x in f.omega0]},
        "world": {"gravity": [0.0, 0.0, 0.0]},
        "solver": {"integrator": "rk4", "dt": min(SCENARIO_DT, f.duration / 10), "duration": f.duration},
    }
    if result.drag_model != "none":
        doc["loads"] = [{"kind": "drag", "model": result.drag_model,
                         "coefficients": [float(max(c, 0.0)) for c in result.drag * inertia_scale]}]
    return doc


def _short(name: str) -> str:
    from pathlib import Path

    return Path(str(name).rstrip("/")).name or str(name)


def flight_scenario(result: FitResult, index: int = 0, inertia_scale: float = 1.0) -> Scenario:
    """The validated :class:`Scenario` of :func:`scenario_dict`."""
    return from_dict(scenario_dict(result, index, inertia_scale))


def write_scenario(result: FitResult, path, inertia_scale: float = 1.0, index: int = 0) -> Scenario:
    """Write the scenario of flight ``index`` (validated first; atomically)."""
    scenario = flight_scenario(result, index, inertia_scale)
    save(scenario, path)
    return scenario


def write_plot(result: FitResult, path, title: str | None = None) -> None:
    """Measured rates as points over the fitted curves, one panel per flight (PNG, atomic)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    flights = result.flights[:PLOT_MAX_FLIGHTS]
    cols = min(4, len(flights))
    rows = math.ceil(len(flights) / cols)
    fig = Figure(figsize=(3.6 * cols, 2.4 * rows + 0.6), dpi=100)
    FigureCanvasAgg(fig)
    colours = ("#e5534b", "#57ab5a", "#539bf5")
    for k, f in enumerate(flights):
        ax = fig.add_subplot(rows, cols, k + 1)
        t = f.t - f.t[0]
        for c in range(3):
            ax.plot(t, f.w_fitted[:, c], color=colours[c], lw=1.2, label=f"ω{'xyz'[c]} fit" if k == 0 else None)
            ax.plot(t[f.used], f.w_measured[f.used, c], ".", color=colours[c], ms=2.5)
            if (~f.used).any():
                ax.plot(t[~f.used], f.w_measured[~f.used, c], "x", color="#768390", ms=3)
        for flip in (f.flip_time_measured, f.flip_time_fitted):
            if flip is not None:
                ax.axvline(flip, color="#c69026", lw=0.8, ls=":")
        ax.set_title(f"{_short(f.recording)} {f.start:.2f} s, rms {f.rms:.3f} rad/s", fontsize=8)
        ax.tick_params(labelsize=7)
        if k % cols == 0:
            ax.set_ylabel("ω (rad/s)", fontsize=8)
        if k >= len(flights) - cols:
            ax.set_xlabel("t − start (s)", fontsize=8)
    ratios = ", ".join(f"{m:.4f} ± {s:.1g}" for m, s in zip(result.moments, result.moments_std))
    more = f" (first {len(flights)} of {len(result.flights)} flights)" if len(result.flights) > len(flights) else ""
    fig.suptitle(title or f"tumble fit: ratios {ratios}, {result.drag_model} drag; points measured, "
                          f"lines fitted, x clipped{more}", fontsize=9)
    if flights:
        fig.axes[0].legend(fontsize=6, loc="upper right")
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png")


def _fmt(x) -> str:
    return "-" if x is None else f"{x:.3f}"


def summary(result: FitResult, inertia_scale: float = 1.0) -> str:
    """The text ``tumble fit`` prints without ``--json``."""
    lines = [f"{len(result.flights)} flights in {', '.join(result.recordings)}; fit took {result.seconds:.2f} s",
             "inertia ratios (principal moments over the largest): "
             + ", ".join(f"{m:.5f} ± {s:.2g}" for m, s in zip(result.moments, result.moments_std))]
    for m, axis in zip(result.moments, result.axes.T):
        lines.append(f"  axis (sensor frame) [{', '.join(f'{x: .4f}' for x in axis)}]  ratio {m:.5f}")
    if result.axes_mode == "fit":
        lines.append(f"  principal axes turned {result.rotation_deg:.2f} deg from the sensor's")
    if result.drag_model != "none":
        lines.append(f"{result.drag_model} drag (sensor frame, at {inertia_scale:g} kg m^2): "
                     + ", ".join(f"{c * inertia_scale:.4g} ± {s * inertia_scale:.1g}"
                                 for c, s in zip(result.drag, result.drag_std)))
    lines.append("| recording | start (s) | end (s) | |ω0| (rad/s) | rms (rad/s) | rms/|ω0| | flip measured (s) | flip fitted (s) |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for f in result.flights:
        lines.append(f"| {_short(f.recording)} | {f.start:.3f} | {f.end:.3f} | {np.linalg.norm(f.omega0):.2f} | "
                     f"{f.rms:.4f} | {f.rms_relative:.4f} | {_fmt(f.flip_time_measured)} | {_fmt(f.flip_time_fitted)} |")
    lines.append(f"median rms/|ω0|: {result.rms_relative:.4f}")
    return "\n".join(lines)
