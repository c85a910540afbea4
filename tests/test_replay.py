"""``tumble replay``: a synthetic throw of a known body (200 Hz, no noise) replayed gives its true
orientation; flights are numbered as ``tumble fit`` lists them; the CSV's columns and first row;
the fitted model from the same start; clips without a window; one-line refusals."""

from __future__ import annotations

import json

import numpy as np
import pytest
from replay_throws import FLIGHT_S, LAUNCHES, SPACING, read_csv, write_throws

from tumble.cli.core import main
from tumble.physics import quaternion as quat

HEADER = ["t", "qw", "qx", "qy", "qz", "wx", "wy", "wz"]
MODEL_HEADER = HEADER + ["model_qw", "model_qx", "model_qy", "model_qz"]
#: the promise: the orientation within 2 milliradians over the flight (the integrator's own
#: error here is about 1e-5 rad: tests/test_replay_integrator.py)
TOLERANCE_RAD = 2e-3


@pytest.fixture(scope="module")
def throws(tmp_path_factory):
    """(recording folder, true flights, tumble fit's flights as --json lists them, FIT.toml)."""
    import contextlib
    import io

    folder = tmp_path_factory.mktemp("replay") / "throws"
    flights = write_throws(folder)
    fit_toml = folder.parent / "fit.toml"
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["fit", str(folder), "--json", "--out", str(fit_toml)]) == 0
    listed = json.loads(out.getvalue())["flights"]
    return folder, flights, listed, fit_toml


