"""GUI test fixtures: private settings, a window factory, and a guard that fails any test
leaving threads, top-level widgets or pyvista plotters alive (as napari and pyvistaqt do)."""

from __future__ import annotations

import gc
import os
import tempfile
import threading
import time

import pytest
from conftest import WAIT_MS

# Qt warns (a qWarning, which fails the test) when XDG_RUNTIME_DIR is unset, as it is in
# containers and CI; give it a private one before any QApplication exists.
if not os.environ.get("XDG_RUNTIME_DIR"):
    _runtime = tempfile.mkdtemp(prefix="tumble-xdg-runtime-")
    os.chmod(_runtime, 0o700)
    os.environ["XDG_RUNTIME_DIR"] = _runtime

#: how long the leak guard waits for threads and deferred deletes to settle (s): a GUI wait
#: (5 s ran out under two busy loops, a closed window's widgets still waiting); a guard that
#: finds nothing left returns at once, so only a real leak waits this long
SETTLE_S = WAIT_MS / 1000


@pytest.fixture(autouse=True)
def private_settings(tmp_path, monkeypatch):
    """QSettings (and any subprocess's XDG config) go to a temporary folder, never the user's."""
    from PyQt5.QtCore import QSettings

    folder = tmp_path / "settings"
    folder.mkdir()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder))
    for fmt in (QSettings.IniFormat, QSettings.NativeFormat):
        QSettings.setPath(fmt, QSettings.UserScope, str(folder))
    return folder


@pytest.fixture(autouse=True)
def no_leaks(qapp, private_settings):
    """Fail the test if it leaves extra threads, top-level widgets or pyvista plotters."""
    from PyQt5.QtCore import QCoreApplication, QEvent
    from pyvista.plotting import plotter as pv_plotter

    threads_before = set(threading.enumerate())
    widgets_before = {id(w) for w in qapp.topLevelWidgets()}
    plotters_before = set(pv_plotter._ALL_PLOTTERS)
    yield
    deadline = time.perf_counter() + SETTLE_S
    while True:
        QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)
        qapp.processEvents()
        gc.collect()  # pyqtgraph's parentless context menus die with their Python owners
        threads = [t for t in threading.enumerate() if t not in threads_before and t.is_alive()]
        widgets = [w for w in qapp.topLevelWidgets() if id(w) not in widgets_before]
        if not threads and not widgets or time.perf_counter() > deadline:
            break
        time.sleep(0.05)
    plotters = set(pv_plotter._ALL_PLOTTERS) - plotters_before
    problems = []
    if threads:
        problems.append("threads still running: " + ", ".join(t.name for t in threads))
    if widgets:
        problems.append("top-level widgets still alive: " + ", ".join(type(w).__name__ for w in widgets))
    if plotters:
        problems.append("pyvista plotters not closed: " + ", ".join(sorted(plotters)))
    if problems:
        pytest.fail("; ".join(problems))


@pytest.fixture
def open_window(qtbot):
    """Factory: ``open_window("boxes-complex", speed=10)`` -> a shown MainWindow whose first
    frame has been drawn; closed and deleted by qtbot at the end of the test."""
    from tumble.gui.launch import resolve_scenario
    from tumble.gui.windows.main_window import MainWindow

    def make(scenario=None, *, speed=None, paused=False, persist=False):
        sc, preset = resolve_scenario(scenario)
        window = MainWindow(sc, preset=preset, paused=paused, persist=persist)
        qtbot.addWidget(window)
        if speed is not None:
            window.set_speed(speed)
        with qtbot.waitSignal(window.first_frame_drawn, timeout=WAIT_MS):
            window.show()
        # window shortcuts (space, R, K) need the window to be the active one
        window.activateWindow()
        qtbot.waitUntil(window.isActiveWindow, timeout=WAIT_MS)
        return window

    return make


