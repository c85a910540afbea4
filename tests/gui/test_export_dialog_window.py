"""The export dialog as a window uses it: its defaults, one dialog per window, closing it,
quitting during an export, and the folder offered afterwards (issue 10, 3.10, 3.11, 3.14)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from conftest import WAIT_MS
from PyQt5.QtCore import Qt
from PyQt5.QtWidgets import QPushButton

import tumble.gui.dialogs.export_dialog as export_dialog
from tumble.gui.dialogs.export_dialog import ExportDialog
from tumble.scenario import load

#: a child export starts Python, VTK and ffmpeg: give it time on a busy 2-core machine
EXPORT_TIMEOUT_MS = 90_000
#: closing aborts the child at once: SIGTERM, then SIGKILL after export_dialog.TERM_WAIT_MS
#: if it has not stopped; allow that wait and as much again for the kill and the clean-up
CLOSE_BOUND_S = 2 * export_dialog.TERM_WAIT_MS / 1000 + 1.0


def _dialogs(window) -> list:
    return [d for d in window.findChildren(ExportDialog) if d.isVisible()]


def _small(dialog, out, seconds=1.0, fps=5):
    dialog.out_edit.setText(str(out))
    dialog.size_combo.setCurrentText("Custom")
    dialog.width_spin.setValue(320)
    dialog.height_spin.setValue(240)
    dialog.fps_spin.setValue(fps)
    dialog.duration_spin.setValue(seconds)


@pytest.mark.parametrize("name, stem", [
    ("T-handle (edited)", "t-handle"), ("Boxes complex", "boxes-complex"), ("Asymmetric, stable", "asymmetric-stable"),
    ("T-handle (from the stability map)", "t-handle"), ("Box 1x4x9", "box-1x4x9"), ("(edited)", "tumble"),
    ("a/b\\c: d?", "a-b-c-d")])
def test_the_default_file_is_a_clean_name_from_the_scenario(qtbot, name, stem):
    dialog = ExportDialog(load("t-handle").replace(name=name))
    qtbot.addWidget(dialog)
    assert Path(dialog.out_edit.text()) == Path.home() / f"{stem}.mp4"


def test_before_starting_the_progress_counts_the_clip_s_frames(qtbot):
    dialog = ExportDialog(load("t-handle"))  # the defaults: 10 s at 30 fps
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.progress.text() == "0 / 300 frames"
    dialog.fps_spin.setValue(24)
    assert dialog.progress.text() == "0 / 240 frames"
    dialog.close()


def test_escape_and_the_close_button_close_the_dialog(qtbot):
    window_like = ExportDialog(load("t-handle"))
    qtbot.addWidget(window_like)
    window_like.show()
    qtbot.waitExposed(window_like)
    qtbot.keyClick(window_like, Qt.Key_Escape)
    assert not window_like.isVisible()
    window_like.show()
    close = next(b for b in window_like.findChildren(QPushButton) if b.text() == "Close")
    qtbot.mouseClick(close, Qt.LeftButton)
    assert not window_like.isVisible()


def test_ctrl_e_raises_the_open_dialog_instead_of_opening_another(open_window, qtbot):
    window = open_window("t-handle", paused=True)
    qtbot.keyClick(window, Qt.Key_E, Qt.ControlModifier)
    qtbot.waitUntil(lambda: len(_dialogs(window)) == 1, timeout=WAIT_MS)
    first = _dialogs(window)[0]
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=WAIT_MS)
    qtbot.keyClick(window, Qt.Key_E, Qt.ControlModifier)
    qtbot.wait(50)
    assert _dialogs(window) == [first]
    assert window.export_animation_dialog() is first
    qtbot.keyClick(first, Qt.Key_Escape)
    assert _dialogs(window) == []


def test_after_an_export_the_dialog_and_the_status_bar_open_the_folder(open_window, qtbot, tmp_path, monkeypatch):
    opened = []
    monkeypatch.setattr(export_dialog, "open_folder", opened.append)  # no file manager under test
    window = open_window("t-handle", paused=True)
    dialog = window.export_animation_dialog()
    assert not dialog.open_folder_button.isVisible()
    _small(dialog, tmp_path / "clip.gif")
    with qtbot.waitSignal(dialog.export_finished, timeout=EXPORT_TIMEOUT_MS):
        dialog.start_export()
    assert dialog.open_folder_button.isVisible()
    qtbot.mouseClick(dialog.open_folder_button, Qt.LeftButton)
    assert opened == [str(tmp_path.resolve())]
    offer = next(b for b in window.statusBar().findChildren(QPushButton) if b.text() == "Open folder")
    assert offer.isVisible()
    qtbot.mouseClick(offer, Qt.LeftButton)
    assert opened == [str(tmp_path.resolve())] * 2
    dialog.close()


def test_quitting_while_an_export_starts_cancels_it_at_once(open_window, qtbot, tmp_path):
    folder = tmp_path / "out"  # tmp_path also holds the private settings
    folder.mkdir()
    window = open_window("t-handle", paused=True)
    dialog = window.export_animation_dialog()
    _small(dialog, folder / "clip.mp4", seconds=5.0, fps=10)
    dialog.start_export()
    qtbot.waitUntil(lambda: dialog.process is not None and dialog.process.processId() > 0, timeout=WAIT_MS)
    started = time.monotonic()
    window.close()
    assert time.monotonic() - started < CLOSE_BOUND_S
    assert not dialog.running
    assert list(folder.iterdir()) == []


#: a stand-in for the export child that has begun its output and ignores SIGTERM: what a
#: child stuck in a long native call looks like to the window
STUBBORN_CHILD = """
import pathlib, signal, sys, tempfile, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
out = pathlib.Path(sys.argv[1])
tempfile.mkstemp(prefix=f".{out.name}.", suffix=out.suffix, dir=out.parent)
print('{"event": "progress", "done": 0, "total": 50}', flush=True)
time.sleep(60)
"""


def test_closing_kills_a_child_that_does_not_stop_and_removes_its_partial_file(qtbot, tmp_path, monkeypatch):
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / ".clip.mp4.older.mp4").write_bytes(b"not ours: there before the export")
    out = folder / "clip.mp4"
    monkeypatch.setattr(export_dialog.protocol, "command",
                        lambda *_a, **_k: [sys.executable, "-c", STUBBORN_CHILD, str(out)])
    dialog = ExportDialog(load("t-handle"), out=out)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.start_export()
    qtbot.waitUntil(lambda: len(list(folder.iterdir())) == 2 and dialog.progress.maximum() == 50, timeout=WAIT_MS)
    started = time.monotonic()
    qtbot.keyClick(dialog, Qt.Key_Escape)
    assert time.monotonic() - started < CLOSE_BOUND_S
    assert not dialog.isVisible() and not dialog.running
    assert [p.name for p in folder.iterdir()] == [".clip.mp4.older.mp4"]


def test_a_typed_file_name_selects_its_format(qtbot, tmp_path):
    dialog = ExportDialog(load("t-handle"), out=tmp_path / "clip.mp4")
    qtbot.addWidget(dialog)
    dialog.out_edit.setText(str(tmp_path / "clip.gif"))
    assert dialog.format_combo.currentData() == ".gif"
    assert "GIF" in dialog.preview.text()


#: a stand-in for an export child still starting (importing, simulating): it reads no
#: 'cancel' until its first frame, and takes its time to get there
SLOW_STARTING_CHILD = "import time; time.sleep(60)"


def test_cancel_while_the_export_starts_stops_it_without_waiting_for_a_frame(qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(export_dialog.protocol, "command",
                        lambda *_a, **_k: [sys.executable, "-c", SLOW_STARTING_CHILD])
    dialog = ExportDialog(load("t-handle"), out=tmp_path / "clip.mp4")
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.start_export()
    qtbot.waitUntil(lambda: dialog.process is not None and dialog.process.processId() > 0, timeout=WAIT_MS)
    with qtbot.waitSignal(dialog.export_cancelled, timeout=int(CLOSE_BOUND_S * 1000)):
        dialog.cancel_button.click()
    assert "nothing was written" in dialog.status.text()
    dialog.close()
