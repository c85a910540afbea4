"""The run sampled for a glTF export's keys, and the keys chosen from it (:mod:`app.export.gltf`).

Keys are chosen adaptively: the run is sampled every :data:`CANDIDATE_INTERVAL_S` (and at each
edge of a slowed window, where the animation's clock changes its rate), and from each key the
next is the farthest sample whose slerp (glTF's LINEAR rotation) stays within the budget at every
sample between. Between two samples the slerp's error is bounded by ``d^2 max|dw/dt| / 8``
(``d`` their spacing, ``w`` the body-frame angular velocity: the rotation vector's quadratic term,
the next order adding a factor ``1 + |w| d``), which the budget leaves room for. The centre's
keys are chosen the same way for linear interpolation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..physics import diagnostics
from ..physics import quaternion as quat
from ..physics.errors import ParameterError
from ..physics.integrators import simulate
from ..simulation.worker import RECORD_INTERVAL_S
from .settings import SPAN_SLACK

#: slerp between two keys stays this close to the run (rad), and linear interpolation of the
#: centre this close in units of the body's radius (the rotation's error at the body's edge)
KEY_ERROR_RAD = 1e-3
#: the share of KEY_ERROR_RAD the choice of keys spends at the samples; the rest covers the
#: error between samples and float32 rounding of the keys (about 1e-7)
KEY_BUDGET_SHARE = 0.5
#: the run is sampled this often for candidate keys (s of simulated time): at 2 ms the slerp
#: between two samples is within d^2 max|dw/dt| / 8 = 5e-7 max|dw/dt| rad
CANDIDATE_INTERVAL_S = 0.002
#: candidates simulated per call (the integrator keeps at most 1,000,000 samples)
CHUNK_SAMPLES = 250_000


def candidate_pieces(knots, interval: float = CANDIDATE_INTERVAL_S) -> list:
    """Samples per piece between consecutive ``knots``: each piece evenly at most ``interval`` apart."""
    return [max(1, math.ceil((b - a) / interval * (1 - SPAN_SLACK))) for a, b in zip(knots[:-1], knots[1:])]


@dataclass(frozen=True)
class Samples:
    """The run at the candidate keys: simulated time ``t``, animation time ``tau``, centre ``c``
    (world, m), orientation ``q`` (w, x, y, z; body to world, signs made continuous), body-frame
    ``w``; ``knots``: the indices where the clock's rate changes (keys there are forced);
    ``flips``: the run's flip times from t = 0 (simulated s); ``L``: angular momentum at the start
    of the span (world)."""

    t: np.ndarray
    tau: np.ndarray
    c: np.ndarray
    q: np.ndarray
    w: np.ndarray
    knots: np.ndarray
    flips: np.ndarray
    L: np.ndarray


def _simulate(scenario, state, span: float, sample: float, progress=None):
    solver = scenario.solver
    return simulate(scenario.model, state, solver.integrator, min(solver.dt, span), span, sample=sample,
                    progress=progress, **solver.options)


def continuous_signs(q: np.ndarray) -> np.ndarray:
    """``q`` (n, 4) with each quaternion's sign chosen nearest the previous one (q and -q are one
    rotation; slerp between keys of opposite sign would take the long way)."""
    q = np.array(q, dtype=float)
    if len(q) < 2:
        return q
    flips = np.cumsum(np.einsum("ij,ij->i", q[1:], q[:-1]) < 0) % 2
    q[1:][flips == 1] *= -1
    return q


def sample_run(scenario, plan, progress=None) -> Samples:
    """Simulate ``scenario`` from its start to ``plan.end`` and sample the span on the candidate
    grid (:data:`CANDIDATE_INTERVAL_S`, each piece between ``plan.knots`` evenly).
    ``progress(fraction)`` rises to 1. Raises :class:`~app.physics.errors.DivergenceError`."""
    body = scenario.rigid_body
    state = scenario.initial_state
    total = plan.end
    t_before = np.empty(0)
    w_before = np.empty((0, 3))

    def part(t0, span):
        return None if progress is None else (lambda f: progress(min(1.0, (t0 + span * f) / total)))

    if plan.start > 0:  # the run before the span, on the window's grid: its flips count
        k0 = max(1, math.ceil(plan.start / RECORD_INTERVAL_S))
        before = _simulate(scenario, state, plan.start, plan.start / k0, part(0.0, plan.start))
        t_before, w_before = before.t[:-1], before.w[:-1]
        state = before.state(-1)
    parts, knots = [], [0]
    for (a, b), n in zip(zip(plan.knots[:-1], plan.knots[1:]), candidate_pieces(plan.knots)):
        sample = (b - a) / n
        done = 0
        while done < n:
            m = min(CHUNK_SAMPLES, n - done)
            span = m * sample if done + m < n else (b - a) - done * sample
            traj = _simulate(scenario, state, span, span / m, part(a + done * sample, span))
            if len(traj.t) != m + 1:  # pragma: no cover - guards the sampling arithmetic
                raise RuntimeError(f"glTF sampling: {len(traj.t)} samples, expected {m + 1}")
            parts.append(traj if not parts else traj.select(slice(1, None)))
            state = traj.state(-1)
            done += m
        knots.append(knots[-1] + n)
    t = np.concatenate([p.t for p in parts])
    c = np.concatenate([p.c for p in parts])
    q = continuous_signs(quat.normalize(np.concatenate([p.q for p in parts])))
    w = np.concatenate([p.w for p in parts])
    if progress is not None:
        progress(1.0)
    flips = diagnostics.flip_times(body, np.concatenate([t_before, t]), np.concatenate([w_before, w]))
    s0 = None if parts[0].s is None else parts[0].s[0]  # a damper sphere's rate: its momentum counts
    L = diagnostics.angular_momentum(body, parts[0].q[0], parts[0].w[0], s0)
    return Samples(t=t, tau=np.asarray(plan.gltf_time(t), dtype=float), c=c, q=q, w=w,
                   knots=np.asarray(knots), flips=np.asarray(flips, dtype=float), L=np.asarray(L, dtype=float))


# ------------------------------------------------------------------------------------- the keys


def _greedy(lo: int, hi: int, fits, guess: int = 1) -> list:
    """Indices from ``lo`` to ``hi`` (both kept): from each, the farthest next one for which
    ``fits(i, j)`` holds (``fits(i, i + 1)`` is taken as true). Each search starts from the last
    interval's length (``guess`` for the first), doubles while it fits, then halves."""
    keys = [lo]
    i = lo
    while i < hi:
        j = min(i + max(guess, 1), hi)
        if fits(i, j):
            good, bad = j, None
            while good < hi:  # double while it fits
                j = min(i + 2 * (good - i), hi)
                if not fits(i, j):
                    bad = j
                    break
                good = j
        else:
            good, bad = i + 1, j
        if bad is not None:  # halve between the last that fits and the first that does not
            while bad - good > 1:
                mid = (good + bad) // 2
                if fits(i, mid):
                    good = mid
                else:
                    bad = mid
        keys.append(good)
        guess = good - i
        i = good
    return keys


