"""Numbers rounded to what they mean, and the HTML tables a notebook shows of a fit and a run.

The rule (:func:`with_error`): a standard error keeps two significant digits and its value is
rounded to the same decimal place, as the GUM advises (JCGM 100:2008, 7.2.6: "it usually
suffices to quote u(y) to at most two significant digits"); a time read off samples keeps the
place of the sample spacing (one significant digit of it). Text only: nothing here draws or
imports anything heavy.
"""

from __future__ import annotations

import html
import math

#: significant digits a standard error keeps (the value is rounded to the same place)
ERROR_DIGITS = 2
#: significant digits of a number given without an error (a residual, a drift, a figure)
PLAIN_DIGITS = 2
#: what a table shows for a number that does not exist (no flip, no standard error)
MISSING = "–"
#: a run's summary lists the times of at most this many flips
LISTED_FLIPS = 8


def _finite(x) -> bool:
    try:
        return x is not None and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def _unsigned_zero(text: str) -> str:
    """``text`` without the sign of a negative zero (``-0.00`` -> ``0.00``)."""
    if text.startswith("-") and not any(ch in "123456789" for ch in text.split("e")[0]):
        return text[1:]
    return text


def decimal_place(error: float, digits: int = ERROR_DIGITS) -> int:
    """The power of ten of the last digit kept when ``error`` (> 0, finite) keeps ``digits``
    significant digits: 0.0172 -> -3 (0.017), 0.0996 -> -2 (0.10, the carry counted), 1234 -> 2."""
    place = math.floor(math.log10(error)) - (digits - 1)
    if round(error / 10.0 ** place) >= 10 ** digits:  # rounding carried into one more digit
        place += 1
    return place


def at_place(value: float, place: int) -> str:
    """``value`` rounded to the decimal place ``10**place`` (``at_place(14.1464, -3)`` -> ``14.146``)."""
    if place >= 0:
        step = 10 ** place
        return _unsigned_zero(f"{round(float(value) / step) * step:d}")
    return _unsigned_zero(f"{float(value):.{-place}f}")


def significant(value, digits: int = PLAIN_DIGITS) -> str:
    """``value`` to ``digits`` significant digits, plainly written (0.0012, 14, 3.2e-13)."""
    if not _finite(value):
        return MISSING
    x = float(value)
    if x == 0:
        return "0"
    place = decimal_place(abs(x), digits)
    if -6 <= place <= 6:
        return at_place(x, place)
    return _unsigned_zero(f"{x:.{digits - 1}e}")


def with_error(value, error, digits: int = ERROR_DIGITS) -> tuple[str, str]:
    """(value, error) as text: the error to ``digits`` significant digits, the value rounded to
    the same decimal place (``with_error(0.30001134, 6.82e-05)`` -> ``("0.300011", "0.000068")``).
    Without a usable error (None, 0, not finite) the value keeps four significant digits and
    the error reads as missing."""
    if not _finite(value):
        return MISSING, MISSING
    if not _finite(error) or float(error) <= 0:
        return significant(value, 4), MISSING
    place = decimal_place(float(error), digits)
    return at_place(value, place), at_place(float(error), place)


def to_spacing(value, spacing) -> str:
    """A time ``value`` (s) read off samples ``spacing`` s apart, to the place of that spacing
    (0.27814 s at 10 ms -> ``0.28``; at 2.5 ms -> ``0.278``)."""
    if not _finite(value):
        return MISSING
    if not _finite(spacing) or float(spacing) <= 0:
        return significant(value, 4)
    return at_place(value, decimal_place(float(spacing), 1))


# ------------------------------------------------------------------ HTML


def escape(text) -> str:
    return html.escape(str(text))


def table(header, rows, caption=None, numbers=()) -> str:
    """An HTML table: ``header`` cells, ``rows`` of cells (text, escaped here), an optional
    caption (HTML, not escaped); the columns whose indices are in ``numbers`` are right-aligned."""
    def cells(row, tag):
        return "".join(f'<{tag} style="text-align:{"right" if k in numbers else "left"}">{escape(c)}</{tag}>'
                       for k, c in enumerate(row))

    head = f"<thead><tr>{cells(header, 'th')}</tr></thead>"
    body = "".join(f"<tr>{cells(row, 'td')}</tr>" for row in rows)
    title = f'<caption style="text-align:left">{caption}</caption>' if caption else ""
    return f"<table>{title}{head}<tbody>{body}</tbody></table>"


