"""Error types of the physics core: bad parameters and diverging runs."""

from __future__ import annotations


def format_value(value) -> str:
    """Short, readable rendering of a parameter value for one-line messages."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**16:
        digits = str(abs(value))  # too large for a float: scientific notation by hand
        return f"{'-' if value < 0 else ''}{digits[0]}.{digits[1:6]}e+{len(digits) - 1}"
    try:
        import numpy as np

        arr = np.asarray(value)
        if arr.dtype.kind in "fiu" and arr.ndim >= 1:
            return "[" + ", ".join(f"{x:.6g}" for x in arr.ravel()) + "]"
        if arr.dtype.kind == "f" and arr.ndim == 0:
            return f"{float(arr):.6g}"
    except Exception:  # pragma: no cover - defensive: any value must format
        pass
    return repr(value)


class ParameterError(ValueError):
    """A parameter breaks a rule: the message names the field, the value and the rule."""

    def __init__(self, field: str, value, rule: str):
        self.field = field
        self.value = value
        self.rule = rule
        super().__init__(f"{field} must {rule}, got {format_value(value)}")

    def prefixed(self, prefix: str) -> "ParameterError":
        """The same error with ``prefix.`` in front of the field name."""
        return ParameterError(f"{prefix}.{self.field}" if prefix else self.field, self.value, self.rule)


class DivergenceError(RuntimeError):
    """The integration left the finite world (non-finite state or |omega| > limit)."""

    def __init__(self, t: float, step: int, reason: str):
        self.t = t
        self.step = step
        self.reason = reason
        super().__init__(f"simulation diverged at t = {t:.6g} s (step {step}): {reason}")
