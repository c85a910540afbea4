"""The throw fit's analytic derivatives (variational equations) against finite differences, and
its solvers against scipy's on the same problems.

Each derivative is compared with a central difference D(h); the tolerance is that difference's
own error, estimated from D(h) - D(2h) (the truncation error grows as h^2, so the difference is
three times D(h)'s truncation error), plus its rounding error: the integrated rates carry a
rounding error of up to eps |w| per RK4 step, divided by h.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import least_squares
from scipy.spatial.transform import Rotation

from tumble.throws.benches import synthetic as syn
from tumble.throws.benches.fit_bench import recording_from_arrays
from tumble.throws.fitting import solver
from tumble.throws.fitting.dynamics import (H_MAX, initial_rate, inverse3, rates_and_jacobian, rotation_matrix,
                                            simulate_rates, turn_directions)
from tumble.throws.fitting.edges import find_flights, start_rate

EPS = np.finfo(float).eps
#: a tensor with products of inertia (sensor frame)
PRODUCTS = np.array([[0.42, 0.05, -0.03], [0.05, 0.81, 0.02], [-0.03, 0.02, 1.0]])
DRAG = np.array([0.004, 0.012, 0.003])


def _central(fun, x, h):
    return (fun(x + h) - fun(x - h)) / (2 * h)


def _check(analytic, fun, x0, direction, step, rk4_steps):
    """analytic (n, 3) against central differences of fun along ``direction`` at ``x0``
    (``rk4_steps``: the most RK4 steps behind one value)."""
    d1 = _central(lambda s: fun(x0 + s * direction), 0.0, step)
    d2 = _central(lambda s: fun(x0 + s * direction), 0.0, 2 * step)
    scale = np.max(np.abs(fun(x0)))
    tolerance = np.abs(d1 - d2) + EPS * scale * rk4_steps / step
    assert np.all(np.abs(analytic - d1) <= tolerance), np.max(np.abs(analytic - d1) - tolerance)


def _times(rng, n=90, spacing=0.01):
    return np.concatenate(([0.0], np.cumsum(spacing + rng.uniform(-0.002, 0.002, n - 1))))


def _rk4_steps(t):
    return len(t) + int(np.ceil((t[-1] - t[0]) / H_MAX))


@pytest.mark.parametrize("drag_model", ["none", "linear", "quadratic"])
@pytest.mark.parametrize("inertia", [np.diag([0.3, 0.75, 1.0]), PRODUCTS], ids=["diagonal", "products"])
def test_rates_jacobian_matches_differences(drag_model, inertia):
    rng = np.random.default_rng(4)
    t = _times(rng)
    w0 = np.array([1.3, 11.0, -0.8])
    dirs = rng.normal(size=(3, 3, 3))
    out, sens = rates_and_jacobian(t, w0, inertia, drag_model, DRAG, dirs, drag_columns=True)
    assert sens.shape == (len(t), 3, 3 + 3 + 3)
    ref = np.vstack([w0, simulate_rates(t[1:], t[0], w0, inertia, drag_model, DRAG)])
    assert np.array_equal(out, ref)  # the same RK4 steps as the model

    def rates(w=w0, j=inertia, c=DRAG):
        return np.vstack([w, simulate_rates(t[1:], t[0], w, j, drag_model, c)])

    n = _rk4_steps(t)
    for k in range(3):
        e = np.eye(3)[k]
        _check(sens[:, :, k], lambda w: rates(w=w), w0, e, 1e-4, n)
    for d in range(3):
        _check(sens[:, :, 3 + d], lambda j: rates(j=j), inertia, dirs[d], 1e-5, n)
    for k in range(3):
        e = np.eye(3)[k]
        if drag_model == "none":
            assert np.all(sens[:, :, 6 + k] == 0.0)
        else:
            _check(sens[:, :, 6 + k], lambda c: rates(c=c), DRAG, e, 1e-5, n)


def test_turn_directions_and_rotation():
    rng = np.random.default_rng(7)
    for rotvec in (np.zeros(3), np.array([0.012, -0.02, 0.008]), rng.normal(size=3)):
        assert np.allclose(rotation_matrix(rotvec), Rotation.from_rotvec(rotvec).as_matrix(), atol=1e-14)

        def turned(v):
            r = rotation_matrix(v)
            return r @ PRODUCTS @ r.T

        dirs = turn_directions(rotvec, turned(rotvec))
        for i in range(3):
            e = np.eye(3)[i]
            d1 = _central(lambda s: turned(rotvec + s * e), 0.0, 1e-5)
            d2 = _central(lambda s: turned(rotvec + s * e), 0.0, 2e-5)
            assert np.all(np.abs(dirs[i] - d1) <= np.abs(d1 - d2) + 10 * EPS / 1e-5)
    assert np.allclose(inverse3(PRODUCTS), np.linalg.inv(PRODUCTS), rtol=1e-14, atol=1e-15)
    with pytest.raises(np.linalg.LinAlgError):
        inverse3(np.diag([1.0, 0.0, 1.0]))


@pytest.fixture(scope="module")
def session():
    """A turned sensor (2 deg) with products of inertia, noise, hand ramps and clipping: three throws."""
    truth = syn.Truth.rotated(2.0, moments=(0.3, 0.75, 1.0))
    rng = np.random.default_rng(11)
    rates = [syn.spin_near(truth, 1, a, 14.0, rng) for a in (5.0, 9.0, 12.0)]
    t, w, _ = syn.make_recording(truth, rates, rng, flight_s=0.8, world=syn.RealWorld(clip=17.45, catch=25.0))
    recs = [recording_from_arrays("jac", t, w)]
    flights, inertia, drag = find_flights(recs)
    w0s = np.array([start_rate(recs[f.recording], f.i0, f.i1) for f in flights])
    return recs, flights, inertia, drag, w0s


@pytest.mark.parametrize("axes_mode", ["sensor", "fit"])
@pytest.mark.parametrize("drag_model", ["none", "linear", "quadratic"])
def test_joint_jacobian_matches_differences(session, axes_mode, drag_model):
    recs, flights, inertia, drag, w0s = session
    data = solver.FlightData.of(recs, flights)
    j0, rotvec = solver.initial_axes(PRODUCTS, axes_mode)
    layout = solver.Layout(drag_model, axes_mode, int(np.argmax(j0)), len(flights))
    x0 = layout.pack(j0, rotvec + (0.01 if axes_mode == "fit" else 0.0), DRAG, w0s)
    model_id = solver.drag_id(drag_model)
    values, as_matrix = solver._jacobian_of(data, layout, model_id)
    jac = as_matrix(values(x0)[1]).toarray()
    assert jac.shape == (3 * int(data.used.sum()), len(x0))

    def residuals(x):
        j, rot, c, ws = layout.unpack(x)
        return np.concatenate([
            (np.vstack([ws[k], simulate_rates(data.t[a + 1:b], data.t[a], ws[k], rot @ np.diag(j) @ rot.T,
                                              drag_model, c)]) - data.w[a:b])[data.used[a:b]].ravel()
            for k, (a, b) in enumerate(zip(data.offsets[:-1], data.offsets[1:]))])

    n = max(_rk4_steps(data.t[a:b]) for a, b in zip(data.offsets[:-1], data.offsets[1:]))
    for i in range(len(x0)):
        e = np.zeros(len(x0))
        e[i] = 1.0
        step = 1e-5 * max(1.0, abs(x0[i]))
        _check(jac[:, i].reshape(-1, 3), lambda x: residuals(x).reshape(-1, 3), x0, e, step, n)
    # a flight's initial rate touches only its own rows
    rows = solver._row_flights(data)
    for f in range(len(flights)):
        cols = slice(layout.n_shared + 3 * f, layout.n_shared + 3 * f + 3)
        assert np.all(jac[rows != f, cols] == 0.0)


@pytest.mark.parametrize("loss", ["linear", "soft_l1"])
def test_block_lm_reaches_scipys_minimum(session, loss):
    """The block-arrow Levenberg-Marquardt and scipy's trust-region reflective solver, on the
    same robust, bounded problem from the same start: the same minimum."""
    recs, flights, inertia, drag, w0s = session
    ours = solver.solve(recs, flights, inertia, "quadratic", drag, "fit", w0s, loss=loss, f_scale=0.03)
    data = ours.data
    layout = ours.layout
    x0 = layout.pack(*solver.initial_axes(inertia, "fit"), np.maximum(drag, 0.0), w0s)
    lower = np.full(len(x0), -np.inf)
    lower[2:5] = 0.0
    values, _ = solver._jacobian_of(data, layout, solver.drag_id("quadratic"))

    def residuals(x):
        return (values(x)[0] - data.w)[data.used].ravel()

    ref = least_squares(residuals, x0, method="trf", x_scale="jac", ftol=1e-12, xtol=1e-12, gtol=1e-12,
                        loss=loss, f_scale=0.03, bounds=(lower, np.inf))
    assert ours.cost <= ref.cost * (1 + 1e-7)
    # the shared parameters agree within a small share of their standard errors
    std = np.sqrt(np.diag(ours.cov))
    assert np.all(np.abs(ours.x[:layout.n_shared] - ref.x[:layout.n_shared]) <= 0.05 * std + 1e-9)


def test_initial_rate_reaches_scipys_minimum():
    rng = np.random.default_rng(3)
    for model in ("none", "linear", "quadratic"):
        t = _times(rng, 80)
        w0 = rng.normal(size=3)
        w0 *= 12 / np.linalg.norm(w0)
        wm = np.vstack([w0, simulate_rates(t[1:], t[0], w0, PRODUCTS, model, DRAG)]) + rng.normal(0, 0.01, (80, 3))
        used = np.ones(80, dtype=bool)
        used[rng.integers(0, 80, 6)] = False

        def res(w):
            return (np.vstack([w, simulate_rates(t[1:], t[0], w, PRODUCTS, model, DRAG)]) - wm)[used].ravel()

        guess = w0 + rng.normal(0, 0.5, 3)
        ref = least_squares(res, guess, method="lm", xtol=1e-12, ftol=1e-12).x
        ours = initial_rate(t, wm, used, guess, PRODUCTS, model, DRAG)
        assert 0.5 * np.sum(res(ours) ** 2) <= 0.5 * np.sum(res(ref) ** 2) * (1 + 1e-9)
        assert np.allclose(ours, ref, atol=1e-7)
