"""Bodies from closed triangle meshes (STL, OBJ, PLY): checks, repairs and mass properties.

Call tree::

    mesh_body(path, unit, mass=None, density=None) -> physics Body (shape "mesh")
      load_mesh(path, unit)                        -> MeshGeometry (cached by file and unit)
        _read              trimesh.load_mesh, units -> metres
        measure(mesh)      (also for meshes made in memory)
          _repair          merge vertices, drop degenerate faces, fix winding and normals
          _refuse_bad      too few faces, open edges, non-orientable, volume <= 0,
                           self-intersection (find_self_intersections)
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

#: metres per unit of the mesh file's coordinates
UNITS = {"m": 1.0, "cm": 0.01, "mm": 0.001}
#: file types read (trimesh's loaders)
MESH_SUFFIXES = (".stl", ".obj", ".ply")
#: the fewest faces a closed triangle surface can have (a tetrahedron)
MIN_FACES = 4
#: a volume below this fraction of the bounding box's counts as zero (a flat mesh)
MIN_VOLUME_FRACTION = 1e-9
#: relative tolerance of the exact intersection tests: touching is not crossing
INTERSECTION_EPS = 1e-9
#: candidate triangle pairs tested at once by the self-intersection check (memory bound)
PAIR_CHUNK = 1_000_000


@dataclass(frozen=True)
class MeshGeometry:
    """A checked closed mesh in metres, with its mass properties at unit density.

    ``vertices`` (V, 3) in the file's axes and origin, metres; ``faces`` (F, 3), counter-
    clockwise seen from outside; ``volume`` (m^3); ``center_of_mass`` (3,) in the file's
    coordinates (m); ``inertia_per_density`` (3x3, m^5) about the centre of mass, file axes.
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
    """Read, repair and check a closed mesh; see :class:`MeshGeometry`.

    Cached per file (path, size and modification time) and unit, so that rebuilding a
    scenario with new initial conditions does not read and check the file again.
    """
    if unit not in UNITS:
        raise ParameterError("unit", unit, "be one of " + " | ".join(UNITS))
    p = Path(path)
    if p.is_dir():
        raise ParameterError("mesh", str(path), f"be a mesh file, not a directory ({p.resolve()} is a directory)")
    if p.suffix.lower() not in MESH_SUFFIXES:
        raise ParameterError("mesh", str(path), "be an STL, OBJ or PLY file (.stl, .obj, .ply)")
    if not p.is_file():
        raise ParameterError("mesh", str(path), f"be an existing file (nothing at {p.resolve()})")
    st = p.stat()
    return _load_cached(str(p.resolve()), st.st_size, st.st_mtime_ns, unit)


@lru_cache(maxsize=16)
def _load_cached(path: str, _size: int, _mtime_ns: int, unit: str) -> MeshGeometry:
    return measure(_read(path, unit), path)


def measure(mesh, name: str = "mesh") -> MeshGeometry:
    """Repair (in place), check and measure a ``trimesh.Trimesh`` already in metres.

    ``name`` is the value error messages show (the file, for meshes read from one).
    """
    _repair(mesh)
    _refuse_bad(mesh, name)
    mesh.density = 1.0
    props = mesh.mass_properties
    vertices = np.array(mesh.vertices, dtype=float)
    faces = np.array(mesh.faces, dtype=np.int64)
    com = np.array(props.center_mass, dtype=float)
    inertia = np.array(props.inertia, dtype=float)
    for a in (vertices, faces, com, inertia):
        a.setflags(write=False)
    return MeshGeometry(vertices, faces, float(props.volume), com, inertia)


