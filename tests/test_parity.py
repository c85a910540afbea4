"""Parity with the seed systems: rotmat-euler, lie-rk4, Tait-Bryan angles, a reference point
off the centre of mass, and the Exudyn-named outputs of ``tumble simulate``."""

import numpy as np
import pytest
from conftest import refused, tumble
from scipy.spatial.transform import Rotation

from tumble.physics import diagnostics, quaternion as quat
from tumble.physics.errors import ParameterError
from tumble.physics.integrators import simulate
from tumble.scenario import load, loads_toml
from tumble.simulation.table import trajectory_table

EPS = np.finfo(float).eps


def orthonormality(R):
    gram = np.swapaxes(R, -1, -2) @ R - np.eye(3)
    return np.max(np.linalg.norm(gram, axis=(-2, -1))), np.max(np.abs(np.linalg.det(R) - 1))


@pytest.mark.parametrize("scheme", ["polar", "gram-schmidt"])
def test_rotmat_euler_reorthonormalised_every_step_stays_on_the_group(scheme):
    sc = load("boxes-complex")
    tr = simulate(sc.model, sc.initial_state, "rotmat-euler", 1e-3, 10.0, sample=0.1,
                  reorthonormalize=scheme, reorthonormalize_every=1)
    orth, det = orthonormality(tr.R)
    assert orth < 50 * EPS and det < 50 * EPS


def test_rotmat_euler_without_reorthonormalisation_drifts_off_the_group():
    sc = load("boxes-complex")
    never = simulate(sc.model, sc.initial_state, "rotmat-euler", 1e-3, 10.0, sample=0.1, reorthonormalize="none")
    every100 = simulate(sc.model, sc.initial_state, "rotmat-euler", 1e-3, 10.0, sample=0.1,
                        reorthonormalize="polar", reorthonormalize_every=100)
    o_never, d_never = orthonormality(never.R)
    o_100, _ = orthonormality(every100.R)
    # R <- R (1 + h [w]x) grows |R| by (1 + h^2 |w|^2)/2 per step: ~ N h^2 |w|^2 / 2 in all
    w2 = np.max(np.sum(never.w ** 2, axis=-1))
    predicted = 1e4 * 1e-6 * w2 / 2
    assert o_never > 0.1 * predicted and d_never > 0.01
    assert o_100 < o_never / 30  # re-orthonormalising every 100 steps bounds it


def test_lie_rk4_keeps_unit_quaternion_without_renormalising():
    sc = load("boxes-complex")
    tr = simulate(sc.model, sc.initial_state, "lie-rk4", 1e-3, 10.0, sample=0.01)
    assert np.max(np.abs(np.linalg.norm(tr.q, axis=-1) - 1)) < 1e4 * EPS  # round-off walk only
    ref = simulate(sc.model, sc.initial_state, "exact", 1e-3, 10.0, sample=0.01)
    assert quat.angle_between(tr.q, ref.q).max() < 1e-8  # fourth order at dt = 1e-3


def test_tait_bryan_matches_scipy_intrinsic_xyz():
    rng = np.random.default_rng(3)
    angles = rng.uniform(-1.4, 1.4, size=(20, 3))
    q = quat.from_euler_xyz(angles)
    R_ours = quat.to_matrix(q)
    R_scipy = Rotation.from_euler("XYZ", angles).as_matrix()  # intrinsic: Rx Ry Rz
    np.testing.assert_allclose(R_ours, R_scipy, atol=1e-14)
    np.testing.assert_allclose(quat.to_euler_xyz(q), angles, atol=1e-12)


BASE = """
[body]
shape = "custom"
mass = 2.0
inertia = [1.0, 2.0, 2.5, 0.0, 0.0, 0.0]
[initial]
angular_velocity = [0.3, 1.0, 0.2]
"""


def test_orientation_xyz_is_accepted_and_exclusive():
    sc = loads_toml(BASE + "orientation_xyz = [0.1, -0.2, 0.3]\n")
    expected = Rotation.from_euler("XYZ", [0.1, -0.2, 0.3]).as_matrix()
    np.testing.assert_allclose(quat.to_matrix(np.array(sc.orientation)), expected, atol=1e-14)
    with pytest.raises(ParameterError, match="initial.orientation_xyz"):
        loads_toml(BASE + "orientation_xyz = [0.1, -0.2, 0.3]\norientation = [1.0, 0.0, 0.0, 0.0]\n")


