"""The panel's Body box: shape with its sizes, a custom inertia tensor or a mesh file, and
the principal moments. GUI thread only."""

from __future__ import annotations

import dataclasses
import itertools
import math
from pathlib import Path

import numpy as np
from PyQt5.QtCore import Qt, pyqtSignal
from PyQt5.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGridLayout,
    QGroupBox,
    QLabel,
    QPushButton,
    QWidget,
)

from ...physics.body import Body, equivalent_box_size, has_intermediate_axis
from ...physics.errors import ParameterError
from ...scenario import SHAPES, BodySpec
from ...scenario.meshes import MESH_SUFFIXES, UNITS, load_mesh
from ...scene.style import AXIS_HEX, tone
from .fields import NumberField, fixed, hint
from ..dialogs.file_dialogs import open_path

#: labels of the size entries of each shape (all in metres)
SIZE_LABELS = {
    "box": ("edge x", "edge y", "edge z"),
    "ellipsoid": ("semi-axis x", "semi-axis y", "semi-axis z"),
    "cylinder": ("radius", "height (along z)"),
    "t-handle": ("shaft length", "shaft radius", "bar length", "bar radius"),
}
#: sizes used when switching to a shape whose entries cannot be carried over
DEFAULT_SIZES = {
    "box": (0.1, 0.4, 0.9),
    "ellipsoid": (0.05, 0.2, 0.45),
    "cylinder": (0.1, 0.4),
    "t-handle": (0.06, 0.006, 0.1, 0.008),
}
INERTIA_LABELS = ("Jxx", "Jyy", "Jzz", "Jyz", "Jxz", "Jxy")
#: size of each shape with a body's principal moments, per edge of the equivalent box: a
#: solid box has I_x = m/12 (b^2 + c^2), a solid ellipsoid I_x = m/5 (b^2 + c^2) in its
#: semi-axes (Goldstein's table of moments), so semi-axis = edge * sqrt(5/12)
EQUIVALENT_SOLIDS = {"box": 1.0, "ellipsoid": math.sqrt(5.0 / 12.0)}
#: a shape change says so when the principal axes were this far from the body axes (deg)
TILT_NOTE_DEG = 0.5
#: entries of a tensor below this fraction of its largest are round-off, shown as 0
ROUND_OFF = 1e-12
#: the file dialog's filter for mesh files
MESH_FILTER = "Meshes (" + " ".join(f"*{e}" for e in MESH_SUFFIXES) + ");;All files (*)"
#: a mesh larger than this (m) is flagged: its file is probably in cm or mm
LARGE_MESH_M = 10.0
#: how a mesh body's mass is given: entries of the "given" chooser
MASS_GIVEN, DENSITY_GIVEN = "mass (kg)", "density (kg/m³)"


def equivalent_sizes(body: Body, shape: str) -> tuple[tuple, float]:
    """Sizes along body x, y, z of the uniform ``shape`` ("box" or "ellipsoid") with
    ``body``'s mass and principal moments, and the largest angle (degrees) between a
    principal axis and the body axis its edge is laid along.

    Each principal axis keeps the body axis it is closest to (the permutation that best
    matches them), so a mesh 15 cm along x and 23 cm along y becomes a box 0.15 x 0.23,
    not one whose x and y are swapped because the moments come sorted.
    """
    moments, axes = body.principal()
    edges = equivalent_box_size(body.mass, moments)  # along principal axes 1, 2, 3
    along = max(itertools.permutations(range(3)), key=lambda p: sum(abs(axes[p[k], k]) for k in range(3)))
    sizes = np.empty(3)
    for k, j in enumerate(along):
        sizes[j] = edges[k] * EQUIVALENT_SOLIDS[shape]
    tilt = max(math.degrees(math.acos(min(1.0, abs(axes[j, k])))) for k, j in enumerate(along))
    return tuple(float(x) for x in sizes), tilt


class _Rows(QGridLayout):
    """Label and field rows (a field alone spans both columns); a hidden row takes no space."""

    def __init__(self, parent: QWidget):
        super().__init__(parent)
        self.setColumnStretch(1, 1)
        self._labels: dict[int, QLabel] = {}

    def addRow(self, label, field: QWidget | None = None) -> None:  # noqa: N802 - QFormLayout's name
        row = self.rowCount()
        if field is None:  # one widget across the row
            self.addWidget(label, row, 0, 1, 2)
            return
        text = QLabel(label)
        text.setAlignment(Qt.AlignRight | Qt.AlignVCenter)
        self.addWidget(text, row, 0)
        self.addWidget(field, row, 1)
        self._labels[id(field)] = text

    def label_for(self, field: QWidget) -> QLabel | None:
        return self._labels.get(id(field))


