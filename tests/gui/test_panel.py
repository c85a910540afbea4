"""The parameter panel in a real window: wheel, refused edits, the spin helper, shape
changes, mesh files and the texts derived from the running scenario."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import WAIT_MS
from PyQt5.QtCore import QPoint, QPointF, Qt
from PyQt5.QtGui import QWheelEvent
from PyQt5.QtWidgets import QApplication

from tumble.physics import body as bodies
from tumble.gui.panels.describe import period_text
from tumble.physics.analysis import predicted_flip_period
from tumble.scenario import load

#: largest relative rounding of a number shown in a panel field (6 significant digits)
FIELD_RTOL = 5e-6


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


def choose_shape(panel, shape: str) -> None:
    index = panel.shape.findText(shape)
    panel.shape.setCurrentIndex(index)
    panel.shape.activated.emit(index)


@pytest.mark.parametrize("preset", ["book", "phone"])
@pytest.mark.parametrize("shape", ["box", "ellipsoid"])
def test_a_shape_change_keeps_the_body_axes_and_the_moments(open_window, qtbot, preset, shape):
    window = open_window(preset, paused=True)
    mesh_body = window.worker.latest().scenario.rigid_body
    extent = np.ptp(mesh_body.mesh_vertices, axis=0)
    period = predicted_flip_period(mesh_body, load(preset).angular_velocity)
    assert period is not None
    choose_shape(window.panel, shape)
    assert window.panel.apply()
    qtbot.waitUntil(lambda: window.worker.latest().scenario.body.shape == shape, timeout=WAIT_MS)
    sc = window.worker.latest().scenario
    size = np.array(sc.body.size)
    # each edge lies along the body axis of the mesh's extent of that rank
    assert list(np.argsort(size)) == list(np.argsort(extent))
    if len(mesh_body.mesh_faces) == 12:  # the book is a plain box: its equivalent box is itself
        factor = 1.0 if shape == "box" else np.sqrt(5 / 12)
        np.testing.assert_allclose(size, extent * factor, rtol=FIELD_RTOL)
    # sizes pass through fields of 6 significant digits; moments go as size squared
    np.testing.assert_allclose(sc.rigid_body.inertia, mesh_body.inertia, rtol=2 * FIELD_RTOL,
                               atol=2 * FIELD_RTOL * mesh_body.inertia.max())
    assert predicted_flip_period(sc.rigid_body, sc.angular_velocity) == pytest.approx(period, rel=10 * FIELD_RTOL)
    assert not window.panel.body_editor.shape_note.isVisible()


def test_a_tilted_tensor_becomes_a_box_along_the_body_axes_with_a_note(open_window):
    window = open_window("t-handle", paused=True)
    panel = window.panel
    choose_shape(panel, "custom")
    c, s = np.cos(np.radians(20)), np.sin(np.radians(20))
    turn = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    J = turn @ np.diag([1.0, 2.0, 2.5]) @ turn.T
    for f, v in zip(panel.inertia_fields, (J[0, 0], J[1, 1], J[2, 2], J[1, 2], J[0, 2], J[0, 1])):
        f.setText(repr(float(v)))
    panel.mass.setText("3")
    choose_shape(panel, "box")
    moments = np.linalg.eigvalsh(J)
    box = [f.value() for f in panel.size_fields[:3]]
    np.testing.assert_allclose(sorted(np.diag(bodies.box(3.0, box).inertia)), moments, rtol=2 * FIELD_RTOL)
    assert box[0] > box[1]  # the smallest moment's axis is 20 degrees from x: the longest edge goes there
    note = panel.body_editor.shape_note
    assert note.isVisible() and "20°" in note.text()


def brick_stl(folder, extents_mm=(20.0, 60.0, 100.0)):
    """A closed box surface in millimetres, as a CAD program exports it."""
    import trimesh

    path = folder / "brick.stl"
    trimesh.creation.box(extents=extents_mm).export(path)
    return path


def box_tensor(mass, edges):
    a, b, c = edges
    return mass / 12 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])


def test_choosing_mesh_loads_a_file_with_its_unit_and_mass(open_window, qtbot, file_dialogs, tmp_path):
    dialogs = file_dialogs
    path = brick_stl(tmp_path)
    window = open_window("t-handle", paused=True)
    panel, editor = window.panel, window.panel.body_editor

    dialogs.answers.append("")  # cancelled: the shape stays
    choose_shape(panel, "mesh")
    assert panel.shape.currentText() == "t-handle" and not editor.mesh_button.isVisible()

    dialogs.answers.append(str(path))
    choose_shape(panel, "mesh")
    assert panel.shape.currentText() == "mesh"
    assert editor.mesh_button.isVisible() and editor.unit.isVisible() and editor.inertia_grid.isVisible()
    assert "brick.stl: 20 × 60 × 100 m (is the unit right?)" in editor.mesh_label.text()
    editor.unit.setCurrentText("mm")
    editor.unit.activated.emit(editor.unit.currentIndex())
    assert "brick.stl: 0.02 × 0.06 × 0.1 m" == editor.mesh_label.text()
    panel.mass.setText("0.5")
    panel.mass.textEdited.emit("0.5")
    edges = (0.02, 0.06, 0.1)
    expected = box_tensor(0.5, edges)
    shown = [f.value() for f in panel.inertia_fields]  # the tensor is shown, read only
    np.testing.assert_allclose(shown, [expected[0, 0], expected[1, 1], expected[2, 2], 0, 0, 0],
                               rtol=2 * FIELD_RTOL, atol=1e-12)
    assert all(f.isReadOnly() for f in panel.inertia_fields)
    assert editor.density.value() == pytest.approx(0.5 / np.prod(edges), rel=FIELD_RTOL)

    assert panel.apply()
    qtbot.waitUntil(lambda: window.worker.latest().scenario.body.shape == "mesh", timeout=WAIT_MS)
    sc = window.worker.latest().scenario
    assert (sc.body.mesh, sc.body.unit, sc.body.mass, sc.body.density) == (str(path), "mm", 0.5, None)
    np.testing.assert_allclose(sc.rigid_body.inertia, expected, rtol=1e-9, atol=1e-12 * expected.max())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["brick.stl", "settings"]  # no TOML written

    editor.given.setCurrentText("density (kg/m³)")  # the density is given, the mass follows
    editor.given.activated.emit(1)
    assert editor.density.isEnabled() and not panel.mass.isEnabled()
    editor.density.setText("1000")
    editor.density.textEdited.emit("1000")
    assert panel.mass.value() == pytest.approx(1000 * np.prod(edges), rel=1e-9)
    assert panel.apply()
    qtbot.waitUntil(lambda: window.worker.latest().scenario.body.density == 1000, timeout=WAIT_MS)
    assert window.worker.latest().scenario.body.mass is None


def test_a_file_that_is_no_solid_is_refused_and_the_body_stays(open_window, file_dialogs, tmp_path):
    dialogs = file_dialogs
    flat = tmp_path / "flat.stl"  # one triangle: no volume
    flat.write_text("solid flat\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\n"
                    "endloop\nendfacet\nendsolid flat\n")
    window = open_window("t-handle", paused=True)
    dialogs.answers.append(str(flat))
    choose_shape(window.panel, "mesh")
    assert window.panel.shape.currentText() == "t-handle"
    # the refusal names the file (a long path is cut to its first and last characters)
    assert "Not applied: body.mesh" in window.panel.error.text() and "/flat.stl'" in window.panel.error.text()
    assert window.worker.latest().scenario.body.shape == "t-handle"


def principal_spin(sc):
    """(rate, axis index, tilt in degrees) of omega0 among the principal axes, computed
    here from the tensor (numpy's eigh), not by the panel's helper."""
    _, axes = np.linalg.eigh(sc.rigid_body.inertia)
    w = np.array(sc.angular_velocity)
    along = np.abs(w @ axes)
    k = int(np.argmax(along))
    return np.linalg.norm(w), k, np.degrees(np.arccos(along[k] / np.linalg.norm(w)))


@pytest.mark.parametrize("preset", ["book", "tennis-racket", "boxes-simple", "asymmetric-stable", "t-handle"])
def test_the_spin_helper_follows_the_loaded_scenario(open_window, preset):
    window = open_window("symmetric-top", paused=True)
    panel = window.panel
    window.load_preset(preset)
    sc = load(preset)
    rate, k, tilt = principal_spin(sc)
    assert panel.spin_rate.value() == pytest.approx(rate, rel=1e-12)
    assert panel.spin_axis.currentIndex() == k
    assert panel.spin_tilt.value() == pytest.approx(tilt, rel=1e-9, abs=1e-9)
    assert "intermediate" in panel.spin_axis.itemText(1)
    panel.omega[0].setText("0")  # Set ω gives back a spin of the same rate and tilt
    panel._fill_spin()
    rebuilt = sc.replace(angular_velocity=tuple(f.value() for f in panel.omega))
    np.testing.assert_allclose(principal_spin(rebuilt), (rate, k, tilt), rtol=2 * FIELD_RTOL, atol=1e-4)


def test_the_spin_helper_names_no_intermediate_axis_for_a_symmetric_body(open_window):
    window = open_window("symmetric-top", paused=True)
    names = [window.panel.spin_axis.itemText(k) for k in range(3)]
    assert not any("intermediate" in n for n in names)
    assert "symmetry axis" in names[2]
    window.panel.spin_rate.setText("3")  # the helper is not the scenario: nothing is edited
    window.panel.spin_rate.textEdited.emit("3")
    assert window.panel.preset.currentText() == "symmetric-top" and window.panel.status.text() == ""


def test_after_an_edit_every_text_follows_the_running_scenario(open_window, qtbot):
    window = open_window("t-handle")
    panel = window.panel
    assert "flips about every 3.2 s" in panel.description.text()  # the preset's own prose
    assert window.windowTitle().startswith("T-handle — ")
    for f, v in zip(panel.omega, ("0.5", "0", "12")):
        f.setText(v)
    assert panel.apply()
    qtbot.waitUntil(lambda: window.worker.latest().scenario.angular_velocity == (0.5, 0.0, 12.0), timeout=WAIT_MS)
    snap = window.worker.latest()
    assert snap.predicted_flip_period is not None
    text = period_text(snap.predicted_flip_period)
    qtbot.waitUntil(lambda: text in window.status_labels["period"].text(), timeout=WAIT_MS)
    assert f"flips every {text}" in panel.description.text()
    assert "3.2 s" not in panel.description.text()
    assert window.windowTitle().startswith("T-handle (edited) — ")
    assert snap.scenario.description == ""  # a saved edit carries no stale prose either
    rate, k, tilt = principal_spin(snap.scenario)
    assert panel.spin_rate.value() == pytest.approx(rate, rel=1e-12)


def test_an_opened_file_is_named_not_edited(open_window, qtbot, file_dialogs, tmp_path):
    dialogs = file_dialogs
    path = tmp_path / "lab-brick.toml"
    path.write_text('name = "Lab brick"\ndescription = "the brick of Tuesday\'s lab"\n[body]\nshape = "box"\n'
                    'mass = 0.123456789\nsize = [0.0512345678, 0.1, 0.2]\n[initial]\n'
                    'angular_velocity = [0.01, 7.123456789, 0.02]\n')
    window = open_window("t-handle", paused=True)
    dialogs.answers.append(str(path))
    window.open_scenario()
    panel = window.panel
    assert panel.preset.currentText() == "Lab brick (lab-brick.toml)"
    assert "the brick of Tuesday's lab" in panel.description.text()
    qtbot.waitUntil(lambda: window.windowTitle() == "Lab brick (lab-brick.toml) — Tumble", timeout=WAIT_MS)
    assert panel.apply()  # nothing edited: the fields give back the file's numbers exactly
    assert panel.scenario == load(path)
    assert panel.preset.currentText() == "Lab brick (lab-brick.toml)"


def test_a_spin_near_the_major_axis_is_not_described_as_flipping(open_window, qtbot):
    """As the stability map opens a spin in a main window: the base's name and prose, a new
    omega0."""
    from tumble.gui.windows.main_window import MainWindow

    base = load("t-handle")
    _, axes = np.linalg.eigh(base.rigid_body.inertia)
    w0 = 6.0 * (np.cos(0.05) * axes[:, 2] + np.sin(0.05) * axes[:, 1])
    sc = base.replace(name=f"{base.name} (from the stability map)", angular_velocity=tuple(w0))
    window = MainWindow(sc, persist=False)
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.first_frame_drawn, timeout=WAIT_MS):
        window.show()
    text = window.panel.description.text()
    assert "flips about every" not in text and "does not flip" in text
    assert "axis 3 (largest I)" in text
    assert window.panel.preset.currentText() == "T-handle (from the stability map)"
