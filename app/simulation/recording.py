"""The Recording protocol: the columns of a run between two times, thinned, with its flips and segment start.

Two things record a run: the worker's bounded history while the window plays
(:meth:`app.simulation.worker.SimulationWorker.span`) and the export's re-simulated
timeline (:meth:`app.export.timeline.Timeline.span`). Trails, traces and plots read a
:class:`Span` from either through the one call ``recording.span(t0, t1, max_points)``; nothing
else cuts a run's history, so a view drawn live and the same view exported pick the very
same samples.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

#: the columns of a span, as in the worker's history (3-vectors are (n, 3), ``q`` (n, 4))
SPAN_COLUMNS = ("t", "c", "q", "w", "L", "L_norm_drift", "E_drift")


def thin(lo: int, hi: int, max_points: int | None = None) -> np.ndarray:
    """Indices ``lo .. hi-1``, oldest first, thinned by one whole stride so that at most
    ``max_points`` remain; the newest (``hi - 1``) is always kept, so a trail always ends
    at the pose drawn."""
    count = hi - lo
    if count <= 0:
        return np.zeros(0, dtype=np.int64)
    stride = 1
    if max_points and count > max_points:
        stride = -(-count // max_points)
    return np.arange(hi - 1, lo - 1, -stride)[::-1]


@dataclass(frozen=True)
class Span:
    """Samples of a run with ``t0 <= t <= t1``, oldest first (columns :data:`SPAN_COLUMNS`).

    ``flips`` holds the flip times in the span; ``flip_count`` the flips from the run's start
    up to ``t1``; ``segment_start`` the time the current segment began (the run's start or
    its last kick before ``t1``), None when unknown.
    """

    columns: dict
    flips: np.ndarray
    flip_count: int
    segment_start: float | None

    def __getitem__(self, name: str) -> np.ndarray:
        return self.columns[name]

    def __len__(self) -> int:
        return len(self.columns["t"])


class Recording(Protocol):
    """A run that can be cut: the worker's history live, the export's timeline offline."""

    def span(self, t0: float | None, t1: float | None = None, max_points: int | None = None) -> Span:
        """The samples with ``t0 <= t <= t1`` (None: from the first / to the newest),
        thinned by :func:`thin` to at most ``max_points``."""
        ...
