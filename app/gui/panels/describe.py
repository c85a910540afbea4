"""Texts the window derives from the running scenario (its spin, its axes, its flip period),
so that none of them can go stale after an edit. No Qt here."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...physics import theory
from ...physics.body import EQUAL_MOMENTS, Body
from ...scenario import Scenario
from ...simulation.worker import predicted_period


def axis_names(moments) -> list[str]:
    """Names of the three principal axes (ascending ``moments``) for the spin helper: a
    symmetric body has no intermediate axis, and its equal moments are named as such."""
    i1, i2, i3 = (float(m) for m in moments)

    def equal(a: float, b: float) -> bool:
        return abs(b - a) <= EQUAL_MOMENTS * i3

    if equal(i1, i3):
        return [f"axis {k} (all I equal)" for k in (1, 2, 3)]
    if equal(i1, i2):
        return ["axis 1 (I1 = I2)", "axis 2 (I1 = I2)", "axis 3 (largest I, symmetry axis)"]
    if equal(i2, i3):
        return ["axis 1 (smallest I, symmetry axis)", "axis 2 (I2 = I3)", "axis 3 (I2 = I3)"]
    return ["axis 1 (smallest I)", "axis 2 (intermediate I)", "axis 3 (largest I)"]


@dataclass(frozen=True)
class Spin:
    """A body-frame omega seen from the principal axes: ``rate`` |omega| (rad/s), ``axis``
    the index (0, 1, 2 for ascending moments) of the principal axis omega is closest to,
    ``tilt_deg`` the angle between omega and that axis (degrees)."""

    rate: float
    axis: int
    tilt_deg: float


def spin_of(body: Body, w_body) -> Spin:
    """How ``w_body`` (body frame, rad/s) sits among ``body``'s principal axes."""
    w = np.asarray(w_body, dtype=float)
    rate = float(np.linalg.norm(w))
    if rate == 0:
        return Spin(0.0, 1, 0.0)
    _, axes = body.principal()
    along = w @ axes
    k = int(np.argmax(np.abs(along)))
    return Spin(rate, k, math.degrees(math.acos(min(1.0, abs(along[k]) / rate))))


def period_text(period: float | None) -> str:
    """A predicted flip period as the window prints it everywhere."""
    return "—" if period is None else f"{period:.3f} s"


def spin_summary(sc: Scenario) -> str:
    """One sentence on what the scenario's spin does, from its body and omega0: the axis
    it starts near and the closed-form flip period (the status bar's figure, from the
    same function)."""
    body = sc.rigid_body
    spin = spin_of(body, sc.angular_velocity)
    if spin.rate == 0:
        return "Not spinning."
    moments, _ = body.principal()
    name = axis_names(moments)[spin.axis]
    start = f"Spins at {spin.rate:.3g} rad/s, {spin.tilt_deg:.2g}° from {name}"
    if body.is_rigid and not theory.applies(body, sc.applied_loads):
        return f"{start}; no free-body prediction: its applied torques (a drag too) change the motion."
    period = predicted_period(sc)
    if period is not None:
        what = f"flips every {period_text(period)}"
    elif "intermediate" in axis_names(moments)[1]:
        what = "does not flip (omega stays near the axis it circles)"
    else:
        what = "does not flip (a symmetric body has no intermediate axis)"
    return f"{start}: it {what}."
