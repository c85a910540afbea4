"""The body's internal parts in the panel (a damper, a rotor with its threshold and an h slider) and their live status field."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from PyQt5.QtCore import Qt, pyqtSignal
from PyQt5.QtWidgets import QCheckBox, QGridLayout, QLabel, QSlider, QWidget

from ...physics import gyrostat
from ...physics.body import Rotor
from ...physics.diagnostics import rotational_energy
from ...physics.errors import ParameterError
from ...scenario import DamperSpec, RotorSpec
from ..common.theme import ERROR_TEXT, OK_TEXT

#: positions of the h slider (its range is 0 .. SLIDER_SPAN x the threshold)
SLIDER_STEPS = 400
SLIDER_SPAN = 2.0
#: a damper or a rotor switched on in the panel starts with these (damper: J, c; rotor: h)
NEW_DAMPER = DamperSpec(0.01, 0.01)
NEW_ROTOR = RotorSpec((0.0, 1.0, 0.0), 0.0)


class GyroEditor(QWidget):
    """Fields of ``[body.damper]`` and ``[body.rotor]``, the rotor's stability threshold
    h_crit = (I3 - I2) Omega beside h, and a slider for h that restarts the run on release.

    ``make_field(name, tooltip)`` is the panel's field factory (its fields apply on Enter,
    mark the panel edited and show errors by name). Signals (GUI thread): ``edited`` when a
    switch changes, ``apply_requested`` when the slider is let go.
    """

    edited = pyqtSignal()
    apply_requested = pyqtSignal()

    def __init__(self, make_field, parent=None):
        super().__init__(parent)
        self._scenario = None
        self._range = 1.0  # h at the slider's right end
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 4, 0, 0)
        self.damper_on = QCheckBox("damper")
        self.damper_on.setToolTip("a sphere turning in a spherical cavity, coupled by a viscous torque c (s - ω): "
                                  "it takes energy, never angular momentum (the major-axis rule)")
        self.damper_inertia = make_field("body.damper.inertia", "the sphere's moment of inertia J (kg m²)")
        self.damper_coefficient = make_field("body.damper.coefficient", "viscous coupling c (N m s)")
        # two columns of label + field: the panel's dock is narrow
        grid.addWidget(self.damper_on, 0, 0, 1, 4)
        damper_labels = [QLabel("J (kg m²)"), QLabel("c (N m s)")]
        grid.addWidget(damper_labels[0], 1, 0)
        grid.addWidget(self.damper_inertia, 1, 1)
        grid.addWidget(damper_labels[1], 1, 2)
        grid.addWidget(self.damper_coefficient, 1, 3)
        self.rotor_on = QCheckBox("rotor")
        self.rotor_on.setToolTip("a wheel spinning at a constant rate relative to the body (a gyrostat): "
                                 "I ω' + ω × (I ω + h a) = torque")
        self.rotor_momentum = make_field("body.rotor.momentum", "the wheel's momentum h relative to the body "
                                                                "(kg m²/s, signed along the axis)")
        self.rotor_axis = [make_field(f"body.rotor.axis[{k}]", f"rotor axis, body {'xyz'[k]} (normalised)")
                           for k in range(3)]
        grid.addWidget(self.rotor_on, 2, 0, 1, 4)
        rotor_labels = [QLabel("h (kg m²/s)"), QLabel("axis (body)")]
        grid.addWidget(rotor_labels[0], 3, 0)
        grid.addWidget(self.rotor_momentum, 3, 1)
        grid.addWidget(rotor_labels[1], 4, 0)
        axis_row = QWidget()
        axis_grid = QGridLayout(axis_row)
        axis_grid.setContentsMargins(0, 0, 0, 0)
        axis_grid.setSpacing(4)
        for k, f in enumerate(self.rotor_axis):
            axis_grid.addWidget(f, 0, k)
        grid.addWidget(axis_row, 4, 1, 1, 3)
        self.slider = QSlider(Qt.Horizontal)
        self.slider.setRange(0, SLIDER_STEPS)
        self.slider.setToolTip("h: let go to restart the run with it")
        self.slider.valueChanged.connect(self._slid)
        self.slider.sliderReleased.connect(self.apply_requested)
        grid.addWidget(self.slider, 5, 0, 1, 4)
        self.threshold = QLabel()
        self.threshold.setObjectName("threshold")
        # shown only while their part is switched on
        self._damper_rows = [*damper_labels, self.damper_inertia, self.damper_coefficient]
        self._rotor_rows = [*rotor_labels, self.rotor_momentum, axis_row, self.slider, self.threshold]
        self.threshold.setWordWrap(True)
        self.threshold.setTextFormat(Qt.RichText)
        grid.addWidget(self.threshold, 6, 0, 1, 4)
        for f in (self.damper_inertia, self.damper_coefficient, self.rotor_momentum, *self.rotor_axis):
            f.textEdited.connect(self._show_threshold)
        self.damper_on.toggled.connect(self._switched)
        self.rotor_on.toggled.connect(self._switched)
        self._fill(None, None)

    # ------------------------------------------------------------------ filling (GUI thread)

    def set_scenario(self, scenario) -> None:
        """Show the parts of the running ``scenario`` (no signal)."""
        self._scenario = scenario
        self._fill(scenario.body.damper, scenario.body.rotor)

    def _fill(self, damper, rotor) -> None:
        self.blockSignals(True)
        try:
            d = damper or NEW_DAMPER
            r = rotor or NEW_ROTOR
            self.damper_on.setChecked(damper is not None)
            self.damper_inertia.set_value(d.inertia)
            self.damper_coefficient.set_value(d.coefficient)
            self.rotor_on.setChecked(rotor is not None)
            self.rotor_momentum.set_value(r.momentum)
            for f, v in zip(self.rotor_axis, r.axis):
                f.set_value(v)
        finally:
            self.blockSignals(False)
        self._enable()
        self._set_range()
        self._show_threshold()

    def _enable(self) -> None:
        for w in self._damper_rows:
            w.setVisible(self.damper_on.isChecked())
        for w in self._rotor_rows:
            w.setVisible(self.rotor_on.isChecked())

    def _switched(self, _on: bool) -> None:
        self._enable()
        self._set_range()
        self._show_threshold()
        self.edited.emit()

    # ------------------------------------------------------------------ the threshold and the slider

    def critical_momentum(self) -> float | None:
        """h_crit of the running body and spin with the rotor axis of the fields, or None."""
        if self._scenario is None:
            return None
        try:
            axis = [f.value() for f in self.rotor_axis]
            body = dataclasses.replace(self._scenario.rigid_body, rotor=Rotor(axis, 1.0))
        except ParameterError:
            return None
        return gyrostat.rotor_threshold(body, self._scenario.angular_velocity)

    def _set_range(self) -> None:
        """Slider from 0 to SLIDER_SPAN h_crit; further when h is beyond that, and up to the
        body's |I w| when there is no threshold."""
        try:
            h = abs(self.rotor_momentum.value())
        except ParameterError:
            h = 0.0
        critical = self.critical_momentum()
        if critical:
            span = SLIDER_SPAN * critical if h <= SLIDER_SPAN * critical else 1.25 * h
        else:
            scale = 1.0
            if self._scenario is not None:
                rigid = self._scenario.rigid_body
                scale = float(np.linalg.norm(rigid.inertia @ np.asarray(self._scenario.angular_velocity))) or 1.0
            span = max(1.25 * h, scale)
        self._range = span
        self._place_slider(h)

    def _place_slider(self, h: float) -> None:
        self.slider.blockSignals(True)
        self.slider.setValue(int(round(min(max(h / self._range, 0.0), 1.0) * SLIDER_STEPS)))
        self.slider.blockSignals(False)

    def _slid(self, position: int) -> None:
        """The slider moved (GUI thread): h follows; the run restarts when it is let go (or
        at once for a keyboard or wheel step, which has no release)."""
        try:
            sign = -1.0 if self.rotor_momentum.value() < 0 else 1.0
        except ParameterError:
            sign = 1.0
        self.rotor_momentum.set_value(sign * self._range * position / SLIDER_STEPS)
        self._show_threshold()
        self.edited.emit()
        if not self.slider.isSliderDown():
            self.apply_requested.emit()

    def _show_threshold(self, *_args) -> None:
        if not self.rotor_on.isChecked():
            return
        critical = self.critical_momentum()
        try:
            h = self.rotor_momentum.value()
        except ParameterError:
            h = math.nan
        if not self.slider.isSliderDown() and math.isfinite(h):
            self._place_slider(abs(h))
        if critical is None or not math.isfinite(h):
            self.threshold.setText("threshold h_crit = (I3 − I2) Ω: for a rotor along the intermediate "
                                   "principal axis, and a body with three distinct moments")
            return
        omega = float(np.asarray(self._scenario.angular_velocity) @ self._axis())
        moments = self._scenario.rigid_body.principal()[0]
        stable = gyrostat.spin_is_stable(moments, 1, omega, h)
        along = h * math.copysign(1.0, omega)
        verdict = (f"<span style='color:{OK_TEXT}'>stable</span>" if stable
                   else f"<span style='color:{ERROR_TEXT}'>unstable</span>")
        ratio = along / critical if critical > 0 else math.nan
        self.threshold.setText(f"threshold h_crit = (I3 − I2) Ω = <b>{critical:.4g}</b> kg m²/s; "
                               f"h = {ratio:.2f} h_crit: {verdict} (linear theory)")

    def _axis(self) -> np.ndarray:
        """The unit rotor axis of the fields (valid: critical_momentum found one)."""
        return Rotor([f.value() for f in self.rotor_axis], 1.0).axis

    # ------------------------------------------------------------------ collecting

    def apply_to(self, body_spec):
        """``body_spec`` with the damper and rotor of the fields (raises ParameterError)."""
        damper = rotor = None
        if self.damper_on.isChecked():
            damper = DamperSpec(self.damper_inertia.value(), self.damper_coefficient.value())
        if self.rotor_on.isChecked():
            rotor = RotorSpec(tuple(f.value() for f in self.rotor_axis), self.rotor_momentum.value())
        return dataclasses.replace(body_spec, damper=damper, rotor=rotor)

    def damper_rate(self, base, body_spec):
        """The scenario's ``damper_angular_velocity`` for ``body_spec``: kept from ``base``
        while both have a damper, else None (the sphere starts with the body)."""
        if body_spec.damper is None or base.body.damper is None:
            return None
        return base.damper_angular_velocity


