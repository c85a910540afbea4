"""Large freed blocks go back to the system at once, so a window's memory levels off while
it is resized.

Every resize of a window makes its render windows (VTK's framebuffers, Qt's GL widget and
backing store, in Mesa's software GL all in main memory) free their buffers and allocate
new ones of the new size, several MB each. glibc's malloc serves a block over its mmap
threshold (128 kB) with its own mapping, returned when freed, but after freeing one it
raises the threshold to that block's size (up to 32 MB): from then on the buffers come
from the heap, which only grows as sizes change, each new size needing a hole the old
ones cannot fill. Measured under Xvfb on the main window, five drags from 700x450 to
1600x1000 grew the process by 25 MB after the first drag (the stability view by 47 MB);
the Python heap (tracemalloc) stayed flat and ``malloc_trim`` gave it all back, so nothing
leaked. A fixed threshold (which also stops the adjustment) keeps big blocks mapped on
their own: the same drags then grew it by 3 MB.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

#: mallopt's parameter number for the mmap threshold (glibc's malloc.h)
M_MMAP_THRESHOLD = -3
#: blocks at least this large get their own mapping, unmapped when freed (bytes): a render
#: window's buffer at 300 x 300 px is 360 kB; the per-frame arrays (the trail, the plots'
#: thinned history) stay under it and keep coming from the heap
MMAP_THRESHOLD_BYTES = 256 * 1024

_applied: bool | None = None


def return_large_blocks() -> bool:
    """Fix glibc's mmap threshold at MMAP_THRESHOLD_BYTES for this process (once; any
    thread). Returns whether it applies: False where the C library is not glibc."""
    global _applied
    if _applied is None:
        _applied = False
        if sys.platform.startswith("linux"):
            try:
                libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
                mallopt = libc.mallopt
            except (OSError, AttributeError):
                return False
            mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
            mallopt.restype = ctypes.c_int
            _applied = mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) == 1
    return _applied
