"""The parameter panel: preset picker, body, initial spin and velocity, gravity, loads, solver.

Edits are collected into a new :class:`~app.scenario.Scenario` on Apply or Enter; a value the
scenario refuses is shown inline with its reason, and the running simulation keeps its last
valid parameters. GUI thread only.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from PyQt5.QtCore import Qt, pyqtSignal
from PyQt5.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..physics.body import equivalent_box_size, has_intermediate_axis
from ..physics.errors import ParameterError
from ..physics.integrators import DESCRIPTIONS, INTEGRATORS
from ..scenario import SHAPES, BodySpec, LoadSpec, Scenario, SolverSpec, load, preset_names
from ..scenario.schema import MAX_MAGNITUDE
from ..simulation import check_runnable
from ..scene.style import AXIS_HEX
from .gyro_editor import GyroEditor

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
CUSTOM_PRESET = "(edited)"
#: standard gravity used when gravity is switched on with a zero vector (m/s^2)
STANDARD_GRAVITY = (0.0, 0.0, -9.81)
LOAD_COLUMNS = ("kind", "frame", "vx", "vy", "vz", "px", "py", "pz")
#: what the columns hold on a drag row (its field names in error messages)
DRAG_COLUMNS = ("kind", "model", "coefficients[0]", "coefficients[1]", "coefficients[2]")
#: column headers: a drag row puts its model in the frame column, its coefficients in v
LOAD_HEADERS = ("kind", "frame | model", "vx | cx", "vy | cy", "vz | cz", "px", "py", "pz")
LOAD_KIND_CHOICES = ("torque", "force", "drag")
DRAG_MODEL_CHOICES = ("linear", "quadratic")


def fmt(x: float) -> str:
    return f"{x:.6g}"


class NumberField(QLineEdit):
    """A line edit holding one number; ``field`` names it in error messages."""

    def __init__(self, field: str, tooltip: str = "", parent=None):
        super().__init__(parent)
        self.field = field
        self.setToolTip(tooltip or field)
        self.setMinimumWidth(58)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)

    def set_value(self, value: float) -> None:
        self.setText(fmt(float(value)))

    def value(self) -> float:
        text = self.text().strip()
        try:
            v = float(text)
        except ValueError:
            raise ParameterError(self.field, text, "be a number") from None
        if not math.isfinite(v):
            raise ParameterError(self.field, text, "be finite")
        if abs(v) > MAX_MAGNITUDE:  # the rule of scenario files
            raise ParameterError(self.field, text, f"be at most {MAX_MAGNITUDE:g} in magnitude")
        return v


def _vector_row(fields) -> QWidget:
    row = QWidget()
    lay = QHBoxLayout(row)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(4)
    for f in fields:
        lay.addWidget(f)
    return row


def _hint(text: str) -> QLabel:
    label = QLabel(text)
    label.setObjectName("hint")
    label.setWordWrap(True)
    return label


class ParameterPanel(QWidget):
    """Edits a scenario. Emits :attr:`scenario_applied` with a validated scenario.

    Signals (GUI thread): ``scenario_applied(Scenario)`` when Apply/Enter or a preset
    produced a runnable scenario; ``repeat_changed(bool)`` for the repeat toggle.
    """

    scenario_applied = pyqtSignal(object)
    repeat_changed = pyqtSignal(bool)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._scenario: Scenario | None = None
        self._scenario_preset: str | None = None
        self._filling = False
        self._all_fields: list[NumberField] = []
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        inner = QWidget()
        self._layout = QVBoxLayout(inner)
        self._layout.setContentsMargins(2, 2, 6, 2)
        scroll.setWidget(inner)
        outer.addWidget(scroll, 1)
        self._build_preset()
        self._build_body()
        self._build_spin()
        self._build_motion()
        self._build_loads()
        self._build_solver()
        self._layout.addStretch(1)
        self._build_buttons(outer)

    # ------------------------------------------------------------------ building

    def _field(self, name: str, tooltip: str = "") -> NumberField:
        f = NumberField(name, tooltip)
        f.returnPressed.connect(self.apply)
        f.textEdited.connect(self._edited)
        self._all_fields.append(f)
        return f

    def _build_preset(self) -> None:
        box = QGroupBox("Scenario")
        lay = QVBoxLayout(box)
        self.preset = QComboBox()
        self.preset.addItems(preset_names())
        self.preset.setToolTip("Load a shipped preset (restarts the run)")
        self.preset.activated.connect(self._preset_chosen)
        lay.addWidget(self.preset)
        self.description = _hint("")
        lay.addWidget(self.description)
        self._layout.addWidget(box)

    def _build_body(self) -> None:
        box = QGroupBox("Body")
        form = self._body_form = QFormLayout(box)
        form.setLabelAlignment(Qt.AlignRight)
        self.shape = QComboBox()
        self.shape.addItems(SHAPES)
        self.shape.setToolTip("custom: give the inertia tensor; drawn as the box with the same principal moments")
        self.shape.activated.connect(self._shape_chosen)
        form.addRow("shape", self.shape)
        self.mass = self._field("body.mass", "mass (kg)")
        form.addRow("mass (kg)", self.mass)
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
        self.mesh_label = _hint("")
        form.addRow(self.mesh_label)
        self.allow_unphysical = QCheckBox("allow I1 + I2 < I3 (unphysical)")
        self.allow_unphysical.toggled.connect(self._edited)
        form.addRow("", self.allow_unphysical)
        self.moments = QLabel()
        self.moments.setObjectName("moments")
        self.moments.setTextFormat(Qt.RichText)
        self.moments.setWordWrap(True)
        form.addRow(self.moments)
        self.gyro = GyroEditor(self._field)  # damper and rotor (app/gui/gyro_editor.py)
        self.gyro.edited.connect(self._edited)
        self.gyro.apply_requested.connect(self.apply)
        form.addRow(self.gyro)
        self._layout.addWidget(box)

    def _build_spin(self) -> None:
        box = QGroupBox("Initial angular velocity ω (body frame)")
        form = QFormLayout(box)
        form.setLabelAlignment(Qt.AlignRight)
        self.omega = [self._field(f"initial.angular_velocity[{k}]", f"ω{'xyz'[k]} (rad/s, body frame)")
                      for k in range(3)]
        form.addRow("ω (rad/s)", _vector_row(self.omega))
        self.spin_axis = QComboBox()
        self.spin_axis.addItems(["axis 1 (smallest I)", "axis 2 (intermediate I)", "axis 3 (largest I)"])
        self.spin_axis.setCurrentIndex(1)
        self.spin_rate = self._field("spin rate", "rate of the helper's spin (rad/s)")
        self.spin_rate.set_value(6.0)
        self.spin_tilt = self._field("tilt", "tilt of the spin axis towards the next principal axis (degrees)")
        self.spin_tilt.set_value(2.0)
        helper = QWidget()
        grid = QGridLayout(helper)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(QLabel("spin about"), 0, 0)
        grid.addWidget(self.spin_axis, 0, 1, 1, 3)
        grid.addWidget(QLabel("rate (rad/s)"), 1, 0)
        grid.addWidget(self.spin_rate, 1, 1)
        grid.addWidget(QLabel("tilt (°)"), 1, 2)
        grid.addWidget(self.spin_tilt, 1, 3)
        fill = QPushButton("Set ω from principal axis")
        fill.setToolTip("ω = rate (cos tilt · e_k + sin tilt · e_k+1), e = principal axes of the body")
        fill.clicked.connect(self._fill_spin)
        grid.addWidget(fill, 2, 0, 1, 4)
        form.addRow(helper)
        self._layout.addWidget(box)

    def _build_motion(self) -> None:
        box = QGroupBox("Motion of the centre of mass, gravity")
        form = QFormLayout(box)
        form.setLabelAlignment(Qt.AlignRight)
        self.velocity = [self._field(f"initial.velocity[{k}]", f"v{'xyz'[k]} (m/s, world)") for k in range(3)]
        form.addRow("v₀ (m/s)", _vector_row(self.velocity))
        self.gravity_on = QCheckBox("gravity")
        self.gravity_on.toggled.connect(self._gravity_toggled)
        form.addRow(self.gravity_on)
        self.gravity = [self._field(f"world.gravity[{k}]", f"g{'xyz'[k]} (m/s², world)") for k in range(3)]
        form.addRow("g (m/s²)", _vector_row(self.gravity))
        self._layout.addWidget(box)

    def _build_loads(self) -> None:
        box = QGroupBox("Applied loads")
        lay = QVBoxLayout(box)
        self.loads = QTableWidget(0, len(LOAD_COLUMNS))
        self.loads.setHorizontalHeaderLabels(LOAD_HEADERS)
        # columns as wide as their contents (numbers such as 0.0005 stay readable); the
        # table scrolls sideways when the panel is narrow
        self.loads.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.loads.horizontalHeader().setStretchLastSection(True)
        self.loads.verticalHeader().setVisible(False)
        self.loads.setMinimumHeight(70)
        self.loads.setMaximumHeight(140)
        self.loads.setToolTip("torque: vector in N m; force: vector in N applied at body point p (m); "
                              "frame: the frame the vector is fixed in; drag: torque -c_i ω_i (linear, c in N m s) "
                              "or -c_i |ω| ω_i (quadratic, N m s²) about body axes x, y, z")
        self.loads.itemChanged.connect(self._edited)
        lay.addWidget(self.loads)
        buttons = QHBoxLayout()
        add_t = QPushButton("+ torque")
        add_t.clicked.connect(lambda: self._add_load_row(LoadSpec("torque")) or self._edited())
        add_f = QPushButton("+ force")
        add_f.clicked.connect(lambda: self._add_load_row(LoadSpec("force")) or self._edited())
        add_d = QPushButton("+ drag")
        add_d.setToolTip("a drag torque opposing the spin, per body axis")
        add_d.clicked.connect(lambda: self._add_load_row(LoadSpec("drag")) or self._edited())
        remove = QPushButton("remove")
        remove.clicked.connect(self._remove_load_row)
        for b in (add_t, add_f, add_d, remove):
            buttons.addWidget(b)
        lay.addLayout(buttons)
        self._layout.addWidget(box)

    def _build_solver(self) -> None:
        box = QGroupBox("Solver")
        form = QFormLayout(box)
        form.setLabelAlignment(Qt.AlignRight)
        self.integrator = QComboBox()
        for k, name in enumerate(INTEGRATORS):
            self.integrator.addItem(name)
            self.integrator.setItemData(k, DESCRIPTIONS.get(name, name), Qt.ToolTipRole)
        self.integrator.activated.connect(self._edited)
        form.addRow("integrator", self.integrator)
        self.dt = self._field("solver.dt", "time step (s); for dop853 its largest step")
        form.addRow("dt (s)", self.dt)
        self.duration = self._field("solver.duration", "length of one run (s)")
        form.addRow("duration (s)", self.duration)
        self.repeat = QCheckBox("restart the run at its duration")
        self.repeat.setChecked(True)
        self.repeat.toggled.connect(self.repeat_changed)
        form.addRow(self.repeat)
        self._layout.addWidget(box)

    def _build_buttons(self, outer: QVBoxLayout) -> None:
        self.status = QLabel("")
        self.status.setObjectName("hint")
        self.status.setWordWrap(True)
        self.error = QLabel("")
        self.error.setObjectName("error")
        self.error.setWordWrap(True)
        self.error.setTextInteractionFlags(Qt.TextSelectableByMouse)
        outer.addWidget(self.error)
        outer.addWidget(self.status)
        row = QHBoxLayout()
        self.revert_button = QPushButton("Revert")
        self.revert_button.setToolTip("Back to the parameters of the running simulation")
        self.revert_button.clicked.connect(self.revert)
        self.apply_button = QPushButton("Apply")
        self.apply_button.setDefault(True)
        self.apply_button.setToolTip("Restart the run with these parameters (Enter in any field)")
        self.apply_button.clicked.connect(self.apply)
        row.addWidget(self.revert_button)
        row.addWidget(self.apply_button)
        outer.addLayout(row)

    # ------------------------------------------------------------------ filling

    @property
    def preset_name(self) -> str | None:
        """The preset the running scenario is, unedited, or None."""
        return self._scenario_preset

    @property
    def scenario(self) -> Scenario | None:
        """The last applied (running) scenario."""
        return self._scenario

    def set_scenario(self, sc: Scenario, preset: str | None = None) -> None:
        """Show ``sc`` as the running scenario (no signal emitted)."""
        self._scenario = sc
        self._scenario_preset = preset
        self._filling = True
        try:
            idx = self.preset.findText(preset) if preset else -1
            if idx < 0:
                if self.preset.findText(CUSTOM_PRESET) < 0:
                    self.preset.addItem(CUSTOM_PRESET)
                idx = self.preset.findText(CUSTOM_PRESET)
            self.preset.setCurrentIndex(idx)
            self.description.setText(f"<b>{sc.name}</b>: {sc.description}" if sc.description else f"<b>{sc.name}</b>")
            self.shape.setCurrentText(sc.body.shape)
            self.mass.set_value(sc.rigid_body.mass)
            self.mass.setEnabled(not (sc.body.shape == "mesh" and sc.body.mass is None))
            self.mesh_label.setText(f"mesh file: {sc.body.mesh}" if sc.body.shape == "mesh" else "")
            if sc.body.shape in SIZE_LABELS:
                for f, v in zip(self.size_fields, sc.body.size):
                    f.set_value(v)
            else:  # custom and mesh bodies: show their tensor (edits switch a mesh to custom)
                self._fill_inertia(sc.rigid_body.inertia)
            self.allow_unphysical.setChecked(bool(sc.body.allow_unphysical))
            self.gyro.set_scenario(sc)
            for f, v in zip(self.omega, sc.angular_velocity):
                f.set_value(v)
            for f, v in zip(self.velocity, sc.velocity):
                f.set_value(v)
            gravity_on = any(g != 0 for g in sc.gravity)
            self.gravity_on.setChecked(gravity_on)
            for f, v in zip(self.gravity, sc.gravity if gravity_on else STANDARD_GRAVITY):
                f.set_value(v)
            self._set_gravity_enabled(gravity_on)
            self.loads.setRowCount(0)
            for spec in sc.loads:
                self._add_load_row(spec)
            self.integrator.setCurrentText(sc.solver.integrator)
            self.dt.set_value(sc.solver.dt)
            self.duration.set_value(sc.solver.duration)
            self._show_shape_fields(sc.body.shape)
            self._shown_shape = sc.body.shape
        finally:
            self._filling = False
        self._set_clean()
        self._update_moments()

    def _fill_inertia(self, J: np.ndarray) -> None:
        for f, v in zip(self.inertia_fields, (J[0, 0], J[1, 1], J[2, 2], J[1, 2], J[0, 2], J[0, 1])):
            f.set_value(v)

    def _show_shape_fields(self, shape: str) -> None:
        custom = shape == "custom"
        self.mesh_label.setVisible(shape == "mesh")
        self.size_grid.setVisible(shape in SIZE_LABELS)
        self.inertia_grid.setVisible(custom)
        self.allow_unphysical.setVisible(custom)
        for w in (self.size_grid, self.inertia_grid):
            label = self._body_form.labelForField(w)
            if label is not None:
                label.setVisible(not w.isHidden())
        labels = SIZE_LABELS.get(shape, ())
        for k in range(4):
            on = k < len(labels)
            self.size_fields[k].setVisible(on)
            self.size_labels[k].setVisible(on)
            if on:
                self.size_labels[k].setText(labels[k])
                self.size_fields[k].field = f"body.size[{k}] ({labels[k]})"

    def _add_load_row(self, spec: LoadSpec) -> None:
        r = self.loads.rowCount()
        self.loads.insertRow(r)
        self._fill_load_row(r, spec)

    def _fill_load_row(self, r: int, spec: LoadSpec) -> None:
        """Show ``spec`` in row ``r``: a drag row has a model choice and coefficients, and
        no point."""
        drag = spec.kind == "drag"
        self.loads.blockSignals(True)
        kind = QComboBox()
        kind.addItems(LOAD_KIND_CHOICES)
        kind.setCurrentText(spec.kind)
        kind.activated.connect(lambda _i, combo=kind: self._load_kind_chosen(combo))
        self.loads.setCellWidget(r, 0, kind)
        second = QComboBox()
        second.addItems(DRAG_MODEL_CHOICES if drag else ("body", "world"))
        second.setCurrentText(spec.model if drag else spec.frame)
        second.setToolTip("linear: N m s; quadratic: N m s² (coefficients in the body frame)" if drag
                          else "the frame the vector is fixed in")
        second.activated.connect(self._edited)
        self.loads.setCellWidget(r, 1, second)
        values = spec.coefficients if drag else spec.vector
        for k in range(3):
            item = QTableWidgetItem(fmt(values[k]))
            if drag:
                item.setToolTip(f"drag coefficient about body {'xyz'[k]} (≥ 0)")
            self.loads.setItem(r, 2 + k, item)
            point = QTableWidgetItem("" if drag else fmt(spec.point[k]))
            if drag:  # a drag acts about the centre of mass: no point
                point.setFlags(point.flags() & ~(Qt.ItemIsEditable | Qt.ItemIsEnabled))
            self.loads.setItem(r, 5 + k, point)
        self.loads.blockSignals(False)

    def _load_kind_chosen(self, combo: QComboBox) -> None:
        """Re-lay the row of ``combo`` for the kind chosen, keeping its three numbers."""
        for r in range(self.loads.rowCount()):
            if self.loads.cellWidget(r, 0) is combo:
                break
        else:
            return
        kind = combo.currentText()
        numbers = []
        for c in range(2, 5):
            try:
                numbers.append(float(self.loads.item(r, c).text()))
            except (AttributeError, ValueError):
                numbers.append(0.0)
        numbers = tuple(numbers)
        spec = LoadSpec("drag", coefficients=numbers) if kind == "drag" else LoadSpec(kind, vector=numbers)
        self._fill_load_row(r, spec)
        self._edited()

    def _remove_load_row(self) -> None:
        r = self.loads.currentRow()
        if r < 0:
            r = self.loads.rowCount() - 1
        if r >= 0:
            self.loads.removeRow(r)
            self._edited()

    # ------------------------------------------------------------------ reactions

    def _edited(self, *_args) -> None:
        if self._filling:
            return
        self.status.setText("Edited: press Apply or Enter to restart with these values")
        if self.preset.currentText() != CUSTOM_PRESET:
            if self.preset.findText(CUSTOM_PRESET) < 0:
                self.preset.addItem(CUSTOM_PRESET)
            self.preset.setCurrentText(CUSTOM_PRESET)
        self._update_moments()

    def _set_clean(self) -> None:
        self.status.setText("")
        self.error.setText("")
        for f in self._all_fields:
            f.setProperty("invalid", False)
            f.style().unpolish(f)
            f.style().polish(f)

    def _preset_chosen(self, index: int) -> None:
        name = self.preset.itemText(index)
        if name == CUSTOM_PRESET:
            return
        sc = load(name)
        self.set_scenario(sc, preset=name)
        self.scenario_applied.emit(sc)

    def _shape_chosen(self, _index: int) -> None:
        shape = self.shape.currentText()
        try:
            current = self._body_from_fields(self._previous_shape()).build()
        except ParameterError:
            current = None
        if shape == "custom":
            if current is not None:
                self._fill_inertia(current.inertia)
        else:
            n = len(SIZE_LABELS[shape])
            sizes = DEFAULT_SIZES[shape]
            if current is not None and n == 3 and shape in ("box", "ellipsoid"):
                moments, _ = current.principal()
                box = equivalent_box_size(current.mass, moments)
                sizes = tuple(box if shape == "box" else box / 2)
            for f, v in zip(self.size_fields, sizes):
                f.set_value(v)
        self._shown_shape = shape
        self._show_shape_fields(shape)
        self._edited()

    def _previous_shape(self) -> str:
        return getattr(self, "_shown_shape", self._scenario.body.shape if self._scenario else "box")

    def _gravity_toggled(self, on: bool) -> None:
        self._set_gravity_enabled(on)
        if on and all(f.text().strip() in ("0", "") for f in self.gravity):
            for f, v in zip(self.gravity, STANDARD_GRAVITY):
                f.set_value(v)
        self._edited()

    def _set_gravity_enabled(self, on: bool) -> None:
        for f in self.gravity:
            f.setEnabled(on)

    def _fill_spin(self) -> None:
        try:
            body = self._body_from_fields().build()
            rate = self.spin_rate.value()
            tilt = math.radians(self.spin_tilt.value())
        except ParameterError as err:
            self._show_error(err)
            return
        _, axes = body.principal()
        k = self.spin_axis.currentIndex()
        w = rate * (math.cos(tilt) * axes[:, k] + math.sin(tilt) * axes[:, (k + 1) % 3])
        for f, v in zip(self.omega, w):
            f.set_value(0.0 if abs(v) < 1e-12 * abs(rate) else v)
        self._edited()

    def _update_moments(self) -> None:
        try:
            body = self._body_from_fields().build()
        except ParameterError as err:
            self.moments.setText(f"principal moments: — ({err.field} not valid yet)")
            return
        moments, axes = body.principal()
        distinct = has_intermediate_axis(moments)
        rows = []
        for k in range(3):
            a = axes[:, k]
            j = int(np.argmax(np.abs(a)))
            if abs(a[j]) > 1 - 1e-9:
                along = f"<span style='color:{AXIS_HEX[j]}'>{'−' if a[j] < 0 else ''}body {'xyz'[j]}</span>"
            else:
                along = "[" + ", ".join(f"{x:.2f}" for x in a) + "]"
            mark = " ← <b>intermediate</b> (unstable)" if k == 1 and distinct else ""
            rows.append(f"I{k + 1} = {moments[k]:.4g} along {along}{mark}")
        note = "" if distinct else "<br>two moments are equal: a symmetric body, no intermediate axis to flip about"
        self.moments.setText("principal moments (kg m²):<br>" + "<br>".join(rows) + note)

    # ------------------------------------------------------------------ collecting

    def _body_from_fields(self, shape: str | None = None) -> BodySpec:
        shape = shape or self.shape.currentText()
        base = self._scenario.body if self._scenario is not None else None
        same = base is not None and base.shape == shape
        if shape == "mesh":
            if not same:
                raise ParameterError("body.mesh", None, "be given for shape = \"mesh\" (open a scenario file that names one)")
            if base.mass is None:  # mass from density: the field shows it but is not editable
                return base
            return dataclasses.replace(base, mass=self.mass.value())
        mass = self.mass.value()
        if shape == "custom":
            inertia = tuple(f.value() for f in self.inertia_fields)
            if same:  # keeps the reference point (center_of_mass) of the scenario
                return dataclasses.replace(base, mass=mass, inertia=inertia,
                                           allow_unphysical=self.allow_unphysical.isChecked())
            return BodySpec("custom", mass, None, inertia, self.allow_unphysical.isChecked())
        n = len(SIZE_LABELS[shape])
        return BodySpec(shape, mass, tuple(f.value() for f in self.size_fields[:n]), None, False)

    def _loads_from_table(self) -> tuple:
        specs = []
        for r in range(self.loads.rowCount()):
            kind = self.loads.cellWidget(r, 0).currentText()
            frame = self.loads.cellWidget(r, 1).currentText()
            names = DRAG_COLUMNS if kind == "drag" else LOAD_COLUMNS
            nums = []
            for c in range(2, 5 if kind == "drag" else 8):
                item = self.loads.item(r, c)
                text = item.text().strip() if item else ""
                try:
                    nums.append(float(text))
                except ValueError:
                    raise ParameterError(f"loads[{r}].{names[c]}", text, "be a number") from None
            if kind == "drag":
                specs.append(LoadSpec("drag", model=frame, coefficients=tuple(nums)))
                continue
            specs.append(LoadSpec(kind, frame, tuple(nums[:3]), tuple(nums[3:]) if kind == "force" else (0.0, 0.0, 0.0)))
        return tuple(specs)

    def build(self) -> Scenario:
        """The scenario the fields describe; raises :class:`ParameterError` naming the field."""
        base = self._scenario or Scenario()
        body = self.gyro.apply_to(self._body_from_fields())
        body.build()
        omega = tuple(f.value() for f in self.omega)
        velocity = tuple(f.value() for f in self.velocity)
        gravity = tuple(f.value() for f in self.gravity) if self.gravity_on.isChecked() else (0.0, 0.0, 0.0)
        solver = SolverSpec(self.integrator.currentText(), self.dt.value(), self.duration.value(),
                            base.solver.rtol, base.solver.atol)
        solver.validate()
        sc = base.replace(body=body, angular_velocity=omega, velocity=velocity, gravity=gravity,
                          loads=self._loads_from_table(), solver=solver,
                          damper_angular_velocity=self.gyro.damper_rate(base, body))
        check_runnable(sc)
        return sc

    def apply(self) -> bool:
        """Validate and emit :attr:`scenario_applied`; on error show it and keep the run."""
        try:
            sc = self.build()
        except ParameterError as err:
            self._show_error(err)
            return False
        preset = self.preset.currentText()
        if sc != self._scenario:
            preset = CUSTOM_PRESET
            if not sc.name.endswith("(edited)"):
                sc = sc.replace(name=f"{sc.name} (edited)")
        self.set_scenario(sc, preset=preset if preset != CUSTOM_PRESET else None)
        self.scenario_applied.emit(sc)
        return True

    def revert(self) -> None:
        """Back to the running scenario's values."""
        if self._scenario is not None:
            self.set_scenario(self._scenario, preset=self._scenario_preset)

    def _show_error(self, err: ParameterError) -> None:
        self.error.setText(f"Not applied: {err}. The simulation keeps its previous parameters.")
        self.status.setText("")
        exact = [f for f in self._all_fields if f.field == err.field]
        base = err.field.split("[")[0]
        for f in self._all_fields:
            bad = f in exact if exact else f.field.split("[")[0] == base
            f.setProperty("invalid", bool(bad))
            f.style().unpolish(f)
            f.style().polish(f)
