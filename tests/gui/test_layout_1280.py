"""Issue 34, items 5-11: nothing crushed or cut off on a projector's 1280x720 (each test sizes its
window to the room a 1280x720 screen leaves under openbox's title bar, and waits for the layout)."""

from __future__ import annotations

import pytest
from conftest import WAIT_MS
from PyQt5.QtCore import QPoint, QPointF, QRect

#: the client area a 1280x720 screen leaves under openbox's frame (test_window_manager.py measures it)
ROOM = (1278, 695)


def _sized(window, qtbot):
    qtbot.waitUntil(lambda: not window.screen_fitter.waiting, timeout=WAIT_MS)  # fitted to the screen first
    window.resize(*ROOM)
    qtbot.waitUntil(lambda: (window.width(), window.height()) == ROOM, timeout=WAIT_MS)


def _label_rect(scene, actor):
    """The Qt rectangle (x0, y0, x1, y1) of a VTK text actor drawn in ``scene`` (a QtInteractor)."""
    bbox = [0.0] * 4
    actor.GetBoundingBox(scene.renderer, bbox)  # about the actor's anchor
    x, y = actor.GetPositionCoordinate().GetComputedDisplayValue(scene.renderer)
    h = scene.height()
    return x + bbox[0], h - (y + bbox[3]), x + bbox[1], h - (y + bbox[2])


def test_compare_sides_labels_are_not_behind_the_colour_key(open_view, qtbot):
    """Item 6: side A's label was hidden behind the colour key."""
    window = open_view("t-handle", view="compare", paused=True)
    _sized(window, qtbot)
    scene = window.scene_view
    key = window.legend

    def clear() -> bool:
        window.scene_view.render()
        g = key.geometry()
        for actor in window.view.scenes[window.spec.panes[0].name]._labels:
            x0, y0, x1, y1 = _label_rect(scene, actor)
            if x0 < g.right() and g.left() < x1 and y0 < g.bottom() and g.top() < y1:
                return False
        return scene.rect().contains(g)

    qtbot.waitUntil(clear, timeout=WAIT_MS)


def _whole(label) -> bool:
    """Every line of a wrapped ``label`` is in sight: as tall as its text needs at its width, and
    not clipped by the widgets around it."""
    if not label.isVisible() or not label.text():
        return False
    need = label.heightForWidth(label.width())
    return label.height() >= need and label.visibleRegion().boundingRect().height() >= need


def test_the_theory_docks_sentences_end_in_sight(open_window, qtbot):
    """Item 7: "No free-body theory here: applied torques, a damper or" ended mid-way, and so did
    the note after a kick ("predicted from the state it")."""
    window = open_window("rocket-top", paused=True)
    _sized(window, qtbot)
    note = window.theory.note
    qtbot.waitUntil(lambda: "No free-body theory" in note.text() and _whole(note), timeout=WAIT_MS)
    window.load_preset("t-handle")
    window.worker.play()
    qtbot.waitUntil(lambda: window.worker.latest().t > 0.3, timeout=WAIT_MS)
    window.kick()
    qtbot.waitUntil(lambda: "predicted from the state it left" in note.text() and _whole(note), timeout=WAIT_MS)


def _legend_clear_of_curves(plot) -> bool:
    """No curve of ``plot`` reaches into its legend's band: the legend sits above the curves."""
    legend = plot.legend
    if legend is None or not legend.isVisible():
        return True
    bottom = legend.sceneBoundingRect().bottom()
    box = plot.vb.sceneBoundingRect()
    for curve in plot.listDataItems():
        x, y = curve.getData()
        if x is None or len(x) == 0:
            continue
        top = min(plot.vb.mapViewToScene(QPointF(float(a), float(b))).y() for a, b in zip(x[::10], y[::10]))
        if top < bottom and box.contains(QPointF(box.center().x(), top)):
            return False
    return True


