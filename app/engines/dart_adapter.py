"""DART (``pip install dartpy``): a FreeJoint body in a World, DART's defaults.

Conventions (DART's ``FreeJoint``, checked by the adapter test): the joint's positions are a
rotation vector (world from body, exponential coordinates) then the translation; its velocities
are world-aligned, omega then the linear velocity. Converted here to Tumble's: (w, x, y, z) body
to world, omega in the body frame. The body frame's origin is the centre of mass. Defaults kept:
``World.step`` (semi-implicit Euler), no joint damping, the default constraint solver (nothing
collides).
"""

from __future__ import annotations

import numpy as np

from ..physics import quaternion as quat
from ..physics.state import Trajectory
from .start import step_counts

ENGINE = "dart"
PACKAGE = "dartpy"
ORDER = 30
SETTINGS = {"default": "DART's defaults: World.step, semi-implicit Euler"}


def version() -> str:
    import dartpy

    return dartpy.__version__


def fixed_step(setting: str) -> bool:
    return True


def rotation_vector(q: np.ndarray) -> np.ndarray:
    """The rotation vector of unit quaternions ``q`` (w, x, y, z)."""
    q = np.asarray(q, dtype=float)
    q = q * np.where(q[..., :1] < 0, -1.0, 1.0)
    s = np.linalg.norm(q[..., 1:], axis=-1, keepdims=True)
    angle = 2.0 * np.arctan2(s, q[..., :1])
    return q[..., 1:] * np.where(s > 0, angle / np.where(s > 0, s, 1.0), 2.0)


def quaternion(rv: np.ndarray) -> np.ndarray:
    """Unit quaternions (w, x, y, z) of rotation vectors ``rv``."""
    rv = np.asarray(rv, dtype=float)
    angle = np.linalg.norm(rv, axis=-1, keepdims=True)
    # sin(a/2)/a = sinc(a / 2 pi) / 2, smooth through a = 0
    return np.concatenate([np.cos(angle / 2), 0.5 * np.sinc(angle / (2 * np.pi)) * rv], axis=-1)


def run(start, setting: str, dt: float, times):
    import dartpy as dart

    counts = step_counts(times, dt)
    skeleton = dart.dynamics.Skeleton("tumble_audit")
    joint, body = skeleton.createFreeJointAndBodyNodePair()
    j = start.inertia
    body.setMass(float(start.mass))
    body.setMomentOfInertia(j[0, 0], j[1, 1], j[2, 2], j[0, 1], j[0, 2], j[1, 2])
    skeleton.setPositions(np.concatenate([rotation_vector(start.q), start.c]))
    skeleton.setVelocities(np.concatenate([start.w_world, start.v]))
    world = dart.simulation.World()
    world.setTimeStep(float(dt))
    world.setGravity(start.gravity)
    world.addSkeleton(skeleton)
    n = len(times)
    pos, vel = np.empty((n, 6)), np.empty((n, 6))
    pos[0], vel[0] = skeleton.getPositions(), skeleton.getVelocities()
    step = world.step
    for k in range(1, n):
        for _ in range(int(counts[k - 1])):
            step()
        pos[k], vel[k] = skeleton.getPositions(), skeleton.getVelocities()
    q = quaternion(pos[:, 0:3])
    settings = {
        "integrator": "semi-implicit Euler (World.step)",
        "timestep": float(world.getTimeStep()),
        "damping": float(joint.getDampingCoefficient(0)),
        "gyroscopic": "explicit Coriolis force",
        "solver": type(world.getConstraintSolver()).__name__,
        "quaternion": "rotation vector world from body, velocities world-aligned",
    }
    return Trajectory(np.asarray(times, dtype=float), pos[:, 3:6].copy(), vel[:, 3:6].copy(), q,
                      quat.rotate_inverse(q, vel[:, 0:3])), settings
