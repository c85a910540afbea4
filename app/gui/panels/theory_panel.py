"""The theory beside the run: predicted and observed flip and polhode periods, growth rate and Montgomery phase."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from PyQt5.QtCore import Qt
from PyQt5.QtWidgets import QGridLayout, QLabel, QWidget

from ...physics import diagnostics, theory
from ..common.theme import MUTED_TEXT

#: the growth fit is tried on the history of the first this many simulated seconds of a
#: segment (the run's start or its last kick); a spin that has not flipped by then does
#: not start near the intermediate axis
GROWTH_SEARCH_S = 60.0
#: the polhode period is measured over this many predicted periods of the newest history
POLHODE_WINDOW_PERIODS = 2.5
#: history taken before a period's start, so that a sample precedes it (s; and 2 dt)
MARGIN_S = 0.1

#: (key, label, unit, tooltip) of each row
ROWS = (
    ("flip_period", "flip period", "s",
     "Time between flips: the intermediate-axis component of ω reverses (closed form: 2 K / λ; "
     "observed: between the last two flips)"),
    ("polhode_period", "polhode period", "s",
     "Period of ω in the body frame, twice the flip period (closed form: 4 K / λ; observed: between the "
     "last two zero crossings in the same direction of the intermediate-axis component of ω)"),
    ("growth_rate", "growth rate σ", "1/s",
     "Near the intermediate axis a deviation grows as e^(σt), σ = Ω₂ √((I₂−I₁)(I₃−I₂)/(I₁I₃)); observed: "
     "the slope of log tan(β/2), β the angle of L from that axis, over the run's first growth"),
    ("montgomery_phase", "Montgomery phase", "rad",
     "How far the body has turned about L after one polhode period: 2 E P / |L| − Ω_S (mod 2π), Ω_S the "
     "solid angle swept by L in the body (Montgomery 1991); observed: over the last whole period of the run"),
)


#: the growth rate's cell for a spin that does not flip (near the major or minor axis)
STABLE_GROWTH = "stable spin: no growth"


def _format(value, unit: str) -> str:
    return "—" if value is None else f"{value + 0.0:.6g} {unit}"  # + 0.0: no "-0"


class _WrappedNote(QLabel):
    """A wrapped label that asks for the height its lines take at its width: in a dock, a plain
    wrapped label kept one line's height and cut its sentence mid-way."""

    def __init__(self):
        super().__init__()
        self.setWordWrap(True)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt API
        super().setText(text)
        self._fit()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width():
            self._fit()

    def _fit(self) -> None:
        need = self.heightForWidth(max(self.width(), 1)) if self.text() else 0
        if need != self.minimumHeight():
            self.setMinimumHeight(max(need, 0))