def _read(path: str, unit: str):
    import trimesh

    try:
        mesh = trimesh.load_mesh(path, process=False, force="mesh")
    except Exception as err:  # trimesh raises many kinds on a broken file
        raise ParameterError("mesh", path, f"be a readable mesh file ({err.__class__.__name__}: {err})") from None
    if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) == 0:
        raise ParameterError("mesh", path, "hold a triangle mesh (the file has no faces)")
    if not np.all(np.isfinite(mesh.vertices)):
        raise ParameterError("mesh", path, "have finite vertex coordinates")
    if UNITS[unit] != 1.0:
        mesh.apply_scale(UNITS[unit])
    return mesh


def _repair(mesh) -> None:
    """trimesh's safe repairs: merged duplicate vertices and faces, a missing triangle or
    quad filled (trimesh fills no larger hole), and the winding made consistent.

    The winding is left alone when it is already consistent: re-orienting every shell
    outwards (``fix_normals(multibody=True)``) would turn a cavity's inward shell around
    and count the cavity as solid. A consistently wound mesh that is inside out as a whole
    is inverted.
    """
    import trimesh

    mesh.merge_vertices()
    mesh.update_faces(mesh.nondegenerate_faces())
    mesh.update_faces(mesh.unique_faces())
    mesh.remove_unreferenced_vertices()
    if not mesh.is_watertight:
        trimesh.repair.fill_holes(mesh)
    with np.errstate(divide="ignore", invalid="ignore"):  # a flat mesh is refused later
        if mesh.is_winding_consistent:
            if mesh.volume < 0:
                mesh.invert()
        elif _has_networkx():
            trimesh.repair.fix_normals(mesh, multibody=True)
    # else: trimesh's re-winding walks the face graph with networkx, which is optional;
    # _refuse_bad then says why the mesh is refused


def _has_networkx() -> bool:
    import importlib.util

    return importlib.util.find_spec("networkx") is not None


def _refuse_bad(mesh, path: str) -> None:
    if len(mesh.faces) < MIN_FACES:
        raise ParameterError("mesh", path, f"have at least {MIN_FACES} non-degenerate faces (a closed surface), "
                                           f"it has {len(mesh.faces)}")
    if not mesh.is_watertight:
        edges = np.sort(mesh.edges, axis=1)
        _, counts = np.unique(edges, axis=0, return_counts=True)
        open_edges = int(np.sum(counts != 2))
        raise ParameterError("mesh", path, f"be a closed (watertight) surface; {open_edges} edges are not "
                                           "shared by exactly two faces")
    if not mesh.is_winding_consistent:
        why = ("no consistent winding exists (not orientable)" if _has_networkx()
               else "trimesh can re-wind it only with networkx installed: pip install networkx")
        raise ParameterError("mesh", path, f"have its faces wound consistently ({why})")
    extent = np.ptp(mesh.vertices, axis=0)
    box_volume = float(np.prod(extent))
    with np.errstate(divide="ignore", invalid="ignore"):  # trimesh divides by the volume
        volume = float(mesh.volume)
    if not volume > MIN_VOLUME_FRACTION * box_volume or box_volume == 0:
        raise ParameterError("mesh", path, f"enclose a volume > 0 (this one is flat or degenerate: {volume:.3g} m^3)")
    pairs = find_self_intersections(mesh.vertices, mesh.faces, limit=1)
    if len(pairs):
        i, j = pairs[0]
        raise ParameterError("mesh", path, f"not intersect itself (faces {i} and {j} cross)")


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


# ----------------------------------------------------------------- self-intersection


