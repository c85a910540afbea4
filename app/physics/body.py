"""Rigid bodies: mass and inertia about the centre of mass, shape constructors, and the
internal parts a body may carry (a spherical viscous damper, a rotor of constant momentum).

Inertia formulas: standard solid-body results (e.g. Goldstein, *Classical Mechanics*, and
the parallel-axis theorem); Exudyn's 6-vector order ``[Jxx, Jyy, Jzz, Jyz, Jxz, Jxy]``.
The damper and the rotor: Hughes, *Spacecraft Attitude Dynamics* (Wiley 1986), the chapters
on internal energy dissipation and on multi-spin vehicles (see :mod:`.gyrostat`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .errors import ParameterError

#: relative slack allowed on symmetry and on the triangle inequality (round-off of inputs)
RELATIVE_SLACK = 1e-9


def _finite_number(name: str, value) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ParameterError(name, value, "be a number") from None
    if isinstance(value, bool) or not np.isfinite(x):
        raise ParameterError(name, value, "be a finite number")
    return x


@dataclass(frozen=True)
class Damper:
    """A spherical viscous damper: a sphere of ``inertia`` J (kg m^2, about any axis) free
    to turn in a spherical cavity at the centre of mass, coupled to the body by a viscous
    torque ``coefficient`` c (N m s) times their relative rate.

    With w the body's and s the sphere's absolute angular velocity, both in the body frame,
    and I the body's inertia WITHOUT the sphere (Hughes, internal energy dissipation)::

        I w' + w x I w = c (s - w) + applied torque
        J s' + w x J s = -c (s - w)

    The total angular momentum R (I w + J s) is conserved by these equations; the energy
    1/2 w.I w + 1/2 J |s|^2 falls at the rate c |s - w|^2.
    """

    inertia: float
    coefficient: float

    def __post_init__(self):
        j = _finite_number("inertia", self.inertia)
        c = _finite_number("coefficient", self.coefficient)
        if j <= 0:
            raise ParameterError("inertia", self.inertia, "be > 0 (kg m^2, the sphere's moment)")
        if c < 0:
            raise ParameterError("coefficient", self.coefficient, "be >= 0 (N m s; a damper only takes energy away)")
        object.__setattr__(self, "inertia", j)
        object.__setattr__(self, "coefficient", c)


@dataclass(frozen=True)
class Rotor:
    """A wheel spinning at a constant rate relative to the body: a gyrostat.

    ``axis`` is a body-frame direction, normalised here (any non-zero length is accepted,
    a zero or non-finite one refused); ``momentum`` h (kg m^2/s, signed along the axis) is
    the wheel's angular momentum relative to the body, held constant by its motor. The
    body's inertia I includes the wheel's mass (Hughes, multi-spin vehicles)::

        I w' + w x (I w + h a) = applied torque

    The angular momentum is R (I w + h a); 1/2 w.I w is conserved without applied torque.
    """

    axis: np.ndarray
    momentum: float

    def __post_init__(self):
        a = np.array(self.axis, dtype=float) if not isinstance(self.axis, str) else np.full(3, np.nan)
        if a.shape != (3,):
            raise ParameterError("axis", self.axis, "be a 3-vector (body frame)")
        if not np.all(np.isfinite(a)):
            raise ParameterError("axis", self.axis, "be finite")
        big = float(np.max(np.abs(a)))
        if big == 0:
            raise ParameterError("axis", self.axis, "be a non-zero direction (body frame)")
        a = a / big  # scaled first: the norm of 1e200-sized entries would overflow
        a = a / np.linalg.norm(a)
        a.setflags(write=False)
        object.__setattr__(self, "axis", a)
        object.__setattr__(self, "momentum", _finite_number("momentum", self.momentum))

    @property
    def vector(self) -> np.ndarray:
        """h a, the wheel's relative angular momentum in the body frame (kg m^2/s)."""
        return self.momentum * self.axis


