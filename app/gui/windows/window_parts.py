"""Pieces every view window shares: its actions, the speed control, the status labels, the
colour-key overlay and the window screenshot. GUI thread only."""

from __future__ import annotations

import math
from pathlib import Path

from PyQt5.QtCore import QEvent, QObject, Qt, QTimer
from PyQt5.QtGui import QKeySequence
from PyQt5.QtWidgets import QAction, QCheckBox, QLabel, QSlider, QToolButton

from ...atomic import atomic_path
from ...simulation import MAX_SPEED, MIN_SPEED
from ...scene.palette import tone, translate_text
from ..common.theme import ERROR_TEXT, MUTED_TEXT

#: speed slider: ticks per decade (log scale from MIN_SPEED to MAX_SPEED)
SPEED_TICKS_PER_DECADE = 50
#: style of the translucent labels drawn over a 3D view (the colour key, the spin)
OVERLAY_STYLE = ("QLabel { background: rgba(22, 25, 30, 190); color: #c9d1d9; border-radius: 4px;"
                 " padding: 5px; font-size: 8pt; }")


class CameraFitter(QObject):
    """Fits the camera of ``window``'s 3D view to the view's new shape after each resize,
    once VTK has the new size, unless the user has moved it since it was last fitted
    (``window.scene.fit_to_view``); nothing once the window is closing. GUI thread.
    ``pending`` is True from a resize until its fit has run (what a test waits for)."""

    def __init__(self, window, view):
        super().__init__(window)
        self._window = window
        self.pending = False
        view.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt API
        if event.type() == QEvent.Resize:
            self.pending = True
            QTimer.singleShot(0, self._fit)
        return False

    def _fit(self) -> None:
        self.pending = False
        fit = getattr(self._window.scene, "fit_to_view", None)
        if fit is not None and not self._window._closing:
            fit()


#: the application's name: Qt appends " — Tumble" to every window title that does not end with it
APP_NAME = "Tumble"


def window_title(text: str) -> str:
    """``text`` as a window's title, "WHAT — Tumble": the application named once, at the end
    (a title "Tumble: WHAT" came out as "Tumble: WHAT — Tumble" once Qt appended the name)."""
    if text.startswith(f"{APP_NAME}: "):
        text = text[len(APP_NAME) + 2:]
        text = text[:1].upper() + text[1:]
    return text if text == APP_NAME or text.endswith(f" — {APP_NAME}") else f"{text} — {APP_NAME}"


def add_action(window, text: str, slot, shortcut: str | None = None, tip: str = "") -> QAction:
    """A window-wide action calling ``slot()``, with its shortcut shown in the tooltip.

    ``triggered`` carries a ``checked`` flag, and PyQt passes it to any slot that takes an
    argument: connected straight, ``SimulationWorker.kick(impulse_body=None)`` received
    ``False`` as its impulse. The flag is dropped here, so every command is called bare.
    """
    action = QAction(text, window)
    action.triggered.connect(lambda _checked=False: slot())
    if shortcut:
        action.setShortcut(QKeySequence(shortcut))
        action.setShortcutContext(Qt.WindowShortcut)
    action.setToolTip(f"{tip} ({shortcut})" if shortcut else tip)
    window.addAction(action)
    return action


class SpeedControl:
    """The toolbar's playback speed: a log-scale slider from MIN_SPEED to MAX_SPEED, its
    value, and a "real time" button. ``on_change(speed)`` is called when it moves."""

    def __init__(self, toolbar, speed: float, on_change, tip: str):
        self._on_change = on_change
        toolbar.addWidget(QLabel(" speed "))
        self.slider = QSlider(Qt.Horizontal)
        lo, hi = math.log10(MIN_SPEED), math.log10(MAX_SPEED)
        self.slider.setRange(round(lo * SPEED_TICKS_PER_DECADE), round(hi * SPEED_TICKS_PER_DECADE))
        self.slider.setValue(round(math.log10(speed) * SPEED_TICKS_PER_DECADE))
        self.slider.setFixedWidth(150)
        self.slider.setToolTip(tip)
        self.slider.valueChanged.connect(self._moved)
        toolbar.addWidget(self.slider)
        self.label = QLabel()
        self.label.setMinimumWidth(46)
        toolbar.addWidget(self.label)
        one = QToolButton()
        one.setText("real time")
        one.setToolTip("Real time")
        one.clicked.connect(lambda: self.set_speed(1.0))
        toolbar.addWidget(one)
        self._show(speed)

    def set_speed(self, speed: float) -> None:
        self.slider.setValue(round(math.log10(speed) * SPEED_TICKS_PER_DECADE))

    def _moved(self, value: int) -> None:
        speed = 10 ** (value / SPEED_TICKS_PER_DECADE)
        speed = 1.0 if abs(speed - 1.0) < 0.03 else speed
        self._on_change(speed)
        self._show(speed)

    def _show(self, speed: float) -> None:
        self.label.setText(f"{speed:.2g}×" if speed < 1 else f"{speed:.3g}×")


