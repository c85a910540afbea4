"""``tumble bench --gui``: measure the real window (1280x800, default preset, scene and all
plots live): frames drawn per second, real-time factor, start-up time and memory growth,
and the same machine's simplest pyvistaqt window as a reference for the frame rate.

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
#: longest the reference window is measured after its warm-up (s); by default it is
#: measured as long as the view, up to this
REFERENCE_SECONDS = 10.0
#: longest reference measurement accepted on the command line (s)
MAX_REFERENCE_SECONDS = 3600.0
#: the reference window's frame timer (ms): the windows' 16 ms frame clock (about 62 fps)
REFERENCE_INTERVAL_MS = 16
#: the reference box turns this much about its vertical axis every frame (degrees)
REFERENCE_TURN_DEG = 1.0


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


def warmup_seconds(seconds: float) -> float:
    """Warm-up before counting for a measurement of ``seconds`` (s)."""
    return min(WARMUP_S, WARMUP_FRACTION * seconds)


def run_reference_window(seconds: float = REFERENCE_SECONDS) -> float:
    """Frames per second of the simplest pyvistaqt window on this machine.

    One ``QtInteractor`` alone (multisampling off, :data:`BENCH_SIZE`, the scene's
    background) with one box, turned a little and repainted on every tick of a frame timer
    at :data:`REFERENCE_INTERVAL_MS`; frames are counted as the render window ends them,
    over ``seconds`` after the same warm-up as the view. The window is closed before return.
    Runs its own event loop: call it from the command line's process, never inside a test
    process that goes on (pytest-qt's loop would be left spinning).
    """
    import pyvista as pv
    from PyQt5.QtCore import Qt, QTimer
    from pyvistaqt import QtInteractor

    from ..scene.style import BACKGROUND
    from .launch import qt_application

    app = qt_application()
    plotter = QtInteractor(multi_samples=0, auto_update=False)
    plotter.setWindowTitle("Tumble bench: reference window")
    plotter.resize(*BENCH_SIZE)
    plotter.set_background(BACKGROUND)
    box = plotter.add_mesh(pv.Box(bounds=(-0.6, 0.6, -0.3, 0.3, -0.15, 0.15)), color="#c8a165")
    plotter.view_isometric()
    drawn = {"frames": 0}
    mark: dict = {}

    def on_rendered(*_args):
        drawn["frames"] += 1
        if "first" not in mark and plotter.isVisible():
            mark["first"] = True
            QTimer.singleShot(int(warmup_seconds(seconds) * 1000), start_counting)

    def on_tick():
        box.rotate_z(REFERENCE_TURN_DEG)
        plotter.update()  # a Qt paint, one render, as the window asks for its scene
        # (plotter.render() would draw once now and once more in the paint it causes)

    def start_counting():
        mark["wall"] = time.perf_counter()
        mark["frames"] = drawn["frames"]
        QTimer.singleShot(int(seconds * 1000), stop_counting)

    def stop_counting():
        mark["fps"] = (drawn["frames"] - mark["frames"]) / (time.perf_counter() - mark["wall"])
        close()

    def close():
        if "closed" not in mark:
            mark["closed"] = True
            frame_timer.stop()
            plotter.close()
        app.quit()

    plotter.ren_win.AddObserver("EndEvent", on_rendered)
    frame_timer = QTimer()
    frame_timer.setTimerType(Qt.PreciseTimer)  # as the window's frame timer
    frame_timer.timeout.connect(on_tick)
    frame_timer.start(REFERENCE_INTERVAL_MS)
    plotter.show()
    app.exec_()
    close()  # the loop may have ended some other way (the window closed by hand)
    plotter.deleteLater()
    app.processEvents()
    if "fps" not in mark:
        raise RuntimeError("the reference window closed before the measurement ended")
    return mark["fps"]


def figures_text(fig: dict) -> str:
    """The figures of :func:`run_gui_bench` as the command line prints them."""
    motion = "never" if fig["first_motion_s"] is None else f"{fig['first_motion_s']:.2f} s"
    lines = [f"fps {fig['fps']:.1f}, real-time factor {fig['realtime_factor']:.3f}, "
             f"first frame {fig['startup_s']:.2f} s, first motion {motion}, "
             f"memory growth {fig['memory_growth_mb']:.1f} MB"]
    if fig["reference_fps"] is not None:
        lines.append(f"reference window fps {fig['reference_fps']:.1f}, fps ratio {fig['fps_ratio']:.3f} "
                     "(view / simplest pyvistaqt window, same run)")
    return "\n".join(lines)


def run_gui_bench(seconds: float = 60.0, speed: float = 1.0, view: str = "main",
                  reference_seconds: float | None = None) -> dict:
    """Open ``view`` (the main window by default), run ``seconds`` of wall time at
    ``speed``, then the reference window for ``reference_seconds`` (default: ``seconds``
    up to :data:`REFERENCE_SECONDS`; 0 skips it); return the figures.

    Keys: ``fps`` (scene frames drawn per wall second), ``realtime_factor`` (simulated
    seconds per wall second, so ``speed`` when the worker keeps up), ``startup_s`` (process
    start to the first drawn frame), ``first_motion_s`` (process start to the end of the first
    drawn frame whose simulated time is above 0: on a first run, kernels compiling or not;
    None if the body never moved), ``memory_growth_mb`` (RSS at the end minus RSS after
    the warm-up), plus ``speed``, ``seconds``, ``frames`` and ``rss_mb``; ``reference_fps``
    (:func:`run_reference_window`, measured after the view so that it cannot delay the
    view's start-up) and ``fps_ratio`` (``fps / reference_fps``), both None when skipped.
    """
    from ..scenario import load
    from .launch import qt_application

    from ..views import get_view
    from .views import view_factory

    get_view(view)
    sc = load(BENCH_PRESET)
    app = qt_application()
    from PyQt5.QtCore import QTimer

    window = view_factory(view)(sc, preset=BENCH_PRESET, persist=False)
    window.resize(*BENCH_SIZE)
    window.set_speed(speed)
    window.set_repeat(True)  # a long run at 10x goes round the scenario many times
    warmup = warmup_seconds(seconds)
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

    posed = {"t": 0.0}
    pose = window._pose_scenes

    def pose_and_note(snaps):
        posed["t"] = max(snap.t for snap in snaps)
        return pose(snaps)

    def rendered(*_args):
        if "first_motion_s" not in fig and posed["t"] > 0:
            fig["first_motion_s"] = process_age()

    window._pose_scenes = pose_and_note  # what the next render draws
    window.scene_view.ren_win.AddObserver("EndEvent", rendered)
    window.first_frame_drawn.connect(first_frame)
    window.show()
    app.exec_()
    window.deleteLater()
    app.processEvents()
    if "fps" not in fig:
        raise RuntimeError("the GUI benchmark window closed before the measurement ended")
    fig["view"] = view
    fig.setdefault("first_motion_s", None)
    if reference_seconds is None:
        reference_seconds = min(seconds, REFERENCE_SECONDS)
    fig["reference_fps"] = run_reference_window(reference_seconds) if reference_seconds > 0 else None
    fig["fps_ratio"] = fig["fps"] / fig["reference_fps"] if fig["reference_fps"] else None
    return {k: fig[k] for k in ("fps", "realtime_factor", "startup_s", "first_motion_s", "memory_growth_mb",
                                "speed", "seconds", "frames", "rss_mb", "view", "reference_fps", "fps_ratio")}
