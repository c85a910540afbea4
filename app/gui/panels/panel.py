"""The parameter panel: preset picker, body, initial spin and velocity, gravity, loads, solver.

Edits are collected into a new :class:`~app.scenario.Scenario` on Apply or Enter; a value the
scenario refuses is shown inline with its reason, and the running simulation keeps its last
valid parameters. GUI thread only.
"""

from __future__ import annotations

import html
import math
from pathlib import Path

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
    QPushButton,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...physics.errors import ParameterError
from ...physics.integrators import DESCRIPTIONS, INTEGRATORS
from ...scenario import LoadSpec, Scenario, SolverSpec, dumps, load, loads_toml, preset_names
from ...scenario.document import number_from_text
from ...simulation import check_runnable
from .body_editor import BodyEditor
from .describe import axis_names, spin_of, spin_summary
from .fields import NumberField, WheelGuard, fmt, hint, vector_row
from .gyro_editor import GyroEditor

#: added to the name of a scenario the panel changed
EDITED = "(edited)"
#: characters the scenario picker is sized for; a longer name is cut in the box (shown whole in its list)
PICKER_CHARS = 16
#: standard gravity used when gravity is switched on with a zero vector (m/s^2)
STANDARD_GRAVITY = (0.0, 0.0, -9.81)
LOAD_COLUMNS = ("kind", "frame", "vx", "vy", "vz", "px", "py", "pz")
#: what the columns hold on a drag row (its field names in error messages)
DRAG_COLUMNS = ("kind", "model", "coefficients[0]", "coefficients[1]", "coefficients[2]")
#: column headers: a drag row puts its model in the frame column, its coefficients in v
LOAD_HEADERS = ("kind", "frame | model", "vx | cx", "vy | cy", "vz | cz", "px", "py", "pz")
LOAD_KIND_CHOICES = ("torque", "force", "drag")
DRAG_MODEL_CHOICES = ("linear", "quadratic")


def edited_name(name: str) -> str:
    """The name of a scenario the panel changed: "T-handle" -> "T-handle (edited)"."""
    return name if name.endswith(EDITED) else f"{name} {EDITED}"


