"""Poinsot's construction, cross-checked against a simulated trajectory."""

import numpy as np
import pytest

from tumble.physics import quaternion as quat
from tumble.physics.integrators import simulate
from tumble.physics.poinsot import poinsot_state, polhode_family, separatrices
from tumble.scenario import load


@pytest.mark.parametrize("integrator,tol", [("exact", 1e-13), ("splitting4", 1e-8), ("rk4", 1e-8)])
def test_construction_holds_along_the_motion(integrator, tol):
    sc = load("boxes-complex")
    model = sc.model
    traj = simulate(model, sc.initial_state, integrator, 1e-3, 10.0, sample=0.05)
    rows = model.to_rows(traj.c, traj.v, traj.q, traj.w)
    moments = model.moments
    states = [poinsot_state(moments, r[6:10], r[10:13]) for r in rows]
    p0 = states[0]
    for s, r in zip(states, rows):
        w = r[10:13]
        # the contact point is omega, on the energy ellipsoid of the start (fixed: no torque), and
        # the ellipsoid's tangent plane there is normal to the start's L (fixed in the world)
        assert np.sum(s.contact_body ** 2 / p0.semi_axes ** 2) == pytest.approx(1.0, abs=tol)
        grad = s.contact_body / p0.semi_axes ** 2  # the ellipsoid's normal, from its geometry alone
        np.testing.assert_allclose(quat.rotate(r[6:10], grad / np.linalg.norm(grad)), p0.plane_normal, atol=tol)
        # the contact point lies in the invariable plane: its distance along the fixed normal
        assert s.contact_world @ p0.plane_normal == pytest.approx(p0.plane_distance, rel=tol)
        # the plane's distance and normal stay constant
        assert s.plane_distance == pytest.approx(p0.plane_distance, rel=tol)
        np.testing.assert_allclose(s.plane_normal, p0.plane_normal, atol=tol)
        # the polhode lies on both the energy and the momentum ellipsoid
        assert w @ (moments * w) == pytest.approx(rows[0, 10:13] @ (moments * rows[0, 10:13]), rel=tol)
        assert np.sum((moments * w) ** 2) == pytest.approx(np.sum((moments * rows[0, 10:13]) ** 2), rel=tol)


def test_polhode_family_and_separatrices_lie_on_the_energy_ellipsoid():
    moments = np.array([1.0, 2.0, 3.0])
    two_t = 2.0
    curves = polhode_family(moments, two_t, count=4, n=64)
    assert len(curves) == 8
    for c in curves:
        np.testing.assert_allclose(np.einsum("ni,i,ni->n", c, moments, c), two_t, rtol=1e-12)
        L2 = np.sum((moments * c) ** 2, axis=1)
        assert np.ptp(L2) < 1e-12 * L2[0]  # each curve is one polhode: constant L^2
        np.testing.assert_allclose(c[0], c[-1], atol=1e-9)  # closed after one full orbit
    for s in separatrices(moments, two_t):
        np.testing.assert_allclose(np.einsum("ni,i,ni->n", s, moments, s), two_t, rtol=1e-12)
        np.testing.assert_allclose(np.sum((moments * s) ** 2, axis=1), two_t * moments[1], rtol=1e-12)
