"""Predictions for a body in its own (possibly non-principal) frame: flip period and time.

Thin wrappers that map the body-frame omega to the principal frame and call the closed
forms in :mod:`.exact`.
"""

from __future__ import annotations

import numpy as np

from .body import Body


def _principal_omega(body: Body, w_body) -> tuple[np.ndarray, np.ndarray]:
    moments, axes = body.principal()
    return moments, np.asarray(w_body, dtype=float) @ axes


def predicted_flip_period(body: Body, w_body) -> float | None:
    """Time between reversals of the intermediate-axis spin component, or None if none."""
    from . import exact

    moments, wp = _principal_omega(body, w_body)
    period = exact.flip_period(moments, wp)
    return None if period is None or not np.isfinite(period) else float(period)


def predicted_first_flip(body: Body, w_body) -> float | None:
    """Time of the first reversal of the intermediate-axis spin component, or None."""
    from . import exact

    moments, wp = _principal_omega(body, w_body)
    t = exact.first_flip_time(moments, wp)
    return None if t is None or not np.isfinite(t) else float(t)
