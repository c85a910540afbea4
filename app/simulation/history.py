"""Bounded history of a run: a preallocated ring of sampled rows, thread-safe by one lock.

The worker appends a block of samples after each batch of steps; the GUI copies the span it
plots. Memory is allocated once, so a run of hours keeps a flat footprint.
"""

from __future__ import annotations

import threading

import numpy as np

from .recording import thin

#: columns of one history row, in order; 3-vectors take three columns, ``q`` four
COLUMNS = (
    ("t", 1),       # simulated time (s)
    ("c", 3),       # centre of mass (m, world)
    ("q", 4),       # orientation, body to world
    ("w", 3),       # angular velocity (rad/s, body frame)
    ("L", 3),       # angular momentum (kg m^2/s, world frame, about the centre of mass)
    ("L_norm_drift", 1),  # (|L| - |L0|) / |L0| since the run (or the last kick) began
    ("E_drift", 1),       # (E - E0) / |E0| since the run (or the last kick) began
)
SLICES = {}
_start = 0
for _name, _width in COLUMNS:
    SLICES[_name] = slice(_start, _start + _width) if _width > 1 else _start
    _start += _width
WIDTH = _start


class History:
    """Ring buffer of the last ``capacity`` sampled rows (see :data:`COLUMNS`).

    Threads: :meth:`append` and :meth:`clear` are called by the worker; :meth:`snapshot`
    by any thread (it returns copies, never views of the ring).
    """

    def __init__(self, capacity: int):
        self.capacity = int(capacity)
        self._rows = np.zeros((self.capacity, WIDTH))
        self._start = 0  # index of the oldest row
        self._size = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._size

    def clear(self) -> None:
        with self._lock:
            self._start = 0
            self._size = 0

    def append(self, rows: np.ndarray) -> None:
        """Append a block of rows (n, WIDTH); the oldest rows are overwritten when full."""
        rows = np.asarray(rows, dtype=float)
        if rows.shape[0] > self.capacity:
            rows = rows[-self.capacity:]
        n = rows.shape[0]
        with self._lock:
            end = (self._start + self._size) % self.capacity
            first = min(n, self.capacity - end)
            self._rows[end:end + first] = rows[:first]
            self._rows[:n - first] = rows[first:]
            overflow = max(0, self._size + n - self.capacity)
            self._size = min(self.capacity, self._size + n)
            self._start = (self._start + overflow) % self.capacity

    def snapshot(self, since: float | None = None, max_points: int | None = None, until: float | None = None) -> dict:
        """Copies of the columns, oldest first: ``{name: array}``.

        ``since`` keeps rows with ``t >= since`` and ``until`` rows with ``t <= until``;
        ``max_points`` thins the rows by a whole stride (:func:`~.recording.thin`, always
        keeping the newest row) so plots stay cheap when showing everything.
        """
        with self._lock:
            lo = 0 if since is None else self._first_at_or_after(since)
            hi = self._size if until is None else self._first_after(until)
            logical = thin(lo, max(hi, lo), max_points)
            block = self._rows[(self._start + logical) % self.capacity]
        return {name: block[:, sl] for name, sl in SLICES.items()}

    def _first_after(self, until: float) -> int:
        """Logical index of the first row with t > until (lock held)."""
        return self._first_at_or_after(np.nextafter(until, np.inf))

    def _first_at_or_after(self, since: float) -> int:
        """Logical index of the first row with t >= since (binary search; lock held)."""
        lo, hi = 0, self._size
        while lo < hi:
            mid = (lo + hi) // 2
            if self._rows[(self._start + mid) % self.capacity, 0] < since:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def latest_time(self) -> float | None:
        """Time of the newest row, or None when empty."""
        with self._lock:
            if not self._size:
                return None
            return float(self._rows[(self._start + self._size - 1) % self.capacity, 0])
