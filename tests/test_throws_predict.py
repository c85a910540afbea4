"""tumble predict and predict_flights: the JSON contract, nothing past start + lead used, windows as given.

A body fitted on 4 throws predicts 4 others. With 0.01 rad/s of noise on the first 0.1 s (ten
samples) omega0 comes within about 0.01 rad/s of the truth, and the first flip of a throw
15 degrees off the intermediate axis within a few tenths of a percent; 2% is a loose bound on
a correct prediction and a tight one on a wrong body (the fit-bench table: 7% without drag).
"""

import json

import numpy as np
import pytest
from conftest import refused, tumble_here

from tumble.cli.core import main
from tumble.scenario import load
from tumble.throws.benches import synthetic as syn
from tumble.throws.benches.fit_bench import recording_from_arrays
from tumble.throws.fitting.predict import FLIGHT_KEYS, FittedBody, predict_flights

TRUTH = syn.Truth.rotated(2.0)


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """(FIT.toml, a recording of later throws as a phyphox folder, their truth)."""
    folder = tmp_path_factory.mktemp("predict")
    rng = np.random.default_rng(7)
    rates = [syn.spin_near(TRUTH, 1, a, s, rng) for a, s in ((5, 16.0), (9, 20.0), (12, 18.0), (7, 22.0))]
    t, w, _ = syn.make_recording(TRUTH, rates, rng, flight_s=0.9)
    session = syn.write_phyphox(folder / "session", t, w)
    toml = folder / "FIT.toml"
    assert main(["fit", str(session), "--axes", "fit", "--out", str(toml), "--json"]) == 0
    rates = [syn.spin_near(TRUTH, 1, a, s, rng) for a, s in ((4, 18.0), (10, 15.0), (6, 24.0), (14, 19.0))]
    t, w, throws = syn.make_recording(TRUTH, rates, rng, flight_s=(0.8, 0.95), world=syn.RealWorld(still=True))
    later = syn.write_phyphox(folder / "later", t, w)
    return toml, later, t, w, throws


def _true_flip(th):
    times = np.arange(th.start, th.start + 2.0, 1e-4)
    path = syn.free_flight(TRUTH, th.omega0, times) @ TRUTH.axes[:, 1]
    return 1e-4 * np.flatnonzero(np.sign(path) != np.sign(path[0]))[0]


def test_json_keys_and_flip_times(fitted, capsys):
    toml, later, _, _, throws = fitted
    assert main(["predict", str(toml), str(later), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert list(report) == ["flights", "seconds"] and report["seconds"] >= 0
    assert len(report["flights"]) == len(throws)
    for f, th in zip(report["flights"], throws):
        assert tuple(f) == FLIGHT_KEYS
        assert f["recording"] == str(later) and f["start"] < f["end"] and len(f["omega0"]) == 3
        assert abs(f["start"] - th.start) < 0.02
        true = _true_flip(th) - (f["start"] - th.start)
        assert abs(f["flip_time_predicted"] - true) < 0.02 * true
        assert abs(f["flip_time_measured"] - true) < 0.02 * true
        assert 0 < f["rms_relative"] < 0.01


def test_nothing_after_start_plus_lead_is_used(fitted):
    """Cut the recording 0.1 s after each release: the prediction is the same, and the
    measured flip (never in the data) is null."""
    toml, _, t, w, throws = fitted
    body = FittedBody.of(load(str(toml)))
    whole = recording_from_arrays("whole", t, w)
    windows = [(th.start, th.start + 0.5) for th in throws]
    full = predict_flights(body, [whole], windows, lead=0.1, horizon=2.0)
    for th, f in zip(throws, full):
        keep = t <= f["start"] + 0.1 + 1e-12
        cut = recording_from_arrays("whole", t[keep], w[keep])
        (short,) = [g for g in predict_flights(body, [cut], [(th.start, th.start + 0.5)]) if g["start"] == f["start"]]
        np.testing.assert_allclose(short["omega0"], f["omega0"], rtol=0, atol=1e-12)
        assert short["flip_time_predicted"] == f["flip_time_predicted"]
        assert short["flip_time_measured"] is None and f["flip_time_measured"] is not None
        assert short["end"] <= f["start"] + 0.1 + 1e-12


def test_windows_are_flights_exactly_as_given(fitted, capsys):
    toml, later, t, _, throws = fitted
    lo, hi = throws[1].start + 0.001, throws[1].start + 0.1
    assert main(["predict", str(toml), str(later), "--flights", f"{lo}:{hi}", "--json"]) == 0
    (f,) = json.loads(capsys.readouterr().out)["flights"]
    inside = t[(t >= lo) & (t <= hi)]
    assert f["start"] == pytest.approx(inside[0], abs=1e-9) and f["end"] == pytest.approx(inside[-1], abs=1e-9)
    assert f["flip_time_predicted"] is not None and f["flip_time_measured"] is None


def test_the_library_is_the_command(fitted, capsys):
    toml, later, _, _, _ = fitted
    assert main(["predict", str(toml), str(later), "--json", "--lead", "0.15", "--horizon", "1.5"]) == 0
    printed = json.loads(capsys.readouterr().out)["flights"]
    assert printed == predict_flights(load(str(toml)), [str(later)], "auto", lead=0.15, horizon=1.5)


def test_bad_lead_and_windows_are_one_line_exit_2(fitted, capsys):
    toml, later, _, _, _ = fitted
    for args in (["--lead", "0"], ["--horizon", "1e9"], ["--flights", "100:101"], ["--lead", "nan"]):
        assert refused(tumble_here(capsys, "predict", toml, later, *args)).startswith("tumble: error:")


def test_auto_finds_the_launch_of_a_clip_ending_just_after_the_release(fitted):
    """A clip from the hand to 0.1 s after the release: too short for a fit's flight, but cut
    by the recording's end, so predict still finds it and predicts the flip it never shows."""
    toml, _, t, w, throws = fitted
    body = FittedBody.of(load(str(toml)))
    th = throws[2]
    keep = (t >= th.start - 0.6) & (t <= th.start + 0.1)
    (f,) = predict_flights(body, [recording_from_arrays("clip", t[keep], w[keep])])
    assert abs(f["start"] - th.start) < 0.02 and f["flip_time_measured"] is None
    true = _true_flip(th) - (f["start"] - th.start)
    assert abs(f["flip_time_predicted"] - true) < 0.02 * true