def _replay(capsys, *args) -> tuple[int, str, str]:
    code = main(["replay", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.slow  # replays every flight of the module recordings
def test_every_flight_is_replayed_within_two_milliradians_of_the_truth(throws, tmp_path, capsys):
    folder, flights, listed, _ = throws
    assert len(listed) == len(LAUNCHES)
    for number, row in enumerate(listed, start=1):
        out = tmp_path / f"flight{number}.csv"
        code, said, err = _replay(capsys, folder, "--flight", number, "--out", out)
        assert code == 0, err
        assert f"wrote {out}" in said
        header, table = read_csv(out)
        assert header == HEADER
        t, q, w = table[:, 0], table[:, 1:5], table[:, 5:8]
        # the flight tumble fit lists as number N, one row per measured sample of it
        assert t[0] == pytest.approx(row["start"], abs=1e-12) and t[-1] == pytest.approx(row["end"], abs=1e-12)
        assert np.allclose(np.diff(t), SPACING, atol=1e-9)
        assert np.array_equal(q[0], [1.0, 0.0, 0.0, 0.0])
        truth = next(f for f in flights if f.t[0] - 1e-9 <= t[0] <= f.t[-1])
        inside = t <= truth.t[-1] + 1e-9  # the finder may keep a sample of the catch: not free flight
        assert inside.sum() >= 0.9 * FLIGHT_S / SPACING
        angle = quat.angle_between(truth.relative(t[0], t[inside]), q[inside])
        assert angle.max() < TOLERANCE_RAD, (number, angle.max())
        # omega as measured, row by row
        rec_t, rec_w = _measured(folder)
        rows = np.searchsorted(rec_t, t - 1e-9)
        assert np.allclose(rec_t[rows], t, atol=1e-12) and np.array_equal(w, rec_w[rows])
        assert np.all(np.abs(np.linalg.norm(q, axis=1) - 1.0) < 1e-12)


def _measured(folder):
    from tumble.throws.recordings.reader import read_recording

    rec = read_recording(folder)
    return rec.t, rec.w


def test_with_a_fit_the_model_flies_from_the_same_start_beside_the_measured(throws, tmp_path, capsys):
    folder, flights, listed, fit_toml = throws
    out = tmp_path / "model.csv"
    code, _, err = _replay(capsys, folder, "--fit", fit_toml, "--flight", 2, "--out", out)
    assert code == 0, err
    header, table = read_csv(out)
    assert header == MODEL_HEADER
    q, model = table[:, 1:5], table[:, 8:12]
    assert np.allclose(model[0], [1.0, 0.0, 0.0, 0.0], atol=1e-15)
    # the fit recovers this noise-free body closely: the model stays with the measured flight
    # through both flips (a model missing a flip, or late by 2% of its half period, is 0.1-3 rad off)
    assert quat.angle_between(q, model).max() < 0.05


@pytest.mark.slow  # replays every flight
def test_the_replay_starts_the_model_at_the_measured_rate_and_the_identity(throws):
    import tumble
    from tumble.api.functions import replay

    folder, _, listed, fit_toml = throws
    flight = replay(str(folder), fit=str(fit_toml), flight=3)
    assert flight.number == 3 and flight.t[0] == pytest.approx(listed[2]["start"], abs=1e-12)
    q, w = flight.model_at(flight.t[:1])
    assert np.allclose(q[0], [1, 0, 0, 0]) and np.allclose(w[0], flight.w_start)
    assert np.linalg.norm(flight.w_start - flight.w[0]) < 1e-3 * np.linalg.norm(flight.w[0])
    # the front door takes a Fit as well as a FIT.toml, and refuses a bad flight number in one line
    again = tumble.replay(str(folder), fit=tumble.fit(str(folder)), flight=3)
    assert np.array_equal(again.t, flight.t) and np.array_equal(again.q, flight.q)
    assert quat.angle_between(again.model_at(again.t)[0], flight.model_at(flight.t)[0]).max() < 1e-6
    with pytest.raises(tumble.ParameterError, match=r"^--flight must be a whole number >= 1"):
        tumble.replay(str(folder), flight=True)


def test_a_clip_is_written_without_a_window(throws, tmp_path, capsys, monkeypatch):
    import imageio.v3 as iio

    folder, _, listed, fit_toml = throws
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    out = tmp_path / "flight.gif"
    code, said, err = _replay(capsys, folder, "--fit", fit_toml, "--speed", "1", "--out", out)
    assert code == 0, err
    frames = iio.imread(out, index=None)
    duration = listed[0]["end"] - listed[0]["start"]
    assert len(frames) == round(duration * 20)  # the whole flight at speed 1, 20 fps (a GIF's default)
    assert frames.shape[1:3] == (360, 640)
    # the object is drawn: the middle of the scene is not all background
    assert frames[len(frames) // 2][100:300, 100:300].std() > 5


def test_bad_input_is_one_line_and_exit_2(throws, tmp_path, capsys):
    folder, _, listed, _ = throws
    out = tmp_path / "x.csv"
    code, _, err = _replay(capsys, folder, "--flight", 9, "--out", out)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "--flight must be a flight number from 1 to 3" in err and "there are 3 flights" in err and "got 9" in err
    for args, field in (((folder, "--flight", "0"), "--flight"), ((folder, "--flight", "1.5"), "--flight"),
                        ((tmp_path / "missing", ), "missing"), ((folder, "--fit", tmp_path / "no.toml"), "no.toml"),
                        ((folder, "--speed", "0"), "--speed")):
        code, _, err = _replay(capsys, *args, "--out", out)
        assert code == 2 and len(err.strip().splitlines()) == 1 and field in err, err
    code, _, err = _replay(capsys, folder, "--out", tmp_path / "x.txt")
    assert code == 2 and "--out must end in .mp4 or .gif or .csv" in err
    # a recording of a phone lying still holds no flight: said in one line, as tumble fit says it
    from tumble.throws.benches.synthetic import write_phyphox

    still = write_phyphox(tmp_path / "still", np.arange(0.0, 5.0, SPACING), np.zeros((1000, 3)))
    code, _, err = _replay(capsys, still, "--out", out)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "hold a free flight" in err, err
    assert not out.exists()


def test_the_window_without_a_display_is_refused_in_one_line(throws, capsys, monkeypatch):
    folder, *_ = throws
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    code, _, err = _replay(capsys, folder)
    assert code == 2 and "no display" in err and len(err.strip().splitlines()) == 1
