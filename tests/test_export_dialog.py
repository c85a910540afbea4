"""The export dialog: preview, a background export with progress, cancel, and bad choices."""

from __future__ import annotations

import os
import tempfile
import threading

import pytest

# Qt warns (which fails a test) without XDG_RUNTIME_DIR, as in containers and CI; set it
# before any QApplication exists (tests/gui/conftest.py does the same for its tests)
if not os.environ.get("XDG_RUNTIME_DIR"):
    _runtime = tempfile.mkdtemp(prefix="tumble-xdg-runtime-")
    os.chmod(_runtime, 0o700)
    os.environ["XDG_RUNTIME_DIR"] = _runtime

from PyQt5.QtCore import QTimer  # noqa: E402
from PyQt5.QtWidgets import QLabel, QStatusBar  # noqa: E402

from tumble.gui.dialogs.export_dialog import ExportDialog, offer_open_folder  # noqa: E402
from tumble.scenario import load  # noqa: E402
from conftest import WAIT_MS  # noqa: E402

#: a child export starts Python, VTK and ffmpeg: give it time on a busy 2-core machine
EXPORT_TIMEOUT_MS = 90_000


@pytest.fixture
def dialog(qtbot, tmp_path):
    threads_before = set(threading.enumerate())
    d = ExportDialog(load("t-handle"), out=tmp_path / "clip.mp4")
    qtbot.addWidget(d)
    d.size_combo.setCurrentText("Custom")
    d.width_spin.setValue(320)
    d.height_spin.setValue(240)
    d.fps_spin.setValue(10)
    d.show()
    yield d
    was_running = d.running
    d.close()
    assert not was_running, "the test left an export running"
    assert not d.running
    assert set(threading.enumerate()) <= threads_before, "the dialog starts no threads of its own"


def test_preview_shows_size_frames_and_estimate(dialog):
    dialog.duration_spin.setValue(2.0)
    text = dialog.preview.text()
    assert "320 × 240 px" in text and "20 frames at 10 fps" in text and "about" in text
    assert dialog.export_button.isEnabled()


def test_bad_choices_disable_export_with_the_reason(dialog, tmp_path):
    dialog.out_edit.setText(str(tmp_path / "missing" / "clip.mp4"))
    assert not dialog.export_button.isEnabled()
    assert "out must be in an existing folder" in dialog.preview.text()
    dialog.out_edit.setText(str(tmp_path / "clip.mp4"))
    dialog.start_spin.setValue(55.0)
    dialog.duration_spin.setValue(10.0)
    assert not dialog.export_button.isEnabled()
    assert "duration must be <= 5" in dialog.preview.text()


def test_format_choice_sets_extension_and_sharing_defaults(dialog):
    dialog.format_combo.setCurrentIndex(1)  # GIF
    assert dialog.out_edit.text().endswith("clip.gif")
    assert (dialog.fps_spin.value(), dialog.width_spin.value(), dialog.height_spin.value()) == (20, 640, 360)


def test_export_runs_in_the_background_and_reports_the_file(qtbot, dialog, tmp_path):
    dialog.duration_spin.setValue(1.5)
    ticks = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start(20)
    progress_seen = []
    dialog.progress.valueChanged.connect(progress_seen.append)
    with qtbot.waitSignal(dialog.export_finished, timeout=EXPORT_TIMEOUT_MS) as blocker:
        dialog.start_export()
        assert dialog.running and not dialog.export_button.isEnabled()
    timer.stop()
    path = tmp_path / "clip.mp4"
    assert blocker.args == [str(path)]
    assert path.stat().st_size > 1000
    assert max(progress_seen) == 15
    assert "Wrote" in dialog.status.text() and "15 frames" in dialog.status.text()
    # the event loop kept running while the child rendered: about every 20 ms
    assert len(ticks) > 20
    assert not dialog.running and dialog.export_button.isEnabled()


def test_cancel_stops_the_child_and_leaves_nothing(qtbot, dialog, tmp_path):
    dialog.duration_spin.setValue(30.0)
    dialog.start_export()
    qtbot.waitUntil(lambda: dialog.progress.value() >= 3, timeout=EXPORT_TIMEOUT_MS)
    with qtbot.waitSignal(dialog.export_cancelled, timeout=EXPORT_TIMEOUT_MS):
        dialog.cancel_button.click()
    assert "nothing was written" in dialog.status.text()
    assert list(tmp_path.iterdir()) == []


