"""Compiled kernels on demand, without a frozen first run.

:func:`kernel` hands out a compiled kernel (:mod:`.runs`, :mod:`.kernels`) once it is ready in
this process, and never waits for a compile: until then it hands out the SAME code run by the
interpreter (every numba function rebuilt as plain Python over plain Python globals), which gives
the compiled kernel's results to round-off, slower. Meanwhile:

1. an entry kernel's machine code saved by :mod:`.native` is mapped, about 10 ms; else a kernel
   in numba's cache on disk (``cache=True``: ``__pycache__`` beside the module if that folder is
   writable, as in a virtual environment; else numba's folder in the user's cache; or
   ``NUMBA_CACHE_DIR``) is loaded, 0.3-1 s as it starts numba's compiler (and a child process
   saves the machine code for the next run): before the call returns, or, inside
   :func:`never_waiting` (the window's simulation thread), on a thread;
2. a kernel not there (a first run) is compiled into the cache (and its machine code saved) by a
   child process (``python -m tumble.physics.compiled.jit NAME``, on another core; started at once in the
   window, by a command after :data:`SPAWN_DELAY_S` of stepping uncompiled or as it exits),
   then loaded by a thread; if the
   child fails (no cache can be written), that thread compiles it in this process instead.

A caller asks again for each piece of its run, so a long run switches to the compiled kernel.
``TUMBLE_JIT=wait`` compiles in the calling thread instead (the behaviour before: a first run waits).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import subprocess
import sys
import tempfile
import threading
import time
import types
from dataclasses import dataclass, field
from pathlib import Path

from numba.core.dispatcher import Dispatcher

from . import kernels, native, runs

#: kernels compiled on demand: name -> (module, argument types)
SIGNATURES = {name: (runs, runs.RUN_SIGNATURE.args) for name in (*runs.RUNS.values(), *runs.FREE_RUNS.values())}
SIGNATURES["deriv_batch"] = (kernels, kernels.DERIV_BATCH_SIGNATURE.args)
#: the kernels whose machine code :mod:`.native` saves and maps (every entry kernel of a run)
NATIVE = frozenset(name for name, (module, _) in SIGNATURES.items() if module is runs)
#: a child compiling one kernel is given up (and the kernel compiled on a thread) after this long (s)
CHILD_TIMEOUT_S = 600.0
#: seconds each kernel took to compile in a child process with an empty cache (``python -m
#: tumble.physics.compiled.jit NAME``) on a 2-core machine busy with other work (load 4-5): what the window
#: and the progress bar announce, an upper figure (2 to 3 times less on an idle machine)
TYPICAL_COMPILE_S = {"run_rk4_free": 11.0, "run_rk4": 15.0, "run_splitting": 11.0, "run_splitting4": 12.0,
                     "run_midpoint": 8.0, "run_euler": 8.0, "run_semi_implicit_euler": 8.0,
                     "run_rotmat_euler": 11.0, "run_lie_rk4": 10.0, "deriv_batch": 4.0}
DEFAULT_COMPILE_S = 15.0
#: a command (not the window) that meets a kernel missing from the cache starts the child compiling
#: it only after stepping uncompiled this long, or as it exits: a short run (simulate t-handle
#: steps 60,000 times in 0.4 s uncompiled) ends before the child could help it, and a child
#: started at once slowed it by 0.1-0.2 s on 2 cores; the next run finds the kernel either way
SPAWN_DELAY_S = 0.5
#: the environment variable that makes :func:`kernel` compile in the calling thread
WAIT_VARIABLE = "TUMBLE_JIT"


@dataclass
class _Job:
    """A kernel on its way: loaded from the cache by a thread, else compiled by a child process,
    then loaded (or, if the child failed, compiled) by a thread."""

    started: float
    compiling: bool = False
    spawn_at: float | None = None  # when the child is due (a command's job, see SPAWN_DELAY_S)
    child: subprocess.Popen | _Elsewhere | None = None
    thread: threading.Thread | None = None
    errors: list = field(default_factory=list)


_lock = threading.Lock()
_local = threading.local()
_ready: set[str] = set()
_native: dict[str, native.NativeKernel] = {}  # the kernels of _ready mapped from saved machine code
_jobs: dict[str, _Job] = {}
_uncompiled: dict[str, types.FunctionType] = {}


def kernel(name: str):
    """The kernel ``name`` (a key of :data:`SIGNATURES`): compiled if it is ready, else the same
    code uncompiled while it is compiled in the background. Call it again for each piece of a
    run to switch once it is ready. A kernel in numba's cache is loaded before returning (a
    fraction of a second, about what the uncompiled code takes for 50,000 steps), except
    inside :func:`never_waiting`, where a thread loads it; with ``TUMBLE_JIT=wait`` a missing
    kernel is compiled before returning. Thread: any."""
    if name in _ready:
        return _compiled(name)
    if os.environ.get(WAIT_VARIABLE) == "wait":
        compile_now([name])
        return _compiled(name)
    with _lock:  # a thread marks its kernel ready under the lock: what is returned is decided here
        _advance(name, in_background=getattr(_local, "never_wait", False))
        ready = name in _ready
    return _compiled(name) if ready else uncompiled(name)


def is_compiled(function) -> bool:
    """True for a compiled kernel handed out by :func:`kernel` (numba's, or its saved machine code),
    False for an uncompiled one."""
    return isinstance(function, (Dispatcher, native.NativeKernel))


@contextlib.contextmanager
def never_waiting():
    """Within it, :func:`kernel` in this thread returns at once even when the kernel is in
    numba's cache (loading it starts numba's compiler, 0.3-1 s): the window's simulation
    thread moves the body meanwhile."""
    before = getattr(_local, "never_wait", False)
    _local.never_wait = True
    try:
        yield
    finally:
        _local.never_wait = before


def compile_now(names=None, processes: int = 1) -> None:
    """Load from the cache, or compile, every kernel of ``names`` (default all) before returning.
    With ``processes`` > 1 the kernels missing from the cache are first compiled into it by that
    many child processes at once (all of them take about a minute on one core)."""
    names = list(SIGNATURES if names is None else names)
    missing = [name for name in names if not _load_ready(name, save_elsewhere=False)]
    if processes > 1 and len(missing) > 1:
        children = [_spawn(*missing[k::processes]) for k in range(min(processes, len(missing)))]
        for child in children:
            child.wait()  # a failed child leaves its kernels to the compile below
    for name in names:
        _dispatcher(name).compile(SIGNATURES[name][1])
        if name in NATIVE and not native.saved(name):
            native.save(name)
        with _lock:
            _ready.add(name)


def compiling() -> list[tuple[str, float, float]]:
    """(kernel, seconds spent so far, typical seconds) of every kernel being compiled now."""
    now = time.monotonic()
    with _lock:
        return [(name, now - job.started, TYPICAL_COMPILE_S.get(name, DEFAULT_COMPILE_S))
                for name, job in _jobs.items() if job.compiling]


def note() -> str:
    """What the window and the progress bar say while a kernel compiles ("" when none does)."""
    jobs = compiling()
    if not jobs:
        return ""
    name, spent, typical = max(jobs, key=lambda job: job[2] - job[1])
    left = max(typical - spent, 1.0)
    what = name.removeprefix("run_").replace("_", "-")
    return f"compiling {what} (about {left:.0f} s), running uncompiled"


def uncompiled(name: str):
    """The kernel ``name`` as plain Python: the same source, every numba function it calls
    rebuilt over plain Python globals (nothing is compiled)."""
    if not _uncompiled:
        with _lock:
            if not _uncompiled:
                plain = _plain_python((kernels, runs))
                plain.update({key: _on_lists(plain[key]) for key in runs.ELEMENTWISE})
                _uncompiled.update(plain)
    return _uncompiled[name]


# ------------------------------------------------------------------ internals


def _compiled(name: str):
    """The ready kernel ``name``: its saved machine code if that was mapped, else numba's."""
    return _native.get(name) or _dispatcher(name)


