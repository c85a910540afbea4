"""Every recording a teacher is likely to have reads to the same numbers: whitespace tables with
comments, Unicode names, time in s/ms/us/ns and since 1970, rate columns in any order, deg/s,
phyphox's Android and iOS exports, Sensor Logger's, an Excel file beside its CSV."""

import math
import zipfile

import numpy as np
import pytest

from tumble.physics.errors import ParameterError
from tumble.throws.benches import synthetic as syn
from tumble.throws.recordings.reader import read_recording, read_recordings

PHYPHOX_HEADER = ["Time (s)", "Gyroscope x (rad/s)", "Gyroscope y (rad/s)", "Gyroscope z (rad/s)",
                  "Absolute (rad/s)"]


@pytest.fixture(scope="module")
def arrays():
    rng = np.random.default_rng(7)
    t = syn.stamps(2.0, rng)
    w = np.column_stack([np.sin(3 * t), 2 * np.cos(2 * t), 0.1 * t]) * 5
    return t, w


def _close(rec, t, w, rtol=1e-9):
    np.testing.assert_allclose(rec.t, t, rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(rec.w, w, rtol=rtol, atol=1e-12)


def _table(header, rows, sep=",", fmt="{:.10g}", decimal=".", quote=False):
    head = sep.join(f'"{h}"' if quote else h for h in header)
    body = [sep.join(fmt.format(v).replace(".", decimal) for v in row) for row in rows]
    return "\n".join([head, *body])


def test_whitespace_table_with_comments_and_a_unicode_hash_header(tmp_path, arrays):
    t, w = arrays
    lines = ["# thrown in the gym, 2026-01-05", "# phone taped to a racket", "#",
             "# t (s)     ωₓ (rad/s)   ω_y (rad/s)   ω_z (rad/s)"]
    lines += [f"{a:10.6f}  {b:+.9e}  {c:+.9e}\t{d:+.9e}" for a, (b, c, d) in zip(t, w)]
    lines.insert(30, "# the phone left the hand about here")
    path = tmp_path / "throw.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rec = read_recording(path)
    _close(rec, np.round(t, 6), w)


def test_plain_whitespace_header_line_with_units_in_brackets(tmp_path, arrays):
    t, w = arrays
    path = tmp_path / "table.dat"
    path.write_text(_table(["time [s]", "gyro x [deg/s]", "gyro y [deg/s]", "gyro z [deg/s]"],
                           np.column_stack([t, np.degrees(w)]), sep="   "))
    _close(read_recording(path), t, w)  # degrees per second read as such, returned in rad/s


@pytest.mark.parametrize("unit, scale", [("s", 1.0), ("ms", 1e3), ("us", 1e6), ("µs", 1e6), ("ns", 1e9)])
def test_time_in_any_unit_its_header_names(tmp_path, arrays, unit, scale):
    t, w = arrays
    path = tmp_path / "t.csv"
    path.write_text(_table([f"t ({unit})", "wx", "wy", "wz"], np.column_stack([t * scale, w]), fmt="{:.15g}"))
    _close(read_recording(path), t, w)


def test_an_unlabelled_time_in_ms_is_read_as_ms_with_a_note(tmp_path, arrays):
    t, w = arrays
    path = tmp_path / "t.csv"
    path.write_text(_table(["time", "wx", "wy", "wz"], np.column_stack([t * 1e3, w]), fmt="{:.15g}"))
    rec = read_recording(path)
    _close(rec, t, w)
    assert any("time read in ms" in n for n in rec.notes)


def test_rate_columns_in_any_order_and_degrees(tmp_path, arrays):
    t, w = arrays
    path = tmp_path / "order.csv"
    header = ["gyro_z (°/s)", "t", "gyro_x (°/s)", "temperature", "gyro_y (°/s)"]
    path.write_text(_table(header, np.column_stack([np.degrees(w[:, 2]), t, np.degrees(w[:, 0]),
                                                    np.full(len(t), 21.5), np.degrees(w[:, 1])]), fmt="{:.15g}"))
    _close(read_recording(path), t, w)


def _sensor_logger(t, w, elapsed=True):
    """Sensor Logger's Gyroscope.csv: time in ns since 1970, seconds_elapsed, then z, y, x (rad/s)."""
    epoch = 1_764_230_400_123_456_789
    ns = epoch + np.round(t * 1e9).astype(np.int64)
    header = ["time", "seconds_elapsed", "z", "y", "x"] if elapsed else ["time", "z", "y", "x"]
    rows = []
    for k in range(len(t)):
        cells = [str(int(ns[k]))] + ([f"{(ns[k] - epoch) / 1e9:.9f}"] if elapsed else [])
        cells += [f"{w[k, 2]:.12g}", f"{w[k, 1]:.12g}", f"{w[k, 0]:.12g}"]
        rows.append(",".join(cells))
    return "\n".join([",".join(header), *rows]) + "\n", ns, epoch


def test_sensor_logger_prefers_seconds_elapsed(tmp_path, arrays):
    t, w = arrays
    text, _, _ = _sensor_logger(t, w)
    path = tmp_path / "Gyroscope.csv"
    path.write_text(text)
    rec = read_recording(path)
    _close(rec, np.round(t * 1e9) / 1e9, w, rtol=1e-11)
    assert rec.t_offset == 0.0


def test_nanoseconds_since_1970_are_shifted_to_zero_exactly(tmp_path, arrays):
    t, w = arrays
    text, ns, epoch = _sensor_logger(t, w, elapsed=False)
    path = tmp_path / "Gyroscope.csv"
    path.write_text(text)
    rec = read_recording(path)
    # the integer stamps are subtracted before any float: spacing kept to the nanosecond
    np.testing.assert_array_equal(rec.t, (ns - ns[0]).astype(float) * 1e-9)
    assert math.isclose(rec.t_offset, epoch * 1e-9, rel_tol=1e-15)
    assert any("ns" in n for n in rec.notes) and any("subtracted" in n for n in rec.notes)


def test_sensor_logger_zip_reads_its_gyroscope_file(tmp_path, arrays):
    t, w = arrays
    text, _, _ = _sensor_logger(t, w)
    path = tmp_path / "session.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("Accelerometer.csv", "time,seconds_elapsed,z,y,x\n1,0,9.8,0,0\n")
        zf.writestr("GyroscopeUncalibrated.csv", "time,seconds_elapsed,z,y,x\n1,0,1,1,1\n")
        zf.writestr("Gyroscope.csv", text)
        zf.writestr("Metadata.csv", "version,device name\n3,phone\n")
    _close(read_recording(path), np.round(t * 1e9) / 1e9, w, rtol=1e-11)


def _phyphox_number(v, decimal="."):
    return syn._phyphox_number(v).replace(".", decimal)


def _android_zip(path, t, w, sep=",", decimal="."):
    """phyphox for Android: members at the top, a quoted header, 0.000000000E0 numbers."""
    norm = np.linalg.norm(w, axis=1)
    rows = [sep.join(_phyphox_number(float(v), decimal) for v in (ti, *wi, ni)) for ti, wi, ni in zip(t, w, norm)]
    raw = "\n".join([sep.join(f'"{h}"' for h in PHYPHOX_HEADER), *rows]) + "\n"
    events = sep.join(['"event"', '"experiment time"', '"system time"', '"system time text"']) + "\n"
    for name, when in (("START", 0.0), ("PAUSE", 1.0), ("START", 1.0), ("PAUSE", float(t[-1]) + 0.01)):
        events += sep.join([f'"{name}"', _phyphox_number(when, decimal), "1764230400" + decimal + "123",
                            '"2026-11-27 08:00:00.123 UTC+00:00"']) + "\n"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("Raw Data.csv", raw)
        zf.writestr("meta/device.csv", f'"property"{sep}"value"\n"deviceModel"{sep}"Pixel"\n')
        zf.writestr("meta/time.csv", events)
    return path


@pytest.mark.parametrize("sep, decimal", [(",", "."), ("\t", "."), (";", "."), ("\t", ","), (";", ",")])
def test_phyphox_android_zip_in_each_csv_flavour(tmp_path, arrays, sep, decimal):
    t, w = arrays
    rec = read_recording(_android_zip(tmp_path / "Gyroscope rotation rate 2026-11-27.zip", t, w, sep, decimal))
    _close(rec, t, w)
    assert rec.segment.max() == 1 and set(rec.segment[t < 1.0]) == {0}


def test_phyphox_ios_zip_with_a_folder_and_no_final_newline(tmp_path, arrays):
    """phyphox for iOS: the export sits in a folder inside the zip, numbers have 10 significant
    digits in scientific notation, and the last line has no newline."""
    t, w = arrays
    norm = np.linalg.norm(w, axis=1)
    rows = [",".join(f"{v:.9E}".replace("E-0", "E-").replace("E+0", "E").replace("E+", "E")
                     for v in (ti, *wi, ni)) for ti, wi, ni in zip(t, w, norm)]
    raw = ",".join(f'"{h}"' for h in PHYPHOX_HEADER) + "\n" + "\n".join(rows)
    path = tmp_path / "ios.zip"
    folder = "Gyroscope rotation rate 2026-11-27 09-00-00/"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(folder + "Raw Data.csv", raw)
        zf.writestr(folder + "meta/time.csv",
                    '"event","experiment time","system time","system time text"\n'
                    '"START",0.000000000E0,1764230400.000,"2026-11-27 09:00:00.000 UTC+01:00"')
        zf.writestr(folder + "meta/device.csv", '"property","value"\n"deviceModel","iPhone15,2"')
    rec = read_recording(path)
    _close(rec, t, w)
    assert set(rec.segment) == {0}


def test_phyphox_folder_and_single_file_export(tmp_path, arrays):
    t, w = arrays
    folder = syn.write_phyphox(tmp_path / "export", t, w)
    _close(read_recording(folder), t, w)
    single = tmp_path / "Gyroscope rotation rate.csv"
    single.write_text((folder / "Raw Data.csv").read_text())
    _close(read_recording(single), t, w)


def test_an_excel_file_beside_its_csv_is_read_once_with_a_note(tmp_path, arrays):
    t, w = arrays
    csv_path = tmp_path / "Gyroscope rotation rate.csv"
    csv_path.write_text(syn.raw_data_csv(t, w))
    xls = tmp_path / "Gyroscope rotation rate.xls"
    xls.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(500))  # an OLE2 (BIFF) header
    for paths in ([csv_path, xls], [xls, csv_path], [xls]):
        recs = read_recordings(paths)
        assert len(recs) == 1, paths
        _close(recs[0], t, w)
        assert recs[0].name == str(csv_path)
        assert any("xls" in n for n in recs[0].notes), recs[0].notes
    assert read_recordings([csv_path]) [0].notes == ()


