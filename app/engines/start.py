"""The body and start every engine is given: a scenario reduced to what a free-body engine takes.

Each adapter builds its engine's body with the frame origin at the centre of mass and the axes
of the scenario's body frame, so that every engine reports the same point and the same frame
(no conversion from a reference point that differs between engines). Where a scenario holds
what a free-body engine cannot take (applied loads, a damper, a rotor) it is refused here, in one
place, with one line. A mesh body enters as its inertia.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..physics.errors import ParameterError


@dataclass(frozen=True)
class Start:
    """Everything an engine run needs: SI units; ``c``, ``v`` the centre of mass (world);
    ``q`` (w, x, y, z) body to world; ``w`` angular velocity (body frame); ``inertia`` the
    tensor about the centre of mass in body axes (with products); ``gravity`` (world)."""

    mass: float
    inertia: np.ndarray
    c: np.ndarray
    v: np.ndarray
    q: np.ndarray
    w: np.ndarray
    gravity: np.ndarray

    @property
    def w_world(self) -> np.ndarray:
        """The initial angular velocity in the world frame."""
        from ..physics import quaternion as quat

        return quat.rotate(self.q, self.w)

    def principal(self) -> tuple[np.ndarray, np.ndarray]:
        """Principal moments (ascending) and axes (columns, body frame, right-handed)."""
        from ..physics.body import principal

        return principal(self.inertia)


def check_free_body(sc) -> None:
    """Refuse, in one line naming the scenario's field, what an engine's free body cannot take."""
    loads = sc.applied_loads
    if loads.torques or loads.forces or loads.drags:
        kinds = [k for k, items in (("torques", loads.torques), ("forces", loads.forces), ("drags", loads.drags))
                 if items]
        raise ParameterError("loads", f"{len(sc.loads)} load(s)",
                             f"be empty for an engine audit (applied {' and '.join(kinds)} are not given to the "
                             "engines' free body: audit the body without them)")
    body = sc.rigid_body
    if body.damper is not None:
        raise ParameterError("body.damper", "a damper", "be absent for an engine audit (an engine's free body has "
                             "no internal damper: audit the rigid body without it)")
    if body.rotor is not None:
        raise ParameterError("body.rotor", "a rotor", "be absent for an engine audit (an engine's free body has "
                             "no internal rotor: audit the rigid body without it)")


def start_of(sc) -> Start:
    """The :class:`Start` of scenario ``sc`` (refused by :func:`check_free_body` first)."""
    check_free_body(sc)
    s0 = sc.initial_state
    body = sc.rigid_body
    return Start(float(body.mass), np.array(body.inertia, dtype=float), np.array(s0.c, dtype=float),
                 np.array(s0.v, dtype=float), np.array(s0.q, dtype=float), np.array(s0.w, dtype=float),
                 np.array(sc.applied_loads.gravity, dtype=float))


#: an interval within this relative amount of a whole number of steps counts as whole
STEP_SLACK = 1e-9


def step_counts(times: np.ndarray, dt: float) -> np.ndarray:
    """Steps of ``dt`` between successive sample ``times``; raises :class:`ParameterError`
    naming ``--sample`` where an interval is not a whole number of steps (a fixed-step engine's
    state exists only on its steps)."""
    intervals = np.diff(np.asarray(times, dtype=float))
    counts = np.rint(intervals / dt).astype(np.int64)
    bad = (counts < 1) | (np.abs(intervals - counts * dt) > STEP_SLACK * np.maximum(intervals, dt))
    if bad.any():
        k = int(np.argmax(bad))
        raise ParameterError("--sample", f"{intervals[k]:g}",
                             f"be a whole multiple of --dt ({dt:g} s) for a fixed-step engine, the duration too")
    return counts
