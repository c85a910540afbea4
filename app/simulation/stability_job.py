"""The stability map computed on its own thread, for a window that must not freeze.

:func:`~app.simulation.stability.stability_map` takes seconds (2000 directions over 20 s:
about 2.5 s here). A :class:`StabilityJob` runs it, with the latitude-longitude grid the
map is drawn from, on a plain thread; readers poll :attr:`StabilityJob.progress` and
:attr:`StabilityJob.result` (the GUI from its frame timer, once per display frame). No Qt.

Cancelling works through the progress callback: it raises at the next chunk boundary (at
most 1/:data:`JOB_CHUNKS` of the run), so :meth:`StabilityJob.stop` returns at once.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np

from ..physics.body import Body
from ..physics.errors import DivergenceError, ParameterError
from .stability import StabilityMap, map_grid, stability_map

#: longest wait of :meth:`StabilityJob.stop` for the thread to end (s)
STOP_TIMEOUT_S = 5.0
#: batched calls the run is split into: each holds the interpreter lock throughout, and at
#: 200 (about 12 ms each for 2000 directions over 20 s) the window's display keeps going,
#: where the command line's 25 (about 90 ms each) left it at 2-4 frames per second;
#: the total time does not change (measured: 2.0-2.8 s either way)
JOB_CHUNKS = 200


class _Cancelled(Exception):
    """Raised from the progress callback to abandon the run."""


@dataclass(frozen=True)
class StabilityResult:
    """A finished map and its grid (degrees of longitude and latitude; wander in rad)."""

    smap: StabilityMap
    lon_edges: np.ndarray
    lat_edges: np.ndarray
    grid: np.ndarray          # (n_lat, n_lon), rad
    seconds: float            # wall time of the computation


class StabilityJob(threading.Thread):
    """Computes one stability map. Start with :meth:`start`; poll :attr:`progress`,
    :attr:`result` and :attr:`error`; :meth:`stop` cancels and joins.

    Every attribute read and every public method may be used from any thread.
    """

    def __init__(self, body: Body, omega_norm: float, n_directions: int, duration: float):
        super().__init__(name="tumble-stability", daemon=True)
        self.body = body
        self.omega_norm = float(omega_norm)
        self.n_directions = int(n_directions)
        self.duration = float(duration)
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self._progress = 0.0
        self._result: StabilityResult | None = None
        self._error: str | None = None

    # ------------------------------------------------------------------ readers (any thread)

    @property
    def progress(self) -> float:
        """Fraction done, 0 to 1 (the grid is the last few percent)."""
        with self._lock:
            return self._progress

    @property
    def result(self) -> StabilityResult | None:
        with self._lock:
            return self._result

    @property
    def error(self) -> str | None:
        """Why the run failed (one line), or None."""
        with self._lock:
            return self._error

    @property
    def finished(self) -> bool:
        """The run has ended: with a result, an error, or cancelled."""
        return self.ident is not None and not self.is_alive()

    # ------------------------------------------------------------------ commands (any thread)

    def cancel(self) -> None:
        self._cancel.set()

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> None:
        """Cancel and join. Thread: any but the job's own."""
        self._cancel.set()
        if self.is_alive():
            self.join(timeout)

    # ------------------------------------------------------------------ the run (job thread)

    def _on_progress(self, fraction: float) -> None:
        if self._cancel.is_set():
            raise _Cancelled()
        with self._lock:
            self._progress = 0.95 * float(fraction)

    def run(self) -> None:
        t0 = time.perf_counter()
        try:
            smap = stability_map(self.body, self.omega_norm, self.n_directions, self.duration,
                                 progress=self._on_progress, min_chunks=JOB_CHUNKS)
            if self._cancel.is_set():
                return
            lon_edges, lat_edges, grid = map_grid(smap)
            result = StabilityResult(smap, lon_edges, lat_edges, grid, time.perf_counter() - t0)
            with self._lock:
                self._result = result
                self._progress = 1.0
        except _Cancelled:
            return
        except (ParameterError, DivergenceError) as err:
            with self._lock:
                self._error = str(err)
        except Exception as err:  # noqa: BLE001 - reported to the window, which stays up
            with self._lock:
                self._error = f"internal error: {err.__class__.__name__}: {err}"
