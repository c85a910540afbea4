"""Helpers of the hostile reproducers (tests/test_hostile_*.py): the real command line in a child
whose time and peak memory are measured, and a hostile phone served on 127.0.0.1 from a thread.

Its one test checks the measurement itself, so that a bound asserted with it cannot pass
because the figure is always small.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

from cli_run import ROOT, headless_env


@dataclass
class Measured:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    peak_mb: float

    def lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.strip()]


def run_measured(*args, deadline_s: float, signal_at: float | None = None, signum=signal.SIGINT,
                 started=None) -> Measured:
    """``tumble ARGS`` in a child, killed at ``deadline_s``; its wall time and peak resident
    memory (os.wait4's ru_maxrss). With ``signal_at``: ``signum`` is sent that many seconds after
    ``started()`` turns true (or after the start, without it)."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    began = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "tumble", *map(str, args)], cwd=ROOT, env=headless_env(),
                            stdout=out_w, stderr=err_w)
    os.close(out_w)
    os.close(err_w)
    chunks = {out_r: [], err_r: []}

    def drain(fd):
        while True:
            block = os.read(fd, 65536)
            if not block:
                return
            chunks[fd].append(block)

    readers = [threading.Thread(target=drain, args=(fd,), daemon=True) for fd in (out_r, err_r)]
    for r in readers:
        r.start()
    killer = threading.Timer(deadline_s, proc.kill)
    killer.start()
    if signal_at is not None:
        def send():
            limit = time.monotonic() + deadline_s
            while started is not None and not started() and time.monotonic() < limit:
                time.sleep(0.02)
            time.sleep(signal_at)
            if proc.poll() is None:
                proc.send_signal(signum)
        threading.Thread(target=send, daemon=True).start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        killer.cancel()
    seconds = time.monotonic() - began
    proc.returncode = os.waitstatus_to_exitcode(status)
    for r in readers:
        r.join(5.0)
    for fd in (out_r, err_r):
        os.close(fd)
    text = {fd: b"".join(c).decode("utf-8", "replace") for fd, c in chunks.items()}
    return Measured(proc.returncode, text[out_r], text[err_r], seconds, usage.ru_maxrss / 1024.0)


class PhoneServer:
    """A hostile phone on 127.0.0.1: ``handle(conn, request_line)`` answers each connection in a
    thread of its own (so a dripping answer holds no one else up). ``connections`` counts them."""

    def __init__(self, handle):
        self.handle = handle
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.05)
        self.stopping = threading.Event()
        self.connections = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self):
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn):
        try:
            conn.settimeout(2.0)
            data = b""
            while b"\r\n\r\n" not in data and len(data) < 65536:
                block = conn.recv(4096)
                if not block:
                    return
                data += block
            self.handle(conn, data.split(b"\r\n", 1)[0].decode("latin-1"), self.stopping)
        except OSError:
            pass
        finally:
            conn.close()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stopping.set()
        self.thread.join(5.0)
        self.sock.close()


def answer(conn, body: bytes, status: str = "200 OK") -> None:
    conn.sendall(f"HTTP/1.0 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                 "Connection: close\r\n\r\n".encode() + body)


def test_the_peak_memory_measured_is_the_childs_own():
    """A child that holds 300 MB reads over 300 MB; one that holds nothing reads far less."""
    big = run_measured("--version", deadline_s=60)
    assert big.returncode == 0
    code = "b = bytearray(300 * 2**20); b[::4096] = b'x' * len(b[::4096])"
    r, w = os.pipe()
    proc = subprocess.Popen([sys.executable, "-c", code])
    _, _, usage = os.wait4(proc.pid, 0)
    os.close(r)
    os.close(w)
    assert usage.ru_maxrss / 1024.0 > 300
    assert big.peak_mb < 300
