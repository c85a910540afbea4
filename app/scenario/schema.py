"""The scenario schema: frozen specs, validation with field names, dict round-trip."""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..physics import body as bodies
from ..physics.body import Body, Damper, Rotor
from ..physics.errors import ParameterError
from ..physics.kernels import OMEGA_LIMIT
from ..physics import quaternion as quat
from ..physics.integrators import (
    DEFAULT_REORTHO,
    DEFAULT_REORTHO_EVERY,
    DOP853_ATOL,
    DOP853_RTOL,
    check_run_size,
    check_step_fits,
    integrator_info,
    integrator_options,
    validate_tolerances,
)
from ..physics.loads import DRAG_MODELS, Drag, Force, Loads, Torque
from ..physics.model import Model, compile_model
from ..physics.state import State

SHAPES = ("box", "ellipsoid", "cylinder", "t-handle", "custom", "mesh")
#: number of entries and their meaning of ``body.size`` for each analytic shape
SIZE_ENTRIES = {
    "box": (3, "edge lengths x, y, z"),
    "ellipsoid": (3, "semi-axes x, y, z"),
    "cylinder": (2, "radius, height"),
    "t-handle": (4, "shaft_length, shaft_radius, bar_length, bar_radius"),
}
#: largest magnitude of any number in a scenario file: products and squares of such
#: numbers (m size^2, |L|^2) stay finite
MAX_MAGNITUDE = 1e100
DEFAULT_INTEGRATOR = "rk4"
DEFAULT_DT = 1e-3
DEFAULT_DURATION = 10.0


@dataclass(frozen=True)
class DamperSpec:
    """``[body.damper]``: a spherical viscous damper (:class:`~app.physics.body.Damper`),
    ``inertia`` J (kg m^2) and ``coefficient`` c (N m s)."""

    inertia: float = 0.01
    coefficient: float = 0.01

    def build(self) -> Damper:
        try:
            return Damper(self.inertia, self.coefficient)
        except ParameterError as err:
            raise err.prefixed("damper") from None


@dataclass(frozen=True)
class RotorSpec:
    """``[body.rotor]``: a wheel of constant relative momentum (:class:`~app.physics.body.Rotor`),
    ``axis`` (body frame, any non-zero length, normalised) and ``momentum`` h (kg m^2/s)."""

    axis: tuple = (0.0, 1.0, 0.0)
    momentum: float = 0.0

    def build(self) -> Rotor:
        try:
            return Rotor(self.axis, self.momentum)
        except ParameterError as err:
            raise err.prefixed("rotor") from None