@pytest.fixture
def open_view(qtbot):
    """Factory: ``open_view(scenario, view="main", integrator=None, dt=None, **options)`` -> a
    shown window of that view on a preset (optionally with another integrator and step, and
    the view's own options, e.g. a stability map's ``directions``)."""
    from tumble.gui.views import view_factory
    from tumble.scenario import SolverSpec, load

    def make(name, *, view="main", integrator=None, dt=None, speed=None, paused=False, **options):
        sc = load(name)
        changes = {k: v for k, v in (("integrator", integrator), ("dt", dt)) if v is not None}
        if changes:
            sc = sc.replace(solver=SolverSpec(**{**sc.solver.__dict__, **changes}))
        window = view_factory(view)(sc, preset=name, paused=paused, persist=False, **options)
        qtbot.addWidget(window)
        if speed is not None:
            window.set_speed(speed)
        with qtbot.waitSignal(window.first_frame_drawn, timeout=WAIT_MS):
            window.show()
        window.activateWindow()
        qtbot.waitUntil(window.isActiveWindow, timeout=WAIT_MS)
        return window

    return make


def _plot_layout(plots) -> tuple:
    """Where each plot of ``plots`` (a SpecPlots) and its legend sit in the scene, and whether it
    is shown: what a refresh measures the free band above the curves from."""
    layout = []
    for plot in plots.plots:
        legend = getattr(plot, "legend", None)
        layout.append((plot.isVisible(), plot.vb.sceneBoundingRect().getRect(),
                       None if legend is None else legend.sceneBoundingRect().getRect()))
    return tuple(layout)


@pytest.fixture
def plots_drawn(qtbot):
    """``plots_drawn(plots)``: wait until the plots ``plots`` (a SpecPlots: ``window.plots``) have
    been refreshed twice in the layout they have now (the plots refresh at the window's plot rate),
    within ``WAIT_MS``. A resize, a fourth row or a new title is laid out and then drawn by a later
    refresh; on a busy machine later than any fixed wait. Returns how many refreshes it waited for."""

    def wait(plots, timeout=WAIT_MS) -> int:
        refreshes = []  # (layout before, layout after) of each refresh since the call
        original = plots.refresh

        def refresh(*args, **kwargs):
            before = _plot_layout(plots)
            original(*args, **kwargs)
            refreshes.append((before, _plot_layout(plots)))

        def settled() -> bool:
            if len(refreshes) < 2:
                return False
            (_, previous), (before, after) = refreshes[-2:]
            return previous == before == after == _plot_layout(plots)

        plots.refresh = refresh  # the window calls self.refresh through the instance
        try:
            qtbot.waitUntil(settled, timeout=timeout)
        finally:
            del plots.refresh
        return len(refreshes)

    return wait


@pytest.fixture
def wait_frames(qtbot):
    """``wait_frames(window, n=2)``: wait until ``window`` (a view window: its ``frames_drawn``
    counts the scene's renders) has drawn ``n`` more frames, within ``WAIT_MS``: what a test
    reads from the scene after a change is there once a frame has posed it, however busy the
    machine."""

    def wait(window, n: int = 2, timeout=WAIT_MS) -> None:
        start = window.frames_drawn
        qtbot.waitUntil(lambda: window.frames_drawn >= start + n, timeout=timeout)

    return wait


class FakeDialogs:
    """Stands in for QFileDialog's static functions: records the folder each dialog starts
    in and answers with the next path queued."""

    def __init__(self, monkeypatch):
        from PyQt5.QtWidgets import QFileDialog

        self.started_in: list[str] = []
        self.answers: list[str] = []
        monkeypatch.setattr(QFileDialog, "getOpenFileName", self._answer)
        monkeypatch.setattr(QFileDialog, "getSaveFileName", self._answer)

    def _answer(self, parent, title, start, filters, selected=""):
        self.started_in.append(start if os.path.isdir(start) else os.path.dirname(start))
        return self.answers.pop(0), selected


@pytest.fixture
def file_dialogs(monkeypatch) -> FakeDialogs:
    """The file dialogs answered from ``file_dialogs.answers``; where each started in ``started_in``."""
    return FakeDialogs(monkeypatch)