def _short(name: str) -> str:
    from pathlib import Path

    return Path(str(name).rstrip("/")).name or str(name)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def flight_spacing(flight) -> float | None:
    """The median spacing of a flight's samples (s), None with fewer than two."""
    t = getattr(flight, "t", None)
    if t is None or len(t) < 2:
        return None
    steps = sorted(float(b) - float(a) for a, b in zip(t[:-1], t[1:]))
    return steps[len(steps) // 2]


def fit_html(result, inertia_scale: float = 1.0, notes=()) -> str:
    """A fit (:class:`~app.throws.fitting.fit.FitResult`) as HTML: what it is, the inertia
    ratios with their standard errors and principal axes, the drag, every flight, and how the
    numbers are rounded."""
    fitted = [f for f in result.flights if not f.excluded]
    excluded = len(result.flights) - len(fitted)
    where = ", ".join(_short(r) for r in result.recordings) or "the recordings given"
    heading = (f"<p><b>Fit of {escape(where)}</b>: {_plural(len(fitted), 'flight')} fitted"
               + (f", {excluded} excluded" if excluded else "")
               + ("; principal axes fitted, turned " + escape(significant(result.rotation_deg)) + "° from the sensor's"
                  if result.axes_mode == "fit" else "; principal axes taken as the sensor's")
               + f"; {escape(result.drag_model)} drag; median rms/‖ω₀‖ "
               + f"{escape(significant(100 * result.rms_relative, 2))}%.</p>")
    rows = []
    for k, (m, s, axis) in enumerate(zip(result.moments, result.moments_std, result.axes.T)):
        value, error = with_error(m, s)
        if k == len(result.moments) - 1 and not (_finite(s) and float(s) > 0):
            value, error = "1", "(the largest, by definition)"
        rows.append((k + 1, value, error, "[" + ", ".join(significant(x, 3) for x in axis) + "]"))
    ratios = table(("axis", "ratio J/J_max", "± standard error", "direction (sensor frame)"), rows,
                   "Inertia ratios: the principal moments over the largest, ascending", numbers=(1, 2))
    parts = [heading, ratios]
    if result.drag_model != "none":
        drag_rows = [(axis, *with_error(c * inertia_scale, s * inertia_scale))
                     for axis, c, s in zip("xyz", result.drag, result.drag_std)]
        parts.append(table(("sensor axis", "coefficient", "± standard error"), drag_rows,
                           f"{escape(result.drag_model.capitalize())} drag at a largest moment of "
                           f"{escape(f'{inertia_scale:g}')} kg m²", numbers=(1, 2)))
    flight_rows = []
    for k, f in enumerate(result.flights):
        spacing = flight_spacing(f)
        speed = math.sqrt(sum(float(x) ** 2 for x in f.omega0))
        note = []
        if f.cut:
            note.append(f"recording {'starts' if f.cut == 'start' else 'ends'} in flight")
        if f.excluded:
            note.append(f"excluded: {f.reason}")
        flight_rows.append((k + 1, _short(f.recording), to_spacing(f.start, spacing), to_spacing(f.end, spacing),
                            with_error(speed, f.rms)[0], significant(f.rms), significant(100 * f.rms_relative),
                            to_spacing(f.flip_time_measured, spacing), to_spacing(f.flip_time_fitted, spacing),
                            "; ".join(note)))
    parts.append(table(("#", "recording", "start (s)", "end (s)", "‖ω₀‖ (rad/s)", "rms (rad/s)", "rms/‖ω₀‖ (%)",
                        "flip measured (s)", "flip fitted (s)", "note"), flight_rows,
                       "Flights (times in the recording's own clock; a flip time from the flight's start)",
                       numbers=range(2, 9)))
    parts.append(f"<p><small>Rounded to what they mean: a ratio or a drag coefficient to {ERROR_DIGITS} significant "
                 f"digits of its standard error, a time to its recording's sample spacing, ‖ω₀‖ to "
                 f"{ERROR_DIGITS} significant digits of the flight's rms residual, the rest to {PLAIN_DIGITS} "
                 f"significant digits; {MISSING} where a throw does not start near the intermediate axis (no flip "
                 f"time).</small></p>")
    if notes:
        parts.append("<ul>" + "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ul>")
    return "\n".join(parts)


def run_html(name: str, figures: dict, samples: int, plot_png: bytes | None = None) -> str:
    """A run's summary as HTML: what was simulated, its figures (``Run.figures``) with flip
    periods to the output interval and drifts to two significant digits, and its plot."""
    import base64

    interval = figures["sample"] if figures.get("sample") else figures["dt"]
    period, mean = figures["predicted_flip_period"], figures["mean_flip_period"]
    flips = figures["flip_times"]
    dt, duration = figures["dt"], figures["duration"]
    heading = (f"<p><b>{escape(name)}</b>: {escape(figures['integrator'])}, dt = {dt:g} s, {duration:g} s simulated, "
               f"{samples} samples; "
               f"{_plural(len(flips), 'flip')}"
               + (f" at {escape(', '.join(to_spacing(t, interval) for t in flips[:LISTED_FLIPS]))}"
                  + (", …" if len(flips) > LISTED_FLIPS else "") + " s" if len(flips) else "")
               + ".</p>")
    rows = [("flips (intermediate-axis reversals)", str(len(flips))),
            ("predicted flip period (s)", MISSING if period is None else significant(period, 4)),
            ("observed mean flip period (s)", MISSING if mean is None else to_spacing(mean, interval)),
            ("max relative energy drift", significant(figures["max_E_drift"])),
            ("max relative world-L drift", significant(figures["max_L_drift"])),
            ("max relative |L| drift", significant(figures["max_L_norm_drift"]))]
    out = heading + table(("quantity", "value"), rows, numbers=(1,))
    if plot_png is not None:
        data = base64.b64encode(plot_png).decode("ascii")
        out += (f'\n<p>ω in the body frame and the relative drift of E and |L| over the run:</p>'
                f'<img alt="omega and drift of {escape(name)}" src="data:image/png;base64,{data}"/>')
    return out