def test_an_excel_file_alone_is_one_line(tmp_path):
    xls = tmp_path / "alone.xlsx"
    xls.write_bytes(b"PK\x03\x04" + bytes(100))
    with pytest.raises(ParameterError, match="must be a CSV export") as err:
        read_recording(xls)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("text, expected", [
    ("a,b,c,d\n1,2,3,4\n", "got 4 columns, none of them a time"),
    ("t,wx,wy\n1,2,3\n", "got no column for the z rate"),
    ("t,gyro x,wx,wy,wz\n1,2,3,4,5\n", "got 2 columns for the x rate (columns 2, 3)"),
    ("t,wx (rpm),wy,wz\n1,2,3,4\n", "column 2 (the x rate) must be in rad/s or deg/s"),
    ("1,2,3,4\n5,6,7,8\n", "must begin with a header that would name a time and three rates"),
])
def test_unknown_layouts_say_what_was_expected(tmp_path, text, expected):
    path = tmp_path / "odd.csv"
    path.write_text(text)
    with pytest.raises(ParameterError) as err:
        read_recording(path)
    message = str(err.value)
    assert expected in message and "\n" not in message, message
    assert "name a time and three rates" in message or "rad/s or deg/s" in message


def test_fit_counts_an_excel_twin_once(tmp_path, arrays, monkeypatch):
    from tumble.throws.fitting import fit

    t, w = arrays
    csv_path = tmp_path / "run.csv"
    csv_path.write_text(syn.raw_data_csv(t, w))
    (tmp_path / "run.xls").write_bytes(b"\xd0\xcf\x11\xe0")
    seen = []
    monkeypatch.setattr(fit, "fit_recordings", lambda recordings, *args, **kwargs: seen.append(recordings))
    fit.fit_paths([csv_path, tmp_path / "run.xls", csv_path])
    assert len(seen[0]) == 1 and len(seen[0][0].notes) == 2


