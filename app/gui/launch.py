"""``tumble gui``: open a view on a scenario; optionally screenshot it and quit.

Heavy imports (Qt, VTK, pyvista, pyqtgraph) happen here, inside :func:`run_gui`, after the
arguments are checked, so a bad scenario fails in a fraction of a second.
"""

from __future__ import annotations

import inspect
import os
import sys

from ..physics.errors import ParameterError
from .common.interrupt import CtrlC

#: default seconds before the screenshot when --quit-after is not given
DEFAULT_SCREENSHOT_DELAY_S = 2.0
#: longest wait for the first frame before a screenshot is taken anyway (s)
FIRST_FRAME_TIMEOUT_S = 30.0
DEFAULT_PRESET = "t-handle"
#: the longest ``--quit-after`` (s): a Qt timer counts milliseconds in a 32-bit int (24.8 days)
MAX_QUIT_AFTER_S = 1e6
#: the rule of ``--quit-after``
QUIT_AFTER_RULE = f"be a number of seconds from 0 to {MAX_QUIT_AFTER_S:,.0f} (11.6 days)"
#: how often ``tumble gui RECORDING`` looks for its window to open the dialog over (ms)
WAIT_FOR_WINDOW_MS = 50


def resolve_scenario(scenario: str | None):
    """(Scenario, preset name or None). None means the last scenario from the settings,
    else the default preset. Raises :class:`ParameterError` for a bad name or file."""
    from ..scenario import load, preset_names

    if scenario is None:
        from .common.settings import last_preset, last_scenario

        last = last_scenario()
        if last is not None:
            name = last_preset()
            try:  # the preset's name again, if the preset is still what was run
                same = name in preset_names() and load(name) == last
            except ParameterError:
                same = False
            return last, name if same else None
        scenario = DEFAULT_PRESET
    sc = load(scenario)
    text = str(scenario)
    return sc, text if text in preset_names() and "/" not in text and not text.endswith(".toml") else None


def qt_application():
    """The QApplication (created once, themed)."""
    from PyQt5.QtWidgets import QApplication

    from .common import settings
    from .common.theme import apply_theme

    app = QApplication.instance()
    if app is None:
        from ..display import check_display

        check_display()  # Qt would abort the process on a display that does not answer
        app = QApplication(sys.argv[:1])
        app.setOrganizationName(settings.ORGANIZATION)
        app.setApplicationName(settings.APPLICATION)
        app.setApplicationDisplayName("Tumble")
        from .common.colours import startup_scheme

        startup_scheme()  # --colours, else the scheme chosen last time
        apply_theme(app)
    return app


def check_quit_after(quit_after: float | None) -> None:
    """``quit_after`` None or 0 to MAX_QUIT_AFTER_S seconds (a Qt timer's range), else :class:`ParameterError`."""
    if quit_after is not None and not 0 <= quit_after <= MAX_QUIT_AFTER_S:  # NaN fails too
        raise ParameterError("--quit-after", quit_after, QUIT_AFTER_RULE)


def check_screenshot(screenshot: str | None) -> None:
    """``screenshot`` None or a PNG file that can be written (``.png``, an existing writable
    folder, a name the system takes), else :class:`ParameterError`: checked before any window,
    so a bad path costs no window's start-up."""
    if screenshot is not None:
        from ..atomic import check_target

        if not str(screenshot).endswith(("/", os.sep)) and os.path.splitext(str(screenshot))[1].lower() != ".png":
            raise ParameterError("--screenshot", screenshot, "end in .png")
        check_target(screenshot, "--screenshot")


def save_and_close(window, screenshot: str | None, result: dict) -> None:
    """The end of an automated run: save ``window`` as ``screenshot`` (a failed write is one line,
    ``result["code"] = 1``), then close it."""
    if screenshot is not None:
        try:
            window.save_screenshot(screenshot)
        except OSError as err:
            print(f"tumble: error: could not write {screenshot}: {err}", file=sys.stderr)
            result["code"] = 1
    window.close()


