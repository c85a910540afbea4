"""Presentation mode and slow motion around the flips, for any view's window (GUI thread only).

F11 (View > Presentation) shows the 3D scene alone, full screen, for a class: the panels,
plots, toolbars, menus and status bar hidden, the colour key and the other labels over the
scene in large type, and a big clock (the simulated time) and flip counter in its top right
corner. F11 or Esc brings the window back as it was.

A lesson's run never ends silently there: a run that reaches its duration while the scene is
shown plays on past it (the clock says so), a repeating run starts again (the clock says that
too), and a run that had already ended when presentation mode began says "end of run, Space to
go on" across the scene in big letters until it plays on.

M (View > Slow motion around flips) plays each flip slower, by the factor chosen in View >
Slow-motion factor: from half a second before each flip the run is about to show to half a
second after. The worker paces its clock through the time map of
:func:`app.export.timeline.slow_flips_map`, the one ``tumble export --slow-flips`` samples its
frames with; the clock shows the simulated time all along.
"""

from __future__ import annotations

import re

from PyQt5.QtCore import QObject, Qt, QTimer
from PyQt5.QtWidgets import QAction, QActionGroup, QDockWidget, QLabel, QToolBar

from ...export.timeline import SLOW_HALF_WINDOW_S, slow_flips_map
from .screen_fit import screen_of
from ...scene.palette import current as current_palette, translate_text
from .window_parts import add_action

#: the slow-motion factors offered (times slower around each flip), and the one at first
SLOW_FACTORS = (2.0, 4.0, 8.0, 16.0)
DEFAULT_SLOW_FACTOR = 4.0
#: point size of the labels over the scene in presentation mode (8 pt in the window)
LABEL_POINTS = 18
#: the orientation axes' share of the scene in presentation mode (0.2 in the window): its x, y, z larger
AXES_SHARE = 0.3
#: pixel size of the big clock and flip counter
CLOCK_PX = 56
#: how often the big clock reads the run (ms): smooth at the display's pace
CLOCK_MS = 33
#: the big clock's style: the overlay's translucent box, large type
CLOCK_STYLE = ("QLabel { background: rgba(22, 25, 30, 200); color: #e6edf3; border-radius: 8px;"
               f" padding: 10px 18px; font-size: {CLOCK_PX}px; font-weight: bold; }}")
#: the small hint shown at the foot of the big clock
LEAVE_HINT = "F11 or Esc: back to the window"
#: ... and the colour scheme's key (View > Projector colours), naming the scheme it switches to
COLOURS_HINT = {False: "P: projector colours (light)", True: "P: dark colours"}
#: the big words across the scene over a run paused at its end
END_BANNER = "end of run, Space to go on"
#: pixel size of those words
BANNER_PX = 64
BANNER_STYLE = ("QLabel { background: rgba(22, 25, 30, 215); color: #ffd166; border-radius: 10px;"
                f" padding: 16px 28px; font-size: {BANNER_PX}px; font-weight: bold; }}")


def slow_time_map(factor: float):
    """The worker's time-map maker for slow motion ``factor`` times around each flip."""
    return lambda scenario, state: slow_flips_map(scenario, factor, state)


