"""Drake (``pip install drake``): a MultibodyPlant holding one free body, discrete or continuous.

Conventions (Drake's ``MultibodyPlant`` free-body state, checked by the adapter test): positions
(qw, qx, qy, qz, x, y, z), the body frame's orientation in the world and its origin (here the
centre of mass); velocities (omega, v) both in the world frame. Converted here to Tumble's
(omega in the body frame). The discrete plant updates the quaternion without renormalising it:
it is normalised when read. Defaults kept: ``drake`` (``drake:discrete``) is a plant with
``time_step = dt`` and Drake's default discrete solver; ``drake:continuous`` a continuous plant
under the Simulator's default integrator at its default accuracy, its largest step ``dt``, within
the step and wall-clock budget of :mod:`.budget` (a run that spends it ends between samples).
"""

from __future__ import annotations

import time

import numpy as np

from ..physics import quaternion as quat
from ..physics.state import Trajectory
from .budget import Budget, Calls, stopped
from .start import step_counts

ENGINE = "drake"
PACKAGE = "pydrake"
ORDER = 40
SETTINGS = {
    "discrete": "a discrete MultibodyPlant at time_step dt, Drake's default discrete solver",
    "continuous": "a continuous MultibodyPlant, the Simulator's default error-controlled integrator, max step dt",
}


def version() -> str:
    from importlib.metadata import version as dist_version

    return dist_version("drake")


def fixed_step(setting: str) -> bool:
    return setting == "discrete"


def run(start, setting: str, dt: float, times):
    from pydrake.common.eigen_geometry import Quaternion
    from pydrake.math import RigidTransform
    from pydrake.multibody.plant import MultibodyPlant
    from pydrake.multibody.math import SpatialVelocity
    from pydrake.multibody.tree import RotationalInertia, SpatialInertia
    from pydrake.systems.analysis import Simulator

    times = np.asarray(times, dtype=float)
    if setting == "discrete":
        step_counts(times, dt)
    plant = MultibodyPlant(time_step=float(dt) if setting == "discrete" else 0.0)
    j = start.inertia
    inertia = SpatialInertia.MakeFromCentralInertia(
        float(start.mass), np.zeros(3), RotationalInertia(j[0, 0], j[1, 1], j[2, 2], j[0, 1], j[0, 2], j[1, 2]))
    body = plant.AddRigidBody("body", inertia)
    plant.mutable_gravity_field().set_gravity_vector(start.gravity)
    plant.Finalize()
    simulator = Simulator(plant)
    context = simulator.get_mutable_context()
    plant_context = plant.GetMyMutableContextFromRoot(context)
    plant.SetFreeBodyPose(plant_context, body, RigidTransform(Quaternion(start.q / np.linalg.norm(start.q)),
                                                              start.c))
    plant.SetFreeBodySpatialVelocity(plant_context, body, SpatialVelocity(start.w_world, start.v))
    integrator = simulator.get_mutable_integrator()
    if setting == "continuous":
        integrator.set_maximum_step_size(float(dt))
    simulator.Initialize()
    n = len(times)
    x = np.empty((n, 13))
    x[0] = plant.GetPositionsAndVelocities(plant_context)
    advance, read = simulator.AdvanceTo, plant.GetPositionsAndVelocities
    # AdvanceTo in calls of about 0.2 s each (Ctrl+C is noticed between them); the continuous
    # plant's error control within its step and wall-clock budget
    calls = Calls(float(times[1] - times[0]) if n > 1 else 1.0)
    budget = Budget(float(times[-1]) / float(dt)) if setting == "continuous" else None
    reached, spent = n, None
    for k in range(1, n):
        now = float(times[k - 1])
        while now < times[k] and spent is None:
            target = min(float(times[k]), now + calls.next(float(times[k]) - now))
            target = float(times[k]) if times[k] - target < 1e-9 * float(times[k] - times[k - 1]) else target
            began = time.perf_counter()
            advance(target)
            calls.took(target - now, time.perf_counter() - began)
            now = target
            if budget is not None:
                spent = budget.spent(integrator.get_num_steps_taken())
        if spent is not None and now < times[k]:
            reached = k
            break
        x[k] = read(plant_context)
        if spent is not None:
            reached = k + 1
            break
    x, times = x[:reached], times[:reached]
    q = x[:, 0:4] / np.linalg.norm(x[:, 0:4], axis=1, keepdims=True)
    settings = {"timestep": float(dt), "damping": 0.0,
                "quaternion": "(qw, qx, qy, qz) world from body, omega and v world frame"}
    if setting == "discrete":
        settings.update(integrator="discrete update at time_step",
                        solver=str(plant.get_discrete_contact_solver()).split(".")[-1],
                        approximation=str(plant.get_discrete_contact_approximation()).split(".")[-1],
                        gyroscopic="explicit in the discrete update",
                        renormalised="no (Drake's discrete quaternion drifts off unit length; normalised when read)")
    else:
        settings.update(integrator=type(integrator).__name__.replace("_[float]", ""),
                        accuracy=float(integrator.get_target_accuracy()),
                        max_step=float(integrator.get_maximum_step_size()),
                        gyroscopic="in the continuous dynamics")
    remarks = {} if spent is None or reached == n else {"not_scored": stopped(float(times[-1]), spent)}
    return (Trajectory(times, x[:, 4:7].copy(), x[:, 10:13].copy(), q, quat.rotate_inverse(q, x[:, 7:10])), settings,
            remarks)
