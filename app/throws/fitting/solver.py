"""The least-squares problem of a throw fit: parameters, residuals, one solve, standard errors.

Model: Euler's equations with drag in the sensor frame (:mod:`.dynamics`), ``J = R diag(j) R^T``
with ``R = exp([delta]x)`` (``delta`` a rotation vector, fitted only with ``axes = "fit"``).
Shared parameters: ``log j`` of two axes (the third, the largest at the start, is fixed: Euler's
equations do not change when J and the drag are scaled together, so only ratios are
observable), the drag coefficients (>= 0), ``delta``; per flight: the rate at its first stamp.
Residuals: integrated minus measured rate at every recorded, unclipped stamp, under a plain
or robust loss. The model's exact Jacobian comes from its variational equations
(:func:`.dynamics.propagate_flights_jac`), block-sparse (a flight's initial rate touches only its
own rows), and the joint fit's Levenberg-Marquardt steps solve that block-arrow system exactly
(:func:`block_lm`); a flight fitted alone goes to MINPACK's Levenberg-Marquardt.

Standard errors: the noise's ``s^2 (A^T A)^-1`` (e.g. Seber & Wild, *Nonlinear Regression*,
2.1) and the spread between flights, a cluster-robust ("sandwich") covariance over flights
with the flights' initial rates profiled out (the infinitesimal jackknife over flights;
Liang & Zeger 1986, Biometrika 73:13), whichever is larger, carried to the ratios by the
delta method.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.optimize import least_squares
from scipy.spatial.transform import Rotation

from ...physics.errors import ParameterError
from .dynamics import (DRAG_MODELS, H_MAX, drag_id, inverse3, propagate_flights, propagate_flights_jac,
                       turn_directions)


class FitCancelled(Exception):
    """The caller's cancel check said stop (raised between function evaluations)."""


#: most Jacobians per fit (:func:`block_lm`, and MINPACK's for a flight fitted alone). Drag
#: coefficients are bounded below by 0 (a negative one would feed the spin, and FIT.toml could
#: not hold it)
MAX_ITERATIONS = 200
#: the smallest row scale of a robust loss (scipy's: the machine epsilon)
EPS = np.finfo(float).eps


# ------------------------------------------------------------------ the model's parameters


@dataclass(frozen=True)
class Layout:
    """Where each parameter sits in the vector least_squares moves."""

    drag_model: str
    axes_mode: str
    fixed: int                   # the sensor-side axis whose log-moment is held at 0
    n_flights: int

    @property
    def n_drag(self) -> int:
        return 0 if self.drag_model == "none" else 3

    @property
    def n_rot(self) -> int:
        return 3 if self.axes_mode == "fit" else 0

    @property
    def n_shared(self) -> int:
        return 2 + self.n_drag + self.n_rot

    def unpack(self, x):
        """(j (3,), R (3, 3), drag (3,), w0s (F, 3)) of parameter vector ``x``."""
        logj = np.zeros(3)
        logj[[k for k in range(3) if k != self.fixed]] = x[0:2]
        k = 2
        drag = np.zeros(3)
        if self.n_drag:
            drag = np.asarray(x[k:k + 3])
            k += 3
        rot = np.eye(3)
        if self.n_rot:
            rot = Rotation.from_rotvec(x[k:k + 3]).as_matrix()
            k += 3
        return np.exp(logj), rot, drag, np.asarray(x[k:]).reshape(self.n_flights, 3)

    def pack(self, j, rotvec, drag, w0s):
        free = [k for k in range(3) if k != self.fixed]
        logj = np.log(np.asarray(j, dtype=float) / j[self.fixed])
        parts = [logj[free]]
        if self.n_drag:
            parts.append(np.asarray(drag, dtype=float) / j[self.fixed])
        if self.n_rot:
            parts.append(np.asarray(rotvec, dtype=float))
        parts.append(np.asarray(w0s, dtype=float).ravel())
        return np.concatenate(parts)