class TheoryPanel(QWidget):
    """A small table: each quantity's closed-form prediction and its value measured from
    the run's history, for the current segment (the run's start or its last kick).

    Calls (GUI thread): :meth:`refresh` with the worker's newest snapshot and its
    the worker's recording at the window's status rate. Published for tests: ``predicted``
    (:class:`app.physics.theory.Theory`) and ``observed`` (``{key: float or None}``).
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        grid = QGridLayout(self)
        grid.setContentsMargins(8, 4, 8, 4)
        grid.setHorizontalSpacing(12)
        grid.setVerticalSpacing(2)
        for col, text in enumerate(("", "predicted", "observed")):
            head = QLabel(text)
            head.setStyleSheet(f"color: {MUTED_TEXT};")
            grid.addWidget(head, 0, col, alignment=Qt.AlignRight if col else Qt.AlignLeft)
        self.cells: dict[str, tuple[QLabel, QLabel]] = {}
        for row, (key, label, _unit, tip) in enumerate(ROWS, start=1):
            name = QLabel(label)
            name.setToolTip(tip)
            cells = (QLabel("—"), QLabel("—"))
            grid.addWidget(name, row, 0)
            for col, cell in enumerate(cells, start=1):
                cell.setAlignment(Qt.AlignRight | Qt.AlignVCenter)
                cell.setTextInteractionFlags(Qt.TextSelectableByMouse)
                cell.setToolTip(tip)
                grid.addWidget(cell, row, col)
            self.cells[key] = cells
        self.note = _WrappedNote()
        self.note.setObjectName("hint")
        grid.addWidget(self.note, len(ROWS) + 1, 0, 1, 3)
        grid.setColumnStretch(0, 1)
        self.predicted = theory.Theory()
        self.observed: dict[str, float | None] = {key: None for key, *_ in ROWS}
        self._segment_key = None
        self._segment = None
        self._momentum = None
        self._growth_done = False
        self._phase_period = 0

    # ------------------------------------------------------------------ GUI thread

    def refresh(self, snap, recording) -> None:
        """Update from ``snap`` (a worker Snapshot) and ``recording`` (the worker: its
        :class:`~app.simulation.recording.Recording` of the run)."""
        sc = snap.scenario
        segment = snap.segment_start if snap.segment_start is not None else sc.initial_state
        key = (snap.run_id, segment.t, len(snap.kick_times))
        if key != self._segment_key:
            self._start_segment(key, sc, segment, kicked=snap.segment_start is not None and bool(snap.kick_times))
        self._observe(snap, recording)
        self._show()

    def _start_segment(self, key, sc, segment, kicked: bool = False) -> None:
        """Predict from ``segment`` (the run's start, or the state a kick left when
        ``kicked``). The growth rate is the linear theory's about the intermediate axis: a
        kick that leaves the spin more than GROWTH_MAX_DEVIATION from it gets none (nor is
        one fitted), and the note says why."""
        body = sc.rigid_body
        self._segment_key = key
        self._segment = segment
        self._body = body
        self._dt = sc.solver.dt
        self.predicted = theory.predict(body, segment.w, sc.applied_loads)
        self._momentum = diagnostics.angular_momentum(body, segment.q, segment.w)
        self.observed = {k: None for k, *_ in ROWS}
        self._growth_done = False
        self._phase_period = 0
        if self.predicted == theory.Theory():
            self.note.setText("No free-body theory here: applied torques, a damper or a rotor, or no intermediate axis.")
            return
        if not kicked:
            self.note.setText("")
            return
        note = f"After the kick at t = {segment.t:.2f} s: predicted from the state it left."
        deviation = theory.intermediate_deviation(body, segment.w)
        if self.predicted.growth_rate is not None and deviation is not None \
                and deviation > theory.GROWTH_MAX_DEVIATION:
            self.predicted = dataclasses.replace(self.predicted, growth_rate=None)
            note += (f" The growth rate describes a spin near the intermediate axis; this one starts "
                     f"{math.degrees(deviation):.0f}° from it.")
        self.note.setText(note)

    def _rows(self, recording, since: float):
        """(t, q, w) of the segment's history from ``since`` on; the segment's own start
        replaces the rows at or before it (a kick leaves two rows at one time)."""
        seg = self._segment
        rows = recording.span(max(since, seg.t))
        later = rows["t"] > seg.t
        t, q, w = rows["t"][later], rows["q"][later], rows["w"][later]
        if since <= seg.t:
            t = np.concatenate([[seg.t], t])
            q = np.concatenate([seg.q[None], q])
            w = np.concatenate([seg.w[None], w])
        return t, q, w

    def _observe(self, snap, recording) -> None:
        seg, body, pred = self._segment, self._body, self.predicted
        flips = [x for x in snap.flip_times if x > seg.t]
        if pred.flip_period is not None and len(flips) >= 2:
            self.observed["flip_period"] = flips[-1] - flips[-2]
        period = pred.polhode_period
        if period is not None:
            t, _, w = self._rows(recording, snap.t - POLHODE_WINDOW_PERIODS * period)
            periods = theory.observed_polhode_periods(body, t, w)
            if len(periods):
                self.observed["polhode_period"] = float(periods[-1])
            whole = int(math.floor((snap.t - seg.t) / period))
            # the phase is the turn over one polhode period: shown once that period is seen, not before
            seen = self.observed["polhode_period"] is not None
            if seen and whole >= 1 and whole != self._phase_period:
                start = seg.t + (whole - 1) * period - max(MARGIN_S, 2.0 * self._dt)
                t, q, w = self._rows(recording, start)
                phases = theory.observed_montgomery_phases(t, q, w, self._momentum, seg.t, seg.q, period)
                if len(phases):
                    self.observed["montgomery_phase"] = float(phases[-1])
                    self._phase_period = whole
        if pred.growth_rate is not None and not self._growth_done and snap.t - seg.t <= GROWTH_SEARCH_S:
            t, _, w = self._rows(recording, seg.t)
            rate = theory.observed_growth_rate(body, t, w)
            if rate is not None:
                self.observed["growth_rate"] = rate
                self._growth_done = True

    def _show(self) -> None:
        stable = self.predicted.flip_period is None and self.predicted.polhode_period is not None
        for key, _label, unit, _tip in ROWS:
            predicted, observed = self.cells[key]
            predicted.setText(STABLE_GROWTH if key == "growth_rate" and stable else
                              _format(getattr(self.predicted, key), unit))
            observed.setText(_format(self.observed[key], unit))
