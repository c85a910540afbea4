"""Another engine's trajectory (Godot, Unity, Jolt, a student's code) scored like an engine run.

A file gives ``t`` and a quaternion, optionally omega (``wx, wy, wz``) and the centre of mass
(``cx, cy, cz``). Its conventions are checked, not trusted: the omega implied by successive
quaternions (the rotation between two samples over their spacing, exact for a constant omega)
must agree with the file's omega, averaged over the two samples, under the declared quaternion
order and omega frame. Where it does not but another convention fits, the refusal names the
flag that fits; this comes before any other check of the content, so a file in another
convention is told which flag fits rather than only that its start is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import numpy as np

from ..physics import quaternion as quat
from ..physics.limits import OMEGA_LIMIT
from ..physics.errors import ParameterError
from ..scenario.schema import MAX_MAGNITUDE as SCENARIO_MAGNITUDE

QUATERNION_ORDERS = ("wxyz", "xyzw")
OMEGA_FRAMES = ("body", "world")
#: most rows of a file: as many as an engine run's samples (``audit.MAX_AUDIT_SAMPLES``). Scoring
#: takes about 0.5 KB and 10-20 us a row here (the closed form at each row's time most of it), so a
#: million rows stays within 1 GB and 30 s; 2,000,000 took 45 s and 1.1 GB
MAX_ROWS = 1_000_000
#: largest omega component (rad/s) of a file: past it Tumble counts a run as diverged
MAX_OMEGA = OMEGA_LIMIT
#: largest time (s) and centre-of-mass component (m) of a file, as any number of a scenario
MAX_MAGNITUDE = SCENARIO_MAGNITUDE
#: fewest rows of a file (two intervals: a flip between samples needs three)
MIN_ROWS = 3
#: a quaternion's norm may differ from 1 by this much (files rounded to 6 digits are 1e-6 off)
UNIT_TOLERANCE = 1e-3
#: the file's first row must be the scenario's start within this: its orientation's angle (rad),
#: its omega's and centre of mass's gap relative to their size (1 rad/s and 1 m at rest or at the
#: origin). An engine run is held to 1e-9 (``start.START_MATCH``); a file's numbers may be
#: float32 (7 digits) or rounded to 6, so a file is held to what those keep
START_TOLERANCE = 1e-3
#: a convention fits when the median gap between the file's omega and the omega implied by its
#: quaternions is below this share of the median |omega|. The implied omega is the rotation
#: between samples over their spacing: against the two samples' mean omega it differs by about
#: (|omega| h)^2 / 12 relative for a tumbling body (about 3% at a third of a radian per sample),
#: while a wrong order, frame or direction is off by the order of |omega| itself
FIT_SHARE = 0.1


@dataclass(frozen=True)
class Arrays:
    """A trajectory as read: ``t`` (n,), ``q`` (n, 4) the file's four quaternion numbers in file
    order, ``w`` (n, 3) or None, ``c`` (n, 3) or None; ``where`` names it in messages."""

    t: np.ndarray
    q: np.ndarray
    w: np.ndarray | None
    c: np.ndarray | None
    where: str = "--trajectory"


def as_wxyz(q: np.ndarray, order: str, conjugate: bool = False) -> np.ndarray:
    q = np.asarray(q, dtype=float)
    q = q[:, [3, 0, 1, 2]] if order == "xyzw" else q
    return quat.conjugate(q) if conjugate else q


def implied_omega_body(t: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Body-frame omega between successive samples of body-to-world ``q``: log(q_k^-1 q_k+1) /
    (t_k+1 - t_k), the constant omega that turns one into the next."""
    d = quat.multiply(quat.conjugate(q[:-1]), q[1:])
    d = d * np.where(d[:, :1] < 0, -1.0, 1.0)
    s = np.linalg.norm(d[:, 1:], axis=1)
    angle = 2.0 * np.arctan2(s, d[:, 0])
    scale = np.where(s > 0, angle / np.where(s > 0, s, 1.0), 2.0)
    return d[:, 1:] * (scale / np.diff(t))[:, None]


