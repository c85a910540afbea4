"""``tumble bench --gui``: measure the real window (1280x800, default preset, scene and all
plots live): frames drawn per second, real-time factor, start-up time and memory growth.

A benchmark prints figures; it does not pass or fail.
"""

from __future__ import annotations

import os
import time

#: window size of the measurement (px)
BENCH_SIZE = (1280, 800)
#: the preset measured
BENCH_PRESET = "t-handle"
#: warm-up after the first frame before counting (s): kernels loaded, caches filled;
#: at most this fraction of the run
WARMUP_S = 5.0
WARMUP_FRACTION = 0.2


def process_age() -> float:
    """Seconds since this process started (from /proc: start time in clock ticks since boot)."""
    with open("/proc/self/stat", encoding="ascii") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    start_ticks = int(fields[19])  # field 22 of stat(5); fields[0] is field 3
    with open("/proc/uptime", encoding="ascii") as fh:
        uptime = float(fh.read().split()[0])
    return uptime - start_ticks / os.sysconf("SC_CLK_TCK")


def rss_mb() -> float:
    """Resident set size of this process (MB)."""
    with open("/proc/self/statm", encoding="ascii") as fh:
        resident_pages = int(fh.read().split()[1])
    return resident_pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def run_gui_bench(seconds: float = 60.0, speed: float = 1.0, view: str = "main") -> dict:
    """Open ``view`` (the main window by default), run ``seconds`` of wall time at
    ``speed``, return the figures.

    Keys: ``fps`` (scene frames drawn per wall second), ``realtime_factor`` (simulated
    seconds per wall second, so ``speed`` when the worker keeps up), ``startup_s`` (process
    start to the first drawn frame), ``memory_growth_mb`` (RSS at the end minus RSS after
    the warm-up), plus ``speed``, ``seconds``, ``frames`` and ``rss_mb``.
    """
    from ..scenario import load
    from .launch import qt_application

    from .views import resolve_view, view_factory

    resolve_view(view)
    sc = load(BENCH_PRESET)
    app = qt_application()
    from PyQt5.QtCore import QTimer

    window = view_factory(view)(sc, preset=BENCH_PRESET, persist=False)
    window.resize(*BENCH_SIZE)
    window.set_speed(speed)
    window.set_repeat(True)  # a long run at 10x goes round the scenario many times
    warmup = min(WARMUP_S, WARMUP_FRACTION * seconds)
    fig: dict = {"speed": float(speed), "seconds": float(seconds)}
    mark: dict = {}

    def first_frame(drawn_at):
        if "startup_s" not in fig:
            # the signal arrives an event-loop turn after the render; count to the render
            fig["startup_s"] = process_age() - (time.perf_counter() - drawn_at)
            QTimer.singleShot(int(warmup * 1000), start_counting)

    def start_counting():
        mark["wall"] = time.perf_counter()
        mark["frames"] = window.frames_drawn
        mark["sim"] = window.worker.latest().sim_elapsed
        mark["rss"] = rss_mb()
        QTimer.singleShot(int(seconds * 1000), stop_counting)

    def stop_counting():
        wall = time.perf_counter() - mark["wall"]
        frames = window.frames_drawn - mark["frames"]
        sim = window.worker.latest().sim_elapsed - mark["sim"]
        end_rss = rss_mb()
        fig.update(fps=frames / wall, realtime_factor=sim / wall, frames=frames,
                   memory_growth_mb=end_rss - mark["rss"], rss_mb=end_rss)
        window.close()

    window.first_frame_drawn.connect(first_frame)
    window.show()
    app.exec_()
    window.deleteLater()
    app.processEvents()
    if "fps" not in fig:
        raise RuntimeError("the GUI benchmark window closed before the measurement ended")
    fig["view"] = view
    return {k: fig[k] for k in ("fps", "realtime_factor", "startup_s", "memory_growth_mb",
                                "speed", "seconds", "frames", "rss_mb", "view")}
