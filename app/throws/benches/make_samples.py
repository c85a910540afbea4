"""The shipped sample recordings, made reproducibly by the synthetic generator: ``python -m tumble.throws.benches.make_samples``.

Each sample is a session of throws of a known body with real recordings' features
(:class:`~app.throws.benches.synthetic.RealWorld`), written as the file a phone app exports and
a TOML beside it with the true body (read by :mod:`app.throws.recordings.samples`). The same
seed writes the same bytes: the zip's dates are fixed and the numbers are phyphox's 10 digits.

- ``phone-throws``: a bare phone (the ``phone`` preset's body: its sensor axes are the case's,
  so its principal axes are the sensor's, permuted), thrown 6 times end over end near its width
  axis from a table where it lies still (exact zeros, as an iPhone reads), one catch slamming
  past the gyroscope's 2000 deg/s range; a phyphox export ``.zip``.
- ``racket-throws``: a tennis racket (the ``tennis-racket`` preset's body) with a phone taped to
  its handle, 0.7 deg off the racket's axes, thrown 6 times across the head from the hand (no
  still phone between throws), a 1000 deg/s sensor (17.45 rad/s) that every catch drives past
  its range, and bounces off the cushion; a plain CSV of time and three rates.
"""

from __future__ import annotations

import argparse
import io
import math
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import synthetic as syn
from ...atomic import atomic_path
from ..recordings.samples import SAMPLES_DIR

#: the zip entries' date (fixed: the same seed writes the same bytes)
ZIP_DATE = (2026, 1, 1, 12, 0, 0)
#: the phone preset's principal moments over the largest (resources/scenarios/phone.toml: a
#: 70 x 150 x 8 mm slab of 170 g; tumble inspect phone)
PHONE_RATIOS = (0.18137, 0.82336, 1.0)
#: the tennis-racket preset's (tumble inspect tennis-racket)
RACKET_RATIOS = (0.10268, 0.89946, 1.0)
#: a phone's sensor axes: x across the screen (the width: the intermediate axis), y along it (the
#: length: the minor axis), z out of the screen (the major axis); columns: minor, intermediate,
#: major in the sensor frame (a proper rotation)
PHONE_AXES = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]])
#: the rate (rad/s) a slammed catch reads on one axis for CLIP_SAMPLES samples: the range
CLIPPED_CATCH_SAMPLES = 3


@dataclass(frozen=True)
class Plan:
    """How one sample is made: its name, what it is (one line), the body, the real world's
    features, the throws (count, launch speed range rad/s, angle from the intermediate axis
    deg, flight s), the file kind and the seed."""

    name: str
    what: str
    truth: syn.Truth
    world: syn.RealWorld
    throws: int
    speed: tuple
    angle_deg: tuple
    flight_s: tuple
    kind: str
    seed: int
    slammed_catch: int | None = None


PLANS = (
    Plan("phone-throws", "a bare phone thrown 6 times end over end from a table, one catch past the 2000 deg/s "
         "range (phyphox export)",
         syn.Truth(moments=PHONE_RATIOS, axes=PHONE_AXES, drag=(0.004, 0.002, 0.006)),
         syn.RealWorld(still=True, clip=34.9, catch=6.0), 6, (14.0, 24.0), (3.0, 12.0), (0.8, 0.95), "zip", 2701,
         slammed_catch=3),
    Plan("racket-throws", "a tennis racket with a phone taped to its handle, 6 throws across the head from the hand, "
         "a 1000 deg/s sensor, bounces (CSV)",
         syn.Truth(moments=RACKET_RATIOS, axes=syn.Truth.rotated(0.7, axis=(1.0, -2.0, 1.0)).axes @ PHONE_AXES,
                   drag=(0.002, 0.008, 0.010)),
         syn.RealWorld(still=False, clip=17.45, catch=25.0, bounce=0.3), 6, (9.0, 15.0), (3.0, 12.0), (0.5, 0.9),
         "csv", 2702),
)


