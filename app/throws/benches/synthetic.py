"""Synthetic gyroscope recordings of throws with a known body, drag and sensor mounting.

Each throw is: the phone at rest in the hand, a smooth hand ramp that spins it up, the free
flight (Euler's equations with drag, integrated by scipy's DOP853 at rtol 1e-11, independent
of the fit's own RK4), and the catch: a burst of large noisy rates. Stamps come at about
100 Hz with jitter (10.02 ms mean spacing, as phones do) or 400 Hz with irregular spacing;
Gaussian noise of 0.01 rad/s is added and every component is clipped at +-34.9 rad/s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

from ..fitting.dynamics import drag_torque

#: phones' mean sample spacing (s) and its jitter (standard deviation, s)
PHONE_SPACING = 0.01002
PHONE_JITTER = 0.0002
#: a 400 Hz sensor's mean spacing and its irregularity (uniform half-width, s)
FAST_SPACING = 0.0025
FAST_IRREGULARITY = 0.0008
#: gyroscope noise (rad/s, standard deviation per component) and clipping level (rad/s)
NOISE = 0.01
CLIP = 34.9


@dataclass(frozen=True)
class Truth:
    """The simulated object: principal ``moments`` (ascending, largest 1), its principal axes
    as the columns of ``axes`` (sensor frame), and the drag (sensor frame, at that scale)."""

    moments: tuple = (0.3, 0.75, 1.0)
    axes: np.ndarray = field(default_factory=lambda: np.eye(3))
    drag_model: str = "quadratic"
    drag: tuple = (0.004, 0.012, 0.003)

    @property
    def inertia(self) -> np.ndarray:
        """The inertia tensor in the sensor frame."""
        return self.axes @ np.diag(self.moments) @ self.axes.T

    @staticmethod
    def rotated(degrees: float, axis=(1.0, 2.0, -1.0), **kwargs) -> "Truth":
        """A truth whose principal axes are turned by ``degrees`` from the sensor's."""
        axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
        return Truth(axes=Rotation.from_rotvec(math.radians(degrees) * axis).as_matrix(), **kwargs)


@dataclass(frozen=True)
class Throw:
    """One simulated throw: release (``start``) and catch (``end``) in recording time (s),
    the rate at release (sensor frame), and the angle (deg) of the body momentum from the
    intermediate axis at release."""

    start: float
    end: float
    omega0: np.ndarray
    angle_deg: float


def spin_near(truth: Truth, axis: int, angle_deg: float, speed: float, rng) -> np.ndarray:
    """A sensor-frame rate of magnitude ``speed`` whose body momentum J w lies ``angle_deg``
    from principal ``axis`` (0 minor, 1 intermediate, 2 major), in a random direction."""
    phi = rng.uniform(0.0, 2.0 * math.pi)
    others = [k for k in range(3) if k != axis]
    m = np.zeros(3)
    a = math.radians(angle_deg)
    m[axis] = math.cos(a) * rng.choice((-1.0, 1.0))
    m[others[0]] = math.sin(a) * math.cos(phi)
    m[others[1]] = math.sin(a) * math.sin(phi)
    w_principal = m / np.asarray(truth.moments)
    w_principal *= speed / np.linalg.norm(w_principal)
    return truth.axes @ w_principal


def throw_mix(truth: Truth, n: int, rng, speed=(12.0, 24.0), near_share: float = 0.7) -> list[np.ndarray]:
    """``n`` launch rates: about ``near_share`` of them within 3-15 deg of the intermediate
    axis, the rest near the major or minor axis or anywhere, as real throws come."""
    rates = []
    for _ in range(n):
        s = rng.uniform(*speed)
        roll = rng.uniform()
        if roll < near_share:
            rates.append(spin_near(truth, 1, rng.uniform(3.0, 15.0), s, rng))
        elif roll < near_share + (1 - near_share) / 3:
            rates.append(spin_near(truth, 2, rng.uniform(2.0, 20.0), s, rng))
        elif roll < near_share + 2 * (1 - near_share) / 3:
            rates.append(spin_near(truth, 0, rng.uniform(2.0, 20.0), s, rng))
        else:
            rates.append(spin_near(truth, 1, rng.uniform(35.0, 80.0), s, rng))
    return rates


