"""The scenario schema: frozen specs, validation with field names, dict round-trip."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..physics import body as bodies
from ..physics.body import Body
from ..physics.errors import ParameterError
from ..physics.integrators import DOP853_ATOL, DOP853_RTOL, INTEGRATORS
from ..physics.loads import Force, Loads, Torque
from ..physics.model import Model, compile_model
from ..physics.state import State

SHAPES = ("box", "ellipsoid", "cylinder", "t-handle", "custom")
#: number of entries and their meaning of ``body.size`` for each analytic shape
SIZE_ENTRIES = {
    "box": (3, "edge lengths x, y, z"),
    "ellipsoid": (3, "semi-axes x, y, z"),
    "cylinder": (2, "radius, height"),
    "t-handle": (4, "shaft_length, shaft_radius, bar_length, bar_radius"),
}
DEFAULT_INTEGRATOR = "rk4"
DEFAULT_DT = 1e-3
DEFAULT_DURATION = 10.0


@dataclass(frozen=True)
class BodySpec:
    """How the body is described in a scenario (shape and dimensions, or inertia)."""

    shape: str = "box"
    mass: float = 1.0
    size: tuple | None = (0.1, 0.4, 0.9)
    inertia: tuple | None = None  # custom: [Jxx, Jyy, Jzz, Jyz, Jxz, Jxy] or 3 principal moments
    allow_unphysical: bool = False

    def build(self) -> Body:
        """The physics :class:`Body`; raises :class:`ParameterError` with ``body.`` fields."""
        try:
            if self.shape not in SHAPES:
                raise ParameterError("shape", self.shape, "be one of " + " | ".join(SHAPES))
            if self.shape == "custom":
                if self.inertia is None:
                    raise ParameterError("inertia", None, "be given for shape = \"custom\" ([Jxx, Jyy, Jzz, Jyz, Jxz, Jxy])")
                j = np.asarray(self.inertia, dtype=float)
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


@dataclass(frozen=True)
class LoadSpec:
    """One ``[[loads]]`` entry: a torque, or a force at a body point."""

    kind: str = "torque"
    frame: str = "body"
    vector: tuple = (0.0, 0.0, 0.0)
    point: tuple = (0.0, 0.0, 0.0)

    def build(self, index: int):
        where = f"loads[{index}]"
        try:
            if self.kind not in ("torque", "force"):
                raise ParameterError("kind", self.kind, "be one of torque, force")
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

    def validate(self) -> None:
        if self.integrator not in INTEGRATORS:
            raise ParameterError("solver.integrator", self.integrator, "be one of " + ", ".join(INTEGRATORS))
        for name in ("duration", "dt", "rtol", "atol"):
            value = getattr(self, name)
            if not _is_positive_finite(value):
                raise ParameterError(f"solver.{name}", value, "be a finite number > 0")
        if self.dt > self.duration:
            raise ParameterError("solver.dt", self.dt, f"be <= solver.duration ({self.duration:g} s)")


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

    def __post_init__(self):
        # validate everything now, so that a Scenario that exists is a good one
        self.rigid_body
        self.initial_state
        self.applied_loads
        self.solver.validate()

    def replace(self, **changes) -> "Scenario":
        """A new validated scenario with some fields changed."""
        return dataclasses.replace(self, **changes)

    @cached_property
    def rigid_body(self) -> Body:
        return self.body.build()

    @cached_property
    def initial_state(self) -> State:
        try:
            return State.initial(self.position, self.velocity, self.orientation, self.angular_velocity)
        except ParameterError as err:
            raise err.prefixed("initial") from None

    @cached_property
    def applied_loads(self) -> Loads:
        built = [spec.build(i) for i, spec in enumerate(self.loads)]
        try:
            g = Loads(gravity=self.gravity).gravity
        except ParameterError as err:
            raise ParameterError("world.gravity", err.value, err.rule) from None
        return Loads(
            gravity=g,
            torques=[b for b in built if isinstance(b, Torque)],
            forces=[b for b in built if isinstance(b, Force)],
        )

    @cached_property
    def model(self) -> Model:
        return compile_model(self.rigid_body, self.applied_loads)


# ---------------------------------------------------------------- dict (TOML) round trip

TOP_KEYS = ("name", "description", "body", "initial", "world", "loads", "solver")
BODY_KEYS = ("shape", "mass", "size", "inertia", "allow_unphysical")
INITIAL_KEYS = ("position", "velocity", "orientation", "angular_velocity")
WORLD_KEYS = ("gravity",)
LOAD_KEYS = ("kind", "frame", "vector", "point")
SOLVER_KEYS = ("integrator", "dt", "duration", "rtol", "atol")


def _check_keys(table, allowed, where: str) -> None:
    if not isinstance(table, dict):
        raise ParameterError(where, table, "be a table")
    for key in table:
        if key not in allowed:
            raise ParameterError(where, key, "have only the keys " + ", ".join(allowed))


def _number(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParameterError(where, value, "be a number")
    if not math.isfinite(value):
        raise ParameterError(where, value, "be finite")
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


def from_dict(data: dict, default_name: str = "untitled") -> Scenario:
    """Validated :class:`Scenario` from a parsed TOML document."""
    _check_keys(data, TOP_KEYS, "scenario")
    name = _string(data.get("name", default_name), "name")
    description = _string(data.get("description", ""), "description")

    body_t = _require(data, "body", "scenario")
    _check_keys(body_t, BODY_KEYS, "body")
    shape = _string(_require(body_t, "shape", "body"), "body.shape")
    if shape not in SHAPES:
        raise ParameterError("body.shape", shape, "be one of " + " | ".join(SHAPES))
    mass = _number(_require(body_t, "mass", "body"), "body.mass")
    size = inertia = None
    if shape == "custom":
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
    body = BodySpec(shape, mass, size, inertia, allow)

    initial_t = data.get("initial", {})
    _check_keys(initial_t, INITIAL_KEYS, "initial")
    initial = {
        "position": _numbers(initial_t.get("position", [0.0, 0.0, 0.0]), 3, "initial.position"),
        "velocity": _numbers(initial_t.get("velocity", [0.0, 0.0, 0.0]), 3, "initial.velocity"),
        "orientation": _numbers(initial_t.get("orientation", [1.0, 0.0, 0.0, 0.0]), 4, "initial.orientation"),
        "angular_velocity": _numbers(initial_t.get("angular_velocity", [0.0, 0.0, 0.0]), 3, "initial.angular_velocity"),
    }
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
        if kind not in ("torque", "force"):
            raise ParameterError(f"{where}.kind", kind, "be one of torque, force")
        frame = _string(lt.get("frame", "body"), f"{where}.frame")
        if frame not in ("body", "world"):
            raise ParameterError(f"{where}.frame", frame, "be one of body, world")
        vector = _numbers(_require(lt, "vector", where), 3, f"{where}.vector")
        if kind == "torque" and "point" in lt:
            raise ParameterError(f"{where}.point", lt["point"], "be given only for kind = \"force\"")
        point = _numbers(lt.get("point", [0.0, 0.0, 0.0]), 3, f"{where}.point")
        loads.append(LoadSpec(kind, frame, vector, point))

    solver_t = data.get("solver", {})
    _check_keys(solver_t, SOLVER_KEYS, "solver")
    integrator = _string(solver_t.get("integrator", DEFAULT_INTEGRATOR), "solver.integrator")
    solver = SolverSpec(
        integrator,
        _number(solver_t.get("dt", DEFAULT_DT), "solver.dt"),
        _number(solver_t.get("duration", DEFAULT_DURATION), "solver.duration"),
        _number(solver_t.get("rtol", DOP853_RTOL), "solver.rtol"),
        _number(solver_t.get("atol", DOP853_ATOL), "solver.atol"),
    )
    return Scenario(name, description, body, gravity=gravity, loads=tuple(loads), solver=solver, **initial)


def to_dict(s: Scenario) -> dict:
    """The TOML document of a scenario (round-trips through :func:`from_dict`)."""
    body = {"shape": s.body.shape, "mass": s.body.mass}
    if s.body.shape == "custom":
        body["inertia"] = list(s.body.inertia)
    else:
        body["size"] = list(s.body.size)
    if s.body.allow_unphysical:
        body["allow_unphysical"] = True
    doc = {
        "name": s.name,
        "description": s.description,
        "body": body,
        "initial": {
            "position": list(s.position),
            "velocity": list(s.velocity),
            "orientation": list(s.orientation),
            "angular_velocity": list(s.angular_velocity),
        },
        "world": {"gravity": list(s.gravity)},
    }
    if s.loads:
        doc["loads"] = []
        for ld in s.loads:
            entry = {"kind": ld.kind, "frame": ld.frame, "vector": list(ld.vector)}
            if ld.kind == "force":
                entry["point"] = list(ld.point)
            doc["loads"].append(entry)
    doc["solver"] = {
        "integrator": s.solver.integrator,
        "dt": s.solver.dt,
        "duration": s.solver.duration,
    }
    if s.solver.integrator == "dop853":
        doc["solver"]["rtol"] = s.solver.rtol
        doc["solver"]["atol"] = s.solver.atol
    return doc
