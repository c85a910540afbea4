"""The plots of each view, declared once: rows, curves, the Recording column each reads, units, colours, log.

pyqtgraph draws a :class:`PlotSpec` live (:mod:`app.gui.plots.live_plots`) and matplotlib in exports
(:mod:`app.export.plots`); both read the values of a curve with :func:`curve_values` and
title a row with :func:`row_title`, so the window and the movie cannot drift apart. No Qt,
no matplotlib here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..scene.compare import SIDE_COLORS
from ..scene.style import AXIS_HEX, L_COLOR, OMEGA_COLOR
from ..simulation.compare import SIDES

#: smallest |value| drawn as log10 of its magnitude (below the round-off of a double)
LOG_FLOOR = 1e-17
#: values whose largest magnitude lies in this range are labelled as they are; others in
#: units of a power of ten, a multiple of 3 (as the SI prefixes)
PLAIN_RANGE = (1e-2, 1e4)
#: the markers' colours: a flip (dotted) and a kick (dashed)
FLIP_COLOR, KICK_COLOR = "#f5e663", "#ff7b72"
#: the shared time axis
TIME_TITLE, TIME_UNIT = "simulation time t", "s"
#: choices of the scrolling window (s of simulated time; None = all history)
WINDOWS = {"last 5 s": 5.0, "last 10 s": 10.0, "last 30 s": 30.0, "last 60 s": 60.0, "all": None}
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


@dataclass(frozen=True)
class Curve:
    """One curve: ``column`` of run ``run``'s recording (a :data:`~app.simulation.recording.SPAN_COLUMNS`
    name), its ``component`` (0, 1, 2 of a 3-vector column, ``"norm"`` for its length, None for a
    scalar column), the legend ``label``, its ``color`` ("#rrggbb"), line ``width`` (px) and ``dashed``."""

    column: str
    component: int | str | None
    label: str
    color: str
    run: int = 0
    width: float = 1.5
    dashed: bool = False


@dataclass(frozen=True)
class PlotRow:
    """One plot of a panel: its ``title`` and ``unit`` ("" for a ratio), its ``curves``.

    ``log_magnitude``: the row is drawn as log10 of |value| when the panel's log option is on
    (titled ``log_title``); ``markers``: the flips and kicks are marked on it. ``short_title``
    (and ``short_log_title``) name it in an export's narrower panel (default: the titles).
    """

    title: str
    unit: str
    curves: tuple
    log_magnitude: bool = False
    markers: bool = False
    log_title: str = ""
    short_title: str = ""
    short_log_title: str = ""


@dataclass(frozen=True)
class PlotSpec:
    """The rows of a view's plots, stacked on one time axis; ``default_window`` is a
    :data:`WINDOWS` label; ``log_default`` whether the log option starts on (exports use it);
    ``time_title`` what the time axis is (a replayed flight's: the time since its release)."""

    rows: tuple
    default_window: str
    log_default: bool = False
    time_title: str = TIME_TITLE

    @property
    def runs(self) -> int:
        """How many recordings the plots read (runs 0 .. runs-1)."""
        return 1 + max(c.run for row in self.rows for c in row.curves)


def _xyz(column: str, symbol: str) -> tuple:
    return tuple(Curve(column, k, f"{symbol}{'xyz'[k]}", AXIS_HEX[k]) for k in range(3))


#: the main view (and Poinsot's): L in the world frame, omega in the body frame, the drifts
MAIN_PLOTS = PlotSpec(
    rows=(
        PlotRow("Angular momentum L, world frame", "kg m²/s",
                _xyz("L", "L") + (Curve("L", "norm", "|L|", L_COLOR, width=2.0, dashed=True),),
                short_title="L, world"),
        PlotRow("Angular velocity ω, body frame", "rad/s", _xyz("w", "ω"), markers=True, short_title="ω, body"),
        PlotRow("Relative drift since t₀ or the last kick", "",
                (Curve("E_drift", None, "(E − E₀)/|E₀|", OMEGA_COLOR),
                 Curve("L_norm_drift", None, "(|L| − |L₀|)/|L₀|", L_COLOR)),
                log_magnitude=True, log_title="log₁₀ |relative drift| since t₀ or the last kick",
                short_title="relative drift", short_log_title="log₁₀ |relative drift|"),
    ),
    default_window="last 10 s",
)

#: the compare view: the energy and |L| drifts of runs A and B (log10 of magnitude by default:
#: the two sides differ by orders of magnitude, which a linear axis hides)
COMPARE_PLOTS = PlotSpec(
    rows=(
        PlotRow("Relative energy drift (E − E₀)/|E₀|", "",
                tuple(Curve("E_drift", None, side, color, run=k, width=1.8)
                      for k, (side, color) in enumerate(zip(SIDES, SIDE_COLORS))),
                log_magnitude=True, log_title="log₁₀ |relative energy drift|, (E − E₀)/|E₀|",
                short_title="(E − E₀)/|E₀|", short_log_title="log₁₀ |E − E₀| / |E₀|"),
        PlotRow("Relative |L| drift (|L| − |L₀|)/|L₀|", "",
                tuple(Curve("L_norm_drift", None, side, color, run=k, width=1.8)
                      for k, (side, color) in enumerate(zip(SIDES, SIDE_COLORS))),
                log_magnitude=True, log_title="log₁₀ |relative |L| drift|, (|L| − |L₀|)/|L₀|",
                short_title="(|L| − |L₀|)/|L₀|", short_log_title="log₁₀ ||L| − |L₀|| / |L₀|"),
    ),
    default_window="all",  # drift is measured from t0: the whole run by default
    log_default=True,
)


def curve_values(curve: Curve, columns, log: bool = False) -> np.ndarray:
    """The values ``curve`` draws from ``columns`` (a :class:`~app.simulation.recording.Span`
    or a dict of its columns), as log10 of their magnitude when ``log``."""
    data = columns[curve.column]
    if curve.component == "norm":
        values = np.linalg.norm(data, axis=1)
    elif curve.component is None:
        values = data
    else:
        values = data[:, curve.component]
    return log_magnitude(values) if log else values


def log_magnitude(values) -> np.ndarray:
    """log10 |values|, floored at :data:`LOG_FLOOR` (an exact zero stays drawable)."""
    return np.log10(np.maximum(np.abs(values), LOG_FLOOR))


def finite_bounds(*arrays) -> tuple[float, float] | None:
    """(lowest, highest) finite value of ``arrays``, None when there is none."""
    lows, highs = [], []
    for a in arrays:
        a = np.asarray(a, dtype=float)
        if a.size:
            lo, hi = float(a.min()), float(a.max())
            if not (np.isfinite(lo) and np.isfinite(hi)):  # a run that left the finite world
                a = a[np.isfinite(a)]
                if not a.size:
                    continue
                lo, hi = float(a.min()), float(a.max())
            lows.append(lo)
            highs.append(hi)
    return (min(lows), max(highs)) if lows else None


def power_of_ten(*arrays, bounds=None) -> int:
    """The power of ten (a multiple of 3) the numbers of ``arrays`` (or of their
    :func:`finite_bounds`) are labelled in: 0 when their largest magnitude is in PLAIN_RANGE
    (or there is none)."""
    bounds = finite_bounds(*arrays) if bounds is None else bounds
    top = 0.0 if bounds is None else max(abs(bounds[0]), abs(bounds[1]))
    if top == 0.0 or PLAIN_RANGE[0] <= top < PLAIN_RANGE[1]:
        return 0
    return 3 * int(np.floor(np.log10(top) / 3))


def row_title(row: PlotRow, exponent: int = 0, log: bool = False, short: bool = False) -> str:
    """What ``row`` shows, with its unit and the power of ten its numbers are in (10⁻⁶ kg m²/s,
    or ×10⁻¹⁵ for a ratio); ``log`` for its log10 |value| form, ``short`` for an export."""
    if log and row.log_magnitude:
        return (row.short_log_title if short else "") or row.log_title or f"log₁₀ |{row.title}|"
    title = (row.short_title if short else "") or row.title
    power = f"10{str(exponent).translate(_SUPERSCRIPT)}"
    if row.unit:
        return f"{title} ({row.unit if exponent == 0 else power + ' ' + row.unit})"
    return title if exponent == 0 else f"{title}, ×{power}"


def value_range(*arrays, pad: float = 0.08, free: float = 0.0, bounds=None) -> tuple[float, float]:
    """(low, high) of the values (or of their :func:`finite_bounds`), padded, with the top
    ``free`` share of the range above them all (a legend's band); a flat curve gets a small
    band around it."""
    bounds = finite_bounds(*arrays) if bounds is None else bounds
    if bounds is None:  # nothing drawn yet, or a run that left the finite world
        return (-1.0, 1.0)
    lo, hi = bounds
    width = hi - lo
    if width <= 1e-12 * max(abs(lo), abs(hi)) or width == 0.0:
        # a flat curve: a band of 10% around it, or +-1 around zero (no 2e-31 ticks)
        width = abs(hi) * 0.1 if abs(hi) > 1e-300 else 1.0
        bottom, top = lo - width, hi + width
    else:
        bottom, top = lo - pad * width, hi + pad * width
    # hi at (1 - free) of the way up: (hi - bottom) = (1 - free)(top' - bottom)
    top = max(top, bottom + (hi - bottom) / (1.0 - free))
    return bottom, top
