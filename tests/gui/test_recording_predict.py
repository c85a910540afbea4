"""The import dialog's Predict tab runs tumble predict's code: the same flights and numbers from
the dialog's fit or a FIT.toml, on the dialog's recordings or held-out ones; bad windows are one
line; it shares the dialog's one job at a time."""

import numpy as np
import pytest

from tumble.scenario import load
from tumble.throws.benches import synthetic as syn
from tumble.throws.fitting.predict import predict_flights
from tumble.throws.recordings.reader import read_recording
from tumble.throws.fitting.report import flight_scenario

#: a fit of a few flights takes seconds here; the machine may be busy
FIT_MS = 120000


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    """A training session of three throws and a held-out one of two, same body."""
    root = tmp_path_factory.mktemp("rec")
    truth = syn.Truth()
    rng = np.random.default_rng(21)
    out = []
    for name, rates in (("train", [syn.spin_near(truth, 1, 6.0, 16.0, rng), syn.spin_near(truth, 1, 12.0, 20.0, rng),
                                   syn.spin_near(truth, 2, 20.0, 18.0, rng)]),
                        ("held-out", [syn.spin_near(truth, 1, 8.0, 18.0, rng), syn.spin_near(truth, 1, 5.0, 22.0, rng)])):
        t, w, _ = syn.make_recording(truth, rates, rng, flight_s=0.9)
        out.append(syn.write_phyphox(root / name, t, w))
    return out


def stuck_reader(paths):
    """A reader that never finishes on its own (run in the reading child): only Cancel ends it."""
    import time

    time.sleep(3600)


def _fitted_dialog(window, qtbot, folder):
    dialog = window.import_recording_dialog()
    qtbot.waitExposed(dialog)
    with qtbot.waitSignal(dialog.fit_finished, timeout=FIT_MS):
        dialog.open_paths([folder])
    return dialog


def test_predict_tab_gives_tumble_predicts_numbers(open_window, qtbot, sessions, tmp_path):
    train, held_out = sessions
    window = open_window("t-handle", paused=True)
    dialog = _fitted_dialog(window, qtbot, train)
    tab = dialog.predict_tab
    assert dialog.tabs.tabText(1) == "Predict"
    # the fit above on the recordings above
    with qtbot.waitSignal(tab.predicted, timeout=FIT_MS) as done:
        tab.start()
    expected = predict_flights(flight_scenario(dialog.result, None, 1.0, allow_unphysical=True), dialog.recordings,
                               "auto", 0.1, 2.0)
    assert done.args[0] == expected and tab.table.rowCount() == len(expected) == 3
    assert "median flip error" in tab.status.text()
    assert len(tab.plot.curves[0].getData()[0]) > 0 and tab.plot.flip_lines
    # a FIT.toml on held-out recordings, lead and horizon as set
    toml = dialog.save_scenario(tmp_path / "fit.toml")
    tab.use_file_body(toml)
    tab.use_other_recordings([held_out])
    tab.lead_box.setValue(0.15)
    tab.horizon_box.setValue(1.5)
    with qtbot.waitSignal(tab.predicted, timeout=FIT_MS) as done:
        tab.start()
    expected = predict_flights(load(str(toml)), [read_recording(held_out)], "auto", 0.15, 1.5)
    assert done.args[0] == expected and len(expected) == 2
    flips = [(f["flip_time_predicted"], f["flip_time_measured"]) for f in expected]
    assert all(p is not None and m is not None and abs(p - m) / m < 0.05 for p, m in flips)
    # windows as given, each one flight
    start = expected[0]["start"]
    tab.windows_edit.setText(f"{start:.3f}:{start + 0.1:.3f}")
    with qtbot.waitSignal(tab.predicted, timeout=FIT_MS) as done:
        tab.start()
    assert len(done.args[0]) == 1 and done.args[0][0]["end"] <= start + 0.1
    # a bad window is one line, and the last predictions stay
    tab.windows_edit.setText("1:abc")
    with qtbot.waitSignal(tab.failed, timeout=FIT_MS) as failed:
        tab.start()
    assert "\n" not in failed.args[0] and failed.args[0].startswith("--flights must") and "abc" in failed.args[0]
    assert tab.table.rowCount() == 1
    dialog.close()


def test_predicting_and_fitting_take_turns_and_cancel(open_window, qtbot, sessions):
    train, held_out = sessions
    window = open_window("t-handle", paused=True)
    dialog = _fitted_dialog(window, qtbot, train)
    tab = dialog.predict_tab
    dialog.reader = stuck_reader
    tab.use_other_recordings([held_out])
    tab.start()
    assert tab.running and not dialog.fit_button.isEnabled()
    dialog.start_fit()  # refused while the prediction runs: one job at a time
    assert not dialog.running
    with qtbot.waitSignal(tab.cancelled, timeout=FIT_MS):
        tab.cancel()
    assert not tab.running and dialog.fit_button.isEnabled()
    dialog.close()