def _between(tau: np.ndarray, i: int, j: int) -> np.ndarray:
    return (tau[i + 1:j] - tau[i]) / (tau[j] - tau[i])


def rotation_keys(samples: Samples, budget: float) -> np.ndarray:
    """Indices of the rotation keys: slerp between consecutive ones within ``budget`` (rad) of
    every sample between, keys at every knot.

    The slerp from unit ``q_i`` to ``q_j`` (glTF's LINEAR rotation, the shorter way) at fraction
    ``s`` is ``(sin((1 - s) theta) q_i + sin(s theta) q_j) / sin theta`` with ``cos theta = q_i . q_j``;
    it is within ``budget`` of a sample ``q_k`` when ``|slerp . q_k| >= cos(budget / 2)``, and both
    dot products with ``q_k`` are all that takes."""
    q, tau = samples.q, samples.tau
    least = math.cos(budget / 2.0)

    def fits(i, j):
        d = float(np.dot(q[i], q[j]))
        if d <= 0.0:  # slerp would take the other, shorter way
            return False
        if j - i < 2:
            return True
        s = _between(tau, i, j)
        inner = q[i + 1:j]
        di, dj = inner @ q[i], inner @ q[j]
        theta = math.acos(min(d, 1.0))
        if theta < 1e-6:  # nearly equal keys: slerp is the normalised linear blend, to theta^2
            a, b = 1.0 - s, s
            norm = np.sqrt(a * a + b * b + 2.0 * a * b * d)
            dots = (a * di + b * dj) / norm
        else:
            dots = (np.sin((1.0 - s) * theta) * di + np.sin(s * theta) * dj) / math.sin(theta)
        return float(np.min(np.abs(dots))) >= least

    return _keys(samples.knots, fits)