def principal_summary(j, rot, drag):
    """(moments ascending over the largest, axes as columns, drag over the largest)."""
    order = np.argsort(j)
    top = float(j.max())
    axes = rot[:, order].copy()
    for k in range(3):  # each axis points along its dominant sensor component
        if axes[np.argmax(np.abs(axes[:, k])), k] < 0:
            axes[:, k] = -axes[:, k]
    if np.linalg.det(axes) < 0:
        axes[:, 2] = -axes[:, 2]
    return j[order] / top, axes, np.asarray(drag) / top


def initial_axes(inertia, axes_mode):
    """(j, rotation vector) to start from: the guess's diagonal, or its principal axes matched
    to the nearest sensor axes (``axes = "fit"``)."""
    if axes_mode == "sensor":
        return np.maximum(np.diag(inertia), 1e-3 * np.max(np.diag(inertia))), np.zeros(3)
    moments, vecs = np.linalg.eigh(inertia)
    perm = np.zeros(3, dtype=int)
    free = [0, 1, 2]
    for col in np.argsort(-np.max(np.abs(vecs), axis=0)):  # the clearest axes pick first
        row = max(free, key=lambda r: abs(vecs[r, col]))
        perm[row] = col
        free.remove(row)
    rot = vecs[:, perm]
    rot = rot * np.sign(np.diag(rot))[None, :]
    if np.linalg.det(rot) < 0:
        return np.maximum(np.diag(inertia), 1e-3 * np.max(np.diag(inertia))), np.zeros(3)
    return moments[perm], Rotation.from_matrix(rot).as_rotvec()


# ------------------------------------------------------------------ the fit itself


@dataclass
class FlightData:
    """Flights laid end to end for the compiled integrator."""

    t: np.ndarray
    w: np.ndarray
    used: np.ndarray
    offsets: np.ndarray

    @staticmethod
    def of(recordings, flights, horizon=None):
        """The flights' stamps, rates and unclipped masks; with ``horizon`` (s) only that much
        of each flight from its start."""
        ts, ws, us, offsets = [], [], [], [0]
        for f in flights:
            rec = recordings[f.recording]
            i1 = f.i1 if horizon is None else min(f.i1, int(np.searchsorted(rec.t, rec.t[f.i0] + horizon, "right")))
            ts.append(rec.t[f.i0:i1])
            ws.append(rec.w[f.i0:i1])
            us.append(~rec.saturated[f.i0:i1])
            offsets.append(offsets[-1] + i1 - f.i0)
        return FlightData(np.ascontiguousarray(np.concatenate(ts)), np.concatenate(ws), np.concatenate(us),
                     np.asarray(offsets, dtype=np.int64))


def _row_flights(data: FlightData) -> np.ndarray:
    """The flight of each residual row (three per unclipped sample)."""
    return np.repeat(np.repeat(np.arange(len(data.offsets) - 1), np.diff(data.offsets))[data.used], 3)


def _jacobian_of(data: FlightData, layout: Layout, model_id: int):
    """(x -> (model, the residuals' Jacobian as rows of its nonzero blocks: each row's shared
    columns, then its flight's three initial-rate columns), those blocks -> the CSR matrix)."""
    flight_of_sample = np.repeat(np.arange(len(data.offsets) - 1), np.diff(data.offsets))[data.used]
    n_rows = 3 * len(flight_of_sample)
    k = layout.n_shared
    per_row = k + 3
    indptr = np.arange(0, n_rows * per_row + 1, per_row)
    indices = np.empty((n_rows, per_row), dtype=np.int64)
    indices[:, :k] = np.arange(k)
    indices[:, k:] = k + 3 * np.repeat(flight_of_sample, 3)[:, None] + np.arange(3)
    indices = indices.ravel()
    free = [a for a in range(3) if a != layout.fixed]
    n_cols = 3 + 2 + layout.n_rot + (3 if layout.n_drag else 0)
    out = np.empty_like(data.w)
    sens = np.empty((len(data.t), 3, n_cols))
    n_x = k + 3 * layout.n_flights

    def values(x):
        """(model rates (all stamps), d residual / d(shared, own flight's rate) (rows, k + 3))."""
        j, rot, c, w_starts = layout.unpack(x)
        jm = rot @ np.diag(j) @ rot.T
        # d J / d log j_a = j_a r_a r_a^T; d J / d rotvec_i: the turn's directions
        dirs = [j[a] * np.outer(rot[:, a], rot[:, a]) for a in free]
        if layout.n_rot:
            dirs += list(turn_directions(x[2 + layout.n_drag:2 + layout.n_drag + 3], jm))
        try:
            propagate_flights_jac(data.t, data.offsets, np.ascontiguousarray(w_starts), jm, inverse3(jm), model_id,
                                  np.ascontiguousarray(c), H_MAX, np.ascontiguousarray(np.array(dirs)), n_cols, out,
                                  sens)
            s = sens[data.used]                                   # (samples, 3, n_cols)
        except np.linalg.LinAlgError:
            s = np.zeros((len(flight_of_sample), 3, n_cols))
        d0 = 3 + 2 + layout.n_rot
        shared = [s[:, :, 3:5]]                                   # log j
        if layout.n_drag:
            shared.append(s[:, :, d0:d0 + 3])
        if layout.n_rot:
            shared.append(s[:, :, 5:5 + 3])
        v = np.concatenate(shared + [s[:, :, 0:3]], axis=2).reshape(n_rows, per_row)
        return out, np.where(np.isfinite(v), v, 0.0)

    def as_matrix(v):
        return sparse.csr_matrix((v.ravel(), indices, indptr), shape=(n_rows, n_x))

    return values, as_matrix


