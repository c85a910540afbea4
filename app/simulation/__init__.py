"""The simulation layer: the stepping loop, pacing, bounded history, the worker thread, benchmarks.

The worker (:mod:`.worker`) is a plain thread with no Qt: it paces the physics to real time,
takes commands through a queue, and publishes immutable snapshots plus a bounded history
(:mod:`.history`).
"""

from .history import COLUMNS, History  # noqa: F401
from .worker import (  # noqa: F401
    MAX_SPEED,
    MIN_SPEED,
    SimulationWorker,
    Snapshot,
    check_runnable,
    default_kick,
    predicted_period,
)