def test_reference_point_off_the_centre_of_mass_gives_the_same_motion():
    m = 2.0
    I_com = np.array([[1.0, 0.1, 0.0], [0.1, 2.0, -0.05], [0.0, -0.05, 2.5]])
    b = np.array([0.2, -0.1, 0.3])
    I_ref = I_com + m * (b @ b * np.eye(3) - np.outer(b, b))
    q0 = quat.normalize(np.array([0.9, 0.2, -0.1, 0.3]))
    w0 = np.array([0.3, 1.0, 0.2])
    c0 = np.array([1.0, 2.0, 3.0])
    v0 = np.array([0.5, -0.2, 4.0])

    def six(t):
        return fl([t[0, 0], t[1, 1], t[2, 2], t[1, 2], t[0, 2], t[0, 1]])

    def fl(v):
        return "[" + ", ".join(repr(float(x)) for x in v) + "]"

    def doc(inertia, position, velocity, extra=""):
        return f"""
[body]
shape = "custom"
mass = {m}
inertia = {six(inertia)}
{extra}
[initial]
position = {fl(position)}
velocity = {fl(velocity)}
orientation = {fl(q0)}
angular_velocity = {fl(w0)}
[world]
gravity = [0.0, 0.0, -9.8]
[[loads]]
kind = "force"
frame = "world"
vector = [0.3, -0.2, 0.5]
point = {{point}}
"""

    # a force at one material point: from the centre of mass in the first description,
    # from the reference point (like initial.position and --point) in the second
    p_com = np.array([0.1, 0.25, -0.2])
    a = loads_toml(doc(I_com, c0, v0).replace("{point}", fl(p_com)))
    ref_pos = c0 - quat.rotate(q0, b)
    ref_vel = v0 - quat.rotate(q0, np.cross(w0, b))
    bb = loads_toml(doc(I_ref, ref_pos, ref_vel, f"center_of_mass = {fl(b)}").replace("{point}", fl(p_com + b)))
    np.testing.assert_allclose(bb.rigid_body.inertia, I_com, atol=1e-14)
    ta = simulate(a.model, a.initial_state, "rk4", 1e-3, 2.0, sample=0.1)
    tb = simulate(bb.model, bb.initial_state, "rk4", 1e-3, 2.0, sample=0.1)
    np.testing.assert_allclose(tb.c, ta.c, atol=1e-12)
    np.testing.assert_allclose(tb.q, ta.q, atol=1e-12)
    # the reference point's own path, through the Position output at point 0
    table = trajectory_table(bb, tb, ["position"], [0.0, 0.0, 0.0])
    p = np.column_stack([table["px"], table["py"], table["pz"]])
    np.testing.assert_allclose(p, tb.c - quat.rotate(tb.q, b), atol=1e-12)


def test_reference_point_inertia_must_be_physical_about_the_centre_of_mass():
    with pytest.raises(ParameterError, match="about the centre of mass"):
        loads_toml(BASE.replace('inertia = [1.0, 2.0, 2.5, 0.0, 0.0, 0.0]',
                                'inertia = [1.0, 2.0, 2.5, 0.0, 0.0, 0.0]\ncenter_of_mass = [0.0, 0.0, 2.0]'))


def central_difference(t, x):
    h = t[1] - t[0]
    return (x[2:] - x[:-2]) / (2 * h)


