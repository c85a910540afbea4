"""MuJoCo (``pip install mujoco``): a free joint with the scenario's inertia, its four integrators.

Conventions (MuJoCo's documentation, "Floating objects" and ``mjModel.qpos``): the free joint's
``qpos`` is (x, y, z, qw, qx, qy, qz), the body frame's origin (here the centre of mass) and its
orientation body to world; ``qvel`` is (v world, omega body frame). That is Tumble's own
convention, so nothing is converted. ``fullinertia`` takes the tensor with its products (MuJoCo
diagonalises it into the inertial frame itself). Defaults kept: no joint damping, no geoms
(nothing collides), ``mj_step`` as documented; ``mj_step(m, d, nstep)`` takes a sample's steps
in calls of about 0.2 s each (:mod:`.budget`: Ctrl+C is noticed between them). A run in which
MuJoCo found its state unstable (its "Nan, Inf or huge value" warnings) was reset by MuJoCo
itself to the model's start: it is reported and not scored.
"""

from __future__ import annotations

import time

import numpy as np

from ..physics.state import Trajectory
from .budget import Calls
from .start import step_counts

ENGINE = "mujoco"
PACKAGE = "mujoco"
ORDER = 10
SETTINGS = {
    "euler": "semi-implicit Euler, MuJoCo's default integrator",
    "rk4": "fourth-order Runge-Kutta",
    "implicit": "implicit-in-velocity Euler (Coriolis and centripetal derivatives included)",
    "implicitfast": "implicit-in-velocity Euler without the Coriolis derivatives",
}
_INTEGRATOR = {"euler": "Euler", "rk4": "RK4", "implicit": "implicit", "implicitfast": "implicitfast"}


def version() -> str:
    import mujoco

    return mujoco.__version__


def fixed_step(setting: str) -> bool:
    return True


def model_xml(start, setting: str, dt: float) -> str:
    """The MJCF of one free body at ``start`` stepped with ``setting`` at ``dt``."""
    j = start.inertia
    full = " ".join(repr(float(x)) for x in (j[0, 0], j[1, 1], j[2, 2], j[0, 1], j[0, 2], j[1, 2]))
    g = " ".join(repr(float(x)) for x in start.gravity)
    return (f'<mujoco model="tumble-audit"><option timestep="{float(dt)!r}" integrator="{_INTEGRATOR[setting]}" '
            f'gravity="{g}"/><worldbody><body name="body"><freejoint name="free"/>'
            f'<inertial pos="0 0 0" mass="{float(start.mass)!r}" fullinertia="{full}"/></body></worldbody>'
            '</mujoco>')


#: most MuJoCo warnings kept for a run's notes (the rest are counted)
MAX_WARNINGS = 10_000


def run(start, setting: str, dt: float, times):
    """The run, MuJoCo's warnings taken by a handler of ours while it lasts: MuJoCo's own prints
    each one and appends it to MUJOCO_LOG.TXT in the current folder (2,000 lines for a gravity of
    -1e100); here they become the run's notes."""
    import mujoco

    warned: list[str] = []
    count = [0]

    def keep(message):
        count[0] += 1
        if len(warned) < MAX_WARNINGS:
            warned.append(str(message))

    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(keep)
    try:
        trajectory, settings, remarks = _run(start, setting, dt, times)
    finally:
        mujoco.set_mju_user_warning(previous)
    if warned:
        from .quiet import notes

        remarks["notes"] = notes("mujoco", warned, "warned")
        if count[0] > len(warned):
            remarks["notes"].append(f"mujoco warned {count[0]:,} times in all")
    return trajectory, settings, remarks


def _run(start, setting: str, dt: float, times):
    import mujoco

    counts = step_counts(times, dt)
    model = mujoco.MjModel.from_xml_string(model_xml(start, setting, dt))
    data = mujoco.MjData(model)
    data.qpos[:] = np.concatenate([start.c, start.q])
    data.qvel[:] = np.concatenate([start.v, start.w])
    n = len(times)
    qpos, qvel = np.empty((n, 7)), np.empty((n, 6))
    qpos[0], qvel[0] = data.qpos, data.qvel
    step = mujoco.mj_step
    calls = Calls(1000)
    unstable = [int(w) for w in (mujoco.mjtWarning.mjWARN_BADQPOS, mujoco.mjtWarning.mjWARN_BADQVEL,
                                 mujoco.mjtWarning.mjWARN_BADQACC)]
    reset_at = None
    for k in range(1, n):
        left = int(counts[k - 1])
        while left:
            m = int(calls.next(left))
            began = time.perf_counter()
            step(model, data, m)
            calls.took(m, time.perf_counter() - began)
            left -= m
        qpos[k], qvel[k] = data.qpos, data.qvel
        if reset_at is None and any(data.warning[w].number for w in unstable):
            reset_at = float(times[k])
    q = qpos[:, 3:7] / np.linalg.norm(qpos[:, 3:7], axis=1, keepdims=True)
    settings = {
        "integrator": _INTEGRATOR[setting],
        "timestep": float(model.opt.timestep),
        "damping": float(model.dof_damping.max()),
        "gyroscopic": "bias force, explicit" if setting in ("euler", "rk4")
        else "in the implicit velocity update" if setting == "implicit"
        else "explicit (implicitfast drops the Coriolis derivatives)",
        "solver": mujoco.mjtSolver(int(model.opt.solver)).name,
        "quaternion": "qpos (w, x, y, z), normalised by MuJoCo after each step",
    }
    remarks = {}
    if reset_at is not None:
        count = sum(data.warning[w].number for w in unstable)
        remarks["not_scored"] = (f"MuJoCo found its state unstable {count:,} time(s) by t = {reset_at:g} s and reset "
                                 "it to the model's start each time (its \"Nan, Inf or huge value\" warning)")
    return Trajectory(np.asarray(times, dtype=float), qpos[:, 0:3].copy(), qvel[:, 0:3].copy(), q,
                      qvel[:, 3:6].copy()), settings, remarks
