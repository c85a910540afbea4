"""The import dialog's worker process: a task's progress and value come back, its failure is
one line, a stray print does not break the pipe, memory is capped, and Cancel kills it
whatever it is doing (a job after that gets a new worker)."""

import threading
import time

import numpy as np
import pytest

from tumble.gui.recordings.child import MEMORY_BYTES, fit_task
from tumble.gui.recordings.job import JobFailed, RecordingJob, Worker
from tumble.physics.errors import ParameterError
from tumble.throws.fitting.edges import FitCancelled

#: the longest a test waits for the worker's job to say something or to end (s)
WAIT_S = 60


def counting_task(n, *, progress):
    print("a stray print on stdout")  # must not reach the replies
    for k in range(n):
        progress(k / n, f"step {k}")
    return np.arange(n)


def refusing_task(*, progress):
    raise ParameterError("recording", "x.csv", "be a CSV file")


def greedy_task(*, progress):
    return np.ones(MEMORY_BYTES // 8 + 1)  # more than the cap, all at once


def greedy_reader(path):
    """A reader that holds far more than the file (as an unbounded one did with a zip bomb)."""
    return [np.ones(2**27) for _ in range(6)]  # 6 GB


def stuck_task(*, progress):
    progress(0.5, "stuck")
    threading.Event().wait()  # only a kill ends it (a C-level wait: no Python check would run)


@pytest.fixture
def worker():
    w = Worker()
    yield w
    w.close()


def test_a_task_reports_progress_and_returns_its_value(worker):
    seen = []
    value = worker.run(counting_task, (4,), lambda: False, lambda f, m: seen.append((f, m)))
    assert list(value) == [0, 1, 2, 3] and seen == [(k / 4, f"step {k}") for k in range(4)]
    assert list(worker.run(counting_task, (2,), lambda: False, lambda *_: None)) == [0, 1]  # one after another


def test_failures_are_one_line_and_memory_is_capped(worker):
    with pytest.raises(JobFailed, match="^recording must be a CSV file, got 'x.csv'$"):
        worker.run(refusing_task, (), lambda: False, lambda *_: None)
    with pytest.raises(JobFailed, match="needs more than the worker's 4 GB of memory") as failed:
        worker.run(greedy_task, (), lambda: False, lambda *_: None)
    assert "\n" not in str(failed.value) and worker.alive


@pytest.mark.slow  # a recording sized to fill the memory limit, read and refused: over a minute on a busy machine
def test_a_recording_too_big_for_the_memory_is_named(worker, tmp_path):
    path = tmp_path / "session.csv"
    path.write_text("t,wx,wy,wz\n")
    with pytest.raises(JobFailed) as failed:
        worker.run(fit_task, ([str(path)], None, greedy_reader, "quadratic", "sensor", [], []), lambda: False,
                   lambda *_: None)
    assert str(failed.value) == str(ParameterError("recording", str(path), "need at most 4 GB of memory to read and fit"))


def test_cancel_kills_the_worker_whatever_it_does(worker):
    job = RecordingJob(worker, stuck_task)
    job.start()
    deadline = time.monotonic() + WAIT_S
    while job.take()[0][1] != "stuck":
        assert time.monotonic() < deadline, "the task never said it was stuck"
        job.thread.join(0.01)
    job.cancel.set()
    job.thread.join(WAIT_S)
    assert not job.thread.is_alive()
    assert job.outcome == ("cancelled", None) and not worker.alive
    with pytest.raises(JobFailed, match="stopped|killed"):
        worker.run(counting_task, (1,), lambda: False, lambda *_: None)
    fresh = Worker()  # what the dialog's next job does
    try:
        assert list(fresh.run(counting_task, (1,), lambda: False, lambda *_: None)) == [0]
    finally:
        fresh.close()


def test_cancelled_before_any_reply(worker):
    with pytest.raises(FitCancelled):
        worker.run(stuck_task, (), lambda: True, lambda *_: None)
    assert not worker.alive
