"""The hostile reproducers' measurement (``run_measured`` in conftest: the real command line in a
child whose time and peak memory are measured) is checked itself, so that a bound asserted with
it cannot pass because the figure is always small."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import run_measured


def test_the_peak_memory_measured_is_the_childs_own():
    """A child that holds 300 MB reads over 300 MB; one that holds nothing reads far less."""
    big = run_measured("--version", deadline_s=60)
    assert big.returncode == 0
    code = "b = bytearray(300 * 2**20); b[::4096] = b'x' * len(b[::4096])"
    proc = subprocess.Popen([sys.executable, "-c", code])
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait for it again
    assert proc.returncode == 0
    assert usage.ru_maxrss / 1024.0 > 300
    assert big.peak_mb < 300
