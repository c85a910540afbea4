"""Error types of the physics core: bad parameters and diverging runs."""

from __future__ import annotations

#: longest value a one-line message repeats (characters); a longer one is cut with an
#: ellipsis, so a 300 KB value in a file never floods the terminal
MAX_VALUE_CHARS = 60
#: longest field name a message repeats (a file's path can be the field of a syntax error)
MAX_FIELD_CHARS = 160


def shorten(text: str, limit: int = MAX_VALUE_CHARS) -> str:
    """``text`` on one line and at most ``limit`` characters: control characters escaped,
    the middle of a long text replaced by an ellipsis (its start and end stay readable)."""
    text = str(text)
    if not text.isprintable():
        text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    if len(text) <= limit:
        return text
    head = (limit - 1) * 2 // 3
    tail = limit - 1 - head
    return f"{text[:head]}…{text[len(text) - tail:]}" if tail else f"{text[:head]}…"


def format_value(value) -> str:
    """Short, readable, one-line rendering of a parameter value for messages."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**16:
        if value.bit_length() > 14_000:  # past Python's 4300-digit limit of str()
            return f"{'-' if value < 0 else ''}an integer of about {int(value.bit_length() * 0.30103)} digits"
        digits = str(abs(value))  # too large for a float: scientific notation by hand
        return f"{'-' if value < 0 else ''}{digits[0]}.{digits[1:6]}e+{len(digits) - 1}"
    if isinstance(value, str):
        kept = value if len(value) <= 3 * MAX_VALUE_CHARS else value[:MAX_VALUE_CHARS] + value[-MAX_VALUE_CHARS:]
        return shorten(repr(kept))  # the middle of a long string is cut either way
    try:
        import numpy as np

        arr = np.asarray(value)
        if arr.dtype.kind in "fiu" and arr.ndim >= 1:
            parts, width = [], 2
            for x in arr.ravel()[:MAX_VALUE_CHARS]:  # never format more than fills the line
                width += len(text := f"{x:.6g}") + 2
                if width > MAX_VALUE_CHARS:
                    break
                parts.append(text)
            if len(parts) < arr.size:
                parts.append(f"… ({arr.size} numbers)")
            return "[" + ", ".join(parts) + "]"
        if arr.dtype.kind == "f" and arr.ndim == 0:
            return f"{float(arr):.6g}"
    except Exception:  # noqa: BLE001 - defensive: any value must format
        pass
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a repr that fails (an int past Python's digit limit)
        text = f"<{type(value).__name__}>"
    return shorten(text)


class ParameterError(ValueError):
    """A parameter breaks a rule: the message names the field, the value and the rule.

    The message is one line: a long field or value is cut (:func:`shorten`).
    """

    def __init__(self, field: str, value, rule: str):
        self.field = field
        self.value = value
        self.rule = rule
        super().__init__(f"{shorten(field, MAX_FIELD_CHARS)} must {shorten(rule, 4 * MAX_FIELD_CHARS)}, "
                         f"got {format_value(value)}")

    def __reduce__(self):  # pickles (across a process pool) with its three parts
        if type(self).__init__ is not ParameterError.__init__:  # a subclass built otherwise
            return super().__reduce__()
        return (type(self), (self.field, self.value, self.rule))

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

    def __reduce__(self):  # pickles (across a process pool) with its three parts
        return (type(self), (self.t, self.step, self.reason))
