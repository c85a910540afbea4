"""The parameter panel in a real window: wheel, refused edits, the spin helper, shape
changes, mesh files and the texts derived from the running scenario."""

from __future__ import annotations

from PyQt5.QtCore import QPoint, QPointF, Qt
from PyQt5.QtGui import QWheelEvent
from PyQt5.QtWidgets import QApplication

WAIT_MS = 15000


def wheel(widget, notches: int = -1) -> None:
    """One or more wheel notches over the middle of ``widget`` (negative: towards the user)."""
    centre = QPointF(widget.rect().center())
    event = QWheelEvent(centre, QPointF(widget.mapToGlobal(centre.toPoint())), QPoint(0, 0),
                        QPoint(0, 120 * notches), Qt.NoButton, Qt.NoModifier, Qt.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)


def test_the_wheel_scrolls_the_panel_instead_of_changing_an_unfocused_field(open_window, qtbot):
    window = open_window("t-handle", paused=True)
    panel = window.panel
    window.resize(1280, 600)  # short enough for the panel to scroll
    bar = panel.scroll.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0, timeout=WAIT_MS)
    for combo in (panel.integrator, panel.shape, panel.spin_axis):
        panel.apply_button.setFocus()
        before, scrolled = combo.currentIndex(), bar.value()
        wheel(combo)
        assert combo.currentIndex() == before, f"{combo.toolTip()}: the wheel changed it"
        assert bar.value() > scrolled or bar.value() == bar.maximum()
        bar.setValue(0)
    assert panel.preset.currentText() == "t-handle"  # nothing was marked edited
    assert panel.status.text() == ""
    panel.integrator.setFocus()  # a focused field still takes the wheel
    qtbot.waitUntil(panel.integrator.hasFocus, timeout=WAIT_MS)
    before = panel.integrator.currentIndex()
    wheel(panel.integrator, -1)
    assert panel.integrator.currentIndex() != before


def test_a_corrected_field_loses_its_red_outline_as_it_is_typed(open_window, qtbot):
    window = open_window("t-handle", paused=True)
    panel = window.panel
    mass = panel.mass
    mass.setFocus()
    mass.selectAll()
    qtbot.keyClicks(mass, "-1")
    qtbot.keyClick(mass, Qt.Key_Return)
    assert mass.property("invalid") is True and "body.mass" in panel.error.text()
    mass.selectAll()
    qtbot.keyClicks(mass, "0.0")  # on the way to 0.07: still refused
    assert mass.property("invalid") is True and "body.mass" in panel.error.text()
    qtbot.keyClicks(mass, "7")
    assert not mass.property("invalid")
    assert panel.error.text() == ""
    assert "press Apply" in panel.status.text()
    dt = panel.dt  # another field refused, then corrected by a revert
    dt.setFocus()
    dt.selectAll()
    qtbot.keyClicks(dt, "0")
    qtbot.keyClick(dt, Qt.Key_Return)
    assert dt.property("invalid") is True and not mass.property("invalid")
    qtbot.keyClick(dt, Qt.Key_Backspace)
    qtbot.keyClicks(dt, "0.002")
    assert not dt.property("invalid") and panel.error.text() == ""
    qtbot.keyClick(dt, Qt.Key_Return)
    qtbot.waitUntil(lambda: window.worker.latest().scenario.solver.dt == 0.002, timeout=WAIT_MS)
    assert window.worker.latest().scenario.rigid_body.mass == 0.07
