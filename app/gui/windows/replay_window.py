"""The replay window: one recorded flight played back in 3D (the replay view) beside the measured and modelled omega, with play, pause, speed, loop and a time slider.

Nothing runs in the background: the flight's timelines are made once
(:func:`app.export.replay.window_timelines`) and each display frame poses the view at the
played time with :meth:`~app.views.replay.ReplayView.pose`, the call the clip's frames use.
GUI thread only.
"""

from __future__ import annotations

import time

from PyQt5.QtCore import QSize, Qt, QTimer, pyqtSignal
from PyQt5.QtWidgets import (QCheckBox, QComboBox, QHBoxLayout, QLabel, QMainWindow, QPushButton, QSlider,
                             QSplitter, QVBoxLayout, QWidget)
from pyvistaqt import QtInteractor

from ...scene.palette import current as current_palette
from ..common.colours import switch_scheme
from ...export.replay import replay_scenario, replay_title, window_timelines
from ...throws.fitting.replay import DEFAULT_SPEED
from ...views.replay import spec as replay_spec
from ..plots.live_plots import SpecPlots
from .screen_fit import ScreenFitter, place_window
from .window_parts import keep_open, legend_html, overlay_label, save_window_png, window_title

#: display frames per second asked of the timer (the scene renders in 6-20 ms here)
FRAME_MS = 16
#: the plots are redrawn this often (ms): their Qt repaint, not the data, is what costs
PLOT_MS = 100
#: playback speeds offered (s of flight per s of wall time)
SPEEDS = (0.05, 0.1, 0.25, 0.5, 1.0)
#: ticks of the time slider
SLIDER_TICKS = 1000
#: a looped replay waits this long (s of wall time) at the catch before it starts again
LOOP_PAUSE_S = 0.6
#: the window's first size (px), within the screen
DEFAULT_SIZE = (1280, 720)
#: most wall time (s) one frame advances the replay: a stall (the window being shown, a busy
#: machine) pauses it instead of skipping part of the flight
MAX_FRAME_WALL_S = 0.1