@pytest.mark.parametrize("view", ["main", "poinsot"])
def test_every_plot_keeps_90_px_its_title_whole_and_its_legend_above_the_curves(open_view, qtbot, view):
    """Item 8: at 1280x720 the L, omega and drift plots were 55 px tall with two ticks (Poinsot's
    60 px, legends over the curves), and with the ghost on its title lost its last letter."""
    from tumble.gui.plots.live_plots import PLOT_VIEW_MIN_PX

    window = open_view("t-handle", view=view)
    _sized(window, qtbot)
    window.ghost.set_checked(True)
    plots = window.plots.plots + [window.ghost.plot]

    def laid_out() -> bool:
        return (window.ghost.last_error is not None and window.worker.latest().t > 2.0
                and all(p.vb.height() >= PLOT_VIEW_MIN_PX - 0.5 for p in plots))

    qtbot.waitUntil(laid_out, timeout=WAIT_MS)
    assert (window.width(), window.height()) == ROOM  # the room, not a taller window
    assert window.geometry().contains(window.statusBar().geometry().translated(window.geometry().topLeft()))
    for plot in plots:
        title = plot.titleLabel
        assert title.item.boundingRect().width() <= plot.width(), title.text  # whole, not cut at its ends
    qtbot.waitUntil(lambda: all(_legend_clear_of_curves(p) for p in window.plots.plots), timeout=WAIT_MS)


def test_the_import_dialog_shows_its_buttons_and_note_column_whole(open_window, qtbot):
    """Item 9: the import dialog cut off its "Replay in 3D" buttons and its note column."""
    from PyQt5.QtWidgets import QPushButton

    from tumble.gui.recordings.flights_table import NOTE_COLUMN, NOTE_MIN_WIDTH, REPLAY_COLUMN

    window = open_window("t-handle", paused=True)
    _sized(window, qtbot)
    window.open_sample("phone-throws")
    dialog = window.recording_dialog
    table = dialog.table
    qtbot.waitUntil(lambda: table.rowCount() > 0 and table.cellWidget(0, REPLAY_COLUMN) is not None,
                    timeout=5 * WAIT_MS)
    assert dialog.frameGeometry().height() <= 720 and dialog.frameGeometry().width() <= 1280
    header = table.horizontalHeader()

    def whole() -> bool:
        total = sum(header.sectionSize(c) for c in range(table.columnCount()))
        buttons = [table.cellWidget(r, REPLAY_COLUMN) for r in range(table.rowCount())]
        return (total <= table.viewport().width() and not table.horizontalScrollBar().isVisible()
                and header.sectionSize(NOTE_COLUMN) >= NOTE_MIN_WIDTH
                and all(isinstance(b, QPushButton) and b.width() >= b.sizeHint().width() for b in buttons)
                and dialog.rect().contains(QRect(dialog.plot.mapTo(dialog, QPoint(0, 0)), dialog.plot.size())))

    qtbot.waitUntil(whole, timeout=WAIT_MS)
    dialog.close()


def test_the_phone_tab_reads_whole_at_1280x720(open_window, qtbot):
    """Item 5: the Phone tab's connection text was a 7-line narrow column, its flights table cut
    "flip me..." and said "segment 0" on every row, and "10 flights" and "9 of 9 flights fitted"
    stood side by side counting different things."""
    from tumble.gui.recordings.flights_table import COLUMNS, RECORDING_COLUMN

    window = open_window("t-handle", paused=True)
    _sized(window, qtbot)
    dock = window.connect_phone("demo")
    table, state = dock.table, dock.state_label
    qtbot.waitUntil(lambda: table.rowCount() >= 2 and "landed" in state.text(), timeout=5 * WAIT_MS)
    # the connection text: lines across the tab, not a column
    assert state.width() >= 0.8 * dock.width() and _whole(state)
    assert state.height() <= 4 * state.fontMetrics().lineSpacing()
    # one phone: no recording column saying the same on every row
    assert table.isColumnHidden(RECORDING_COLUMN)
    header = table.horizontalHeader()
    for c, text in enumerate(COLUMNS):
        if table.isColumnHidden(c) or not text.startswith("flip"):
            continue
        # every line of a flip column's header whole, and the column in sight
        assert header.sectionSize(c) >= max(header.fontMetrics().horizontalAdvance(x) for x in text.split("\n"))
        assert header.sectionViewportPosition(c) + header.sectionSize(c) <= table.viewport().width(), text
    # each count says what it counts
    assert "flights landed" in state.text() and "the last fit used" in dock.ratios_label.text()
    dock.disconnect_phone()
    qtbot.waitUntil(lambda: dock.thread is None or not dock.thread.is_alive(), timeout=WAIT_MS)
