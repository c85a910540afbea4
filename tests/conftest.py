"""The tests' shared house, one of each: the repository root, the longest GUI wait, the real
command line in a child process as a user types it (run to its end, or kept running and read
line by line, every wait with its deadline) or in this process, and the one check of a refusal
(exit 2, one line, nothing written); every compiled kernel ready before the first test; the
fixtures several test modules share; and the suite side by side under pytest-xdist: a private
home per test process, the most expensive modules first, the markers ``slow`` (with its reason),
``gui`` and ``engines``.

Test modules import the plain helpers (``from conftest import ROOT, tumble, refused``): this
module is the only one named ``conftest`` on ``sys.path``, since ``tests/gui`` is a package
(its conftest is ``gui.conftest``).
"""

from __future__ import annotations

import functools
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]

#: the longest a GUI test waits for one thing (a first frame, a signal, a run's end) (ms): the
#: longest of the 15-30 s the GUI test modules each chose before; a wait that passes returns at
#: once, so only a failing test ever waits this long
WAIT_MS = 30_000

#: the longest a test waits for a command to end, or for a running one's next line (s)
CHILD_S = 180


# ------------------------------------------------------------------ side by side (pytest-xdist)

#: the variables that name a user's folders: each test process (an xdist worker, or the one
#: process of a plain run) points them at a private temporary home, so that two workers, two runs
#: or a test and its developer never share a settings file or a cache (QSettings, matplotlib's font
#: cache, pip's cache, the commands the tests start in children inherit them)
HOME_VARIABLES = {"HOME": "", "XDG_CONFIG_HOME": "config", "XDG_CACHE_HOME": "cache", "XDG_DATA_HOME": "data",
                  "XDG_STATE_HOME": "state"}
_home: dict = {}


def _worker(config) -> str:
    """This process's xdist worker id ("gw0", ...), or "main" without xdist."""
    return getattr(config, "workerinput", {}).get("workerid", "main")


#: xdist workers per core for ``-n auto`` (pyproject.toml's addopts): most of a test's time here
#: is waiting, not computing (a window shown for its ``--quit-after`` seconds, a live demo in real
#: time, a child's start-up, a browser), so two workers a core keep both cores busy; the suite's
#: CPU time over its wall time on two workers was about a third (README, for developers)
WORKERS_PER_CORE = 2


#: Mesa's software rasteriser (llvmpipe) draws with one thread a core by default; beside the other
#: workers those threads only compete for the same two cores. With one thread a window takes a
#: quarter less CPU for each second it is open (`tumble bench --gui --seconds 4 t-handle`: 11.1 s
#: of CPU instead of 16.5, 30 fps instead of 40), and the suite's windows are open for minutes in
#: all. Set before any window or child process starts; a developer's own setting is kept.
os.environ.setdefault("LP_NUM_THREADS", "1")


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: :data:`WORKERS_PER_CORE` workers for each core this process may use."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, WORKERS_PER_CORE * cores)


#: modules whose tests share no module fixture and are long one by one (the README's blocks, each
#: a few commands: 7 minutes in all): under ``--dist loadscope`` each of their tests is a unit of
#: work of its own, spread over the workers, instead of the whole module going to one of them
SPREAD_MODULES = ("tests/test_readme_as_written.py", "tests/test_hostile_audit.py", "tests/test_views.py",
                  "tests/test_hostile_live.py", "tests/test_scenarios.py")


def pytest_xdist_make_scheduler(config, log):
    """``--dist loadscope`` with the tests of :data:`SPREAD_MODULES` scheduled one by one."""
    if config.getoption("dist", None) != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SpreadScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:  # xdist's documented point of change
            if nodeid.split("::", 1)[0] in SPREAD_MODULES:
                return nodeid
            return super()._split_scope(nodeid)

    return SpreadScheduling(config, log)


#: a file to append each test's CPU seconds to (this process's and its reaped children's, set-up,
#: call and tear-down together), when set: ``TUMBLE_TEST_CPU=cpu.tsv pytest``; the README's
#: developers' section ranks the suite's CPU by module from it
CPU_LOG = os.environ.get("TUMBLE_TEST_CPU")


def _cpu_seconds() -> float:
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if not CPU_LOG:
        return (yield)
    cpu, wall = _cpu_seconds(), time.perf_counter()
    try:
        return (yield)
    finally:
        with open(CPU_LOG, "a", encoding="utf-8") as log:
            log.write(f"{item.nodeid}\t{_cpu_seconds() - cpu:.3f}\t{time.perf_counter() - wall:.3f}\n")


