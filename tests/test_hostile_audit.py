"""Hostile round 5 on ``tumble audit``: every size checked before it is allocated, the trajectory readers
bounded, the scoring linear, the engines quiet.

Found on main 31e2c5d (issue 35): ``--duration 2e6`` reached 3.2 GB before its refusal, ``--duration 1e100``
and ``--sample 1e-100`` were internal errors, 20,000 copies of ``--dt 0.01`` took 42 s and 3.3 GB; a
2,000,000-row trajectory with 400,000 sign changes ran past 300 s (flips matched each against each); a
33 KB bzip2 NPZ reached 3.2 GB, 250 MB of blank lines 2.7 GB; PyBullet's warnings broke ``--json``.
Each reproducer runs the real command line in a child whose seconds and peak memory a small parent
measures (conftest's ``run_measured``), and asserts the exit status and the one line.
"""

from __future__ import annotations

import json
import re
import struct
import zlib

import numpy as np
import pytest

from conftest import ROOT, contention, refused, run_measured, tumble, write_scenario
from test_hostile_readers import compressed, zip_of

#: every hostile input ends within this (s) and this peak memory (MB) (issue 35's "done when")
SECONDS = 30
PEAK_MB = 1024


def within_bounds(res):
    assert res.seconds <= SECONDS and res.peak_mb <= PEAK_MB, (res.seconds, res.peak_mb, res.stderr[-300:])
    return res


def measured_refusal(*args, words=()):
    res = within_bounds(run_measured("audit", *args, deadline_s=4 * SECONDS))
    return refused(res, *words, quiet=True)


# ------------------------------------------------------------------ sizes from the numbers given


@pytest.mark.parametrize("args, words", [
    (["--duration", "2e6"], ["--duration must be <= 1e+04 s", "1,000,000 samples", "--sample's default"]),
    (["--duration", "1e100"], ["--duration must be <= 1e+04 s"]),
    (["--sample", "1e-100"], ["--sample must be >= 6e-05 s", "1,000,000 samples"]),
    (["--dt", "1e-9", "--duration", "1e6", "--sample", "1e-6"], ["--sample must be >= 1 s"]),
    # the step the user gave is what is too small: --dt is named, not --sample
    (["--dt", "1e-300"], ["--dt must be >= 1.5e-05 s", "20,000,000 engine steps"]),
    # (one argument holds at most 128 KB: 12,000 distinct steps)
    (["--dt", ",".join(f"{k}e-7" for k in range(1, 12_001)), "--duration", "1"],
     ["--dt must name at most 50 steps", "12,000 distinct steps"]),
])
def test_every_size_is_refused_from_the_numbers_before_anything_is_allocated(args, words):
    measured_refusal("t-handle", *args, words=words)


def test_a_scenarios_own_duration_is_named_as_the_scenarios(tmp_path):
    # valid as a scenario (1e8 steps of 0.1 s), far too many samples for an audit: the field named is the
    # scenario's, since the user gave no --duration
    path = write_scenario(tmp_path, ['shape = "box"', "mass = 1.0", "size = [0.1, 0.2, 0.3]"])
    text = path.read_text() + "\n[solver]\nintegrator = \"rk4\"\ndt = 0.1\nduration = 1e7\n"
    path.write_text(text)
    line = measured_refusal(path, "--engines", "tumble:rk4", words=["solver.duration (the scenario's",
                                                                     "must be <= 1e+04 s"])
    assert "--duration must" not in line


def test_copies_of_one_step_are_one_step():
    res = within_bounds(run_measured("audit", "t-handle", "--engines", "tumble:rk4", "--duration", "1", "--json",
                                     "--dt", ",".join(["0.01"] * 20_000), deadline_s=4 * SECONDS))
    assert res.returncode == 0, res.stderr
    assert [r["dt"] for r in json.loads(res.stdout)["runs"]] == [0.01]


# ------------------------------------------------------------------ trajectory files: rows, lines, bombs

HEADER = "t,qw,qx,qy,qz\n"


@pytest.mark.slow
def test_two_million_rows_are_refused_while_read(tmp_path):
    path = tmp_path / "long.csv"
    path.write_text(HEADER + "0,1,0,0,0\n" * 2_000_000)
    measured_refusal("t-handle", "--trajectory", path, words=["--trajectory long.csv must hold at most 1,000,000 rows"])


