"""The sample recordings shipped in the package: listed by ``tumble samples``, each made
reproducibly by the synthetic generator with the real-world features it claims, each fitting to
the true body written beside it, and each name taken wherever a recording is."""

from __future__ import annotations

import json
import sys
import zipfile

import numpy as np
import pytest

from tumble.throws.benches import make_samples as mk
from tumble.throws.recordings.reader import read_recording, read_recordings
from tumble.throws.recordings.samples import SAMPLES_DIR, find, sample_names, samples
from conftest import tumble

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: the hidden check's figure: each sample fits to its true ratios within this (absolute)
RATIO_TOLERANCE = 0.01
#: each sample's file stays small enough to ship
MAX_BYTES = 1_000_000


def test_at_least_a_phone_and_a_racket_session_are_shipped_small_with_their_true_body():
    listed = {s.name: s for s in samples()}
    assert {"phone-throws", "racket-throws"} <= set(listed)
    for s in listed.values():
        assert s.path.parent == SAMPLES_DIR and s.path.stat().st_size < MAX_BYTES
        doc = tomllib.loads((SAMPLES_DIR / f"{s.name}.toml").read_text(encoding="utf-8"))
        assert doc["name"] == s.name and doc["file"] == s.path.name and doc["what"]
        assert doc["seed"] == s.seed and "synthetic generator" in doc["made"]
        r = np.asarray(doc["ratios"])
        assert r.shape == (3,) and np.all(np.diff(r) > 0) and r[2] == 1.0
        assert len(doc["throws"]) >= 4
    assert listed["phone-throws"].path.suffix == ".zip"


def test_the_generator_writes_the_shipped_bytes_again(tmp_path):
    """Reproducible: the same seeds write the same files, byte for byte."""
    written = mk.write_samples(tmp_path)
    assert {p.name for p in written} == {p.name for p in SAMPLES_DIR.iterdir() if p.suffix in (".zip", ".csv", ".toml")}
    for path in written:
        assert path.read_bytes() == (SAMPLES_DIR / path.name).read_bytes(), path.name


def _catches_clipped(rec, doc) -> list[int]:
    """Indices of the throws whose catch (0.3 s after it) holds a clipped sample."""
    out = []
    for k, th in enumerate(doc["throws"]):
        near = (rec.t >= th["catch"]) & (rec.t < th["catch"] + 0.3)
        if rec.saturated[near].any():
            out.append(k)
    return out


def test_the_phone_session_is_a_phyphox_export_still_between_throws_clipped_on_one_catch():
    sample = find("phone-throws")
    names = zipfile.ZipFile(sample.path).namelist()
    assert "Raw Data.csv" in names and "meta/time.csv" in names
    rec = read_recording("phone-throws")
    assert rec.name == "phone-throws"
    doc = tomllib.loads((SAMPLES_DIR / "phone-throws.toml").read_text(encoding="utf-8"))
    throws = doc["throws"]
    # between each catch and the next throw the phone lies still: exact zeros, as an iPhone reads
    for before, after in zip(throws, throws[1:]):
        # picked up 0.3-0.5 s before the hand spins it up (0.2-0.3 s)
        between = (rec.t > before["catch"] + 0.3) & (rec.t < after["release"] - 0.85)
        assert between.any() and np.all(rec.w[between] == 0.0)
    assert _catches_clipped(rec, doc) == [mk.PLANS[0].slammed_catch]
    # clipped at the 2000 deg/s range, nowhere in a flight
    assert np.max(np.abs(rec.w)) == pytest.approx(34.9, abs=1e-6)
    for th in throws:
        flight = (rec.t >= th["release"]) & (rec.t < th["catch"])
        assert not rec.saturated[flight].any()


def test_the_racket_session_is_a_csv_from_the_hand_with_a_1000_deg_s_sensor():
    rec = read_recording("racket-throws")
    assert find("racket-throws").path.suffix == ".csv"
    assert not np.any(np.all(rec.w == 0.0, axis=1))  # in the hand between throws, never still
    assert np.max(np.abs(rec.w)) == pytest.approx(17.45, abs=1e-4) and rec.saturated.any()


@pytest.mark.parametrize("name", ["phone-throws", "racket-throws"])
def test_each_sample_fits_to_its_true_ratios_by_its_name(name, tmp_path):
    """What a user types on a fresh install, in an empty folder: the fit recovers the body."""
    truth = np.asarray(next(s for s in samples() if s.name == name).ratios)
    res = tumble("fit", name, "--json", "--out", tmp_path / "fit.toml", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    fitted = json.loads(res.stdout)
    assert np.max(np.abs(np.asarray(fitted["ratios"]) - truth)) < RATIO_TOLERANCE
    assert {f["recording"] for f in fitted["flights"]} == {name}
    doc = tomllib.loads((SAMPLES_DIR / f"{name}.toml").read_text(encoding="utf-8"))
    # every throw released is found (bounces are flights of their own too)
    starts = np.array([f["start"] for f in fitted["flights"]])
    for th in doc["throws"]:
        assert np.min(np.abs(starts - th["release"])) < 0.1, th
    # the predicted flips of the same throws, from the fit written
    pred = tumble("predict", tmp_path / "fit.toml", name, "--json", cwd=tmp_path)
    assert pred.returncode == 0, pred.stderr
    assert len(json.loads(pred.stdout)["flights"]) == len(fitted["flights"])


def test_tumble_samples_lists_name_what_and_true_ratios(tmp_path):
    res = tumble("samples", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.strip().splitlines()
    assert len(lines) == len(samples()) >= 2
    for s, line in zip(samples(), lines):
        assert line.startswith(s.name) and s.what in line
        assert "true ratios " + ", ".join(f"{x:.4f}" for x in s.ratios) in line
    listed = json.loads(tumble("samples", "--json", cwd=tmp_path).stdout)
    assert [d["name"] for d in listed] == sample_names()
    assert all(set(d) >= {"name", "what", "file", "ratios", "made", "seed"} for d in listed)
    import tumble as api

    assert api.samples() == listed


def test_a_file_of_the_same_name_wins_and_a_path_is_never_a_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    t = np.arange(20) * 0.01
    (tmp_path / "phone-throws").write_text("t,wx,wy,wz\n" + "".join(f"{x:.2f},1,2,3\n" for x in t))
    assert find("phone-throws") is None
    rec = read_recording("phone-throws")
    assert len(rec.t) == 20 and np.all(rec.w == [1.0, 2.0, 3.0])
    assert find("./racket-throws") is None and find("racket-throws") is not None
    # a sample named twice is read once
    (tmp_path / "phone-throws").unlink()
    assert len(read_recordings(["phone-throws", "phone-throws"])) == 1


def test_the_window_and_the_stand_in_phone_take_a_sample_name():
    from tumble.gui.recordings.opening import is_recording
    from tumble.throws.live.phyphox_server import replay_recordings

    assert is_recording("phone-throws") and not is_recording("t-handle")
    with replay_recordings(["phone-throws"], loop=True, port=0) as replay:
        assert len(replay.timeline) == len(read_recording("phone-throws").t)


def test_an_unknown_name_is_one_line_naming_it(tmp_path):
    res = tumble("fit", "no-such-sample", cwd=tmp_path)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "no-such-sample" in res.stderr