def pytest_configure(config):
    """A private home for this process, made before any test module is imported."""
    import tempfile

    home = Path(tempfile.mkdtemp(prefix=f"tumble-tests-home-{_worker(config)}-"))
    _home.update(folder=home, before={name: os.environ.get(name) for name in HOME_VARIABLES})
    for name, sub in HOME_VARIABLES.items():
        (home / sub).mkdir(exist_ok=True)
        os.environ[name] = str(home / sub)


def pytest_unconfigure(config):
    import shutil

    if not _home:
        return
    for name, value in _home["before"].items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    shutil.rmtree(_home["folder"], ignore_errors=True)
    _home.clear()


#: a test's cost for the order the modules start in: a slow test counts this many quick ones, or
#: its own time limit (s) when it sets one
SLOW_WEIGHT = 20


def _cost(item) -> float:
    if item.get_closest_marker("slow") is None:
        return 1.0
    limit = item.get_closest_marker("timeout")
    return float(limit.args[0]) if limit is not None and limit.args else float(SLOW_WEIGHT)


#: what makes a test slow, read from its source and its fixtures' sources: a window, a command in
#: a child process (each starts Python and imports numpy, scipy, numba: 1-3 s before any work)
SLOW_SIGNS = {
    "opens a window": re.compile(r"\b[A-Z]\w*(?:Window|Dialog)\(|first_frame_drawn|\bopen_(?:window|view|compare|stability|any)\b"),
    "runs tumble or Python in a child process": re.compile(
        r"(?<![.\w])(?:tumble|tumble_headless|run_tumble|Running|run_measured|cli|live)\("
        r"|subprocess\.(?:run|Popen|check_call|check_output)\(|sys\.executable"),
}
#: a test that sets a time limit at least this long (s) says it is slow
SLOW_LIMIT_S = 120


@functools.lru_cache(maxsize=None)
def _source(function) -> str:
    """The code of ``function`` without its strings and comments (a pattern in a string calls nothing);
    kept per function (the cases of a parametrized test, the fixtures tests share: read once)."""
    import inspect
    import io
    import textwrap
    import tokenize

    try:
        text = textwrap.dedent(inspect.getsource(function))
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
                  if t.type not in (tokenize.STRING, tokenize.COMMENT)]
        return tokenize.untokenize(tokens)
    except (OSError, TypeError, SyntaxError, tokenize.TokenError):
        return ""


@functools.lru_cache(maxsize=None)
def _with_helpers(functions: tuple, module, depth: int = 2) -> str:
    """The sources of ``functions`` and of the functions of ``module`` they call by name, to
    ``depth`` calls deep (a test's own wrapper of a command, ``run_bench(...)``); kept per
    (functions, module)."""
    import inspect

    seen, texts = set(), []
    for _ in range(depth + 1):
        found = []
        for function in functions:
            if function is None or id(function) in seen:
                continue
            seen.add(id(function))
            text = _source(function)
            texts.append(text)
            for name in set(re.findall(r"\b([A-Za-z_]\w*)\(", text)):
                helper = getattr(module, name, None)
                if inspect.isfunction(helper) and helper.__module__ == getattr(module, "__name__", None):
                    found.append(helper)
        functions = found
    return "\n".join(texts)


def _slow_reasons(item) -> list[str]:
    """Why ``item`` is slow: what its source or the sources of the fixtures it uses (those the
    tests define) do, or the long time limit it sets; [] for a quick test."""
    tests = Path(__file__).parent
    functions = [getattr(item, "function", None)]
    for name in item.fixturenames:
        for fixturedef in (item._fixtureinfo.name2fixturedefs.get(name) or ())[-1:]:
            code = getattr(getattr(fixturedef, "func", None), "__code__", None)
            if code is not None and Path(code.co_filename).is_relative_to(tests):
                functions.append(fixturedef.func)
    text = _with_helpers(tuple(functions), getattr(item, "module", None))
    reasons = [why for why, sign in SLOW_SIGNS.items() if sign.search(text)]
    limit = item.get_closest_marker("timeout")
    if limit is not None and limit.args and float(limit.args[0]) >= SLOW_LIMIT_S:
        reasons.append(f"sets a time limit of {limit.args[0]} s")
    return reasons


