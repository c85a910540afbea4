"""Finding flights does not depend on ``--axes``: a sensor turned up to 10 degrees from the body's
principal axes gives the same flights with either option, every throw found, and ``--axes sensor``
says when it fits clearly worse than a turned frame (naming ``--axes fit``); an aligned sensor
gets no such note."""

from __future__ import annotations

import numpy as np
import pytest

from tumble.throws.benches import synthetic as syn
from tumble.throws.benches.fit_bench import START_TOLERANCE_S, recording_from_arrays
from tumble.throws.fitting.fit import fit_recordings
from conftest import tumble


def _session(degrees: float, seed: int):
    rng = np.random.default_rng(seed)
    truth = syn.Truth.rotated(degrees) if degrees else syn.Truth()
    rates = [syn.spin_near(truth, 1, rng.uniform(3.0, 15.0), rng.uniform(12.0, 24.0), rng) for _ in range(5)]
    t, w, throws = syn.make_recording(truth, rates, rng, flight_s=1.0)
    return recording_from_arrays("turned", t, w), throws


@pytest.mark.slow  # fits a session with either option
@pytest.mark.parametrize("degrees", [2.0, 5.0, 10.0])
def test_a_turned_sensor_gives_the_same_flights_with_either_option(degrees):
    rec, throws = _session(degrees, seed=27 + int(degrees))
    turned = fit_recordings([rec], axes_mode="fit")
    sensor = fit_recordings([rec], axes_mode="sensor")
    assert [(f.i0, f.i1, f.excluded) for f in sensor.flights] == [(f.i0, f.i1, f.excluded) for f in turned.flights]
    # every throw found once, its start at its first whole sample (as fit-bench counts)
    starts = np.array([f.start for f in sensor.flights])
    assert len(starts) == len(throws)
    for th in throws:
        first = rec.t[(rec.t >= th.start - 1e-9) & ~rec.saturated][0]
        assert np.min(np.abs(starts - first)) <= START_TOLERANCE_S
    # the sensor's axes fit clearly worse than the turned frame: the fit says so
    assert sensor.rms_relative > 2 * turned.rms_relative
    assert len(sensor.notes) == 1 and "--axes fit" in sensor.notes[0] and not turned.notes


def test_an_aligned_sensor_gets_no_note():
    rec, _ = _session(0.0, seed=5)
    sensor = fit_recordings([rec], axes_mode="sensor")
    assert sensor.notes == () and len(sensor.flights) == 5


def test_the_command_line_prints_the_note(tmp_path):
        
    rec, _ = _session(5.0, seed=32)
    path = syn.write_phyphox(tmp_path / "turned", rec.t, rec.w)
    res = tumble("fit", path, timeout=300, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    notes = [line for line in res.stderr.splitlines() if line.startswith("tumble: note: ")]
    assert len(notes) == 1 and "fit with --axes fit" in notes[0]
