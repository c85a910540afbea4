"""Kernels on demand (app/physics/jit.py): what runs while a kernel loads or compiles is the same
code uncompiled and gives the compiled kernel's results; a kernel missing from numba's cache is
compiled by a child process (or a thread, if the child fails) while the run goes on uncompiled."""

from __future__ import annotations

import dataclasses
import math
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from conftest import KERNEL_W0, compiles_into, kernel_models

from tumble.physics.compiled import jit
from tumble.physics.integrators import ORDERS, integrator_info, simulate
from tumble.physics.state import State

#: the two paths do the same IEEE operations in the same order; only the math library's last
#: bit (sin, cos, sqrt) may differ, so over a short run they agree to round-off, far inside
#: any method's own error at these steps (1e-9 and more)
ROUND_OFF = 1e-12


def _run(model, integrator, plain: bool, monkeypatch):
    with monkeypatch.context() as m:
        if plain:
            m.setattr(jit, "kernel", jit.uncompiled)
        return simulate(model, State.initial(angular_velocity=KERNEL_W0), integrator, 1e-3, 0.3, sample=0.05)


@pytest.mark.parametrize("integrator, case", [
    (name, case) for name in sorted(ORDERS) + ["dop853"] for case, (_, rigid) in kernel_models().items()
    if rigid or not integrator_info(name).rigid_only])  # the splittings refuse a damper or a rotor
def test_the_uncompiled_kernel_gives_the_compiled_results(integrator, case, monkeypatch):
    model, _ = kernel_models()[case]
    plain = _run(model, integrator, True, monkeypatch)
    compiled = _run(model, integrator, False, monkeypatch)
    for name in ("c", "v", "q", "w"):
        np.testing.assert_allclose(getattr(plain, name), getattr(compiled, name), rtol=0, atol=ROUND_OFF * 10,
                                   err_msg=f"{integrator} {case} {name}")
    if compiled.s is not None:
        np.testing.assert_allclose(plain.s, compiled.s, rtol=0, atol=ROUND_OFF * 10)


def test_each_run_compiles_only_its_own_method():
    """An entry kernel reaches one method's step: compiling rk4 for a free body leaves the
    other methods' steps uncompiled (a fresh process, an empty cache)."""
    script = textwrap.dedent("""
        from tumble.physics.compiled import jit, kernels
        jit.compile_now(["run_rk4_free"])
        compiled = [n for n in ("step_rk4_free", "step_rk4", "step_strang", "step_midpoint", "step_lie_rk4",
                                "step_euler", "step_rotmat_euler", "deriv") if getattr(kernels, n).signatures]
        print(compiled)
    """)
    assert _child(script).strip().splitlines()[-1] == "['step_rk4_free']"


def test_a_kernel_missing_from_the_cache_runs_uncompiled_while_a_child_compiles_it():
    script = textwrap.dedent("""
        from tumble.physics.compiled import jit
        jit.SPAWN_DELAY_S = 0  # the child at once, as in the window
        first = jit.kernel("run_euler")
        assert not jit.is_compiled(first), first
        job = jit._jobs["run_euler"]  # the cache has no run_euler: a child compiles it
        print(jit.note())
        assert job.child.wait(timeout=600) == 0
        assert not jit.is_compiled(jit.kernel("run_euler"))  # a thread loads it from the cache
        job.thread.join(600)
        assert not job.thread.is_alive()
        second = jit.kernel("run_euler")
        assert isinstance(second, jit.native.NativeKernel)  # the child saved its machine code too
        assert jit.note() == "" and not jit.compiling()
        print("compiled")
    """)
    out = _child(script).splitlines()
    assert out[-2].startswith("compiling euler (about ") and out[-2].endswith(" s), running uncompiled")
    assert out[-1] == "compiled"


def test_a_command_starts_the_compile_after_a_short_run_or_as_it_exits():
    """A command's short run ends uncompiled with no child beside it; the child starts as the
    process exits, and the next run finds the kernel compiled. A longer run starts it after
    SPAWN_DELAY_S of stepping uncompiled."""
    script = textwrap.dedent("""
        import sys, time
        from tumble.physics.compiled import jit
        assert not jit.is_compiled(jit.kernel("run_euler"))
        job = jit._jobs["run_euler"]
        assert job.child is None and jit.note().startswith("compiling euler")
        if sys.argv[1] == "long":
            time.sleep(jit.SPAWN_DELAY_S)
            assert not jit.is_compiled(jit.kernel("run_euler"))  # the next piece of the run
            assert job.child is not None
            job.child.wait(timeout=600)
        print("exits")
    """)
    import tempfile

    for case in ("short", "long"):
        with tempfile.TemporaryDirectory() as cache:
            env = {**os.environ, "NUMBA_CACHE_DIR": cache}
            env.pop(jit.WAIT_VARIABLE, None)
            res = subprocess.run([sys.executable, "-c", script, case], capture_output=True, text=True, env=env,
                                 timeout=900)
            assert res.returncode == 0 and res.stdout.strip() == "exits", res.stderr
            deadline = time.monotonic() + 600
            check = "from tumble.physics.compiled import jit\nprint(jit.is_compiled(jit.kernel('run_euler')))"
            while True:  # the child started at exit compiles into the cache
                out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, env=env,
                                     timeout=600).stdout.strip()
                if out == "True":
                    break
                assert time.monotonic() < deadline, "no child compiled the kernel"
                time.sleep(1.0)
            while any(compiles_into(cache)):  # let it finish before its folder goes
                assert time.monotonic() < deadline
                time.sleep(0.2)


