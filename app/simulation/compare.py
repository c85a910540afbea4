"""Two copies of one scenario that differ only in integrator and step: the pair the compare
view runs side by side and ``tumble export --view compare`` renders. No Qt, no VTK.

The copies keep the body, the start and the loads; only ``solver.integrator`` and
``solver.dt`` change, so every difference between the two bodies on screen is the
integrator's doing.
"""

from __future__ import annotations

from dataclasses import replace

from ..physics.errors import ParameterError
from ..physics.integrators import INTEGRATORS
from ..scenario import Scenario
from .worker import check_runnable

#: the pair shown by default: a first-order method whose energy creeps up, against the
#: splitting method that keeps |L| to round-off and its energy bounded
DEFAULT_INTEGRATORS = ("semi-implicit-euler", "splitting")
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
    if integrator not in INTEGRATORS:
        raise ParameterError(f"{prefix}integrator", integrator, "be one of " + ", ".join(INTEGRATORS))
    try:
        dt = float(dt)
    except (TypeError, ValueError):
        raise ParameterError(f"{prefix}dt", dt, "be a number (s)") from None
    if not (dt > 0 and dt < float("inf")):
        raise ParameterError(f"{prefix}dt", dt, "be a finite number > 0 (s)")
    if dt > solver.duration:
        raise ParameterError(f"{prefix}dt", dt, f"be <= the scenario's duration ({solver.duration:g} s)")
    try:
        sc = scenario.replace(solver=replace(solver, integrator=integrator, dt=dt))
        check_runnable(sc)
    except ParameterError as err:
        raise ParameterError(f"{prefix}{err.field.split('.')[-1]}", err.value, err.rule) from None
    return sc


def default_pair(scenario: Scenario, dts=(None, None)) -> tuple[Scenario, Scenario]:
    """The default comparison of ``scenario`` at its own dt (or ``dts``): each side takes its
    entry of :data:`DEFAULT_INTEGRATORS`, or :data:`FALLBACK_INTEGRATOR` if that one cannot
    run the scenario (the splitting method with applied torques, say)."""
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
