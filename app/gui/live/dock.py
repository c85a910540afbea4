"""File > Connect to phone...: a phone's gyroscope live in the main window (phyphox remote access).

Data flow::

    Connect  -> LiveSession.run in a plain thread (app.throws.live.session: poll, CSV, flights, fits)
    QTimer (dock, POLL_MS) -> session.snapshot(): copies taken under the session's lock
               -> the live strip (measured ω, the last STRIP_S of the current segment)
               -> the flights table (the last fit's flights, as the import dialog shows them)
               -> a new flight: the main window replays it with the body fitted so far
               -> the status bar: connection state, sample rate, the last throw's flip
    a tick in the table -> session.choose(exclude, include): the flights are fitted again

The thread never touches a widget. Disconnect stops the thread (it finishes with the full fit
of every flight) and keeps everything received; closing the window does the same.
"""

from __future__ import annotations

import threading

import pyqtgraph as pg
from PyQt5.QtCore import QEvent, QObject, Qt, QTimer, pyqtSignal
from PyQt5.QtWidgets import QDockWidget, QHBoxLayout, QLabel, QLineEdit, QPushButton, QSplitter, QVBoxLayout, QWidget

from ...physics.errors import ParameterError
from ...scene.palette import current, rgb01
from ...scene.style import AXIS_HEX, tone
from ...throws.live.session import LiveSession
from ...throws.live.client import parse_url
from ...throws.live.demo import is_demo
from ...throws.fitting.report import flight_scenario
from ..common import settings as keys
from ..recordings.flights_table import FlightsTable, flight_rows, open_replay
from ..plots.live_plots import release_menus
from ..common.theme import ERROR_TEXT, MUTED_TEXT

#: how often the dock reads the session's copies (ms)
POLL_MS = 150
#: seconds of the current segment the live strip shows
STRIP_S = 10.0
#: how long closing waits for the session's thread (s): closing abandons the session (no final
#: fit), and a request under way gives up within the client's stop slice, whatever the phone does
JOIN_S = 1.0
#: the settings key of the last URL, and the example shown while there is none
URL_KEY = "live/url"
URL_EXAMPLE = "http://192.168.1.23:8080"
STATES = {"connecting": "connecting", "connected": "connected", "reconnecting": "reconnecting",
          "cleared": "connected (the phone's time restarted)", "stopped": "stopped", "ended": "disconnected",
          "failed": "failed"}


