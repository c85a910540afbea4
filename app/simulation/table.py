"""Trajectory tables: the ``tumble simulate`` columns, Exudyn-named extra outputs, CSV/NPZ.

The default columns are ``t,cx,cy,cz,vx,vy,vz,qw,qx,qy,qz,wx,wy,wz,Lx,Ly,Lz,T,V,E`` (centre
of mass, world; quaternion body-to-world; omega body; L world about the centre of mass).
Extra groups are named after Exudyn's output variables (case-insensitive):

=========================  ==========================================================
group                      columns
=========================  ==========================================================
AngularVelocity            wgx, wgy, wgz (world frame)
Rotation                   rx, ry, rz (Tait-Bryan xyz, R = Rx Ry Rz, rad)
RotationMatrix             R00 .. R22 (row-major, body to world)
AngularAcceleration        agx, agy, agz (world frame)
AngularAccelerationLocal   abx, aby, abz (body frame)
Position                   px, py, pz (the --point, world)
Velocity                   pvx, pvy, pvz (the --point, world)
Acceleration               pax, pay, paz (the --point, world)
VelocityLocal              pvbx, pvby, pvbz (the --point, body frame)
AccelerationLocal          pabx, paby, pabz (the --point, body frame)
DamperAngularVelocity      wdx, wdy, wdz (the damper sphere's, body frame)
=========================  ==========================================================

``L`` is the total angular momentum (a damper's J s and a rotor's h a included); ``T`` and
``E`` include a damper's 1/2 J |s|^2 (:mod:`app.physics.diagnostics`).

The point is given in body coordinates from the body's reference point (the centre of
mass unless the scenario sets ``body.center_of_mass``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..atomic import atomic_path
from ..physics import diagnostics, quaternion as quat
from ..physics.errors import DivergenceError, ParameterError

DEFAULT_COLUMNS = ("t", "cx", "cy", "cz", "vx", "vy", "vz", "qw", "qx", "qy", "qz",
                   "wx", "wy", "wz", "Lx", "Ly", "Lz", "T", "V", "E")
OUTPUT_GROUPS = {
    "angularvelocity": ("wgx", "wgy", "wgz"),
    "rotation": ("rx", "ry", "rz"),
    "rotationmatrix": tuple(f"R{i}{j}" for i in range(3) for j in range(3)),
    "angularacceleration": ("agx", "agy", "agz"),
    "angularaccelerationlocal": ("abx", "aby", "abz"),
    "position": ("px", "py", "pz"),
    "velocity": ("pvx", "pvy", "pvz"),
    "acceleration": ("pax", "pay", "paz"),
    "velocitylocal": ("pvbx", "pvby", "pvbz"),
    "accelerationlocal": ("pabx", "paby", "pabz"),
    "damperangularvelocity": ("wdx", "wdy", "wdz"),
}
GROUP_NAMES = ("AngularVelocity", "Rotation", "RotationMatrix", "AngularAcceleration",
               "AngularAccelerationLocal", "Position", "Velocity", "Acceleration",
               "VelocityLocal", "AccelerationLocal", "DamperAngularVelocity")
POINT_GROUPS = ("position", "velocity", "acceleration", "velocitylocal", "accelerationlocal")


def parse_outputs(text: str | None) -> list[str]:
    """Normalised group keys from a comma-separated list; raises ParameterError."""
    if not text:
        return []
    keys = []
    for item in text.split(","):
        key = item.strip().replace("_", "").replace("-", "").lower()
        if key not in OUTPUT_GROUPS:
            raise ParameterError("--outputs", item.strip(), "name groups among " + ", ".join(GROUP_NAMES))
        if key not in keys:
            keys.append(key)
    return keys


def check_outputs(scenario, outputs) -> None:
    """Raise :class:`ParameterError` if ``outputs`` asks for what ``scenario`` lacks (a
    damper's rate without a damper)."""
    if "damperangularvelocity" in outputs and scenario.rigid_body.damper is None:
        raise ParameterError("--outputs", "DamperAngularVelocity", "name it only for a body with a [body.damper]")


def trajectory_table(scenario, traj, outputs=(), point=None) -> dict:
    """Column name -> array for a trajectory of ``scenario`` (default columns first)."""
    check_outputs(scenario, outputs)
    body = scenario.rigid_body
    loads = scenario.applied_loads
    d = diagnostics.diagnose(body, scenario.gravity, traj)
    cols = [traj.t[:, None], traj.c, traj.v, traj.q, traj.w, d.L, d.T[:, None], d.V[:, None], d.E[:, None]]
    data = np.hstack(cols)
    table = {name: data[:, k] for k, name in enumerate(DEFAULT_COLUMNS)}
    R = traj.rotation_matrices()
    extra = {}
    if "angularvelocity" in outputs:
        extra["angularvelocity"] = quat.rotate(traj.q, traj.w)
    if "rotation" in outputs:
        extra["rotation"] = quat.to_euler_xyz(traj.q)
    if "rotationmatrix" in outputs:
        extra["rotationmatrix"] = R.reshape(len(traj.t), 9)
    if "angularacceleration" in outputs or "angularaccelerationlocal" in outputs:
        alpha = diagnostics.angular_acceleration_body(body, loads, traj.q, traj.w, traj.s)
        extra["angularaccelerationlocal"] = alpha
        extra["angularacceleration"] = quat.rotate(traj.q, alpha)
    if any(g in outputs for g in POINT_GROUPS):
        p_ref = np.zeros(3) if point is None else np.asarray(point, dtype=float)
        p_com = p_ref - np.asarray(body.center_of_mass)
        kin = diagnostics.point_kinematics(body, loads, traj, p_com)
        extra.update({"position": kin["position"], "velocity": kin["velocity"],
                      "acceleration": kin["acceleration"], "velocitylocal": kin["velocity_local"],
                      "accelerationlocal": kin["acceleration_local"]})
    if "damperangularvelocity" in outputs:
        extra["damperangularvelocity"] = traj.s
    for key in outputs:
        for k, name in enumerate(OUTPUT_GROUPS[key]):
            table[name] = extra[key][:, k]
    return table


#: rows formatted by one string operation when a table holding a non-finite value is written
#: (np.savetxt formats row by row in Python: 0.8 s of a 2 s `tumble simulate t-handle` here)
CSV_BLOCK_ROWS = 4096


def write_table(path, table: dict) -> None:
    """CSV (a header, then every number as the shortest decimal that reads back to the same
    double, the exact round trip of Python's ``repr``) or NPZ by extension, atomically."""
    path = Path(path)
    with atomic_path(path) as tmp:
        if path.suffix.lower() == ".npz":
            with open(tmp, "wb") as fh:
                np.savez(fh, **table)
        else:
            data = np.ascontiguousarray(np.column_stack([table[k] for k in table]), dtype=np.float64)
            with open(tmp, "wb") as fh:
                fh.write((",".join(table) + "\n").encode("utf-8"))
                fh.write(csv_rows(data))


def csv_rows(data: np.ndarray) -> bytes:
    """The rows of the 2-d float array ``data`` as CSV lines, each number its shortest exact
    decimal. orjson writes the array as JSON (shortest round-trip digits, Ryu) and its ``],[``
    become line breaks: 0.1 s for the 1.2 million numbers of `tumble simulate t-handle`, where
    ``%.17g`` took 0.4 s and ``repr`` longer. JSON has no NaN or infinity, so a table holding one
    is formatted by ``%r``, a block of rows at a time."""
    if len(data) == 0:
        return b""
    import orjson

    text = orjson.dumps(data, option=orjson.OPT_SERIALIZE_NUMPY)
    if b"null" not in text:  # orjson writes NaN and the infinities as null
        return text[2:-2].replace(b"],[", b"\n") + b"\n"
    row = ",".join(["%r"] * data.shape[1]) + "\n"
    return b"".join(((row * len(block)) % tuple(block.ravel().tolist())).encode("ascii")
                    for block in (data[start:start + CSV_BLOCK_ROWS] for start in range(0, len(data), CSV_BLOCK_ROWS)))


def check_finite(table: dict) -> None:
    """Raise :class:`~app.physics.errors.DivergenceError` at the first row holding a
    non-finite value: a quantity derived from a finite state (an energy, a momentum) can
    still overflow, and a table of infinities is not a result."""
    first = None
    for name, column in table.items():
        bad = ~np.isfinite(column)
        if bad.any():
            row = int(np.argmax(bad))
            if first is None or row < first[0]:
                first = (row, name)
    if first is not None:
        row, name = first
        raise DivergenceError(float(table["t"][row]), row, f"column {name} of row {row} is not finite (it overflowed)")
