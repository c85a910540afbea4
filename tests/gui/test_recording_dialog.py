"""File > Import recording: a fit in the background with progress and cancel, the flights
table, excluding a flight and fitting again, the chosen flight replayed in the main window."""

import shutil
import threading

import numpy as np
import pytest
from PyQt5.QtCore import Qt

from tumble.scenario import load
from tumble.throws.benches import synthetic as syn
from conftest import WAIT_MS

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
    with qtbot.waitSignal(dialog.flight_shown, timeout=WAIT_MS):
        dialog.table.selectRow(2)
    sc = window.panel.scenario
    assert sc.body.shape == "custom"
    np.testing.assert_allclose(sc.angular_velocity, result.flights[2].omega0)
    # the window runs on past the flight until the body has shown its flips; the file keeps the flight's length
    from tumble.gui.windows.main_window import replay_length

    assert sc.solver.duration > result.flights[2].duration
    assert sc.solver.duration == replay_length(sc.replace(solver=sc.solver.__class__(
        sc.solver.integrator, sc.solver.dt, result.flights[2].duration)))
    overlay = [item for item in window.plots.w_plot.items if item in dialog.overlay_items]
    assert len(overlay) == 3 and len(overlay[0].data) == result.flights[2].used.sum()
    # save as scenario writes the FIT.toml of that flight
    path = dialog.save_scenario(tmp_path / "fit.toml")
    assert path is not None
    saved = load(str(path))
    np.testing.assert_allclose(saved.angular_velocity, result.flights[2].omega0)
    assert abs(saved.solver.duration - result.flights[2].duration) < 1e-12
    # untick a flight and fit again: it is left out, and listed as left out
    dialog.table.item(1, 0).setCheckState(Qt.Unchecked)
    with qtbot.waitSignal(dialog.fit_finished, timeout=FIT_MS) as refitted:
        dialog.start_fit()
    assert len(refitted.args[0].fitted) == len(throws) - 1 and len(refitted.args[0].flights) == len(throws)
    assert dialog.table.rowCount() == len(throws)
    assert dialog.table.item(1, 8).text() == "excluded by the user"
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


def stuck_reader(paths):
    """A reader that never finishes on its own (run in the reading child): only Cancel ends it."""
    import time

    time.sleep(3600)


def test_cancel_stops_a_read_that_would_never_end(open_window, qtbot, recording):
    folder, _ = recording
    window = open_window("t-handle", paused=True)
    dialog = _dialog(window, qtbot)
    dialog.reader = stuck_reader
    with qtbot.waitSignal(dialog.fit_cancelled, timeout=FIT_MS):
        dialog.open_paths([folder])
        assert dialog.running and dialog.status.text() == "reading the recording"
        dialog.cancel_fit()
    assert not dialog.running and dialog.result is None
    assert "cancelled" in dialog.status.text() and dialog.fit_button.isEnabled()
    dialog.close()


def test_opening_during_a_fit_replaces_it_one_job_at_a_time(open_window, qtbot, recording, tmp_path):
    folder, throws = recording
    window = open_window("t-handle", paused=True)
    dialog = _dialog(window, qtbot)
    dialog.reader = stuck_reader
    dialog.open_paths([tmp_path / "first.csv"])
    first = dialog.job
    dialog.reader = type(dialog).reader
    with qtbot.waitSignal(dialog.fit_finished, timeout=FIT_MS) as fitted:
        dialog.open_paths([folder])  # the stuck read is cancelled, then this one runs
        assert dialog.job is first and first.cancel.is_set()
        assert sum(t.name == "tumble-fit" for t in threading.enumerate()) == 1
    assert not first.thread.is_alive()
    assert dialog.paths == [str(folder)] and dialog.path_label.text() == folder.name
    assert len(fitted.args[0].flights) == len(throws)
    # File > Import recording again raises the same dialog: never two jobs for one window
    assert window.import_recording_dialog() is dialog
    dialog.close()