def misfit(t, q_wxyz, w, frame: str) -> float:
    """Median |file omega - implied omega| over median |omega|, in the body frame."""
    w_body = quat.rotate_inverse(q_wxyz, w) if frame == "world" else w
    mid = 0.5 * (w_body[1:] + w_body[:-1])
    implied = implied_omega_body(t, q_wxyz)
    scale = float(np.median(np.linalg.norm(mid, axis=1)))
    if scale == 0:
        return 0.0 if np.allclose(implied, 0) else np.inf
    return float(np.median(np.linalg.norm(implied - mid, axis=1))) / scale


def _flags(order: str, conjugate: bool, frame: str) -> str:
    parts = []
    if order != "wxyz":
        parts.append(f"--quaternion {order}")
    if frame != "body":
        parts.append(f"--omega {frame}")
    text = " ".join(parts)
    if conjugate:
        text = (text + " with " if text else "") + "conjugated quaternions (the file's are world to body: " \
                                                   "write their inverse, w, -x, -y, -z)"
    return text or "--quaternion wxyz --omega body"


def _declared(order, frame) -> str:
    return f"--quaternion {order} --omega {frame}"


def check_basic(a: Arrays) -> None:
    """Rows, increasing times, finite numbers within their bounds, unit quaternions: one line each."""
    n = len(a.t)
    if n < MIN_ROWS:
        raise ParameterError(a.where, f"{n} row(s)", f"hold at least {MIN_ROWS} rows")
    for name, x in (("t", a.t), ("the quaternion", a.q), ("omega", a.w), ("the centre of mass", a.c)):
        if x is not None and not np.all(np.isfinite(x)):
            row = int(np.argmax(~np.all(np.isfinite(np.reshape(x, (n, -1))), axis=1)))
            raise ParameterError(a.where, f"row {row + 1}", f"hold finite numbers ({name} is not finite there)")
    for name, x, bound, unit in (("t", a.t, MAX_MAGNITUDE, "s"), ("omega", a.w, MAX_OMEGA, "rad/s"),
                                 ("the centre of mass", a.c, MAX_MAGNITUDE, "m")):
        if x is not None:
            big = np.max(np.abs(np.reshape(x, (n, -1))), axis=1) > bound
            if big.any():
                row = int(np.argmax(big))
                why = " (past it a run counts as diverged)" if name == "omega" else ""
                raise ParameterError(a.where, f"row {row + 1}", f"hold {name} of at most {bound:g} {unit} per "
                                     f"component{why}")
    steps = np.diff(a.t)
    if np.any(steps <= 0):
        row = int(np.argmax(steps <= 0)) + 2
        raise ParameterError(a.where, f"row {row}", "have times that increase from row to row")
    with np.errstate(over="ignore"):  # |q| of 1e300: inf, refused below without a warning
        norms = np.linalg.norm(a.q, axis=1)
    off = np.abs(norms - 1.0)
    if np.any(off > UNIT_TOLERANCE):
        row = int(np.argmax(off))
        raise ParameterError(a.where, f"row {row + 1} (|q| = {norms[row]:.6g})",
                             f"hold unit quaternions (|q| within {UNIT_TOLERANCE:g} of 1)")