def free_flight(truth: Truth, w0, times) -> np.ndarray:
    """w at ``times`` (from times[0] = release) by DOP853 at rtol 1e-11 (sensor frame)."""
    jm = np.asarray(truth.inertia, dtype=float)
    (a, b, c), (d, e, f), (g, h, k) = jm.tolist()
    (ia, ib, ic), (id_, ie, if_), (ig, ih, ik) = np.linalg.inv(jm).tolist()
    c0, c1, c2 = np.broadcast_to(np.asarray(truth.drag, dtype=float), (3,)).tolist()
    model = truth.drag_model
    if model not in ("none", "linear", "quadratic"):
        drag_torque(np.zeros(3), model, (c0, c1, c2))  # names the field and the rule

    def rhs(_t, w):
        # J^-1 (-w x J w + drag), with drag the law of app.physics.loads.drag_torque, written out
        # for one 3-vector: np.cross on it cost 46 us, about half of fit-bench's CPU in 315,000 calls
        x, y, z = w
        hx, hy, hz = a * x + b * y + c * z, d * x + e * y + f * z, g * x + h * y + k * z
        tx, ty, tz = hy * z - hz * y, hz * x - hx * z, hx * y - hy * x
        if model == "quadratic":
            s = math.sqrt(x * x + y * y + z * z)
            tx, ty, tz = tx - c0 * s * x, ty - c1 * s * y, tz - c2 * s * z
        elif model == "linear":
            tx, ty, tz = tx - c0 * x, ty - c1 * y, tz - c2 * z
        return np.array((ia * tx + ib * ty + ic * tz, id_ * tx + ie * ty + if_ * tz, ig * tx + ih * ty + ik * tz))

    times = np.asarray(times, dtype=float)
    sol = solve_ivp(rhs, (times[0], times[-1]), np.asarray(w0, dtype=float), method="DOP853",
                    t_eval=times, rtol=1e-11, atol=1e-12)
    return sol.y.T


def stamps(duration: float, rng, rate_hz: float = 100.0) -> np.ndarray:
    """Sample times over ``duration``: 10.02 ms apart with jitter, or 400 Hz irregular."""
    if rate_hz >= 200:
        spacing, steps = FAST_SPACING, None
        n = int(duration / spacing) + 2
        steps = spacing + rng.uniform(-FAST_IRREGULARITY, FAST_IRREGULARITY, n)
    else:
        spacing = PHONE_SPACING
        n = int(duration / spacing) + 2
        steps = spacing + np.clip(rng.normal(0.0, PHONE_JITTER, n), -4 * PHONE_JITTER, 4 * PHONE_JITTER)
    t = np.concatenate(([0.0], np.cumsum(steps)))
    return t[t <= duration]


def _smoothstep(x):
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


@dataclass(frozen=True)
class RealWorld:
    """The features of real recordings a synthetic one may carry (measured on real sessions):
    ``still``: the phone lies on a table before and after each throw and reads exactly 0.000
    (an iPhone does) instead of a hand's slow wobble; ``clip``: the gyroscope's range (rad/s;
    many Android phones 17.45 = 1000 deg/s, iPhones 34.9); ``catch``: the standard deviation
    (rad/s) of the catch's burst, past the range; ``bounce``: the share of throws whose phone
    bounces off the cushion into a second free flight of 0.3-0.5 s at a lower rate; ``cut_s``:
    the recording starts this far (s) into its first flight."""

    still: bool = False
    clip: float = 34.9
    catch: float = 12.0
    bounce: float = 0.0
    cut_s: float = 0.0