class ParameterPanel(QWidget):
    """Edits a scenario. Emits :attr:`scenario_applied` with a validated scenario.

    Signals (GUI thread): ``scenario_applied(Scenario)`` when Apply/Enter or a preset
    produced a runnable scenario.
    """

    scenario_applied = pyqtSignal(object)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._scenario: Scenario | None = None
        self._scenario_preset: str | None = None
        self._source: str | None = None
        self._filling = False
        self._all_fields: list[NumberField] = []
        self._wheel_guard = WheelGuard(self)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        scroll = self.scroll = QScrollArea()
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
        self._wheel_guard.guard(self)  # fields take the wheel only when focused

    # ------------------------------------------------------------------ building

    def _field(self, name: str, tooltip: str = "", *, on_enter=None, scenario: bool = True) -> NumberField:
        """A number field; Enter applies (or calls ``on_enter``); editing it marks the
        scenario edited unless it is not part of the scenario (the spin helper's)."""
        f = NumberField(name, tooltip)
        f.returnPressed.connect(on_enter or self.apply)
        if scenario:
            f.textEdited.connect(self._edited)
        self._all_fields.append(f)
        return f

    def _build_preset(self) -> None:
        box = QGroupBox("Scenario")
        lay = QVBoxLayout(box)
        self.preset = QComboBox()
        # a long scenario name (a fitted flight's) is cut in the box, not a reason to widen the
        # panel until its inertia columns are clipped; the list shows it whole
        self.preset.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.preset.setMinimumContentsLength(PICKER_CHARS)
        self.preset.addItems(preset_names())
        self._preset_count = self.preset.count()  # then at most one entry: the scenario that is no preset
        self.preset.setToolTip("Load a shipped preset (restarts the run)")
        self.preset.activated.connect(self._preset_chosen)
        lay.addWidget(self.preset)
        self.description = hint("")
        self.description.setTextFormat(Qt.RichText)
        lay.addWidget(self.description)
        self._layout.addWidget(box)

    def _build_body(self) -> None:
        self.body_editor = BodyEditor()
        self.body_editor.edited.connect(self._edited)
        self.body_editor.apply_requested.connect(self.apply)
        self.body_editor.refused.connect(self._show_error)
        self.body_editor.body_built.connect(self._name_spin_axes)
        self._all_fields.extend(self.body_editor.fields)
        # the fields tests and callers reach through the panel
        for name in ("shape", "mass", "size_fields", "inertia_fields", "mesh_label", "moments"):
            setattr(self, name, getattr(self.body_editor, name))
        self._layout.addWidget(self.body_editor)
        self.gyro = GyroEditor(self._field)  # damper and rotor (app/gui/gyro_editor.py)
        self.gyro.edited.connect(self._edited)
        self.gyro.apply_requested.connect(self.apply)
        self.body_editor.add_row(self.gyro)

    def _build_spin(self) -> None:
        box = QGroupBox("Initial angular velocity ω (body frame)")
        form = QFormLayout(box)
        form.setLabelAlignment(Qt.AlignRight)
        self.omega = [self._field(f"initial.angular_velocity[{k}]", f"ω{'xyz'[k]} (rad/s, body frame)")
                      for k in range(3)]
        form.addRow("ω (rad/s)", vector_row(self.omega))
        self.spin_axis = QComboBox()
        self.spin_axis.addItems(axis_names((1.0, 2.0, 3.0)))
        self.spin_axis.setCurrentIndex(1)
        self.spin_axis.setToolTip("The principal axis the helper spins about (the scenario's, when it is loaded)")
        self.spin_axis.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)  # never widens the panel
        self.spin_axis.setMinimumContentsLength(12)
        self.spin_rate = self._field("spin rate", "rate of the helper's spin (rad/s)", on_enter=self._fill_spin,
                                     scenario=False)
        self.spin_tilt = self._field("tilt", "tilt of the spin axis towards the next principal axis (degrees)",
                                     on_enter=self._fill_spin, scenario=False)
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
        form.addRow("v₀ (m/s)", vector_row(self.velocity))
        self.gravity_on = QCheckBox("gravity")
        self.gravity_on.toggled.connect(self._gravity_toggled)
        form.addRow(self.gravity_on)
        self.gravity = [self._field(f"world.gravity[{k}]", f"g{'xyz'[k]} (m/s², world)") for k in range(3)]
        form.addRow("g (m/s²)", vector_row(self.gravity))
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

    @property
    def display_name(self) -> str:
        """The running scenario's name, with the file it came from (the window's title)."""
        if self._scenario is None:
            return ""
        return self._scenario.name + (f" ({Path(self._source).name})" if self._source else "")

    def set_scenario(self, sc: Scenario, preset: str | None = None, source: str | None = None) -> None:
        """Show ``sc`` as the running scenario (no signal emitted): ``preset`` is the name of
        the preset it is, unedited, ``source`` the TOML file it was read from, unedited.

        Every text about it is derived here from ``sc`` itself: the picker shows the preset or
        the scenario's name, the description its file's prose only while it is what that file
        says (a preset or an opened file), then what its spin does from the closed form; the
        spin helper starts from its omega0.
        """
        self._scenario = sc
        self._scenario_preset = preset
        self._source = source
        self._filling = True
        try:
            if preset is not None and 0 <= self.preset.findText(preset) < self._preset_count:
                self._show_in_picker(preset)
                self._drop_other_entry()
            else:
                self._show_in_picker(self.display_name, other=True)
            prose = sc.description if (preset is not None or source is not None) else ""
            name, prose = html.escape(sc.name, quote=False), html.escape(prose, quote=False)
            self.description.setText((f"<b>{name}</b>: {prose}" if prose else f"<b>{name}</b>")
                                     + "<br>" + html.escape(spin_summary(sc), quote=False))
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
        finally:
            self._filling = False
        self.body_editor.show_body(sc.body, sc.rigid_body)
        self._set_clean()
        self._follow_spin(sc)

    def _show_in_picker(self, text: str, other: bool = False) -> None:
        """Select ``text`` in the preset picker; ``other``: in the one entry after the presets
        (the scenario's name, edited or from a file), made or renamed as needed."""
        if not other:
            self.preset.setCurrentIndex(self.preset.findText(text))
            return
        if self.preset.count() == self._preset_count:
            self.preset.addItem(text)
        self.preset.setItemText(self._preset_count, text)
        self.preset.setCurrentIndex(self._preset_count)

    def _drop_other_entry(self) -> None:
        while self.preset.count() > self._preset_count:
            self.preset.removeItem(self._preset_count)

    def _follow_spin(self, sc: Scenario) -> None:
        """The spin helper starts from the scenario's spin: its axis, rate and tilt."""
        spin = spin_of(sc.rigid_body, sc.angular_velocity)
        if spin.rate > 0:
            self.spin_axis.setCurrentIndex(spin.axis)
            self.spin_rate.set_value(spin.rate)
            self.spin_tilt.set_value(spin.tilt_deg)

    def _name_spin_axes(self, body) -> None:
        """Name the helper's axes for the body the fields describe (symmetric or not)."""
        for k, name in enumerate(axis_names(body.principal()[0])):
            self.spin_axis.setItemText(k, name)

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
        self._wheel_guard.guard(kind)
        self.loads.setCellWidget(r, 0, kind)
        second = QComboBox()
        second.addItems(DRAG_MODEL_CHOICES if drag else ("body", "world"))
        second.setCurrentText(spec.model if drag else spec.frame)
        second.setToolTip("linear: N m s; quadratic: N m s² (coefficients in the body frame)" if drag
                          else "the frame the vector is fixed in")
        second.activated.connect(self._edited)
        self._wheel_guard.guard(second)
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
        if self._scenario is not None:
            self._show_in_picker(edited_name(self._scenario.name), other=True)
        if self.error.text():  # a refused edit is shown: follow its correction as it is typed
            try:
                self.build()
            except ParameterError as err:
                self._show_error(err)
            else:
                self._mark_invalid([])
                self.error.setText("")

    def _set_clean(self) -> None:
        self.status.setText("")
        self.error.setText("")
        self._mark_invalid([])

    def _mark_invalid(self, fields) -> None:
        """Outline ``fields`` in red, and only them."""
        for f in self._all_fields:
            if bool(f.property("invalid")) != (f in fields):
                f.setProperty("invalid", f in fields)
                f.style().unpolish(f)
                f.style().polish(f)

    def _preset_chosen(self, index: int) -> None:
        if index >= self._preset_count:
            return
        name = self.preset.itemText(index)
        sc = load(name)
        self.set_scenario(sc, preset=name)
        self.scenario_applied.emit(sc)

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
            body = self.body_editor.spec().build()
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

    # ------------------------------------------------------------------ collecting

    def _loads_from_table(self) -> tuple:
        specs = []
        for r in range(self.loads.rowCount()):
            kind = self.loads.cellWidget(r, 0).currentText()
            frame = self.loads.cellWidget(r, 1).currentText()
            names = DRAG_COLUMNS if kind == "drag" else LOAD_COLUMNS
            nums = []
            for c in range(2, 5 if kind == "drag" else 8):
                item = self.loads.item(r, c)
                nums.append(number_from_text(item.text() if item else "", f"loads[{r}].{names[c]}"))
            if kind == "drag":
                specs.append(LoadSpec("drag", model=frame, coefficients=tuple(nums)))
                continue
            specs.append(LoadSpec(kind, frame, tuple(nums[:3]), tuple(nums[3:]) if kind == "force" else (0.0, 0.0, 0.0)))
        return tuple(specs)

    def build(self) -> Scenario:
        """The scenario the fields describe; raises :class:`ParameterError` naming the field."""
        base = self._scenario or Scenario()
        body = self.gyro.apply_to(self.body_editor.spec())
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
        loads_toml(dumps(sc))  # the file's own parser: what the window applies, File > Save writes loadable
        return sc

    def apply(self) -> bool:
        """Validate and emit :attr:`scenario_applied`; on error show it and keep the run."""
        try:
            sc = self.build()
        except ParameterError as err:
            self._show_error(err)
            return False
        preset, source = self._scenario_preset, self._source
        if sc != self._scenario:  # the file's prose no longer describes it: the summary does
            preset = source = None
            sc = sc.replace(name=edited_name(sc.name), description="")
        self.set_scenario(sc, preset=preset, source=source)
        self.scenario_applied.emit(sc)
        return True

    def revert(self) -> None:
        """Back to the running scenario's values."""
        if self._scenario is not None:
            self.set_scenario(self._scenario, preset=self._scenario_preset, source=self._source)

    def _show_error(self, err: ParameterError) -> None:
        self.error.setText(f"Not applied: {err}. The simulation keeps its previous parameters.")
        self.status.setText("")
        exact = [f for f in self._all_fields if f.field == err.field]
        base = err.field.split("[")[0]
        self._mark_invalid(exact or [f for f in self._all_fields if f.field.split("[")[0] == base])
