"""Bad input found by fuzzing (issue 10, section 5): each finding refused on one line, exit 2.

Run in process through ``tumble.cli.core.main`` (fast); ``tests/test_fuzz_cli.py`` generates many
more and runs the heavy ones in a child process with its memory and time bounded.
"""

import json
import math
import os
import signal
import time

import numpy as np
import pytest
from conftest import Running, refused as refused_line, tumble_here

from tumble.cli.core import build_parser
from tumble.physics import integrators
from tumble.physics.errors import DivergenceError, ParameterError, format_value, shorten
from tumble.physics.integrators import INTEGRATORS, check_run_size, simulate
from tumble.scenario import load, loads_toml
from tumble.scenario.files import MAX_KEY_PARTS, MAX_TOML_DEPTH, check_toml_shape

PRECIOUS = "precious\n"


def tumble(capsys, *args):
    """(exit status, stdout, stderr lines) of ``tumble ARGS`` run in this process."""
    res = tumble_here(capsys, *args)
    return res.returncode, res.stdout, res.stderr.splitlines()


def refused(capsys, *args, words=()):
    """Assert ``tumble ARGS`` exits 2 with one line containing every one of ``words``."""
    return refused_line(tumble_here(capsys, *args), *words)


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A working folder with ``X.csv`` (and friends) holding a precious old content."""
    monkeypatch.chdir(tmp_path)
    for name in ("X.csv", "X.npz"):
        (tmp_path / name).write_text(PRECIOUS)
    return tmp_path


def untouched(folder):
    assert (folder / "X.csv").read_text() == PRECIOUS and (folder / "X.npz").read_text() == PRECIOUS
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]  # no temporary left


def write(folder, name, text):
    path = folder / name
    path.write_text(text)
    return path


BOX = '[body]\nshape = "box"\nmass = 1.0\nsize = [0.1, 0.4, 0.9]\n[initial]\nangular_velocity = [0.1, 5.0, 0.1]\n'


# ------------------------------------------------------------------ hangs and memory


@pytest.mark.parametrize("args,words", [
    (["simulate", "boxes-complex", "--duration", "0.1", "--dt", "1e-12", "--sample", "0.1"],
     ["--dt must be >=", "100,000,000 steps"]),
    (["simulate", "boxes-complex", "--duration", "1e6", "--sample", "1e5"], ["--duration must be <="]),
    (["simulate", "boxes-complex", "--integrator", "dop853", "--dt", "1e-9", "--sample", "0.05"],
     ["--dt must be >=", "dop853"]),
    (["simulate", "boxes-complex", "--integrator", "exact", "--duration", "0.06", "--sample", "3e-9"],
     ["--sample must be >=", "samples"]),
    (["simulate", "boxes-complex", "--duration", "1e100", "--sample", "1e99"], ["--duration must be <="]),
    (["export", "t-handle", "--dt", "1e-9"], ["--dt must be >="]),
    (["export", "t-handle", "--dt", "1e-300"], ["--dt must be >="]),
    (["stability", "t-handle", "--directions", "10", "--duration", "1e6"], ["--duration must be <="]),
    (["stability", "t-handle", "--directions", "400000"], ["--directions must be <="]),
], ids=lambda v: " ".join(v) if isinstance(v, list) and v and v[0] in ("simulate", "export", "stability") else "")
def test_runs_past_the_budget_are_refused_before_any_work(capsys, folder, args, words):
    out = "X.npz" if args[0] == "stability" else "X.csv"
    t0 = time.perf_counter()
    refused(capsys, *args, "--out", out, words=words)
    untouched(folder)
    assert time.perf_counter() - t0 < 30  # generous: a refusal does no work (these ran for minutes)


def test_the_budget_names_what_the_user_asked_for():
    with pytest.raises(ParameterError, match="^solver.dt must be >= 1e-07 s"):
        check_run_size("rk4", 1e-300, 10.0, names={"dt": "solver.dt"})
    with pytest.raises(ParameterError, match="^duration must be <= 1e"):
        check_run_size("rk4", 1e-3, 1e6, blame="duration")
    with pytest.raises(ParameterError, match="^bodies must be <= 1,000 "):
        check_run_size("rk4", 1e-3, 100.0, n_bodies=10**6, blame="bodies")
    with pytest.raises(ParameterError, match="^sample must be >= "):
        check_run_size("exact", 1e-3, 10.0, sample=1e-9, blame="duration")  # the sample is the knob
    check_run_size("rk4", 1e-3, 1e5, samples=False)  # exactly the step budget: allowed
    check_run_size("rk4", 1e-3, 1e5, sample=0.1)


def test_scenario_files_get_the_same_step_bound(capsys, folder):
    """solver.dt = 1e-300 passed inspect; the window's worker gets scenarios the same way."""
    path = write(folder, "tiny.toml", BOX + "[solver]\ndt = 1e-300\n")
    refused(capsys, "inspect", path, words=["solver.dt must be >=", "got 1e-300"])
    with pytest.raises(ParameterError, match=r"^solver.dt must be >= 10 s \(a run of dop853 takes at most"):
        loads_toml(BOX + '[solver]\nintegrator = "dop853"\ndt = 1.0\nduration = 1e7\n')


