"""An engine's run scored against Tumble's reference: orientation error, drifts, separatrix, flips.

The reference is the closed-form torque-free solution (:class:`app.physics.reference.ExactReference`,
gravity moving only the centre of mass), evaluated at the run's own sample times; where the closed
form does not apply, a DOP853 run at rtol 1e-12 (``reference == "dop853"``).

What decides when a body near its intermediate axis flips is its distance from the separatrix,
D = |L|^2 - 2 E I2 (Landau and Lifshitz, *Mechanics*, section 37: the polhode crosses over the
intermediate axis where D changes sign, and the flip period grows like log 1/|D|); a scheme may
hold E yet change D many times over, so the audit reports D(T)/D(0) beside the drifts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..physics import diagnostics, quaternion as quat
from ..physics.errors import ParameterError
from ..physics.integrators import check_exact_applies

#: tolerances of the DOP853 reference where the closed form does not apply
REFERENCE_RTOL = 1e-12
REFERENCE_ATOL = 1e-14


@dataclass(frozen=True)
class Reference:
    """The reference at some times: ``kind`` "exact" or "dop853"; ``c`` (world), ``q`` (body to
    world), ``w`` (body frame)."""

    kind: str
    t: np.ndarray
    c: np.ndarray
    q: np.ndarray
    w: np.ndarray


def reference_kind(sc) -> str:
    try:
        check_exact_applies(sc.model)
    except ParameterError:
        return "dop853"
    return "exact"


def reference(sc, times) -> Reference:
    """Tumble's reference of scenario ``sc`` at ``times`` (s from its start, increasing)."""
    times = np.asarray(times, dtype=float)
    if reference_kind(sc) == "exact":
        from ..physics.reference import ExactReference

        c, q, w = ExactReference(sc.model, sc.initial_state).at(times)
        return Reference("exact", times, np.atleast_2d(c), np.atleast_2d(q), np.atleast_2d(w))
    return _dop853(sc, times)


def _dop853(sc, times) -> Reference:
    from scipy.integrate import solve_ivp

    from ..physics.compiled import jit

    model = sc.model
    s0 = sc.initial_state
    rows0 = model.to_rows(s0.c, s0.v, s0.q, s0.w)
    width = rows0.shape[1]
    deriv = jit.kernel("deriv_batch")

    def rhs(_t, y):
        return deriv(np.ascontiguousarray(y.reshape(1, width)), model.params, model.points, model.wforces).ravel()

    sol = solve_ivp(rhs, (float(times[0]), float(times[-1])), rows0.ravel(), method="DOP853", t_eval=times,
                    rtol=REFERENCE_RTOL, atol=REFERENCE_ATOL)
    if not sol.success:
        raise ParameterError("reference", "dop853", f"finish (it failed: {sol.message})")
    rows = sol.y.T.reshape(len(times), 1, width)
    c, _, q, w = model.from_rows(rows)
    return Reference("dop853", times, c[:, 0], quat.normalize(q[:, 0]), w[:, 0])


def separatrix_distance(inertia: np.ndarray, q: np.ndarray, w: np.ndarray) -> np.ndarray:
    """D = |L|^2 - 2 E I2 per sample: L, E from body-frame ``w`` and the tensor ``inertia``."""
    from ..physics.body import principal

    i2 = principal(inertia)[0][1]
    m = np.asarray(w) @ np.asarray(inertia).T
    energy = 0.5 * np.sum(np.asarray(w) * m, axis=-1)
    return np.sum(m * m, axis=-1) - 2.0 * energy * i2