def _mark_slow(items) -> None:
    """Mark ``slow`` (with its reasons) every test whose source or fixtures open a window or run a
    command in a child process, or that sets a long time limit, except, in a module where every
    test would be slow, the one with the fewest such calls: ``-m "not slow"`` (the quick loop)
    then runs a test of every module's subject. A test marked slow by hand stays slow."""
    modules: dict[str, list] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::")[0], []).append(item)
    for module_items in modules.values():
        found = []
        for item in module_items:
            if item.get_closest_marker("slow") is not None:
                continue
            reasons = _slow_reasons(item)
            if reasons:
                found.append((item, reasons))
        quick = [item for item in module_items if item.get_closest_marker("slow") is None]
        keep = None
        if found and len(found) == len(quick):  # every test of the module would be slow: keep the lightest
            keep = min(found, key=lambda entry: (len(entry[1]), len(_source(getattr(entry[0], "function", None)))))[0]
        for item, reasons in found:
            if item is not keep:
                item.add_marker(pytest.mark.slow(reason="; ".join(reasons)))


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config, items):
    """Slow tests carry ``slow`` with its reason (:func:`_mark_slow`), the GUI tests ``gui``, the
    engines view's cases ``engines``; and the modules start most expensive first, so that no long
    module starts last while the other worker idles. Under ``--dist loadscope`` (pyproject.toml)
    a module's tests run on one worker, so its module fixtures are made once. (``--dist loadgroup``
    with ``xdist_group`` marks would group finer, but pytest-xdist 3.8 cannot rename the node ids
    of pytest 9, so its groups are silently ignored.)"""
    for item in items:  # a case of a test over every view that is the engines view runs the engines
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "engines" in [value for value in params.values() if isinstance(value, str)]:
            item.add_marker(pytest.mark.engines)
            item.add_marker(pytest.mark.slow(reason="the engines view runs MuJoCo, PyBullet, DART and Drake"))
    _mark_slow(items)
    gui = Path(__file__).parent / "gui"
    for item in items:
        if Path(item.fspath).is_relative_to(gui) or "qtbot" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.gui)
    # whole modules move (a module's fixtures are torn down when its tests are left, and loadscope
    # sends a module to one worker), the most expensive first; the order within a module is kept
    modules: dict[str, list] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::")[0], []).append(item)
    ranked = sorted(modules.values(), key=lambda module: -sum(_cost(item) for item in module))
    items[:] = [item for module in ranked for item in module]
    return (yield)


#: CPU seconds of the busy loop :func:`contention` times (long against the scheduler's 4 ms slices)
CONTENTION_PROBE_S = 0.25


def contention() -> float:
    """How many times longer CPU-bound work takes now than on a free core (>= 1): the wall time
    of a short busy loop in this process over its CPU time. A deadline for a child's work that
    must hold on a loaded machine (two busy loops, the other test workers) is scaled by it, so
    that it names the promise (Ctrl+C within a second) and not the machine's speed."""
    wall, cpu = time.perf_counter(), time.thread_time()
    while time.thread_time() - cpu < CONTENTION_PROBE_S:
        pass
    return max(1.0, (time.perf_counter() - wall) / (time.thread_time() - cpu))


