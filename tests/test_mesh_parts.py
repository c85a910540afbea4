"""Meshes of several closed parts (a CAD assembly's export): parts that touch or overlap are one
solid, a cavity stays a cavity, and only what cannot be a solid is refused, naming the part or
edge. Mass properties against sums of boxes, in mm and rotated."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh
from scipy.spatial.transform import Rotation

from tumble.physics.errors import ParameterError
from tumble.scenario import load
from tumble.scenario import mesh_parts, meshes
from tumble.scenario.mesh_parts import weld, winding_number
from tumble.scenario.meshes import body_from_geometry, measure, mesh_body
from conftest import DENSITY, EXACT_RTOL, box_inertia, parallel_axis, refused, rel_err, tumble, write_scenario

#: a rotation with no special angles, and a shift far from the origin (mm)
ROTATION = Rotation.from_rotvec([0.3, -1.1, 0.7]).as_matrix()
SHIFT_MM = np.array([250.0, -75.5, 1000.0 / 3.0])

# boxes as (sign, lower corner, upper corner) in mm; -1 takes a box away (a cavity, an overlap)
#: the T of the issue: stem 20 x 100 x 20 mm, bar 120 x 20 x 20 mm on top of it
T_STEM = (1, [-10.0, 0.0, -10.0], [10.0, 100.0, 10.0])
T_BAR = (1, [-60.0, 100.0, -10.0], [60.0, 120.0, 10.0])
#: a handle pushed 15 mm into a head: two boxes whose overlap is itself a box
HEAD = (1, [0.0, 0.0, 0.0], [40.0, 24.0, 16.0])
HANDLE = (1, [25.0, 8.0, 4.0], [125.0, 16.0, 12.0])
HANDLE_IN_HEAD = (-1, [25.0, 8.0, 4.0], [40.0, 16.0, 12.0])
#: a box with a box-shaped cavity off its centre
OUTER = (1, [0.0, 0.0, 0.0], [64.0, 32.0, 16.0])
CAVITY = (-1, [8.0, 4.0, 2.0], [40.0, 20.0, 10.0])


def box_mesh(box, inward=False):
    _, lo, hi = box
    mesh = trimesh.creation.box(bounds=[lo, hi])
    if inward:
        mesh.invert()
    return mesh


def one_mesh(*meshes):
    return trimesh.util.concatenate(list(meshes))


def rotated(mesh):
    """The mesh turned by ROTATION and shifted by SHIFT_MM (coordinates in mm)."""
    out = mesh.copy()
    out.vertices = mesh.vertices @ ROTATION.T + SHIFT_MM
    return out


def properties(boxes, density, turned=False):
    """Mass, centre of mass (m) and inertia about it of a signed sum of uniform boxes (mm)."""
    mass, first, second = 0.0, np.zeros(3), np.zeros((3, 3))
    for sign, lo, hi in boxes:
        lo, hi = np.asarray(lo) / 1000.0, np.asarray(hi) / 1000.0
        m = sign * density * np.prod(hi - lo)
        c = (lo + hi) / 2
        mass += m
        first += m * c
        second += box_inertia(m, hi - lo) + parallel_axis(m, c)  # about the origin
    com = first / mass
    inertia = second - parallel_axis(mass, com)
    if turned:
        com = ROTATION @ com + SHIFT_MM / 1000.0
        inertia = ROTATION @ inertia @ ROTATION.T
    return mass, com, inertia


def write_obj(path, mesh):
    """An OBJ with every coordinate to full double precision (STL and PLY store float32)."""
    lines = [f"v {x!r} {y!r} {z!r}" for x, y, z in np.asarray(mesh.vertices, dtype=float).tolist()]
    lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in np.asarray(mesh.faces)]
    path.write_text("\n".join(lines) + "\n")


def assert_body(body, expected, rtol=EXACT_RTOL):
    mass, com, inertia = expected
    assert abs(body.mass - mass) <= rtol * mass
    assert rel_err(body.center_of_mass, com) <= rtol
    assert rel_err(body.inertia, inertia) <= rtol


def load_file(tmp_path, mesh, name):
    """The body of ``mesh`` (mm) written to ``name`` (.stl: float32; .obj: full precision)."""
    path = tmp_path / name
    write_obj(path, mesh) if name.endswith(".obj") else mesh.export(path)
    return mesh_body(path, "mm", density=DENSITY)


# ----------------------------------------------------------------- touching parts


def test_the_t_of_two_touching_boxes_is_one_solid(tmp_path):
    """The issue's T: the bar lies on the stem's top face, as one STL. Coordinates are whole
    mm, exact in float32, so the closed forms hold to round-off."""
    t = one_mesh(box_mesh(T_STEM), box_mesh(T_BAR))
    body = load_file(tmp_path, t, "t.stl")
    assert_body(body, properties([T_STEM, T_BAR], DENSITY))
    assert body.mesh_faces.shape[1] == 3


def test_the_t_rotated_is_one_solid(tmp_path):
    """Turned and shifted, the faces that touch are no longer axis-aligned; in full precision
    the union is exact to round-off."""
    body = load_file(tmp_path, rotated(one_mesh(box_mesh(T_STEM), box_mesh(T_BAR))), "t.obj")
    assert_body(body, properties([T_STEM, T_BAR], DENSITY, turned=True))


def test_the_t_rotated_in_float32_stl_is_accepted(tmp_path):
    """As a CAD program exports it: the turned T in an STL, whose float32 coordinates make the
    touching faces cross by a rounding error. It was refused as self-intersecting; now the
    union is measured. Each vertex moved by at most d = 2^-24 |x|max sqrt(3), so the solid
    changed by a shell of thickness d over the surface area A: |dm| <= rho A d, and every
    moment about a point within r of the body by at most rho A d r^2 more."""
    t = rotated(one_mesh(box_mesh(T_STEM), box_mesh(T_BAR)))
    body = load_file(tmp_path, t, "t.stl")
    mass, com, inertia = properties([T_STEM, T_BAR], DENSITY, turned=True)
    d = 2.0**-24 * np.max(np.abs(t.vertices)) * np.sqrt(3) / 1000.0
    area = (2 * (20 * 100 + 20 * 100 + 20 * 20) + 2 * (120 * 20 + 120 * 20 + 20 * 20)) / 1e6
    r = np.linalg.norm([120.0, 120.0, 20.0]) / 1000.0  # the body's diagonal bounds any distance
    dm = DENSITY * area * d
    assert abs(body.mass - mass) <= dm
    assert np.max(np.abs(body.center_of_mass - com)) <= 2 * dm * r / mass + d
    assert np.max(np.abs(body.inertia - inertia)) <= 4 * dm * r**2


def test_stacked_boxes_that_share_their_outline(tmp_path):
    """Two boxes of one footprint, one on the other: the edges round the shared face belong
    to both parts. With the same diagonal on the shared face its two copies cancel and one
    closed surface is left; with crossing diagonals four faces meet at each of those edges,
    and they are paired by the solid between them: two parts, united."""
    low = (1, [0.0, 0.0, 0.0], [30.0, 20.0, 10.0])
    high = (1, [0.0, 0.0, 10.0], [30.0, 20.0, 25.0])
    top = box_mesh(high)
    bottom = np.flatnonzero(np.all(top.vertices[top.faces][:, :, 2] == 10.0, axis=1))
    corner = {tuple(top.vertices[i][:2]): i for i in np.unique(top.faces[bottom])}
    a, b, c, d = (corner[p] for p in ((0.0, 0.0), (30.0, 0.0), (30.0, 20.0), (0.0, 20.0)))
    below = box_mesh(low)
    lid = below.faces[np.all(below.vertices[below.faces][:, :, 2] == 10.0, axis=1)]
    diagonal = {tuple(below.vertices[i][:2]) for i in set(lid[0]) & set(lid[1])}
    along_ac = diagonal == {(0.0, 0.0), (30.0, 20.0)}
    # the shared face of the top box, wound counter-clockwise seen from below (outside)
    diagonal_ac, diagonal_bd = [[a, d, c], [a, c, b]], [[a, d, b], [b, d, c]]
    for name, lid_faces in (("same", diagonal_ac if along_ac else diagonal_bd),
                            ("crossing", diagonal_bd if along_ac else diagonal_ac)):
        faces = top.faces.copy()
        faces[bottom] = lid_faces
        stack = one_mesh(below, trimesh.Trimesh(top.vertices, faces, process=False))
        assert_body(load_file(tmp_path, stack, f"{name}.stl"), properties([low, high], DENSITY))
        assert_body(load_file(tmp_path, rotated(stack), f"{name}.obj"), properties([low, high], DENSITY, turned=True))


def test_boxes_that_touch_along_one_edge(tmp_path):
    a = (1, [0.0, 0.0, 0.0], [10.0, 10.0, 10.0])
    b = (1, [10.0, 10.0, 0.0], [20.0, 20.0, 10.0])
    assert_body(load_file(tmp_path, one_mesh(box_mesh(a), box_mesh(b)), "edge.stl"), properties([a, b], DENSITY))


# ----------------------------------------------------------------- overlapping parts


def test_overlapping_boxes_count_the_overlap_once(tmp_path):
    parts = one_mesh(box_mesh(HEAD), box_mesh(HANDLE))
    expected = [HEAD, HANDLE, HANDLE_IN_HEAD]
    assert_body(load_file(tmp_path, parts, "hammer.stl"), properties(expected, DENSITY))
    assert_body(load_file(tmp_path, rotated(parts), "hammer.obj"), properties(expected, DENSITY, turned=True))


def test_a_part_inside_another_adds_nothing(tmp_path):
    inner = (1, [10.0, 10.0, 5.0], [20.0, 20.0, 10.0])
    parts = one_mesh(box_mesh(OUTER), box_mesh(inner))
    assert_body(load_file(tmp_path, parts, "nested.stl"), properties([OUTER], DENSITY))


def test_the_same_part_twice_counts_once(tmp_path):
    parts = one_mesh(box_mesh(HEAD), box_mesh(HEAD))
    assert_body(load_file(tmp_path, parts, "twice.stl"), properties([HEAD], DENSITY))


# ----------------------------------------------------------------- cavities


def test_a_box_with_a_cavity_in_mm_and_rotated(tmp_path):
    hollow = one_mesh(box_mesh(OUTER), box_mesh(CAVITY, inward=True))
    assert_body(load_file(tmp_path, hollow, "hollow.stl"), properties([OUTER, CAVITY], DENSITY))
    assert_body(load_file(tmp_path, rotated(hollow), "hollow.obj"), properties([OUTER, CAVITY], DENSITY, turned=True))


def test_a_rod_through_a_cavity_fills_it_where_it_passes(tmp_path):
    """A hollow box with a rod pushed through both walls: the rod's material is inside the
    cavity too (the winding number there is 1 - 1 + 1). The cavity belongs to the box; the
    union with the rod is measured."""
    rod = (1, [-20.0, 10.0, 4.0], [90.0, 14.0, 8.0])
    rod_in_box = (-1, [0.0, 10.0, 4.0], [64.0, 14.0, 8.0])
    rod_in_cavity = (1, [8.0, 10.0, 4.0], [40.0, 14.0, 8.0])
    mesh = one_mesh(box_mesh(OUTER), box_mesh(CAVITY, inward=True), box_mesh(rod))
    expected = [OUTER, CAVITY, rod, rod_in_box, rod_in_cavity]
    assert_body(load_file(tmp_path, mesh, "rod.stl"), properties(expected, DENSITY))
    assert_body(load_file(tmp_path, rotated(mesh), "rod.obj"), properties(expected, DENSITY, turned=True))


def test_a_rattle_a_part_loose_in_a_cavity(tmp_path):
    ball = (1, [12.0, 8.0, 4.0], [20.0, 16.0, 8.0])
    mesh = one_mesh(box_mesh(OUTER), box_mesh(CAVITY, inward=True), box_mesh(ball))
    assert_body(load_file(tmp_path, mesh, "rattle.stl"), properties([OUTER, CAVITY, ball], DENSITY))


def test_an_inside_out_part_apart_is_turned_a_cavity_is_not(tmp_path):
    """An inward-wound part inside no part is a part wound inside out; the cavity beside it
    stays a cavity, and a cavity with one face wound the wrong way stays one too."""
    apart = (1, [100.0, 0.0, 0.0], [110.0, 10.0, 30.0])
    cavity = box_mesh(CAVITY, inward=True)
    faces = cavity.faces.copy()
    faces[3] = faces[3, ::-1]
    cavity = trimesh.Trimesh(cavity.vertices, faces, process=False)
    mesh = one_mesh(box_mesh(OUTER), cavity, box_mesh(apart, inward=True))
    assert_body(load_file(tmp_path, mesh, "mixed.stl"), properties([OUTER, CAVITY, apart], DENSITY))


def test_winding_number_inside_outside_and_in_a_cavity():
    hollow = one_mesh(box_mesh(OUTER), box_mesh(CAVITY, inward=True))
    tri = hollow.vertices[hollow.faces]
    assert winding_number(np.array([4.0, 2.0, 1.0]), tri) == pytest.approx(1.0, abs=1e-12)
    assert winding_number(np.array([20.0, 10.0, 5.0]), tri) == pytest.approx(0.0, abs=1e-12)
    assert winding_number(np.array([-1.0, 2.0, 1.0]), tri) == pytest.approx(0.0, abs=1e-12)


# ----------------------------------------------------------------- what the solid keeps


def test_the_drawn_surface_is_the_unions():
    """The T's drawn surface has no wall inside: every face of the union lies on the T's outside."""
    geo = measure(one_mesh(box_mesh(T_STEM), box_mesh(T_BAR)), unit="mm")
    v = np.asarray(geo.vertices)
    centres = v[geo.faces].mean(axis=1)
    inside_stem_top = (np.abs(centres[:, 1] - 100.0) < 1e-9) & (np.abs(centres[:, 0]) < 10.0)
    assert not inside_stem_top.any()
    assert trimesh.Trimesh(v, geo.faces, process=False).is_volume


def test_weld_keeps_a_clean_mesh_as_it_is():
    box = trimesh.creation.box(extents=[1.0, 2.0, 3.0])
    v, f = weld(box.vertices, box.faces)
    assert np.array_equal(v, box.vertices) and np.array_equal(f, box.faces)
    # an STL-like copy of each corner per face welds back to the box's eight corners
    soup_v = box.vertices[box.faces].reshape(-1, 3)
    v, f = weld(soup_v, np.arange(len(soup_v)).reshape(-1, 3))
    assert len(v) == 8 and np.array_equal(v[f], box.vertices[box.faces])


def test_weld_sorts_the_rows_when_their_hashes_collide(monkeypatch):
    """Equal positions are found by a 64-bit hash; rows whose hashes collide are sorted
    themselves. With every hash equal, the box still welds to its eight corners."""
    box = trimesh.creation.box(extents=[1.0, 2.0, 3.0])
    soup_v = box.vertices[box.faces].reshape(-1, 3)
    monkeypatch.setattr(mesh_parts, "_splitmix", lambda z: z & np.uint64(0))
    v, f = weld(soup_v, np.arange(len(soup_v)).reshape(-1, 3))
    assert len(v) == 8 and np.array_equal(v[f], box.vertices[box.faces])


# ----------------------------------------------------------------- refusals name the part or edge


def test_a_triangle_soup_is_refused_as_open(tmp_path):
    """20 000 loose triangles: open, every one of them, not "flat or degenerate"."""
    rng = np.random.default_rng(7)
    tri = rng.random((20_000, 3, 3))
    soup = trimesh.Trimesh(tri.reshape(-1, 3), np.arange(60_000).reshape(-1, 3), process=False)
    soup.export(tmp_path / "soup.stl")
    path = write_scenario(tmp_path, ['shape = "mesh"', 'mesh = "soup.stl"', 'unit = "mm"', "mass = 1.0"])
    line = refused(tumble("inspect", path), quiet=True)
    assert "body.mesh must be a closed (watertight) surface: 60000 edges belong to one face only" in line
    assert "20000 of its 20000 parts" in line and "part 1 at the edge from (" in line and " mm)" in line


def test_a_fin_on_an_edge_is_refused_naming_the_edge():
    """A triangle hanging from a box's edge: three faces meet there, which no solid has."""
    box = box_mesh((1, [0.0, 0.0, 0.0], [10.0, 10.0, 10.0]))
    a, b = box.faces[0][:2]
    tip = len(box.vertices)
    fin = trimesh.Trimesh(np.vstack([box.vertices, [[-5.0, -5.0, -5.0]]]), np.vstack([box.faces, [[b, a, tip]]]),
                          process=False)
    with pytest.raises(ParameterError) as err:
        measure(fin, "fin.stl")
    msg = str(err.value)
    pa, pb = (f"({', '.join(f'{x:g}' for x in box.vertices[i])}) m" for i in (a, b))
    assert msg.startswith("mesh must be the surface of a solid: 3 faces meet at the edge ")
    assert {pa, pb} == set(msg.split("edge from ")[1].split(" (a non")[0].split(" to "))


