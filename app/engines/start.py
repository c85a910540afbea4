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


#: an engine's first sample must be the body's start within this: the angle (rad) between the two
#: orientations, and the gap of omega and of the centre of mass relative to their size (1 rad/s and
#: 1 m where the start is at rest or at the origin). Every adapter sets the start in float64 and
#: reads it back before any step, so only a wrong conversion (a frame turned, an order swapped)
#: is off by more than round-off
START_MATCH = 1e-9


def start_gaps(start: Start, q, w, c) -> dict:
    """How far a first sample (``q`` body to world, ``w`` body frame, ``c`` world; None where a
    trajectory holds none) is from ``start``: orientation (rad), omega and com (relative)."""
    from ..physics import quaternion as quat

    gaps = {"orientation": float(quat.angle_between(np.asarray(start.q, dtype=float), np.asarray(q, dtype=float)))}
    for name, mine, theirs in (("omega", start.w, w), ("com", start.c, c)):
        if theirs is not None:
            mine = np.asarray(mine, dtype=float)
            gap = np.linalg.norm(np.asarray(theirs, dtype=float) - mine)
            gaps[name] = float(gap / max(float(np.linalg.norm(mine)), 1.0))
    return gaps


def start_mismatch(start: Start, q, w, c, tolerance: float = START_MATCH) -> str | None:
    """None when a first sample is ``start`` within ``tolerance`` (see :data:`START_MATCH`),
    else one line naming what differs and by how much (a NaN differs)."""
    gaps = start_gaps(start, q, w, c)
    words = {"orientation": "the orientation {:.3g} rad", "omega": "omega {:.3g} relative",
             "com": "the centre of mass {:.3g} relative"}
    off = [words[k].format(v) for k, v in gaps.items() if not v <= tolerance]
    if not off:
        return None
    return f"the first sample is not the body's start: {', '.join(off)} off (allowed {tolerance:g})"


def state_words(q, w, c) -> dict:
    """A first sample or a start as plain lists, for the --json object and the table."""
    as_list = lambda x: None if x is None else [float(v) for v in np.asarray(x, dtype=float)]  # noqa: E731
    return {"q": as_list(q), "w": as_list(w), "c": as_list(c)}


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