def _dispatcher(name: str):
    module, _ = SIGNATURES[name]
    return getattr(module, name)


def _advance(name: str, in_background: bool) -> None:
    """Move ``name``'s job on (under ``_lock``): start it (load it from the cache here unless
    ``in_background``, else on a thread), or after its child process, load what the child
    cached (or compile it here if the child failed) on a thread."""
    job = _jobs.get(name)
    if job is None:
        if not in_background and _load_ready(name):
            _ready.add(name)
            return
        job = _jobs[name] = _Job(time.monotonic())
        if in_background:
            _start_thread(name, job, _load_or_spawn)
        else:  # not in the cache (just looked)
            job.compiling = True
            if SPAWN_DELAY_S > 0:
                job.spawn_at = job.started + SPAWN_DELAY_S  # or at exit (_spawn_due)
            else:
                job.child = _spawn_once(name)
        return
    if job.errors:
        error = job.errors[0]
        del _jobs[name]
        raise error
    if job.spawn_at is not None:
        if time.monotonic() >= job.spawn_at:
            job.spawn_at = None
            job.child = _spawn_once(name)
        return
    if job.thread is not None and job.thread.is_alive():
        return
    if job.child is not None:
        code = job.child.poll()
        if code is None and time.monotonic() - job.started < CHILD_TIMEOUT_S:
            return
        if code is None:
            job.child.kill()
            job.child.wait()
        job.child = None
        _start_thread(name, job, _compile)