@dataclass(frozen=True)
class BodySpec:
    """How the body is described in a scenario (shape and dimensions, or inertia)."""

    shape: str = "box"
    mass: float = 1.0
    size: tuple | None = (0.1, 0.4, 0.9)
    inertia: tuple | None = None  # custom: [Jxx, Jyy, Jzz, Jyz, Jxz, Jxy] or 3 principal moments
    allow_unphysical: bool = False
    # custom only: the centre of mass seen from the reference point (body frame, m); the
    # inertia is then about the reference point, as in Exudyn's physicsCenterOfMass
    center_of_mass: tuple | None = None
    # mesh only: the file (absolute once loaded from a TOML file, whose folder a relative
    # path is taken from), its unit (m | cm | mm) and exactly one of mass (then density is
    # None) or density (kg/m^3; then mass is None). initial.position and velocity are the
    # centre of mass's.
    mesh: str | None = None
    unit: str = "m"
    density: float | None = None
    # internal parts (any shape): a spherical viscous damper, a rotor of constant momentum
    damper: DamperSpec | None = None
    rotor: RotorSpec | None = None

    def build(self) -> Body:
        """The physics :class:`Body` with its damper and rotor; raises
        :class:`ParameterError` with ``body.`` fields."""
        rigid = self._build_rigid()
        if self.damper is None and self.rotor is None:
            return rigid
        try:
            damper = None if self.damper is None else self.damper.build()
            rotor = None if self.rotor is None else self.rotor.build()
        except ParameterError as err:
            raise err.prefixed("body") from None
        return dataclasses.replace(rigid, damper=damper, rotor=rotor)

    def _build_rigid(self) -> Body:
        try:
            if self.shape not in SHAPES:
                raise ParameterError("shape", self.shape, "be one of " + " | ".join(SHAPES))
            if self.shape == "mesh":
                from .meshes import mesh_body

                if self.mesh is None:
                    raise ParameterError("mesh", None, "be given for shape = \"mesh\" (an STL, OBJ or PLY file)")
                try:
                    return mesh_body(self.mesh, self.unit, self.mass, self.density)
                except ParameterError as err:
                    if err.field == "mesh":  # name the file as the scenario wrote it
                        raise ParameterError("mesh", self.mesh, err.rule) from None
                    raise
            if self.shape == "custom":
                if self.inertia is None:
                    raise ParameterError("inertia", None, "be given for shape = \"custom\" ([Jxx, Jyy, Jzz, Jyz, Jxz, Jxy])")
                j = np.asarray(self.inertia, dtype=float)
                if j.shape not in ((3,), (6,)):
                    raise ParameterError("inertia", self.inertia, "have 6 entries [Jxx, Jyy, Jzz, Jyz, Jxz, Jxy] (or 3 principal moments)")
                if self.center_of_mass is not None and any(x != 0 for x in self.center_of_mass):
                    return bodies.from_reference_point(self.mass, j, self.center_of_mass, self.allow_unphysical)
                if j.shape == (3,):
                    return bodies.from_principal_moments(self.mass, j, self.allow_unphysical)
                if j.shape != (6,):
                    raise ParameterError("inertia", self.inertia, "have 6 entries [Jxx, Jyy, Jzz, Jyz, Jxz, Jxy] (or 3 principal moments)")
                return bodies.from_vector6(self.mass, j, self.allow_unphysical)
            if self.size is None:
                n, what = SIZE_ENTRIES[self.shape]
                raise ParameterError("size", None, f"be given for shape = \"{self.shape}\" ({what})")
            maker = {"box": bodies.box, "ellipsoid": bodies.ellipsoid, "cylinder": bodies.cylinder,
                     "t-handle": bodies.t_handle}[self.shape]
            return maker(self.mass, self.size)
        except ParameterError as err:
            raise err.prefixed("body") from None


LOAD_KINDS = ("torque", "force", "drag")


@dataclass(frozen=True)
class LoadSpec:
    """One ``[[loads]]`` entry: a torque, a force at a body point, or a drag (``model`` and
    body-frame ``coefficients``; ``frame``, ``vector`` and ``point`` unused)."""

    kind: str = "torque"
    frame: str = "body"
    vector: tuple = (0.0, 0.0, 0.0)
    point: tuple = (0.0, 0.0, 0.0)
    model: str = "quadratic"
    coefficients: tuple = (0.0, 0.0, 0.0)

    def build(self, index: int):
        where = f"loads[{index}]"
        try:
            if self.kind not in LOAD_KINDS:
                raise ParameterError("kind", self.kind, "be one of " + ", ".join(LOAD_KINDS))
            if self.kind == "drag":
                return Drag(self.model, self.coefficients)
            if self.kind == "torque":
                return Torque(self.vector, self.frame)
            return Force(self.vector, self.point, self.frame)
        except ParameterError as err:
            raise err.prefixed(where) from None


@dataclass(frozen=True)
class SolverSpec:
    """Integrator name, step and duration (s), and the adaptive tolerances."""

    integrator: str = DEFAULT_INTEGRATOR
    dt: float = DEFAULT_DT
    duration: float = DEFAULT_DURATION
    rtol: float = DOP853_RTOL
    atol: float = DOP853_ATOL
    reorthonormalize: str = DEFAULT_REORTHO          # rotmat-euler: polar | gram-schmidt | none
    reorthonormalize_every: int = DEFAULT_REORTHO_EVERY  # rotmat-euler: every k steps

    def validate(self) -> None:
        try:
            integrator_info(self.integrator)
        except ParameterError as err:
            raise err.prefixed("solver") from None
        for name in ("duration", "dt", "rtol", "atol"):
            value = getattr(self, name)
            if not _is_positive_finite(value):
                raise ParameterError(f"solver.{name}", value, "be a finite number > 0")
        check_step_fits(self.dt, self.duration, names=SOLVER_NAMES)
        try:
            integrator_options(self.reorthonormalize, self.reorthonormalize_every)
            validate_tolerances(self.rtol, self.atol)
        except ParameterError as err:
            raise err.prefixed("solver") from None
        # the same step budget as every run (simulate, export, the window's worker)
        check_run_size(self.integrator, self.dt, self.duration, names=SOLVER_NAMES, samples=False)

    @property
    def options(self) -> dict:
        """Keyword arguments of :func:`~app.physics.integrators.simulate` besides dt."""
        return {"rtol": self.rtol, "atol": self.atol, "reorthonormalize": self.reorthonormalize,
                "reorthonormalize_every": self.reorthonormalize_every}