def test_a_one_sided_surface_is_refused():
    """A closed but one-sided grid (a Klein bottle's topology): no winding is consistent."""
    n, m = 8, 7
    ids = np.arange(n * m).reshape(n, m)
    faces = []
    for i in range(n):
        for j in range(m):
            if i + 1 < n:
                p, q = ids[i + 1, j], ids[i + 1, (j + 1) % m]
            else:  # the last row is glued to the first one turned over
                p, q = ids[0, (-j) % m], ids[0, (-j - 1) % m]
            faces += [[ids[i, j], p, q], [ids[i, j], q, ids[i, (j + 1) % m]]]
    points = np.random.default_rng(3).random((n * m, 3))
    with pytest.raises(ParameterError, match="wound consistently.*part 1 of 1 is one-sided"):
        measure(trimesh.Trimesh(points, np.array(faces), process=False))


def test_a_flat_part_is_refused_naming_it(tmp_path):
    flat = trimesh.Trimesh([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], [[0, 1, 2], [0, 2, 3], [0, 3, 1], [1, 3, 2]],
                           process=False)
    flat.apply_translation([50.0, 0.0, 0.0])
    parts = one_mesh(box_mesh(HEAD), flat)
    parts.vertices /= 1000.0  # mm -> m: measure takes metres and names points in the unit
    with pytest.raises(ParameterError, match=r"volume > 0 \(part 2 of 2 is flat or degenerate: \S+ m\^3 in the box "
                                             r"from \(50, 0, 0\) mm to \(51, 1, 0\) mm\)"):
        measure(parts, unit="mm")


