"""Every engine starts where the body starts, whatever the body's principal frame.

Found: PyBullet's body was loaded turned by pi/2 when the principal frame is a permutation of the
body's axes (the diagonal tensor [2.1, 3.3, 1.4]): the URDF's rpy was computed at gimbal lock,
and the audit scored the turned run (five flips where PyBullet, set up right, has one). Here every
adapter runs a body in all six axis orders of a diagonal tensor and two tensors with products of
inertia, each from a turned start, and its first sample must be the start to round-off; and the
audit itself reports a run whose first sample is not the start as a convention error, scoring
nothing of it.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tumble
from tumble.engines import audit as engine_audit, registry
from tumble.engines.report import table_text
from tumble.engines.start import START_MATCH, Start, start_gaps
from tumble.physics import quaternion as quat
from tumble.physics.integrators import sample_times

#: every engine setting and Tumble's fourth-order method
SETTINGS = [name for name in registry.known() if not name.startswith("tumble:")] + ["tumble:rk4"]
#: a diagonal tensor in every order of its axes (its principal frame a permutation of the axes),
#: and two with products of inertia
TENSORS = {f"diag{list(p)}": np.diag(p) for p in itertools.permutations([2.1, 3.3, 1.4])}
TENSORS["products"] = np.array([[0.3, 0.02, -0.03], [0.02, 0.5, 0.04], [-0.03, 0.04, 0.4]])
TENSORS["products-large"] = np.array([[2.0, 0.4, -0.3], [0.4, 2.4, 0.2], [-0.3, 0.2, 1.5]])
#: turned starts: a general one, and a half turn about a diagonal (another permutation-like frame)
STARTS = {"turned": np.array([0.9, 0.3, -0.2, 0.25]) / np.linalg.norm([0.9, 0.3, -0.2, 0.25]),
          "half-turn": np.array([0.0, 1.0, 1.0, 0.0]) / np.sqrt(2.0)}
#: omega off every principal axis, so that a tensor in the wrong frame turns it another way
OMEGA = np.array([2.0, 1.5, -1.0])
TIMES = sample_times(0.02, 0.01)


def start_for(tensor, q0) -> Start:
    return Start(1.3, tensor, np.array([0.2, -0.1, 1.0]), np.array([0.5, 0.0, 2.0]), q0, OMEGA,
                 np.array([0.0, 0.0, -9.81]))


@pytest.fixture(scope="module")
def first_samples():
    """(setting, tensor, start) -> (the start, the engine's trajectory), every run made once."""
    out = {}
    for tensor_name, tensor in TENSORS.items():
        for start_name, q0 in STARTS.items():
            start = start_for(tensor, q0)
            for name in SETTINGS:
                (engine, setting), = registry.parse(name)
                out[name, tensor_name, start_name] = start, registry.run(engine, setting, start, 0.001, TIMES)[0]
    return out


@pytest.mark.slow
@pytest.mark.engines
@pytest.mark.parametrize("tensor_name", list(TENSORS))
@pytest.mark.parametrize("name", SETTINGS)
def test_every_engine_starts_on_the_bodys_start(first_samples, name, tensor_name):
    for start_name in STARTS:
        start, traj = first_samples[name, tensor_name, start_name]
        gaps = start_gaps(start, traj.q[0], traj.w[0], traj.c[0])
        assert max(gaps.values()) <= START_MATCH, (start_name, gaps)


@pytest.mark.slow
@pytest.mark.engines
@pytest.mark.parametrize("tensor_name", list(TENSORS))
@pytest.mark.parametrize("name", SETTINGS)
def test_every_engine_turns_the_body_as_its_inertia_says(first_samples, name, tensor_name):
    # a body loaded with its inertia in another frame starts right but turns wrong. Over the first
    # 10 ms (10 steps), omega follows Euler's I w' = (I w) x w (PyBullet's default damping adds
    # -k (1 + |w|) w, k = 0.04: the law its adapter test measures); a first-order scheme is off by
    # about |w|^3 dt h / 2, a few thousandths of the change here, while a tensor in another frame
    # (its axes permuted) changes it by the order of the change itself
    from scipy.integrate import solve_ivp

    from tumble.engines.pybullet_adapter import DAMPING

    h = TIMES[1]
    damping = DAMPING if name == "pybullet" else 0.0

    def omega_at_h(tensor):
        def rhs(_t, w):
            return np.linalg.solve(tensor, np.cross(tensor @ w, w)) - damping * (1 + np.linalg.norm(w)) * w
        return solve_ivp(rhs, (0.0, h), OMEGA, rtol=1e-12, atol=1e-14).y[:, -1]

    tensor = TENSORS[tensor_name]
    expected = omega_at_h(tensor)
    allowed = 0.05 * np.linalg.norm(expected - OMEGA)
    permuted = tensor[np.ix_([1, 2, 0], [1, 2, 0])]
    assert np.linalg.norm(omega_at_h(permuted) - expected) > 3 * allowed  # the check tells a wrong frame apart
    for start_name in STARTS:
        _, traj = first_samples[name, tensor_name, start_name]
        assert np.linalg.norm(traj.w[1] - expected) < allowed, (start_name, traj.w[1], expected)


def turned(module, angle=np.pi / 2):
    """``module.run`` whose trajectory is turned by ``angle`` about the body's x axis (a convention error)."""
    original = module.run

    def run(start, setting, dt, times):
        traj, settings, *rest = original(start, setting, dt, times)
        turn = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), angle)
        traj = type(traj)(traj.t, traj.c, traj.v, quat.multiply(traj.q, turn), quat.rotate_inverse(turn, traj.w))
        return (traj, settings, *rest)
    return run