def translation_keys(samples: Samples, budget: float) -> np.ndarray:
    """Indices of the centre's keys: linear interpolation within ``budget`` (m) of every sample between."""
    c, tau = samples.c, samples.tau

    def fits(i, j):
        if j - i < 2:
            return True
        s = _between(tau, i, j)[:, None]
        between = (1 - s) * c[i] + s * c[j]
        return float(np.max(np.linalg.norm(between - c[i + 1:j], axis=1))) <= budget

    return _keys(samples.knots, fits)


def _keys(knots, fits) -> np.ndarray:
    out = [0]
    for lo, hi in zip(knots[:-1], knots[1:]):
        out += _greedy(int(lo), int(hi), fits, guess=out[-1] - out[-2] if len(out) > 1 else 1)[1:]
    return np.asarray(out, dtype=int)


def between_samples_error(samples: Samples) -> float:
    """A bound on slerp's error between two neighbouring samples (rad): ``d^2 max|dw/dt| / 8``
    with the largest spacing ``d`` (s) and the angular acceleration from the samples' own
    differences, with the next order's ``(1 + |w| d)``."""
    if len(samples.t) < 2:
        return 0.0
    d = np.diff(samples.t)
    accel = np.linalg.norm(np.diff(samples.w, axis=0), axis=1) / d
    rate = float(np.max(np.linalg.norm(samples.w, axis=1)))
    h = float(np.max(d))
    return h * h * float(np.max(accel)) / 8.0 * (1.0 + rate * h)


@dataclass(frozen=True)
class Keys:
    """What :func:`choose_keys` settled: indices into the samples of the rotation keys and the
    centre's (empty when it does not move), and the error bounds they keep (rad; m)."""

    rotation: np.ndarray
    translation: np.ndarray
    rotation_error: float
    translation_error: float
    radius: float = 1.0
    moves: bool = False


def choose_keys(samples: Samples, radius: float) -> Keys:
    """The fewest keys found greedily whose interpolation stays within :data:`KEY_ERROR_RAD`
    of the run (the centre within ``KEY_ERROR_RAD * radius`` m), the error between samples
    included (:func:`between_samples_error`)."""
    between = between_samples_error(samples)
    budget = KEY_ERROR_RAD * KEY_BUDGET_SHARE
    if between > KEY_ERROR_RAD - budget:  # pragma: no cover - a body past ~1000 rad/s^2
        raise ParameterError("initial.angular_velocity", "its run",
                             f"keep the slerp between {CANDIDATE_INTERVAL_S * 1e3:g} ms samples within "
                             f"{KEY_ERROR_RAD - budget:g} rad (here up to {between:.3g} rad: a faster tumble "
                             "than a glTF export samples)")
    rotation = rotation_keys(samples, budget)
    moves = bool(np.max(np.linalg.norm(samples.c - samples.c[0], axis=1)) > 1e-9 * max(radius, 1e-300))
    translation = np.empty(0, dtype=int)
    translation_error = 0.0
    if moves:
        d = float(np.max(np.diff(samples.t))) if len(samples.t) > 1 else 0.0
        cd = samples.c
        accel = 0.0
        if len(cd) > 2:
            dt = np.diff(samples.t)
            v = np.diff(cd, axis=0) / dt[:, None]
            accel = float(np.max(np.linalg.norm(np.diff(v, axis=0), axis=1) / dt[1:]))
        translation_error = d * d * accel / 8.0
        translation = translation_keys(samples, max(KEY_ERROR_RAD * radius * KEY_BUDGET_SHARE, 0.0))
    return Keys(rotation=rotation, translation=translation, rotation_error=budget + between,
                translation_error=KEY_ERROR_RAD * radius * KEY_BUDGET_SHARE + translation_error,
                radius=radius, moves=moves)
