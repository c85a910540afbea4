"""Rigid-body state and trajectory containers (user body frame; see package conventions)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from . import quaternion as quat
from .errors import ParameterError

#: a quaternion within this of unit length is normalised silently; further off is an error
QUATERNION_NORM_SLACK = 1e-6


@dataclass(frozen=True)
class State:
    """State at time ``t``: ``c``, ``v`` (world), ``q`` (body to world), ``w`` (body frame).

    ``s`` is the absolute angular velocity of a body's damper sphere (body frame), None for
    a body without one (see :class:`~app.physics.body.Damper`).
    Arrays are (3,)/(4,) for one body or (N, 3)/(N, 4) for a batch. Frozen and copied on
    construction, so a published state can be read from any thread.
    """

    t: float
    c: np.ndarray
    v: np.ndarray
    q: np.ndarray
    w: np.ndarray
    s: np.ndarray | None = None

    def __post_init__(self):
        for name in ("c", "v", "q", "w") + (() if self.s is None else ("s",)):
            arr = np.array(getattr(self, name), dtype=float)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        object.__setattr__(self, "t", float(self.t))

    def replace(self, **changes) -> "State":
        """A copy with some fields changed (the damper's ``s`` is kept unless changed)."""
        return dataclasses.replace(self, **changes)

    @property
    def batch_shape(self) -> tuple:
        return self.c.shape[:-1]

    @staticmethod
    def initial(position=(0, 0, 0), velocity=(0, 0, 0), orientation=(1, 0, 0, 0),
                angular_velocity=(0, 0, 0), t: float = 0.0) -> "State":
        """Validated initial state; the quaternion is normalised if within 1e-6 of unit."""
        c = _finite3("position", position)
        v = _finite3("velocity", velocity)
        w = _finite3("angular_velocity", angular_velocity)
        q = np.asarray(orientation, dtype=float)
        if q.shape != (4,) or not np.all(np.isfinite(q)):
            raise ParameterError("orientation", orientation, "be a finite quaternion [w, x, y, z]")
        n = np.linalg.norm(q)
        if abs(n - 1.0) > QUATERNION_NORM_SLACK:
            raise ParameterError("orientation", orientation, "be a unit quaternion (|q| within 1e-6 of 1)")
        return State(t, c, v, q / n, w)


def _finite3(name, value) -> np.ndarray:
    a = np.asarray(value, dtype=float)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ParameterError(name, value, "be 3 finite numbers")
    return a


@dataclass(frozen=True)
class Trajectory:
    """Samples of a run: ``t`` (n,), ``c``, ``v``, ``w`` (n, [N,] 3), ``q`` (n, [N,] 4).

    ``R`` holds the integrated rotation matrices (n, [N,] 3, 3) of methods that integrate a
    matrix (``rotmat-euler``), so their orthonormality drift can be measured; else None.
    ``s`` (n, [N,] 3) is the damper sphere's angular velocity (body frame), None without one.
    """

    t: np.ndarray
    c: np.ndarray
    v: np.ndarray
    q: np.ndarray
    w: np.ndarray
    R: np.ndarray | None = None
    s: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.t)

    def state(self, k: int) -> State:
        """The k-th sample as a :class:`State`."""
        return State(self.t[k], self.c[k], self.v[k], self.q[k], self.w[k], None if self.s is None else self.s[k])

    def select(self, index) -> "Trajectory":
        """The samples at ``index`` (a slice or an index array) as a trajectory."""
        pick = (lambda a: None if a is None else a[index])
        return Trajectory(self.t[index], self.c[index], self.v[index], self.q[index], self.w[index],
                          pick(self.R), pick(self.s))

    def rotation_matrices(self) -> np.ndarray:
        """The integrated matrices where there are some, else R(q)."""
        return self.R if self.R is not None else quat.to_matrix(self.q)
