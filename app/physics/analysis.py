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


def flips(body: Body, w_body) -> bool:
    """True if the torque-free motion from ``w_body`` turns the body over: the intermediate
    axis comes within 45 degrees of L (:func:`.diagnostics.intermediate_peak_share`).
    False for a body with a damper or a rotor: the free body's closed forms do not apply."""
    from .diagnostics import FLIP_SHARE, intermediate_peak_share

    if not body.is_rigid:
        return False

    share = intermediate_peak_share(body, np.asarray(w_body, dtype=float))
    return bool(np.isfinite(share) and share > FLIP_SHARE)


def predicted_flip_period(body: Body, w_body) -> float | None:
    """Time between flips (reversals of the intermediate-axis spin component on an orbit
    that turns the body over), or None if the body does not flip."""
    from . import exact

    if not flips(body, w_body):
        return None
    moments, wp = _principal_omega(body, w_body)
    period = exact.flip_period(moments, wp)
    return None if period is None or not np.isfinite(period) else float(period)


def predicted_first_flip(body: Body, w_body) -> float | None:
    """Time of the first flip, or None if the body does not flip."""
    from . import exact

    if not flips(body, w_body):
        return None
    moments, wp = _principal_omega(body, w_body)
    t = exact.first_flip_time(moments, wp)
    return None if t is None or not np.isfinite(t) else float(t)