def test_outputs_agree_with_finite_differences_of_the_trajectory():
    sc = load("rocket-top")  # torqued: exercises every term
    sc = sc.replace(angular_velocity=(0.4, -0.3, 10.0), velocity=(0.3, 0.1, 2.0), gravity=(0.0, 0.0, -9.8))
    h = 1e-3
    tr = simulate(sc.model, sc.initial_state, "rk4", h / 4, 1.0, sample=h)
    point = [0.3, -0.2, 0.1]
    groups = ["angularvelocity", "angularacceleration", "angularaccelerationlocal", "position", "velocity",
              "acceleration", "velocitylocal", "accelerationlocal", "rotationmatrix", "rotation"]
    tab = trajectory_table(sc, tr, groups, point)

    def cols(*names):
        return np.column_stack([tab[n] for n in names])

    t = tab["t"]
    w_world = cols("wgx", "wgy", "wgz")
    R = cols(*[f"R{i}{j}" for i in range(3) for j in range(3)]).reshape(-1, 3, 3)
    np.testing.assert_allclose(np.einsum("nij,nj->ni", R, tr.w), w_world, atol=1e-12)
    np.testing.assert_allclose(R, Rotation.from_euler("XYZ", cols("rx", "ry", "rz")).as_matrix(), atol=1e-12)
    # derivatives: central differences are second order, error ~ h^2/6 |x'''|
    scale = 1e-3 * max(1.0, np.abs(w_world).max() ** 3)
    alpha_b = cols("abx", "aby", "abz")
    np.testing.assert_allclose(alpha_b[1:-1], central_difference(t, tr.w), atol=scale)
    np.testing.assert_allclose(cols("agx", "agy", "agz")[1:-1], central_difference(t, w_world), atol=scale)
    pos = cols("px", "py", "pz")
    vel = cols("pvx", "pvy", "pvz")
    acc = cols("pax", "pay", "paz")
    np.testing.assert_allclose(vel[1:-1], central_difference(t, pos), atol=scale)
    np.testing.assert_allclose(acc[1:-1], central_difference(t, vel), atol=scale)
    np.testing.assert_allclose(cols("pvbx", "pvby", "pvbz"), np.einsum("nji,nj->ni", R, vel), atol=1e-12)
    np.testing.assert_allclose(cols("pabx", "paby", "pabz"), np.einsum("nji,nj->ni", R, acc), atol=1e-11)


def test_outputs_match_the_closed_form_torque_free():
    sc = load("boxes-complex")
    tr = simulate(sc.model, sc.initial_state, "exact", 1e-3, 3.0, sample=0.05)
    tab = trajectory_table(sc, tr, ["angularaccelerationlocal", "angularvelocity"])
    I = np.diag(sc.rigid_body.inertia)
    w = tr.w
    euler = np.column_stack([(I[1] - I[2]) * w[:, 1] * w[:, 2] / I[0], (I[2] - I[0]) * w[:, 2] * w[:, 0] / I[1],
                             (I[0] - I[1]) * w[:, 0] * w[:, 1] / I[2]])
    np.testing.assert_allclose(np.column_stack([tab["abx"], tab["aby"], tab["abz"]]), euler, atol=1e-12)
    L = diagnostics.angular_momentum(sc.rigid_body, tr.q, tr.w)
    # world omega is I_world^-1 L with I_world = R I R^T
    R = quat.to_matrix(tr.q)
    w_world = np.einsum("nij,nj->ni", R @ np.diag(1 / I) @ np.swapaxes(R, 1, 2), L)
    np.testing.assert_allclose(np.column_stack([tab["wgx"], tab["wgy"], tab["wgz"]]), w_world, atol=1e-11)


def test_cli_outputs_columns_and_errors(tmp_path):
    out = tmp_path / "o.csv"
    cmd = ["simulate", "boxes-complex", "--duration", "0.1", "--outputs",
           "AngularVelocity,Rotation,RotationMatrix,Position", "--point", "0,0,0.45", "--out", str(out)]
    res = tumble(*cmd)
    assert res.returncode == 0, res.stderr
    header = out.read_text().splitlines()[0].split(",")
    assert header[:20] == "t,cx,cy,cz,vx,vy,vz,qw,qx,qy,qz,wx,wy,wz,Lx,Ly,Lz,T,V,E".split(",")
    assert header[20:] == ["wgx", "wgy", "wgz", "rx", "ry", "rz"] + [f"R{i}{j}" for i in range(3) for j in range(3)] + ["px", "py", "pz"]
    bad = tumble(*cmd[:-5], "--outputs", "Nope", "--out", tmp_path / "b.csv")
    refused(bad, "--outputs", unwritten=[tmp_path / "b.csv"])