def test_closing_the_main_window_cancels_a_running_export(qtbot, tmp_path):
    from PyQt5.QtWidgets import QMainWindow

    window = QMainWindow()
    qtbot.addWidget(window)
    window.show()
    d = ExportDialog.open_for(window, load("t-handle"), window.statusBar())
    d.out_edit.setText(str(tmp_path / "clip.mp4"))
    d.size_combo.setCurrentText("480x270")
    d.duration_spin.setValue(30.0)
    d.start_export()
    qtbot.waitUntil(lambda: d.progress.value() >= 2, timeout=EXPORT_TIMEOUT_MS)
    window.close()
    assert not d.running
    assert list(tmp_path.iterdir()) == []


def test_a_failed_export_shows_the_one_line_reason(qtbot, dialog, tmp_path, monkeypatch):
    monkeypatch.setenv("IMAGEIO_FFMPEG_EXE", str(tmp_path / "no-such-ffmpeg"))
    dialog.duration_spin.setValue(1.0)
    with qtbot.waitSignal(dialog.export_failed, timeout=EXPORT_TIMEOUT_MS) as blocker:
        dialog.start_export()
    assert "no-such-ffmpeg" in blocker.args[0] or "ffmpeg" in blocker.args[0].lower()
    assert "\n" not in blocker.args[0]
    assert [p.name for p in tmp_path.iterdir()] == []


def test_status_bar_offers_to_open_the_folder_for_a_while(qtbot, tmp_path, monkeypatch):
    from PyQt5 import sip

    import tumble.gui.dialogs.export_dialog as export_dialog

    monkeypatch.setattr(export_dialog, "OPEN_FOLDER_OFFER_MS", 100)
    bar = QStatusBar()
    qtbot.addWidget(bar)
    bar.show()
    button = offer_open_folder(bar, tmp_path / "clip.mp4")
    assert button.text() == "Open folder" and button.toolTip() == str(tmp_path.resolve())
    assert button.isVisible()  # not hidden behind a temporary message
    assert [label.text() for label in bar.findChildren(QLabel)] == ["Exported clip.mp4"]
    qtbot.waitUntil(lambda: sip.isdeleted(button), timeout=WAIT_MS)
    bar.showMessage("the status bar still works without the button")
    qtbot.wait(10)


def test_colour_key_and_ghost_choices_reach_the_command(qtbot, dialog, tmp_path):
    """The key is on by default; the ghost is a choice where the closed form applies, and
    disabled with the reason where it does not (rocket-top has a thrust torque)."""
    from tumble.export import protocol

    assert dialog.legend_check.isChecked() and not dialog.ghost_check.isChecked()
    assert dialog.ghost_check.isEnabled()
    dialog.ghost_check.setChecked(True)
    overlay = dialog.settings().overlay
    assert overlay.legend and overlay.ghost
    argv = protocol.command(tmp_path / "s.toml", dialog.settings(), view=dialog.view, options=dialog.options)
    assert argv[argv.index("--overlay") + 1] == "time,flips,title,legend,ghost"
    other = ExportDialog(load("rocket-top"), out=tmp_path / "r.mp4", view="compare",
                         options={"integrators": ("rk4", "rk4")})
    qtbot.addWidget(other)
    assert not other.ghost_check.isEnabled() and "torque" in other.ghost_check.toolTip()
    assert other.view_args == ("--view", "compare", "--integrators", "rk4", "rk4")
    assert not other.settings().overlay.ghost
    other.close()


@pytest.mark.parametrize("index, ext", [(3, ".glb"), (4, ".html")])
def test_the_dialog_exports_gltf_and_its_page(qtbot, dialog, tmp_path, index, ext):
    """Both glTF formats are offered: frame size, rate, plots and the drawn overlay are off for
    them (the viewer draws at its own), and the export writes the .glb or the page."""
    dialog.format_combo.setCurrentIndex(index)
    assert dialog.out_edit.text().endswith(f"clip{ext}") and dialog.is_gltf()
    assert not any(w.isEnabled() for w in (dialog.size_combo, dialog.width_spin, dialog.fps_spin, dialog.plots_check))
    dialog.duration_spin.setValue(2.0)
    assert "2.00 s of animation" in dialog.preview.text() and dialog.export_button.isEnabled()
    with qtbot.waitSignal(dialog.export_finished, timeout=EXPORT_TIMEOUT_MS) as blocker:
        dialog.start_export()
    path = tmp_path / f"clip{ext}"
    assert blocker.args == [str(path)]
    head = path.read_bytes()[:15]
    assert head.startswith(b"glTF") if ext == ".glb" else head == b"<!DOCTYPE html>"
    assert "Wrote" in dialog.status.text() and "keyframes" in dialog.status.text()
    assert dialog.progress.value() == dialog.progress.maximum()
    dialog.format_combo.setCurrentIndex(0)  # back to MP4: the frame choices again
    assert dialog.size_combo.isEnabled() and dialog.fps_spin.isEnabled()
