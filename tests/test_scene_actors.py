"""The helpers every scene shares (app/scene/actors.py): frames, user matrices, polylines, the
floor grid, and removing a scene's actors from its plotter."""

from __future__ import annotations

import numpy as np
import pytest
import pyvista as pv

from tumble.physics.body import box
from tumble.scene import meshes
from tumble.scene.actors import FloorGrid, completing_axes, fill_polyline, pose_matrix
from tumble.scene.body_scene import RigidBodyScene
from tumble.scene.ghost import GhostBody
from tumble.scene.poinsot import PoinsotGhost, PoinsotScene

#: orthonormality holds to round-off: a cross product and one normalisation of unit vectors
ROUND_OFF = 1e-14


@pytest.fixture
def plotter():
    p = pv.Plotter(off_screen=True, window_size=(160, 120))
    yield p
    p.close()


@pytest.mark.parametrize("preferred", [0, 2])
def test_completing_axes_make_a_right_handed_frame_normal_to_the_preferred_axis(preferred):
    rng = np.random.default_rng(7)
    units = list(rng.normal(size=(50, 3))) + [np.eye(3)[k] for k in range(3)] + [np.eye(3)[preferred] + 0.1]
    for u in units:
        u = u / np.linalg.norm(u)
        b, c = completing_axes(u, preferred)
        frame = np.column_stack([u, b, c])
        np.testing.assert_allclose(frame.T @ frame, np.eye(3), atol=ROUND_OFF)
        assert np.linalg.det(frame) == pytest.approx(1.0, abs=ROUND_OFF)
        helper = preferred if abs(u[preferred]) < 0.9 else 1  # near the preferred axis: normal to y
        assert abs(b[helper]) < ROUND_OFF


def test_pose_matrix_applies_the_linear_part_then_the_shift():
    R = np.array([[0.0, -2.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 2.0]])
    c = np.array([1.0, -2.0, 0.5])
    p = np.array([0.3, 0.4, -1.2])
    np.testing.assert_allclose((pose_matrix(R, c) @ [*p, 1.0])[:3], R @ p + c, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(pose_matrix(R)[:3, 3], np.zeros(3))
    np.testing.assert_array_equal(pose_matrix(offset=c), [[1, 0, 0, c[0]], [0, 1, 0, c[1]], [0, 0, 1, c[2]], [0, 0, 0, 1]])


def test_fill_polyline_keeps_the_newest_points_and_pads_with_the_oldest():
    poly = meshes.polyline(5)
    pts = np.arange(9.0).reshape(3, 3)
    fill_polyline(poly, pts)
    np.testing.assert_array_equal(poly.points, [pts[0], pts[0], pts[0], pts[1], pts[2]])
    many = np.arange(24.0).reshape(8, 3)
    fill_polyline(poly, many)
    np.testing.assert_array_equal(poly.points, many[-5:])


def test_the_floor_grid_moves_by_whole_cells_and_stays_its_depth_below(plotter):
    grid = FloorGrid(plotter, spacing=0.5, half_cells=4, depth=1.5, center=(0.0, 0.0, 2.0))
    np.testing.assert_array_equal(np.array(grid.actor.user_matrix)[:3, 3], [0.0, 0.0, 0.5])
    grid.follow(np.array([0.2, -0.2, 3.0]))  # less than half a cell across: stays
    np.testing.assert_array_equal(np.array(grid.actor.user_matrix)[:3, 3], [0.0, 0.0, 1.5])
    grid.follow(np.array([1.3, -0.8, 3.0]))
    np.testing.assert_array_equal(np.array(grid.actor.user_matrix)[:3, 3], [1.5, -1.0, 1.5])


@pytest.mark.parametrize("make", [lambda p: RigidBodyScene(p), lambda p: PoinsotScene(p),
                                  lambda p: GhostBody(p), lambda p: PoinsotGhost(p)],
                         ids=["body", "poinsot", "ghost", "poinsot-ghost"])
def test_clear_removes_every_actor_the_scene_added(plotter, make):
    body = box(1.0, (0.1, 0.2, 0.3))
    before = plotter.renderer.GetActors().GetNumberOfItems()
    scene = make(plotter)
    scene.set_body(body)
    assert scene.body is body and scene.actors
    assert plotter.renderer.GetActors().GetNumberOfItems() == before + len(scene.actors)
    scene.clear()
    assert plotter.renderer.GetActors().GetNumberOfItems() == before
    assert scene.actors == {} and scene.body is None
