"""The import dialog's background jobs: reading and fitting (or predicting) in a worker process.

A hostile file does its harm while it is read (a small zip that expands to gigabytes, a
parser stuck in a huge field), and a fit of a long recording spends seconds in stages that
check nothing. So both run in a worker process (:mod:`.child`) that Cancel kills at
once, whatever it is doing, and whose address space is capped: neither the window's memory
nor its responsiveness depends on the file. The worker is started when the dialog opens (it
imports the fit while the user picks a file) and serves one job after another; a killed
worker is replaced by the next job. No Qt here: the dialog polls :class:`RecordingJob` from
its timer (GUI thread) and the job thread never touches a widget.

::

    GUI thread                  job thread                      worker process
    RecordingJob.start() -----> Worker.run(task, args) -------> child.serve:
    poll: take() progress,        takes the replies a pipe         task(*args, progress) reads,
          outcome                 thread reads, looks at the       fits or predicts; replies
    cancel.set() --------------> cancel flag every 50 ms; kills    progress, then the outcome
"""

from __future__ import annotations

import os
import pickle
import queue
import subprocess
import sys
import threading

from ...throws.fitting.edges import FitCancelled
from . import child

#: how often the job thread looks at the cancel flag while the worker runs (s)
CANCEL_POLL_S = 0.05


class JobFailed(Exception):
    """The task's one-line message, as the worker said it (or why the worker stopped)."""


class Worker:
    """One worker process (see :mod:`.child`); one task at a time. Any thread may
    call :meth:`run` (one at a time) and :meth:`close`."""

    def __init__(self):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # the modules this process sees
        command = [sys.executable, "-c", f"import sys, {child.__name__} as c; sys.exit(c.serve())"]
        self.process = subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, bufsize=0)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def run(self, task, args, cancel, report):
        """``task(*args)`` in the worker; ``report(fraction, text)`` with its progress. Kills
        the worker and raises :class:`FitCancelled` as soon as ``cancel()`` is true; raises
        :class:`JobFailed` with the task's line, or when the worker stops."""
        try:
            child.write_frame(self.process.stdin.fileno(), (task, args))
        except (OSError, ValueError):  # a broken pipe, or a worker killed before (pipes closed)
            raise JobFailed(self._stopped()) from None
        replies: queue.Queue = queue.Queue()
        pipe = threading.Thread(target=self._read_replies, args=(replies,), name="tumble-fit-pipe", daemon=True)
        pipe.start()  # blocking reads on a pipe work everywhere; select() on one does not on Windows
        try:
            while True:
                if cancel():
                    self.kill()
                    raise FitCancelled()
                try:
                    kind, *value = replies.get(timeout=CANCEL_POLL_S)
                except queue.Empty:
                    continue
                if kind == "progress":
                    report(*value)
                elif kind == "done":
                    return value[0]
                elif kind == "failed":
                    raise JobFailed(value[0])
                else:
                    raise JobFailed(self._stopped())
        finally:
            pipe.join()  # it returned with the outcome, or at the end of file of a killed worker

    def _read_replies(self, replies: queue.Queue) -> None:
        """Pipe thread: the task's replies, until its outcome or the worker's end."""
        fd = self.process.stdout.fileno()
        while True:
            try:
                frame = child.read_frame(fd)
                reply = ("stopped",) if frame is None else pickle.loads(frame)
            except (EOFError, OSError):
                reply = ("stopped",)
            except Exception as err:  # noqa: BLE001 - a reply this side cannot unpickle: still one line
                reply = ("failed", f"internal error: the worker's reply could not be read: {err.__class__.__name__}")
            replies.put(reply)
            if reply[0] != "progress":
                return

    def _stopped(self) -> str:
        self.kill()
        code = self.process.returncode
        how = f"was killed by signal {-code}" if code is not None and code < 0 else f"stopped with status {code}"
        return f"the worker reading the recording {how} (out of memory?); nothing was fitted"

    def kill(self) -> None:
        if self.alive:
            self.process.kill()
        self.process.wait()
        self._close_pipes()

    def close(self) -> None:
        """Stop the worker now (it keeps nothing between tasks)."""
        self.kill()

    def _close_pipes(self) -> None:
        for pipe in (self.process.stdin, self.process.stdout):
            try:
                pipe.close()
            except OSError:
                pass


class RecordingJob:
    """One task in the worker, from a job thread. The thread writes only ``progress`` and
    ``outcome`` (under ``lock``); the GUI thread reads them with :meth:`take` and may set
    ``cancel``. ``task(*args, progress=...)`` returns (recordings read or None, value)."""

    def __init__(self, worker: Worker, task, *args):
        self.lock = threading.Lock()
        self.progress = (0.0, "starting")
        self.outcome = None            # ("done", (recordings or None, value)) | ("failed", text) | ("cancelled", None)
        self.cancel = threading.Event()
        self._worker, self._task, self._args = worker, task, args
        self.thread = threading.Thread(target=self._main, name="tumble-fit", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _report(self, fraction: float, message: str) -> None:
        """Job thread: the task's progress."""
        with self.lock:
            self.progress = (fraction, message)

    def _main(self) -> None:
        """Job thread: run the task in the worker, leave the outcome."""
        try:
            outcome = ("done", self._worker.run(self._task, self._args, self.cancel.is_set, self._report))
        except FitCancelled:
            outcome = ("cancelled", None)
        except JobFailed as err:
            outcome = ("failed", str(err))
        with self.lock:
            self.outcome = outcome

    def take(self):
        """GUI thread: ((fraction, message), outcome or None)."""
        with self.lock:
            return self.progress, self.outcome


def fit_job(worker: Worker, paths, recordings, reader, drag, axes, exclude, include) -> RecordingJob:
    """Read ``paths`` (unless ``recordings`` are given) and fit them, in ``worker``."""
    return RecordingJob(worker, child.fit_task, paths, recordings, reader, drag, axes, exclude, include)


def predict_job(worker: Worker, paths, recordings, reader, scenario, windows, lead, horizon) -> RecordingJob:
    """Read ``paths`` (unless ``recordings`` are given) and predict their flights, in ``worker``."""
    return RecordingJob(worker, child.predict_task, paths, recordings, reader, scenario, windows, lead, horizon)