def test_a_stability_map_of_1e300_seconds_is_refused_not_answered_with_zeros(capsys, folder):
    refused(capsys, "stability", "t-handle", "--directions", "10", "--duration", "1e300", "--out", "X.npz",
            words=["--duration"])
    untouched(folder)


def test_a_long_stability_map_covers_its_whole_run():
    """The cause of "wander 0": the end-of-run test compared a chunk's span with the whole
    duration (644 s <= 1e-12 * 1e300), so the loop stopped before its first step."""
    from tumble.simulation.stability import stability_map

    seen = []
    body = load("t-handle").rigid_body
    smap = stability_map(body, 6.0, 4, 3000.0, progress=seen.append)
    assert seen[-1] == pytest.approx(1.0) and np.all(smap.wander > 0)


# ------------------------------------------------------------------ internal errors


def test_a_400_digit_reorthonormalize_every_is_refused(capsys, folder):
    path = write(folder, "every.toml", BOX + '[solver]\nintegrator = "rotmat-euler"\nreorthonormalize_every = 1'
                 + "0" * 400 + "\n")
    refused(capsys, "inspect", path, words=["solver.reorthonormalize_every must be a whole number", "e+400"])


@pytest.mark.parametrize("text,words", [
    ("x = " + "[" * 5000 + "]" * 5000, [f"at most {MAX_TOML_DEPTH} deep"]),
    ("x = " + "{a = " * 3000 + "1" + "}" * 3000, [f"at most {MAX_TOML_DEPTH} deep"]),
    (".".join(["a"] * 20000) + " = 1", [f"at most {MAX_KEY_PARTS} dotted parts"]),
    ("[body]\nmass = 1" + "0" * 5000, ["4300 digits"]),
], ids=["arrays 5000 deep", "inline tables 3000 deep", "dotted key of 20000 parts", "5000-digit integer"])
def test_toml_past_what_a_scenario_needs_is_refused_before_the_parser(capsys, folder, text, words):
    refused(capsys, "inspect", write(folder, "bad.toml", text), words=words)


def test_the_toml_scanner_reads_strings_comments_and_keys_as_toml_does():
    deep = "[" * (MAX_TOML_DEPTH + 1)
    dots = "." * MAX_KEY_PARTS
    ok = (f'name = "{deep} {dots}"  # {deep}\n'
          f"description = '{deep}'\n"
          f'a = """\nline "" {deep} \\""" still inside {deep}"""\n'
          f"b = '''{deep}''''\n"
          f'"quoted{dots}key".c = {{ d = [[1, 2], [3]], "e{dots}" = {{}} }}\n'
          f"[body]\nsize = [1.5, 2.5, 3.5]\n")
    check_toml_shape(ok)
    with pytest.raises(ParameterError):
        check_toml_shape("x = " + "[" * (MAX_TOML_DEPTH + 1))
    with pytest.raises(ParameterError):
        check_toml_shape("[" + ".".join("a" * (MAX_KEY_PARTS + 1)) + "]")
    with pytest.raises(ParameterError):
        check_toml_shape("x = { " + ".".join("a" * (MAX_KEY_PARTS + 1)) + " = 1 }")


def test_every_preset_passes_the_toml_scanner():
    from tumble.scenario import preset_names
    from tumble.scenario.files import PRESETS_DIR

    for name in preset_names():
        check_toml_shape((PRESETS_DIR / f"{name}.toml").read_text())


