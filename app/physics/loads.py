"""Applied loads: uniform gravity, constant torques, forces fixed in body or world, and drag.

A force with a fixed body-frame direction applied at a body-frame point models the
thrusters of the two-rocket top (Stanford 2005 Matlab report, section 5): two equal and
opposite thrusters at opposite points give a pure torque ``sum p x f`` in the body frame.
A drag torque opposes the spin axis by axis in the body frame: linear in omega as the
viscous (Stokes) torque on a slowly turning body (8 pi mu R^3 w for a sphere, Landau &
Lifshitz, *Fluid Mechanics*, section 20), or quadratic as the drag equation
F = C rho A v^2 / 2 integrated over a surface turning at w (v = w r gives tau ~ |w| w).
A diagonal matrix per axis is the per-axis model fitted to thrown-racket gyroscope data.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .errors import ParameterError

FRAMES = ("body", "world")
#: drag models: torque -c_i w_i (linear, c in N m s) or -c_i |w| w_i (quadratic, N m s^2)
DRAG_MODELS = ("linear", "quadratic")


def _vector(name: str, value) -> np.ndarray:
    try:
        v = np.asarray(value, dtype=float) if not isinstance(value, np.ndarray) else value.astype(float)
    except (TypeError, ValueError, OverflowError):  # text, or a number too large for a float
        raise ParameterError(name, value, "be a 3-vector") from None
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


def drag_torque(model: str, coefficients, w) -> np.ndarray:
    """Drag torque ``-c_i w_i`` (``"linear"``) or ``-c_i |w| w_i`` (``"quadratic"``).

    ``coefficients`` (3,) and ``w`` (..., 3) are in the same frame (the body frame of a
    :class:`Drag`); the result has the shape of ``w``. Batch-friendly numpy.
    """
    w = np.asarray(w, dtype=float)
    c = np.asarray(coefficients, dtype=float)
    if model == "linear":
        return -c * w
    if model == "quadratic":
        return -c * w * np.linalg.norm(w, axis=-1, keepdims=True)
    raise ParameterError("model", model, "be one of " + ", ".join(DRAG_MODELS))


@dataclass(frozen=True)
class Drag:
    """A drag torque opposing the spin: ``-c_i w_i`` (``model="linear"``, c in N m s) or
    ``-c_i |w| w_i`` (``"quadratic"``, N m s^2), with ``coefficients`` c and omega w in the
    user's body frame (which need not be principal). See :func:`drag_torque`."""

    model: str
    coefficients: np.ndarray

    def __post_init__(self):
        if not isinstance(self.model, str) or self.model not in DRAG_MODELS:
            raise ParameterError("model", self.model, "be one of " + ", ".join(DRAG_MODELS))
        c = _vector("coefficients", self.coefficients)
        for i, x in enumerate(c):
            if x < 0:
                raise ParameterError(f"coefficients[{i}]", float(x), "be >= 0 (a drag only takes energy away)")
        object.__setattr__(self, "coefficients", c)

    def torque(self, w) -> np.ndarray:
        """Body-frame drag torque at body-frame omega ``w`` (..., 3)."""
        return drag_torque(self.model, self.coefficients, w)


@dataclass(frozen=True)
class Loads:
    """Everything applied to the body: ``gravity`` (m/s^2, world) plus torques, forces and
    drags (:class:`Drag`, which depend on omega)."""

    gravity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    torques: tuple = ()
    forces: tuple = ()
    drags: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "gravity", _vector("gravity", self.gravity))
        object.__setattr__(self, "torques", tuple(self.torques))
        object.__setattr__(self, "forces", tuple(self.forces))
        object.__setattr__(self, "drags", tuple(self.drags))

    @property
    def has_torque(self) -> bool:
        """True when any load can exert a torque about the centre of mass (a drag with a
        non-zero coefficient counts)."""
        if any(np.any(t.vector != 0) for t in self.torques):
            return True
        if self.has_drag:
            return True
        return any(np.any(np.cross(f.point, f.vector) != 0) or f.frame == "world" and np.any(f.point != 0)
                   for f in self.forces)

    @property
    def has_drag(self) -> bool:
        """True when a drag with a non-zero coefficient is applied."""
        return any(np.any(d.coefficients != 0) for d in self.drags)

    @property
    def has_force(self) -> bool:
        """True when any load other than gravity pushes the centre of mass."""
        return any(np.any(f.vector != 0) for f in self.forces)

    def torque_body(self, q: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
        """Total torque about the centre of mass in the body frame at orientation(s) ``q``.

        With body-frame omega ``w`` (shaped like ``q`` with 3 last) the drags are included;
        without it they are left out (they depend on the spin).
        """
        from .quaternion import rotate_inverse

        q = np.asarray(q, dtype=float)
        tau = np.zeros(q.shape[:-1] + (3,))
        for t in self.torques:
            tau = tau + (t.vector if t.frame == "body" else rotate_inverse(q, t.vector))
        for f in self.forces:
            fb = f.vector if f.frame == "body" else rotate_inverse(q, f.vector)
            tau = tau + np.cross(f.point, fb)
        if w is not None:
            for d in self.drags:
                tau = tau + d.torque(w)
        return tau

    def force_world(self, q: np.ndarray) -> np.ndarray:
        """Total applied force in the world frame, gravity excluded."""
        from .quaternion import rotate

        q = np.asarray(q, dtype=float)
        force = np.zeros(q.shape[:-1] + (3,))
        for f in self.forces:
            force = force + (rotate(q, f.vector) if f.frame == "body" else f.vector)
        return force
