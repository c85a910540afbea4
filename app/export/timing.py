"""Wall-clock figures for the export's benchmark line."""

from __future__ import annotations

import os


def process_age() -> float | None:
    """Seconds since this process started (Linux /proc, 10 ms resolution), or None elsewhere.

    Includes the interpreter's start-up and imports, which a timer started inside the
    command misses: the figure a user with a stopwatch would see.
    """
    try:
        with open("/proc/self/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime", encoding="ascii") as fh:
            uptime = float(fh.read().split()[0])
        start_ticks = int(fields[19])  # field 22 of stat(5); fields[0] is field 3
        return max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return None
