"""File > Import recording: a fit in the background with progress and cancel, the flights
table, excluding a flight and fitting again, the chosen flight replayed in the main window."""

import numpy as np
import pytest
from PyQt5.QtCore import Qt

from tumble.scenario import load
from tumble.throws import synthetic as syn

#: a fit of a few flights takes about a second here; the machine may be busy
FIT_MS = 120000


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    truth = syn.Truth()
    rng = np.random.default_rng(4)
    rates = [syn.spin_near(truth, 1, 6.0, 16.0, rng), syn.spin_near(truth, 2, 20.0, 18.0, rng),
             syn.spin_near(truth, 1, 10.0, 20.0, rng), syn.spin_near(truth, 1, 4.0, 17.0, rng)]
    t, w, throws = syn.make_recording(truth, rates, rng, flight_s=0.9)
    return syn.write_phyphox(tmp_path_factory.mktemp("rec") / "session", t, w), throws


def _dialog(window, qtbot):
    dialog = window.import_recording_dialog()
    qtbot.waitExposed(dialog)
    return dialog


def test_import_fits_lists_flights_and_replays_one(open_window, qtbot, recording, tmp_path):
    folder, throws = recording
    window = open_window("t-handle", paused=True)
    action = next(a for a in window.file_menu.actions() if a.text() == "Import recording…")
    assert action is window.import_action
    dialog = _dialog(window, qtbot)
    with qtbot.waitSignal(dialog.fit_finished, timeout=FIT_MS) as fitted:
        dialog.open_paths([folder])
    result = fitted.args[0]
    assert dialog.table.rowCount() == len(throws) == len(result.flights)
    assert "ratios 0.3000" in dialog.ratios_label.text() and "±" in dialog.ratios_label.text()
    assert dialog.progress.value() == 1000
    # flip times: measured and fitted shown for the throws near the intermediate axis only
    flips = [dialog.table.item(r, 6).text() for r in range(4)]
    assert flips[1] == "–" and all(f != "–" for k, f in enumerate(flips) if k != 1)
    # the first flight is replayed: its scenario in the main window, the points on its ω plot
    with qtbot.waitSignal(dialog.flight_shown, timeout=5000):
        dialog.table.selectRow(2)
    sc = window.panel.scenario
    assert sc.body.shape == "custom"
    np.testing.assert_allclose(sc.angular_velocity, result.flights[2].omega0)
    assert abs(sc.solver.duration - result.flights[2].duration) < 1e-12
    overlay = [item for item in window.plots.w_plot.items if item in dialog._overlay]
    assert len(overlay) == 3 and len(overlay[0].data) == result.flights[2].used.sum()
    # save as scenario writes the FIT.toml of that flight
    path = dialog.save_scenario(tmp_path / "fit.toml")
    saved = load(str(path))
    np.testing.assert_allclose(saved.angular_velocity, result.flights[2].omega0)
    # untick a flight and fit again: it is left out, and listed as left out
    dialog.table.item(1, 0).setCheckState(Qt.Unchecked)
    with qtbot.waitSignal(dialog.fit_finished, timeout=FIT_MS) as refitted:
        dialog.start_fit()
    assert len(refitted.args[0].flights) == len(throws) - 1
    assert dialog.table.rowCount() == len(throws)
    assert dialog.table.item(1, 4).text() == "left out"
    assert dialog.table.item(1, 0).checkState() == Qt.Unchecked
    dialog.close()
    assert not [item for item in window.plots.w_plot.items if item in overlay]


def test_cancel_stops_the_fit_and_keeps_the_window(open_window, qtbot, recording):
    folder, _ = recording
    window = open_window("t-handle", paused=True)
    before = window.panel.scenario
    dialog = _dialog(window, qtbot)
    with qtbot.waitSignal(dialog.fit_cancelled, timeout=FIT_MS):
        dialog.open_paths([folder])
        assert dialog.running and dialog.cancel_button.isEnabled()
        dialog.cancel_fit()
    assert not dialog.running and dialog.result is None
    assert window.panel.scenario is before
    dialog.close()


def test_a_bad_recording_is_one_line_and_nothing_changes(open_window, qtbot, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b,c,d\n1,2,3,4\n")
    window = open_window("t-handle", paused=True)
    before = window.panel.scenario
    dialog = _dialog(window, qtbot)
    with qtbot.waitSignal(dialog.fit_failed, timeout=FIT_MS) as failed:
        dialog.open_paths([bad])
    message = failed.args[0]
    assert "\n" not in message and "name a time and three rates" in message
    assert dialog.status.text() == message
    assert dialog.table.rowCount() == 0 and window.panel.scenario is before
    dialog.close()
