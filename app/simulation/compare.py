"""Two copies of one scenario that differ only in integrator and step: the pair the compare
view runs side by side and ``tumble export --view compare`` renders. No Qt, no VTK.

The copies keep the body, the start and the loads; only ``solver.integrator`` and
``solver.dt`` change, so every difference between the two bodies on screen is the
integrator's doing.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..physics.errors import ParameterError
from ..physics.integrators import check_step_fits, integrator_info
from ..scenario import Scenario
from .worker import check_runnable

#: the pair shown by default: a first-order method whose energy creeps up, against the
#: splitting method that keeps |L| to round-off and its energy bounded
DEFAULT_INTEGRATORS = ("semi-implicit-euler", "splitting")
#: the step both sides take unless one is given (s), or the scenario's own if coarser: at
#: 10 ms the first-order method gains energy visibly within a flip, at the presets' 1 ms
#: the two bodies look alike for minutes and only the drift plots tell them apart
DEFAULT_DT = 0.01
#: used for a side whose default cannot run the scenario (e.g. with applied loads)
FALLBACK_INTEGRATOR = "rk4"
#: names of the two sides, in order (labels, plot legends, messages)
SIDES = ("A", "B")


def variant(scenario: Scenario, integrator: str | None = None, dt: float | None = None,
            side: str = "") -> Scenario:
    """``scenario`` with another integrator and/or step, validated and checked runnable.

    Raises :class:`ParameterError` naming the side's field (``A.integrator``, ``B.dt``).
    """
    prefix = f"{side}." if side else ""
    solver = scenario.solver
    integrator = solver.integrator if integrator is None else integrator
    dt = solver.dt if dt is None else dt
    try:
        integrator_info(integrator)
    except ParameterError as err:
        raise err.prefixed(side) from None
    try:
        dt = float(dt)
    except (TypeError, ValueError):
        raise ParameterError(f"{prefix}dt", dt, "be a number (s)") from None
    if not (dt > 0 and dt < float("inf")):
        raise ParameterError(f"{prefix}dt", dt, "be a finite number > 0 (s)")
    check_step_fits(dt, solver.duration, names={"dt": f"{prefix}dt", "duration": "the scenario's duration"})
    try:
        sc = scenario.replace(solver=replace(solver, integrator=integrator, dt=dt))
        check_runnable(sc)
    except ParameterError as err:
        raise ParameterError(f"{prefix}{err.field.split('.')[-1]}", err.value, err.rule) from None
    return sc


def default_dt(scenario: Scenario) -> float:
    """A side's step when none is given: :data:`DEFAULT_DT`, or the scenario's own step if
    that is coarser, and never past its duration."""
    return min(max(scenario.solver.dt, DEFAULT_DT), scenario.solver.duration)


def default_pair(scenario: Scenario, dts=(None, None)) -> tuple[Scenario, Scenario]:
    """The default comparison of ``scenario`` at ``dts`` (None: :func:`default_dt`): each
    side takes its entry of :data:`DEFAULT_INTEGRATORS`, or :data:`FALLBACK_INTEGRATOR` if
    that one cannot run the scenario (the splitting method with applied torques, say)."""
    dts = tuple(default_dt(scenario) if dt is None else dt for dt in dts)
    pair = []
    for side, name, dt in zip(SIDES, DEFAULT_INTEGRATORS, dts):
        try:
            pair.append(variant(scenario, name, dt, side))
        except ParameterError as err:
            if not err.field.endswith("integrator"):
                raise
            pair.append(variant(scenario, FALLBACK_INTEGRATOR, dt, side))
    return pair[0], pair[1]


def make_pair(scenario: Scenario, integrators=(None, None), dts=(None, None)) -> tuple[Scenario, Scenario]:
    """Both sides with the integrators and steps given (None: the default of that side)."""
    dts = tuple(default_dt(scenario) if dt is None else dt for dt in dts)
    defaults = default_pair(scenario, dts)
    return tuple(  # type: ignore[return-value]
        default if name is None else variant(scenario, name, dt, side)
        for side, default, name, dt in zip(SIDES, defaults, integrators, dts)
    )


def format_dt(dt: float) -> str:
    """A step for a label: ``1 ms``, ``0.25 ms``, ``20 ms``, ``0.1 s``."""
    if dt < 0.1:
        return f"{dt * 1e3:.4g} ms"
    return f"{dt:.4g} s"


def side_label(scenario: Scenario, separator: str = ", ") -> str:
    """``"rk4, dt 1 ms"``: what tells one side from the other (``separator`` ``"\\n"`` for
    a label of two short lines)."""
    return f"{scenario.solver.integrator}{separator}dt {format_dt(scenario.solver.dt)}"


def pose_at(rows: dict, t: float) -> tuple:
    """The pose at simulated time ``t`` from a block of history columns (``t`` ascending,
    as a :class:`~.recording.Span` holds them): ``(c, q, w, L, n)``, linear
    between the two samples around ``t`` (``q`` normalised, on the same hemisphere), the
    nearest sample outside the block; ``n`` counts the rows at or before ``t``.

    The two workers of a comparison each run at their own pace, so one is a record
    interval or two ahead of the other at any moment; a thrown body falls 0.2 m in 10 ms
    at 20 m/s, so the two are drawn at the same time, the earlier of their two latest.
    """
    ts = rows["t"]
    i = int(np.searchsorted(ts, t, side="right"))  # rows[:i] are at or before t
    if i == 0:
        return rows["c"][0], rows["q"][0], rows["w"][0], rows["L"][0], 1
    if i >= len(ts) or ts[i - 1] == t:
        return rows["c"][i - 1], rows["q"][i - 1], rows["w"][i - 1], rows["L"][i - 1], i
    a = (t - ts[i - 1]) / (ts[i] - ts[i - 1])
    lerp = {k: (1 - a) * rows[k][i - 1] + a * rows[k][i] for k in ("c", "w", "L")}
    q0, q1 = rows["q"][i - 1], rows["q"][i]
    q1 = -q1 if float(q0 @ q1) < 0 else q1
    q = (1 - a) * q0 + a * q1
    return lerp["c"], q / np.linalg.norm(q), lerp["w"], lerp["L"], i
