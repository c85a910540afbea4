"""Orientation from sampled body rates (a gyroscope's): a fourth-order commutator-free Lie-group integrator.

A body turning at the body-frame rate ``w(t)`` obeys ``q' = q ⊗ (0, w/2)`` (body to world).
Only samples ``w_k`` at stamps ``t_k`` (possibly irregular) are known. Between two stamps the
rate is the cubic through the four nearest samples of the run (Lagrange on the actual stamps;
one-sided at the run's ends, so nothing outside it is read), and each step is the
commutator-free exponential of order four with two Gauss nodes (Blanes & Moan, "Fourth- and
sixth-order commutator-free Magnus integrators for linear and non-linear dynamical systems",
Appl. Numer. Math. 56 (2006) 1519; Celledoni, Marthinsen & Owren, Future Gener.
Comput. Syst. 19 (2003) 341)::

    q_{k+1} = q_k ⊗ exp(h (a w(t_k + c1 h) + b w(t_k + c2 h)) / 2)
                  ⊗ exp(h (b w(t_k + c1 h) + a w(t_k + c2 h)) / 2)

    c1,2 = 1/2 ∓ √3/6,   a = 1/4 + √3/6,   b = 1/4 − √3/6

Why order four: the two exponents sum to ``h (w1 + w2) / 2``, the two-node Gauss rule for
the Magnus term ``∫ A``; by Baker-Campbell-Hausdorff their product adds half their
commutator, ``(a² − b²)/2 [A1, A2] h² = (√3/12) h² [A1, A2]``, which is the second Magnus
term ``(√3/12) h² [A2, A1]`` of ``Y' = A Y`` mirrored for the right-multiplied ``q' = q A``
(the factor applied first, on the left, weights the earlier node more). What is left is
O(h⁵) per step. The cubic's error is O(h⁴) in the rate, O(h⁵) per step in the
orientation; both add up to O(h⁴) over a flight: halving the spacing divides the error by
about 16 (tests/test_replay_integrator.py measures it against the closed form). Every step
is a product of unit quaternions, so the orientation stays on the unit sphere without
renormalising.
"""

from __future__ import annotations

import math

import numpy as np

from . import quaternion as quat

#: the Gauss nodes of a step, as fractions of it
NODES = (0.5 - math.sqrt(3.0) / 6.0, 0.5 + math.sqrt(3.0) / 6.0)
#: the weights of the two exponentials: (a, b) for the first (applied first), (b, a) for the second
WEIGHT_NEAR, WEIGHT_FAR = 0.25 + math.sqrt(3.0) / 6.0, 0.25 - math.sqrt(3.0) / 6.0
#: samples the rate's interpolant runs through (a cubic)
STENCIL = 4


def rotation_quaternion(rotvec: np.ndarray) -> np.ndarray:
    """exp of a rotation vector (rad, along the axis): the unit quaternion turning by |rotvec|."""
    rotvec = np.asarray(rotvec, dtype=float)
    angle = np.linalg.norm(rotvec, axis=-1)
    half = 0.5 * angle
    # sin(x/2)/x, its series below 1e-4 rad (where 1 - x²/24 is exact to a double)
    scale = np.where(angle > 1e-4, np.sin(half) / np.where(angle > 1e-4, angle, 1.0), 0.5 - angle * angle / 48.0)
    return np.concatenate([np.cos(half)[..., None], scale[..., None] * rotvec], axis=-1)