class RepeatToggle:
    """The "repeat" option of a view: a toolbar checkbox and a checkable Simulation-menu
    action kept in step. ``on_change(bool)`` is called when either changes it.

    On, a run that reaches its duration starts again from t = 0; off (the default), it
    pauses there with "end of run" in the status bar: Play goes on past the end, Reset
    starts again, and nothing done during the run (a kick) is lost at the end.
    """

    TIP = ("At the end of the run (the solver's duration) start again from t = 0; off, the run pauses "
           "there: Play goes on past the end, Reset (R) starts again")

    def __init__(self, window, checked: bool, on_change):
        self.checkbox = QCheckBox("repeat")
        self.checkbox.setChecked(checked)
        self.checkbox.setToolTip(self.TIP)
        self.action = QAction("Repeat at the end of the run", window)
        self.action.setCheckable(True)
        self.action.setChecked(checked)
        self.action.setToolTip(self.TIP)
        self.action.setStatusTip(self.TIP)
        # setChecked with the value it has emits nothing, so the two cannot ping-pong
        self.checkbox.toggled.connect(self.action.setChecked)
        self.action.toggled.connect(self.checkbox.setChecked)
        self.checkbox.toggled.connect(on_change)

    def isChecked(self) -> bool:  # noqa: N802 - as Qt's
        return self.checkbox.isChecked()


#: the status bar's real-time factor, and what it means
RTF_TIP = "simulated seconds per wall-clock second"
#: what the status bar says of a kernel compiling (a first run after installing)
COMPILING_TIP = ("the integrator's compiled kernel is being built in the background, once per install; "
                 "until it is ready the same code runs uncompiled, slower, with the same results")
#: the status bar's word for a run paused at its duration, and its tooltip
END_OF_RUN = "end of run: Space plays on, R restarts"
END_OF_RUN_TIP = ("The run reached its duration (Solver > duration) and paused: Play (Space) goes on past it, "
                  "Reset (R) starts again; the repeat option starts again by itself")


def show_run_state(label: QLabel, snap, rtf: float | None = None) -> None:
    """The status bar's run state: the real-time factor while running (``rtf``, default
    the snapshot's), else "end of run" at the run's duration, else "paused" (muted)."""
    if snap.running:
        text, tip, style = f"real time ×{snap.realtime_factor if rtf is None else rtf:.2f}", RTF_TIP, ""
        if snap.compiling:  # a first run: the kernel compiles, the body moves meanwhile
            text, tip = f"{text} · {snap.compiling}", f"{RTF_TIP}; {COMPILING_TIP}"
    elif snap.ended:
        text, tip, style = END_OF_RUN, END_OF_RUN_TIP, ""
    else:
        text, tip, style = "paused", RTF_TIP, f"color: {MUTED_TEXT};"
    if label.text() != text:
        label.setText(text)
        label.setToolTip(tip)
        label.setStyleSheet(style)


def add_status_labels(window, tips) -> tuple[dict, QLabel]:
    """Permanent labels ``(name, tooltip)`` on the right of the window's status bar, and the
    error label that takes the rest of it: ``(labels by name, error label)``."""
    bar = window.statusBar()
    labels = {}
    for name, tip in tips:
        label = QLabel()
        label.setToolTip(tip)
        bar.addPermanentWidget(label)
        labels[name] = label
    error = QLabel()
    error.setStyleSheet(f"color: {ERROR_TEXT};")
    bar.addWidget(error, 1)
    return labels, error


def legend_html(rows) -> str:
    """A colour key as rich text: a coloured square and the text of each ``(text, colour)``."""
    cells = "".join(f"<tr><td style='color:{tone(color)}'>■</td><td>&nbsp;{text}</td></tr>" for text, color in rows)
    return f"<table cellspacing='0' cellpadding='1'>{cells}</table>"


def overlay_label(parent, html: str = "") -> QLabel:
    """A translucent rich-text label in the top left corner of ``parent`` (a 3D view):
    crisp text at no render cost, and clicks go through to the view."""
    label = QLabel(html, parent)
    label.setStyleSheet(translate_text(OVERLAY_STYLE))  # in the scheme in use
    label.setAttribute(Qt.WA_TransparentForMouseEvents)
    label.setTextFormat(Qt.RichText)
    label.move(8, 8)
    label.adjustSize()
    return label


class CornerPin(QObject):
    """Keeps ``label`` (an overlay of a 3D view) in the bottom-right corner of its parent, as the
    parent or the label changes size (presentation mode's larger type). GUI thread."""

    MARGIN = 8

    def __init__(self, label):
        super().__init__(label)
        self._label = label
        label.parentWidget().installEventFilter(self)
        label.installEventFilter(self)
        self.place()

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt API
        if event.type() == QEvent.Resize:
            self.place()
        return False

    def place(self) -> None:
        parent = self._label.parentWidget()
        self._label.move(max(0, parent.width() - self._label.width() - self.MARGIN),
                         max(0, parent.height() - self._label.height() - self.MARGIN))


def same_start(a, b) -> bool:
    """Whether scenarios ``a`` and ``b`` (either may be None) start the same body from the
    same place, orientation and spin: the default camera is chosen from these."""
    def start(sc):
        return (sc.body, sc.position, sc.orientation, sc.angular_velocity)

    return a is not None and b is not None and start(a) == start(b)


def save_window_png(window, path) -> Path:
    """Write the whole window as a PNG, atomically (temporary file, then rename)."""
    path = Path(path)
    image = window.grab().toImage()
    with atomic_path(path) as tmp:
        if not image.save(str(tmp), "PNG"):
            raise OSError(f"could not write PNG {path}")
    return path


#: windows a view switch opened, kept alive until closed (each deletes itself on close)
_switched: list = []


def keep_open(window) -> None:
    """Keep a parentless ``window`` alive until it is closed, then let Qt delete it."""
    window.setAttribute(Qt.WA_DeleteOnClose)
    _switched.append(window)
    window.destroyed.connect(lambda *_a, w=window: _switched.remove(w) if w in _switched else None)
