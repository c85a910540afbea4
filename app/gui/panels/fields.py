"""Small input widgets of the parameter panel: the number field, layout helpers, the wheel guard."""

from __future__ import annotations

from PyQt5.QtCore import QEvent, QObject, QPointF, Qt
from PyQt5.QtGui import QWheelEvent
from PyQt5.QtWidgets import (
    QAbstractScrollArea,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QSlider,
    QWidget,
)

from ...scenario.document import number_from_text


def fmt(x: float) -> str:
    """A number as a field shows it: 6 significant digits, no "-0"."""
    return f"{x + 0.0:.6g}"


def fixed(x: float, decimals: int) -> str:
    """``x`` with ``decimals`` decimals, no "-0.00" for a small negative number: a sign on
    nothing reads as information that is not there."""
    return f"{round(float(x), decimals) + 0.0:.{decimals}f}"


class NumberField(QLineEdit):
    """A line edit holding one number; ``field`` names it in error messages."""

    def __init__(self, field: str, tooltip: str = "", parent=None):
        super().__init__(parent)
        self.field = field
        self._exact = 0.0
        self._shown: str | None = None
        self.setToolTip(tooltip or field)
        self.setMinimumWidth(58)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)

    def set_value(self, value: float) -> None:
        """Show ``value`` (6 significant digits); :meth:`value` returns it exactly until the
        text is edited, so an untouched field does not round the scenario it came from."""
        self._exact = float(value)
        self.setText(fmt(self._exact))
        self.setCursorPosition(0)  # a number wider than the field shows its leading digits
        self._shown = self.text()

    def value(self) -> float:
        if self._shown == self.text():
            return self._exact
        return number_from_text(self.text(), self.field)  # the rule of scenario files


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


#: the panel's widgets that change their value under the mouse wheel
WHEEL_WIDGETS = (QComboBox, QAbstractSpinBox, QSlider)  # not the scroll bars: they are for the wheel


class WheelGuard(QObject):
    """Event filter: a field without the keyboard focus passes the wheel to the scroll area
    around it instead of changing its value (one notch over a combo box used to change the
    integrator while the user scrolled the panel)."""

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt API
        if event.type() != QEvent.Wheel or watched.hasFocus():
            return False
        area = watched.parentWidget()
        while area is not None and not isinstance(area, QAbstractScrollArea):
            area = area.parentWidget()
        if area is not None:
            viewport = area.viewport()
            at = QPointF(viewport.mapFromGlobal(event.globalPosition().toPoint()))
            QApplication.sendEvent(viewport, QWheelEvent(
                at, event.globalPosition(), event.pixelDelta(), event.angleDelta(), event.buttons(),
                event.modifiers(), event.phase(), event.inverted(), event.source()))
        return True

    def guard(self, root: QWidget) -> None:
        """Apply to ``root`` if it is such a widget, and to every such widget inside it."""
        widgets = [root] if isinstance(root, WHEEL_WIDGETS) else []
        for widget in widgets + root.findChildren(WHEEL_WIDGETS):
            widget.setFocusPolicy(Qt.StrongFocus)  # the wheel does not give them the focus
            widget.installEventFilter(self)
