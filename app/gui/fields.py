"""Small input widgets of the parameter panel: the number field and layout helpers."""

from __future__ import annotations

import math

from PyQt5.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QSizePolicy, QWidget

from ..physics.errors import ParameterError
from ..scenario.schema import MAX_MAGNITUDE


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


def vector_row(fields) -> QWidget:
    """The fields side by side in one row."""
    row = QWidget()
    lay = QHBoxLayout(row)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(4)
    for f in fields:
        lay.addWidget(f)
    return row


def hint(text: str) -> QLabel:
    """A muted, word-wrapped label."""
    label = QLabel(text)
    label.setObjectName("hint")
    label.setWordWrap(True)
    return label
