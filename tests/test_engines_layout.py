"""The engines view's grid of bodies (app.scene.engines): laid out as large as the pane allows,
clear of each other, of the pane's edges and of the colour key; and the reaches it is laid out
from hold what is drawn over a whole run (measured on an off-screen render of the exact motion).
The window's own test at 1280x720: tests/gui/test_engines_view_layout.py."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

#: the 3D pane of the engines window at 1280x720 and 1600x1000 (a 1440x900 window), measured
PANES = ((840, 628), (945, 810))
#: the colour key of the window at those sizes (px, at the pane's top left)
KEY = (266, 126)
#: a body (the sphere holding its drawn surface) spans at least this share of the pane's height
BODY_SHARE = 0.25


def _disjoint(a, b) -> bool:
    return a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]


@pytest.mark.parametrize("size", PANES)
@pytest.mark.parametrize("n", [2, 3, 4])
def test_layout_draws_every_body_large_and_apart_clear_of_the_key(size, n):
    from tumble.scene.engines import lay_out

    reach = (1.52, 1.52, 1.52, 1.55)
    labels = ((150.0, 31.0), (215.0, 17.0))
    layout = lay_out(n, size, reach, labels, KEY)
    width, height = size
    assert 2 * layout.scale >= BODY_SHARE * height  # a body radius drawn `scale` px long
    boxes = layout.boxes
    assert np.all(boxes[:, :2] >= 0) and np.all(boxes[:, 2] <= width) and np.all(boxes[:, 3] <= height)
    for a, b in itertools.combinations(boxes, 2):
        assert _disjoint(a, b)
    for box in boxes:
        assert _disjoint(box, (0, 0) + KEY)


def test_layout_tries_every_grid_and_prefers_fewer_rows_on_a_tie():
    from tumble.scene.engines import lay_out

    reach, labels = (1.5, 1.5, 1.5, 1.5), ((100.0, 30.0),)
    assert lay_out(4, (2000, 400), reach, labels).rows == 1  # a wide pane: a row
    assert lay_out(4, (600, 620), reach, labels).rows == 2  # a squarer one: two rows of two
    assert lay_out(2, (300, 900), reach, labels).cols == 1  # a tall one: a column
    assert lay_out(1, (600, 600), reach, labels).rows == 1


def test_omega_bound_holds_the_exact_motion():
    """omega . L / |L| is 2E/|L| and omega's part across L at most the bound, all along the exact
    motion of bodies spun near each axis (products of inertia included)."""
    from tumble.physics import diagnostics
    from tumble.physics.reference import ExactReference
    from tumble.scenario import load
    from tumble.scene.engines import omega_bound

    for preset in ("t-handle", "book-flips-middle-axis", "book-stable-long-axis", "tennis-racket", "phone"):
        sc = load(preset)
        body = sc.rigid_body
        a, b = omega_bound(body, sc.angular_velocity)
        ref = ExactReference(sc.model, sc.initial_state)
        for t in np.linspace(0.0, 8.0, 161):
            _, q, w = ref.at(t)
            L = diagnostics.angular_momentum(body, q, w)
            from tumble.physics import quaternion as quat

            w_world = quat.to_matrix(q) @ w
            along = w_world @ L / np.linalg.norm(L)
            assert along == pytest.approx(a, rel=1e-6)
            assert np.linalg.norm(w_world - along * L / np.linalg.norm(L)) <= b * (1 + 1e-6) + 1e-12


def _screen_boxes(plotter, actor_groups):
    """Each group's box on screen (x0, y0, x1, y1; px from the top left) from its actors' points as drawn."""
    ren = plotter.renderer
    height = plotter.window_size[1]
    boxes = []
    for actors in actor_groups:
        pts = []
        for actor in actors:
            if not actor.GetVisibility() or actor.GetMapper().GetInput().GetPoints() is None:
                continue
            m = np.array([[actor.GetMatrix().GetElement(i, j) for j in range(4)] for i in range(4)])
            xyz = np.asarray(actor.GetMapper().GetInput().GetPoints().GetData()) @ m[:3, :3].T + m[:3, 3]
            for x in xyz:
                ren.SetWorldPoint(*x, 1.0)
                ren.WorldToDisplay()
                d = ren.GetDisplayPoint()
                pts.append((d[0], height - d[1]))
        pts = np.array(pts)
        boxes.append(np.r_[pts.min(axis=0), pts.max(axis=0)])
    return np.array(boxes)


def label_box(plotter, label):
    """A label's box on screen (x0, y0, x1, y1; px from the top left): centred on its anchor, above it."""
    box = [0.0] * 4
    label.GetBoundingBox(plotter.renderer, box)
    x, y = label.GetPositionCoordinate().GetComputedDisplayValue(plotter.renderer)
    w, h = box[1] - box[0], box[3] - box[2]
    top = plotter.window_size[1] - y
    return (x - 0.5 * w, top - h, x + 0.5 * w, top)