def test_a_bad_file_after_a_fit_clears_it_and_its_error_wraps(open_window, qtbot, recording, tmp_path):
    folder, _ = recording
    window = open_window("t-handle", paused=True)
    dialog = _dialog(window, qtbot)
    with qtbot.waitSignal(dialog.fit_finished, timeout=FIT_MS):
        dialog.open_paths([folder])
    assert dialog.table.rowCount() and dialog.ratios_label.text() and dialog.overlay_items
    bad = tmp_path / ("a recording with a long name that makes the message long " * 3 + ".csv")
    bad.write_text("a,b,c,d\n1,2,3,4\n")
    with qtbot.waitSignal(dialog.fit_failed, timeout=FIT_MS) as failed:
        dialog.open_paths([bad])
    # nothing of the last recording is shown as if it were the bad file's
    assert dialog.table.rowCount() == 0 and dialog.ratios_label.text() == ""
    assert all(len(c.getData()[0] or ()) == 0 for c in dialog.fit_curves)
    assert all(len(p.data) == 0 for p in dialog.points) and not dialog.plot.flip_lines
    assert not dialog.save_button.isEnabled() and not dialog.overlay_items
    # the red line wraps inside the dialog
    message = failed.args[0]
    assert dialog.status.text() == message
    assert dialog.status.fontMetrics().horizontalAdvance(message) > dialog.width()
    assert dialog.status.wordWrap()
    status = dialog.status
    assert status.heightForWidth(status.width()) > 1.5 * status.fontMetrics().height()  # more than one line
    qtbot.waitUntil(lambda: status.height() >= status.heightForWidth(status.width()))
    assert dialog.status.geometry().right() <= dialog.rect().right()
    dialog.close()


def test_long_recording_names_leave_the_flip_columns_in_view(open_window, qtbot, recording, tmp_path):
    folder, throws = recording
    long_folder = tmp_path / ("Gyroscope rotation rate 2026-11-27 09-41-07 phyphox export " * 2).strip()
    shutil.copytree(folder, long_folder)
    window = open_window("t-handle", paused=True)
    dialog = _dialog(window, qtbot)
    with qtbot.waitSignal(dialog.fit_finished, timeout=FIT_MS):
        dialog.open_paths([long_folder])
    table = dialog.table
    header = table.horizontalHeader()
    flip_fitted = 7
    assert header.sectionViewportPosition(flip_fitted) + header.sectionSize(flip_fitted) <= table.viewport().width()
    assert table.item(0, 1).toolTip() == str(long_folder)
    dialog.close()


def test_the_time_axis_reads_seconds_without_a_scale_factor(open_window, qtbot, recording):
    folder, _ = recording
    window = open_window("t-handle", paused=True)
    dialog = _dialog(window, qtbot)
    with qtbot.waitSignal(dialog.fit_finished, timeout=FIT_MS):
        dialog.open_paths([folder])
    dialog.fit_curves[0].setData([0.0, 0.5], [0.0, 1.0])  # a sub-second range: pyqtgraph's "(x0.001)"
    for side in ("bottom", "left"):
        axis = dialog.plot.getAxis(side)
        qtbot.waitUntil(lambda a=axis: "(x" not in a.labelString())
        assert axis.autoSIPrefixScale == 1.0
    assert "t − start (s)" in dialog.plot.getAxis("bottom").labelString()
    dialog.close()


def test_saving_into_an_unwritable_folder_is_one_line_naming_the_path(open_window, qtbot, recording, tmp_path,
                                                                       monkeypatch):
    from tumble.gui.recordings import dialog as recording_dialog

    folder, _ = recording
    window = open_window("t-handle", paused=True)
    dialog = _dialog(window, qtbot)
    with qtbot.waitSignal(dialog.fit_finished, timeout=FIT_MS):
        dialog.open_paths([folder])
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    target = not_a_folder / "fit.toml"
    monkeypatch.setattr(recording_dialog, "save_path", lambda *_a, **_k: (str(target), ""))
    dialog.save_button.click()  # an exception would escape the slot (pytest-qt fails the test)
    text = dialog.status.text()
    assert text == f"not saved: {target}: Not a directory" and not target.exists()
    dialog.close()