def _spawn_due() -> None:
    """At exit: start the compiles a short run left due, for the next run to find."""
    with _lock:
        for name, job in _jobs.items():
            if job.spawn_at is not None:
                job.spawn_at = None
                job.child = _spawn_once(name)


atexit.register(_spawn_due)


def _start_thread(name: str, job: _Job, target) -> None:
    job.thread = threading.Thread(target=target, args=(name, job), daemon=True, name=f"tumble-jit-{name}")
    job.thread.start()


def _load_or_spawn(name: str, job: _Job) -> None:
    """Thread: the kernel from numba's cache, else a child process compiling it into the cache."""
    try:
        if _load_ready(name):
            _done(name)
            return
        job.compiling = True
        job.child = _spawn_once(name)
    except Exception as err:  # raised by the next kernel() call, in the caller's thread
        job.errors.append(err)


def _spawn(*names: str) -> subprocess.Popen:
    """A child process compiling the kernels ``names`` into numba's cache (this module's main)."""
    return subprocess.Popen([sys.executable, "-m", __name__, *names], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # Ctrl+C on the run leaves the compile be


class _Elsewhere:
    """The compile of a kernel that another process started (a run just before this one): done
    when that child exits; its pid is in the kernel's marker file (:func:`_spawn_once`)."""

    def __init__(self, pid: int):
        self.pid = pid

    def poll(self) -> int | None:
        return None if _is_compile(self.pid) else 0

    def kill(self) -> None:  # not ours to stop
        pass

    def wait(self, timeout=None) -> int:
        return 0


def _spawn_once(name: str):
    """A child compiling ``name`` into the cache, or the one another process already started for
    the same cache (a run started while the previous run's compile goes on does not start a
    second one on the same cores)."""
    marker = Path(tempfile.gettempdir()) / f"tumble-jit-{_cache_key(name)}.pid"
    try:
        pid = int(marker.read_text(encoding="ascii"))
    except (OSError, ValueError):
        pid = 0
    if pid and _is_compile(pid):
        return _Elsewhere(pid)
    child = _spawn(name)
    with contextlib.suppress(OSError):
        marker.write_text(str(child.pid), encoding="ascii")
    return child


def _cache_key(name: str) -> str:
    """The kernel ``name`` in the cache its compile fills (this install's, or NUMBA_CACHE_DIR)."""
    where = f"{kernels.__file__}|{os.environ.get('NUMBA_CACHE_DIR', '')}|{name}"
    return hashlib.sha1(where.encode()).hexdigest()[:16]


def _is_compile(pid: int) -> bool:
    """True if process ``pid`` is a compile of this module's main (Linux; elsewhere False)."""
    try:
        return b"tumble.physics.compiled.jit" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _compile(name: str, job: _Job) -> None:
    """Thread: load what the child compiled into the cache (its machine code, else numba's
    overload), or compile here if it could not."""
    try:
        if not _load_ready(name, save_elsewhere=False):
            _dispatcher(name).compile(SIGNATURES[name][1])
        _done(name)
    except Exception as err:
        job.errors.append(err)


def _done(name: str) -> None:
    with _lock:
        _ready.add(name)
        _jobs.pop(name, None)


def _load_ready(name: str, save_elsewhere: bool = True) -> bool:
    """Make ``name`` callable compiled without compiling: its saved machine code mapped
    (:mod:`.native`), else its overload loaded from numba's cache; then, with
    ``save_elsewhere``, a child process saves the machine code for the next run. False if
    neither is there."""
    if name in NATIVE:
        function = native.load(name)
        if function is not None:
            _native[name] = function
            return True
    if not _load_cached(_dispatcher(name), SIGNATURES[name][1]):
        return False
    if save_elsewhere and name in NATIVE and native.path_of(name) is not None and not native.saved(name):
        _spawn_once(name)  # not waited for: this run goes on with numba's kernel
    return True


def _load_cached(dispatcher, argtypes) -> bool:
    """Load ``argtypes``' compiled overload from numba's disk cache if it is there, never
    compiling (the first half of ``Dispatcher.compile``; numba has no public call for it). The
    index is read first: loading initialises numba's compiler (0.3-1 s), needless on a miss."""
    from numba.core.compiler_lock import global_compiler_lock

    argtypes = tuple(argtypes)
    try:
        with global_compiler_lock:
            if argtypes in dispatcher.overloads:
                return True
            cache = dispatcher._cache
            if cache._cache_file.load(cache._index_key(argtypes, dispatcher.targetctx.codegen())) is None:
                return False
            cres = cache.load_overload(argtypes, dispatcher.targetctx)
            if cres is None:
                return False
            dispatcher.targetctx.insert_user_function(cres.entry_point, cres.fndesc, [cres.library])
            dispatcher.add_overload(cres)
            return True
    except AttributeError:  # another numba: a compile (which reads the cache first) decides
        return False


def _on_lists(run):
    """``run`` (an entry kernel of :data:`.runs.ELEMENTWISE`, uncompiled) stepping its rows and
    parameters as Python lists, the rows copied back."""
    def run_on_lists(ys, h, n_out, every, params, points, wforces, order, out, options):
        rows = ys.tolist()
        result = run(rows, h, n_out, every, params.tolist(), points, wforces, order, out, options)
        ys[:] = rows
        return result
    return run_on_lists


def _plain_python(modules) -> dict:
    """Every numba function of ``modules`` as a plain function over a copy of its module's
    globals in which the other numba functions are plain too."""
    spaces = {m.__name__: dict(vars(m)) for m in modules}
    plain = {}
    for module in modules:
        for value in vars(module).values():
            if isinstance(value, Dispatcher) and value.py_func.__module__ in spaces:
                f = value.py_func
                plain[id(value)] = types.FunctionType(f.__code__, spaces[f.__module__], f.__name__,
                                                      f.__defaults__, f.__closure__)
    for space in spaces.values():
        for key, value in list(space.items()):
            if id(value) in plain:
                space[key] = plain[id(value)]
    return {name: spaces[module.__name__][name] for name, (module, _) in SIGNATURES.items()}


if __name__ == "__main__":  # the child: compile the kernels named into the cache
    compile_now(sys.argv[1:])