#: how :func:`check_run_size` names the solver's fields in a scenario's messages
SOLVER_NAMES = {"dt": "solver.dt", "duration": "solver.duration"}


def _is_positive_finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


@dataclass(frozen=True)
class Scenario:
    """A complete, validated scenario. Frozen: edits make a new one with :meth:`replace`."""

    name: str = "untitled"
    description: str = ""
    body: BodySpec = field(default_factory=BodySpec)
    position: tuple = (0.0, 0.0, 0.0)
    velocity: tuple = (0.0, 0.0, 0.0)
    orientation: tuple = (1.0, 0.0, 0.0, 0.0)
    angular_velocity: tuple = (0.0, 0.0, 0.0)
    gravity: tuple = (0.0, 0.0, 0.0)
    loads: tuple = ()
    solver: SolverSpec = field(default_factory=SolverSpec)
    # the damper sphere's angular velocity (body frame, rad/s); None: it turns with the body
    damper_angular_velocity: tuple | None = None

    def __post_init__(self):
        # validate everything now, so that a Scenario that exists is a good one
        self.rigid_body
        self.initial_state
        self.applied_loads
        self.solver.validate()
        self._check_derived()

    def _check_derived(self) -> None:
        """Refuse inputs each finite (at most 1e100) whose products are not: the initial
        angular momentum L0 = R I omega and energy E0 = T + V (``tumble inspect`` prints
        them; every run's drifts are relative to them)."""
        from ..physics import diagnostics

        body, s0 = self.rigid_body, self.initial_state
        with np.errstate(over="ignore", invalid="ignore"):
            checks = (
                ("initial.angular_velocity", self.angular_velocity, "angular momentum L0 = I omega",
                 diagnostics.angular_momentum(body, s0.q, s0.w)),
                ("initial.angular_velocity", self.angular_velocity, "rotational energy 1/2 omega.I omega",
                 diagnostics.rotational_energy(body, s0.w)),
                ("initial.velocity", self.velocity, "kinetic energy 1/2 m |v|^2",
                 0.5 * body.mass * np.dot(s0.v, s0.v)),
                ("initial.position", self.position, "potential energy -m g.c",
                 diagnostics.potential_energy(body, np.asarray(self.gravity, dtype=float), s0.c)),
                ("initial.velocity", self.velocity, "momentum m v", body.mass * np.asarray(s0.v)),
            )
            energy = sum(float(value) for _, _, _, value in checks[1:4])
        for field_name, value, what, derived in checks:
            if not np.all(np.isfinite(derived)):
                raise ParameterError(field_name, value, f"give a finite {what} with this body "
                                     f"(mass {body.mass:.3g} kg, largest moment {np.max(body.principal()[0]):.3g} kg m^2)")
        if not math.isfinite(energy):
            raise ParameterError("initial.velocity", self.velocity, "give a finite energy E0 = T + V with this body")

    def replace(self, **changes) -> "Scenario":
        """A new validated scenario with some fields changed."""
        return dataclasses.replace(self, **changes)

    @cached_property
    def rigid_body(self) -> Body:
        return self.body.build()

    @cached_property
    def initial_state(self) -> State:
        """The initial state of the centre of mass (position and velocity are converted from
        the reference point when the body has one off its centre of mass)."""
        try:
            s = State.initial(self.position, self.velocity, self.orientation, self.angular_velocity)
        except ParameterError as err:
            raise err.prefixed("initial") from None
        if np.linalg.norm(s.w) > OMEGA_LIMIT:
            raise ParameterError("initial.angular_velocity", s.w,
                                 f"have a magnitude <= {OMEGA_LIMIT:g} rad/s (past it a run counts as diverged)")
        s = s.replace(s=self._damper_rate(s.w))
        b = np.asarray(self.rigid_body.center_of_mass)
        if self.body.shape == "custom" and np.any(b != 0):
            arm = quat.rotate(s.q, b)
            spin = quat.rotate(s.q, np.cross(s.w, b))
            s = s.replace(c=s.c + arm, v=s.v + spin)
        return s

    def _damper_rate(self, w: np.ndarray) -> np.ndarray | None:
        """The damper sphere's initial rate (body frame): given, or w; None without a damper."""
        field_name = "initial.damper_angular_velocity"
        given = self.damper_angular_velocity
        if self.body.damper is None:
            if given is not None:
                raise ParameterError(field_name, given, "be given only for a body with a [body.damper]")
            return None
        if given is None:
            return w
        rate = np.asarray(given, dtype=float)
        if rate.shape != (3,) or not np.all(np.isfinite(rate)):
            raise ParameterError(field_name, given, "be 3 finite numbers (rad/s, body frame)")
        if np.linalg.norm(rate) > OMEGA_LIMIT:
            raise ParameterError(field_name, given, f"have a magnitude <= {OMEGA_LIMIT:g} rad/s")
        return rate

    @cached_property
    def applied_loads(self) -> Loads:
        """The loads about the centre of mass. A force's ``point`` is given from the body's
        reference point, as ``initial.position`` and ``--point`` are: the centre of mass
        unless a custom body names ``center_of_mass`` (Exudyn's physicsCenterOfMass)."""
        built = [spec.build(i) for i, spec in enumerate(self.loads)]
        offset = np.asarray(self.rigid_body.center_of_mass, dtype=float)
        if self.body.shape == "custom" and np.any(offset != 0):
            built = [Force(b.vector, b.point - offset, b.frame) if isinstance(b, Force) else b for b in built]
        try:
            g = Loads(gravity=self.gravity).gravity
        except ParameterError as err:
            raise ParameterError("world.gravity", err.value, err.rule) from None
        return Loads(
            gravity=g,
            torques=[b for b in built if isinstance(b, Torque)],
            forces=[b for b in built if isinstance(b, Force)],
            drags=[b for b in built if isinstance(b, Drag)],
        )

    @cached_property
    def model(self) -> Model:
        return compile_model(self.rigid_body, self.applied_loads)