# ------------------------------------------------------------------ exit 1 where the input is at fault


def test_an_out_in_a_folder_that_takes_no_files_is_bad_input(capsys, folder):
    line = refused(capsys, "simulate", "boxes-complex", "--duration", "0.01", "--out", "/proc/X.csv",
                   words=["--out must be in a writable folder", "/proc/X.csv"])
    assert ".X.csv." not in line  # the temporary file is ours, not the user's


def test_names_longer_than_the_system_takes_are_bad_input(capsys, folder):
    refused(capsys, "simulate", "boxes-complex", "--out", "a" * 300 + ".csv", words=["--out", "at most"])
    refused(capsys, "export", "t-handle", "--out", "a" * 300 + ".csv", words=["--out", "at most"])
    refused(capsys, "inspect", "a" * 5000, words=["scenario must be a preset name"])
    refused(capsys, "simulate", "boxes-complex", "--out", "d/" * 3000 + "x.csv", words=["--out"])
    untouched(folder)


def test_a_trailing_slash_names_a_folder_and_never_overwrites_the_file(capsys, folder):
    refused(capsys, "simulate", "boxes-complex", "--duration", "0.01", "--out", "X.csv/",
            words=["--out must name a file (a trailing slash names a folder)"])
    refused(capsys, "export", "t-handle", "--duration", "0.1", "--out", "X.csv/", words=["--out must name a file"])
    refused(capsys, "stability", "t-handle", "--directions", "10", "--out", "X.npz/", words=["--out must name a file"])
    untouched(folder)


def test_a_failing_write_names_the_target_not_the_temporary(tmp_path):
    from tumble.atomic import atomic_path

    target = tmp_path / "out.csv"
    with pytest.raises(OSError) as info:
        with atomic_path(target) as tmp:
            raise OSError(28, "No space left on device", str(tmp))
    assert info.value.filename == str(target)


# ------------------------------------------------------------------ more than one line


def test_dop853_refuses_an_rtol_scipy_would_raise_with_a_warning(capsys, folder):
    path = write(folder, "rtol.toml", BOX + '[solver]\nintegrator = "dop853"\nrtol = 1e-300\nduration = 0.1\n')
    refused(capsys, "simulate", path, "--out", "X.csv", words=["solver.rtol must be >= 2.22e-14"])
    untouched(folder)
    with pytest.raises(ParameterError, match="^rtol"):
        simulate(load("boxes-complex").model, load("boxes-complex").initial_state, "dop853", 0.01, 0.1, rtol=1e-20)


def test_a_refusal_cuts_a_300_kb_value(capsys, folder):
    path = write(folder, "big.toml", BOX.replace("mass = 1.0", 'mass = "' + "x" * 300_000 + '"'))
    line = refused(capsys, "inspect", path, words=["body.mass must be a number", "…"])
    assert len(line) < 200
    line = refused(capsys, "simulate", "boxes-complex", "--duration", "x" * 300_000, "--out", "X.csv",
                   words=["--duration"])
    assert len(line) < 300
    line = refused(capsys, "export", "t-handle", "--view", "y" * 300_000, "--out", "X.csv", words=["--view"])
    assert len(line) < 300


def test_values_are_cut_in_one_place():
    assert len(format_value("z" * 10**6)) <= 60 and "…" in format_value("z" * 10**6)
    assert format_value(10**400) == "1.00000e+400"
    assert "5000 digits" in format_value(-10**5000)
    assert format_value(list(range(1000))).endswith("… (1000 numbers)]")
    assert "\n" not in str(ParameterError("a\nb", "c\nd", "be e"))
    assert shorten("abc") == "abc" and len(shorten("q" * 500, 40)) == 40


# ------------------------------------------------------------------ accepted but meaningless


def test_derived_quantities_must_be_finite(capsys, folder):
    big = BOX.replace("mass = 1.0", "mass = 1e100").replace("[0.1, 0.4, 0.9]", "[1e100, 1e100, 1e100]")
    path = write(folder, "big.toml", big.replace("[0.1, 5.0, 0.1]", "[0.0, 1e5, 0.0]"))
    refused(capsys, "inspect", path, words=["initial.angular_velocity must give a finite rotational energy"])
    status, out, _ = tumble(capsys, "inspect", write(folder, "fine.toml", big), "--json")
    assert status == 0 and math.isfinite(json.loads(out)["E0"])  # big but finite: fine


