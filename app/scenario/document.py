"""A scenario as a plain dict (a parsed TOML document): :func:`from_dict` validates every
field with its name, :func:`to_dict` writes what a file needs to reproduce the run."""

from __future__ import annotations

import math
import os
import re

import numpy as np

from ..physics import quaternion as quat
from ..physics.errors import ParameterError
from ..physics.integrators import DEFAULT_REORTHO, DEFAULT_REORTHO_EVERY, DOP853_ATOL, DOP853_RTOL, integrator_info
from ..physics.loads import DRAG_MODELS
from .schema import (
    DEFAULT_DT,
    DEFAULT_DURATION,
    DEFAULT_INTEGRATOR,
    LOAD_KINDS,
    MAX_MAGNITUDE,
    SHAPES,
    SIZE_ENTRIES,
    BodySpec,
    DamperSpec,
    LoadSpec,
    RotorSpec,
    Scenario,
    SolverSpec,
)

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


#: a number as a user types it (in the window, on the command line, in a recording): ASCII
#: digits with an optional sign, point and exponent (float() would also take "inf", "nan",
#: "1_000", spaces and other scripts' digits)
NUMBER_TEXT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
WHOLE_TEXT = re.compile(r"[+-]?[0-9]+", re.ASCII)
#: longest number text read (a longer one is refused before any conversion)
MAX_NUMBER_CHARS = 40
#: what a number must look like, in the words of a refusal
PLAIN_WORDS = "(written in ASCII digits with an optional sign, point and exponent)"


def plain_number(text: str, field: str, rule: str, whole: bool = False):
    """The one reading of a number typed by a user: ``text`` must be a plain decimal number
    (a whole one if ``whole``), finite and at most :data:`MAX_MAGNITUDE` in magnitude like
    every number in a scenario file. Returns a float (an int if ``whole``); raises
    :class:`ParameterError` ``"{field} must {rule} ..., got {text}"``."""
    text = str(text)
    if len(text) > MAX_NUMBER_CHARS or not (WHOLE_TEXT if whole else NUMBER_TEXT).fullmatch(text):
        raise ParameterError(field, text, f"{rule} {PLAIN_WORDS}")
    value = int(text) if whole else float(text)
    if not math.isfinite(value) or abs(value) > MAX_MAGNITUDE:
        raise ParameterError(field, text, f"{rule}, at most {MAX_MAGNITUDE:g} in magnitude")
    return value


def number_from_text(text: str, where: str) -> float:
    """The number typed in a field named ``where``, under the rules of a number in a
    scenario file (plain digits, finite, at most :data:`MAX_MAGNITUDE` in magnitude), so that
    what the window applies a file can hold. Raises :class:`ParameterError`."""
    text = str(text).strip()
    if len(text) > MAX_NUMBER_CHARS or not NUMBER_TEXT.fullmatch(text):
        raise ParameterError(where, text, "be a number (written in ASCII digits with an optional sign, point "
                                          "and exponent)")
    return _number(float(text), where)


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