@dataclass(frozen=True)
class Body:
    """A rigid body: ``mass`` (kg) and ``inertia`` (3x3, kg m^2, body axes, about the centre of mass).

    ``shape`` and ``size`` describe how to draw it (``box``, ``ellipsoid``, ``cylinder``,
    ``t-handle``, ``custom``, ``mesh``); ``center_of_mass`` is where the centre of mass sits
    in the body's own reference coordinates (zero for the analytic shapes; for a mesh, the
    mesh file's coordinates converted to metres).

    A ``mesh`` body also carries its surface for drawing: ``mesh_vertices`` (V, 3), metres,
    in body coordinates (the file's axes, origin moved to the centre of mass) and
    ``mesh_faces`` (F, 3) vertex indices, counter-clockwise seen from outside. Both are
    None for the analytic shapes.

    ``damper`` (:class:`Damper`) and ``rotor`` (:class:`Rotor`) are internal parts; with
    either, the body is no longer a free rigid body (the closed forms do not apply).
    """

    mass: float
    inertia: np.ndarray
    shape: str = "custom"
    size: tuple = ()
    center_of_mass: np.ndarray = field(default_factory=lambda: np.zeros(3))
    allow_unphysical: bool = False
    mesh_vertices: np.ndarray | None = field(default=None, repr=False, compare=False)
    mesh_faces: np.ndarray | None = field(default=None, repr=False, compare=False)
    damper: Damper | None = None
    rotor: Rotor | None = None

    def __post_init__(self):
        inertia = np.array(self.inertia, dtype=float)
        object.__setattr__(self, "inertia", inertia)
        object.__setattr__(self, "center_of_mass", np.array(self.center_of_mass, dtype=float))
        object.__setattr__(self, "mass", float(self.mass) if np.isscalar(self.mass) else self.mass)
        validate_mass(self.mass)
        validate_inertia(inertia, self.allow_unphysical)
        inertia.setflags(write=False)
        if (self.mesh_vertices is None) != (self.mesh_faces is None):
            raise ParameterError("mesh_faces", self.mesh_faces, "be given together with mesh_vertices")
        if self.mesh_vertices is not None:
            vertices = np.array(self.mesh_vertices, dtype=float)
            faces = np.array(self.mesh_faces, dtype=np.int64)
            if vertices.ndim != 2 or vertices.shape[1] != 3 or faces.ndim != 2 or faces.shape[1] != 3:
                raise ParameterError("mesh_vertices", vertices.shape, "be (V, 3) with mesh_faces (F, 3)")
            vertices.setflags(write=False)
            faces.setflags(write=False)
            object.__setattr__(self, "mesh_vertices", vertices)
            object.__setattr__(self, "mesh_faces", faces)
        if self.damper is not None and not isinstance(self.damper, Damper):
            raise ParameterError("damper", self.damper, "be a Damper")
        if self.rotor is not None and not isinstance(self.rotor, Rotor):
            raise ParameterError("rotor", self.rotor, "be a Rotor")

    @property
    def is_rigid(self) -> bool:
        """True for a plain rigid body: no damper, no rotor."""
        return self.damper is None and self.rotor is None

    def principal(self) -> tuple[np.ndarray, np.ndarray]:
        """Principal moments (ascending) and axes (columns, body frame, right-handed)."""
        return principal(self.inertia)

    @property
    def intermediate_axis(self) -> np.ndarray:
        """Body-frame unit vector of the intermediate principal axis."""
        return self.principal()[1][:, 1]


def validate_mass(mass) -> None:
    """Raise :class:`ParameterError` unless ``mass`` is a finite number > 0."""
    try:
        ok = bool(np.isfinite(mass)) and float(mass) > 0
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ParameterError("mass", mass, "be a finite number > 0 (kg)")


def validate_inertia(inertia: np.ndarray, allow_unphysical: bool = False) -> None:
    """Raise unless the tensor is finite, symmetric, positive definite and physical.

    Physical means the triangle inequality ``I1 + I2 >= I3`` holds for every ordering of the
    principal moments (equality is a flat lamina). ``allow_unphysical`` skips only that last
    rule: Euler's equations are well posed for any positive-definite tensor, and the 2005
    Stanford report's examples (I = [2, 2, 8], [2, 8, 4]) break it.
    """
    if inertia.shape != (3, 3):
        raise ParameterError("inertia", inertia, "be a 3x3 tensor")
    if not np.all(np.isfinite(inertia)):
        raise ParameterError("inertia", inertia, "be finite")
    scale = np.max(np.abs(inertia))
    if scale == 0:
        raise ParameterError("inertia", inertia, "be positive definite")
    if np.max(np.abs(inertia - inertia.T)) > RELATIVE_SLACK * scale:
        raise ParameterError("inertia", inertia, "be symmetric")
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            moments = np.linalg.eigvalsh(0.5 * (inertia + inertia.T))
    except np.linalg.LinAlgError:
        moments = np.full(3, np.nan)
    if not np.all(np.isfinite(moments)):
        raise ParameterError("inertia", inertia, "have finite principal moments (its entries are too large)")
    if moments[0] <= RELATIVE_SLACK * scale:
        raise ParameterError("inertia", moments, "have principal moments > 0 (positive definite)")
    if not allow_unphysical and moments[0] + moments[1] < moments[2] * (1 - RELATIVE_SLACK):
        raise ParameterError(
            "inertia", moments, "satisfy the triangle inequality I1 + I2 >= I3 (a physical body)"
        )