def test_a_file_too_large_is_refused_before_it_is_read(tmp_path, monkeypatch):
    trimesh.creation.box(extents=[1.0, 1.0, 1.0]).export(tmp_path / "box.stl")  # 684 bytes
    trimesh.creation.icosphere(subdivisions=1).export(tmp_path / "ball.stl")  # 4084 bytes
    monkeypatch.setattr(meshes, "MAX_FILE_BYTES", 2000)
    assert mesh_body(tmp_path / "box.stl", mass=1.0).mass == 1.0
    monkeypatch.setattr(trimesh.exchange.stl, "load_stl", None)  # reading it would fail
    with pytest.raises(ParameterError, match=r"be at most 0.002 MB \(about 4e-05 million triangles of binary STL; "
                                             r"simplify the mesh\), this file has 0.00408 MB"):
        mesh_body(tmp_path / "ball.stl", mass=1.0)


def test_a_directory_is_not_nothing(tmp_path):
    (tmp_path / "parts.stl").mkdir()
    path = write_scenario(tmp_path, ['shape = "mesh"', 'mesh = "parts.stl"', "mass = 1.0"])
    with pytest.raises(ParameterError, match=r"body.mesh must be a mesh file, not a directory \(.*parts.stl is a "
                                             r"directory\)"):
        load(path)


def test_body_from_the_union_keeps_the_file_axes():
    """The union's body: inertia in the file's axes, about the centre of mass, as for one part."""
    parts = rotated(one_mesh(box_mesh(HEAD), box_mesh(HANDLE)))
    parts.vertices /= 1000.0
    body = body_from_geometry(measure(parts), density=DENSITY)
    assert_body(body, properties([HEAD, HANDLE, HANDLE_IN_HEAD], DENSITY, turned=True))