class PartsStatus(QLabel):
    """Status-bar field of a body with a damper or a rotor: the nutation angles and the
    energy on its way to its final value, or the spin's angle to the rotor axis. Hidden for
    a rigid body. Thread: GUI."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setToolTip("damper: angles between L and the body's major and minor axes, and the rotational "
                        "energy → |L|²/(2 (I_max + J)); rotor: angle between ω and the rotor axis")
        self.hide()

    def refresh(self, snapshot) -> None:
        body = snapshot.scenario.rigid_body
        if body.is_rigid:
            self.hide()
            return
        state = snapshot.state
        parts = []
        if body.damper is not None:
            major = math.degrees(float(gyrostat.axis_to_momentum_angle(body, state.q, snapshot.L, 2)))
            minor = math.degrees(float(gyrostat.axis_to_momentum_angle(body, state.q, snapshot.L, 0)))
            parts.append(f"L∠major {major:5.1f}°  L∠minor {minor:5.1f}°")
            energy = float(rotational_energy(body, state.w, state.s))
            final = gyrostat.final_energy(body, state.w, state.s)
            parts.append(f"E_rot {energy:.4g} J" + ("" if final is None else f" → {final:.4g} J"))
        if body.rotor is not None:
            rate = float(np.linalg.norm(state.w))
            cos = float(state.w @ body.rotor.axis) / rate if rate > 0 else 1.0
            parts.append(f"ω∠rotor {math.degrees(math.acos(min(1.0, max(-1.0, cos)))):5.1f}°")
        self.setText("   ".join(parts))
        self.show()