#: two principal moments closer than this, relative to the largest, count as equal: a
#: symmetric tensor given in rotated axes comes back from eigvalsh a few ulps apart
EQUAL_MOMENTS = 1e-12


def has_intermediate_axis(moments) -> bool:
    """True if the ascending principal ``moments`` are distinct (beyond rounding), so the
    body has an intermediate axis to flip about."""
    i1, i2, i3 = (float(m) for m in moments)
    return min(i2 - i1, i3 - i2) > EQUAL_MOMENTS * i3


def principal(inertia: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Principal moments (ascending) and axes as columns of a proper rotation matrix."""
    inertia = np.asarray(inertia, dtype=float)
    moments, axes = np.linalg.eigh(0.5 * (inertia + inertia.T))
    # Prefer axes aligned with the body axes when the tensor is (nearly) diagonal, so that a
    # principal body keeps its own frame: flip each column to have a non-negative dominant entry.
    for k in range(3):
        j = int(np.argmax(np.abs(axes[:, k])))
        if axes[j, k] < 0:
            axes[:, k] = -axes[:, k]
    if np.linalg.det(axes) < 0:
        axes[:, 2] = -axes[:, 2]
    return moments, axes


def inertia_from_vector6(j6) -> np.ndarray:
    """Tensor from Exudyn's ``[Jxx, Jyy, Jzz, Jyz, Jxz, Jxy]``."""
    j = np.asarray(j6, dtype=float)
    if j.shape != (6,):
        raise ParameterError("inertia", j6, "have 6 entries [Jxx, Jyy, Jzz, Jyz, Jxz, Jxy]")
    jxx, jyy, jzz, jyz, jxz, jxy = j
    return np.array([[jxx, jxy, jxz], [jxy, jyy, jyz], [jxz, jyz, jzz]])


def _positive_sizes(size, n: int, names: str):
    s = np.asarray(size, dtype=float)
    if s.shape != (n,):
        raise ParameterError("size", size, f"have {n} entries ({names})")
    if not np.all(np.isfinite(s)) or np.any(s <= 0):
        raise ParameterError("size", size, "have finite entries > 0 (m)")
    return s


def box(mass: float, size) -> Body:
    """Solid box with full edge lengths ``size = (a, b, c)`` along x, y, z."""
    validate_mass(mass)
    a, b, c = _positive_sizes(size, 3, "edge lengths x, y, z")
    i = mass / 12.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    return Body(mass, np.diag(i), "box", (a, b, c))


def ellipsoid(mass: float, size) -> Body:
    """Solid ellipsoid with semi-axes ``size = (a, b, c)``."""
    validate_mass(mass)
    a, b, c = _positive_sizes(size, 3, "semi-axes x, y, z")
    i = mass / 5.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    return Body(mass, np.diag(i), "ellipsoid", (a, b, c))


def cylinder(mass: float, size) -> Body:
    """Solid cylinder, ``size = (radius, height)``, axis along z."""
    validate_mass(mass)
    r, h = _positive_sizes(size, 2, "radius, height")
    ixx = mass * (3 * r * r + h * h) / 12.0
    return Body(mass, np.diag([ixx, ixx, 0.5 * mass * r * r]), "cylinder", (r, h))


def t_handle_geometry(size) -> dict:
    """Geometry of the T-handle in body axes (centre of mass at the origin).

    The shaft is a solid cylinder along z, the bar a solid cylinder along x lying across the
    shaft's top end (tangent to it). Returns centres, radii and lengths of both parts and the
    masses' shares for uniform density.
    """
    ls, rs, lb, rb = _positive_sizes(size, 4, "shaft_length, shaft_radius, bar_length, bar_radius")
    vs = np.pi * rs * rs * ls
    vb = np.pi * rb * rb * lb
    zs, zb = 0.5 * ls, ls + rb  # centres, measured from the shaft's free end
    zc = (vs * zs + vb * zb) / (vs + vb)
    return {
        "shaft_center": np.array([0.0, 0.0, zs - zc]),
        "bar_center": np.array([0.0, 0.0, zb - zc]),
        "shaft_length": ls,
        "shaft_radius": rs,
        "bar_length": lb,
        "bar_radius": rb,
        "shaft_fraction": vs / (vs + vb),
        "bar_fraction": vb / (vs + vb),
    }


def t_handle(mass: float, size) -> Body:
    """The wing nut of Dzhanibekov's observation: shaft along z, bar along x across its top.

    ``size = (shaft_length, shaft_radius, bar_length, bar_radius)``; uniform density; inertia
    about the joint centre of mass by the parallel-axis theorem. Body axes lie along the
    symmetry lines through the centre of mass (x along the bar, z along the shaft).
    """
    validate_mass(mass)
    g = t_handle_geometry(size)
    ms, mb = mass * g["shaft_fraction"], mass * g["bar_fraction"]
    rs, ls, rb, lb = g["shaft_radius"], g["shaft_length"], g["bar_radius"], g["bar_length"]
    ds, db = g["shaft_center"][2], g["bar_center"][2]
    shaft = np.diag([ms * (3 * rs * rs + ls * ls) / 12, ms * (3 * rs * rs + ls * ls) / 12, ms * rs * rs / 2])
    bar = np.diag([mb * rb * rb / 2, mb * (3 * rb * rb + lb * lb) / 12, mb * (3 * rb * rb + lb * lb) / 12])
    shift = np.diag([1.0, 1.0, 0.0])  # parallel axis for an offset along z
    inertia = shaft + ms * ds * ds * shift + bar + mb * db * db * shift
    return Body(mass, inertia, "t-handle", tuple(float(x) for x in (ls, rs, lb, rb)))


def from_principal_moments(mass: float, moments, allow_unphysical: bool = False) -> Body:
    """Body with a diagonal tensor ``diag(moments)`` (drawn as the equivalent box)."""
    validate_mass(mass)
    m = np.asarray(moments, dtype=float)
    if m.shape != (3,):
        raise ParameterError("inertia", moments, "have 3 principal moments")
    return Body(mass, np.diag(m), "custom", (), allow_unphysical=allow_unphysical)


def from_vector6(mass: float, j6, allow_unphysical: bool = False) -> Body:
    """Body with Exudyn's inertia 6-vector ``[Jxx, Jyy, Jzz, Jyz, Jxz, Jxy]``."""
    validate_mass(mass)
    return Body(mass, inertia_from_vector6(j6), "custom", (), allow_unphysical=allow_unphysical)


def from_reference_point(mass: float, inertia_ref, center_of_mass, allow_unphysical: bool = False) -> Body:
    """Body described from a reference point that is not its centre of mass (Exudyn's
    ``physicsCenterOfMass``): ``inertia_ref`` (3x3 or the 6-vector) is about the reference
    point, ``center_of_mass`` (body frame) is the centre of mass seen from it.

    Converted with the parallel-axis theorem, I_com = I_ref - m (|b|^2 1 - b b^T); the tensor
    about the centre of mass must itself be physical.
    """
    validate_mass(mass)
    j = np.asarray(inertia_ref, dtype=float)
    tensor = inertia_from_vector6(j) if j.shape == (6,) else (np.diag(j) if j.shape == (3,) else j)
    b = np.asarray(center_of_mass, dtype=float)
    if b.shape != (3,) or not np.all(np.isfinite(b)):
        raise ParameterError("center_of_mass", center_of_mass, "be 3 finite numbers (m, body frame)")
    tensor_com = tensor - mass * (np.dot(b, b) * np.eye(3) - np.outer(b, b))
    try:
        return Body(mass, tensor_com, "custom", (), center_of_mass=b, allow_unphysical=allow_unphysical)
    except ParameterError as err:
        raise ParameterError(
            "inertia", err.value, err.rule + " about the centre of mass (inertia is given about the reference point)"
        ) from None


def equivalent_box_size(mass: float, moments) -> np.ndarray:
    """Edge lengths of the uniform box with these principal moments (for drawing).

    Inverts ``I_x = m/12 (b^2 + c^2)`` etc.; a lamina (triangle equality) gives a zero edge,
    clamped to a small fraction of the largest.
    """
    i1, i2, i3 = np.asarray(moments, dtype=float)
    sq = 6.0 / mass * np.array([i2 + i3 - i1, i1 + i3 - i2, i1 + i2 - i3])
    sq = np.maximum(sq, 1e-4 * sq.max())
    return np.sqrt(sq)