def sign_changes(t: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Times where ``s`` changes sign, located by linear interpolation between samples (an
    exact zero carries the previous sign, so it counts once)."""
    sign = np.sign(np.asarray(s, dtype=float))
    nonzero = np.flatnonzero(sign)
    if len(nonzero) == 0:
        return np.empty(0)
    # carry the last non-zero sign forward through exact zeros
    filled = sign[nonzero[np.maximum(np.searchsorted(nonzero, np.arange(len(sign)), side="right") - 1, 0)]]
    idx = np.flatnonzero(filled[1:] * filled[:-1] < 0)
    s0, s1 = s[idx], s[idx + 1]
    frac = np.where(s1 != s0, s0 / (s0 - s1), 0.0)
    return t[idx] + frac * (t[idx + 1] - t[idx])


def intermediate_omega(body, w) -> np.ndarray:
    """omega's body-frame component along the intermediate principal axis."""
    return diagnostics.intermediate_component(body, w)


def _drift(x: np.ndarray) -> float:
    return float((x[-1] - x[0]) / x[0]) if x[0] != 0 else float(x[-1] - x[0])


def series(body, ref: Reference, q: np.ndarray, w: np.ndarray | None, c: np.ndarray | None) -> dict:
    """Per-sample arrays of a run: orientation_error (rad), omega2, omega2_reference,
    separatrix_ratio (None where the run has no omega), com_error."""
    err = quat.angle_between(ref.q, q)
    out = {"orientation_error": err, "omega2_reference": intermediate_omega(body, ref.w),
           "omega2": None, "separatrix_ratio": None, "com_error": None}
    if w is not None:
        out["omega2"] = intermediate_omega(body, w)
        d = separatrix_distance(body.inertia, q, w)
        out["separatrix_ratio"] = d / d[0] if d[0] != 0 else None
    if c is not None:
        out["com_error"] = np.linalg.norm(np.asarray(c) - ref.c, axis=-1)
    return out


def figures(body, ref: Reference, t, q, w, c) -> tuple[dict, dict]:
    """(the figures of one run as ``--json`` names them, its per-sample :func:`series`)."""
    t = np.asarray(t, dtype=float)
    s = series(body, ref, q, w, c)
    out = {"max_orientation_error": float(np.max(s["orientation_error"])),
           "final_L_drift": None, "final_E_drift": None, "separatrix_ratio": None,
           "flips": None, "flips_reference": sign_changes(t, s["omega2_reference"]).tolist(),
           "com_error": None if s["com_error"] is None else float(np.max(s["com_error"]))}
    if w is not None:
        # |L| is the same in either frame: |I w| in the body's, no rotation of every sample needed
        L = np.linalg.norm(diagnostics.angular_momentum_body(body, w), axis=-1)
        E = diagnostics.rotational_energy(body, w)
        ratio = s["separatrix_ratio"]  # D / D(0) per sample, None where D(0) = 0
        out["final_L_drift"] = _drift(L)
        out["final_E_drift"] = _drift(E)
        out["separatrix_ratio"] = float(ratio[-1]) if ratio is not None and math.isfinite(ratio[-1]) else None
        out["flips"] = sign_changes(t, s["omega2"]).tolist()
    return out, s


def nothing(body, ref: Reference, n: int) -> tuple[dict, dict]:
    """The figures and series of a run scored as nothing (see ``audit.score_run``): every figure
    None, the orientation error NaN at the run's ``n`` samples (a plot draws nothing of it), the
    reference's flips kept."""
    omega2_ref = intermediate_omega(body, ref.w)
    out = {"max_orientation_error": None, "final_L_drift": None, "final_E_drift": None, "separatrix_ratio": None,
           "flips": None, "flips_reference": sign_changes(ref.t, omega2_ref).tolist(), "com_error": None}
    series = {"orientation_error": np.full(n, np.nan), "omega2_reference": omega2_ref, "omega2": None,
              "separatrix_ratio": None, "com_error": None}
    return out, series


def match_flips(got, want, tolerance: float) -> tuple[list[int], list[float], list[float]]:
    """Each reference flip (``want``, increasing) matched, in order, to the nearest run flip
    (``got``, increasing) not yet matched within ``tolerance``: (the indices of the run flips
    matched, the reference flips missed, the shifts run - reference of the matches).

    A merge of the two sorted lists: the nearest candidate is found by bisection, and the nearest
    free one on either side through "next free" links shortened as they are followed (a
    union-find), so the whole takes about (len(got) + len(want)) log len(got), never their
    product (400,000 run flips against a few reference ones took minutes when each reference
    flip looked at every run flip)."""
    import bisect

    got = [float(g) for g in got]
    n = len(got)
    # left[i]: a link towards the nearest free index <= i (-1: none); right[i] towards >= i (n: none)
    left, right = list(range(n)), list(range(n))

    def find(links, i, stop):
        root = i
        while root != stop and links[root] != root:
            root = links[root]
        while i != stop and links[i] != i:  # shorten every link followed
            links[i], i = root, links[i]
        return root

    matched, missed, shifts = [], [], []
    for f in want:
        f = float(f)
        p = bisect.bisect_left(got, f)
        a = find(left, p - 1, -1) if p > 0 else -1
        b = find(right, p, n) if p < n else n
        options = [k for k in (a, b) if 0 <= k < n and abs(got[k] - f) <= tolerance]
        if not options:
            missed.append(f)
            continue
        k = min(options, key=lambda k: (abs(got[k] - f), k))
        matched.append(k)
        shifts.append(got[k] - f)
        left[k] = k - 1 if k > 0 else -1
        right[k] = k + 1 if k + 1 < n else n
    return matched, missed, shifts


def flip_words(flips, reference_flips, tolerance: float) -> str:
    """Which reference flips a run missed and which it added, in words ("all 3 flips",
    "missed 2 of 3 flips (at 6.4, 9.6 s)", "added 1 flip (at 12.1 s)")."""
    if flips is None:
        return "no omega"
    got, want = list(flips), list(reference_flips)
    matched, missed, shifts = match_flips(got, want, tolerance)
    matched_run = set(matched)
    added = [g for k, g in enumerate(got) if k not in matched_run]
    at = lambda xs: ", ".join(f"{x:.3g}" for x in xs[:4]) + (", ..." if len(xs) > 4 else "")  # noqa: E731
    words = []
    if missed:
        words.append(f"missed {len(missed)} of {len(want)} (at {at(missed)} s)")
    if added:
        words.append(f"added {len(added)} (at {at(added)} s)")
    if shifts:
        worst = max(shifts, key=abs)
        n = len(shifts)
        if missed or added:
            what = f"{n} flip{'s' if n != 1 else ''} matched"
        else:
            what = f"all {n} flips" if n > 1 else "the flip"
        words.append(f"{what} {abs(worst):.2g} s {'late' if worst > 0 else 'early'}{' at most' if n > 1 else ''}")
    if not words:
        return "no flips, as the reference"
    return "; ".join(words)
