"""The Poinsot view in a real window under Xvfb: the construction drawn is the simulated
state's (contact point = omega, plane at 2T/|L| normal to L, herpolhode in the plane,
polhode on both ellipsoids), with the family of polhodes beside it; and the real entry
point's screenshot shows the ellipsoid."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import WAIT_MS, tumble
from PyQt5.QtGui import QColor, QImage

from tumble.physics import quaternion as quat
from tumble.scene.style import BACKGROUND

#: a pixel counts as drawn when it differs from the background by this much (0-255 units)
DRAWN_DISTANCE = 40

#: rk4 at dt 1e-3 keeps 2T and |L| to about 1e-12 relative over these runs; drawing must add nothing
RK4_REL = 1e-9



def settle_paused(window, qtbot):
    """Pause, and wait until the frame drawn is the newest snapshot."""
    window.worker.pause()
    qtbot.waitUntil(lambda: not window.worker.latest().running, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: window.drawn_serials == (window.worker.latest().serial,), timeout=WAIT_MS)
    return window.worker.latest()


def drawn_points(actor) -> np.ndarray:
    """The actor's points as drawn: its geometry through its user matrix."""
    pts = np.asarray(actor.mapper.dataset.points, dtype=float)
    m = np.array(actor.user_matrix)
    return pts @ m[:3, :3].T + m[:3, 3]


