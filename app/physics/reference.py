"""The closed-form reference of a run: where the exact torque-free solution puts the body.

The GUI's "exact ghost" draws it over the simulated body. It starts from the same state as
the run (or its last kick) and is evaluated in closed form at each time asked for
(:func:`app.physics.exact.torque_free` in the model's principal frame, mapped back to the
user's body frame exactly as :func:`app.physics.integrators.simulate` does for ``exact``),
never integrated, so the gap between the two is the integrator's error alone.
"""

from __future__ import annotations

import numpy as np

from . import exact
from . import quaternion as quat
from .errors import ParameterError
from .integrators import check_exact_applies
from .model import Model
from .state import State


def exact_unavailable_reason(model: Model) -> str | None:
    """Why the closed form does not apply to ``model``, as a clause that follows "it has"
    ("applied torques or forces (...)"), or None when it does. The rule is
    :func:`~app.physics.integrators.check_exact_applies`'s; its message, which names the
    integrator, is not nested in the callers' own (the ghost's, the export's)."""
    try:
        check_exact_applies(model)
    except ParameterError:
        if model.body.is_rigid:
            return "applied torques or forces, a drag included, and the exact ghost is the torque-free closed form"
        return "a damper or a rotor, and the exact ghost is the free rigid body's closed form"
    return None


class ExactReference:
    """The torque-free closed-form motion from ``start`` (user body frame, world ``c``).

    Raises :class:`ParameterError` (from ``check_exact_applies``) when the model has applied
    torques or forces. Gravity only moves the centre of mass and is kept (``com_motion``).
    Thread: any (immutable after construction; numpy only).
    """

    def __init__(self, model: Model, start: State):
        check_exact_applies(model)
        self.model = model
        self.start = start
        self._rows0 = model.to_rows(start.c, start.v, start.q, start.w)[0]

    def at(self, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(c, q, w)`` at the absolute times ``t`` (scalar or (n,)): centre of mass (world),
        orientation (body to world) and angular velocity (body frame), shaped like ``t``
        with the vector axis last."""
        t = np.asarray(t, dtype=float)
        tau = np.atleast_1d(t - self.start.t)
        y0 = self._rows0
        c, _ = exact.com_motion(y0[0:3], y0[3:6], self.model.params[4:7], tau)
        q_p, w_p = exact.torque_free(self.model.moments, y0[6:10], y0[10:13], tau)
        rows = np.zeros((len(tau), 13))
        rows[:, 0:3] = c
        rows[:, 6:10] = q_p
        rows[:, 10:13] = w_p
        c, _, q, w = self.model.from_rows(rows)
        if t.ndim == 0:
            return c[0], q[0], w[0]
        return c, q, w

    def orientation_error(self, t, q) -> np.ndarray:
        """Angle (rad) of the rotation between the reference and ``q`` at times ``t``."""
        _, q_ref, _ = self.at(t)
        return quat.angle_between(q_ref, np.asarray(q, dtype=float))
