"""How the window runs an export in a child process and follows it.

The window never renders an export itself: VTK may only be used on the thread that made
its render window, and a second render window inside the GUI process would also slow the
live view. It starts ``python -m tumble export SCENARIO.toml --out FILE ... --progress-json``
instead (:func:`command`), and:

- the child prints one JSON object per line on stdout: ``{"event": "progress", "done": i,
  "total": n}`` after each frame, then ``{"event": "done", "path": ..., "frames": n, ...}``;
  errors are one line on stderr and a non-zero exit status, as for any ``tumble`` command;
- a line ``cancel`` on the child's stdin, or stdin closing (the window went away), cancels
  it between two frames, and it deletes what it had written;
- SIGTERM is turned into the same clean stop (``KeyboardInterrupt``).
"""

from __future__ import annotations

import contextlib
import json
import signal
import sys
import threading
import time

#: the command that cancels, as a line on the child's stdin
CANCEL_LINE = "cancel"


def view_argv(view: str | None, options=None) -> list:
    """``--view NAME`` and the view's own options (its :class:`~app.views.ViewOption` flags,
    from the one registry) as ``tumble export`` takes them; [] for the main view."""
    if view is None or view == "main" and not options:
        return []
    from ..views import get_view

    spec = get_view(view)
    argv = ["--view", spec.name]
    options = options or {}
    for option in spec.options:
        value = options.get(option.key)
        if value is None:
            continue
        values = value if isinstance(value, (tuple, list)) else (value,)
        argv += [option.flag, *(repr(float(v)) if isinstance(v, float) else str(v) for v in values)]
    return argv


def command(scenario_toml, settings, python: str | None = None, view: str = "main", options=None) -> list:
    """argv of the child process exporting ``settings`` for the scenario file ``scenario_toml``.

    ``view`` names a registered view and ``options`` its own options (``{"integrators": (A, B),
    "dts": (DT_A, DT_B)}`` for compare), see :func:`view_argv`.
    """
    from .gltf import gltf_format

    ov = settings.overlay
    parts = [k for k, on in (("time", ov.time), ("flips", ov.flips), ("title", ov.title is not None),
                             ("legend", ov.legend), ("ghost", ov.ghost)) if on]
    argv = [python or sys.executable, "-m", "tumble", "export", str(scenario_toml), "--out", str(settings.out),
            "--start", repr(float(settings.start)), "--speed", repr(float(settings.speed)), "--progress-json"]
    if gltf_format(settings.out) is None:  # a glTF scene has nothing drawn over it: the page draws its own
        argv += ["--overlay", ",".join(parts) or "none"]
    if settings.fps is not None:
        argv += ["--fps", str(int(settings.fps))]
    if settings.duration is not None:
        argv += ["--duration", repr(float(settings.duration))]
    if settings.size is not None:
        argv += ["--size", f"{int(settings.size[0])}x{int(settings.size[1])}"]
    if settings.with_plots:
        argv.append("--with-plots")
    if ov.title:
        argv += ["--title", ov.title]
    from ..scene.palette import DEFAULT_SCHEME, current

    if current().name != DEFAULT_SCHEME:  # the export draws in the window's colour scheme
        argv += ["--colours", current().name]
    return argv + view_argv(view, options)


def parse_line(line: str) -> dict | None:
    """The event of one line of the child's stdout, or None for any other line."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        event = json.loads(line)
    except ValueError:
        return None
    return event if isinstance(event, dict) and "event" in event else None


class JsonProgress:
    """``progress(done, total)`` that prints progress events, at most every ``interval`` s
    (and always the last frame). Thread: the exporting thread."""

    def __init__(self, stream=None, interval: float = 0.1):
        self.stream = stream or sys.stdout
        self.interval = interval
        self._last = -1.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self._last < self.interval:
            return
        self._last = now
        self.emit("progress", done=done, total=total)

    def emit(self, event: str, **fields) -> None:
        self.stream.write(json.dumps({"event": event, **fields}) + "\n")
        self.stream.flush()


class StdinCancel:
    """``cancel()`` that turns True once stdin says ``cancel`` or closes.

    A daemon thread reads stdin; the exporting thread only reads a flag.
    """

    def __init__(self, stream=None):
        self._flag = threading.Event()
        self._stream = stream or sys.stdin
        threading.Thread(target=self._watch, name="export-cancel", daemon=True).start()

    def _watch(self) -> None:
        try:
            for line in self._stream:
                if line.strip() == CANCEL_LINE:
                    break
        except (OSError, ValueError):
            pass
        self._flag.set()

    def __call__(self) -> bool:
        return self._flag.is_set()


@contextlib.contextmanager
def sigterm_as_interrupt():
    """Within the block, SIGTERM raises KeyboardInterrupt (so temporary files are removed)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(_signum, _frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