def _stencil_starts(n: int, steps: np.ndarray) -> np.ndarray:
    """First sample of the interpolant of each step (the four around it, within the run)."""
    m = min(STENCIL, n)
    return np.clip(steps - (m // 2 - 1), 0, n - m)


def interpolate(t, w, times, steps=None) -> np.ndarray:
    """The rate at ``times`` from the cubic through the four samples nearest each one's step.

    ``steps[i]`` is the step (samples ``k``, ``k + 1``) holding ``times[i]`` (found if not
    given); fewer than four samples give the polynomial through all of them.
    """
    t = np.asarray(t, dtype=float)
    w = np.asarray(w, dtype=float)
    times = np.asarray(times, dtype=float)
    n = len(t)
    if n == 1:
        return np.repeat(w[:1], len(times), axis=0)
    if steps is None:
        steps = np.clip(np.searchsorted(t, times, side="right") - 1, 0, n - 2)
    m = min(STENCIL, n)
    first = _stencil_starts(n, np.asarray(steps))
    index = first[:, None] + np.arange(m)
    nodes = t[index]                                # (p, m)
    # scaled about the step's own start so that the products stay O(1)
    origin = t[np.asarray(steps)][:, None]
    span = np.maximum(nodes[:, -1] - nodes[:, 0], np.finfo(float).tiny)[:, None]
    x = (times[:, None] - origin) / span            # (p, 1)
    u = (nodes - origin) / span                     # (p, m)
    weights = np.ones_like(u)
    for j in range(m):
        for i in range(m):
            if i != j:
                weights[:, j] *= (x[:, 0] - u[:, i]) / (u[:, j] - u[:, i])
    return np.einsum("pm,pmc->pc", weights, w[index])


def step_quaternions(t, w, t_from, t_to, steps) -> np.ndarray:
    """The body-frame turn from ``t_from`` to ``t_to`` (each inside step ``steps``), one
    commutator-free step of order four over it."""
    h = np.asarray(t_to, dtype=float) - np.asarray(t_from, dtype=float)
    w1 = interpolate(t, w, t_from + NODES[0] * h, steps)
    w2 = interpolate(t, w, t_from + NODES[1] * h, steps)
    first = rotation_quaternion(h[:, None] * (WEIGHT_NEAR * w1 + WEIGHT_FAR * w2))
    second = rotation_quaternion(h[:, None] * (WEIGHT_FAR * w1 + WEIGHT_NEAR * w2))
    return quat.multiply(first, second)


def orientations(t, w, q0=(1.0, 0.0, 0.0, 0.0)) -> np.ndarray:
    """Orientation (body to world) at every stamp, from ``q0`` at ``t[0]``.

    Parameters
    ----------
    t : (n,) strictly increasing stamps (s)
    w : (n, 3) measured rates, body (sensor) frame (rad/s)
    q0 : the orientation at ``t[0]`` (default the identity: the world frame is the body's
        frame at the first stamp)

    Returns
    -------
    (n, 4) unit quaternions, scalar first
    """
    t, w = _checked(t, w)
    n = len(t)
    out = np.empty((n, 4))
    out[0] = quat.normalize(np.asarray(q0, dtype=float))
    if n == 1:
        return out
    steps = np.arange(n - 1)
    turns = step_quaternions(t, w, t[:-1], t[1:], steps)
    q = out[0]
    for k in range(n - 1):
        q = quat.multiply(q, turns[k])
        out[k + 1] = q
    return out


def orientations_at(t, w, q, times) -> np.ndarray:
    """Orientation at ``times`` (within ``t[0]`` .. ``t[-1]``) from the orientations ``q`` at the
    stamps (:func:`orientations`): one step of the same scheme from the stamp before each."""
    t, w = _checked(t, w)
    times = np.asarray(times, dtype=float)
    if len(t) == 1:
        return np.repeat(np.asarray(q, dtype=float)[:1], len(times), axis=0)
    steps = np.clip(np.searchsorted(t, times, side="right") - 1, 0, len(t) - 2)
    turns = step_quaternions(t, w, t[steps], times, steps)
    return quat.multiply(np.asarray(q, dtype=float)[steps], turns)


def _checked(t, w) -> tuple[np.ndarray, np.ndarray]:
    t = np.asarray(t, dtype=float)
    w = np.asarray(w, dtype=float)
    if t.ndim != 1 or len(t) < 1 or w.shape != (len(t), 3):
        raise ValueError(f"need stamps (n,) and rates (n, 3), got {t.shape} and {w.shape}")
    if len(t) > 1 and not np.all(np.diff(t) > 0):
        raise ValueError("the stamps must increase strictly")
    return t, w
