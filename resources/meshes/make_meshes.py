"""Make the shipped meshes (tennis racket, phone, book) reproducibly: ``python make_meshes.py``.

Each object is a flat outline triangulated here (no boolean operations, no triangulation
library) and extruded with ``trimesh.creation.extrude_triangulation``, so every mesh is one
closed, consistently wound surface. The files are binary STL; running the script again
writes the same bytes. Units differ on purpose (the scenario files say which):

* ``tennis-racket.stl`` metres: oval head frame (a ring) and a straight handle in one
  outline, 0.685 m long (27 in), 0.27 m wide, 0.024 m thick, origin at the butt of the handle;
* ``phone.stl`` millimetres: a 70 x 150 x 8 mm slab with rounded corners, origin at a corner
  of its back;
* ``book.stl`` centimetres: a 15 x 23 x 3 cm block, origin at a corner.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import trimesh

HERE = Path(__file__).resolve().parent

# tennis racket (m): total length, head semi-axes (outer), frame width in the plane, thickness
RACKET_LENGTH = 0.685
HEAD_A, HEAD_B = 0.135, 0.17
FRAME_WIDTH = 0.012
RACKET_THICKNESS = 0.024
HANDLE_WIDTH = 0.03
HEAD_SEGMENTS = 160  # points around the oval
HANDLE_SEGMENTS = 12  # quads along the handle

# phone (mm)
PHONE_W, PHONE_H, PHONE_T, PHONE_CORNER = 70.0, 150.0, 8.0, 9.0
CORNER_SEGMENTS = 8

# book (cm)
BOOK_W, BOOK_H, BOOK_T = 15.0, 23.0, 3.0


def _ccw(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """Faces re-ordered counter-clockwise (positive area) in the plane."""
    a, b, c = (vertices[faces[:, k]] for k in range(3))
    area = (b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (c[:, 0] - a[:, 0])
    if np.any(np.abs(area) < 1e-15):
        raise ValueError("degenerate triangle in outline")
    faces = faces.copy()
    faces[area < 0] = faces[area < 0][:, ::-1]
    return faces


def racket_outline() -> tuple[np.ndarray, np.ndarray]:
    """The racket in the x-y plane: the head frame as a strip between two ovals, and the
    handle as a column of quads hanging from a straight bottom edge of the outer oval."""
    centre_y = RACKET_LENGTH - HEAD_B
    half = HANDLE_WIDTH / 2
    # parameter angles of the outer oval's points at x = +-half (the handle's top corners)
    t_join = np.arcsin(half / HEAD_A)
    bottom = -np.pi / 2
    start, stop = bottom + t_join, bottom - t_join + 2 * np.pi  # counter-clockwise, around the top
    t = np.linspace(start, stop, HEAD_SEGMENTS)  # includes both corners, nothing between them
    outer = np.column_stack([HEAD_A * np.cos(t), centre_y + HEAD_B * np.sin(t)])
    inner = np.column_stack([(HEAD_A - FRAME_WIDTH) * np.cos(t), centre_y + (HEAD_B - FRAME_WIDTH) * np.sin(t)])
    n = len(t)
    vertices = [outer, inner]
    faces = []
    for k in range(n):  # strip quads o_k o_k+1 i_k+1 i_k, closing from the last point to the first
        j = (k + 1) % n
        faces += [[k, j, n + j], [k, n + j, n + k]]
    # handle: columns of points under the corners outer[-1] (x = -half) and outer[0] (x = +half)
    y_top = outer[0, 1]
    ys = np.linspace(y_top, 0.0, HANDLE_SEGMENTS + 1)[1:]
    left = np.column_stack([np.full_like(ys, -half), ys])
    right = np.column_stack([np.full_like(ys, half), ys])
    base = 2 * n
    vertices += [left, right]
    prev_l, prev_r = n - 1, 0
    for k in range(HANDLE_SEGMENTS):
        cur_l, cur_r = base + k, base + HANDLE_SEGMENTS + k
        faces += [[prev_l, cur_l, cur_r], [prev_l, cur_r, prev_r]]
        prev_l, prev_r = cur_l, cur_r
    v = np.vstack(vertices)
    return v, _ccw(v, np.array(faces))


def rounded_rectangle(width: float, height: float, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """A convex rounded rectangle with a corner at the origin, fanned from its centre."""
    corners = [(width - radius, height - radius, 0.0), (radius, height - radius, 0.5 * np.pi),
               (radius, radius, np.pi), (width - radius, radius, 1.5 * np.pi)]
    ring = []
    for cx, cy, a0 in corners:
        a = a0 + np.linspace(0.0, 0.5 * np.pi, CORNER_SEGMENTS + 1)
        ring.append(np.column_stack([cx + radius * np.cos(a), cy + radius * np.sin(a)]))
    ring = np.vstack(ring)
    v = np.vstack([[width / 2, height / 2], ring])
    n = len(ring)
    faces = np.array([[0, 1 + k, 1 + (k + 1) % n] for k in range(n)])
    return v, _ccw(v, faces)


def rectangle(width: float, height: float) -> tuple[np.ndarray, np.ndarray]:
    v = np.array([[0.0, 0.0], [width, 0.0], [width, height], [0.0, height]])
    return v, np.array([[0, 1, 2], [0, 2, 3]])


def extrude(outline: tuple[np.ndarray, np.ndarray], thickness: float) -> trimesh.Trimesh:
    """The outline extruded along +z from z = 0, checked to be a closed solid."""
    mesh = trimesh.creation.extrude_triangulation(outline[0], outline[1], thickness)
    mesh.merge_vertices()
    if not (mesh.is_watertight and mesh.is_winding_consistent and mesh.volume > 0):
        raise RuntimeError("extruded mesh is not a closed, outward-facing solid")
    return mesh


def build() -> dict[str, trimesh.Trimesh]:
    """The meshes by file name."""
    return {
        "tennis-racket.stl": extrude(racket_outline(), RACKET_THICKNESS),
        "phone.stl": extrude(rounded_rectangle(PHONE_W, PHONE_H, PHONE_CORNER), PHONE_T),
        "book.stl": extrude(rectangle(BOOK_W, BOOK_H), BOOK_T),
    }


def main(folder: Path = HERE) -> list[Path]:
    written = []
    for name, mesh in build().items():
        path = Path(folder) / name
        path.write_bytes(trimesh.exchange.stl.export_stl(mesh))
        written.append(path)
    return written


if __name__ == "__main__":
    for p in main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE):
        print(f"wrote {p}")
