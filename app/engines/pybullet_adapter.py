"""PyBullet (``pip install pybullet``): one URDF link with the scenario's inertia, PyBullet's defaults.

Conventions (PyBullet Quickstart Guide, ``getBasePositionAndOrientation``, ``getBaseVelocity``):
quaternions are (x, y, z, w); the base's pose is that of its inertial frame; velocities are world
frame. Bullet takes a diagonal inertia, so the URDF's link frame is the body's principal frame
itself (its inertial origin the identity, no Euler angles): the body is placed by a quaternion,
``loadURDF``'s base orientation world from body times body from principal. Euler angles would be
wrong at gimbal lock, where a principal frame that permutes the body's axes (a diagonal tensor
whose moments are not in ascending order) puts them. Converted back here to Tumble's: (w, x, y,
z) body to world, omega in the body frame.

Defaults kept, as a PyBullet user gets them: a ``loadURDF`` body is a btMultiBody whose linear
and angular damping are 0.04 (Bullet applies the angular one as a torque growing with |omega|)
and whose base velocities are clamped at 100; the inertia is read from the file
(``URDF_USE_INERTIA_FROM_FILE``: the body has no collision shape to compute one from).
"""

from __future__ import annotations

import os
import tempfile

import numpy as np

from ..physics import quaternion as quat
from ..physics.state import Trajectory
from .start import step_counts

ENGINE = "pybullet"
PACKAGE = "pybullet"
ORDER = 20
#: btMultiBody's default linear and angular damping, on for every body a PyBullet user loads
DAMPING = 0.04
#: btMultiBody's default clamp of the base's velocities (maxCoordinateVelocity)
MAX_VELOCITY = 100.0
SETTINGS = {"default": "PyBullet's defaults: semi-implicit step, damping 0.04 linear and angular"}


def version() -> str:
    from importlib.metadata import version as dist_version

    return dist_version("pybullet")


def fixed_step(setting: str) -> bool:
    return True


def principal_frame(start) -> tuple[np.ndarray, np.ndarray]:
    """(principal moments, quaternion (w, x, y, z) of the principal frame in the body frame)."""
    moments, axes = start.principal()
    return moments, quat.from_matrix(axes)


def urdf_text(start) -> str:
    """One link whose frame is the body's principal frame (the inertial origin the identity)."""
    moments, _ = principal_frame(start)
    i1, i2, i3 = (repr(float(x)) for x in moments)
    return (f'<?xml version="1.0"?><robot name="tumble_audit"><link name="body"><inertial>'
            f'<origin xyz="0 0 0" rpy="0 0 0"/><mass value="{float(start.mass)!r}"/>'
            f'<inertia ixx="{i1}" ixy="0" ixz="0" iyy="{i2}" iyz="0" izz="{i3}"/></inertial></link></robot>')


def run(start, setting: str, dt: float, times):
    import pybullet

    counts = step_counts(times, dt)
    _, q_axes = principal_frame(start)
    client = pybullet.connect(pybullet.DIRECT)
    try:
        fd, path = tempfile.mkstemp(suffix=".urdf", prefix="tumble-audit-")
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(urdf_text(start))
            # the link frame is the principal frame: world from principal = world from body * body from principal
            q_link = quat.normalize(quat.multiply(start.q, q_axes))
            body = pybullet.loadURDF(path, basePosition=start.c.tolist(),
                                     baseOrientation=[*q_link[1:], q_link[0]],
                                     flags=pybullet.URDF_USE_INERTIA_FROM_FILE, physicsClientId=client)
        finally:
            os.unlink(path)
        taken = np.array(pybullet.getDynamicsInfo(body, -1, physicsClientId=client)[2], dtype=float)
        pybullet.setGravity(*start.gravity.tolist(), physicsClientId=client)
        pybullet.setTimeStep(float(dt), physicsClientId=client)
        pybullet.resetBaseVelocity(body, start.v.tolist(), start.w_world.tolist(), physicsClientId=client)
        n = len(times)
        pose, vel = [None] * n, [None] * n
        get_pose, get_vel, step = pybullet.getBasePositionAndOrientation, pybullet.getBaseVelocity, \
            pybullet.stepSimulation
        pose[0], vel[0] = get_pose(body, physicsClientId=client), get_vel(body, physicsClientId=client)
        for k in range(1, n):
            for _ in range(int(counts[k - 1])):
                step(physicsClientId=client)
            pose[k], vel[k] = get_pose(body, physicsClientId=client), get_vel(body, physicsClientId=client)
        engine = pybullet.getPhysicsEngineParameters(physicsClientId=client)
    finally:
        pybullet.disconnect(client)
    c = np.array([p[0] for p in pose])
    xyzw = np.array([p[1] for p in pose])
    q_principal = xyzw[:, [3, 0, 1, 2]]
    q_principal /= np.linalg.norm(q_principal, axis=1, keepdims=True)
    q = quat.multiply(q_principal, quat.conjugate(q_axes))  # world from body
    v = np.array([x[0] for x in vel])
    w = quat.rotate_inverse(q, np.array([x[1] for x in vel]))
    settings = {
        "integrator": "semi-implicit Euler (btMultiBody)",
        "timestep": float(engine.get("fixedTimeStep", dt)),
        # getDynamicsInfo reports -1 for a btMultiBody base: its damping is btMultiBody's default,
        # which the adapter test measures (the decay law of a spin about a principal axis)
        "damping": {"linear": DAMPING, "angular": DAMPING,
                    "law": "torque -k (1 + |omega|) I omega and force -k (1 + |v|) m v (btMultiBody)"},
        "gyroscopic": "btMultiBody's explicit bias force",
        "solver": f"sequential impulse, {engine.get('numSolverIterations', '?')} iterations",
        "max_velocity": MAX_VELOCITY,
        "quaternion": "(x, y, z, w) of the inertial (principal) frame, placed by a quaternion; omega world frame",
    }
    remarks = {}
    moments, _ = principal_frame(start)
    if not np.allclose(taken, moments, rtol=1e-9, atol=0):
        remarks["not_scored"] = (f"PyBullet took the principal moments {_moments(taken)} for {_moments(moments)} (it sets "
                                 "the inertia of a body whose moments break I1 + I2 >= I3 to zero): not this body")
    return Trajectory(np.asarray(times, dtype=float), c, v, q, w), settings, remarks


def _moments(x) -> str:
    return "[" + ", ".join(f"{float(v):.4g}" for v in x) + "]"