def test_crlf_lines_blank_lines_and_a_line_of_spaces_are_skipped(tmp_path, arrays):
    t, w = arrays
    lines = syn.raw_data_csv(t, w).splitlines()
    lines.insert(20, " " * 12)
    lines.insert(40, "")
    path = tmp_path / "windows.csv"
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    rec = read_recording(path)
    _close(rec, t, w)
    path.write_bytes(("\r".join(lines) + "\r").encode())  # a Mac's old line ends
    _close(read_recording(path), t, w)
    bad = list(lines)
    bad[60] = "1.0,2.0"
    path.write_text("\n".join(bad))
    with pytest.raises(ParameterError, match="line 61 must have at least 4 fields, got 2"):
        read_recording(path)


def test_utf16_tab_separated_text_from_a_spreadsheet(tmp_path, arrays):
    t, w = arrays
    path = tmp_path / "unicode text.txt"
    text = _table(["time (s)", "ωx (°/s)", "ωy (°/s)", "ωz (°/s)"],
                  np.column_stack([t, np.degrees(w)]), sep="\t", fmt="{:.15g}", decimal=",")
    path.write_bytes(text.encode("utf-16"))  # with its byte order mark, as spreadsheets save it
    _close(read_recording(path), t, w)


def test_raw_data_given_alone_keeps_its_pauses_and_a_mac_zip_reads(tmp_path, arrays):
    t, w = arrays
    folder = syn.write_phyphox(tmp_path / "unpacked", t, w, events=[("START", 0.0), ("PAUSE", 1.0),
                                                                    ("START", 1.0)])
    rec = read_recording(folder / "Raw Data.csv")
    _close(rec, t, w)
    assert rec.segment.max() == 1
    path = tmp_path / "from a mac.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("export/Raw Data.csv", syn.raw_data_csv(t, w))
        zf.writestr("__MACOSX/export/._Raw Data.csv", b"\x00\x05\x16\x07 resource fork")  # Finder's extra
    _close(read_recording(path), t, w)


def test_a_space_separated_table_with_decimal_commas(tmp_path, arrays):
    t, w = arrays
    path = tmp_path / "komma.txt"
    path.write_text(_table(["t", "wx", "wy", "wz"], np.column_stack([t, w]), sep="  ", fmt="{:.15g}", decimal=","))
    _close(read_recording(path), t, w)


def test_line_numbers_hold_across_chunks_of_crlf_text(tmp_path, monkeypatch):
    """A \\r\\n split between two chunks is one line end: a bad cell far down is named by its line."""
    from tumble.throws.recordings import limits

    monkeypatch.setattr(limits, "CHUNK_BYTES", 61)  # many chunk boundaries, some inside "\r\n"
    rows = [f"{0.01 * k:.4f},1.0,2.0,3.0" for k in range(300)]
    rows[250] = "2.5000,1.0,x,3.0"
    path = tmp_path / "crlf.csv"
    path.write_bytes(("t,wx,wy,wz\r\n" + "\r\n".join(rows) + "\r\n").encode())
    with pytest.raises(ParameterError, match=r"crlf.csv line 252 column 3 \(the y rate\)"):
        read_recording(path)
