"""Results of pure functions kept by the exact bytes of their inputs.

A fit asks the same question many times: the same recording's stretch smoothed again for
each body tried, a flight's launch rate refitted to the same body from the same start. The
answer is a function of the inputs alone, so it is kept under a key of their exact bytes
(an array's dtype, shape and every bit; never a rounded value or a digest), and a repeated
question gets the very answer the function gave, copied so that no caller can change what
is kept. The store is bounded (least recently used go first) and shared by every thread.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

#: most bytes (keys and answers) one store keeps
MAX_BYTES = 64 * 2 ** 20
#: most answers one store keeps
MAX_ENTRIES = 4096


def _part(x, sizes: list):
    """The exact identity of one input (its bytes counted into ``sizes``)."""
    if isinstance(x, np.ndarray):
        b = x.tobytes()  # every element in C order, whatever the array's strides
        sizes.append(len(b))
        return (x.dtype.str, x.shape, b)
    if isinstance(x, (list, tuple)):
        return (type(x).__name__,) + tuple(_part(v, sizes) for v in x)
    if x is None or isinstance(x, (float, int, str, bool, np.floating, np.integer, np.bool_)):
        return (type(x).__name__, repr(x))
    raise TypeError(f"no exact key for {type(x).__name__}")


def _size(x) -> int:
    """Bytes an answer holds (roughly, for the bound)."""
    if isinstance(x, np.ndarray):
        return x.nbytes
    if isinstance(x, (list, tuple)):
        return sum(_size(v) for v in x)
    return 64


def _copy(x):
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, tuple):
        return tuple(_copy(v) for v in x)
    if isinstance(x, list):
        return [_copy(v) for v in x]
    return x


#: every store made (:func:`forget` empties them all)
_STORES: list = []


def forget():
    """Empty every store (a benchmark's timed fit starts from nothing known)."""
    for store in _STORES:
        store.clear()


class Store:
    """Answers of one function, by the exact bytes of its inputs."""

    def __init__(self, max_bytes: int = MAX_BYTES, max_entries: int = MAX_ENTRIES):
        self.max_bytes, self.max_entries = max_bytes, max_entries
        self._items: OrderedDict = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = self.misses = 0
        _STORES.append(self)

    def get(self, inputs, compute):
        """``compute()``'s answer for ``inputs`` (a tuple of arrays, numbers, strings)."""
        sizes = []
        key = tuple([_part(x, sizes) for x in inputs])
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
                self.hits += 1
                return _copy(found[0])
        answer = compute()
        size = sum(sizes) + 64 * len(key) + _size(answer)
        with self._lock:
            self.misses += 1
            if size <= self.max_bytes and key not in self._items:
                self._items[key] = (_copy(answer), size)
                self._bytes += size
                while self._bytes > self.max_bytes or len(self._items) > self.max_entries:
                    _, (_, dropped) = self._items.popitem(last=False)
                    self._bytes -= dropped
        return answer

    def clear(self):
        with self._lock:
            self._items.clear()
            self._bytes = 0