class ReplayWindow(QMainWindow):
    """The replay of ``replay`` (a :class:`~app.throws.fitting.replay.FlightReplay`).

    ``time`` is the played time (s since the release); ``first_frame_drawn`` is emitted (GUI
    thread, from the event loop) once the scene has been rendered in the shown window,
    ``frames_drawn`` counts the scene's renders.
    """

    VIEW = "replay"
    first_frame_drawn = pyqtSignal()

    def __init__(self, replay, speed: float = DEFAULT_SPEED, parent=None):
        super().__init__(parent)
        self.replay = replay
        self.speed = float(speed)
        self.time = 0.0
        self.playing = True
        self.frames_drawn = 0
        self._announced = False
        self._closing = False
        self._paused_at_end = None
        self._last_wall = time.perf_counter()
        self.setWindowTitle(window_title(replay_title(replay)))
        self.timelines = window_timelines(replay)
        self.spec = replay_spec(replay.model is not None)
        scenario = replay_scenario(replay)

        self.plotter = QtInteractor(self, multi_samples=0, auto_update=False)
        self.plotter.setMinimumSize(320, 240)
        self.plotter.ren_win.AddObserver("EndEvent", self._on_rendered)
        self._first_frame_timer = QTimer(self)  # a child: it cannot outlive the window
        self._first_frame_timer.setSingleShot(True)
        self._first_frame_timer.timeout.connect(self.first_frame_drawn.emit)
        self.view = self.spec.build({"body": self.plotter}, (scenario,), {"model": replay.model is not None})
        self.key = overlay_label(self.plotter, legend_html(self.view.legend_rows))
        self.plots = SpecPlots(self.spec.plots)
        self.plots.set_window("all")
        self.plots.plots[-1].getAxis("bottom").enableAutoSIPrefix(False)  # seconds, not ms: a flight is a second
        for plot in self.plots.plots:  # a recorded flight has flips marked, never kicks
            plot.legend.removeItem("kick")

        split = QSplitter(Qt.Horizontal)
        split.addWidget(self.plotter)
        split.addWidget(self.plots)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        central = QWidget()
        lay = QVBoxLayout(central)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(split, 1)
        lay.addLayout(self._controls())
        self.setCentralWidget(central)
        self._fit_screen()

        self.frame_timer = QTimer(self)
        self.frame_timer.timeout.connect(self._tick)
        self.frame_timer.start(FRAME_MS)
        self.plot_timer = QTimer(self)
        self.plot_timer.timeout.connect(self._refresh_plots)
        self.plot_timer.start(PLOT_MS)
        self._draw()
        self._refresh_plots()

    # ------------------------------------------------------------------ building

    def _controls(self) -> QHBoxLayout:
        bar = QHBoxLayout()
        self.play_button = QPushButton("Pause")
        self.play_button.setToolTip("Play or pause the replay (Space)")
        self.play_button.setShortcut(Qt.Key_Space)
        self.play_button.clicked.connect(self.toggle_play)
        bar.addWidget(self.play_button)
        restart = QPushButton("Restart")
        restart.setToolTip("Back to the release")
        restart.clicked.connect(lambda: self.seek(0.0))
        bar.addWidget(restart)
        bar.addWidget(QLabel("Speed:"))
        self.speed_combo = QComboBox()
        speeds = sorted(set(SPEEDS) | {self.speed})
        self.speed_combo.addItems([f"{s:g}x" for s in speeds])
        self.speed_combo.setCurrentIndex(speeds.index(self.speed))
        self.speed_combo.setToolTip("s of flight per s of wall time")
        self.speed_combo.currentIndexChanged.connect(lambda i: self.set_speed(speeds[i]))
        bar.addWidget(self.speed_combo)
        self.loop = QCheckBox("Loop")
        self.loop.setChecked(True)
        bar.addWidget(self.loop)
        self.colours_box = QCheckBox("Projector colours")
        self.colours_box.setToolTip("Dark text and strong colours on white, for a projector in a lit room "
                                    "(every window, remembered)")
        self.colours_box.setChecked(current_palette().light)
        self.colours_box.toggled.connect(lambda on: switch_scheme("projector" if on else "dark"))
        bar.addWidget(self.colours_box)
        self.slider = QSlider(Qt.Horizontal)
        self.slider.setRange(0, SLIDER_TICKS)
        self.slider.setToolTip("time since the release")
        self.slider.sliderMoved.connect(lambda v: self.seek(v / SLIDER_TICKS * self.replay.duration))
        bar.addWidget(self.slider, 1)
        self.time_label = QLabel()
        self.time_label.setMinimumWidth(220)
        bar.addWidget(self.time_label)
        return bar

    def _fit_screen(self) -> None:
        """The first size: DEFAULT_SIZE, at most the screen's available area less the window's
        frame, centred; corrected once the window manager has framed it."""
        self.screen_fitter = ScreenFitter(self)
        self.screen_fitter.wanted = QSize(*DEFAULT_SIZE)
        place_window(self, DEFAULT_SIZE)

    def colours_changed(self, target) -> None:
        """The colour scheme is now ``target``: the box says so, the scene is drawn again."""
        self.colours_box.blockSignals(True)
        self.colours_box.setChecked(target.light)
        self.colours_box.blockSignals(False)
        self.plotter.render()

    # ------------------------------------------------------------------ playing

    def toggle_play(self) -> None:
        self.playing = not self.playing
        if self.playing and self.time >= self.replay.duration:
            self.time = 0.0
        self.play_button.setText("Pause" if self.playing else "Play")
        self._last_wall = time.perf_counter()

    def set_speed(self, speed: float) -> None:
        self.speed = float(speed)

    def seek(self, t: float) -> None:
        """Show the flight at ``t`` (s since the release)."""
        self.time = min(max(float(t), 0.0), self.replay.duration)
        self._paused_at_end = None
        self._draw()
        self._refresh_plots()

    def _tick(self) -> None:
        now = time.perf_counter()
        wall, self._last_wall = min(now - self._last_wall, MAX_FRAME_WALL_S), now
        if not self.playing:
            return
        if self._paused_at_end is not None:
            if now - self._paused_at_end < LOOP_PAUSE_S:
                return
            self._paused_at_end = None
            self.time = 0.0
        else:
            self.time += wall * self.speed
        if self.time >= self.replay.duration:
            self.time = self.replay.duration
            if self.loop.isChecked():
                self._paused_at_end = now
            else:
                self.toggle_play()
        self._draw()

    def _draw(self) -> None:
        self.view.pose(self.timelines, self.time)
        self.plotter.render()
        self.slider.blockSignals(True)
        self.slider.setValue(round(self.time / max(self.replay.duration, 1e-9) * SLIDER_TICKS))
        self.slider.blockSignals(False)
        flips = self.timelines[0].flips
        done = int((flips <= self.time).sum())
        self.time_label.setText(f"t = {self.time:.3f} s of {self.replay.duration:.3f} s   flips: {done}")

    def _on_rendered(self, *_args) -> None:
        """VTK observer of the scene's render window: one frame drawn. The first drawn while the
        window is shown is announced from the event loop (a listener may close the window, which
        must not finalize the GL view in the middle of a paint); a render before the window is
        shown draws nothing anyone sees."""
        self.frames_drawn += 1
        if not self._announced and self.isVisible():
            self._announced = True
            self._first_frame_timer.start(0)

    def played_after(self, wall_s: float) -> float:
        """The played time (s since the release) a playback that never stalled reaches
        ``wall_s`` seconds of wall time after its first frame, at the speed and loop set now:
        what ``--quit-after`` shows, on any machine (a busy one draws fewer frames, and each
        advances at most MAX_FRAME_WALL_S)."""
        duration = self.replay.duration
        wall = max(float(wall_s), 0.0)
        if self.loop.isChecked():  # each lap: the flight, then LOOP_PAUSE_S at the catch
            wall %= duration / self.speed + LOOP_PAUSE_S
        return min(wall * self.speed, duration)

    def hold_at(self, t: float) -> None:
        """Pause and show the flight at ``t`` (s since the release): scene and plots posed now."""
        if self.playing:
            self.toggle_play()
        self.seek(t)

    def _refresh_plots(self) -> None:
        spans = [tl.span(None, self.time) for tl in self.timelines]
        self.plots.refresh(spans)
        # the whole flight's time axis, the curves growing along it
        self.plots.first_plot.vb.setRange(xRange=(0.0, max(self.replay.duration, 1e-6)), padding=0)

    @classmethod
    def open(cls, replay, speed: float = DEFAULT_SPEED) -> "ReplayWindow":
        """A shown replay window on ``replay``, alive until the user closes it (a flight's
        "Replay in 3D" button: app.gui.recordings.flights_table.open_replay)."""
        window = cls(replay, speed)
        keep_open(window)
        window.show()
        window.raise_()
        return window

    # ------------------------------------------------------------------ closing

    def save_screenshot(self, path):
        """Write the whole window as a PNG, atomically."""
        return save_window_png(self, path)

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt API
        if not self._closing:
            self._closing = True
            self.frame_timer.stop()
            self.plot_timer.stop()
            self._first_frame_timer.stop()
            self.plots.release()
            self.plotter.close()
        super().closeEvent(event)