def make_recording(truth: Truth, rates, rng, flight_s=(0.5, 1.2), rate_hz: float = 100.0,
                   noise: float = NOISE, clip: float = CLIP,
                   world: RealWorld | None = None) -> tuple[np.ndarray, np.ndarray, list[Throw]]:
    """(t, w, throws) of one recording with a throw for each launch rate in ``rates``.

    ``flight_s`` is a (low, high) range drawn from, or one number for every flight. ``world``
    adds real recordings' features (:class:`RealWorld`; its ``clip`` then replaces ``clip``);
    a bounce is a throw of its own in ``throws`` (a free flight of the same body).
    """
    world = world or RealWorld(clip=clip)
    plan, t_cursor = [], 0.0
    for w0 in rates:
        rest = rng.uniform(0.6, 1.2)
        hand = rng.uniform(0.2, 0.3)
        flight = flight_s if np.isscalar(flight_s) else rng.uniform(*flight_s)
        release = t_cursor + rest + hand
        bounce = None
        if world.bounce > 0 and rng.uniform() < world.bounce:
            bounce = (release + flight + 0.08, rng.uniform(0.3, 0.5))
        plan.append((release - hand, release, release + flight, np.asarray(w0, dtype=float), bounce))
        t_cursor = release + flight + (0.25 if bounce is None else 0.08 + bounce[1] + 0.15)
    duration = t_cursor + 0.8
    t = stamps(duration, rng, rate_hz)
    # at rest in the hand: a slow wobble below 0.5 rad/s; on a table: exactly zero
    phase = rng.uniform(0, 2 * math.pi, 3)
    w = 0.3 * np.sin(2 * math.pi * 0.7 * t[:, None] + phase)
    still = np.zeros(len(t), dtype=bool)
    if world.still:
        held = np.zeros(len(t), dtype=bool)
        for grab, *_ in plan:
            held |= (t >= grab - rng.uniform(0.3, 0.5)) & (t < grab)
        still = ~held
        w[still] = 0.0
    throws = []
    for grab, release, catch, w0, bounce in plan:
        # the hand: spin ramps up smoothly while the axis swings into place
        ramp = (t >= grab) & (t < release)
        tau = (t[ramp] - grab) / (release - grab)
        swing = Rotation.from_rotvec(np.outer((1 - tau) ** 2, rng.normal(0, 0.3, 3))).as_matrix()
        s = _smoothstep(tau)[:, None]
        w[ramp] = s * np.einsum("nij,j->ni", swing, w0) + (1 - s) * w[ramp]
        still[ramp] = False
        w_end = _fly(truth, w, t, still, release, catch, w0)
        throws.append(Throw(release, catch, w0, _angle_deg(truth, w0)))
        # the catch: the free rate dies out under a burst of large noisy rates
        end_burst = catch + (0.25 if bounce is None else 0.08)
        burst = (t >= catch) & (t < end_burst)
        u = (t[burst] - catch) / (end_burst - catch)
        w[burst] = (w_end * np.exp(-u * 6.0)[:, None] + rng.normal(0.0, world.catch, (burst.sum(), 3))
                    * (1 - u)[:, None] + w[burst] * u[:, None])
        still[burst] = False
        if bounce is not None:
            b0, b_len = bounce
            wb = rng.normal(0.0, 1.0, 3)
            wb *= rng.uniform(0.3, 0.5) * np.linalg.norm(w0) / np.linalg.norm(wb)
            wb_end = _fly(truth, w, t, still, b0, b0 + b_len, wb)
            throws.append(Throw(b0, b0 + b_len, wb, _angle_deg(truth, wb)))
            landing = (t >= b0 + b_len) & (t < b0 + b_len + 0.15)
            u = (t[landing] - b0 - b_len) / 0.15
            thud = rng.normal(0.0, 3.0, (landing.sum(), 3)) * (1 - u)[:, None]
            w[landing] = wb_end * np.exp(-u * 8.0)[:, None] + thud
            still[landing] = False
    w = w + np.where(still[:, None], 0.0, rng.normal(0.0, noise, w.shape))
    w = np.clip(w, -world.clip, world.clip)
    if world.cut_s > 0 and throws:
        keep = t >= throws[0].start + world.cut_s
        t, w = t[keep], w[keep]
        first = throws[0]
        throws[0] = Throw(float(t[0]), first.end, first.omega0, first.angle_deg)
    return t, w, throws


def _angle_deg(truth, w0) -> float:
    """Angle (deg) of the body momentum J w0 from the intermediate axis."""
    m = truth.inertia @ np.asarray(w0, dtype=float)
    return math.degrees(math.acos(min(1.0, abs(m @ truth.axes[:, 1]) / np.linalg.norm(m))))