def headless_env(**extra) -> dict:
    """This environment without a display, as on a server (plus ``extra`` variables)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.update(extra)
    return env


def _command(args) -> list[str]:
    return [sys.executable, "-m", "tumble", *map(str, args)]


def _env(env):
    """``env``, or this environment, without TUMBLE_DEBUG (a traceback would hide the one line)."""
    env = dict(os.environ if env is None else env)
    env.pop("TUMBLE_DEBUG", None)
    return env


def tumble(*args, env=None, cwd=ROOT, timeout=CHILD_S, input=None) -> subprocess.CompletedProcess:
    """``tumble ARGS`` run to its end in a child, from ``cwd`` (the repository root), in this
    environment (or ``env``); fails the test past ``timeout`` seconds."""
    return subprocess.run(_command(args), cwd=cwd, env=_env(env), capture_output=True, text=True, timeout=timeout,
                          input=input)


def tumble_headless(*args, env=None, timeout=CHILD_S) -> subprocess.CompletedProcess:
    """``tumble ARGS`` with no display (or in ``env``), as an export runs on a server."""
    return tumble(*args, env=env or headless_env(), timeout=timeout)


class Running:
    """``tumble ARGS`` kept running in a child: its stdout read line by line (each line within a
    deadline), stdin open when asked for; killed on leaving a ``with`` block if still running.

    Two daemon threads drain stdout and stderr, so that neither pipe ever fills and blocks the child."""

    def __init__(self, *args, env=None, cwd=ROOT, stdin=False):
        self.proc = subprocess.Popen(_command(args), cwd=cwd, env=_env(env), text=True, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, stdin=subprocess.PIPE if stdin else None)
        self._lines: queue.Queue = queue.Queue()
        self._err: list[str] = []
        self._readers = [threading.Thread(target=self._drain, args=(self.proc.stdout, self._lines.put), daemon=True),
                         threading.Thread(target=self._drain, args=(self.proc.stderr, self._err.append), daemon=True)]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _drain(pipe, put):
        for line in pipe:
            put(line)
        put(None)

    def readline(self, timeout=CHILD_S) -> str:
        """The child's next line of stdout ('' once it has closed stdout); fails the test when
        none comes within ``timeout`` seconds."""
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"tumble printed no line within {timeout} s") from None
        if line is None:
            self._lines.put(None)
            return ""
        return line

    def send(self, text: str) -> None:
        self.proc.stdin.write(text)
        self.proc.stdin.flush()

    def finish(self, timeout=CHILD_S) -> tuple[str, str]:
        """(rest of stdout, all of stderr) once the child has ended, within ``timeout`` seconds."""
        self.proc.wait(timeout=timeout)
        for reader in self._readers:
            reader.join(timeout)
        rest = []
        while (line := self.readline(timeout)) != "":
            rest.append(line)
        return "".join(rest), "".join(line for line in self._err if line is not None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=CHILD_S)
        for reader in self._readers:
            reader.join(CHILD_S)
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()


def refused(res, *words, unwritten=(), quiet=False) -> str:
    """The one refusal check: ``res`` (a finished command: ``returncode``, ``stderr``) exited 2
    with a single line on stderr holding every one of ``words``, none of the files ``unwritten``
    exists (or kept its old text, given as ``(path, text)``), and with ``quiet`` nothing went to
    stdout. Returns the line."""
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1, (res.returncode, res.stderr)
    for word in words:
        assert word in lines[0], (word, lines[0])
    assert "Traceback" not in res.stderr
    for item in unwritten:
        if isinstance(item, tuple):
            assert Path(item[0]).read_text() == item[1], f"{item[0]} changed"
        else:
            assert not Path(item).exists(), f"{item} was written"
    if quiet:
        assert res.stdout == "", res.stdout
    return lines[0]


class Ran:
    """A finished in-process command, shaped as :class:`subprocess.CompletedProcess` is."""

    def __init__(self, returncode: int, stdout: str, stderr: str):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def tumble_here(capsys, *args) -> Ran:
    """``tumble ARGS`` run in this process (the parser and ``main`` as the entry point calls them)."""
    from tumble.cli.core import main

    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return Ran(status, out, err)


# ------------------------------------------------------------------ shared by several test modules

def mp4_frames(path) -> list:
    """Every frame of a movie, decoded by ffmpeg to PNGs and read with imageio (subprocess.run closes
    every pipe; imageio's streaming readers leave some to the garbage collector)."""
    import tempfile

    import imageio.v3 as iio
    import imageio_ffmpeg

    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([imageio_ffmpeg.get_ffmpeg_exe(), "-v", "error", "-i", str(path), "-fps_mode", "passthrough",
                        f"{tmp}/%05d.png"], check=True, capture_output=True, timeout=CHILD_S)
        return [iio.imread(p) for p in sorted(Path(tmp).iterdir())]


#: mesh bodies: relative agreement of trimesh's integrals with the closed forms: both are exact
#: for polyhedra, so only round-off separates them (sums over 12-24 faces of products of
#: coordinates ~ 1e-15 each)
EXACT_RTOL = 1e-9
#: mesh bodies: a density with no special digits (kg/m^3)
DENSITY = 987.6


def box_inertia(mass, edges):
    a, b, c = edges
    return mass / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])


def parallel_axis(mass, r):
    """Inertia of a point mass at r about the origin (the parallel-axis term)."""
    r = np.asarray(r, dtype=float)
    return mass * (np.dot(r, r) * np.eye(3) - np.outer(r, r))