# ---------------------------------------------------------------- dict (TOML) round trip

TOP_KEYS = ("name", "description", "body", "initial", "world", "loads", "solver")
BODY_KEYS = ("shape", "mass", "size", "inertia", "allow_unphysical", "center_of_mass", "mesh", "unit", "density",
             "damper", "rotor")
DAMPER_KEYS = ("inertia", "coefficient")
ROTOR_KEYS = ("axis", "momentum")
INITIAL_KEYS = ("position", "velocity", "orientation", "orientation_xyz", "angular_velocity",
                "damper_angular_velocity")
WORLD_KEYS = ("gravity",)
LOAD_KEYS = ("kind", "frame", "vector", "point", "model", "coefficients")
#: the keys each load kind takes (besides ``kind``)
LOAD_KIND_KEYS = {"torque": ("frame", "vector"), "force": ("frame", "vector", "point"),
                  "drag": ("model", "coefficients")}
SOLVER_KEYS = ("integrator", "dt", "duration", "rtol", "atol", "reorthonormalize", "reorthonormalize_every")


def _check_keys(table, allowed, where: str) -> None:
    if not isinstance(table, dict):
        raise ParameterError(where, table, "be a table")
    for key in table:
        if key not in allowed:
            raise ParameterError(where, key, "have only the keys " + ", ".join(allowed))