def test_a_run_that_does_not_start_on_the_start_is_reported_and_scored_as_nothing(monkeypatch):
    module = registry.adapters()["tumble"]
    monkeypatch.setattr(module, "run", turned(module))
    result = engine_audit.run_audit(tumble.load("t-handle"), "tumble:rk4,tumble:splitting", [0.01], 1.0, 0.01)
    bad = result.summary["runs"][0]
    assert bad["not_scored"].startswith("a convention error at the start: the first sample is not the body's start")
    assert "the orientation 1.57 rad" in bad["not_scored"]
    for key in ("max_orientation_error", "final_L_drift", "final_E_drift", "separatrix_ratio", "flips", "com_error"):
        assert bad[key] is None, key
    body, first = bad["convention_error"]["body"], bad["convention_error"]["first_sample"]
    assert bad["convention_error"]["at"] == "start"
    assert np.allclose(body["q"], [1, 0, 0, 0]) and np.allclose(first["q"], [np.cos(np.pi / 4), np.sin(np.pi / 4), 0, 0])
    text = table_text(result.summary)
    assert "tumble:rk4 dt 0.01: not scored: a convention error at the start" in text
    assert "tumble:rk4 dt 0.01: body: q (1, 0, 0, 0)" in text and "tumble:rk4 dt 0.01: first sample: q (0.707" in text
    # a plot draws nothing of it (its orientation error is NaN)
    assert np.isnan(result.runs[0].series["orientation_error"]).all()


def test_a_turn_of_round_off_is_still_the_start(monkeypatch):
    module = registry.adapters()["tumble"]
    monkeypatch.setattr(module, "run", turned(module, 1e-12))
    result = engine_audit.run_audit(tumble.load("t-handle"), "tumble:rk4", [0.01], 1.0, 0.01)
    assert result.summary["runs"][0]["not_scored"] is None


def test_a_file_whose_omega_or_centre_of_mass_is_not_the_start_is_refused():
    sc = tumble.load("t-handle")
    from tumble.physics.reference import ExactReference

    t = sample_times(1.0, 0.01)
    c, q, w = ExactReference(sc.model, sc.initial_state).at(t)
    ok = tumble.audit_trajectory(sc, {"t": t, "q": q, "w": w, "c": c})
    assert ok["runs"][0]["max_orientation_error"] < 1e-9
    with pytest.raises(tumble.ParameterError, match=r"omega \(0\.2, 0, 6\.1\) where the scenario has \(0\.2, 0, 6\)"):
        tumble.audit_trajectory(sc, {"t": t, "q": q, "w": w + np.array([0.0, 0.0, 0.1]), "c": c})
    with pytest.raises(tumble.ParameterError, match="the centre of mass .* relative off"):
        tumble.audit_trajectory(sc, {"t": t, "q": q, "w": w, "c": c + 0.5})


@pytest.mark.slow
@pytest.mark.engines
def test_pybullet_runs_a_permuted_body_as_pybullet_set_up_by_hand_does():
    # the body: diagonal [2.1, 3.3, 1.4], its principal frame a permutation of its axes. Set up by
    # hand, PyBullet takes the tensor as it is (the body's own axes are principal): the adapter, which
    # loads the principal frame, must give the same run (it flipped five times, turned by pi/2)
    import os
    import tempfile

    import pybullet

    tensor, w0 = np.diag([2.1, 3.3, 1.4]), np.array([3.1, 0.05, -0.04])
    start = Start(1.0, tensor, np.zeros(3), np.zeros(3), np.array([1.0, 0, 0, 0]), w0, np.zeros(3))
    times = sample_times(6.0, 0.01)
    ours = registry.run("pybullet", "default", start, 0.001, times)[0]

    client = pybullet.connect(pybullet.DIRECT)
    try:
        fd, path = tempfile.mkstemp(suffix=".urdf")
        with os.fdopen(fd, "w") as fh:
            fh.write('<?xml version="1.0"?><robot name="hand"><link name="body"><inertial><origin xyz="0 0 0" '
                     'rpy="0 0 0"/><mass value="1.0"/><inertia ixx="2.1" ixy="0" ixz="0" iyy="3.3" iyz="0" '
                     'izz="1.4"/></inertial></link></robot>')
        body = pybullet.loadURDF(path, flags=pybullet.URDF_USE_INERTIA_FROM_FILE, physicsClientId=client)
        os.unlink(path)
        pybullet.setGravity(0, 0, 0, physicsClientId=client)
        pybullet.setTimeStep(0.001, physicsClientId=client)
        pybullet.resetBaseVelocity(body, [0, 0, 0], w0.tolist(), physicsClientId=client)
        hand = [w0]
        for _ in range(len(times) - 1):
            for _ in range(10):
                pybullet.stepSimulation(physicsClientId=client)
            x, y, z, w = pybullet.getBasePositionAndOrientation(body, physicsClientId=client)[1]
            hand.append(quat.rotate_inverse(np.array([w, x, y, z]),
                                            np.array(pybullet.getBaseVelocity(body, physicsClientId=client)[1])))
    finally:
        pybullet.disconnect(client)
    # the two differ only in how the frame is represented: round-off, grown by the spin's sensitivity
    # near its separatrix over 6 s (a turned start differs by the order of |omega| itself)
    assert np.max(np.abs(np.array(hand) - ours.w)) < 1e-6 * np.linalg.norm(w0)
