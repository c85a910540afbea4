"""Run kernels as saved machine code (app/physics/native.py): the same results as numba's kernel,
bit for bit; mapped without starting numba's compiler; a damaged, foreign or unmappable file is
never mapped (the run falls back to numba's cache); a kernel in numba's cache without machine code
gets it from a child process for the next run."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from tumble.physics.compiled import jit, native, runs
from tumble.physics.integrators import integrator_options, splitting_order
from tumble.physics.compiled.kernels import ROW_WIDTH

from conftest import KERNEL_W0, compiles_into, kernel_models


def _arguments(model, width, n_bodies=2, n_out=40, every=7):
    """The run kernel's arguments for two bodies of ``model`` (rows ``width`` wide before a
    damper's three), 40 outputs of 7 steps."""
    rows = model.to_rows(*(np.broadcast_to(a, (n_bodies, len(a))).copy() for a in
                           (np.zeros(3), np.zeros(3), np.array([1.0, 0, 0, 0]), KERNEL_W0)), width)
    rows[1, 10:13] *= -1.5  # two bodies that differ
    out = np.full((n_out, n_bodies, rows.shape[1]), np.nan)
    return [np.ascontiguousarray(rows), 1e-3, n_out, every, model.params, model.points, model.wforces,
            splitting_order(model.moments), out, integrator_options()]


def _width(name: str) -> int:
    return ROW_WIDTH + 10 if name == "run_rotmat_euler" else ROW_WIDTH


@pytest.mark.parametrize("name, case", [
    (name, case) for name in sorted(jit.NATIVE) for case in ("free", "loaded", "damper and rotor")
    if case == "free" or name not in ("run_splitting", "run_splitting4")  # they refuse a damper or a rotor
    or case == "loaded"])
def test_the_machine_code_gives_numbas_results_bit_for_bit(name, case):
    """The saved code is numba's compiled kernel behind a C entry: the same instructions, so the
    same doubles, not merely close ones."""
    model, _ = kernel_models()[case]
    width = _width(name)
    code = native.load(name)
    assert code is not None, f"no machine code saved for {name} (the session's compile_now saves it)"
    by_numba, by_code = _arguments(model, width), _arguments(model, width)
    expected = getattr(runs, name)(*by_numba)
    assert code(*by_code) == expected
    assert np.array_equal(by_code[0], by_numba[0]) and np.array_equal(by_code[8], by_numba[8])
    assert not np.isnan(by_code[8]).any()


def test_a_failure_is_reported_as_numba_reports_it():
    model, _ = kernel_models()["free"]
    args = _arguments(model, ROW_WIDTH)
    args[0][1, 10:13] = [2e6, 0.0, 0.0]  # past OMEGA_LIMIT from the start: body 1 fails at step 1
    assert native.load("run_rk4")(*args) == (1, 1, 1)


@pytest.mark.parametrize("index, value, error", [
    (0, np.zeros((2, ROW_WIDTH), dtype=np.float32), TypeError),
    (0, np.zeros((ROW_WIDTH, 2)).T, TypeError),  # not C-contiguous
    (4, [1.0] * 45, TypeError),
    (7, np.array([0, 1, 2], dtype=np.int32), TypeError),
    (5, np.zeros((1, 2)), ValueError),
    (8, np.zeros((3, 2, ROW_WIDTH)), ValueError),  # n_out is 40
])
def test_arguments_of_another_type_or_shape_are_refused_before_the_call(index, value, error):
    model, _ = kernel_models()["free"]
    args = _arguments(model, ROW_WIDTH)
    args[index] = value
    with pytest.raises(error):
        native.load("run_rk4")(*args)


def _saved_blob(name="run_euler") -> bytes:
    return native.path_of(name).read_bytes()


def _with_file(monkeypatch, tmp_path, blob: bytes):
    path = tmp_path / "k.native"
    path.write_bytes(blob)
    monkeypatch.setattr(native, "path_of", lambda name: path)


