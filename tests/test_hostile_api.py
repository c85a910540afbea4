"""Hostile round: drift figures at extreme scales, an executor's garbage, and the small
refusals of the command line (a FIFO as a mesh, a window that starts negative, the number
rule as the README states it)."""

from __future__ import annotations

import dataclasses
import os
import re
import warnings

import numpy as np
import pytest

import tumble
from conftest import run_measured
from tumble import ParameterError
from tumble.physics import diagnostics

# ------------------------------------------------------------------ drift figures


def box_at_scale(scale: float, duration: float = 5.0):
    """t-handle's spin on a 1 x 2 x 3 box whose mass and size are multiplied by ``scale``."""
    sc = tumble.load("t-handle")
    body = dataclasses.replace(sc.body, shape="box", mass=1.0 * scale, size=(0.1 * scale, 0.2 * scale, 0.3 * scale))
    sc = sc.replace(body=body)
    return sc.replace(solver=dataclasses.replace(sc.solver, duration=duration))


@pytest.mark.parametrize("factor", [2.0 ** -996, 2.0 ** 996])
def test_a_drift_is_the_same_whatever_the_scale_of_the_series(factor):
    """Scaled by a power of two (exact in floating point), the relative drifts are the same:
    no underflow to 0 at 1e-300, no overflow to NaN at 1e300."""
    rng = np.random.default_rng(2)
    L = np.array([1.0, -2.0, 0.5]) + 1e-3 * rng.normal(size=(200, 3))
    E = 1.0 + 1e-3 * rng.normal(size=200)
    d1 = diagnostics.Diagnostics(np.arange(200.0), np.zeros((200, 3)), L, E, np.zeros(200), E)
    d2 = diagnostics.Diagnostics(np.arange(200.0), np.zeros((200, 3)), L * factor, E * factor, np.zeros(200),
                                 E * factor)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in ("L_drift", "L_norm_drift", "E_drift"):
            a, b = getattr(d1, name), getattr(d2, name)
            assert np.all(np.isfinite(b)) and np.max(np.abs(a)) > 1e-4
            np.testing.assert_allclose(b, a, rtol=1e-12, atol=0)