def find_self_intersections(vertices, faces, limit: int | None = None) -> np.ndarray:
    """Pairs of faces that cross each other, (k, 2) indices; empty for a clean mesh.

    Faces sharing an edge are neighbours and are not tested. For every other pair whose
    bounding boxes overlap (sort and sweep along the longest axis), the six edges of the
    two triangles are tested against the other triangle (Moller and Trumbore, "Fast,
    minimum storage ray-triangle intersection", 1997): two non-coplanar triangles meet iff
    an edge of one crosses the other. Crossings within ``INTERSECTION_EPS`` of an edge or
    end count as touching, so faces that share only a vertex are fine. Coplanar overlaps
    are not detected (a closed mesh that has them fails the watertight test in practice).
    ``limit`` stops after that many pairs are found.
    """
    v = np.asarray(vertices, dtype=float)
    f = np.asarray(faces, dtype=np.int64)
    tri = v[f]  # (F, 3, 3)
    lo, hi = tri.min(axis=1), tri.max(axis=1)
    scale = float(np.max(np.ptp(v, axis=0))) or 1.0
    pad = INTERSECTION_EPS * scale
    axis = int(np.argmax(np.ptp(v, axis=0)))
    order = np.argsort(lo[:, axis], kind="stable")
    lo_sorted = lo[order, axis]
    # for sorted face k, candidates are sorted faces k+1 .. end[k]-1 (overlap along axis)
    end = np.searchsorted(lo_sorted, hi[order, axis] + pad, side="right")
    counts = np.maximum(end - np.arange(len(order)) - 1, 0)
    found = []
    start = 0
    while start < len(order):
        # take as many sorted faces as keep the pair count under PAIR_CHUNK
        cum = np.cumsum(counts[start:])
        stop = start + max(1, int(np.searchsorted(cum, PAIR_CHUNK, side="right")))
        k = np.repeat(np.arange(start, stop), counts[start:stop])
        if len(k):
            offsets = np.arange(len(k)) - np.repeat(np.cumsum(counts[start:stop]) - counts[start:stop], counts[start:stop])
            a, b = order[k], order[k + 1 + offsets]
            keep = np.all((lo[a] <= hi[b] + pad) & (lo[b] <= hi[a] + pad), axis=1)
            a, b = a[keep], b[keep]
            shared = (f[a][:, :, None] == f[b][:, None, :]).sum(axis=(1, 2))
            a, b = a[shared < 2], b[shared < 2]
            hit = _triangles_cross(tri[a], tri[b])
            if np.any(hit):
                found.append(np.column_stack([a[hit], b[hit]]))
                if limit is not None and sum(len(x) for x in found) >= limit:
                    break
        start = stop
    if not found:
        return np.empty((0, 2), dtype=np.int64)
    pairs = np.sort(np.concatenate(found), axis=1)
    return pairs if limit is None else pairs[:limit]


def _triangles_cross(t1: np.ndarray, t2: np.ndarray) -> np.ndarray:
    """For (n, 3, 3) triangle pairs: does an edge of one cross the other's interior?"""
    hit = np.zeros(len(t1), dtype=bool)
    for s, t in ((t1, t2), (t2, t1)):
        for e in range(3):
            hit |= _segment_crosses(s[:, e], s[:, (e + 1) % 3], t)
    return hit


def _segment_crosses(p0: np.ndarray, p1: np.ndarray, tri: np.ndarray) -> np.ndarray:
    """Moller-Trumbore: segment p0-p1 passes strictly through the triangle's interior."""
    eps = INTERSECTION_EPS
    d = p1 - p0
    e1 = tri[:, 1] - tri[:, 0]
    e2 = tri[:, 2] - tri[:, 0]
    pvec = np.cross(d, e2)
    det = np.einsum("ij,ij->i", e1, pvec)
    scale = np.linalg.norm(d, axis=1) * np.linalg.norm(e1, axis=1) * np.linalg.norm(e2, axis=1)
    ok = np.abs(det) > eps * scale  # not parallel (coplanar pairs are skipped)
    inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
    tvec = p0 - tri[:, 0]
    u = np.einsum("ij,ij->i", tvec, pvec) * inv
    qvec = np.cross(tvec, e1)
    v = np.einsum("ij,ij->i", d, qvec) * inv
    s = np.einsum("ij,ij->i", e2, qvec) * inv
    return ok & (u > eps) & (v > eps) & (u + v < 1 - eps) & (s > eps) & (s < 1 - eps)