def test_a_table_that_overflows_is_a_failed_run():
    from tumble.simulation.table import check_finite

    check_finite({"t": np.array([0.0, 1.0]), "E": np.array([1.0, 2.0])})
    with pytest.raises(DivergenceError, match="column E of row 1 is not finite"):
        check_finite({"t": np.array([0.0, 1.0]), "E": np.array([1.0, np.inf])})


@pytest.mark.parametrize("args,words", [
    (["simulate", "boxes-complex", "--outputs", "Position", "--point", "1e300,0,0"],
     ["--point must be three numbers", "at most 1e+100"]),
    (["simulate", "boxes-complex", "--outputs", "Position", "--point", "1,2"], ["--point"]),
    (["simulate", "boxes-complex", "--outputs", "Position", "--point", "1, 2, 3"], ["--point"]),
    (["simulate", "boxes-complex", "--duration", "1_000"], ["--duration", "ASCII digits"]),
    (["simulate", "boxes-complex", "--duration", "\u0661\u0660"], ["--duration", "ASCII digits"]),
    (["simulate", "boxes-complex", "--dt", " 0.01"], ["--dt"]),
    (["simulate", "boxes-complex", "--dt", "inf"], ["--dt"]),
    (["simulate", "boxes-complex", "--dt", "nan"], ["--dt"]),
    (["simulate", "boxes-complex", "--dt", "1e400"], ["--dt"]),
    (["stability", "boxes-complex", "--directions", "1_0"], ["--directions"]),
    (["stability", "boxes-complex", "--directions", "1" + "0" * 5000], ["--directions"]),
    (["export", "t-handle", "--size", "1280 x 720"], ["--size", "WIDTHxHEIGHT"]),
    (["export", "t-handle", "--size", "\u0661\u0662\u0668\u0660x720"], ["--size"]),
    (["export", "t-handle", "--fps", "3\u0660"], ["--fps"]),
    (["export", "t-handle", "--speed", "Infinity"], ["--speed"]),
    (["simulate", "boxes-complex", "--duration", "1e-5"], ["--duration must be >= the scenario's step"]),
], ids=lambda v: " ".join(v) if isinstance(v, list) and v and v[0] in ("simulate", "export", "stability") else "")
def test_numbers_are_read_strictly(capsys, folder, args, words):
    out = "X.npz" if args[0] == "stability" else "X.csv"
    refused(capsys, *args, "--out", out, words=words)
    untouched(folder)


def test_a_tiny_duration_is_refused_in_its_own_name(capsys, folder):
    line = refused(capsys, "simulate", "boxes-complex", "--duration", "1e-5", "--out", "X.csv", words=["--duration"])
    assert "--dt" not in line and "solver.dt" not in line


def test_inspect_names_no_intermediate_axis_on_a_symmetric_body(capsys, folder):
    """The cause: inspect tagged the second of the sorted moments by its index, apart from
    the physics' has_intermediate_axis."""
    sphere = write(folder, "sphere.toml", '[body]\nshape = "custom"\nmass = 1.0\ninertia = [1.0, 1.0, 1.0]\n'
                   "[initial]\nangular_velocity = [1.0, 2.0, 3.0]\n")
    status, out, _ = tumble(capsys, "inspect", sphere)
    assert status == 0 and "intermediate (unstable)" not in out and "symmetric" in out
    status, out, _ = tumble(capsys, "inspect", sphere, "--json")
    assert json.loads(out)["intermediate_axis"] is None
    status, out, _ = tumble(capsys, "inspect", "t-handle")
    assert out.count("<- intermediate (unstable)") == 1


# ------------------------------------------------------------------ the command line and progress