@pytest.mark.parametrize("scale", [1e100, 1e-100])
def test_a_body_of_mass_and_size_far_from_one_has_the_drifts_of_one(scale):
    """The same spin on the same shape: the drifts are rounding-level at every scale (no NaN,
    no zero, no RuntimeWarning), and the flips come at the same times."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        one = tumble.simulate(box_at_scale(1.0)).figures
        far = tumble.simulate(box_at_scale(scale)).figures
    for key in ("max_E_drift", "max_L_drift", "max_L_norm_drift"):
        assert np.isfinite(far[key]) and far[key] > 0, (key, far[key])
        assert far[key] < 1e-9 and one[key] < 1e-9  # rk4 at dt 1e-3 over 5 s: rounding-level
    np.testing.assert_allclose(far["flip_times"], one["flip_times"], atol=1e-6)


def test_flip_shares_hold_at_any_scale_of_the_body():
    body = box_at_scale(1.0).rigid_body
    big = box_at_scale(1e100).rigid_body
    w = np.array([[0.2, 6.0, 0.1], [1.0, 0.1, 0.1]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(diagnostics.intermediate_peak_share(big, w * 1e150),
                                   diagnostics.intermediate_peak_share(body, w), rtol=1e-9)


# ------------------------------------------------------------------ an executor's garbage


class Garbage:
    """An executor whose map returns ``make(args)`` for each chunk (or ``whole(list)`` for the lot)."""

    def __init__(self, make=None, whole=None):
        self.make, self.whole = make, whole

    def map(self, fn, *iterables):
        chunks = list(zip(*iterables))
        if self.whole is not None:
            return self.whole(chunks)
        return [self.make(args) for args in chunks]


@pytest.mark.parametrize("executor, words", [
    (Garbage(make=lambda args: np.float64(0.5)), "shape ()"),
    (Garbage(whole=lambda chunks: []), "fewer results than chunks"),
    (Garbage(make=lambda args: np.full(len(args[2]), np.nan)), "NaN, infinite or out-of-range"),
    (Garbage(make=lambda args: np.full(len(args[2]), 7.0)), "NaN, infinite or out-of-range"),
    (Garbage(make=lambda args: "wander"), "returned a str"),
    (Garbage(whole=lambda chunks: 42), "an iterable of results"),
    (Garbage(make=lambda args: np.zeros(len(args[2]) + 1)), "shape"),
])
def test_an_executors_garbage_is_one_line_naming_the_executor(executor, words):
    with pytest.raises(ParameterError, match=f"executor must .*{words}") as err:
        tumble.stability("t-handle", directions=50, duration=1.0, executor=executor)
    assert "\n" not in str(err.value)


def test_an_honest_executor_gives_the_in_process_map():
    class Serial:
        def map(self, fn, *iterables):
            return map(fn, *iterables)

    alone = tumble.stability("t-handle", directions=50, duration=1.0)
    mapped = tumble.stability("t-handle", directions=50, duration=1.0, executor=Serial())
    np.testing.assert_array_equal(mapped["wander"], alone["wander"])


# ------------------------------------------------------------------ small refusals


def test_a_fifo_given_as_a_mesh_is_named_as_such(tmp_path):
    fifo = tmp_path / "part.stl"
    os.mkfifo(fifo)
    scenario = tmp_path / "fifo.toml"
    scenario.write_text(f'[body]\nshape = "mesh"\nmesh = "{fifo}"\nmass = 1.0\n'
                        '[initial]\nangular_velocity = [0.1, 5.0, 0.1]\n', encoding="utf-8")
    run = run_measured("inspect", scenario, deadline_s=60)
    assert run.returncode == 2 and len(run.lines()) == 1, run.stderr
    assert "pipe, socket or device" in run.stderr and "nothing at" not in run.stderr


@pytest.mark.parametrize("window, words", [("-1:1", "recording must hold a free flight"),
                                           ("-2.5:-1", "--flights must lie within the recording"),
                                           ("-.5:-0.1", "--flights must lie within the recording")])
def test_a_window_that_starts_negative_reaches_the_windows_rule(tmp_path, window, words):
    """(A still phone's recording: a window over it is taken and holds no flight.)"""
    t = np.arange(300) * 0.01
    path = tmp_path / "r.csv"
    path.write_text("Time (s),x,y,z\n" + "".join(f"{x:.2f},0.1,0.2,0.3\n" for x in t), encoding="utf-8")
    run = run_measured("fit", path, "--flights", window, "--drag", "none", deadline_s=60)
    assert run.returncode == 2 and len(run.lines()) == 1, run.stderr
    assert words in run.stderr and "expected one argument" not in run.stderr


def test_the_readme_says_what_the_number_rule_does(tmp_path):
    """``1_000`` is refused on the command line; a scenario file's TOML ``1_000.0`` is TOML's own
    way to write 1000 (the README says so)."""
    run = run_measured("simulate", "t-handle", "--duration", "1_000", "--out", tmp_path / "x.csv", deadline_s=60)
    assert run.returncode == 2 and "--duration must" in run.stderr
    scenario = tmp_path / "s.toml"
    text = tumble.load("t-handle").to_dict()
    scenario.write_text('[body]\nshape = "box"\nmass = 1_000.0\nsize = [0.1, 0.2, 0.3]\n'
                        '[initial]\nangular_velocity = [0.1, 5.0, 0.1]\n', encoding="utf-8")
    assert tumble.load(str(scenario)).body.mass == 1000.0 and text
    readme = (tumble_root() / "README.md").read_text(encoding="utf-8")
    assert "`1_000.0` is a valid way to write" in readme and "refused" in readme


def tumble_root():
    from conftest import ROOT

    return ROOT


def test_a_fitted_body_at_inertia_scale_1e_300_prints_the_drifts_of_scale_1(tmp_path):
    """The trial's case: ``--inertia-scale 1e-300`` printed a |L| drift of 0.000e+00 where scale 1
    printed 1.784e-01 for the same rates (a drag torque drains L; the norm's squares underflowed)."""
    from tumble.throws.benches import synthetic as syn

    rng = np.random.default_rng(7)
    truth = syn.Truth.rotated(2.0)
    t, w, _ = syn.make_recording(truth, syn.throw_mix(truth, 4, rng), rng, (0.6, 1.0))
    folder = syn.write_phyphox(tmp_path / "throws", t, w)
    printed = {}
    for scale in ("1", "1e-300"):
        fit = run_measured("fit", folder, "--inertia-scale", scale, "--out", tmp_path / f"fit{scale}.toml",
                           deadline_s=120)
        assert fit.returncode == 0, fit.stderr
        run = run_measured("simulate", tmp_path / f"fit{scale}.toml", "--out", tmp_path / f"run{scale}.csv",
                           deadline_s=120)
        assert run.returncode == 0 and "Warning" not in run.stderr, run.stderr
        printed[scale] = {m.group(1): float(m.group(2)) for m in
                          re.finditer(r"^\| (max relative .+ drift) \| ([-+0-9.e]+) \|$", run.stdout, re.M)}
        assert len(printed[scale]) == 3, run.stdout
    assert printed["1"]["max relative |L| drift"] > 1e-3  # the drag drains L: a drift worth printing
    for key, value in printed["1"].items():
        assert printed["1e-300"][key] == pytest.approx(value, rel=1e-6), key
