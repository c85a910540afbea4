"""What a fit gives back: the scenario of a flight, the plot of every flight, a text summary."""

from __future__ import annotations

import math

import numpy as np

from pathlib import Path

from ...atomic import atomic_path
from ...physics.errors import ParameterError
from ...scenario import Scenario, dumps, from_dict
from .fit import FitResult, triangle_deficit, triangle_violation

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


def first_fitted(result: FitResult) -> int:
    """Index of the first flight the fit used (not excluded)."""
    return next((k for k, f in enumerate(result.flights) if not f.excluded), 0)


def scenario_dict(result: FitResult, index: int | None = None, inertia_scale: float = 1.0,
                  allow_unphysical: bool = False) -> dict:
    """The TOML document of a scenario that replays flight ``index`` (default: the first one
    fitted): a custom body with the fitted inertia in the sensor frame (so a rate measured by
    the same sensor is its ``angular_velocity`` unchanged), the fitted drag as a load, no
    gravity, the flight's length. Ratios that break the triangle inequality are refused (the
    sentence of :func:`~app.throws.fitting.fit.triangle_violation`) unless ``allow_unphysical`` or
    within a flat body's tolerance (then the body says ``allow_unphysical = true``)."""
    index = first_fitted(result) if index is None else index
    f = result.flights[index]
    body = {"shape": "custom", "mass": SCENARIO_MASS, "inertia": _vector6(result.inertia * inertia_scale)}
    if triangle_deficit(result.moments) > 0:
        broken = triangle_violation(result.moments, result.moments_std)
        if broken and not allow_unphysical:
            raise UnphysicalFit(broken)
        body["allow_unphysical"] = True
    ratios = ", ".join(f"{m:.4f}" for m in result.moments)
    doc = {
        "name": f"Fit of {_short(f.recording)}, flight at {f.start:.2f} s",
        "description": f"tumble fit: ratios {ratios}, {result.drag_model} drag; replays the flight "
                       f"from {f.start:.3f} s to {f.end:.3f} s",
        "body": body,
        "initial": {"angular_velocity": [float(x) + 0.0 for x in f.omega0]},
        "world": {"gravity": [0.0, 0.0, 0.0]},
        "solver": {"integrator": "rk4", "dt": min(SCENARIO_DT, f.duration / 10), "duration": f.duration},
    }
    if result.drag_model != "none":
        doc["loads"] = [{"kind": "drag", "model": result.drag_model,
                         "coefficients": [float(max(c, 0.0)) + 0.0 for c in result.drag * inertia_scale]}]
    return doc


class UnphysicalFit(ParameterError):
    """Fitted ratios that break the triangle inequality, refused for a scenario."""

    def __init__(self, sentence: str):
        Exception.__init__(self, sentence)
        self.field, self.value, self.rule = "ratios", None, sentence

    def __str__(self):
        return self.args[0]


def _short(name: str) -> str:
    return Path(str(name).rstrip("/")).name or str(name)


def flight_scenario(result: FitResult, index: int | None = None, inertia_scale: float = 1.0,
                    allow_unphysical: bool = False) -> Scenario:
    """The validated :class:`Scenario` of :func:`scenario_dict`."""
    return from_dict(scenario_dict(result, index, inertia_scale, allow_unphysical))


def scenario_text(scenario: Scenario, base_dir=None) -> str:
    """The TOML text of a fitted scenario, ending in a newline."""
    text = dumps(scenario, base_dir)
    return text if text.endswith("\n") else text + "\n"


def write_scenario(result: FitResult, path, inertia_scale: float = 1.0, index: int | None = None,
                   allow_unphysical: bool = False) -> Scenario:
    """Write the scenario of flight ``index`` (validated first; atomically)."""
    from ...atomic import write_text

    scenario = flight_scenario(result, index, inertia_scale, allow_unphysical)
    write_text(path, scenario_text(scenario, Path(path).parent))
    return scenario


#: the plot's panels: columns at most, size of one panel (inches), figure resolution
PLOT_COLUMNS = 3
PANEL_SIZE = (4.6, 3.1)
PLOT_DPI = 100
#: characters of a panel title's line and of the figure title's line before they wrap
PANEL_TITLE_CHARS = 52
FIGURE_TITLE_CHARS = 150
EXCLUDED_COLOUR = "#9aa0a6"


