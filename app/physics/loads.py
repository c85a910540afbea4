"""Applied loads: uniform gravity, constant torques, and forces fixed in body or world.

A force with a fixed body-frame direction applied at a body-frame point models the
thrusters of the two-rocket top (Stanford 2005 Matlab report, section 5): two equal and
opposite thrusters at opposite points give a pure torque ``sum p x f`` in the body frame.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .errors import ParameterError

FRAMES = ("body", "world")


def _vector(name: str, value) -> np.ndarray:
    v = np.asarray(value, dtype=float) if not isinstance(value, np.ndarray) else value.astype(float)
    if v.shape != (3,):
        raise ParameterError(name, value, "be a 3-vector")
    if not np.all(np.isfinite(v)):
        raise ParameterError(name, value, "be finite")
    return v


@dataclass(frozen=True)
class Torque:
    """A constant torque (N m) fixed in the ``body`` or ``world`` frame."""

    vector: np.ndarray
    frame: str = "body"

    def __post_init__(self):
        object.__setattr__(self, "vector", _vector("vector", self.vector))
        if self.frame not in FRAMES:
            raise ParameterError("frame", self.frame, "be one of body, world")


@dataclass(frozen=True)
class Force:
    """A force (N) of fixed direction in the ``body`` or ``world`` frame, applied at a
    body-frame ``point`` (m, from the centre of mass)."""

    vector: np.ndarray
    point: np.ndarray = field(default_factory=lambda: np.zeros(3))
    frame: str = "body"

    def __post_init__(self):
        object.__setattr__(self, "vector", _vector("vector", self.vector))
        object.__setattr__(self, "point", _vector("point", self.point))
        if self.frame not in FRAMES:
            raise ParameterError("frame", self.frame, "be one of body, world")


@dataclass(frozen=True)
class Loads:
    """Everything applied to the body: ``gravity`` (m/s^2, world) plus torques and forces."""

    gravity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    torques: tuple = ()
    forces: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "gravity", _vector("gravity", self.gravity))
        object.__setattr__(self, "torques", tuple(self.torques))
        object.__setattr__(self, "forces", tuple(self.forces))

    @property
    def has_torque(self) -> bool:
        """True when any load can exert a torque about the centre of mass."""
        if any(np.any(t.vector != 0) for t in self.torques):
            return True
        return any(np.any(np.cross(f.point, f.vector) != 0) or f.frame == "world" and np.any(f.point != 0)
                   for f in self.forces)

    @property
    def has_force(self) -> bool:
        """True when any load other than gravity pushes the centre of mass."""
        return any(np.any(f.vector != 0) for f in self.forces)

    def torque_body(self, q: np.ndarray) -> np.ndarray:
        """Total torque about the centre of mass in the body frame at orientation(s) ``q``."""
        from .quaternion import rotate_inverse

        q = np.asarray(q, dtype=float)
        tau = np.zeros(q.shape[:-1] + (3,))
        for t in self.torques:
            tau = tau + (t.vector if t.frame == "body" else rotate_inverse(q, t.vector))
        for f in self.forces:
            fb = f.vector if f.frame == "body" else rotate_inverse(q, f.vector)
            tau = tau + np.cross(f.point, fb)
        return tau

    def force_world(self, q: np.ndarray) -> np.ndarray:
        """Total applied force in the world frame, gravity excluded."""
        from .quaternion import rotate

        q = np.asarray(q, dtype=float)
        force = np.zeros(q.shape[:-1] + (3,))
        for f in self.forces:
            force = force + (rotate(q, f.vector) if f.frame == "body" else f.vector)
        return force