def _one_blas_thread():
    """BLAS on one thread: lsmr's thousands of dot products of 30000-long vectors each wake
    OpenBLAS's thread pool, and on a busy 2-core machine that made the fit of 100 flights
    3.5x slower (measured: 33 s against 9.4 s for the first round)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a dependency; without it only speed suffers
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


@dataclass
class Solution:
    """One least-squares fit: the parameters and what the report and the standard errors need."""

    layout: Layout
    x: np.ndarray
    cov: np.ndarray              # covariance of the shared part of x from the noise alone (s^2 (A^T A)^-1)
    data: FlightData
    w_model: np.ndarray
    cost: float
    jac: object                  # the (robust-)weighted Jacobian at x
    weighted: np.ndarray         # residuals weighted as the loss weights them
    row_flight: np.ndarray       # flight of each residual row

    def body(self):
        """(inertia 3x3 sensor frame, drag) of the shared parameters."""
        j, rot, c, _ = self.layout.unpack(self.x)
        return rot @ np.diag(j) @ rot.T, c

    @property
    def w0s(self) -> np.ndarray:
        return self.layout.unpack(self.x)[3]


def _loss_weights(fun, loss, f_scale):
    """sqrt(rho'(z)) of scipy's robust losses at the residuals (1 for the plain loss)."""
    if loss == "linear":
        return np.ones_like(fun)
    z = (fun / f_scale) ** 2
    if loss == "soft_l1":
        return (1 + z) ** -0.25
    if loss == "cauchy":
        return (1 + z) ** -0.5
    if loss == "huber":
        return np.where(z <= 1, 1.0, z ** -0.25)
    return np.ones_like(fun)  # pragma: no cover - only the losses above are used


def solve(recordings, flights, inertia, drag_model, drag, axes_mode, w0s, cancel=None, horizon=None, ftol=1e-9,
          loss: str = "linear", f_scale: float = 1.0, fixed_axis: int | None = None, bounded: bool = True) -> Solution:
    """One least-squares fit of the shared body and each flight's initial rate. Drag
    coefficients are bounded below by 0 (a negative one would feed the spin); ``bounded =
    False`` (a flight fitted alone, for a start only) lifts that for MINPACK's faster
    Levenberg-Marquardt on the small dense problem."""
    if drag_model not in DRAG_MODELS:
        raise ParameterError("--drag", drag_model, "be one of " + ", ".join(DRAG_MODELS))
    data = FlightData.of(recordings, flights, horizon)
    j0, rotvec0 = initial_axes(inertia, axes_mode)
    layout = Layout(drag_model, axes_mode, int(np.argmax(j0)) if fixed_axis is None else fixed_axis, len(flights))
    n_res = 3 * int(data.used.sum())
    if n_res <= layout.n_shared + 3 * len(flights) + 3:
        raise ParameterError("recording", ", ".join(r.name for r in recordings),
                             f"hold enough unclipped samples in flight to fit (got {int(data.used.sum())})")
    x0 = layout.pack(j0, rotvec0, np.maximum(drag, 0.0), w0s)
    lower = np.full(len(x0), -np.inf)
    if layout.n_drag:
        lower[2:5] = 0.0
        x0[2:5] = np.maximum(x0[2:5], 0.0)
    model_id = drag_id(drag_model)
    out = np.empty_like(data.w)

    def model(x):
        j, rot, c, w_starts = layout.unpack(x)
        jm = rot @ np.diag(j) @ rot.T
        propagate_flights(data.t, data.offsets, np.ascontiguousarray(w_starts), jm, inverse3(jm), model_id,
                          np.ascontiguousarray(c), H_MAX, out)
        return out

    values, as_matrix = _jacobian_of(data, layout, model_id)

    def residuals(x):
        if cancel is not None and cancel():
            raise FitCancelled()
        try:
            m = model(x)
        except np.linalg.LinAlgError:  # a step to a singular inertia: as bad as it gets
            return np.full(n_res, 1e6)
        r = (m - data.w)[data.used].ravel()
        return np.where(np.isfinite(r), r, 1e6)

    row_flight = _row_flights(data)
    with _one_blas_thread(), np.errstate(all="ignore"):
        if not bounded and loss == "linear":
            res = least_squares(residuals, x0, jac=lambda x: as_matrix(values(x)[1]).toarray(), method="lm",
                                x_scale="jac", ftol=ftol, xtol=1e-10, gtol=1e-10,
                                max_nfev=MAX_ITERATIONS * (len(x0) + 1))
        else:
            res = block_lm(residuals, lambda x: values(x)[1], row_flight, layout, x0, lower, ftol, loss, f_scale,
                           as_matrix)
    a = res.jac
    weighted = res.fun * _loss_weights(res.fun, loss, f_scale)
    dof = max(len(res.fun) - len(res.x), 1)
    s2 = float(weighted @ weighted) / dof
    cov = _shared_covariance(a, layout) * s2
    w_model = model(res.x).copy()
    return Solution(layout, res.x, cov, data, w_model, float(res.cost), a, weighted, row_flight)


@dataclass
class BlockResult:
    """What :func:`block_lm` found (named as scipy's ``OptimizeResult`` of ``least_squares``)."""

    x: np.ndarray
    fun: np.ndarray              # residuals at x
    cost: float                  # 0.5 sum rho(f^2)
    jac: object                  # the Jacobian at x, scaled for the loss as scipy scales it (CSR)
    nfev: int
    njev: int


def _robust(f, loss, f_scale):
    """(rho(f^2), rho'(f^2), rho''(f^2)) of scipy's losses with its ``f_scale`` (``least_squares``'s
    own definitions: ``rho`` scaled by f_scale^2, ``rho''`` by 1 / f_scale^2)."""
    z = (f / f_scale) ** 2
    if loss == "linear":
        return z * f_scale ** 2, np.ones_like(z), np.zeros_like(z)
    if loss == "soft_l1":
        t = 1 + z
        return 2 * (t ** 0.5 - 1) * f_scale ** 2, t ** -0.5, -0.5 * t ** -1.5 / f_scale ** 2
    if loss == "cauchy":
        t = 1 + z
        return np.log1p(z) * f_scale ** 2, 1 / t, -1 / t ** 2 / f_scale ** 2
    if loss == "huber":
        small = z <= 1
        rho0 = np.where(small, z, 2 * np.sqrt(z) - 1) * f_scale ** 2
        rho1 = np.where(small, 1.0, np.sqrt(np.maximum(z, 1e-300)) ** -1)
        rho2 = np.where(small, 0.0, -0.5 * np.maximum(z, 1e-300) ** -1.5) / f_scale ** 2
        return rho0, rho1, rho2
    raise ValueError(f"loss must be linear, soft_l1, cauchy or huber, got {loss}")  # pragma: no cover


#: block_lm: the damping's start (relative to the normal matrix's diagonal, as Marquardt
#: scales it) and its floor
LM_DAMPING_START = 1e-3
LM_DAMPING_MIN = 1e-12


def block_lm(residuals, jacobian_blocks, row_flight, layout: Layout, x0, lower, ftol, loss, f_scale, as_matrix,
             xtol: float = 1e-10, gtol: float = 1e-10, max_iterations: int = MAX_ITERATIONS) -> BlockResult:
    """Levenberg-Marquardt for the fit's block-arrow problem: the shared parameters couple
    every flight, each flight's initial rate only its own rows, so the damped normal equations
    are solved exactly by eliminating each flight's 3x3 block (a Schur complement; e.g. Triggs et
    al., *Bundle adjustment: a modern synthesis*, 2000, section 6.1) instead of iteratively.

    The robust loss enters as scipy's ``least_squares`` puts it: the Gauss-Newton model of
    0.5 sum rho(f_i^2) with rows scaled by sqrt(rho' + 2 rho'' f^2) (Triggs et al., section
    4.3); the damping is Marquardt's (the normal matrix's diagonal), updated by the gain ratio
    (Nielsen 1999; Madsen, Nielsen & Tingleff, *Methods for non-linear least squares problems*,
    2004, 3.2); a step stops at the lower bounds, and a parameter held at its bound by a
    gradient pointing out of the box is left out of the step. It stops as ``least_squares``
    does: the cost falling by less than ``ftol`` of itself on a step the model predicted well,
    a step below ``xtol`` of x, or the gradient below ``gtol``.
    """
    k = layout.n_shared
    n_f = layout.n_flights
    # rows are grouped by flight, in order: the first row of each
    starts = np.searchsorted(row_flight, np.arange(n_f))
    empty = np.diff(np.append(starts, len(row_flight))) == 0    # reduceat repeats a row there: zero it
    x = np.array(x0, dtype=float)
    f = residuals(x)
    rho = _robust(f, loss, f_scale)
    cost = 0.5 * float(np.sum(rho[0]))
    nfev, njev = 1, 0
    damping, nu = LM_DAMPING_START, 2.0
    blocks = None
    for _ in range(max_iterations):
        if blocks is None:
            blocks = jacobian_blocks(x)
            njev += 1
            scale = np.sqrt(np.maximum(rho[1] + 2 * rho[2] * f ** 2, EPS))
            js = blocks * scale[:, None]
            fs = f * rho[1] / scale
            # the normal equations' blocks
            a_ss = js[:, :k].T @ js[:, :k]
            outer_ww = np.einsum("ri,rj->rij", js[:, k:], js[:, k:])
            d_ww = np.add.reduceat(outer_ww, starts, axis=0)                        # (F, 3, 3)
            outer_sw = np.einsum("ri,rj->rij", js[:, :k], js[:, k:])
            b_sw = np.add.reduceat(outer_sw, starts, axis=0)                        # (F, k, 3)
            g_s = js[:, :k].T @ fs
            g_w = np.add.reduceat(js[:, k:] * fs[:, None], starts, axis=0)          # (F, 3)
            d_ww[empty], b_sw[empty], g_w[empty] = 0.0, 0.0, 0.0
            grad = np.concatenate((g_s, g_w.ravel()))
            diag = np.concatenate((np.diag(a_ss), np.einsum("fii->fi", d_ww).ravel()))
            diag = np.maximum(diag, EPS * max(float(diag.max()), 1.0))
            # parameters held at their bound by a gradient pointing out of the box
            held = (x <= lower) & (grad > 0)
            free_grad = np.where(held, 0.0, grad)
            if np.max(np.abs(free_grad)) < gtol:
                break
        lam = damping * diag
        a = a_ss + np.diag(lam[:k])
        d = d_ww + lam[k:].reshape(n_f, 3)[:, :, None] * np.eye(3)
        b = b_sw.copy()
        g = free_grad.copy()
        hs, hw = held[:k], held[k:].reshape(n_f, 3)
        if hs.any():
            a[hs, :] = 0.0
            a[:, hs] = 0.0
            a[hs, hs] = 1.0
            b[:, hs, :] = 0.0
        if hw.any():
            for fi, ci in zip(*np.nonzero(hw)):
                d[fi, ci, :] = 0.0
                d[fi, :, ci] = 0.0
                d[fi, ci, ci] = 1.0
                b[fi, :, ci] = 0.0
        try:
            d_inv_bt = np.linalg.solve(d, np.transpose(b, (0, 2, 1)))              # (F, 3, k)
            d_inv_g = np.linalg.solve(d, g[k:].reshape(n_f, 3, 1))[:, :, 0]       # (F, 3)
            schur = a - np.einsum("fki,fil->kl", b, d_inv_bt)
            rhs = -g[:k] + np.einsum("fki,fi->k", b, d_inv_g)
            p_s = np.linalg.solve(schur, rhs)
            p_w = -d_inv_g - np.einsum("fik,k->fi", d_inv_bt, p_s)
        except np.linalg.LinAlgError:
            damping *= nu
            nu *= 2
            continue
        step = np.concatenate((p_s, p_w.ravel()))
        step[held] = 0.0
        x_new = np.maximum(x + step, lower)
        step = x_new - x
        # the model's predicted fall of the cost
        jp = np.einsum("ri,ri->r", js[:, :k], np.broadcast_to(step[:k], (len(js), k)))
        jp += np.einsum("ri,ri->r", js[:, k:], step[k:].reshape(n_f, 3)[row_flight])
        predicted = -(grad @ step + 0.5 * float(jp @ jp))
        if np.linalg.norm(step) < xtol * (xtol + np.linalg.norm(x)):
            break
        f_new = residuals(x_new)
        nfev += 1
        rho_new = _robust(f_new, loss, f_scale)
        cost_new = 0.5 * float(np.sum(rho_new[0]))
        actual = cost - cost_new
        if np.isfinite(cost_new) and actual > 0 and predicted > 0:
            ratio = actual / predicted
            x, f, rho, cost_old, cost = x_new, f_new, rho_new, cost, cost_new
            blocks = None
            damping = max(damping * max(1 / 3, 1 - (2 * ratio - 1) ** 3), LM_DAMPING_MIN)
            nu = 2.0
            if actual < ftol * cost_old and ratio > 0.25:
                break
        else:
            damping *= nu
            nu *= 2
            if damping > 1e16:
                break
    if blocks is None:  # the last step was taken: its Jacobian for the covariance
        blocks = jacobian_blocks(x)
        njev += 1
    scale = np.sqrt(np.maximum(rho[1] + 2 * rho[2] * f ** 2, EPS))
    return BlockResult(x, f, cost, as_matrix(blocks * scale[:, None]), nfev, njev)


def _shared_covariance(a, layout: Layout) -> np.ndarray:
    """The shared parameters' block of (A^T A)^-1: the inverse of the Schur complement
    A_ss - sum_f A_sf A_ff^-1 A_fs, the flights' 3x3 blocks eliminated one by one (the whole
    inverse of a fit of 100 flights costs a hundred times more); infinite where singular."""
    k = layout.n_shared
    ata = a.T @ a
    ata = ata.toarray() if sparse.issparse(ata) else np.asarray(ata)
    reduced = ata[:k, :k].copy()
    try:
        for f in range(layout.n_flights):
            c = slice(k + 3 * f, k + 3 * f + 3)
            reduced -= ata[:k, c] @ np.linalg.solve(ata[c, c], ata[c, :k])
        return np.linalg.inv(reduced)
    except np.linalg.LinAlgError:
        return np.full((k, k), np.inf)


def solve_staged(recordings, flights, inertia, drag_model, drag, axes_mode, w0s, cancel=None, horizons=(None,),
                 loss="linear", f_scale=1.0) -> Solution:
    """:func:`solve` over growing horizons, each stage starting from the last one's answer.

    Near the intermediate axis a flight's rates depend on its initial rate ever more steeply
    with time (exponentially, between flips), so Gauss-Newton started far off can wander in
    the long valleys of the full flights; the first few tenths of a second are nearly linear
    in the parameters and bring the start close enough (continuation in the horizon).
    """
    sol = None
    for horizon in horizons:
        sol = solve(recordings, flights, inertia, drag_model, drag, axes_mode, w0s, cancel, horizon, loss=loss,
                    f_scale=f_scale)
        inertia, drag = sol.body()
        w0s = sol.w0s
    return sol


def _shared_outputs(layout, x):
    j, rot, c, _ = layout.unpack(x)
    moments, axes, drag = principal_summary(j, rot, c)
    return np.concatenate([moments, drag])


def _delta(layout, x, cov):
    """Standard errors of (moments ascending, drag) for covariance ``cov`` of the shared part."""
    k = layout.n_shared
    base = _shared_outputs(layout, x)
    grad = np.zeros((len(base), k))
    for i in range(k):
        step = 1e-6 * max(1.0, abs(x[i]))
        xp = x.copy()
        xp[i] += step
        grad[:, i] = (_shared_outputs(layout, xp) - base) / step
    if not np.all(np.isfinite(cov)):
        return np.full(len(base), np.inf)
    return np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", grad, cov, grad), 0.0))


def between_flights_covariance(sol: Solution) -> np.ndarray | None:
    """Cluster-robust covariance of the shared parameters over flights, the flights' own
    initial rates profiled out: I^-1 (sum_f u_f u_f^T) I^-1 F / (F - 1), with I the profiled
    information and u_f flight f's profiled score. None with fewer than 3 flights."""
    layout, k = sol.layout, sol.layout.n_shared
    n_f = layout.n_flights
    if n_f < 3:
        return None
    a = sparse.csr_matrix(sol.jac)
    info = np.zeros((k, k))
    scores = np.zeros((n_f, k))
    order = np.argsort(sol.row_flight, kind="stable")
    bounds = np.searchsorted(sol.row_flight[order], np.arange(n_f + 1))
    for f in range(n_f):
        rows = order[bounds[f]:bounds[f + 1]]
        if not len(rows):
            continue
        block = a[rows]
        own = block[:, k + 3 * f:k + 3 * f + 3].toarray()
        shared = block[:, :k].toarray()
        r = sol.weighted[rows]
        hww = own.T @ own
        try:
            proj = np.linalg.solve(hww, own.T @ shared)           # (3, k)
        except np.linalg.LinAlgError:
            continue
        reduced = shared - own @ proj
        info += reduced.T @ reduced
        scores[f] = reduced.T @ r
    try:
        inv = np.linalg.inv(info)
    except np.linalg.LinAlgError:
        return None
    return inv @ (scores.T @ scores) @ inv * (n_f / (n_f - 1))


def output_std(sol: Solution):
    """Standard errors of (moments ascending, drag): the larger of the noise's and the
    between-flights' (inflated by Student's t over the normal at F - 1 degrees of freedom,
    for the few flights a session has)."""
    from scipy.special import stdtrit

    layout, x = sol.layout, sol.x
    noise = _delta(layout, x, sol.cov)
    between = between_flights_covariance(sol)
    if between is None:
        return noise
    n_f = layout.n_flights
    factor = float(stdtrit(n_f - 1, 0.975) / 1.959964)
    return np.maximum(noise, factor * _delta(layout, x, between))


#: a flight is excluded when its rms / |omega0| exceeds this many times the others' median...
OUTLIER_FACTOR = 5.0
#: ...and this (a fit at the noise of a 0.01 rad/s gyroscope is about 0.001)
OUTLIER_FLOOR = 0.005
#: most flights excluded one after another
OUTLIER_ROUNDS = 4


def flight_rms_relative(sol: Solution) -> np.ndarray:
    """rms / |omega0| of each flight of a solution, over its unclipped samples."""
    out = []
    for k, w0 in enumerate(sol.w0s):
        a, b = sol.data.offsets[k], sol.data.offsets[k + 1]
        used = sol.data.used[a:b]
        dev = sol.w_model[a:b][used] - sol.data.w[a:b][used]
        rms = float(np.sqrt(np.mean(np.sum(dev * dev, axis=1)))) if used.any() else np.inf
        out.append(rms / max(float(np.linalg.norm(w0)), 1e-12))
    return np.array(out)