def test_help_lists_the_integrators_wherever_one_is_taken(capsys):
    for command in ("simulate", "export", "bench"):
        with pytest.raises(SystemExit):
            build_parser().parse_args([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())  # argparse wraps the help
        assert all(name in text for name in INTEGRATORS), command


def test_a_run_split_into_many_kernel_calls_is_the_same_run(monkeypatch):
    """Long intervals are stepped in calls of STEPS_PER_CALL body-steps (progress, Ctrl+C)."""
    sc = load("boxes-complex")
    whole = simulate(sc.model, sc.initial_state, "rk4", 1e-3, 2.0, sample=1.0)
    monkeypatch.setattr(integrators, "STEPS_PER_CALL", 7)
    seen = []
    split = simulate(sc.model, sc.initial_state, "rk4", 1e-3, 2.0, sample=1.0, progress=seen.append)
    np.testing.assert_array_equal(split.q, whole.q)
    np.testing.assert_array_equal(split.w, whole.w)
    assert len(seen) > 100 and seen == sorted(seen) and seen[-1] == 1.0


def test_dop853_stops_at_its_step_budget(monkeypatch):
    sc = load("boxes-complex")
    monkeypatch.setattr(integrators, "MAX_STEPS_DOP853", 5)  # duration / dt = 4: accepted up front
    with pytest.raises(DivergenceError, match="DOP853 took more than 10 steps"):
        simulate(sc.model, sc.initial_state, "dop853", 0.1, 0.4, rtol=2.3e-14, atol=1e-16, sample=0.4)


def test_ctrl_c_stops_a_long_run_on_one_line_and_writes_nothing(tmp_path, root):
    out = tmp_path / "X.csv"
    out.write_text(PRECIOUS)
    # 1e8 steps of midpoint: a legitimate run of about a minute
    with Running("simulate", "boxes-complex", "--integrator", "midpoint", "--duration", "1e5", "--sample", "10",
                 "--out", out, cwd=root) as child:
        time.sleep(4)
        assert child.proc.poll() is None
        child.proc.send_signal(signal.SIGINT)
        _, err = child.finish(timeout=60)
    assert child.proc.returncode == 130 and err.splitlines() == ["tumble: interrupted, nothing written"], err
    assert out.read_text() == PRECIOUS and [p.name for p in tmp_path.iterdir()] == ["X.csv"]


def test_ctrl_c_while_the_modules_load_is_one_line_and_exit_130(tmp_path):
    """Ctrl+C as soon as ``tumble`` starts (its modules still loading, which takes seconds on a busy
    machine) ends it with the one line and 130, never a traceback from inside an import."""
    import subprocess
    import sys

    # the signal handler is set before the first module of the commands is imported: send Ctrl+C
    # the moment the child says it is there (its first import of the commands, traced)
    code = ("import sys, os, signal\n"
            "import importlib.abc\n"
            "class Tell(importlib.abc.MetaPathFinder):\n"
            "    def find_spec(self, name, path, target=None):\n"
            "        if name == 'tumble.cli.core':\n"
            "            os.kill(os.getpid(), signal.SIGINT)\n"
            "        return None\n"
            "sys.meta_path.insert(0, Tell())\n"
            "sys.argv = ['tumble', 'simulate', 't-handle', '--out', 'x.csv']\n"
            "from tumble.cli import main\n"
            "sys.exit(main())\n")
    res = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.returncode == 130 and res.stderr.splitlines() == ["tumble: interrupted, nothing written"], res.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "sched_setscheduler") or os.geteuid() != 0,
                    reason="raising a thread's priority takes root (or CAP_SYS_NICE)")
def test_a_thread_lowered_to_nice_19_is_back_at_normal_priority_before_the_process_ends():
    """Mesa's shader-cache thread runs at nice 19 (SCHED_BATCH); ending a window's process,
    every thread is put back to normal priority first, so that the one that tears the memory
    down last is not starved on a busy machine (1.5-1.8 s for a 0.05 s teardown, measured)."""
    import threading

    from tumble.cli.core import threads_to_normal_priority

    ready, done, tid = threading.Event(), threading.Event(), []

    def lowered():
        tid.append(threading.get_native_id())
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
        os.setpriority(os.PRIO_PROCESS, 0, 19)
        ready.set()
        done.wait(30)

    thread = threading.Thread(target=lowered, daemon=True)
    thread.start()
    try:
        assert ready.wait(30)
        assert os.sched_getscheduler(tid[0]) == os.SCHED_BATCH and os.getpriority(os.PRIO_PROCESS, tid[0]) == 19
        threads_to_normal_priority()
        assert os.sched_getscheduler(tid[0]) == os.SCHED_OTHER and os.getpriority(os.PRIO_PROCESS, tid[0]) == 0
        assert os.getpriority(os.PRIO_PROCESS, 0) == 0  # the calling thread untouched
    finally:
        done.set()
        thread.join(30)
