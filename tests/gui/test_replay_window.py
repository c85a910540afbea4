"""The replay window: a recorded flight played in 3D beside its measured and modelled omega, posed
by the view the clip uses; opened from each flight's "Replay in 3D" button in the import dialog."""

from __future__ import annotations

import numpy as np
import pytest
from replay_throws import write_throws

from tumble.physics import quaternion as quat
from tumble.throws.fitting.replay import listed_flights, replay_listed
from tumble.throws.recordings.reader import read_recording
from conftest import WAIT_MS

#: a fit of a few flights takes seconds here; the machine may be busy
FIT_MS = 120000
#: the first frame of a window, on a busy machine (s)
FIRST_FRAME_MS = 30000


@pytest.fixture(scope="module")
def flight(tmp_path_factory):
    """(recording folder, its recording, the fit tumble fit makes, flight 2 replayed with it)."""
    folder = tmp_path_factory.mktemp("replay-window") / "throws"
    write_throws(folder)
    rec = read_recording(folder)
    result = listed_flights([rec])
    return folder, rec, result, replay_listed([rec], result, 2, result)


def _close(window, qtbot):
    window.close()
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=WAIT_MS)


def test_the_window_plays_the_flight_with_its_model_and_draws_what_the_view_poses(flight, qtbot):
    from tumble.gui.windows.replay_window import ReplayWindow

    *_, replay = flight
    window = ReplayWindow(replay, speed=0.5)
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.first_frame_drawn, timeout=FIRST_FRAME_MS):
        window.show()
    qtbot.waitUntil(lambda: window.time > 0.1, timeout=FIRST_FRAME_MS)
    # paused at a time: the body and the ghost stand where the measured and modelled runs put them
    window.toggle_play()
    window.seek(0.4)
    body = window.view.scenes["body"].actors["body"].user_matrix[:3, :3]
    q_measured, _ = replay.measured_at([replay.start + 0.4])
    assert np.allclose(body, quat.to_matrix(q_measured[0]), atol=2e-3)  # poses are linear between 2 ms samples
    assert window.view.ghost_visible
    ghost = window.view.ghosts[0]
    assert ghost.visible
    # the plots hold the measured and the model's omega up to the played time
    curves = window.plots.row_curves[0]
    assert len(curves) == 6
    x, y = curves[1].getData()
    assert x[-1] == pytest.approx(0.4, abs=2e-3) and np.allclose(y[x <= 0.4][-1], np.interp(0.4, x, y), atol=0.5)
    xm, ym = curves[4].getData()
    assert len(xm) == len(x) and np.max(np.abs(ym - y)) < 0.5  # the fitted model stays with the measured ω
    # the scene is drawn: pixels at its middle are not the background
    image = window.plotter.screenshot(return_img=True)
    h, w = image.shape[:2]
    assert image[h // 4: 3 * h // 4, w // 4: 3 * w // 4].std() > 5
    # what --quit-after's screenshot shows: the played time a playback that never stalled reaches
    # (laps of the loop included: the flight, then a pause at the catch), however busy the machine
    from tumble.gui.windows.replay_window import LOOP_PAUSE_S

    lap = replay.duration / window.speed + LOOP_PAUSE_S
    assert window.played_after(0.5) == pytest.approx(0.5 * window.speed)
    assert window.played_after(lap + 0.5) == pytest.approx(0.5 * window.speed)
    assert window.played_after(lap - LOOP_PAUSE_S / 2) == pytest.approx(replay.duration)
    window.loop.setChecked(False)
    assert window.played_after(3 * lap) == pytest.approx(replay.duration)
    window.hold_at(window.played_after(0.5))
    assert not window.playing and window.time == pytest.approx(0.5 * window.speed)
    _close(window, qtbot)


def test_each_flight_of_the_import_dialog_has_a_replay_in_3d_button(flight, open_window, qtbot):
    from PyQt5.QtWidgets import QApplication, QPushButton

    from tumble.gui.recordings.flights_table import REPLAY_COLUMN, REPLAY_TEXT
    from tumble.gui.windows.replay_window import ReplayWindow

    folder, _, result, _ = flight
    window = open_window("t-handle", paused=True)
    dialog = window.import_recording_dialog()
    qtbot.waitExposed(dialog)
    with qtbot.waitSignal(dialog.fit_finished, timeout=FIT_MS):
        dialog.open_paths([str(folder)])
    table = dialog.table
    buttons = [table.cellWidget(r, REPLAY_COLUMN) for r in range(table.rowCount())]
    assert len(buttons) == len(result.flights) and all(isinstance(b, QPushButton) and b.text() == REPLAY_TEXT
                                                       for b in buttons)
    buttons[2].click()
    qtbot.waitUntil(lambda: any(isinstance(w, ReplayWindow) and w.isVisible() for w in QApplication.topLevelWidgets()),
                    timeout=FIRST_FRAME_MS)
    replayed = next(w for w in QApplication.topLevelWidgets() if isinstance(w, ReplayWindow))
    assert replayed.replay.number == 3
    assert replayed.replay.start == pytest.approx(dialog.result.flights[2].start)
    assert replayed.replay.model is not None
    _close(replayed, qtbot)
    dialog.close()


def test_each_flight_of_the_live_strip_has_a_replay_in_3d_button(open_window, qtbot):
    from PyQt5.QtWidgets import QApplication

    from tumble.gui.recordings.flights_table import REPLAY_COLUMN
    from tumble.gui.windows.replay_window import ReplayWindow
    from tumble.throws.benches import synthetic as syn
    from tumble.throws.live.phyphox_server import PhyphoxReplay

    rng = np.random.default_rng(21)
    truth = syn.Truth()
    t, w, throws = syn.make_recording(truth, syn.throw_mix(truth, 3, rng, near_share=1.0), rng, (0.6, 1.0))
    phone = PhyphoxReplay([(t, w)], speed=4.0).start()
    try:
        window = open_window("t-handle", paused=True)
        dock = window.connect_phone(phone.url)
        qtbot.waitUntil(lambda: dock.table.rowCount() == len(throws), timeout=FIT_MS)
        with qtbot.waitSignal(dock.disconnected, timeout=FIT_MS):
            dock.toggle()
        dock.table.cellWidget(1, REPLAY_COLUMN).click()
        qtbot.waitUntil(lambda: any(isinstance(x, ReplayWindow) and x.isVisible()
                                    for x in QApplication.topLevelWidgets()), timeout=FIRST_FRAME_MS)
        replayed = next(x for x in QApplication.topLevelWidgets() if isinstance(x, ReplayWindow))
        try:
            flight = dock.result.flights[dock.table.rows[1].index]
            assert replayed.replay.start == pytest.approx(flight.start)
            assert replayed.replay.t[-1] == pytest.approx(flight.end)
            # the live fit's body is the model; the replayed rates are a run of the phone's samples
            # (its stream carries 8 significant digits, and its own clock)
            assert replayed.replay.model is not None
            k = int(np.argmin(np.linalg.norm(w - replayed.replay.w[0], axis=1)))
            assert np.allclose(replayed.replay.w[:20], w[k:k + 20], rtol=1e-7, atol=1e-6)
        finally:
            _close(replayed, qtbot)
    finally:
        phone.stop()


def test_tumble_replay_opens_the_window_and_quits_itself_with_a_screenshot(flight, tmp_path):
    from PyQt5.QtGui import QImage

    from conftest import tumble

    folder, *_ = flight
    shot = tmp_path / "replay.png"
    # the image shows the flight at 0.5 s x 0.25 (the default speed) = 0.125 s of played time on any
    # machine (the played time at a wall-clock moment depended on the frames a busy machine drew)
    res = tumble("replay", folder, "--flight", "2", "--screenshot", shot, "--quit-after", "0.5", timeout=300)
    assert res.returncode == 0, res.stderr
    assert "flight 2:" in res.stdout and f"wrote {shot}" in res.stdout
    image = QImage(str(shot))
    w, h = image.width(), image.height()
    assert 0 < w <= 1280 and 0 < h <= 720  # 1280x720 at most, within the screen (the tests' is 800x600)
    # the scene (the left half, below its colour key) shows the phone and its arrows: bright pixels,
    # where the background and the floor grid are dark (#16191e, #4a5361)
    from PyQt5.QtGui import QColor

    points = [(x, y) for x in range(0, w // 2, 3) for y in range(h // 4, 3 * h // 4, 3)]
    bright = sum(max(QColor(image.pixel(x, y)).getRgb()[:3]) > 120 for x, y in points)
    assert bright > 0.02 * len(points)