def _fly(truth, w, t, still, release, catch, w0):
    """Write the free flight from ``release`` to ``catch`` into ``w``; the rate at the catch."""
    free = (t >= release) & (t < catch)
    path = free_flight(truth, w0, np.concatenate(([release], t[free], [catch])))
    w[free] = path[1:-1]
    still[free] = False
    return path[-1]


def _phyphox_number(value: float) -> str:
    """phyphox's number style: ``3.292241666E-2``."""
    mantissa, exponent = f"{value:.9E}".split("E")
    return f"{mantissa}E{int(exponent)}"


def raw_data_csv(t, w) -> str:
    """``Raw Data.csv`` text of phyphox's gyroscope experiment."""
    lines = ['"Time (s)","Gyroscope x (rad/s)","Gyroscope y (rad/s)","Gyroscope z (rad/s)","Absolute (rad/s)"']
    for ti, wi in zip(t, w):
        cells = [ti, *wi, float(np.linalg.norm(wi))]
        lines.append(",".join(_phyphox_number(float(v)) for v in cells))
    return "\n".join(lines) + "\n"


def time_csv(events) -> str:
    """``meta/time.csv`` text for ``events``: (name, experiment time) pairs."""
    lines = ['"event","experiment time","system time","system time text"']
    for name, when in events:
        lines.append(f'"{name}",{_phyphox_number(when)},{1.7e9 + when:.3f},"2026-01-01 12:00:00.000 UTC+01:00"')
    return "\n".join(lines) + "\n"


def write_phyphox(folder, t, w, events=None) -> Path:
    """A phyphox export folder: ``Raw Data.csv``, ``meta/time.csv``, ``meta/device.csv``.

    ``events`` default to one START at 0 and a PAUSE at the end.
    """
    folder = Path(folder)
    (folder / "meta").mkdir(parents=True, exist_ok=True)
    (folder / "Raw Data.csv").write_text(raw_data_csv(t, w), encoding="utf-8")
    events = events if events is not None else [("START", 0.0), ("PAUSE", float(t[-1]) + 0.005)]
    (folder / "meta" / "time.csv").write_text(time_csv(events), encoding="utf-8")
    (folder / "meta" / "device.csv").write_text('"property","value"\n"deviceModel","synthetic"\n', encoding="utf-8")
    return folder


#: the real-world features of :func:`real_world_session`'s recordings, one per recording
SESSION_WORLDS = (
    ("still phone, 1000 deg/s sensor (17.45 rad/s), bounces", RealWorld(still=True, clip=17.45, catch=25.0, bounce=0.5),
     (9.0, 15.0)),
    ("still phone, 2000 deg/s sensor, bounces, starts mid-flight", RealWorld(still=True, clip=34.9, catch=25.0,
                                                                            bounce=0.5, cut_s=0.3), (14.0, 26.0)),
    ("phone in the hand between throws, catch spikes past the range", RealWorld(clip=34.9, catch=40.0, bounce=0.3),
     (14.0, 26.0)),
)
#: a different object thrown once in the same session (its flight must be excluded)
OTHER_OBJECT = Truth(moments=(0.45, 0.62, 1.0))


def real_world_session(truth: Truth, rng, throws_per_recording: int = 3):
    """[(label, t, w, throws)] of a session: one recording per :data:`SESSION_WORLDS` entry
    (throws near the intermediate axis, 0.8-0.95 s like a bare phone's), then one recording of
    :data:`OTHER_OBJECT` thrown once from a still phone."""
    out = []
    for label, world, speed in SESSION_WORLDS:
        rates = [spin_near(truth, 1, rng.uniform(3.0, 15.0), rng.uniform(*speed), rng)
                 for _ in range(throws_per_recording)]
        t, w, throws = make_recording(truth, rates, rng, flight_s=(0.8, 0.95), world=world)
        out.append((label, t, w, throws))
    rates = [spin_near(OTHER_OBJECT, 1, 8.0, 20.0, rng)]
    t, w, throws = make_recording(OTHER_OBJECT, rates, rng, flight_s=0.9, world=RealWorld(still=True))
    out.append(("a different object, once", t, w, throws))
    return out