class BodyEditor(QGroupBox):
    """Edits a :class:`~app.scenario.BodySpec`.

    Signals (GUI thread): ``edited()`` when the user changed the body; ``apply_requested()``
    on Enter in one of its fields; ``refused(ParameterError)`` when a chosen mesh file
    cannot be a body (the body stays as it was); ``body_built(Body)`` whenever the fields
    describe a valid body, after each change.
    """

    edited = pyqtSignal()
    apply_requested = pyqtSignal()
    refused = pyqtSignal(object)
    body_built = pyqtSignal(object)

    def __init__(self, parent=None):
        super().__init__("Body", parent)
        self._base: BodySpec | None = None
        self._shown_shape: str | None = None
        self._mesh_path: str | None = None
        self._filling = False
        self.fields: list[NumberField] = []
        # a grid, not a QFormLayout: that one keeps the spacing of hidden rows, and this box
        # hides the rows of the shapes not shown (five for a mesh alone)
        form = self._form = _Rows(self)
        self.shape = QComboBox()
        self.shape.addItems(SHAPES)
        self.shape.setToolTip("custom: give the inertia tensor (drawn as the box with the same principal moments); "
                              "mesh: pick an STL, OBJ or PLY file")
        self.shape.activated.connect(self._shape_chosen)
        form.addRow("shape", self.shape)
        self.shape_note = hint("")
        self.shape_note.hide()
        form.addRow(self.shape_note)
        self._build_mesh_rows(form)
        self.mass = self._field("body.mass", "mass (kg)")
        form.addRow("mass (kg)", self.mass)
        self.density = self._field("body.density", "density of the mesh's solid (kg/m³)")
        form.addRow("density (kg/m³)", self.density)
        self.size_fields = [self._field(f"body.size[{k}]") for k in range(4)]
        self.size_labels = [QLabel() for _ in range(4)]
        self.size_grid = QWidget()
        grid = QGridLayout(self.size_grid)
        grid.setContentsMargins(0, 0, 0, 0)
        for k in range(4):
            grid.addWidget(self.size_labels[k], k // 2 * 2, k % 2)
            grid.addWidget(self.size_fields[k], k // 2 * 2 + 1, k % 2)
        form.addRow("size (m)", self.size_grid)
        self.inertia_fields = [self._field(f"body.inertia[{k}]", f"{name} (kg m^2)")
                               for k, name in enumerate(INERTIA_LABELS)]
        self.inertia_grid = QWidget()
        grid = QGridLayout(self.inertia_grid)
        grid.setContentsMargins(0, 0, 0, 0)
        for k, name in enumerate(INERTIA_LABELS):
            grid.addWidget(QLabel(name), k // 3 * 2, k % 3)
            grid.addWidget(self.inertia_fields[k], k // 3 * 2 + 1, k % 3)
        form.addRow("inertia\n(kg m²)", self.inertia_grid)
        self.allow_unphysical = QCheckBox("allow I1 + I2 < I3 (unphysical)")
        self.allow_unphysical.toggled.connect(self._edited)
        form.addRow("", self.allow_unphysical)
        self.moments = QLabel()
        self.moments.setObjectName("moments")
        self.moments.setTextFormat(Qt.RichText)
        self.moments.setWordWrap(True)
        form.addRow(self.moments)

    def add_row(self, widget: QWidget) -> None:
        """Host another editor's widget across the box's last row (the damper and rotor)."""
        self._form.addRow(widget)

    def _build_mesh_rows(self, form: _Rows) -> None:
        self.mesh_label = hint("")
        form.addRow(self.mesh_label)
        self.mesh_button = QPushButton("Choose mesh file…")
        self.mesh_button.setToolTip("A closed STL, OBJ or PLY surface; the body is the uniform solid inside it")
        self.mesh_button.clicked.connect(self._choose_another_mesh)
        form.addRow("file", self.mesh_button)
        self.unit = QComboBox()
        self.unit.addItems(list(UNITS))
        self.unit.setToolTip("Unit of the mesh file's coordinates")
        self.unit.activated.connect(self._edited)
        form.addRow("unit", self.unit)
        self.given = QComboBox()
        self.given.addItems([MASS_GIVEN, DENSITY_GIVEN])
        self.given.setToolTip("Give the solid's mass, or its density (the other follows from its volume)")
        self.given.activated.connect(self._given_chosen)
        form.addRow("given", self.given)

    def _set_row_visible(self, field: QWidget, on: bool) -> None:
        field.setVisible(on)
        label = self._form.label_for(field)
        if label is not None:
            label.setVisible(on)

    def _field(self, name: str, tooltip: str = "") -> NumberField:
        f = NumberField(name, tooltip)
        f.returnPressed.connect(self.apply_requested)
        f.textEdited.connect(self._edited)
        self.fields.append(f)
        return f

    # ------------------------------------------------------------------ filling

    def show_body(self, spec: BodySpec, body: Body) -> None:
        """Show ``spec`` (built as ``body``) as the running body (no signal emitted)."""
        self._base = spec
        self._filling = True
        self.shape_note.hide()
        try:
            self.shape.setCurrentText(spec.shape)
            self.mass.set_value(body.mass)
            self._mesh_path = spec.mesh if spec.shape == "mesh" else None
            if spec.shape == "mesh":
                self.unit.setCurrentText(spec.unit)
                self.given.setCurrentText(DENSITY_GIVEN if spec.density is not None else MASS_GIVEN)
                if spec.density is not None:
                    self.density.set_value(spec.density)
            if spec.shape in SIZE_LABELS:
                for f, v in zip(self.size_fields, spec.size):
                    f.set_value(v)
            else:  # custom and mesh bodies: show their tensor
                self._fill_inertia(body.inertia)
            self.allow_unphysical.setChecked(bool(spec.allow_unphysical))
            self._show_shape_fields(spec.shape)
            self._shown_shape = spec.shape
        finally:
            self._filling = False
        self.update_moments()

    def _fill_inertia(self, J: np.ndarray) -> None:
        scale = float(np.max(np.abs(J)))
        for f, v in zip(self.inertia_fields, (J[0, 0], J[1, 1], J[2, 2], J[1, 2], J[0, 2], J[0, 1])):
            f.set_value(0.0 if abs(v) <= ROUND_OFF * scale else v)  # a mesh's 3e-19 is round-off

    def _show_shape_fields(self, shape: str) -> None:
        custom, mesh = shape == "custom", shape == "mesh"
        for row in (self.mesh_label, self.mesh_button, self.unit, self.given, self.density):
            self._set_row_visible(row, mesh)
        self._set_row_visible(self.size_grid, shape in SIZE_LABELS)
        self._set_row_visible(self.inertia_grid, custom or mesh)  # a mesh's tensor is shown, not edited
        for f in self.inertia_fields:
            f.setReadOnly(mesh)
        self._set_row_visible(self.allow_unphysical, custom)
        self._show_given()
        labels = SIZE_LABELS.get(shape, ())
        for k in range(4):
            on = k < len(labels)
            self.size_fields[k].setVisible(on)
            self.size_labels[k].setVisible(on)
            if on:
                self.size_labels[k].setText(labels[k])
                self.size_fields[k].field = f"body.size[{k}] ({labels[k]})"

    # ------------------------------------------------------------------ reactions

    def _show_given(self) -> None:
        """Mass or density is the input of a mesh body; the other shows what follows."""
        by_density = self.shape.currentText() == "mesh" and self.given.currentText() == DENSITY_GIVEN
        self.mass.setEnabled(not by_density)
        self.density.setEnabled(by_density)

    def _edited(self, *_args) -> None:
        if self._filling:
            return
        self.update_moments()
        self.edited.emit()

    def _given_chosen(self, _index: int) -> None:
        self._show_given()
        self._edited()

    def _choose_another_mesh(self) -> None:
        if self.choose_mesh():
            self._edited()

    def choose_mesh(self) -> bool:
        """Ask for a mesh file and show its body (not applied yet); False if cancelled or if
        the file cannot be a body (then :attr:`refused` says why and nothing changes)."""
        path = open_path(self, "Open a mesh (the body is the uniform solid inside it)", MESH_FILTER)
        if not path:
            return False
        by_density = self.given.currentText() == DENSITY_GIVEN
        try:
            amount = (self.density if by_density else self.mass).value()
        except ParameterError:
            amount = 1000.0 if by_density else 1.0  # kg/m^3 (water), kg
        spec = BodySpec("mesh", None if by_density else amount, None, None, mesh=path, unit=self.unit.currentText(),
                        density=amount if by_density else None)
        try:
            spec.build()
        except ParameterError as err:
            self.refused.emit(err)
            return False
        self._mesh_path = path
        (self.density if by_density else self.mass).set_value(amount)
        return True

    def _shape_chosen(self, _index: int) -> None:
        shape = self.shape.currentText()
        if shape == "mesh" and not self.choose_mesh():
            self.shape.setCurrentText(self._previous_shape())  # cancelled or refused: as it was
            return
        try:
            current = self.spec(self._previous_shape()).build()
        except ParameterError:
            current = None
        note = ""
        if shape == "custom":
            if current is not None:
                self._fill_inertia(current.inertia)
        elif shape != "mesh":
            sizes = DEFAULT_SIZES[shape]
            if current is not None and shape in EQUIVALENT_SOLIDS:
                sizes, tilt = equivalent_sizes(current, shape)
                if tilt > TILT_NOTE_DEG:
                    note = (f"The {shape}'s axes are the body axes; the principal axes were up to {tilt:.0f}° "
                            f"from them, so its tensor is theirs turned onto the body axes.")
            for f, v in zip(self.size_fields, sizes):
                f.set_value(v)
        self.shape_note.setText(note)
        self.shape_note.setVisible(bool(note))
        self._shown_shape = shape
        self._show_shape_fields(shape)
        self._edited()

    def _previous_shape(self) -> str:
        if self._shown_shape is not None:
            return self._shown_shape
        return self._base.shape if self._base is not None else "box"

    def update_moments(self) -> None:
        """Show the principal moments of the body the fields describe."""
        try:
            body = self.spec().build()
        except ParameterError as err:
            self.moments.setText(f"principal moments: — ({err.field} not valid yet)")
            return
        if self.shape.currentText() == "mesh":
            self._show_mesh(body)
        self.body_built.emit(body)
        moments, axes = body.principal()
        distinct = has_intermediate_axis(moments)
        rows = []
        for k in range(3):
            a = axes[:, k]
            j = int(np.argmax(np.abs(a)))
            if abs(a[j]) > 1 - 1e-9:
                along = f"<span style='color:{tone(AXIS_HEX[j])}'>{'−' if a[j] < 0 else ''}body {'xyz'[j]}</span>"
            else:
                along = "[" + ", ".join(fixed(x, 2) for x in a) + "]"
            mark = " ← <b>intermediate</b> (unstable)" if k == 1 and distinct else ""
            rows.append(f"I{k + 1} = {moments[k]:.4g} along {along}{mark}")
        note = "" if distinct else "<br>two moments are equal: a symmetric body, no intermediate axis to flip about"
        self.moments.setText("principal moments (kg m²):<br>" + "<br>".join(rows) + note)

    def _show_mesh(self, body: Body) -> None:
        """The file, its size, the tensor and whichever of mass or density is not given."""
        spec = self.spec()
        extent = np.ptp(body.mesh_vertices, axis=0)
        size = " × ".join(f"{x:.3g}" for x in extent)
        large = max(extent) > LARGE_MESH_M
        self.mesh_label.setText(f"{Path(spec.mesh).name}: {size} m" + (" (is the unit right?)" if large else ""))
        self.mesh_label.setToolTip(spec.mesh)
        self._fill_inertia(body.inertia)
        if spec.density is not None:
            self.mass.set_value(body.mass)
        else:
            self.density.set_value(body.mass / load_mesh(spec.mesh, spec.unit).volume)

    # ------------------------------------------------------------------ collecting

    def spec(self, shape: str | None = None) -> BodySpec:
        """The body the fields describe (as ``shape`` if given); raises :class:`ParameterError`."""
        shape = shape or self.shape.currentText()
        base = self._base
        same = base is not None and base.shape == shape
        if shape == "mesh":
            if self._mesh_path is None:
                raise ParameterError("body.mesh", None, "be chosen for shape = \"mesh\" (Choose mesh file…)")
            by_density = self.given.currentText() == DENSITY_GIVEN
            return BodySpec("mesh", None if by_density else self.mass.value(), None, None, mesh=self._mesh_path,
                            unit=self.unit.currentText(), density=self.density.value() if by_density else None)
        mass = self.mass.value()
        if shape == "custom":
            inertia = tuple(f.value() for f in self.inertia_fields)
            if same:  # keeps the reference point (center_of_mass) of the scenario
                return dataclasses.replace(base, mass=mass, inertia=inertia,
                                           allow_unphysical=self.allow_unphysical.isChecked())
            return BodySpec("custom", mass, None, inertia, self.allow_unphysical.isChecked())
        n = len(SIZE_LABELS[shape])
        return BodySpec(shape, mass, tuple(f.value() for f in self.size_fields[:n]), None, False)