class Presentation(QObject):
    """Presentation mode and slow motion for ``window`` (a :class:`~.shell.ViewWindow`).

    ``action`` (F11) toggles presentation mode, ``leave_action`` (Esc) leaves it,
    ``slow_action`` (M) toggles slow motion, ``factor_actions`` choose its factor. GUI thread.
    """

    def __init__(self, window, slow_on: bool = False, factor: float = DEFAULT_SLOW_FACTOR):
        super().__init__(window)
        self.window = window
        self.active = False
        self._saved = None
        self.action = add_action(window, "Presentation", self.toggle, "F11",
                                 "The scene alone, full screen, in large type, with a big clock and flip counter")
        self.action.setCheckable(True)
        self.leave_action = add_action(window, "Leave presentation", self.leave, "Esc", "Back to the window")
        self.leave_action.setEnabled(False)
        self.slow_action = add_action(window, "Slow motion around flips", self._slow_toggled, "M",
                                      f"Play each flip slower: from {SLOW_HALF_WINDOW_S:g} s before each flip "
                                      f"to {SLOW_HALF_WINDOW_S:g} s after (the clock keeps the simulated time)")
        self.slow_action.setCheckable(True)
        self.slow_action.setChecked(slow_on)
        self.factor = factor if factor in SLOW_FACTORS else DEFAULT_SLOW_FACTOR
        group = QActionGroup(self)
        self.factor_actions = {}
        for x in SLOW_FACTORS:
            a = QAction(f"{x:g}× slower", window)
            a.setCheckable(True)
            a.setChecked(x == self.factor)
            a.triggered.connect(lambda _checked=False, x=x: self.set_factor(x))
            group.addAction(a)
            self.factor_actions[x] = a
        self.clock = QLabel(window.scene_view)
        self.clock.setStyleSheet(translate_text(CLOCK_STYLE))
        self.clock.setAttribute(Qt.WA_TransparentForMouseEvents)
        self.clock.hide()
        self.banner = QLabel(END_BANNER, window.scene_view)
        self.banner.setStyleSheet(translate_text(BANNER_STYLE))
        self.banner.setAttribute(Qt.WA_TransparentForMouseEvents)
        self.banner.hide()
        #: per worker, the run (its run_id) played on past its end while shown, or left ended
        self._handled: dict = {}
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.refresh_clock)
        if slow_on:
            self._apply_slow()

    def add_to_menu(self, menu) -> None:
        """View menu entries: presentation, slow motion, its factor."""
        menu.addSeparator()
        menu.addAction(self.action)
        menu.addAction(self.slow_action)
        factors = menu.addMenu("Slow-motion factor")
        for a in self.factor_actions.values():
            factors.addAction(a)

    # ------------------------------------------------------------------ slow motion

    @property
    def slow(self) -> bool:
        return self.slow_action.isChecked()

    def set_slow(self, on: bool) -> None:
        """Slow motion around the flips on or off."""
        self.slow_action.setChecked(on)
        self._apply_slow()

    def set_factor(self, factor: float) -> None:
        """The slow-motion factor (applied at once when slow motion is on)."""
        self.factor = float(factor)
        if factor in self.factor_actions:
            self.factor_actions[factor].setChecked(True)
        self._apply_slow()

    def _slow_toggled(self) -> None:
        self._apply_slow()  # the action's check state has already flipped

    def _apply_slow(self) -> None:
        make = slow_time_map(self.factor) if self.slow else None
        for w in self.window.workers:
            w.set_time_map(make)

    # ------------------------------------------------------------------ presentation mode

    def toggle(self) -> None:
        self.leave() if self.active else self.enter()

    def enter(self) -> None:
        """The scene alone, full screen, in large type, with the big clock."""
        if self.active:
            return
        w = self.window
        self.active = True
        fitter = getattr(w, "screen_fitter", None)
        if fitter is not None:  # back to this size, within the screen, when it leaves
            fitter.remember()
        bars = [w.menuBar(), w.statusBar()]
        hidden = [x for x in bars + self._others() if x.isVisible()]
        self._saved = {"state": w.saveState(), "geometry": w.saveGeometry(), "maximized": w.isMaximized(),
                       "hidden": hidden,
                       "styles": {label: label.styleSheet() for label in self._labels()},
                       "scheme": current_palette()}  # P may change it before the styles come back
        for x in hidden:
            x.hide()
        for label in self._labels():
            label.setStyleSheet(_larger(label.styleSheet(), LABEL_POINTS))
            label.adjustSize()
        axes = self._axes()
        if axes is not None:
            self._saved["axes"] = axes.GetViewport()
            axes.SetViewport(0.0, 0.0, AXES_SHARE, AXES_SHARE)
        self.action.setChecked(True)
        self.leave_action.setEnabled(True)
        # a run already paused at its end stays so, and says so in big letters; one that ends
        # while the scene is shown plays on
        self._handled = {k: s.run_id for k, s in enumerate(x.latest() for x in w.workers) if s.ended}
        # without a window manager (a bare X server) the full-screen state alone does not resize it
        w.setGeometry(screen_of(w).geometry())
        w.showFullScreen()
        self.clock.show()
        self.clock.raise_()
        self.refresh_clock()
        self.timer.start(CLOCK_MS)

    def leave(self) -> None:
        """Back to the window as it was."""
        if not self.active:
            return
        w = self.window
        self.active = False
        self.timer.stop()
        self.clock.hide()
        self.banner.hide()
        saved = self._saved or {}
        for label, style in saved.get("styles", {}).items():
            label.setStyleSheet(translate_text(style, saved["scheme"], current_palette()))
            label.adjustSize()
        axes = self._axes()
        if axes is not None and "axes" in saved:
            axes.SetViewport(*saved["axes"])
        w.showMaximized() if saved.get("maximized") else w.showNormal()
        if "geometry" in saved and not saved.get("maximized"):
            w.restoreGeometry(saved["geometry"])
        for x in saved.get("hidden", ()):
            x.show()
        if "state" in saved:
            w.restoreState(saved["state"])
        self.action.setChecked(False)
        self.leave_action.setEnabled(False)

    def _others(self) -> list:
        """What hides besides the bars: the toolbars and docks, and every pane of the central
        splitter that does not hold the 3D scene."""
        w = self.window
        out = [x for x in w.findChildren(QToolBar) if x.parent() is w]
        out += [x for x in w.findChildren(QDockWidget) if x.parent() is w]
        splitter = getattr(w, "splitter", None)
        if splitter is not None:
            for k in range(splitter.count()):
                pane = splitter.widget(k)
                if pane is not w.scene_view and not pane.isAncestorOf(w.scene_view):
                    out.append(pane)
        return out

    def _axes(self):
        """The scene's orientation axes (a VTK widget), or None."""
        renderer = getattr(self.window.scene_view, "renderer", None)
        return getattr(renderer, "axes_widget", None)

    def _labels(self) -> list:
        """The labels over the 3D scene (the colour key, a spin's note), made larger."""
        return [x for x in self.window.scene_view.findChildren(QLabel)
                if x is not self.clock and x is not self.banner and x.styleSheet() and "font-size" in x.styleSheet()]

    def refresh_clock(self) -> None:
        """The big clock: the simulated time, the flips, slow motion when it is slowing."""
        if not self.active or self.window._closing:
            return
        workers = self.window.workers
        snaps = [w.latest() for w in workers]
        for k, (worker, snap) in enumerate(zip(workers, snaps)):
            if snap.ended and self._handled.get(k) != snap.run_id:
                self._handled[k] = snap.run_id
                worker.play()  # a lesson's run goes on past its duration while it is shown
        t = min(s.t for s in snaps)
        flips = " / ".join(str(s.flips) for s in snaps)
        slowed = max(s.slowed for s in snaps)
        lines = [f"t = {t:6.2f} s", f"flips {flips}"]
        small = f"slow motion {slowed:g}×" if slowed > 1 else ("slow motion at flips" if self.slow else "")
        run = run_note(snaps)
        html = "<br>".join(lines)
        notes = "<br>".join(x for x in (small, run) if x) or "&nbsp;"
        html += f"<div style='font-size:{CLOCK_PX // 3}px; font-weight:normal'>{notes}<br>{LEAVE_HINT}<br>"
        html += f"{COLOURS_HINT[current_palette().light]}</div>"
        if self.clock.text() != html:
            self.clock.setText(html)
            self.clock.adjustSize()
        parent = self.window.scene_view
        self.clock.move(parent.width() - self.clock.width() - 16, 16)
        ended = any(s.ended for s in snaps)
        if ended:
            self.banner.adjustSize()
            self.banner.move((parent.width() - self.banner.width()) // 2, (parent.height() - self.banner.height()) // 2)
            self.banner.raise_()
        self.banner.setVisible(ended)


def run_note(snaps) -> str:
    """What the big clock says of the run's end: that it repeats, or that it went on past it."""
    snap = snaps[0]
    duration = snap.scenario.solver.duration
    if snap.repeat:
        return f"repeats every {duration:g} s"
    if any(s.t > s.scenario.solver.duration * (1 + 1e-9) + 1e-9 for s in snaps):
        return f"played on past the run's {duration:g} s"
    return ""


def _larger(style: str, points: int) -> str:
    """``style`` with its font size set to ``points``."""
    return re.sub(r"font-size:\s*[0-9.]+\s*(pt|px)", f"font-size: {points}pt", style)