def rel_err(a, b):
    return np.max(np.abs(np.asarray(a) - np.asarray(b))) / np.max(np.abs(b))


def write_scenario(folder, body_lines, name="s.toml"):
    """A scenario file of these ``[body]`` lines spun about x."""
    path = folder / name
    path.write_text("[body]\n" + "\n".join(body_lines) + "\n[initial]\nangular_velocity = [1.0, 0.0, 0.0]\n")
    return path


#: compiled kernels: the spin of the kernel cases
KERNEL_W0 = np.array([0.3, 5.0, 0.2])


def kernel_models():
    """The compiled kernels' cases: {name: (model, rigid)}: a free box, the box under every
    kind of load, and the box with a damper and a rotor (rigid False)."""
    import dataclasses

    from tumble.physics.body import Damper, Rotor, box
    from tumble.physics.loads import Drag, Force, Loads, Torque
    from tumble.physics.model import compile_model

    body = box(1.2, (0.1, 0.4, 0.9))
    loads = Loads(torques=[Torque([0.01, 0.0, 0.02], frame="body")],
                  forces=[Force([0.0, 0.3, 0.0], point=[0.1, 0.0, 0.0], frame="world"),
                          Force([0.0, 0.0, 0.2], point=[0.0, 0.1, 0.0], frame="body")],
                  drags=[Drag("linear", [1e-3, 2e-3, 5e-4]), Drag("quadratic", [1e-3, 1e-3, 2e-3])],
                  gravity=[0.0, 0.0, -9.81])
    parts = dataclasses.replace(body, damper=Damper(0.002, 0.01), rotor=Rotor([0.0, 0.0, 1.0], 0.02))
    return {"free": (compile_model(body), True), "loaded": (compile_model(body, loads), True),
            "damper and rotor": (compile_model(parts), False)}


def compiles_into(cache: str):
    """The compiles (``python -m tumble.physics.compiled.jit``) running with NUMBA_CACHE_DIR ``cache``."""
    for proc in Path("/proc").iterdir():
        try:
            if (proc.name.isdigit() and b"tumble.physics.compiled.jit" in (proc / "cmdline").read_bytes()
                    and f"NUMBA_CACHE_DIR={cache}".encode() in (proc / "environ").read_bytes().split(b"\0")):
                yield int(proc.name)
        except OSError:
            continue


@pytest.fixture(scope="session", autouse=True)
def x_server_kept_from_resetting():
    """One connection to this session's Xvfb (pytest-xvfb) held open: an X server with no client
    left resets itself and drops a connection made meanwhile, so a tool a test runs between two
    windows (xdotool, xwininfo) could be dropped. The app's own check holds a connection the same
    way (tumble.display); test_display_check.py tries it on a server of its own, left to reset."""
    import ctypes

    display = None
    if os.environ.get("DISPLAY"):
        try:
            xlib = ctypes.CDLL("libX11.so.6")
            xlib.XOpenDisplay.restype = ctypes.c_void_p
            xlib.XOpenDisplay.argtypes = [ctypes.c_char_p]
            display = xlib.XOpenDisplay(None)
        except OSError:
            pass
    yield display


@pytest.fixture(scope="session", autouse=True)
def compiled_kernels():
    """Every compiled kernel loaded from numba's cache, or compiled into it, once per session
    before any test: no test's wait includes a first compile, and the commands the tests run in
    child processes find the kernels cached.

    Side by side (pytest-xdist), the first worker compiles under a file lock while the others
    wait for it and then load what it cached: two workers compiling the same kernels at once
    would start four compiles on two cores and each write the same cache files."""
    import fcntl
    import hashlib
    import tempfile

    from tumble.physics.compiled import jit, kernels

    # one lock per numba cache (this checkout's __pycache__, or NUMBA_CACHE_DIR), shared by every
    # worker and every run that fills that cache
    where = f"{kernels.__file__}|{os.environ.get('NUMBA_CACHE_DIR', '')}"
    lock = Path(tempfile.gettempdir()) / f"tumble-tests-kernels-{hashlib.sha1(where.encode()).hexdigest()[:16]}.lock"
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            jit.compile_now(processes=min(2, os.cpu_count() or 1))
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture
def simulate_refuses(tmp_path):
    """``check(toml_text, field)``: ``tumble simulate`` of that file, run in a child, exits 2
    with one line ``FIELD must ... got ...`` on stderr and writes no output."""

    def check(text: str, field: str) -> None:
        path = tmp_path / "bad.toml"
        path.write_text(text)
        out = tmp_path / "x.csv"
        refused(tumble("simulate", path, "--out", out, timeout=120), field + " must ", "got", unwritten=[out])

    return check