def check_conventions(a: Arrays, order: str, frame: str) -> tuple[np.ndarray, np.ndarray | None]:
    """(q body to world (w, x, y, z), omega body frame or None) under the declared ``order`` and
    ``frame``, after checking that they fit the file (see the module docstring)."""
    q_unit = a.q / np.linalg.norm(a.q, axis=1, keepdims=True)
    if a.w is not None:
        declared = misfit(a.t, as_wxyz(q_unit, order), a.w, frame)
        if not declared <= FIT_SHARE:
            fits = []
            for o, conj, f in product(QUATERNION_ORDERS, (False, True), OMEGA_FRAMES):
                m = misfit(a.t, as_wxyz(q_unit, o, conj), a.w, f)
                if m <= FIT_SHARE:
                    fits.append((m, o, conj, f))
            if fits:
                _, o, conj, f = min(fits)
                raise ParameterError(a.where, _declared(order, frame),
                                     f"be read with {_flags(o, conj, f)}: the file's omega disagrees with the omega "
                                     f"implied by its quaternions as declared ({declared:.2g} of |omega|) and agrees "
                                     "under that convention")
            raise ParameterError(a.where, _declared(order, frame),
                                 "hold omega that agrees with the omega implied by its quaternions under some "
                                 "convention (w,x,y,z or x,y,z,w, body to world or its inverse, omega body or world "
                                 f"frame): none fits (declared: {declared:.2g} of |omega| off)")
    q = as_wxyz(q_unit, order)
    w = None
    if a.w is not None:
        w = quat.rotate_inverse(q, a.w) if frame == "world" else np.asarray(a.w, dtype=float)
    return q, w


def check_start(a: Arrays, q: np.ndarray, w, start, order: str) -> None:
    """The first row must be the scenario's ``start`` (a :class:`~.start.Start`): where another
    quaternion order or the inverse would match the orientation, the refusal says so; omega and
    the centre of mass, where the file holds them, are named with both states."""
    from .start import start_mismatch

    q0 = np.asarray(start.q, dtype=float)
    angle = float(quat.angle_between(q0, q[0]))
    if angle <= START_TOLERANCE:
        c0 = None if a.c is None else a.c[0]
        mismatch = start_mismatch(start, q[0], None if w is None else w[0], c0, START_TOLERANCE)
        if mismatch is not None:
            both = lambda x, y: "(" + ", ".join(f"{v:.6g}" for v in x) + ") where the scenario has (" + \
                ", ".join(f"{v:.6g}" for v in y) + ")"  # noqa: E731
            parts = []
            if w is not None:
                parts.append(f"omega {both(w[0], start.w)}")
            if c0 is not None:
                parts.append(f"the centre of mass {both(c0, start.c)}")
            raise ParameterError(a.where, "a first row that is not the scenario's start",
                                 f"start at the scenario's initial state ({mismatch.split(': ', 1)[1]}: "
                                 + "; ".join(parts) + ")")
        return
    q_unit = a.q[:1] / np.linalg.norm(a.q[:1], axis=1, keepdims=True)
    for o, conj in product(QUATERNION_ORDERS, (False, True)):
        if (o, conj) != (order, False) and float(quat.angle_between(q0, as_wxyz(q_unit, o, conj)[0])) <= START_TOLERANCE:
            raise ParameterError(a.where, f"a start {angle:.3g} rad from the scenario's orientation",
                                 f"be read with {_flags(o, conj, 'body')} (its first quaternion is the scenario's "
                                 "initial orientation under that convention)")
    raise ParameterError(a.where, f"a start {angle:.3g} rad from the scenario's orientation",
                         f"start at the scenario's initial orientation (within {START_TOLERANCE:g} rad)")


def checked(a: Arrays, start, order: str = "wxyz", frame: str = "body"):
    """(t from the first row, q body to world, omega body frame or None, c or None) of a file
    whose content passed every check, conventions first; ``start`` the scenario's
    :class:`~.start.Start`."""
    if order not in QUATERNION_ORDERS:
        raise ParameterError("--quaternion", order, "be wxyz or xyzw")
    if frame not in OMEGA_FRAMES:
        raise ParameterError("--omega", frame, "be body or world")
    check_basic(a)
    q, w = check_conventions(a, order, frame)
    check_start(a, q, w, start, order)
    t = np.asarray(a.t, dtype=float)
    return t - t[0], q, w, None if a.c is None else np.asarray(a.c, dtype=float)
