"""Gyroscope recordings: every format reads to the same numbers; every bad input is one line, exit 2, nothing written."""

import zipfile

import numpy as np
import pytest
from conftest import refused, tumble_here

from tumble.physics.errors import ParameterError
from tumble.throws.benches import synthetic as syn
from tumble.throws.recordings.reader import SATURATION_RAD_S, read_recording, saturated_samples

HEADER = '"Time (s)","Gyroscope x (rad/s)","Gyroscope y (rad/s)","Gyroscope z (rad/s)","Absolute (rad/s)"'


@pytest.fixture(scope="module")
def arrays():
    rng = np.random.default_rng(11)
    t = syn.stamps(2.0, rng)
    w = np.column_stack([np.sin(3 * t), 2 * np.cos(2 * t), 0.1 * t]) * 5
    return t, w


def _csv(t, w, sep=",", header=("t", "wx", "wy", "wz"), fmt="{:.9E}"):
    lines = [sep.join(header)]
    lines += [sep.join(fmt.format(v) for v in (ti, *wi)) for ti, wi in zip(t, w)]
    return "\n".join(lines) + "\n"


def test_phyphox_folder_reads_its_raw_data_and_pauses(tmp_path, arrays):
    t, w = arrays
    folder = syn.write_phyphox(tmp_path / "throws", t, w, events=[("START", 0.0), ("PAUSE", 0.8),
                                                                    ("START", 0.8), ("PAUSE", 2.5)])
    text = (folder / "Raw Data.csv").read_text()
    assert text.startswith(HEADER) and "E-1," in text  # phyphox's own number style, 3.292241666E-2
    rec = read_recording(folder)
    np.testing.assert_allclose(rec.t, t, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(rec.w, w, rtol=1e-9, atol=1e-12)
    assert set(rec.segment[t < 0.8]) == {0} and set(rec.segment[t >= 0.8]) == {1}
    assert rec.segment_bounds() == [(0, int(np.sum(t < 0.8))), (int(np.sum(t < 0.8)), len(t))]


def test_phyphox_zip_reads_like_its_folder(tmp_path, arrays):
    t, w = arrays
    folder = syn.write_phyphox(tmp_path / "Gyroscope 2026-01-01", t, w, events=[("START", 0.0), ("PAUSE", 1.0),
                                                                                 ("START", 1.0)])
    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w") as zf:
        for f in folder.rglob("*"):
            if f.is_file():
                zf.write(f, f.relative_to(tmp_path).as_posix())
    rec = read_recording(path)
    np.testing.assert_allclose(rec.w, w, rtol=1e-9)
    assert rec.segment.max() == 1 and rec.name == str(path)


@pytest.mark.parametrize("sep, header", [
    (",", HEADER.split(",")),                                   # phyphox "Gyroscope rotation rate" export
    ("\t", ["time", "wx", "wy", "wz"]),                         # tab separated
    (",", ["t", "wx", "wy", "wz"]),
    (",", ["timestamp", "gyro_x", "gyro_y", "gyro_z"]),
    (";", ["Time (s)", "x (rad/s)", "y (rad/s)", "z (rad/s)"]),  # phyphox "semicolon, decimal comma"
])
def test_single_csv_files_read(tmp_path, arrays, sep, header):
    t, w = arrays
    text = _csv(t, np.column_stack([w, np.linalg.norm(w, axis=1)]) if len(header) == 5 else w, sep,
                header=[h.strip('"') for h in header])
    if sep == ";":
        text = text.replace(".", ",")
    path = tmp_path / "Gyroscope rotation rate.csv"
    path.write_text(text)
    rec = read_recording(path)
    np.testing.assert_allclose(rec.t, t, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(rec.w, w, rtol=1e-9, atol=1e-12)
    assert set(rec.segment) == {0}


def test_degrees_and_milliseconds_are_converted(tmp_path, arrays):
    t, w = arrays
    path = tmp_path / "deg.csv"
    path.write_text(_csv(t * 1e3, np.degrees(w), header=("time (ms)", "gyro x (deg/s)", "gyro y (deg/s)",
                                                          "gyro z (deg/s)")))
    rec = read_recording(path)
    np.testing.assert_allclose(rec.t, t, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(rec.w, w, rtol=1e-9, atol=1e-12)


def test_clipped_samples_are_marked():
    w = np.zeros((12, 3))
    w[3, 0] = 34.9                    # at the 2000 deg/s limit
    w[6:8, 1] = -17.45                # a plateau at this recording's largest y: a 1000 deg/s sensor
    w[9, 2] = 20.0                    # one peak, no plateau: a real rate
    w[10, 2] = 19.0
    marked = saturated_samples(w)
    assert list(np.flatnonzero(marked)) == [3, 6, 7]
    assert SATURATION_RAD_S < 34.9


# ------------------------------------------------------------------ bad input: one line, exit 2, nothing written


def _bad_files(tmp_path, arrays):
    t, w = arrays
    good = _csv(t, w).splitlines()
    rest = syn.stamps(3.0, np.random.default_rng(1))
    cases = {
        "empty": ("", "must not be empty"),
        "blank lines only": ("\n\n", "must not be empty"),
        "header only": ("t,wx,wy,wz\n", "rows of data"),
        "unknown columns": ("a,b,c,d\n1,2,3,4\n", "name a time and three rates"),
        "non-numeric": ("\n".join(good[:5] + ["0.5,abc,1,2"] + good[6:]) + "\n", "column 2 (the x rate) must be a plain decimal number, got text of 3 characters"),
        "NaN": ("\n".join(good[:5] + ["0.5,NaN,1,2"] + good[6:]) + "\n", "column 2 (the x rate) must be a plain decimal number, got NaN"),
        "missing field": ("\n".join(good[:5] + ["0.5,1,2"] + good[6:]) + "\n", "have at least 4 fields"),
        "time not increasing": ("\n".join(good[:5] + [good[3]] + good[6:]) + "\n", "must increase from row to row"),
        "too short": ("\n".join(good[:6]) + "\n", "at least 10 samples"),
        "at rest, no flight": (_csv(rest, 0.2 * np.sin(np.outer(rest, [1, 2, 3]))), "hold a free flight"),
    }
    paths = {}
    for name, (text, rule) in cases.items():
        p = tmp_path / f"{name.replace(' ', '_')}.csv"
        p.write_text(text)
        paths[name] = (p, rule)
    return paths


def test_every_bad_file_is_one_line_through_the_reader(tmp_path, arrays):
    for name, (path, rule) in _bad_files(tmp_path, arrays).items():
        if name == "at rest, no flight":
            continue  # the reader accepts it; the fit finds nothing (below)
        with pytest.raises(ParameterError) as err:
            read_recording(path)
        message = str(err.value)
        assert "\n" not in message and rule in message, (name, message)


def test_every_bad_input_exits_2_with_one_line_and_writes_nothing(tmp_path, arrays, capsys):
    out, plot = tmp_path / "fit.toml", tmp_path / "fit.png"
    t, w = arrays
    good = tmp_path / "good.csv"
    good.write_text(_csv(t, w))
    runs = {name: ([str(path)], rule) for name, (path, rule) in _bad_files(tmp_path, arrays).items()}
    runs.update({
        "missing file": ([str(tmp_path / "nope.csv")], "be an existing phyphox folder"),
        "folder without Raw Data.csv": ([str(tmp_path)], "holding 'Raw Data.csv'"),
        "window outside the recording": ([str(good), "--flights", "50:51"], "lie within the recording"),
        "window syntax": ([str(good), "--flights", "1-2"], "--flights must be auto or START:END"),
        "window backwards": ([str(good), "--flights", "2:1"], "finite START < END"),
        "drag model": ([str(good), "--drag", "cubic"], "--drag must be one of none, linear, quadratic"),
        "axes": ([str(good), "--axes", "body"], "--axes must be one of sensor, fit"),
        "inertia scale": ([str(good), "--inertia-scale", "-1"], "--inertia-scale must be"),
        "out suffix": ([str(good), "--out", str(tmp_path / "fit.txt")], "--out must end in .toml"),
    })
    for name, (args, rule) in runs.items():
        extra = [] if "--out" in args else ["--out", str(out), "--plot", str(plot)]
        line = refused(tumble_here(capsys, "fit", *args, *extra), rule, unwritten=[out, plot])
        assert line.startswith("tumble: error: "), (name, line)
        assert not list(tmp_path.glob(".fit.*")), name  # no temporary file left either