def session(plan: Plan):
    """(t, w, throws) of ``plan``'s recording (sensor frame, rad/s)."""
    rng = np.random.default_rng(plan.seed)
    rates = [syn.spin_near(plan.truth, 1, rng.uniform(*plan.angle_deg), rng.uniform(*plan.speed), rng)
             for _ in range(plan.throws)]
    t, w, throws = syn.make_recording(plan.truth, rates, rng, flight_s=plan.flight_s, world=plan.world)
    if plan.slammed_catch is not None:
        # one catch slams the phone into the hand: a few samples past the gyroscope's range
        catch = throws[plan.slammed_catch].end
        k = int(np.searchsorted(t, catch))
        axis = int(np.argmax(np.abs(w[k])))
        sign = 1.0 if w[k, axis] >= 0 else -1.0
        w[k:k + CLIPPED_CATCH_SAMPLES, axis] = sign * plan.world.clip
    return t, w, throws


def _zip_bytes(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, text in files.items():
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, text.encode("utf-8"), compresslevel=9)
    return buf.getvalue()


def recording_bytes(plan: Plan, t, w) -> bytes:
    """The sample's file: a phyphox export zip, or a CSV of time and three rates."""
    if plan.kind == "zip":
        events = [("START", 0.0), ("PAUSE", float(t[-1]) + 0.005)]
        return _zip_bytes({"Raw Data.csv": syn.raw_data_csv(t, w), "meta/time.csv": syn.time_csv(events),
                           "meta/device.csv": '"property","value"\n"deviceModel","synthetic"\n'})
    rows = ["t (s),wx (rad/s),wy (rad/s),wz (rad/s)"]
    rows += [f"{ti:.5f},{a:.5f},{b:.5f},{c:.5f}" for ti, (a, b, c) in zip(t, w)]
    return ("\n".join(rows) + "\n").encode("utf-8")


def metadata(plan: Plan, throws) -> dict:
    """The TOML beside the sample: what it is, the true body, how it was made."""
    truth = plan.truth
    return {
        "name": plan.name,
        "what": plan.what,
        "file": f"{plan.name}.{plan.kind}",
        "ratios": [float(r) for r in truth.moments],
        "principal_axes": [[round(float(x), 12) + 0.0 for x in col] for col in truth.axes.T],
        "drag": {"model": truth.drag_model, "coefficients": [float(c) for c in truth.drag]},
        "throws": [{"release": round(th.start, 6), "catch": round(th.end, 6),
                    "omega0": [round(float(x), 6) for x in th.omega0],
                    "angle_from_intermediate_deg": round(th.angle_deg, 3)} for th in throws],
        "made": ("tumble.throws.benches.make_samples: Tumble's synthetic generator (Euler's equations with drag by "
                 "scipy's DOP853 at rtol 1e-11, 100 Hz stamps with jitter, noise 0.01 rad/s, a hand ramp before "
                 f"each flight, a catch burst after); real-world features: {_features(plan)}"),
        "seed": plan.seed,
    }


def _features(plan: Plan) -> str:
    w = plan.world
    parts = ["still on a table between throws (exact zeros)" if w.still else "in the hand between throws",
             f"range +-{w.clip:g} rad/s", f"catch bursts of {w.catch:g} rad/s"]
    if w.bounce:
        parts.append(f"a bounce after {100 * w.bounce:.0f}% of catches")
    if plan.slammed_catch is not None:
        parts.append(f"catch {plan.slammed_catch + 1} clipped")
    if not np.allclose(plan.truth.axes, plan.truth.axes.round()):
        angle = math.degrees(math.acos(min(1.0, (np.trace(plan.truth.axes @ PHONE_AXES.T) - 1) / 2)))
        parts.append(f"sensor turned {angle:.1f} deg from the body's axes")
    return ", ".join(parts)


def write_samples(folder=SAMPLES_DIR, plans=PLANS) -> list[Path]:
    """Write every sample and its TOML into ``folder`` (each file atomically); the paths written."""
    import tomli_w

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for plan in plans:
        t, w, throws = session(plan)
        for path, data in ((folder / f"{plan.name}.{plan.kind}", recording_bytes(plan, t, w)),
                           (folder / f"{plan.name}.toml", tomli_w.dumps(metadata(plan, throws)).encode("utf-8"))):
            with atomic_path(path) as tmp:
                tmp.write_bytes(data)
            out.append(path)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tumble.throws.benches.make_samples",
                                     description="write the shipped sample recordings and their true bodies")
    parser.add_argument("folder", nargs="?", default=str(SAMPLES_DIR), help=f"where (default {SAMPLES_DIR})")
    args = parser.parse_args(argv)
    for path in write_samples(args.folder):
        print(f"wrote {path} ({path.stat().st_size / 1024:.0f} kB)")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
