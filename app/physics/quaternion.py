"""Quaternion algebra, scalar-first (w, x, y, z), body-to-world, batched on leading axes."""

from __future__ import annotations

import numpy as np


def multiply(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Hamilton product ``p ⊗ q`` (rotate by q first, then by p)."""
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    pw, px, py, pz = np.moveaxis(p, -1, 0)
    qw, qx, qy, qz = np.moveaxis(q, -1, 0)
    return np.stack(
        [
            pw * qw - px * qx - py * qy - pz * qz,
            pw * qx + px * qw + py * qz - pz * qy,
            pw * qy - px * qz + py * qw + pz * qx,
            pw * qz + px * qy - py * qx + pz * qw,
        ],
        axis=-1,
    )


def conjugate(q: np.ndarray) -> np.ndarray:
    """Conjugate (the inverse of a unit quaternion)."""
    q = np.asarray(q, dtype=float)
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def normalize(q: np.ndarray) -> np.ndarray:
    """Unit quaternion along ``q``."""
    q = np.asarray(q, dtype=float)
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrix ``R`` (body to world) of a unit quaternion; shape (..., 3, 3)."""
    q = np.asarray(q, dtype=float)
    w, x, y, z = np.moveaxis(q, -1, 0)
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        axis=-2,
    )


def from_matrix(m: np.ndarray) -> np.ndarray:
    """Unit quaternion (w >= 0) of a proper rotation matrix (Shepperd's method)."""
    m = np.asarray(m, dtype=float)
    batch = m.shape[:-2]
    mm = m.reshape(-1, 3, 3)
    out = np.empty((mm.shape[0], 4))
    for k, r in enumerate(mm):
        tr = r[0, 0] + r[1, 1] + r[2, 2]
        cand = np.array([tr, r[0, 0], r[1, 1], r[2, 2]])
        i = int(np.argmax(cand))
        if i == 0:
            s = 2.0 * np.sqrt(1.0 + tr)
            q = [0.25 * s, (r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s]
        elif i == 1:
            s = 2.0 * np.sqrt(1.0 + r[0, 0] - r[1, 1] - r[2, 2])
            q = [(r[2, 1] - r[1, 2]) / s, 0.25 * s, (r[0, 1] + r[1, 0]) / s, (r[0, 2] + r[2, 0]) / s]
        elif i == 2:
            s = 2.0 * np.sqrt(1.0 + r[1, 1] - r[0, 0] - r[2, 2])
            q = [(r[0, 2] - r[2, 0]) / s, (r[0, 1] + r[1, 0]) / s, 0.25 * s, (r[1, 2] + r[2, 1]) / s]
        else:
            s = 2.0 * np.sqrt(1.0 + r[2, 2] - r[0, 0] - r[1, 1])
            q = [(r[1, 0] - r[0, 1]) / s, (r[0, 2] + r[2, 0]) / s, (r[1, 2] + r[2, 1]) / s, 0.25 * s]
        q = np.array(q)
        out[k] = q if q[0] >= 0 else -q
    return normalize(out).reshape(batch + (4,))


def rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate body-frame vectors ``v`` into the world frame: ``R(q) v``."""
    return np.einsum("...ij,...j->...i", to_matrix(q), np.asarray(v, dtype=float))


def rotate_inverse(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate world-frame vectors ``v`` into the body frame: ``R(q)^T v``."""
    return np.einsum("...ji,...j->...i", to_matrix(q), np.asarray(v, dtype=float))


def from_axis_angle(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Quaternion of a rotation by ``angle`` (rad) about the unit vector ``axis``."""
    axis = np.asarray(axis, dtype=float)
    half = 0.5 * np.asarray(angle, dtype=float)[..., None]
    return np.concatenate([np.cos(half), np.sin(half) * axis], axis=-1)


def angle_between(q1: np.ndarray, q2: np.ndarray) -> np.ndarray:
    """Rotation angle (rad, in [0, pi]) of ``q1^-1 ⊗ q2``, robust for tiny angles."""
    d = multiply(conjugate(q1), q2)
    vec = np.linalg.norm(d[..., 1:], axis=-1)
    return 2.0 * np.arctan2(vec, np.abs(d[..., 0]))


def to_euler_xyz(q: np.ndarray) -> np.ndarray:
    """Tait-Bryan angles (a, b, c) with ``R = Rx(a) Ry(b) Rz(c)`` (Exudyn's xyz sequence)."""
    r = to_matrix(q)
    b = np.arcsin(np.clip(r[..., 0, 2], -1.0, 1.0))
    a = np.arctan2(-r[..., 1, 2], r[..., 2, 2])
    c = np.arctan2(-r[..., 0, 1], r[..., 0, 0])
    return np.stack([a, b, c], axis=-1)


def from_euler_xyz(angles: np.ndarray) -> np.ndarray:
    """Quaternion of ``R = Rx(a) Ry(b) Rz(c)``; inverse of :func:`to_euler_xyz`."""
    angles = np.asarray(angles, dtype=float)
    ex, ey, ez = np.eye(3)
    qa = from_axis_angle(ex, angles[..., 0])
    qb = from_axis_angle(ey, angles[..., 1])
    qc = from_axis_angle(ez, angles[..., 2])
    return multiply(multiply(qa, qb), qc)