@pytest.mark.slow
@pytest.mark.parametrize("junk, words", [
    ("\n", ["at most 4,001,000 lines"]),  # 250 MB of line ends: counted as they are cut
    ("junk junk junk junk\n", ["row 3", "numbers separated by commas"]),  # junk rows: the first chunk names it
    ("0,1,0,0,0\n", ["at most 1,000,000 rows"]),  # 10 M short rows
])
def test_a_huge_csv_is_refused_in_bounded_memory(tmp_path, junk, words):
    path = tmp_path / "junk.csv"
    with open(path, "w") as fh:
        fh.write(HEADER + "0,1,0,0,0\n")
        block = junk * (2**20 // len(junk))
        size = 250 * 2**20 if junk == "\n" else 100 * 2**20
        for _ in range(size // len(block)):
            fh.write(block)
    measured_refusal("t-handle", "--trajectory", path, words=["--trajectory junk.csv", *words])


def test_a_header_only_csv_is_one_line_without_a_warning(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text(HEADER)
    line = measured_refusal("t-handle", "--trajectory", path, words=["at least 3 rows"])
    assert "Warning" not in line


def npy_header(shape, descr="<f8") -> bytes:
    text = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape!r}, }}"
    text += " " * (-(len(text) + 11) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode()


@pytest.mark.parametrize("method, claimed", [("bzip2", None), ("deflate", None), ("bzip2", "honest")])
def test_an_npz_bomb_is_refused_from_its_headers(tmp_path, method, claimed):
    # a t.npy member claiming 200 M rows over 40 MB of zeros (bzip2 makes them a few KB): refused from the
    # zip's stated sizes or the .npy header before its data is inflated
    pieces = [npy_header((200_000_000,))] + [b"\0" * 2**20] * 40
    data = compressed(method, pieces)
    size = len(pieces[0]) + 40 * 2**20
    crc = 0
    for p in pieces:
        crc = zlib.crc32(p, crc)
    path = zip_of(tmp_path / "bomb.npz", method, data, size if claimed == "honest" else 2**20, crc=crc,
                  name=b"t.npy")
    line = measured_refusal("t-handle", "--trajectory", path, words=["--trajectory bomb.npz"])
    assert "rows" in line or "compressed at most" in line, line


def test_an_npy_header_claiming_too_many_rows_is_refused_before_its_data(tmp_path):
    # a stored member within every zip bound whose .npy header claims 200 M rows: the header decides
    import zipfile

    with zipfile.ZipFile(tmp_path / "claim.npz", "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("t.npy", npy_header((200_000_000,)) + b"\0" * 4096)
        zf.writestr("q.npy", npy_header((3, 4)) + b"\0" * 96)
    measured_refusal("t-handle", "--trajectory", tmp_path / "claim.npz",
                     words=["--trajectory claim.npz member t.npy must hold at most 1,000,000 rows",
                            "200,000,000 rows"])


def test_a_complex_npz_is_refused(tmp_path):
    t = np.linspace(0, 1, 11)
    np.savez(tmp_path / "c.npz", t=t, q=np.tile([1.0 + 0j, 0, 0, 0], (11, 1)))
    measured_refusal("t-handle", "--trajectory", tmp_path / "c.npz", words=["complex numbers", "real numbers"])


def test_a_wrong_shaped_q_is_named(tmp_path):
    t = np.linspace(0, 1, 11)
    np.savez(tmp_path / "s.npz", t=t, q=np.tile([1.0, 0, 0], (11, 1)))
    measured_refusal("t-handle", "--trajectory", tmp_path / "s.npz", words=["q of shape (11, 3)", "hold q as (n, 4)"])


def test_a_huge_omega_is_one_line_without_a_warning(tmp_path):
    rows = [f"{k * 0.01},1,0,0,0,0.2,0,{6 if k == 0 else 1e300}" for k in range(20)]
    path = tmp_path / "w.csv"
    path.write_text("t,qw,qx,qy,qz,wx,wy,wz\n" + "\n".join(rows) + "\n")
    line = measured_refusal("t-handle", "--trajectory", path, words=["row 2", "omega of at most 1e+06 rad/s"])
    assert "nan" not in line


@pytest.mark.slow
def test_a_million_rows_with_many_flips_are_scored_in_bounds(tmp_path):
    # the largest file allowed, its omega along the intermediate (z) axis changing sign 200,000 times: the
    # flips are matched by a merge of two sorted lists (each against each took minutes)
    n = 1_000_000
    t = np.arange(n) * 1e-3
    w = np.zeros((n, 3))
    w[0] = [0.2, 0.0, 6.0]  # the T-handle's start
    w[1:, 2] = np.where((np.arange(1, n) // 5) % 2 == 0, 6.0, -6.0)
    # turned about z by the mean omega of each interval: the convention check holds
    angle = np.concatenate([[0.0], np.cumsum(1e-3 * 0.5 * (w[1:, 2] + w[:-1, 2]))])
    q = np.column_stack([np.cos(angle / 2), np.zeros(n), np.zeros(n), np.sin(angle / 2)])
    np.savez(tmp_path / "flips.npz", t=t, q=q, w=w)
    res = within_bounds(run_measured("audit", "t-handle", "--trajectory", tmp_path / "flips.npz", "--json",
                                     deadline_s=4 * SECONDS))
    assert res.returncode == 0, res.stderr
    run = json.loads(res.stdout)["runs"][0]
    assert len(run["flips"]) >= 199_000


# ------------------------------------------------------------------ engines quiet


@pytest.mark.slow
@pytest.mark.engines
def test_pybullets_warnings_leave_the_json_parseable_and_its_zeroed_inertia_unscored():
    res = within_bounds(run_measured("audit", "asymmetric-stable", "--engines", "pybullet", "--duration", "1",
                                     "--json", deadline_s=4 * SECONDS))
    assert res.returncode == 0, res.stderr
    run, = json.loads(res.stdout)["runs"]
    assert len(res.stdout.splitlines()) == 1 and res.stdout.startswith("{") and res.stderr == ""
    assert run["not_scored"].startswith("PyBullet took the principal moments [0, 0, 0] for [2, 4, 8]")
    assert run["max_orientation_error"] is None and run["flips"] is None
    assert any("setting inertia to zero" in note for note in run["notes"])


@pytest.mark.slow
@pytest.mark.engines
def test_engines_that_blow_up_print_a_line_each_and_are_not_scored(tmp_path):
    # the Boxes benchmark thrown under a gravity of -1e100 (MuJoCo printed 1,998 lines, DART 1,494)
    path = tmp_path / "heavy.toml"
    path.write_text((ROOT / "resources/scenarios/boxes-complex.toml").read_text().replace(
        "gravity = [0.0, 0.0, -9.8]", "gravity = [0.0, 0.0, -1e100]"))
    log = ROOT / "MUJOCO_LOG.TXT"
    had_log = log.exists()
    res = within_bounds(run_measured("audit", path, "--engines", "mujoco,dart", deadline_s=4 * SECONDS))
    assert res.returncode == 0, res.stderr
    assert had_log or not log.exists()  # MuJoCo's warnings are not appended to a file in the current folder
    assert res.stderr.strip() == "" and len(res.stdout.splitlines()) < 20, res.stdout
    assert "no flips, as the reference" not in res.stdout
    assert "dart dt 0.001: not scored: its state is not finite from t = 0.01 s" in res.stdout
    assert "mujoco dt 0.001: not scored: MuJoCo found its state unstable" in res.stdout
    assert re.search(r"mujoco dt 0.001: note: mujoco warned [\d,]+ times like: Nan, Inf or huge value", res.stdout)
    assert "\x1b" not in res.stdout  # DART's colour codes are not passed on


# ------------------------------------------------------------------ runs that run away, and Ctrl+C


#: the wall clock a run that runs away may take here (s): the default (20 s) asked down, so that
#: the budget, not the run, is what these tests wait for
BUDGET_S = 3.0
FAST_SPIN = ['shape = "t-handle"', "mass = 0.05", "size = [0.06, 0.006, 0.1, 0.008]"]


@pytest.mark.slow
@pytest.mark.engines
@pytest.mark.parametrize("setting", ["drake:continuous", "tumble:dop853"])
def test_an_adaptive_run_that_runs_away_ends_within_its_budget(tmp_path, setting):
    # a valid 60,000 rad/s spin: the error control asks for steps far below dt (ran past 120 s)
    path = tmp_path / "fast.toml"
    path.write_text("[body]\n" + "\n".join(FAST_SPIN) + "\n[initial]\nangular_velocity = [0.2, 0.0, 60000.0]\n"
                    "[solver]\nduration = 10.0\n")
    res = within_bounds(run_measured("audit", path, "--engines", setting, "--budget", BUDGET_S,
                                     deadline_s=4 * SECONDS))
    assert res.returncode == 0, res.stderr
    assert f"{setting} dt 0.001: not scored: stopped at t = " in res.stdout
    assert f"it spent its budget of {BUDGET_S:g} s of wall clock" in res.stdout


def test_the_default_wall_clock_budget_and_the_one_asked_for():
    """20 s (or 0.1 ms a nominal step where more) unless --budget asks for another, in the thread
    that asked, for the runs made within its block."""
    import threading

    from tumble.engines.budget import ADAPTIVE_SECONDS, SECONDS_PER_NOMINAL, Budget, wall_clock

    assert Budget(10_000).seconds == ADAPTIVE_SECONDS == 20.0
    assert Budget(1e6).seconds == pytest.approx(1e6 * SECONDS_PER_NOMINAL)
    with wall_clock(3.0):
        assert Budget(1e6).seconds == 3.0
        other = []
        thread = threading.Thread(target=lambda: other.append(Budget(10_000).seconds))
        thread.start()
        thread.join()
        assert other == [ADAPTIVE_SECONDS]  # another thread's runs keep the default
    assert Budget(10_000).seconds == ADAPTIVE_SECONDS


@pytest.mark.parametrize("value", ["0", "-1", "inf", "nan", "x"])
def test_a_budget_that_is_not_a_positive_number_is_refused(value):
    res = tumble("audit", "t-handle", "--engines", "tumble:dop853", "--budget", value)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "--budget" in res.stderr and "be a finite number > 0" in res.stderr
    # the API's audit() takes it by the same rule, before any run
    import tumble as api

    with pytest.raises(api.ParameterError, match="--budget"):
        api.audit("t-handle", engines="tumble:dop853", budget=float(value) if value != "x" else value)


@pytest.mark.slow
@pytest.mark.engines
def test_ctrl_c_ends_a_long_mujoco_call_within_a_second():
    # 20,000,000 steps of 1 us in one sample: mj_step(m, d, n) was one call that Ctrl+C could not end
    res = run_measured("audit", "t-handle", "--engines", "mujoco", "--dt", "1e-6", "--sample", "20",
                       "--duration", "20", deadline_s=4 * SECONDS, signal_at=6.0)
    assert res.returncode == 130, (res.returncode, res.stderr[-500:])
    assert "Traceback" not in res.stderr
    # the signal 6 s after the start (start-up takes about 4 s here, loaded), then within a second (and a
    # second's slack), that second as much longer as CPU work takes now (conftest.contention)
    assert res.seconds < 6.0 + 1.0 * contention() + 1.0


# ------------------------------------------------------------------ outputs all or nothing; labels and silent flags


def test_out_with_a_folder_in_the_way_is_refused_before_the_first_run(tmp_path):
    out = tmp_path / "d"
    (out / "audit.json").mkdir(parents=True)
    res = within_bounds(run_measured("audit", "t-handle", "--engines", "tumble:rk4", "--duration", "1", "--out", out,
                                     deadline_s=4 * SECONDS))
    refused(res, f"--out {out} must leave audit.json to the audit", "a folder named audit.json", quiet=True)
    assert sorted(p.name for p in out.iterdir()) == ["audit.json"]  # nothing written beside it


def test_a_failure_while_writing_leaves_nothing_behind(tmp_path, monkeypatch):
    # a full disk while the last file is written: the CSVs already written go with the temporary folder
    import errno

    import tumble
    from tumble.engines import report
    from tumble.engines.audit import run_audit

    result = run_audit(tumble.load("t-handle"), "tumble:rk4", [0.01], 1.0, 0.01)

    def full(*_args, **_kw):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(report, "write_plot", full)
    for out in (tmp_path / "new", tmp_path / "old"):
        if out.name == "old":
            out.mkdir()
            (out / "audit.csv").write_text("kept")
        with pytest.raises(OSError):
            report.write_outputs(tumble.load("t-handle"), result, out)
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary folder left
    assert not (tmp_path / "new").exists()
    assert [p.name for p in (tmp_path / "old").iterdir()] == ["audit.csv"]
    assert (tmp_path / "old" / "audit.csv").read_text() == "kept"


def test_label_audit_does_not_overwrite_the_summary(tmp_path):
    path = tmp_path / "f.csv"
    path.write_text("t,qw,qx,qy,qz\n0,1,0,0,0\n0.01,1,0,0,0\n0.02,1,0,0,0\n")
    res = within_bounds(run_measured("audit", "t-handle", "--trajectory", path, "--label", "audit", "--out",
                                     tmp_path / "d", deadline_s=4 * SECONDS))
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == ["audit.csv", "audit.json", "audit.png", "audit_.csv"]
    assert (tmp_path / "d" / "audit.csv").read_text().startswith("engine,setting")
    assert (tmp_path / "d" / "audit_.csv").read_text().startswith("t,qw")


@pytest.mark.parametrize("args, words", [
    (["--label", "a\x1b[31mb", "--trajectory", "x.csv"], ["--label must be a name of 1 to 100 printable characters",
                                                         "a\\x1b[31mb"]),
    (["--label", "mine"], ["--label must be given with --trajectory only"]),
    (["--quaternion", "xyzw"], ["--quaternion must be given with --trajectory only"]),
    (["--omega", "world"], ["--omega must be given with --trajectory only"]),
])
def test_labels_and_flags_that_would_be_ignored_are_refused(args, words):
    measured_refusal("t-handle", "--engines", "tumble:rk4", *args, words=words) if "--trajectory" not in args else \
        measured_refusal("t-handle", *args, words=words)
