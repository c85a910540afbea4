"""In front of a class, in the window: File > Open sample fits a shipped recording, the Phone
dock's address ``demo`` fills the live strip from the stand-in phone, ``tumble gui --live demo``
runs, and the Theory dock says a stable spin has no growth."""

from __future__ import annotations

import numpy as np

from tumble.gui.panels.theory_panel import STABLE_GROWTH
from tumble.throws.live.fitter import last_reports
from tumble.throws.recordings.samples import samples

#: a fit of a sample's few flights takes a second or two; the machine may be busy
FIT_MS = 120000
#: the stand-in phone plays in real time: the sample's third throw lands near 6.3 s
FLIGHTS_MS = 60000


def test_file_open_sample_fits_a_shipped_recording(open_window, qtbot):
    window = open_window("t-handle", paused=True)
    assert window.sample_action in window.file_menu.actions()
    entries = {a.text(): a for a in window.samples_menu.actions()}
    assert set(entries) == {s.name for s in samples()}
    truth = np.asarray(next(s for s in samples() if s.name == "phone-throws").ratios)
    entries["phone-throws"].trigger()
    dialog = window.recording_dialog
    with qtbot.waitSignal(dialog.fit_finished, timeout=FIT_MS) as fitted:
        pass
    result = fitted.args[0]
    assert result.recordings == ("phone-throws",)
    assert np.max(np.abs(result.moments - truth)) < 0.01
    dialog.close()


def test_the_phone_dock_follows_the_demo(open_window, qtbot):
    window = open_window("t-handle", paused=True)
    dock = window.connect_phone("demo")
    landed = []
    dock.flight_landed.connect(landed.append)
    try:
        assert dock.connected and dock.session.demo.url.startswith("http://127.0.0.1:")
        # a flight may be reported again with refined edges: three flights, each counted once
        qtbot.waitUntil(lambda: len(last_reports(landed)) >= 3, timeout=FLIGHTS_MS)
        x, _ = dock.curves[0].getData()
        assert len(x) > 100 and np.all(np.diff(x) > 0)
    finally:
        with qtbot.waitSignal(dock.disconnected, timeout=FIT_MS):
            dock.toggle()
    assert dock.table.rowCount() >= 3


def test_tumble_gui_live_demo_runs(tmp_path):
    from conftest import tumble

    shot = tmp_path / "demo.png"
    res = tumble("gui", "--live", "demo", "--screenshot", shot, "--quit-after", "6", timeout=240)
    assert res.returncode == 0, res.stderr
    assert shot.stat().st_size > 10000


def test_the_theory_dock_says_a_stable_spin_has_no_growth(open_window, qtbot):
    window = open_window("asymmetric-stable", paused=True)
    cell = window.theory.cells["growth_rate"][0]
    qtbot.waitUntil(lambda: cell.text() == STABLE_GROWTH, timeout=20000)
    flipping = open_window("t-handle", paused=True)
    qtbot.waitUntil(lambda: flipping.theory.cells["growth_rate"][0].text().endswith(" 1/s"), timeout=20000)


def test_the_import_dialog_says_when_the_sensors_axes_fit_clearly_worse(open_window, qtbot):
    window = open_window("t-handle", paused=True)
    window.open_sample("racket-throws")  # its sensor sits 0.7 degrees off the racket's axes
    dialog = window.recording_dialog
    assert dialog.axes_combo.currentText() == "sensor"
    with qtbot.waitSignal(dialog.fit_finished, timeout=FIT_MS):
        pass
    assert "axes: fit" in dialog.status.text() and "clearly worse" in dialog.status.text()
    dialog.close()