@pytest.mark.parametrize("preset", ["t-handle", "book-flips-middle-axis", "tennis-racket"])
def test_what_is_drawn_stays_in_its_place_over_a_run(preset):
    """Off screen at the window's pane size, posed along the exact motion for 8 s: every body with
    its axes, arrows, trail, ghost and ring stays in its own box of the pane, apart from the others
    and the key, and its label above it."""
    import pyvista as pv

    from tumble.physics import diagnostics
    from tumble.physics.reference import ExactReference
    from tumble.scenario import load
    from tumble.scene.engines import EnginesScene, GhostRow

    sc = load(preset)
    body = sc.rigid_body
    width, height = PANES[0]
    p = pv.Plotter(off_screen=True, window_size=(width, height))
    try:
        n = 4
        scene = EnginesScene(p, n)
        ghosts = GhostRow(p, n)
        scene.set_bodies(body, center=np.asarray(sc.initial_state.c, dtype=float), w0=sc.angular_velocity,
                         q0=sc.initial_state.q, labels=[f"{e}\ndt 0.001" for e in ("mujoco:implicitfast", "pybullet",
                                                                                      "dart", "drake:continuous")])
        ghosts.set_body(body)
        scene.attach([ghosts])
        ghosts.set_visible(True)
        scene.keep_key_clear(*KEY)
        assert 2 * scene.layout.scale >= BODY_SHARE * height
        ref = ExactReference(sc.model, sc.initial_state)
        drawn = None
        for t in np.linspace(0.0, 8.0, 17):
            c, q, w = ref.at(t)
            since = np.linspace(max(0.0, t - 2.0), t, 40)
            qs = np.array([ref.at(s)[1] for s in since])
            cs = np.array([ref.at(s)[0] for s in since])
            scene.set_poses([(c, q, w, diagnostics.angular_momentum(body, q, w), qs, cs)] * n)
            ghosts.set_pose(c, q)
            p.render()
            groups = [[*s.actors.values(), ring, *g.actors.values()]
                      for s, ring, g in zip(scene.scenes, scene.rings, ghosts.scenes)]
            for s in scene.scenes:  # the grid under them is no body's
                groups[scene.scenes.index(s)].remove(s.actors["grid"])
            boxes = _screen_boxes(p, groups)
            drawn = boxes if drawn is None else np.c_[np.minimum(drawn[:, :2], boxes[:, :2]),
                                                      np.maximum(drawn[:, 2:], boxes[:, 2:])]
        assert np.all(drawn[:, :2] >= 0) and np.all(drawn[:, 2] <= width) and np.all(drawn[:, 3] <= height)
        labels = [label_box(p, label) for label in scene._labels]
        for k, (a, b) in enumerate(zip(drawn, labels)):
            assert b[3] <= a[1] + 1 and b[0] < a[2] and a[0] < b[2], (k, a, b)  # above its own body
            assert _disjoint(a, (0, 0) + KEY) and _disjoint(b, (0, 0) + KEY)
        for (a, la), (b, lb) in itertools.combinations(zip(drawn, labels), 2):
            assert _disjoint(a, b) and _disjoint(la, lb) and _disjoint(a, lb) and _disjoint(la, b)
    finally:
        p.close()