def _number(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParameterError(where, value, "be a number")
    if isinstance(value, int) and abs(value) > MAX_MAGNITUDE:  # float() of 10**400 overflows
        raise ParameterError(where, value, f"be at most {MAX_MAGNITUDE:g} in magnitude")
    if not math.isfinite(value):
        raise ParameterError(where, value, "be finite")
    if abs(value) > MAX_MAGNITUDE:
        raise ParameterError(where, value, f"be at most {MAX_MAGNITUDE:g} in magnitude")
    return float(value)


def _numbers(value, n, where: str) -> tuple:
    if not isinstance(value, (list, tuple)) or (n is not None and len(value) != n):
        raise ParameterError(where, value, f"be a list of {n} numbers" if n else "be a list of numbers")
    return tuple(_number(v, f"{where}[{i}]") for i, v in enumerate(value))


def _string(value, where: str) -> str:
    if not isinstance(value, str):
        raise ParameterError(where, value, "be a string")
    return value


def _require(table, key, where):
    if key not in table:
        raise ParameterError(f"{where}.{key}", None, "be given (required)")
    return table[key]


def _mesh_fields(body_t: dict, base_dir) -> dict:
    """``mesh``, ``unit``, ``density`` of a mesh body; exactly one of mass and density."""
    from .meshes import UNITS, check_mass_or_density

    mesh = _string(_require(body_t, "mesh", "body"), "body.mesh")
    unit = _string(body_t.get("unit", "m"), "body.unit")
    if unit not in UNITS:
        raise ParameterError("body.unit", unit, "be one of " + " | ".join(UNITS))
    density = _number(body_t["density"], "body.density") if "density" in body_t else None
    try:
        check_mass_or_density(body_t.get("mass"), density)
    except ParameterError as err:
        raise err.prefixed("body") from None
    if base_dir is not None and not os.path.isabs(mesh):
        mesh = os.path.normpath(os.path.join(os.path.abspath(base_dir), mesh))
    return {"mesh": mesh, "unit": unit, "density": density}


def _parts(body_t: dict) -> dict:
    """``damper`` and ``rotor`` specs of ``[body.damper]`` / ``[body.rotor]`` (each key required)."""
    parts = {}
    if "damper" in body_t:
        table = body_t["damper"]
        _check_keys(table, DAMPER_KEYS, "body.damper")
        parts["damper"] = DamperSpec(*(_number(_require(table, key, "body.damper"), f"body.damper.{key}")
                                       for key in DAMPER_KEYS))
    if "rotor" in body_t:
        table = body_t["rotor"]
        _check_keys(table, ROTOR_KEYS, "body.rotor")
        parts["rotor"] = RotorSpec(_numbers(_require(table, "axis", "body.rotor"), 3, "body.rotor.axis"),
                                   _number(_require(table, "momentum", "body.rotor"), "body.rotor.momentum"))
    return parts


def from_dict(data: dict, default_name: str = "untitled", base_dir=None) -> Scenario:
    """Validated :class:`Scenario` from a parsed TOML document.

    ``base_dir`` is the folder of the TOML file: a relative ``body.mesh`` is found there
    (the current folder if None).
    """
    _check_keys(data, TOP_KEYS, "scenario")
    name = _string(data.get("name", default_name), "name")
    description = _string(data.get("description", ""), "description")

    body_t = _require(data, "body", "scenario")
    _check_keys(body_t, BODY_KEYS, "body")
    shape = _string(_require(body_t, "shape", "body"), "body.shape")
    if shape not in SHAPES:
        raise ParameterError("body.shape", shape, "be one of " + " | ".join(SHAPES))
    mesh_fields = {}
    if shape == "mesh":
        mesh_fields = _mesh_fields(body_t, base_dir)
        mass = _number(body_t["mass"], "body.mass") if "mass" in body_t else None
    else:
        for key in ("mesh", "unit", "density"):
            if key in body_t:
                raise ParameterError(f"body.{key}", body_t[key], "be given only with shape = \"mesh\"")
        mass = _number(_require(body_t, "mass", "body"), "body.mass")
    size = inertia = None
    if shape == "mesh":
        for key in ("size", "inertia"):
            if key in body_t:
                raise ParameterError(f"body.{key}", body_t[key], "not be given for shape = \"mesh\" "
                                                                 "(the mesh and its mass or density define the body)")
    elif shape == "custom":
        if "size" in body_t:
            raise ParameterError("body.size", body_t["size"], "not be given for shape = \"custom\" (give inertia)")
        inertia = _numbers(_require(body_t, "inertia", "body"), None, "body.inertia")
    else:
        if "inertia" in body_t:
            raise ParameterError("body.inertia", body_t["inertia"], f"not be given for shape = \"{shape}\" (give size)")
        n, _ = SIZE_ENTRIES[shape]
        size = _numbers(_require(body_t, "size", "body"), n, "body.size")
    allow = body_t.get("allow_unphysical", False)
    if not isinstance(allow, bool):
        raise ParameterError("body.allow_unphysical", allow, "be true or false")
    com = None
    if "center_of_mass" in body_t:
        if shape != "custom":
            raise ParameterError("body.center_of_mass", body_t["center_of_mass"],
                                 "be given only with shape = \"custom\" (inertia about the reference point)")
        com = _numbers(body_t["center_of_mass"], 3, "body.center_of_mass")
    body = BodySpec(shape, mass, size, inertia, allow, center_of_mass=com, **mesh_fields, **_parts(body_t))

    initial_t = data.get("initial", {})
    _check_keys(initial_t, INITIAL_KEYS, "initial")
    if "orientation" in initial_t and "orientation_xyz" in initial_t:
        raise ParameterError("initial.orientation_xyz", initial_t["orientation_xyz"],
                             "not be given together with initial.orientation (exactly one of the two)")
    if "orientation_xyz" in initial_t:
        angles = _numbers(initial_t["orientation_xyz"], 3, "initial.orientation_xyz")
        orientation = tuple(float(x) for x in quat.from_euler_xyz(np.array(angles)))
    else:
        orientation = _numbers(initial_t.get("orientation", [1.0, 0.0, 0.0, 0.0]), 4, "initial.orientation")
    initial = {
        "position": _numbers(initial_t.get("position", [0.0, 0.0, 0.0]), 3, "initial.position"),
        "velocity": _numbers(initial_t.get("velocity", [0.0, 0.0, 0.0]), 3, "initial.velocity"),
        "orientation": orientation,
        "angular_velocity": _numbers(initial_t.get("angular_velocity", [0.0, 0.0, 0.0]), 3, "initial.angular_velocity"),
    }
    if "damper_angular_velocity" in initial_t:
        if body.damper is None:
            raise ParameterError("initial.damper_angular_velocity", initial_t["damper_angular_velocity"],
                                 "be given only for a body with a [body.damper]")
        initial["damper_angular_velocity"] = _numbers(initial_t["damper_angular_velocity"], 3,
                                                      "initial.damper_angular_velocity")
    world_t = data.get("world", {})
    _check_keys(world_t, WORLD_KEYS, "world")
    gravity = _numbers(world_t.get("gravity", [0.0, 0.0, 0.0]), 3, "world.gravity")

    loads_l = data.get("loads", [])
    if not isinstance(loads_l, list):
        raise ParameterError("loads", loads_l, "be an array of tables ([[loads]])")
    loads = []
    for i, lt in enumerate(loads_l):
        where = f"loads[{i}]"
        _check_keys(lt, LOAD_KEYS, where)
        kind = _string(_require(lt, "kind", where), f"{where}.kind")
        if kind not in LOAD_KINDS:
            raise ParameterError(f"{where}.kind", kind, "be one of " + ", ".join(LOAD_KINDS))
        for key in lt:
            if key != "kind" and key not in LOAD_KIND_KEYS[kind]:
                raise ParameterError(f"{where}.{key}", lt[key], f"not be given for kind = \"{kind}\" (it takes "
                                     + ", ".join(LOAD_KIND_KEYS[kind]) + ")")
        if kind == "drag":
            model = _string(_require(lt, "model", where), f"{where}.model")
            if model not in DRAG_MODELS:
                raise ParameterError(f"{where}.model", model, "be one of " + ", ".join(DRAG_MODELS))
            coefficients = _numbers(_require(lt, "coefficients", where), 3, f"{where}.coefficients")
            loads.append(LoadSpec("drag", model=model, coefficients=coefficients))
            continue
        frame = _string(lt.get("frame", "body"), f"{where}.frame")
        if frame not in ("body", "world"):
            raise ParameterError(f"{where}.frame", frame, "be one of body, world")
        vector = _numbers(_require(lt, "vector", where), 3, f"{where}.vector")
        point = _numbers(lt.get("point", [0.0, 0.0, 0.0]), 3, f"{where}.point")
        loads.append(LoadSpec(kind, frame, vector, point))

    solver_t = data.get("solver", {})
    _check_keys(solver_t, SOLVER_KEYS, "solver")
    integrator = _string(solver_t.get("integrator", DEFAULT_INTEGRATOR), "solver.integrator")
    every = solver_t.get("reorthonormalize_every", DEFAULT_REORTHO_EVERY)
    if isinstance(every, bool) or not isinstance(every, int):
        raise ParameterError("solver.reorthonormalize_every", every, "be a whole number >= 0")
    solver = SolverSpec(
        integrator,
        _number(solver_t.get("dt", DEFAULT_DT), "solver.dt"),
        _number(solver_t.get("duration", DEFAULT_DURATION), "solver.duration"),
        _number(solver_t.get("rtol", DOP853_RTOL), "solver.rtol"),
        _number(solver_t.get("atol", DOP853_ATOL), "solver.atol"),
        _string(solver_t.get("reorthonormalize", DEFAULT_REORTHO), "solver.reorthonormalize"),
        every,
    )
    return Scenario(name, description, body, gravity=gravity, loads=tuple(loads), solver=solver, **initial)


def to_dict(s: Scenario, base_dir=None) -> dict:
    """The TOML document of a scenario (round-trips through :func:`from_dict`).

    ``base_dir`` is the folder the document will be saved in: the mesh path is written
    relative to it (None writes it as stored: absolute for a scenario loaded from a file).
    """
    body = {"shape": s.body.shape, "mass": s.body.mass}
    if s.body.shape == "mesh":
        body = {"shape": "mesh", "mesh": _mesh_path_for(s.body, base_dir), "unit": s.body.unit}
        if s.body.density is not None:
            body["density"] = s.body.density
        else:
            body["mass"] = s.body.mass
    elif s.body.shape == "custom":
        body["inertia"] = list(s.body.inertia)
    else:
        body["size"] = list(s.body.size)
    if s.body.allow_unphysical:
        body["allow_unphysical"] = True
    if s.body.center_of_mass is not None:
        body["center_of_mass"] = list(s.body.center_of_mass)
    if s.body.damper is not None:
        body["damper"] = {"inertia": s.body.damper.inertia, "coefficient": s.body.damper.coefficient}
    if s.body.rotor is not None:
        body["rotor"] = {"axis": list(s.body.rotor.axis), "momentum": s.body.rotor.momentum}
    doc = {
        "name": s.name,
        "description": s.description,
        "body": body,
        "initial": {
            "position": list(s.position),
            "velocity": list(s.velocity),
            "orientation": list(s.orientation),
            "angular_velocity": list(s.angular_velocity),
            **({} if s.damper_angular_velocity is None
               else {"damper_angular_velocity": list(s.damper_angular_velocity)}),
        },
        "world": {"gravity": list(s.gravity)},
    }
    if s.loads:
        doc["loads"] = []
        for ld in s.loads:
            if ld.kind == "drag":
                doc["loads"].append({"kind": "drag", "model": ld.model, "coefficients": list(ld.coefficients)})
                continue
            entry = {"kind": ld.kind, "frame": ld.frame, "vector": list(ld.vector)}
            if ld.kind == "force":
                entry["point"] = list(ld.point)
            doc["loads"].append(entry)
    doc["solver"] = {
        "integrator": s.solver.integrator,
        "dt": s.solver.dt,
        "duration": s.solver.duration,
    }
    for key in integrator_info(s.solver.integrator).solver_options:  # only those its integrator reads
        doc["solver"][key] = getattr(s.solver, key)
    return doc


def _mesh_path_for(spec: BodySpec, base_dir) -> str:
    """The mesh path to write in a TOML file saved in ``base_dir`` (relative to it)."""
    from pathlib import Path

    if base_dir is None:
        return spec.mesh
    return Path(os.path.relpath(os.path.abspath(spec.mesh), os.path.abspath(base_dir))).as_posix()