def test_the_drawn_construction_is_the_simulated_state(open_view, qtbot):
    window = open_view("t-handle", view="poinsot", speed=3.0)
    scene = window.scene
    qtbot.waitUntil(lambda: window.worker.latest().t > 4.0, timeout=WAIT_MS)  # through a flip
    snap = settle_paused(window, qtbot)
    s = snap.state
    body = snap.scenario.rigid_body
    I = body.inertia
    two_t = float(s.w @ I @ s.w)
    L_world = quat.rotate(s.q, I @ s.w)
    n = L_world / np.linalg.norm(L_world)
    d = two_t / np.linalg.norm(L_world)
    c = scene.construction
    # the contact point is omega itself (world R omega), as the construction says
    contact = np.array(scene.actors["contact"].user_matrix)[:3, 3]
    np.testing.assert_allclose(contact, quat.rotate(s.q, s.w), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(c.contact_world, contact, rtol=1e-12, atol=1e-12)
    # ... on the energy ellipsoid drawn (semi-axes sqrt(2T/I_i) along the principal axes, posed
    # with the body): its user matrix maps the unit sphere onto it
    m = np.array(scene.actors["ellipsoid"].user_matrix)[:3, :3]
    assert np.linalg.norm(np.linalg.solve(m, contact)) == pytest.approx(1.0, rel=1e-12)
    moments, _ = body.principal()
    np.testing.assert_allclose(np.sort(np.linalg.svd(m, compute_uv=False)), np.sort(np.sqrt(two_t / moments)),
                               rtol=1e-12)
    # ... and in the plane drawn: normal L, at distance 2T/|L| from the fixed centre
    np.testing.assert_allclose(c.plane_normal, n, atol=1e-12)
    assert c.plane_distance == pytest.approx(d, rel=1e-12)
    plane = drawn_points(scene.actors["plane"])
    np.testing.assert_allclose(plane @ n, d, rtol=1e-12)
    assert contact @ n == pytest.approx(d, rel=1e-12)
    # the ellipsoid's tangent plane at the contact point is the invariable plane
    grad = np.linalg.solve(m @ m.T, contact)
    np.testing.assert_allclose(grad / np.linalg.norm(grad), n, atol=1e-9)


def test_plane_distance_constant_herpolhode_in_plane_polhode_on_both_ellipsoids(open_view, qtbot):
    window = open_view("t-handle", view="poinsot", speed=3.0)
    scene = window.scene
    distances, normals = [], []

    def sample():
        c = scene.construction
        if c is not None and (not distances or window.worker.latest().t > 0):
            distances.append(c.plane_distance)
            normals.append(c.plane_normal)
        # two flips, and enough samples however few frames a busy machine draws meanwhile
        return window.worker.latest().t > 7.0 and len(distances) > 20

    qtbot.waitUntil(sample, timeout=WAIT_MS)
    d0 = distances[0]
    np.testing.assert_allclose(distances, d0, rtol=RK4_REL)  # the plane does not move
    np.testing.assert_allclose(normals, normals[0][None, :].repeat(len(normals), 0), atol=RK4_REL)
    settle_paused(window, qtbot)
    c = scene.construction
    n, d = c.plane_normal, c.plane_distance
    # the herpolhode (published and as drawn) lies in the plane
    her = scene.herpolhode
    assert len(her) > 500
    np.testing.assert_allclose(her @ n, d, rtol=RK4_REL)
    drawn = drawn_points(scene.actors["herpolhode"])
    np.testing.assert_allclose(drawn @ n, d, rtol=RK4_REL)
    radii = np.linalg.norm(her - np.outer(her @ n, n), axis=1)
    assert radii.max() > 5 * radii.min()  # it swings out during a flip and back
    # the polhode (body frame) lies on the energy and on the momentum ellipsoid
    body = window.worker.latest().scenario.rigid_body
    I = body.inertia
    w0 = np.asarray(window.worker.latest().scenario.angular_velocity)
    pol = scene.polhode
    np.testing.assert_allclose(np.einsum("ni,ij,nj->n", pol, I, pol), w0 @ I @ w0, rtol=RK4_REL)
    np.testing.assert_allclose(np.linalg.norm(pol @ I, axis=1), np.linalg.norm(I @ w0), rtol=RK4_REL)


def test_the_polhode_family_and_separatrices_beside_it(open_view, qtbot):
    window = open_view("t-handle", view="poinsot")
    polhode = window.polhode
    assert polhode.family
    assert len(polhode.separatrix_curves) == 2
    body = window.worker.latest().scenario.rigid_body
    I = body.inertia
    w0 = np.asarray(window.worker.latest().scenario.angular_velocity)
    two_t = w0 @ I @ w0
    moments, axes = body.principal()
    for curve in polhode.separatrix_curves:
        np.testing.assert_allclose(np.einsum("ni,ij,nj->n", curve, I, curve), two_t, rtol=1e-12)
        # through the intermediate axis: L^2 = 2T I2 on a separatrix
        np.testing.assert_allclose(np.linalg.norm(curve @ I, axis=1) ** 2, two_t * moments[1], rtol=1e-9)
    assert {"family", "separatrices", "omega", "curve"} <= set(polhode._actors)
    # the current omega is marked
    qtbot.waitUntil(lambda: window.worker.latest().t > 1.0, timeout=WAIT_MS)
    snap = settle_paused(window, qtbot)
    window._last_plot = 0.0
    qtbot.waitUntil(lambda: np.allclose(np.array(polhode._actors["omega"].user_matrix)[:3, 3], snap.state.w),
                    timeout=WAIT_MS)


def test_a_symmetric_body_has_no_separatrix_and_still_opens(open_view, qtbot):
    window = open_view("symmetric-top", view="poinsot")
    assert window.polhode.separatrix_curves == []
    qtbot.waitUntil(lambda: window.scene.construction is not None, timeout=WAIT_MS)


def ellipsoid_pixels_in_window(window):
    """Window pixels of points well inside the ellipsoid's outline (centre, and halfway to
    the ends of its axes), from the renderer's own projection."""
    ren = window.scene_view.renderer
    origin = window.scene_view.mapTo(window, window.scene_view.rect().topLeft())
    height = window.scene_view.height()
    m = np.array(window.scene.actors["ellipsoid"].user_matrix)[:3, :3]
    points = [np.zeros(3)] + [0.5 * m[:, k] * sign for k in range(3) for sign in (1, -1)]
    pixels = []
    for p in points:
        ren.SetWorldPoint(*p, 1.0)
        ren.WorldToDisplay()
        x, y, _ = ren.GetDisplayPoint()
        pixels.append((origin.x() + round(x), origin.y() + height - 1 - round(y)))
    return pixels


def test_poinsot_screenshot_from_the_entry_point_shows_the_ellipsoid(open_view, qtbot, tmp_path):
    window = open_view("t-handle", view="poinsot", paused=True)
    qtbot.waitUntil(lambda: window.scene.construction is not None, timeout=WAIT_MS)
    pixels = ellipsoid_pixels_in_window(window)
    size = (window.width(), window.height())
    window.close()
    out = tmp_path / "poinsot.png"
    res = tumble("gui", "t-handle", "--view", "poinsot", "--paused", "--screenshot", str(out),
                     "--quit-after", "1")
    assert res.returncode == 0, res.stderr
    image = QImage(str(out))
    assert (image.width(), image.height()) == size
    background = np.array(QColor(BACKGROUND).getRgb()[:3])
    colours = np.array([QColor(image.pixel(x, y)).getRgb()[:3] for x, y in pixels])
    drawn = np.abs(colours - background).sum(axis=1) > DRAWN_DISTANCE
    assert drawn.all(), f"background where the ellipsoid is: {list(zip(pixels, colours.tolist()))}"


def test_the_exact_ghost_rolls_with_the_construction(open_view, qtbot):
    """In the Poinsot view the ghost is the closed form's ellipsoid and contact point: on
    the simulated ones for rk4."""
    window = open_view("t-handle", view="poinsot", speed=3.0)
    window.ghost.set_checked(True)
    qtbot.waitUntil(lambda: window.worker.latest().t > 4.0, timeout=WAIT_MS)
    settle_paused(window, qtbot)
    ghost = window.ghost.scene
    assert ghost.actors["meridians"].GetVisibility() and ghost.actors["contact"].GetVisibility()
    np.testing.assert_allclose(np.array(ghost.actors["meridians"].user_matrix),
                               np.array(window.scene.actors["ellipsoid"].user_matrix), atol=1e-6)
    np.testing.assert_allclose(ghost.construction.contact_world, window.scene.construction.contact_world,
                               atol=1e-6 * np.linalg.norm(window.scene.construction.contact_world))
    assert window.ghost.last_error < 1e-7