@pytest.fixture
def synthetic_timeline():
    """``make(scale=1, n=2001, t_end=8)``: an export Timeline (a Recording) whose every column and
    component is a different known function of t (drifts of ``scale`` * 4e-12), flips at 1.5, 3, 6.5 s."""
    import numpy as np

    from tumble.export.timeline import Timeline

    def make(scale: float = 1.0, n: int = 2001, t_end: float = 8.0) -> Timeline:
        t = np.linspace(0.0, t_end, n)
        k = np.arange(3)
        L = (k + 1) * np.sin(t[:, None] * (k + 1)) + 3 * k
        w = (k + 2) * np.cos(t[:, None] / (k + 1)) - k
        return Timeline(t=t, c=np.zeros((n, 3)), v=np.zeros((n, 3)), q=np.tile([1.0, 0, 0, 0], (n, 1)), w=w, L=L,
                        E_drift=scale * 4e-12 * np.sin(t), L_norm_drift=-scale * 2e-12 * t / t_end,
                        frame_index=np.arange(n // 2, n, 50), flips=np.array([1.5, 3.0, 6.5]))

    return make


@pytest.fixture
def pose_numbers():
    """``pose_numbers(view_scene)``: what a pose of a view sets, by name (the live window's
    and the export's poses of one run are compared with it)."""
    import numpy as np

    def numbers(view) -> dict:
        """Every actor's user matrix and the last point of every polyline of the view's scenes
        and ghosts, by name (what a pose sets), plus its 2D panes' data (the stability track)."""
        found: dict = {}

        def walk(prefix, scene, offset=None):
            # a row of bodies (the engines view) places body k at its ``offsets[k]``, laid out for
            # the pane's shape (the window's and the export's differ): there each actor's turn and
            # its last point in the world less the body's offset are compared (the point placed by
            # the actor's matrix, or drawn in the world, as a trail is)
            offsets = getattr(scene, "offsets", None)
            for key, sub in enumerate(getattr(scene, "scenes", ()) or ()):
                shift = None if offsets is None else (0.0 if offset is None else offset) + np.asarray(offsets[key], float)
                walk(f"{prefix}/{key}", sub, shift)
            actors = getattr(scene, "_actors", None) or {}
            for key, actor in actors.items():
                if hasattr(actor, "user_matrix"):
                    matrix = np.array(actor.user_matrix)
                    data = actor.GetMapper().GetInput() if actor.GetMapper() is not None else None
                    end = None
                    if data is not None and data.GetNumberOfPoints():
                        end = np.array(data.GetPoint(data.GetNumberOfPoints() - 1))
                    if offset is None:
                        found[f"{prefix}/{key}/matrix"] = matrix
                        if end is not None:
                            found[f"{prefix}/{key}/end"] = end
                    elif key != "grid":  # the floor under the row lies where the layout puts it
                        found[f"{prefix}/{key}/turn"] = matrix[:3, :3]
                        if end is not None:
                            found[f"{prefix}/{key}/end"] = matrix[:3, :3] @ end + matrix[:3, 3] - offset
            for key in ("construction", "herpolhode", "polhode"):
                value = getattr(scene, key, None)
                if isinstance(value, np.ndarray):
                    found[f"{prefix}/{key}"] = value
        for name, scene in view.scenes.items():
            walk(name, scene)
        for k, ghost in enumerate(view.ghosts):
            walk(f"ghost{k}", ghost)
        if hasattr(view, "track"):
            found["track"] = np.concatenate(view.track)
        return found

    return numbers


@pytest.fixture
def probe_view(monkeypatch):
    """Poinsot's construction registered again as the view ``probe``, hosted by the main
    window (as a new module in app/views/ would register it), for one test only."""
    import dataclasses

    from tumble import views
    from tumble.views.poinsot import SPEC as POINSOT

    spec = dataclasses.replace(POINSOT, name="probe", title="Tumble: probe", description="a view added for a test",
                               window="tumble.gui.windows.main_window:MainWindow")
    monkeypatch.setitem(views._VIEWS, "probe", spec)
    return spec


# ------------------------------------------------------------------ hostile trials: a child measured, a phone that misbehaves


@dataclass
class Measured:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    peak_mb: float

    def lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.strip()]


#: the measured child's parent: a small process that starts the command, forwards SIGINT and SIGTERM
#: to it, and writes its peak resident memory (KB) to the file descriptor named first. A child
#: forked from the test process itself would report the test process's own peak (Linux counts the
#: memory a process had before its exec in ru_maxrss), so the figure is the command's only when
#: its parent is small.
MEASURING_PARENT = r"""
import os, signal, subprocess, sys
report = int(sys.argv[1])
child = subprocess.Popen(sys.argv[2:])
for signum in (signal.SIGINT, signal.SIGTERM):
    signal.signal(signum, lambda n, _frame: child.send_signal(n))
_, status, usage = os.wait4(child.pid, 0)
child.returncode = os.waitstatus_to_exitcode(status)
os.write(report, str(usage.ru_maxrss).encode())
os.close(report)
sys.exit(child.returncode if child.returncode >= 0 else 128 - child.returncode)
"""


def run_measured(*args, deadline_s: float, signal_at: float | None = None, signum=signal.SIGINT,
                 started=None) -> Measured:
    """``tumble ARGS`` in a child, killed at ``deadline_s``; its wall time and peak resident
    memory (os.wait4's ru_maxrss, taken by a small parent: :data:`MEASURING_PARENT`). With
    ``signal_at``: ``signum`` is sent that many seconds after ``started()`` turns true (or after
    the start, without it)."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    peak_r, peak_w = os.pipe()
    began = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-c", MEASURING_PARENT, str(peak_w), sys.executable, "-m", "tumble",
                             *map(str, args)], cwd=ROOT, env=headless_env(), stdout=out_w, stderr=err_w,
                            pass_fds=(peak_w,), start_new_session=True)
    for fd in (out_w, err_w, peak_w):
        os.close(fd)
    chunks = {out_r: [], err_r: [], peak_r: []}

    def drain(fd):
        while True:
            block = os.read(fd, 65536)
            if not block:
                return
            chunks[fd].append(block)

    readers = [threading.Thread(target=drain, args=(fd,), daemon=True) for fd in (out_r, err_r, peak_r)]
    for r in readers:
        r.start()

    def kill():
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the parent and the command
        except ProcessLookupError:
            pass

    killer = threading.Timer(deadline_s, kill)
    killer.start()
    if signal_at is not None:
        def send():
            limit = time.monotonic() + deadline_s
            while started is not None and not started() and time.monotonic() < limit:
                time.sleep(0.02)
            time.sleep(signal_at)
            if proc.poll() is None:
                proc.send_signal(signum)  # the parent forwards it to the command
        threading.Thread(target=send, daemon=True).start()
    try:
        proc.wait()
    finally:
        killer.cancel()
    seconds = time.monotonic() - began
    for r in readers:
        r.join(5.0)
    for fd in (out_r, err_r, peak_r):
        os.close(fd)
    text = {fd: b"".join(c).decode("utf-8", "replace") for fd, c in chunks.items()}
    peak_kb = float(text[peak_r] or "nan")  # nan: killed at the deadline before it could say
    return Measured(proc.returncode, text[out_r], text[err_r], seconds, peak_kb / 1024.0)


class PhoneServer:
    """A hostile phone on 127.0.0.1: ``handle(conn, request_line)`` answers each connection in a
    thread of its own (so a dripping answer holds no one else up). ``connections`` counts them."""

    def __init__(self, handle):
        self.handle = handle
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.05)
        self.stopping = threading.Event()
        self.connections = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self):
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn):
        try:
            conn.settimeout(2.0)
            data = b""
            while b"\r\n\r\n" not in data and len(data) < 65536:
                block = conn.recv(4096)
                if not block:
                    return
                data += block
            self.handle(conn, data.split(b"\r\n", 1)[0].decode("latin-1"), self.stopping)
        except OSError:
            pass
        finally:
            conn.close()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stopping.set()
        self.thread.join(5.0)
        self.sock.close()


def answer(conn, body: bytes, status: str = "200 OK") -> None:
    conn.sendall(f"HTTP/1.0 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                 "Connection: close\r\n\r\n".encode() + body)

