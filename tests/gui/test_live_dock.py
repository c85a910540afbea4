"""File > Connect to phone...: the Phone dock against the stand-in phone on 127.0.0.1: the
live strip, each flight in the flights table as it lands, the main window replaying it with
the body fitted so far, the status bar, unticking a flight, a disconnect that keeps
everything, the URL remembered; ``tumble gui --live URL`` in a child that quits itself."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import WAIT_MS, refused, tumble
from PyQt5.QtCore import Qt

from tumble.throws.benches import synthetic as syn
from tumble.throws.live.phyphox_server import PhyphoxReplay

#: the fits of a few flights take a second or two; the machine may be busy
FLIGHTS_MS = 120000
SPEED = 4.0


@pytest.fixture(scope="module")
def throws_session():
    rng = np.random.default_rng(21)
    truth = syn.Truth.rotated(2.0)
    t, w, throws = syn.make_recording(truth, syn.throw_mix(truth, 4, rng, near_share=1.0), rng, (0.6, 1.0))
    return t, w, throws


@pytest.fixture
def phone(throws_session):
    t, w, _ = throws_session
    replay = PhyphoxReplay([(t, w)], speed=SPEED).start()
    yield replay
    replay.stop()


def test_the_dock_follows_the_phone_and_replays_each_flight(open_window, qtbot, phone, throws_session):
    _, _, throws = throws_session
    window = open_window("t-handle", paused=True)
    assert window.phone_action in window.file_menu.actions()
    window.phone_action.trigger()
    dock = window.phone_dock
    assert dock.isVisible() and not dock.connected
    assert not dock.connect_phone("https://127.0.0.1:1")  # a bad URL: one line, nothing started
    assert "URL must" in dock.state_label.text() and dock.thread is None
    landed = []
    dock.flight_landed.connect(landed.append)
    assert dock.connect_phone(phone.url)
    qtbot.waitUntil(lambda: len(landed) >= len(throws), timeout=FLIGHTS_MS)
    # the live strip holds the measured rates of the current segment
    x, y = dock.curves[0].getData()
    assert len(x) > 100 and np.all(np.diff(x) > 0)
    # the flights table: one row per flight of the last fit
    qtbot.waitUntil(lambda: dock.table.rowCount() == len(throws), timeout=FLIGHTS_MS)
    assert "fitted so far: ratios" in dock.ratios_label.text()
    # the main window replays the last flight with the body fitted so far
    last = landed[-1]
    sc = window.panel.scenario
    assert sc.body.shape == "custom" and f"flight at {last['start']:.2f} s" in sc.name
    # it runs on past the flight's second until its body has shown its flips (not a second, then "end of run")
    from tumble.gui.windows.main_window import REPLAY_FLIPS, REPLAY_MAX_S, REPLAY_MIN_S
    from tumble.simulation.lookahead import flips_ahead

    assert sc.solver.duration >= max(last["end"] - last["start"], REPLAY_MIN_S) - 1e-9
    assert len(flips_ahead(sc, until=sc.solver.duration)) >= REPLAY_FLIPS or sc.solver.duration == REPLAY_MAX_S
    # the status bar: the connection, the sample rate, the last throw's predicted flip
    status = window.statusBar().currentMessage()
    assert status.startswith("phone: connected") and " Hz" in status and "flip predicted" in status
    # untick a flight: fitted again without it, listed as left out by the user
    dock.table.item(0, 0).setCheckState(Qt.Unchecked)
    qtbot.waitUntil(lambda: dock.result is not None and any(f.excluded for f in dock.result.flights),
                    timeout=FLIGHTS_MS)
    qtbot.waitUntil(lambda: any(not r.included for r in dock.table.rows), timeout=WAIT_MS)
    assert [r.note for r in dock.table.rows if not r.included] == ["excluded by the user"]
    # disconnect: everything received stays
    with qtbot.waitSignal(dock.disconnected, timeout=FLIGHTS_MS):
        dock.toggle()
    assert dock.connect_button.text() == "Connect" and "flights kept" in dock.state_label.text()
    assert dock.table.rowCount() == len(throws) and len(dock.curves[0].getData()[0]) > 100
    assert sum(len(r.t) for r in dock.session.recordings()) == dock.session.stream.samples > 0


def test_the_url_is_remembered(open_window, qtbot, phone):
    window = open_window("t-handle", paused=True, persist=True)
    dock = window.connect_phone(phone.url)
    dock.stop_and_join()
    window.close()
    again = open_window("t-handle", paused=True)
    again.phone_action.trigger()
    assert again.phone_dock.url_edit.text() == phone.url


def test_tumble_gui_live_takes_a_screenshot(tmp_path, phone):
    shot = tmp_path / "live.png"
    res = tumble("gui", "--live", phone.url, "--screenshot", shot, "--quit-after", "8", timeout=240)
    assert res.returncode == 0, res.stderr
    assert shot.stat().st_size > 10000


def test_tumble_gui_live_refuses_a_bad_url():
    refused(tumble("gui", "--live", "ftp://phone:8080", timeout=120), "URL must")
