"""Bodies from closed triangle meshes (STL, OBJ, PLY): reading, the solid they bound, mass properties.

Call tree::

    mesh_body(path, unit, mass=None, density=None) -> physics Body (shape "mesh")
      load_mesh(path, unit)                        -> MeshGeometry (cached by file and unit)
        _read              trimesh.load_mesh, units -> metres
        _measure           (measure(mesh) for meshes made in memory)
          solid            mesh_parts: welded closed parts, their winding, cavities and union
          mass properties  trimesh (unit density)
      body_from_geometry   scale by density (or mass / volume), shift to the centre of mass

Volume, centre of mass and inertia come from trimesh's ``mass_properties`` (divergence
theorem over the triangles: Eberly, "Polyhedral Mass Properties (Revisited)", 2002), not
from integrals written here. The body keeps the file's axes (products of inertia are
allowed); only the origin moves to the centre of mass.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..physics.body import Body
from ..physics.errors import ParameterError
from .mesh_parts import Where, solid

#: metres per unit of the mesh file's coordinates
UNITS = {"m": 1.0, "cm": 0.01, "mm": 0.001}
#: file types read (trimesh's loaders)
MESH_SUFFIXES = (".stl", ".obj", ".ply")
#: the largest mesh file read (bytes): 4 million triangles of binary STL, about 2 GB of memory
#: to check and measure (a million took 0.5 GB); a larger file is refused before it is read
MAX_FILE_BYTES = 200_000_000


@dataclass(frozen=True)
class MeshGeometry:
    """The solid a mesh bounds, in metres, with its mass properties at unit density.

    ``vertices`` (V, 3) in the file's axes and origin, metres; ``faces`` (F, 3), counter-
    clockwise seen from outside (the union's surface, for parts that touch or overlap);
    ``volume`` (m^3); ``center_of_mass`` (3,) in the file's coordinates (m);
    ``inertia_per_density`` (3x3, m^5) about the centre of mass, file axes.
    """

    vertices: np.ndarray
    faces: np.ndarray
    volume: float
    center_of_mass: np.ndarray
    inertia_per_density: np.ndarray


def mesh_body(path, unit: str = "m", mass: float | None = None, density: float | None = None) -> Body:
    """The rigid body of a closed mesh of uniform density.

    Parameters
    ----------
    path : str or Path
        An STL, OBJ or PLY file.
    unit : {"m", "cm", "mm"}
        Unit of the file's coordinates.
    mass, density : float
        Exactly one: total mass (kg) or density (kg/m^3).

    Returns
    -------
    Body
        ``shape="mesh"``, inertia about the centre of mass in the file's axes,
        ``center_of_mass`` in the file's coordinates (m), ``mesh_vertices`` shifted so that
        the centre of mass is the origin, ``mesh_faces``.

    Raises
    ------
    ParameterError
        Naming ``mesh``, ``unit``, ``mass`` or ``density``, the value and the rule.
    """
    _check_amount(mass, density)  # before reading the file: cheap rules first
    return body_from_geometry(load_mesh(path, unit), mass, density)


def body_from_geometry(geo: MeshGeometry, mass: float | None = None, density: float | None = None) -> Body:
    """The uniform-density body of checked geometry, given exactly one of mass or density."""
    _check_amount(mass, density)
    rho = density if density is not None else mass / geo.volume
    total = rho * geo.volume if mass is None else float(mass)
    return Body(
        total,
        rho * geo.inertia_per_density,
        shape="mesh",
        size=(),
        center_of_mass=geo.center_of_mass,
        mesh_vertices=geo.vertices - geo.center_of_mass,
        mesh_faces=geo.faces,
    )


def load_mesh(path, unit: str = "m") -> MeshGeometry:
    """Read a mesh file and measure the solid it bounds; see :class:`MeshGeometry`.

    Cached per file (path, size and modification time) and unit, so that rebuilding a
    scenario with new initial conditions does not read and check the file again.
    """
    if unit not in UNITS:
        raise ParameterError("unit", unit, "be one of " + " | ".join(UNITS))
    p = Path(path)
    if "\0" in str(path):  # the system refuses such a name (Python raises ValueError)
        raise ParameterError("mesh", str(path), "be a file path without a NUL character")
    try:
        if p.is_dir():
            raise ParameterError("mesh", str(path), f"be a mesh file, not a directory ({p.resolve()} is a directory)")
        if p.suffix.lower() not in MESH_SUFFIXES:
            raise ParameterError("mesh", str(path), "be an STL, OBJ or PLY file (.stl, .obj, .ply)")
        if p.exists() and not p.is_file():  # a FIFO or a device: there is something, but no file
            raise ParameterError("mesh", str(path), f"be a regular file ({p.resolve()} is a pipe, socket or device)")
        if not p.is_file():
            raise ParameterError("mesh", str(path), f"be an existing file (nothing at {p.resolve()})")
        st = p.stat()
    except OSError as err:  # a name too long for the system, a folder it may not enter, ...
        raise ParameterError("mesh", str(path), f"be a path the system can open ({err.strerror or err})") from None
    if st.st_size > MAX_FILE_BYTES:
        raise ParameterError("mesh", str(path), f"be at most {MAX_FILE_BYTES / 1e6:.3g} MB (about "
                                                f"{MAX_FILE_BYTES / 50e6:.3g} million triangles of binary STL; "
                                                f"simplify the mesh), this file has {st.st_size / 1e6:.3g} MB")
    return _load_cached(str(p.resolve()), st.st_size, st.st_mtime_ns, unit)


@lru_cache(maxsize=16)
def _load_cached(path: str, _size: int, _mtime_ns: int, unit: str) -> MeshGeometry:
    return _measure(*_read(path, unit), Where(path, unit, UNITS[unit]))


def measure(mesh, name: str = "mesh", unit: str = "m") -> MeshGeometry:
    """Check and measure a ``trimesh.Trimesh`` already in metres (the mesh is not changed).

    ``name`` is the value error messages show (the file, for meshes read from one); points
    in them are given in ``unit``.
    """
    return _measure(mesh.vertices, mesh.faces, Where(name, unit, UNITS[unit]))


def _measure(vertices, faces, where: Where) -> MeshGeometry:
    import trimesh

    vertices, faces = solid(vertices, faces, where)
    props = trimesh.triangles.mass_properties(vertices[faces], density=1.0)
    vertices = np.array(vertices, dtype=float)
    faces = np.array(faces, dtype=np.int64)
    com = np.array(props.center_mass, dtype=float)
    inertia = np.array(props.inertia, dtype=float)
    for a in (vertices, faces, com, inertia):
        a.setflags(write=False)
    return MeshGeometry(vertices, faces, float(props.volume), com, inertia)


def _read(path: str, unit: str) -> tuple[np.ndarray, np.ndarray]:
    """The file's vertices (in metres) and faces, as trimesh reads them.

    A one-solid STL goes straight through trimesh's STL reader: building a ``Trimesh`` copies
    and hashes the arrays, which took a third of the time and memory of a million faces.
    """
    import trimesh

    try:
        loaded = None
        if Path(path).suffix.lower() == ".stl":
            with open(path, "rb") as fh:
                loaded = trimesh.exchange.stl.load_stl(fh)
        if loaded is None or "faces" not in loaded:  # other formats, or an STL of several solids
            mesh = trimesh.load_mesh(path, process=False, force="mesh")
            loaded = {"vertices": mesh.vertices, "faces": mesh.faces} if isinstance(mesh, trimesh.Trimesh) else {}
    except Exception as err:  # trimesh raises many kinds on a broken file
        raise ParameterError("mesh", path, f"be a readable mesh file ({err.__class__.__name__}: {err})") from None
    if len(loaded.get("faces", ())) == 0:
        raise ParameterError("mesh", path, "hold a triangle mesh (the file has no faces)")
    vertices = np.asarray(loaded["vertices"], dtype=np.float64) * UNITS[unit]
    if not np.all(np.isfinite(vertices)):
        raise ParameterError("mesh", path, "have finite vertex coordinates")
    return vertices, np.asarray(loaded["faces"], dtype=np.int64)


def check_mass_or_density(mass, density) -> None:
    """Exactly one of ``mass`` and ``density`` is given (the other is None)."""
    if mass is not None and density is not None:
        raise ParameterError("density", density, "not be given together with mass (exactly one of mass in kg "
                                                  "or density in kg/m^3)")
    if mass is None and density is None:
        raise ParameterError("mass", None, "be given, or density (exactly one of mass in kg or density in kg/m^3)")


def _check_amount(mass, density) -> None:
    check_mass_or_density(mass, density)
    if mass is not None:
        _check_positive("mass", mass, "kg")
    else:
        _check_positive("density", density, "kg/m^3")


def _check_positive(name: str, value, unit: str) -> None:
    ok = isinstance(value, (int, float, np.floating)) and not isinstance(value, bool)
    if not ok or not np.isfinite(value) or value <= 0:
        raise ParameterError(name, value, f"be a finite number > 0 ({unit})")
