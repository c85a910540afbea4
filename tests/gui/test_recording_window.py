"""Recordings reach the window: ``tumble gui RECORDING``, a drop, the picker of files, zips and
phyphox folders that starts where the last one was chosen; the import dialog follows the window
the user sees (View > Poinsot) and closes with it."""

import shutil
import zipfile

import numpy as np
import pytest
from conftest import WAIT_MS, tumble
from PyQt5 import sip
from PyQt5.QtCore import QMimeData, QPoint, Qt, QUrl
from PyQt5.QtGui import QDragEnterEvent, QDropEvent
from PyQt5.QtWidgets import QApplication

from tumble.gui.dialogs.file_dialogs import RecordingPicker
from tumble.gui.recordings.opening import is_recording, open_recordings
from tumble.throws.benches import synthetic as syn

#: a fit of a few flights takes about a second here; the machine may be busy
FIT_MS = 120000


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    """A phyphox folder of two throws."""
    truth = syn.Truth()
    rng = np.random.default_rng(7)
    rates = [syn.spin_near(truth, 1, 6.0, 16.0, rng), syn.spin_near(truth, 1, 10.0, 20.0, rng)]
    t, w, _ = syn.make_recording(truth, rates, rng, flight_s=0.9)
    return syn.write_phyphox(tmp_path_factory.mktemp("rec") / "session", t, w)


def test_what_counts_as_a_recording(recording, tmp_path):
    csv = tmp_path / "Gyroscope rotation rate 2026-11-27.csv"
    csv.write_text("t,wx,wy,wz\n")
    toml = tmp_path / "scene.toml"
    toml.write_text("")
    assert is_recording(recording) and is_recording(csv)
    assert not is_recording(toml) and not is_recording("t-handle") and not is_recording(tmp_path / "missing.csv")


def test_tumble_gui_with_a_recording_opens_the_import_dialog_on_it(monkeypatch, recording):
    from tumble.cli import core as cli
    from tumble.gui import launch

    calls = []
    monkeypatch.setattr(launch, "run_gui_on_recording", lambda paths, **options: calls.append(paths) or 0)
    assert cli.main(["gui", str(recording), "--quit-after", "1"]) == 0
    assert calls == [[str(recording)]]


def test_the_real_entry_point_runs_with_a_recording(recording, tmp_path):
    """``tumble gui "Gyroscope rotation rate ....csv"`` once said the file is not valid TOML."""
    csv = tmp_path / "Gyroscope rotation rate 2026-11-27 09-41-07.csv"
    shutil.copy(recording / "Raw Data.csv", csv)
    done = tumble("gui", csv, "--paused", "--quit-after", "1", timeout=300)
    assert done.returncode == 0, done.stderr
    assert "TOML" not in done.stderr


def test_the_dialog_opens_over_the_window_the_recording_was_given_to(open_window, qtbot, recording):
    window = open_window("t-handle", paused=True)
    dialog = open_recordings(window, [recording, f"{recording}/"])  # one recording given twice counts once
    assert dialog.window_ is window and dialog.isVisible() and dialog.paths == [str(recording)]
    assert open_recordings(window, [recording]) is dialog  # the same dialog: one job for the window
    with qtbot.waitSignal(dialog.fit_finished, timeout=FIT_MS):
        pass
    dialog.close()


def test_a_recording_dropped_on_the_window_opens_the_dialog(open_window, qtbot, recording, tmp_path):
    window = open_window("t-handle", paused=True)
    toml = tmp_path / "scene.toml"
    toml.write_text("")

    def drop(path):
        """A drag of ``path`` entering the window, then dropped if it was taken (as Qt does)."""
        mime = QMimeData()
        mime.setUrls([QUrl.fromLocalFile(str(path))])
        enter = QDragEnterEvent(QPoint(50, 50), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
        QApplication.sendEvent(window, enter)
        if not enter.isAccepted():
            return False
        dropped = QDropEvent(QPoint(50, 50), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
        QApplication.sendEvent(window, dropped)
        return dropped.isAccepted()

    assert window.acceptDrops()
    assert not drop(toml) and getattr(window, "recording_dialog", None) is None  # a scenario is not taken
    assert drop(recording)
    dialog = window.recording_dialog
    assert dialog.isVisible() and dialog.paths == [str(recording)]
    with qtbot.waitSignal(dialog.fit_finished, timeout=FIT_MS):
        pass
    dialog.close()


def test_the_picker_takes_files_zips_and_phyphox_folders_and_starts_where_it_ended(qtbot, recording, tmp_path):
    home = tmp_path / "throws"
    shutil.copytree(recording, home / "session")
    (home / "plain").mkdir()
    with zipfile.ZipFile(home / "session.zip", "w") as zf:
        zf.write(recording / "Raw Data.csv", "session/Raw Data.csv")

    def pick(start, *names):
        picker = RecordingPicker(None, str(start))
        qtbot.addWidget(picker)
        if names:
            picker.selectFile(" ".join(f'"{n}"' for n in names) if len(names) > 1 else names[0])
        picker.accept()
        return picker

    assert pick(home, "session").chosen == [str(home / "session")]  # a phyphox folder is chosen, not entered
    assert pick(home, "session.zip").chosen == [str(home / "session.zip")]
    assert pick(home / "session").chosen == [str(home / "session")]  # inside it, nothing selected
    assert pick(home / "session", "Raw Data.csv").chosen == [str(home / "session")]  # its data: the folder
    plain = pick(home, "plain")
    assert plain.chosen == [] and plain.result() == 0 and plain.directory().absolutePath() == str(home / "plain")
    assert pick(home, "session", "session.zip").chosen == [str(home / "session"), str(home / "session.zip")]
    # the next picker starts in the folder of the last recording chosen
    later = RecordingPicker()
    qtbot.addWidget(later)
    assert later.directory().absolutePath() == str(home)


def test_the_dialog_follows_view_poinsot_and_closes_with_its_window(open_window, qtbot, recording):
    window = open_window("t-handle", paused=True)
    dialog = window.import_recording_dialog()
    with qtbot.waitSignal(dialog.flight_shown, timeout=FIT_MS):
        dialog.open_paths([recording])
    index = dialog.selected_flight()
    poinsot = window.switch_view("poinsot")
    try:
        qtbot.waitUntil(lambda: not window.isVisible())
        assert dialog.window_ is poinsot and dialog.parent() is poinsot and dialog.isVisible()
        assert poinsot.recording_dialog is dialog
        # the flight replays in the window the user sees, its measured points on that window's plot
        np.testing.assert_allclose(poinsot.panel.scenario.angular_velocity, dialog.result.flights[index].omega0)
        assert dialog.overlay_items and all(item in poinsot.plots.w_plot.items for item in dialog.overlay_items)
        with qtbot.waitSignal(dialog.destroyed, timeout=WAIT_MS):
            poinsot.close()
    finally:
        if not sip.isdeleted(poinsot):
            poinsot.close()