class PhoneDock(QDockWidget):
    """The Phone dock of the main window (GUI thread only).

    Signals (GUI thread): ``flight_landed(dict)`` with each flight event as the table shows
    it; ``disconnected()`` once the session's thread has stopped.
    """

    flight_landed = pyqtSignal(dict)
    disconnected = pyqtSignal()

    def __init__(self, window):
        super().__init__("Phone (phyphox remote access)", window)
        self.setObjectName("phone_dock")
        self.window_ = window
        self.session: LiveSession | None = None
        self.thread: threading.Thread | None = None
        self.stop_event = threading.Event()
        self.shown_events = 0
        self.result = None
        self._released = False
        self._build()
        self.timer = QTimer(self)
        self.timer.timeout.connect(self._poll)

    # ------------------------------------------------------------------ layout

    def _build(self) -> None:
        body = QWidget()
        lay = QVBoxLayout(body)
        top = QHBoxLayout()
        top.addWidget(QLabel("URL"))
        self.url_edit = QLineEdit()
        self.url_edit.setPlaceholderText(URL_EXAMPLE)
        self.url_edit.setToolTip("The address phyphox shows under ⋮ > Allow remote access, on the same Wi-Fi; "
                                 "demo: a stand-in phone replaying a sample (no phone needed)")
        stored = keys.open_settings().value(URL_KEY, "", type=str)
        self.url_edit.setText(stored)
        self.url_edit.returnPressed.connect(self.toggle)
        top.addWidget(self.url_edit, 1)
        self.connect_button = QPushButton("Connect")
        self.connect_button.clicked.connect(self.toggle)
        top.addWidget(self.connect_button)
        self.state_label = QLabel("not connected")
        self.state_label.setObjectName("hint")
        lay.addLayout(top)
        lay.addWidget(self.state_label)  # a line of its own, the dock's width: not a column beside the URL
        self.ratios_label = QLabel("")
        self.ratios_label.setObjectName("moments")
        self.ratios_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        lay.addWidget(self.ratios_label)
        split = self.split = QSplitter(Qt.Horizontal)
        self.strip = pg.PlotWidget()
        self.strip.setMenuEnabled(False)
        self.strip.hideButtons()
        self.strip.showGrid(x=True, y=True, alpha=0.25)
        for side, label in (("left", "ω (rad/s)"), ("bottom", "phone time (s)")):
            self.strip.getAxis(side).enableAutoSIPrefix(False)
            self.strip.setLabel(side, label)
        self.strip.setTitle(f"measured ω, sensor frame, the last {STRIP_S:g} s")
        self.strip.addLegend(offset=(-4, 1), labelTextSize="8pt", colCount=3)
        self.curves = [self.strip.plot(pen=pg.mkPen(tone(AXIS_HEX[k]), width=1.4), name=f"ω{'xyz'[k]}") for k in range(3)]
        self.flight_regions: list = []
        split.addWidget(self.strip)
        self.table = FlightsTable(ask_for_room=False, one_source=True)  # one phone: no "segment 0" on every row
        self.table.use_changed.connect(self._use_changed)
        self.table.flight_selected.connect(self.replay)
        self.table.replay_requested.connect(self.replay_in_3d)
        split.addWidget(self.table)
        split.setSizes([620, 620])
        lay.addWidget(split, 1)
        self.setWidget(body)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        """The main window closes: stop the session's thread and wait for it; release the
        strip's pyqtgraph menus (top-level widgets that would outlive the window)."""
        if watched is self.window_ and event.type() == QEvent.Close and not self._released:
            self._released = True  # a window may be closed twice (a test, then pytest-qt)
            self.stop_and_join()
            release_menus(self.strip.getPlotItem())
        return False

    # ------------------------------------------------------------------ connecting

    @property
    def connected(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def toggle(self) -> None:
        if self.connected:
            self.disconnect_phone()
        else:
            self.connect_phone(self.url_edit.text().strip())

    def connect_phone(self, url: str) -> bool:
        """Start following ``url``; False (and one line in the dock) if it is no phyphox URL."""
        if self.connected:
            return False
        try:
            if not is_demo(url):
                parse_url(url)
        except ParameterError as err:
            self._say(str(err), ERROR_TEXT)
            return False
        self.url_edit.setText(url)
        if getattr(self.window_, "persist", True):
            keys.open_settings().setValue(URL_KEY, url)
        self.session = LiveSession(url)
        self.session.show_in_air = True
        self.stop_event.clear()
        self.shown_events = 0
        self.thread = threading.Thread(target=_run_quietly, args=(self.session, self.stop_event.is_set),
                                       name="tumble-live", daemon=True)
        self.thread.start()
        self.connect_button.setText("Disconnect")
        self.url_edit.setEnabled(False)
        self._say("connecting…", MUTED_TEXT)
        self.timer.start(POLL_MS)
        return True

    def disconnect_phone(self) -> None:
        """Stop following the phone; everything received stays (strip, table, the replay)."""
        if self.thread is None:
            return
        self.stop_event.set()
        self.connect_button.setEnabled(False)
        self._say("disconnecting: fitting every flight…", MUTED_TEXT)

    def stop_and_join(self, timeout: float = JOIN_S) -> None:
        """Abandon the session (no final fit) and wait for its thread (closing the window)."""
        if self.thread is not None:
            self.session.abandon()
            self.stop_event.set()
            self.thread.join(timeout)
        self.timer.stop()

    # ------------------------------------------------------------------ the timer (GUI thread)

    def _poll(self) -> None:
        snap = self.session.snapshot(STRIP_S)
        t, w = snap["t"], snap["w"]
        for k in range(3):
            self.curves[k].setData(t, w[:, k])
        events = snap["events"]
        if snap["result"] is not None and (snap["result"] is not self.result or len(events) != self.shown_events):
            self.result = snap["result"]
            self.table.set_rows(flight_rows(self.result))
            self._show_ratios()
        if len(events) != self.shown_events:
            new = events[self.shown_events:]
            self.shown_events = len(events)
            # the newest flight is replayed (once the fit holds it); a report that refines an
            # older flight's edges does not take the window back to it
            newest = max(new, key=lambda e: e.get("number", 0))
            if newest.get("number", 0) >= max(e.get("number", 0) for e in events):
                self._replay_event(newest)
            for event in new:
                self.flight_landed.emit(event)
        self._mark_flights(snap)
        self._status(snap)
        if not self.connected:
            self._finished()

    def _finished(self) -> None:
        self.timer.stop()
        self.thread = None
        self.connect_button.setText("Connect")
        self.connect_button.setEnabled(True)
        self.url_edit.setEnabled(True)
        from ...throws.live.fitter import last_reports

        samples = self.session.stream.samples if self.session is not None else 0
        kept = len(last_reports(self.session.events)) if self.session is not None else 0
        event = (self.session.last_event or {}) if self.session is not None else {}
        state = self.session.state if self.session is not None else "ended"
        why = {"failed": f"failed ({event.get('error', '')})", "stopped": f"stopped ({event.get('reason', '')})"}
        text = f"{why.get(state, 'disconnected')}: {samples} samples, {kept} flights kept"
        self._say(text, ERROR_TEXT if state == "failed" else MUTED_TEXT)
        self.window_.statusBar().showMessage(f"phone: {text}")  # the thread's state, not the last poll's
        self.disconnected.emit()

    def _status(self, snap) -> None:
        from ...throws.live.fitter import last_reports

        event = snap["last_event"] or {}
        state = STATES.get(snap["state"], snap["state"])
        if snap["state"] == "reconnecting":
            state += f" ({event.get('error', '')})"
        if snap["state"] == "connected" and event.get("title"):
            state += f" to {event['title']}"
        parts = [f"phone: {state}", f"{snap['rate_hz']:.0f} Hz"]
        flights = last_reports(snap["events"])
        in_air = snap["in_air"]
        if in_air is not None:
            parts.append(f"in the air since {in_air['start']:.2f} s: flip predicted "
                         + _fmt(in_air["flip_time_predicted"]) + " after the release")
        elif flights:
            last = flights[-1]
            parts.append(f"{len(flights)} flight{'' if len(flights) == 1 else 's'} landed")
            parts.append("last throw: flip predicted " + _fmt(last["flip_time_predicted"])
                         + ", measured " + _fmt(last["flip_time_measured"]))
        text = " · ".join(parts)
        self._say(text, ERROR_TEXT if snap["state"] == "reconnecting" else MUTED_TEXT)
        self.window_.statusBar().showMessage(text)

    def _show_ratios(self) -> None:
        r = self.result
        ratios = ", ".join(f"{m:.4f} ± {s:.1g}" for m, s in zip(r.moments, r.moments_std))
        # the last fit's own count: the flight that just landed joins it at the next fit
        self.ratios_label.setText(f"fitted so far: ratios {ratios}   {r.drag_model} drag   "
                                  f"the last fit used {len(r.fitted)} of the {len(r.flights)} flights it had")

    def _mark_flights(self, snap) -> None:
        """Shade the flights of the current segment on the strip (each as last reported)."""
        from ...throws.live.fitter import last_reports

        for region in self.flight_regions:
            self.strip.removeItem(region)
        self.flight_regions = []
        if not len(snap["t"]):
            return
        lo = snap["t"][0]
        for e in last_reports(snap["events"]):
            if e["segment"] == snap["segment"] and e["end"] >= lo:
                region = pg.LinearRegionItem((e["start"], e["end"]), movable=False,
                                             brush=pg.mkBrush(*_shade(), 28 if e["excluded"] else 50))
                self.strip.addItem(region, ignoreBounds=True)
                self.flight_regions.append(region)

    def _say(self, text: str, color: str) -> None:
        self.state_label.setText(text)
        self.state_label.setStyleSheet(f"color: {color}")

    # ------------------------------------------------------------------ flights

    def _use_changed(self, _row, _used) -> None:
        if self.session is not None:
            self.session.choose(*self.table.choices())
            if not self.connected and self.session.fitter is not None:  # nothing polls now: fit here
                self.session.fitter.choose(*self.table.choices())
                self.result = None
                self._poll()

    def _replay_event(self, event: dict) -> None:
        """Select the flight of ``event`` in the table; the main window replays it."""
        if self.result is None:
            return
        for index, f in enumerate(self.result.flights):
            if f.rec_index == event["segment"] and f.start < event["end"] and event["start"] < f.end:
                row = next((i for i, r in enumerate(self.table.rows) if r.index == index), None)
                if row is not None and self.table.selected_index() != index:
                    self.table.selectRow(row)  # the table's flight_selected replays it
                else:
                    self.replay(index)
                return

    def replay(self, index: int) -> None:
        """The main window runs flight ``index`` of the last fit with the body fitted so far."""
        window = self.window_
        if self.result is None or not hasattr(window, "replay_flight"):
            return
        try:
            scenario = flight_scenario(self.result, index)
        except ParameterError as err:  # ratios no body has: the window keeps its run
            self._say(f"not replayed: {err}", ERROR_TEXT)
            return
        window.replay_flight(scenario)  # on past the flight's second, until it has shown its flips


    def replay_in_3d(self, index: int):
        """A flight's "Replay in 3D": the replay window on it, the body fitted so far as its model."""
        if self.result is None or self.session is None:
            return None
        f = self.result.flights[index]
        return open_replay(self.session.recordings()[f.rec_index], self.result, index)


def _run_quietly(session: LiveSession, should_stop) -> None:
    """The session's thread: an error nothing foresaw ends it with the state ``failed`` (the
    dock shows it) instead of a traceback on stderr."""
    try:
        session.run(should_stop)
    except Exception:  # noqa: BLE001 - the session recorded it as its last event
        pass


def _fmt(x) -> str:
    return "–" if x is None else f"{x:.3f} s"


def open_phone(window, url: str | None = None) -> PhoneDock:
    """Show the window's Phone dock (made at the first call) and connect to ``url`` if given."""
    dock = getattr(window, "phone_dock", None)
    tabs = getattr(window, "side_tabs", None)  # the main window's Plots tab
    if dock is None:
        dock = PhoneDock(window)
        if tabs is not None:  # a tab beside the plots: under them it left them their titles only
            dock.setFeatures(QDockWidget.NoDockWidgetFeatures)
            dock.setTitleBarWidget(QWidget())
            dock.split.setOrientation(Qt.Vertical)  # the strip over the table, in the tab's height
            for label in (dock.state_label, dock.ratios_label):  # a long line wraps, never widens the window
                label.setWordWrap(True)
                label.setMinimumWidth(1)
            tabs.addTab(dock, "Phone")
            splitter = getattr(window, "splitter", None)  # the scene | tabs split: half the width each
            if splitter is not None:
                total = sum(splitter.sizes())
                splitter.setSizes([total - total // 2, total // 2])
        else:
            window.addDockWidget(Qt.BottomDockWidgetArea, dock)
        window.phone_dock = dock
        window.installEventFilter(dock)
    if tabs is not None:
        tabs.setCurrentWidget(dock)
    dock.show()
    dock.raise_()
    if url:
        dock.connect_phone(url)
    else:
        dock.url_edit.setFocus()
    return dock


def _shade() -> tuple:
    """RGB 0-255 of the flights' shaded spans: the text's colour, faint (light on dark, dark on light)."""
    return tuple(round(255 * c) for c in rgb01(current().text))
