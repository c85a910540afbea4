"""A recording whose true orientation is known, for the replay's tests: phone throws of a known
body at 200 Hz, no noise, each free flight the closed-form torque-free motion (app.physics.exact),
between a hand's ramp and a catch's burst, written as a phyphox export."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tumble.physics import exact
from tumble.physics import quaternion as quat
from tumble.throws.benches.synthetic import write_phyphox

SPACING = 0.005  # 200 Hz
MOMENTS = (0.3, 0.75, 1.0)
#: launch rates (sensor = principal frame) near the intermediate axis, a phone's 15-25 rad/s
LAUNCHES = ((0.9, 18.0, 1.4), (-1.3, -22.0, 0.8), (0.6, 15.0, -2.0))
FLIGHT_S = 0.9


@dataclass
class Flight:
    """One true flight: its stamps (recording time) and orientations (body to world, any start)."""

    t: np.ndarray
    q: np.ndarray

    def relative(self, t0: float, times) -> np.ndarray:
        """The true orientation at ``times`` relative to that at ``t0`` (both stamps of the flight)."""
        i = int(np.argmin(np.abs(self.t - t0)))
        k = np.array([int(np.argmin(np.abs(self.t - x))) for x in times])
        assert np.allclose(self.t[k], times, atol=1e-9) and abs(self.t[i] - t0) < 1e-9
        return quat.multiply(quat.conjugate(self.q[i]), self.q[k])


def write_throws(folder, launches=LAUNCHES, seed: int = 3) -> list[Flight]:
    """Write the recording into ``folder``; returns its true flights."""
    rng = np.random.default_rng(seed)
    ts, ws, flights = [], [], []
    cursor = 0.0

    def stamps(span):
        n = int(round(span / SPACING))
        return cursor + SPACING * np.arange(n)

    for w0 in launches:
        rest = stamps(0.7)
        ts.append(rest)
        ws.append(0.2 * np.sin(2 * np.pi * 0.7 * rest)[:, None] * np.ones(3))
        cursor = rest[-1] + SPACING
        ramp = stamps(0.25)
        s = ((ramp - ramp[0]) / 0.25)[:, None]
        ts.append(ramp)
        ws.append(s * s * (3 - 2 * s) * np.asarray(w0))
        cursor = ramp[-1] + SPACING
        free = stamps(FLIGHT_S)
        q, w = exact.torque_free(MOMENTS, quat.normalize(rng.normal(size=4)), w0, free - free[0])
        ts.append(free)
        ws.append(w)
        flights.append(Flight(free, q))
        cursor = free[-1] + SPACING
        catch = stamps(0.25)
        fade = np.exp(-6 * (catch - catch[0]) / 0.25)[:, None]
        ts.append(catch)
        ws.append(w[-1] * fade + rng.normal(0.0, 12.0, (len(catch), 3)))
        cursor = catch[-1] + SPACING
    tail = stamps(0.6)
    ts.append(tail)
    ws.append(np.zeros((len(tail), 3)))
    t = np.round(np.concatenate(ts), 9)
    w = np.clip(np.concatenate(ws), -34.9, 34.9)
    write_phyphox(folder, t, w)
    return flights


def read_csv(path) -> tuple[list[str], np.ndarray]:
    """(header, rows) of a CSV of numbers."""
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    return lines[0].split(","), np.array([[float(x) for x in line.split(",")] for line in lines[1:]])