COLOURS = ("#e5534b", "#57ab5a", "#539bf5")
#: measured samples' marker size (points): 2.5 was a speck under the curves at 100 dpi
POINT_SIZE = 4.0
FLIP_COLOUR = "#c69026"
LEAD_COLOUR = "#c69026"


def _key(fig, entries, ncol: int) -> None:
    """One key for every panel, under them all: ``entries`` are (label, line kwargs)."""
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], **kw) for _label, kw in entries]
    fig.legend(handles, [label for label, _ in entries], loc="outside lower center", ncol=ncol, fontsize=8,
               frameon=False, handlelength=2.0, columnspacing=1.4)


def _axis_entries(what: str) -> list:
    """The key's colours: one line per omega component (``what``: fitted, predicted)."""
    return [(f"ω{'xyz'[c]} {what}", {"color": COLOURS[c], "lw": 1.5}) for c in range(3)]


def _panel_figure(n: int):
    """(Figure, rows, columns, width in inches) for ``n`` panels: sized to them, titles laid out
    by matplotlib's constrained layout."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    cols = max(1, min(PLOT_COLUMNS, n))
    rows = max(1, math.ceil(n / cols))
    width = max(PANEL_SIZE[0] * cols, 6.4)
    fig = Figure(figsize=(width, PANEL_SIZE[1] * rows + 0.9), dpi=PLOT_DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig, rows, cols, width


def write_plot(result: FitResult, path, title: str | None = None) -> None:
    """Measured rates as points over the fitted curves, one panel per flight (PNG, atomic)."""
    with atomic_path(path) as tmp:
        draw_plot(result, tmp, title)


def draw_plot(result: FitResult, path, title: str | None = None) -> None:
    """:func:`write_plot` into ``path`` as it is (the caller publishes it)."""
    plot_figure(result, title).savefig(path, format="png")


def plot_figure(result: FitResult, title: str | None = None):
    """The matplotlib Figure of :func:`write_plot`: sized to its panels, every title wrapped
    inside it, titles plain text (a ``$`` in a file name is a dollar sign, not mathematics), an
    excluded flight drawn in grey with its reason."""
    import textwrap

    flights = result.flights[:PLOT_MAX_FLIGHTS]
    fig, rows, cols, width = _panel_figure(len(flights))
    for k, f in enumerate(flights):
        ax = fig.add_subplot(rows, cols, k + 1)
        t = f.t - f.t[0]
        grey = f.excluded
        for c in range(3):
            colour = EXCLUDED_COLOUR if grey else COLOURS[c]
            ax.plot(t, f.w_fitted[:, c], color=colour, lw=1.2, ls="--" if grey else "-")
            ax.plot(t[f.used], f.w_measured[f.used, c], ".", color=colour, ms=POINT_SIZE)
            if (~f.used).any():
                ax.plot(t[~f.used], f.w_measured[~f.used, c], "x", color="#768390", ms=POINT_SIZE)
        for flip, style in ((f.flip_time_measured, ":"), (f.flip_time_fitted, "-")):
            if flip is not None and not grey:
                ax.axvline(flip, color=FLIP_COLOUR, lw=0.8, ls=style)
        head = f"{k + 1}. {_short(f.recording)} at {f.start:.2f} s, rms {f.rms:.3f} rad/s"
        if f.cut:
            head += f" (recording {'starts' if f.cut == 'start' else 'ends'} in flight)"
        if grey:
            ax.set_facecolor("#f1f3f4")
            head = f"EXCLUDED {head}: {f.reason}"
        ax.set_title("\n".join(textwrap.wrap(head, PANEL_TITLE_CHARS)[:4]), fontsize=8,
                     parse_math=False, color="#5f6368" if grey else "black")
        ax.tick_params(labelsize=7)
        if k % cols == 0:
            ax.set_ylabel("ω (rad/s)", fontsize=8, parse_math=False)
        if k >= len(flights) - cols:
            ax.set_xlabel("t - start (s)", fontsize=8, parse_math=False)
    ratios = ", ".join(f"{_plain(m, '.4f')} ± {s:.1g}" for m, s in zip(result.moments, result.moments_std))
    more = f" (first {len(flights)} of {len(result.flights)} flights)" if len(result.flights) > len(flights) else ""
    text = title or (f"tumble fit: ratios {ratios}, {result.drag_model} drag; points measured, lines fitted, "
                     f"x clipped, grey excluded{more}")
    fig.suptitle("\n".join(textwrap.wrap(text, int(FIGURE_TITLE_CHARS * width / (PANEL_SIZE[0] * 3)))),
                 fontsize=9, parse_math=False)
    if flights:  # one whole key for all panels: what the colours, points, crosses and flip lines are
        _key(fig, _axis_entries("fitted") + [
            ("measured", {"color": "#444c56", "ls": "", "marker": ".", "ms": POINT_SIZE * 2}),
            ("clipped, not fitted", {"color": "#768390", "ls": "", "marker": "x", "ms": POINT_SIZE}),
            ("flip measured", {"color": FLIP_COLOUR, "lw": 0.8, "ls": ":"}),
            ("flip fitted", {"color": FLIP_COLOUR, "lw": 0.8, "ls": "-"})], ncol=7)
    return fig


def _plain(x, spec: str) -> str:
    """``x`` formatted with ``spec``, without the sign of a negative zero (``-0.0000``)."""
    text = format(float(x), spec)
    if text.startswith("-") and not any(ch in "123456789" for ch in text.split("e")[0]):
        text = text[1:]
    return text


def _fmt(x) -> str:
    return "-" if x is None else _plain(x, ".3f")


def plural(n: int, word: str) -> str:
    """``1 flight``, ``2 flights``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def summary(result: FitResult, inertia_scale: float = 1.0) -> str:
    """The text ``tumble fit`` prints without ``--json``: a Markdown table of the flights
    (excluded ones with their reason) between lines of figures."""
    fitted = [f for f in result.flights if not f.excluded]
    excluded = len(result.flights) - len(fitted)
    lines = [f"{plural(len(fitted), 'flight')} fitted"
             + (f", {excluded} excluded" if excluded else "")
             + f" in {', '.join(result.recordings)}; fit took {result.seconds:.2f} s",
             "inertia ratios (principal moments over the largest): "
             + ", ".join(f"{_plain(m, '.5f')} ± {s:.2g}" for m, s in zip(result.moments, result.moments_std))]
    for m, axis in zip(result.moments, result.axes.T):
        lines.append(f"  axis (sensor frame) [{', '.join(_plain(x, ' .4f') for x in axis)}]  ratio {_plain(m, '.5f')}")
    if result.axes_mode == "fit":
        lines.append(f"  principal axes turned {result.rotation_deg:.2f} deg from the sensor's")
    if result.drag_model != "none":
        lines.append(f"{result.drag_model} drag (sensor frame, at {inertia_scale:g} kg m^2): "
                     + ", ".join(f"{_plain(c * inertia_scale, '.4g')} ± {s * inertia_scale:.1g}"
                                 for c, s in zip(result.drag, result.drag_std)))
    lines.append("| # | recording | start (s) | end (s) | ‖ω0‖ (rad/s) | rms (rad/s) | rms/‖ω0‖ | flip measured (s) | "
                 "flip fitted (s) | note |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    for k, f in enumerate(result.flights):
        note = []
        if f.cut:
            note.append(f"recording {'starts' if f.cut == 'start' else 'ends'} in flight")
        if f.excluded:
            note.append(f"excluded: {f.reason}")
        lines.append(f"| {k + 1} | {_short(f.recording)} | {f.start:.3f} | {f.end:.3f} | {np.linalg.norm(f.omega0):.2f} | "
                     f"{f.rms:.4f} | {f.rms_relative:.4f} | {_fmt(f.flip_time_measured)} | {_fmt(f.flip_time_fitted)} | "
                     f"{'; '.join(note).replace('|', '/')} |")
    lines.append(f"median rms/‖ω0‖ of the fitted flights: {result.rms_relative:.4f}")
    return "\n".join(lines)


def flip_error(flight: dict) -> float | None:
    """|predicted - measured| / measured first flip time of one of ``predict``'s flights, where
    both exist; else None."""
    p, m = flight["flip_time_predicted"], flight["flip_time_measured"]
    return abs(p - m) / m if p is not None and m is not None and m > 0 else None


def prediction_table(flights: list[dict], lead: float, seconds: float) -> str:
    """The text ``tumble predict`` prints: one Markdown row per flight and the median error."""
    lines = [f"{plural(len(flights), 'flight')} predicted from their first {lead:g} s in {seconds:.2f} s",
             "| # | recording | start (s) | end (s) | ‖ω0‖ (rad/s) | flip predicted (s) | flip measured (s) | "
             "flip error | rms/‖ω0‖ |",
             "|---|---|---|---|---|---|---|---|---|"]
    errors = []
    for k, f in enumerate(flights):
        p, m = f["flip_time_predicted"], f["flip_time_measured"]
        error = flip_error(f)
        if error is not None:
            errors.append(error)
        rel = f["rms_relative"]
        lines.append(f"| {k + 1} | {_short(f['recording'])} | {f['start']:.3f} | {f['end']:.3f} | "
                     f"{np.linalg.norm(f['omega0']):.2f} | {_fmt(p)} | {_fmt(m)} | "
                     f"{'-' if error is None else f'{100 * error:.2f}%'} | {'-' if rel is None else f'{rel:.4f}'} |")
    if errors:
        lines.append(f"median flip error {100 * float(np.median(errors)):.2f}% over {plural(len(errors), 'flight')} "
                     f"with both flip times; within 5%: {100 * float(np.mean(np.array(errors) <= 0.05)):.0f}%")
    return "\n".join(lines)


def draw_predictions(body, recordings, flights: list[dict], horizon: float, path, lead: float | None = None) -> None:
    """Measured rates (points) over the predicted curves, one panel per flight, into ``path``;
    ``lead``: the first seconds of each flight omega0 was fitted on, shaded."""
    import textwrap

    from .predict import predicted_curve

    by_name = {r.name: r for r in recordings}
    shown = flights[:PLOT_MAX_FLIGHTS]
    fig, rows, cols, _ = _panel_figure(len(shown))
    for k, f in enumerate(shown):
        ax = fig.add_subplot(rows, cols, k + 1)
        rec = by_name[f["recording"]]
        inside = (rec.t >= f["start"]) & (rec.t <= min(f["end"], f["start"] + horizon)) & ~rec.saturated
        tc, wc = predicted_curve(body, f["omega0"], horizon)
        if lead is not None:  # the measured samples the prediction starts from
            ax.axvspan(0.0, lead, color=LEAD_COLOUR, alpha=0.15, lw=0)
        for c in range(3):
            ax.plot(tc, wc[:, c], color=COLOURS[c], lw=1.2)
            ax.plot(rec.t[inside] - f["start"], rec.w[inside, c], ".", color=COLOURS[c], ms=POINT_SIZE)
        for flip, style in ((f["flip_time_predicted"], "-"), (f["flip_time_measured"], ":")):
            if flip is not None:
                ax.axvline(flip, color=FLIP_COLOUR, lw=0.8, ls=style)
        head = f"{k + 1}. {_short(f['recording'])} at {f['start']:.2f} s"
        ax.set_title("\n".join(textwrap.wrap(head, PANEL_TITLE_CHARS)[:3]), fontsize=8, parse_math=False)
        ax.tick_params(labelsize=7)
        if k % cols == 0:
            ax.set_ylabel("ω (rad/s)", fontsize=8, parse_math=False)
        if k >= len(shown) - cols:
            ax.set_xlabel("t - start (s)", fontsize=8, parse_math=False)
    fig.suptitle("tumble predict: points measured, lines predicted; flips: solid predicted, dotted measured",
                 fontsize=9, parse_math=False)
    if shown:  # one whole key for all panels
        entries = _axis_entries("predicted") + [
            ("measured", {"color": "#444c56", "ls": "", "marker": ".", "ms": POINT_SIZE * 2}),
            ("flip predicted", {"color": FLIP_COLOUR, "lw": 0.8, "ls": "-"}),
            ("flip measured", {"color": FLIP_COLOUR, "lw": 0.8, "ls": ":"})]
        if lead is not None:
            entries.append((f"first {lead:g} s: ω0 fitted here", {"color": LEAD_COLOUR, "alpha": 0.3, "lw": 6}))
        _key(fig, entries, ncol=len(entries))
    fig.savefig(path, format="png")
