"""Meshes of the body shapes in body axes (centre of mass at the origin), coloured by axis.

Each face is tinted by the body axis its normal points along (x red, y green, z blue; the
negative side darker), so a turn about any axis, and a flip, is visible at a glance.
"""

from __future__ import annotations

import numpy as np
import pyvista as pv

from ..physics.body import Body, equivalent_box_size, t_handle_geometry
from .style import AXIS_COLORS, NEGATIVE_SHADE, tone

#: facets around the round shapes (software GL: enough to look round, few enough to be cheap)
ROUND_RESOLUTION = 48
#: thinnest edge of a drawn equivalent box, as a fraction of its longest
MIN_SLAB = 0.08


def body_mesh(body: Body) -> pv.PolyData:
    """Surface of ``body`` in its own axes, with an RGB colour array ``"rgb"`` (uint8).

    Shapes: ``box`` (edges a, b, c), ``ellipsoid`` (semi-axes), ``cylinder`` (radius,
    height; axis z), ``t-handle`` (shaft along z, bar along x, from
    :func:`~app.physics.body.t_handle_geometry`), anything else (``custom``, ``mesh``) as the
    uniform box with the same principal moments laid along the principal axes. A body that
    carries its own surface (``mesh_vertices``/``mesh_faces``) is drawn as that surface.
    """
    shape, size = body.shape, tuple(body.size or ())
    if getattr(body, "mesh_vertices", None) is not None:
        faces = np.asarray(body.mesh_faces)
        cells = np.column_stack([np.full(len(faces), 3), faces]).ravel()
        return _colour_by_normals(pv.PolyData(np.asarray(body.mesh_vertices, dtype=float), cells), smooth=False)
    if shape == "box":
        a, b, c = size
        mesh = pv.Cube(x_length=a, y_length=b, z_length=c).triangulate()
        return _colour_by_normals(mesh, smooth=False)
    if shape == "ellipsoid":
        a, b, c = size
        mesh = pv.Sphere(radius=1.0, theta_resolution=ROUND_RESOLUTION, phi_resolution=ROUND_RESOLUTION // 2)
        mesh.points = np.asarray(mesh.points) * np.array([a, b, c])
        return _colour_by_normals(mesh, smooth=True)
    if shape == "cylinder":
        r, h = size
        mesh = pv.Cylinder(direction=(0, 0, 1), radius=r, height=h, resolution=ROUND_RESOLUTION).triangulate()
        return _colour_by_normals(mesh, smooth=False)
    if shape == "t-handle":
        g = t_handle_geometry(size)
        shaft = pv.Cylinder(center=g["shaft_center"], direction=(0, 0, 1), radius=g["shaft_radius"],
                            height=g["shaft_length"], resolution=ROUND_RESOLUTION).triangulate()
        bar = pv.Cylinder(center=g["bar_center"], direction=(1, 0, 0), radius=g["bar_radius"],
                          height=g["bar_length"], resolution=ROUND_RESOLUTION).triangulate()
        return _colour_by_normals(shaft.merge(bar), smooth=False)
    moments, axes = body.principal()
    edges = equivalent_box_size(body.mass, moments)
    # an unphysical tensor (I1 + I2 < I3) has no box: draw a thin slab that can still be seen
    a, b, c = np.maximum(edges, MIN_SLAB * edges.max())
    mesh = pv.Cube(x_length=a, y_length=b, z_length=c).triangulate()
    mesh.points = np.asarray(mesh.points) @ axes.T  # principal -> body coordinates
    return _colour_by_normals(mesh, smooth=False)


def body_radius(body: Body) -> float:
    """Radius of the sphere about the centre of mass that holds the drawn body (m)."""
    mesh = body_mesh(body)
    return float(np.max(np.linalg.norm(np.asarray(mesh.points), axis=1)))


def _colour_by_normals(mesh: pv.PolyData, smooth: bool) -> pv.PolyData:
    """Blend the axis colours by the squared normal components (per point or per cell)."""
    if smooth:
        mesh = mesh.compute_normals(point_normals=True, cell_normals=False, auto_orient_normals=True)
        normals = np.asarray(mesh.point_data["Normals"])
        mesh.point_data["rgb"] = _blend(normals)
    else:
        mesh = mesh.compute_normals(point_normals=False, cell_normals=True, auto_orient_normals=True)
        normals = np.asarray(mesh.cell_data["Normals"])
        mesh.cell_data["rgb"] = _blend(normals)
    return mesh


def _blend(normals: np.ndarray) -> np.ndarray:
    n = normals / np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-12)
    weight = n * n
    shade = np.where(n >= 0, 1.0, NEGATIVE_SHADE)
    rgb = np.zeros((len(n), 3))
    for k in range(3):
        rgb += (weight[:, k] * shade[:, k])[:, None] * np.asarray(AXIS_COLORS[k])[None, :]
    return np.clip(np.round(rgb * 255), 0, 255).astype(np.uint8)


def unit_arrow() -> pv.PolyData:
    """Arrow of length 1 from the origin along +x (posed by a user matrix)."""
    return pv.Arrow(start=(0, 0, 0), direction=(1, 0, 0), tip_length=0.22, tip_radius=0.06,
                    shaft_radius=0.022, tip_resolution=24, shaft_resolution=16)


def axes_lines(length: float) -> pv.PolyData:
    """The body's x, y, z axes as three coloured segments through the centre of mass."""
    pts = np.array([[-1, 0, 0], [1, 0, 0], [0, -1, 0], [0, 1, 0], [0, 0, -1], [0, 0, 1]], float) * length
    lines = np.array([2, 0, 1, 2, 2, 3, 2, 4, 5])
    poly = pv.PolyData(pts, lines=lines)
    poly.cell_data["rgb"] = np.round(np.asarray([tone(c) for c in AXIS_COLORS]) * 255).astype(np.uint8)
    return poly


def floor_grid(spacing: float, half_cells: int) -> pv.PolyData:
    """A square grid of lines in the z = 0 plane, ``2 * half_cells`` cells across."""
    ticks = np.arange(-half_cells, half_cells + 1) * spacing
    extent = half_cells * spacing
    pts, lines = [], []
    for k, x in enumerate(ticks):
        pts += [[x, -extent, 0.0], [x, extent, 0.0], [-extent, x, 0.0], [extent, x, 0.0]]
        lines += [2, 4 * k, 4 * k + 1, 2, 4 * k + 2, 4 * k + 3]
    return pv.PolyData(np.array(pts), lines=np.array(lines))


def polyline(n_points: int) -> pv.PolyData:
    """A polyline of ``n_points`` points (all at the origin), to be moved in place."""
    pts = np.zeros((n_points, 3))
    return pv.PolyData(pts, lines=np.concatenate([[n_points], np.arange(n_points)]))


def nice_spacing(length: float) -> float:
    """1, 2 or 5 times a power of ten, near ``length``."""
    if not np.isfinite(length) or length <= 0:
        return 1.0
    exp = np.floor(np.log10(length))
    base = length / 10 ** exp
    step = 1 if base < 1.5 else 2 if base < 3.5 else 5 if base < 7.5 else 10
    return float(step * 10 ** exp)