def run_gui(scenario: str | None, paused: bool = False, view: str = "main", screenshot: str | None = None,
            quit_after: float | None = None, live: str | None = None, engines: str | None = None,
            presentation: bool = False, slow_flips: float | None = None) -> int:
    """Open ``view`` on ``scenario`` and run the event loop; returns the exit status.

    With ``screenshot``, run ``quit_after`` seconds of wall time after the first drawn
    frame, save the whole window as PNG (atomically) and exit 0. With only ``quit_after``,
    just exit after that long. ``presentation`` opens it in presentation mode (F11),
    ``slow_flips`` X with slow motion X times around each flip (M). Raises
    :class:`ParameterError` before any window exists if the scenario or the view is bad.
    """
    from ..views import get_view
    from .views import view_factory

    get_view(view)
    check_quit_after(quit_after)
    check_screenshot(screenshot)
    if slow_flips is not None:
        from ..export.timeline import check_slow_factor

        slow_flips = check_slow_factor(slow_flips, "--slow-flips")
    sc, preset = resolve_scenario(scenario)

    app = qt_application()
    from PyQt5.QtCore import QTimer
    with CtrlC(app) as ctrl_c:  # from here on, Ctrl+C closes the window (once it is open)
        automated = screenshot is not None or quit_after is not None
        factory = view_factory(view)
        options = {"preset": preset, "paused": paused, "persist": not automated}
        if engines is not None:  # --view engines: its settings
            options["engines"] = engines
        if scenario is not None and preset is None and "source" in inspect.signature(factory).parameters:
            options["source"] = str(scenario)  # a TOML file: the view names it
        window = factory(sc, **options)
        if live is not None:  # tumble gui --live URL: the Phone dock, connected
            window.connect_phone(live)
        result = {"code": 0}

        if automated:
            delay = quit_after if quit_after is not None else DEFAULT_SCREENSHOT_DELAY_S

            def finish():
                save_and_close(window, screenshot, result)

            countdown = []  # started once: by the first frame, or by the timeout without one

            def start_countdown(*_args):
                if not countdown:
                    countdown.append(True)
                    QTimer.singleShot(int(delay * 1000), finish)

            window.first_frame_drawn.connect(start_countdown)
            QTimer.singleShot(int(FIRST_FRAME_TIMEOUT_S * 1000), start_countdown)

        if slow_flips is not None:
            window.presentation.set_factor(slow_flips)
            window.presentation.set_slow(slow_flips != 1.0)
        window.show()
        if presentation:
            window.presentation.enter()
        app.exec_()
    window.deleteLater()
    app.processEvents()
    ctrl_c.raise_if_hit()
    return result["code"]


def run_gui_on_recording(paths, *, view: str = "main", paused: bool = False, screenshot: str | None = None,
                         quit_after: float | None = None) -> int:
    """``tumble gui RECORDING...``: the window on the last scenario (as plain ``tumble gui``
    opens it) with the import dialog fitting ``paths``; same options and exit status as
    :func:`run_gui`."""
    if view not in ("main", "poinsot"):
        raise ParameterError("--view", view, "be main or poinsot with a recording (its flights replay there)")
    from .recordings.opening import open_recordings

    app = qt_application()
    from PyQt5.QtCore import QTimer

    from .windows.main_window import MainWindow

    def open_dialog():
        windows = [w for w in app.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
        if windows:
            waiting.stop()
            open_recordings(windows[0], paths)

    waiting = QTimer(app)  # until run_gui's event loop shows the window
    waiting.timeout.connect(open_dialog)
    waiting.start(WAIT_FOR_WINDOW_MS)
    try:
        return run_gui(None, paused=paused, view=view, screenshot=screenshot, quit_after=quit_after)
    finally:
        waiting.stop()
        waiting.deleteLater()


def run_replay(replay, speed: float | None = None, screenshot: str | None = None, quit_after: float | None = None) -> int:
    """``tumble replay`` without ``--out``: the replay window on ``replay`` (a
    :class:`~app.throws.fitting.replay.FlightReplay`) until it is closed; ``screenshot`` and
    ``quit_after`` as in :func:`run_gui`, the countdown started by the first frame drawn in the
    shown window, the image posed at the played time ``quit_after`` s of an unstalled playback
    reach (:meth:`~app.gui.windows.replay_window.ReplayWindow.played_after`). Returns the exit
    status."""
    check_quit_after(quit_after)
    check_screenshot(screenshot)
    app = qt_application()
    from PyQt5.QtCore import QTimer

    from .windows.replay_window import DEFAULT_SPEED, ReplayWindow

    with CtrlC(app) as ctrl_c:  # from here on, Ctrl+C closes the window (once it is open)
        window = ReplayWindow(replay, DEFAULT_SPEED if speed is None else speed)
        result = {"code": 0}
        if screenshot is not None or quit_after is not None:
            delay = quit_after if quit_after is not None else DEFAULT_SCREENSHOT_DELAY_S

            def finish():
                # the flight as a playback that never stalled shows it ``delay`` s after the first
                # frame: the same image on a busy machine, whose stalled frames play less of it
                window.hold_at(window.played_after(delay))
                save_and_close(window, screenshot, result)

            window.first_frame_drawn.connect(lambda: QTimer.singleShot(int(delay * 1000), finish))
        window.show()
        app.exec_()
    window.deleteLater()
    app.processEvents()
    ctrl_c.raise_if_hit()
    return result["code"]
