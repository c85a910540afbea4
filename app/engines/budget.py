"""How long an engine may run: calls of about :data:`CALL_SECONDS` each (so that Ctrl+C is noticed
between them), and the step and wall-clock budgets of the adaptive settings (``drake:continuous``,
``tumble:dop853``), whose error control may ask for steps far below ``dt`` (a 60,000 rad/s spin
ran past 120 s). A run whose budget is spent ends between two samples and is reported as such
(``remarks["not_scored"]``, see :func:`.registry.run`), with the samples it reached.

Thread: the caller's (one engine run).
"""

from __future__ import annotations

import contextlib
import threading
import time

#: stepping per engine call (s): a call into an engine's C code cannot be interrupted, so a
#: sample's steps are split into calls this long (MuJoCo's ``mj_step(m, d, n)``, Drake's ``AdvanceTo``)
CALL_SECONDS = 0.2
#: most steps of one adaptive run, or this many times its nominal steps (duration / dt) where more
ADAPTIVE_STEPS = 2_000_000
STEPS_PER_NOMINAL = 4
#: most wall-clock seconds of one adaptive run, or this many per nominal step where more (Drake's
#: RK3 and scipy's DOP853 take about 10-60 us a step here): a long run asked for is not cut short
ADAPTIVE_SECONDS = 20.0
SECONDS_PER_NOMINAL = 1e-4


class Calls:
    """Splits work (steps, or simulated seconds) into calls of about :data:`CALL_SECONDS`,
    learning the cost of a unit from the calls made."""

    def __init__(self, first: float):
        self.size = first  # units of the next call
        self.per_unit = None

    def next(self, left: float) -> float:
        return min(left, self.size)

    def took(self, units: float, seconds: float) -> None:
        if units > 0 and seconds > 0:
            self.per_unit = seconds / units
            self.size = max(self.size * 0.25, min(self.size * 4, CALL_SECONDS / self.per_unit))
        elif units > 0:
            self.size *= 4


#: the wall-clock budget asked for (``tumble audit --budget S``) in this thread, else None
_asked = threading.local()


@contextlib.contextmanager
def wall_clock(seconds: float | None):
    """Within the block, each adaptive run made in this thread may take ``seconds`` of wall clock
    (None: the default, :data:`ADAPTIVE_SECONDS` or :data:`SECONDS_PER_NOMINAL` a nominal step)."""
    before = getattr(_asked, "seconds", None)
    _asked.seconds = seconds
    try:
        yield
    finally:
        _asked.seconds = before


class Budget:
    """The step and wall-clock budget of one adaptive run of ``nominal`` steps (duration / dt)."""

    def __init__(self, nominal: float = 0.0):
        self.steps = int(max(ADAPTIVE_STEPS, STEPS_PER_NOMINAL * nominal))
        asked = getattr(_asked, "seconds", None)
        self.seconds = max(ADAPTIVE_SECONDS, SECONDS_PER_NOMINAL * nominal) if asked is None else float(asked)
        self.began = time.perf_counter()

    def spent(self, steps_taken: int) -> str | None:
        """None while the budget lasts, else what was spent, in words."""
        if steps_taken > self.steps:
            return f"{self.steps:,} steps"
        if time.perf_counter() - self.began > self.seconds:
            return f"{self.seconds:g} s of wall clock"
        return None


def stopped(t: float, what: str) -> str:
    """The ``not_scored`` reason of a run stopped at ``t`` when ``what`` was spent."""
    return (f"stopped at t = {t:g} s: it spent its budget of {what} (its error control asks for steps far below "
            "dt here); the samples it reached are kept, none scored")
