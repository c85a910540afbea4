"""A body and its loads compiled for the kernels: principal frame, packed parameters.

The user's body frame need not be principal (products of inertia are allowed). With the
principal axes as columns of ``R_P`` (body coordinates), the kernels integrate
``q_P = q ⊗ q(R_P)`` and ``w_P = R_P^T w``; results are mapped back exactly. A damper's
sphere rate and a rotor's momentum are vectors and map the same way (``R_P^T s``,
``R_P^T h a``); a spherical damper's inertia is a scalar and needs no mapping.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .compiled import layout  # the kernels' numbers, without numba
from . import quaternion as quat
from .body import Body
from .loads import Loads


@dataclass(frozen=True)
class Model:
    """Immutable compiled model. Build with :func:`compile_model`."""

    body: Body
    loads: Loads
    moments: np.ndarray       # principal moments, ascending
    axes: np.ndarray          # R_P: columns are principal axes in body coordinates
    q_axes: np.ndarray        # quaternion of R_P
    params: np.ndarray        # see kernels module docstring
    points: np.ndarray        # (k, 3) principal-frame points of world-fixed forces
    wforces: np.ndarray       # (k, 3) world-fixed forces

    @property
    def has_damper(self) -> bool:
        return self.body.damper is not None

    def to_rows(self, c, v, q, w, width: int = 13, s=None) -> np.ndarray:
        """Pack user-frame arrays (batch or single) into (N, width) principal-frame rows.

        A width of 23 adds the rotation matrix (row-major) and a zero step counter, the
        layout of ``rotmat-euler``. With a damper the rows grow by 3 more, at the end, for
        the sphere's rate ``s`` (body frame; None: the sphere turns with the body, s = w).
        """
        c, v, q, w = (np.atleast_2d(np.asarray(a, dtype=float)) for a in (c, v, q, w))
        extra = layout.DAMPER_WIDTH if self.has_damper else 0
        rows = np.zeros((c.shape[0], width + extra))
        rows[:, 0:3] = c
        rows[:, 3:6] = v
        rows[:, 6:10] = quat.multiply(q, self.q_axes)
        rows[:, 10:13] = w @ self.axes  # R_P^T w for each row
        if width > 13:
            rows[:, 13:22] = quat.to_matrix(rows[:, 6:10]).reshape(-1, 9)
        if extra:
            s = w if s is None else np.atleast_2d(np.asarray(s, dtype=float))
            rows[:, width:] = s @ self.axes
        return rows

    def damper_from_rows(self, rows: np.ndarray) -> np.ndarray | None:
        """The damper sphere's angular velocity (user body frame) of rows, or None."""
        if not self.has_damper:
            return None
        return np.asarray(rows)[..., -layout.DAMPER_WIDTH:] @ self.axes.T

    def matrices_from_rows(self, rows: np.ndarray) -> np.ndarray:
        """The integrated rotation matrices (user body frame to world) of 23-wide rows."""
        r = np.asarray(rows)[..., 13:22].reshape(rows.shape[:-1] + (3, 3))
        return r @ self.axes.T

    def from_rows(self, rows: np.ndarray):
        """Unpack (..., 13) principal-frame rows into user-frame (c, v, q, w)."""
        rows = np.asarray(rows)
        q = quat.multiply(rows[..., 6:10], quat.conjugate(self.q_axes))
        w = rows[..., 10:13] @ self.axes.T  # R_P w_P
        return rows[..., 0:3].copy(), rows[..., 3:6].copy(), q, w


def compile_model(body: Body, loads: Loads | None = None) -> Model:
    """Principal-frame model of ``body`` under ``loads`` (defaults: no loads, no gravity)."""
    loads = loads or Loads()
    moments, axes = body.principal()
    to_p = axes.T  # body coordinates -> principal coordinates
    params = np.zeros(layout.N_PARAMS)
    params[0:3] = moments
    params[3] = body.mass
    params[4:7] = loads.gravity
    points, wforces = [], []
    for t in loads.torques:
        if t.frame == "body":
            params[7:10] += to_p @ t.vector
        else:
            params[10:13] += t.vector
    for f in loads.forces:
        if f.frame == "body":
            fb, pb = to_p @ f.vector, to_p @ f.point
            params[7:10] += np.cross(pb, fb)
            params[13:16] += fb
        else:
            params[16:19] += f.vector
            points.append(to_p @ f.point)
            wforces.append(f.vector)
    parts = 0
    if body.damper is not None:
        parts |= layout.DAMPER_BIT
        params[layout.DAMPER_INERTIA] = body.damper.inertia
        params[layout.DAMPER_COEFFICIENT] = body.damper.coefficient
    if body.rotor is not None:
        parts |= layout.ROTOR_BIT
        params[layout.ROTOR_MOMENTUM:layout.ROTOR_MOMENTUM + 3] = to_p @ body.rotor.vector
    params[layout.PARTS_FLAG] = float(parts)
    drag = {"linear": np.zeros((3, 3)), "quadratic": np.zeros((3, 3))}
    for d in loads.drags:
        drag[d.model] += to_p @ np.diag(d.coefficients) @ axes  # D = R_P^T C R_P
    flag = 0
    if np.any(drag["linear"] != 0):
        flag |= layout.DRAG_LINEAR_BIT
        params[layout.DRAG_LINEAR:layout.DRAG_LINEAR + 9] = drag["linear"].ravel()
    if np.any(drag["quadratic"] != 0):
        flag |= layout.DRAG_QUADRATIC_BIT
        params[layout.DRAG_QUADRATIC:layout.DRAG_QUADRATIC + 9] = drag["quadratic"].ravel()
    params[layout.DRAG_FLAG] = float(flag)
    params[19] = 1.0 if (np.any(params[7:19] != 0) or points or flag or parts) else 0.0
    points_arr = np.array(points, dtype=float).reshape(-1, 3)
    wforces_arr = np.array(wforces, dtype=float).reshape(-1, 3)
    return Model(body, loads, moments, axes, quat.from_matrix(axes), params, points_arr, wforces_arr)
