"""The edge's local fit without least_squares' wrapping (edges.levenberg_marquardt) lands on
least_squares' own minimum to the bit, and fails where it fails."""

import numpy as np
import pytest
from scipy.optimize import least_squares

from tumble.throws.fitting.dynamics import rates_and_jacobian, rotation_matrix, simulate_rates, turn_directions
from tumble.throws.fitting.edges import levenberg_marquardt


def _problem(seed, drag_model):
    """A flight's launch rate and its body's axes turned, fitted to noisy rates (as _local_edge)."""
    rng = np.random.default_rng(seed)
    inertia = np.diag(np.sort(rng.uniform(0.2, 1.0, 3)))
    drag = rng.uniform(0.0, 0.01, 3)
    t = np.cumsum(np.full(30, 0.01) + 1e-4 * rng.standard_normal(30))
    w0 = rng.normal(0, 12, 3)
    r = rotation_matrix(np.radians(1.0) * rng.standard_normal(3))
    truth = np.vstack((w0, simulate_rates(t[1:], t[0], w0, r @ inertia @ r.T, drag_model, drag)))
    measured = truth + 0.01 * rng.standard_normal(truth.shape)

    def turned(x):
        q = rotation_matrix(x[3:])
        return q @ inertia @ q.T

    def fun(x):
        model = np.vstack((x[:3], simulate_rates(t[1:], t[0], x[:3], turned(x), drag_model, drag)))
        return (model - measured).ravel()

    def jac(x):
        body = turned(x)
        _, sens = rates_and_jacobian(t, x[:3], body, drag_model, drag, turn_directions(x[3:], body))
        return sens.reshape(-1, sens.shape[2])

    return fun, jac, np.concatenate((measured[0] + 0.05, np.zeros(3)))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("drag_model", ["quadratic", "linear", "none"])
def test_the_same_minimum_as_least_squares_to_the_bit(seed, drag_model):
    fun, jac, x0 = _problem(seed, drag_model)
    for tol in (1e-10, 1e-8):
        want = least_squares(fun, x0, jac=jac, method="lm", xtol=tol, ftol=tol).x
        got = levenberg_marquardt(fun, jac, x0, xtol=tol, ftol=tol)
        assert got.tobytes() == want.tobytes()


def test_the_same_errors_as_least_squares():
    fun, jac, x0 = _problem(0, "quadratic")
    bad = x0.copy()
    bad[0] = np.nan
    with pytest.raises(ValueError, match="outside of provided bounds"):
        least_squares(fun, bad, jac=jac, method="lm")
    with pytest.raises(ValueError, match="outside of provided bounds"):
        levenberg_marquardt(fun, jac, bad)
    blown = (lambda x: fun(x) * np.inf, jac, x0)  # residuals not finite at a finite start
    with pytest.raises(ValueError, match="not finite in the initial point"):
        least_squares(blown[0], blown[2], jac=blown[1], method="lm")
    with pytest.raises(ValueError, match="not finite in the initial point"):
        levenberg_marquardt(*blown)
    short = (lambda x: x[:2] - 1.0, lambda x: np.eye(3)[:2], np.zeros(3))
    with pytest.raises(ValueError, match="less than the number of variables"):
        least_squares(short[0], short[2], jac=short[1], method="lm")
    with pytest.raises(ValueError, match="less than the number of variables"):
        levenberg_marquardt(*short)