def test_a_failed_child_leaves_the_compile_to_a_thread():
    script = textwrap.dedent("""
        import subprocess, sys
        from tumble.physics.compiled import jit
        jit.SPAWN_DELAY_S = 0
        jit._spawn = lambda name: subprocess.Popen([sys.executable, "-c", "exit(3)"])
        assert not jit.is_compiled(jit.kernel("run_euler"))
        job = jit._jobs["run_euler"]
        assert job.child.wait(timeout=600) == 3
        assert not jit.is_compiled(jit.kernel("run_euler"))  # a thread compiles it here
        job.thread.join(600)
        assert jit.is_compiled(jit.kernel("run_euler"))
        print("compiled on a thread")
    """)
    assert _child(script).strip().splitlines()[-1] == "compiled on a thread"


def test_a_run_started_while_anothers_compile_goes_on_waits_for_that_one():
    script = textwrap.dedent("""
        import subprocess, sys, time
        from tumble.physics.compiled import jit
        jit.SPAWN_DELAY_S = 0
        # stands for the compile a run just before this one left behind, named in its marker
        other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "tumble.physics.compiled.jit"])
        deadline = time.monotonic() + 60
        while not jit._is_compile(other.pid):  # until the child has replaced the fork of this process
            assert time.monotonic() < deadline, "the stand-in compile never started"
            time.sleep(0.01)
        jit._spawn = lambda *names: sys.exit("a second compile was started")
        marker = jit.Path(jit.tempfile.gettempdir()) / f"tumble-jit-{jit._cache_key('run_euler')}.pid"
        marker.write_text(str(other.pid))
        assert not jit.is_compiled(jit.kernel("run_euler"))
        job = jit._jobs["run_euler"]
        assert job.child.pid == other.pid and jit.note().startswith("compiling euler")
        assert not jit.is_compiled(jit.kernel("run_euler"))  # still compiling elsewhere
        other.kill(); other.wait(timeout=60)
        assert not jit.is_compiled(jit.kernel("run_euler"))  # a thread loads it (compiles it here)
        job.thread.join(600)
        assert jit.is_compiled(jit.kernel("run_euler"))
        marker.unlink()
        print("waited for the other compile")
    """)
    assert _child(script).strip().splitlines()[-1] == "waited for the other compile"


def test_a_cached_kernel_is_loaded_at_once_or_by_a_thread_in_the_window():
    script = textwrap.dedent("""
        from tumble.physics.compiled import jit
        with jit.never_waiting():  # as the window's simulation thread: the body moves meanwhile
            assert not jit.is_compiled(jit.kernel("run_euler"))
            jit._jobs["run_euler"].thread.join(600)
            assert jit.is_compiled(jit.kernel("run_euler")) and not jit.note()
        print("loaded by a thread")
    """)
    loaded = "from tumble.physics.compiled import jit\n" \
             "assert jit.is_compiled(jit.kernel('run_euler'))\nprint('loaded at once')"
    assert _child(script, "run_euler").strip().splitlines()[-1] == "loaded by a thread"
    assert _child(loaded, "run_euler").strip().splitlines()[-1] == "loaded at once"


def _child(script: str, *cached: str) -> str:
    """stdout of ``script`` run by a fresh interpreter with a numba cache of its own, holding
    only the kernels ``cached`` (compiled into it first by ``python -m tumble.physics.compiled.jit``)."""
    import tempfile

    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        env.pop(jit.WAIT_VARIABLE, None)
        if cached:
            subprocess.run([sys.executable, "-m", "tumble.physics.compiled.jit", *cached], env=env, check=True, timeout=900)
        res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=900)
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_the_bench_times_only_compiled_kernels(monkeypatch):
    """``tumble bench`` loads or compiles every kernel it times before the first run: on a first
    run it would otherwise time the uncompiled code."""
    from tumble.scenario import load
    from tumble.simulation import benchmark

    asked, seen = [], []
    kernel = jit.kernel
    monkeypatch.setattr(jit, "compile_now", lambda names=None, processes=1: asked.append(set(names)))
    monkeypatch.setattr(jit, "kernel", lambda name: seen.append((name, len(asked))) or kernel(name))
    sc = load("t-handle")
    sc = sc.replace(solver=dataclasses.replace(sc.solver, duration=1.0))
    rows = benchmark.run_bench([sc], ["rk4", "splitting", "dop853"], [0.01])
    assert all(math.isfinite(row["steps_per_s"]) for row in rows)
    assert asked == [{"run_rk4_free", "run_splitting", "deriv_batch"}]
    assert {name for name, _ in seen} == asked[0] and all(n == 1 for _, n in seen)
