"""The import dialog's background job: read recordings in a child process, fit them in a thread.

Reading is where a hostile file does its harm (a small zip that expands to gigabytes, a
parser stuck in a huge field), so it runs in a child Python process that Cancel kills at
once, whatever the reader is doing, and whose address space is capped: neither the
window's memory nor its responsiveness depends on the file. The fit is our own code; it
runs in a thread of this process and checks the cancel flag between function evaluations
(:class:`~app.throws.edges.FitCancelled`). No Qt here: the dialog polls :class:`RecordingJob`
from its timer (GUI thread) and the thread never touches a widget.

::

    GUI thread                 job thread                          child process
    RecordingJob.start() ----> read_in_child(paths) ------------>  child_main: reader(path) each,
    poll: progress, outcome     (polls cancel, kills the child)     pickles the recordings to a file
    cancel() sets the flag     fit(recordings, progress, cancel)
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pickle
import subprocess
import sys
import tempfile
import threading

from ..physics.errors import ParameterError
from ..throws.edges import FitCancelled
from ..throws.recording import read_recording

#: how often the job thread looks at the cancel flag while the child reads (s)
CANCEL_POLL_S = 0.05
#: the reading child's address-space cap (bytes): far above what a 1e6-row recording needs
#: (about 0.5 GB), far below what a decompression bomb would take
CHILD_MEMORY_BYTES = 3 * 2**30


class ReadFailed(Exception):
    """The reader's one-line message (a :class:`ParameterError` in the child), as it said it."""


def reader_spec(reader) -> str:
    """``module:function`` of a module-level reader function, as the child imports it."""
    return f"{reader.__module__}:{reader.__qualname__}"


def _load_reader(spec: str):
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


def child_main(argv=None) -> int:
    """Child process: ``READER_SPEC OUT_FILE PATH...``; writes ``("done", [Recording, ...])`` or
    ``("failed", one line)`` to OUT_FILE as a pickle."""
    spec, out, *paths = sys.argv[1:] if argv is None else argv
    with contextlib.suppress(ImportError, ValueError, OSError):
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY_BYTES, CHILD_MEMORY_BYTES))
    try:
        reader = _load_reader(spec)
        outcome = ("done", [reader(p) for p in paths])
    except ParameterError as err:
        outcome = ("failed", str(err))
    except MemoryError:
        outcome = ("failed", f"recording {', '.join(paths)} needs more than {CHILD_MEMORY_BYTES / 2**30:.0f} GB "
                             "to read; it is refused")
    except Exception as err:  # noqa: BLE001 - a reader's bug still ends as one line in the dialog
        outcome = ("failed", f"internal error reading {', '.join(paths)}: {err.__class__.__name__}: {err}")
    with open(out, "wb") as fh:
        pickle.dump(outcome, fh, protocol=pickle.HIGHEST_PROTOCOL)
    return 0


def read_in_child(paths, cancel, reader=read_recording) -> list:
    """Read ``paths`` with ``reader`` in a child process; kill it as soon as ``cancel()`` is true
    (then raise :class:`FitCancelled`). Raises :class:`ReadFailed` with the reader's one line."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # the modules this process sees
    with tempfile.TemporaryDirectory(prefix="tumble-read-") as folder:
        out = os.path.join(folder, "recordings.pickle")
        command = [sys.executable, "-c", f"import sys, {__name__} as job; sys.exit(job.child_main())",
                   reader_spec(reader), out, *map(str, paths)]
        child = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        try:
            while True:
                try:
                    code = child.wait(CANCEL_POLL_S)
                    break
                except subprocess.TimeoutExpired:
                    if cancel():
                        raise FitCancelled() from None
        finally:
            if child.poll() is None:
                child.kill()
            child.wait()
        if code != 0 or not os.path.exists(out):
            raise ReadFailed(f"could not read {', '.join(map(str, paths))}: the reader stopped with status {code}")
        with open(out, "rb") as fh:
            kind, value = pickle.load(fh)
    if kind != "done":
        raise ReadFailed(value)
    return value


class RecordingJob:
    """One read-and-fit in a worker thread. The thread writes only ``progress`` and ``outcome``
    (under ``lock``); the GUI thread reads them from its timer and may set ``cancel``.

    ``fit(recordings, progress, cancel)`` returns the fit's result; ``recordings`` given
    (already read) skips the reading."""

    def __init__(self, paths, fit, recordings=None, reader=read_recording):
        self.lock = threading.Lock()
        self.progress = (0.0, "reading the recording")
        self.outcome = None            # ("done", (recordings, value)) | ("failed", text) | ("cancelled", None)
        self.cancel = threading.Event()
        self._paths, self._fit, self._recordings, self._reader = list(paths), fit, recordings, reader
        self.thread = threading.Thread(target=self._main, name="tumble-fit", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _report(self, fraction: float, message: str) -> None:
        """Job thread: the fit's progress callback."""
        with self.lock:
            self.progress = (fraction, message)

    def _main(self) -> None:
        """Job thread: read (unless given), fit, leave the outcome."""
        try:
            recordings = self._recordings
            if recordings is None:
                recordings = read_in_child(self._paths, self.cancel.is_set, self._reader)
            self._report(0.0, "finding the flights")
            outcome = ("done", (recordings, self._fit(recordings, self._report, self.cancel.is_set)))
        except FitCancelled:
            outcome = ("cancelled", None)
        except (ParameterError, ReadFailed) as err:
            outcome = ("failed", str(err))
        except Exception as err:  # noqa: BLE001 - a bug of ours: still one line in the dialog
            outcome = ("failed", f"internal error: {err.__class__.__name__}: {err}")
        with self.lock:
            self.outcome = outcome

    def take(self):
        """GUI thread: ((fraction, message), outcome or None)."""
        with self.lock:
            return self.progress, self.outcome
