"""The import dialog's worker process: runs one task at a time for the window, which can kill it.

Started by :class:`app.gui.recordings.job.Worker` as ``python -c "...; serve()"``. Requests and
replies are length-prefixed pickles on stdin and on the process's original stdout (fd 1 is
pointed at stderr, so a stray print cannot break a reply). A request is ``(task, args)``; the
task is called as ``task(*args, progress=...)`` and the replies are ``("progress", fraction,
text)`` while it runs, then ``("done", value)`` or ``("failed", one line)``. The address space
is capped: a file that would take more memory ends as one line, never as a swapping machine.

Imports here are the standard library's: the throws are imported by the tasks (and once at
start, to warm up while the user picks a file).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import struct

#: the worker's address-space cap (bytes): a fit of a 1e6-row recording needs about 1.5 GB
#: with numba loaded (0.6 GB of it address space reserved by numba and LLVM)
MEMORY_BYTES = 4 * 2**30
#: the frame header: the pickle's length in bytes
HEADER = struct.Struct("<Q")


def read_frame(fd: int) -> bytes | None:
    """One frame's bytes from ``fd``; None at end of file."""
    head = _read_exactly(fd, HEADER.size)
    return None if head is None else _read_exactly(fd, HEADER.unpack(head)[0], strict=True)


def _read_exactly(fd: int, n: int, strict: bool = False) -> bytes | None:
    parts, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            if strict or parts:
                raise EOFError("the other side closed the pipe in the middle of a message")
            return None
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def write_frame(fd: int, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def serve() -> int:
    """The worker's loop: answer requests until stdin closes."""
    out = os.dup(1)
    os.dup2(2, 1)  # prints go to stderr; replies only to ``out``
    with contextlib.suppress(ImportError, ValueError, OSError):
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    with contextlib.suppress(Exception):  # warm up; a failure shows in the first task instead
        from ...throws.fitting import fit, predict  # noqa: F401
    while True:
        request = read_frame(0)
        if request is None:
            return 0
        write_frame(out, _run(request, lambda fraction, text: write_frame(out, ("progress", fraction, text))))


def _run(request: bytes, progress):
    from ...physics.errors import ParameterError

    try:
        task, args = pickle.loads(request)
        return "done", task(*args, progress=progress)
    except ParameterError as err:
        return "failed", str(err)
    except MemoryError:
        return "failed", f"the task needs more than the worker's {MEMORY_BYTES / 2**30:.0f} GB of memory"
    except Exception as err:  # noqa: BLE001 - a bug of ours still ends as one line in the dialog
        return "failed", f"internal error: {err.__class__.__name__}: {err}"


@contextlib.contextmanager
def _memory_named(paths):
    """A task over ``paths`` that runs out of the worker's memory: one line naming them."""
    from ...physics.errors import ParameterError

    try:
        yield
    except MemoryError:
        raise ParameterError("recording", ", ".join(map(str, paths)),
                             f"need at most {MEMORY_BYTES / 2**30:.0f} GB of memory to read and fit") from None


def read_all(paths, reader, progress):
    """The recordings at ``paths``, read with ``reader`` (a module-level function taking the
    list of paths, as :func:`~app.throws.recordings.reader.read_recordings`: an Excel file's CSV twin,
    or a path given twice, counts once)."""
    progress(0.0, "reading the recording" if len(paths) == 1 else f"reading {len(paths)} recordings")
    return reader(list(paths))


def fit_task(paths, recordings, reader, drag, axes, exclude, include, *, progress):
    """(recordings read, or None when given; the fit's result)."""
    from ...throws.fitting.fit import fit_recordings

    with _memory_named(paths):
        read = read_all(paths, reader, progress) if recordings is None else None
        return read, fit_recordings(read or recordings, None, drag, axes, progress, None, exclude, include)


def predict_task(paths, recordings, reader, scenario, windows, lead, horizon, *, progress):
    """(recordings read, or None when given; (the body, the predicted flights))."""
    from ...throws.fitting.predict import FittedBody, predict_flights

    with _memory_named(paths):
        read = read_all(paths, reader, progress) if recordings is None else None
        progress(0.5, f"predicting from the first {lead:g} s of each flight")
        return read, (FittedBody.of(scenario), predict_flights(scenario, read or recordings, windows, lead, horizon))