@pytest.mark.parametrize("damage", ["flip a byte of the code", "cut the code short", "not ours", "empty"])
def test_a_damaged_file_is_not_mapped(damage, monkeypatch, tmp_path):
    blob = _saved_blob()
    if damage == "flip a byte of the code":
        blob = blob[:-100] + bytes([blob[-100] ^ 1]) + blob[-99:]
    elif damage == "cut the code short":
        blob = blob[:len(blob) // 2]
    elif damage == "not ours":
        blob = b"\x7fELF" + blob[4:]
    else:
        blob = b""
    _with_file(monkeypatch, tmp_path, blob)
    assert native.load("run_euler") is None


def test_code_naming_a_symbol_this_process_lacks_is_not_mapped(monkeypatch, tmp_path):
    """An unresolved symbol would abort the process inside LLVM: it is looked up first."""
    head, _, rest = _saved_blob().partition(b"\n")
    symbol, _, rest = rest.partition(b"\n")
    _, _, code = rest.partition(b"\n")
    assert b"NRT_MemInfo_alloc" in code
    code = code.replace(b"NRT_MemInfo_alloc", b"NRT_MemInfo_nope!")  # same length: the ELF stays whole
    blob = b"\n".join([head, symbol, hashlib.sha256(code).hexdigest().encode(), code])
    assert native._parse(blob) is not None  # a well-formed file...
    _with_file(monkeypatch, tmp_path, blob)
    assert native.load("run_euler") is None  # ...whose code cannot be mapped here


def test_the_file_name_keys_everything_the_code_depends_on(monkeypatch):
    key = native._key()
    assert native.path_of("run_rk4").name == f"runs.run_rk4.{key}{native.SUFFIX}"
    import numba

    monkeypatch.setattr(native, "_state", {"llvm": native._llvm(), "machine": None})
    monkeypatch.setattr(numba, "__version__", numba.__version__ + ".other")
    assert native._key() != key


def _python(script: str, env: dict, *args: str) -> str:
    res = subprocess.run([sys.executable, "-c", textwrap.dedent(script), *args], capture_output=True, text=True,
                         env=env, timeout=600)
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_a_saved_kernel_is_mapped_without_starting_numbas_compiler():
    """What a warm `tumble simulate` gains: numba's typing and lowering registries (0.3-0.45 s) are
    never loaded; the run's results equal, bit for bit, a run through numba's own cache."""
    script = """
        import hashlib, sys
        from tumble.physics.compiled import jit
        from tumble.physics.body import box
        from tumble.physics.integrators import simulate
        from tumble.physics.state import State
        if sys.argv[1] == "numba":
            jit.native.load = lambda name: None
        print(type(jit.kernel("run_rk4_free")).__name__)
        traj = simulate(box(1.0, (0.1, 0.4, 0.9)), State.initial(angular_velocity=[0.3, 5.0, 0.2]), "rk4",
                        1e-3, 2.0)
        print("numba.np.arraymath" in sys.modules)  # imported when numba's registries load
        print(hashlib.sha256(traj.q.tobytes() + traj.w.tobytes()).hexdigest())
    """
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        env.pop(jit.WAIT_VARIABLE, None)
        subprocess.run([sys.executable, "-m", "tumble.physics.compiled.jit", "run_rk4_free"], env=env, check=True,
                       timeout=900)
        assert len(list(Path(cache).rglob(f"*{native.SUFFIX}"))) == 1
        mapped = _python(script, env, "native").split()
        loaded = _python(script, env, "numba").split()
    assert mapped[:2] == ["NativeKernel", "False"]
    assert loaded[:2] == ["CPUDispatcher", "True"]
    assert mapped[2] == loaded[2]


def test_a_kernel_cached_by_numba_alone_gets_its_machine_code_from_a_child():
    """A cache filled before this code existed (or by another version): the run loads numba's
    kernel and starts a child that saves the machine code; the next run maps it."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        env.pop(jit.WAIT_VARIABLE, None)
        subprocess.run([sys.executable, "-m", "tumble.physics.compiled.jit", "run_euler"], env=env, check=True, timeout=900)
        saved = [p for p in Path(cache).rglob(f"*{native.SUFFIX}")]
        assert len(saved) == 1
        stale = saved[0].with_name(f"runs.run_euler.{'0' * 24}{native.SUFFIX}")  # an older version's
        saved[0].rename(stale)
        first = _python("""
            from tumble.physics.compiled import jit
            fn = jit.kernel("run_euler")
            print(type(fn).__name__)
        """, env)
        assert first.strip() == "CPUDispatcher"
        deadline = time.monotonic() + 600
        while not saved[0].exists():  # renamed into place whole by the child
            assert time.monotonic() < deadline, "no child saved the machine code"
            time.sleep(0.2)
        while any(compiles_into(cache)):  # the child removes the stale file, then exits
            assert time.monotonic() < deadline
            time.sleep(0.2)
        second = _python("""
            from tumble.physics.compiled import jit
            print(type(jit.kernel("run_euler")).__name__)
        """, env)
        assert second.strip() == "NativeKernel"
        assert not stale.exists()  # removed when the new code was saved


def test_where_no_code_can_be_made_a_mark_says_so_and_numbas_cache_serves(monkeypatch, tmp_path):
    """Another numba whose internals differ: save() leaves an empty file (no run tries again) and
    load() maps nothing."""
    path = tmp_path / f"runs.run_euler.key{native.SUFFIX}"
    monkeypatch.setattr(native, "path_of", lambda name: path)

    def other_numba(run):
        raise AttributeError("'CFunc' object has no attribute '_library'")

    monkeypatch.setattr(native, "_c_entry", other_numba)
    assert native.save("run_euler") is False
    assert path.read_bytes() == b"" and native.saved("run_euler")
    assert native.load("run_euler") is None
