"""The throw fit's speed: ``python -m tumble.throws.benches.speed_bench`` (or ``tumble fit-bench --speed``).

Two figures, each as the fit's own ``seconds`` (wall time of :func:`~app.throws.fitting.fit.fit_recordings`)
and as a ratio to a reference measured in the same run (the machine may be shared):

- one clean flight: 1.2 s of free flight at 200 Hz, no noise, the body (0.35, 0.8, 1) with
  quadratic drag, the rates stepping from zero to about 11 rad/s at release and back at the catch;
- seconds per 100 flights on a racket-like session: the ``racket-throws`` sample's true body
  (resources/recordings/racket-throws.toml: ratios, a sensor turned 0.7 deg, drag), about 100
  throws in recordings of 10 with its real-world features (hand ramps, a 1000 deg/s sensor that
  every catch drives past its range, bounces) and 0.01 rad/s noise
  (:func:`~app.throws.benches.synthetic.make_recording`).

The reference is the compiled integrator of the fit itself (:func:`~app.throws.fitting.dynamics.simulate_rates`)
over one second at 200 Hz, best of several: the ratio says how many such runs a fit costs,
whatever else the machine is doing. The process's CPU seconds of each fit are printed too.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from . import synthetic as syn
from ..fitting.dynamics import simulate_rates
from ..fitting.fit import fit_recordings
from ..fitting.memo import forget
from ..recordings.samples import SAMPLES_DIR

#: the clean flight: body, launch speed (rad/s), stamps, release and catch (s)
CLEAN_BODY = (0.35, 0.8, 1.0)
CLEAN_SPEED = 11.0
CLEAN_RATE_HZ = 200.0
CLEAN_RELEASE, CLEAN_CATCH, CLEAN_END = 1.0, 2.2, 3.2
#: the racket-like session: recordings x throws each
SESSION_RECORDINGS = 10
SESSION_THROWS = 10


def racket_truth() -> syn.Truth:
    """The racket sample's true body (its TOML beside the recording)."""
    import tomllib

    doc = tomllib.loads((SAMPLES_DIR / "racket-throws.toml").read_text(encoding="utf-8"))
    axes = np.array(doc["principal_axes"], dtype=float).T
    return syn.Truth(moments=tuple(doc["ratios"]), axes=axes, drag_model=doc["drag"]["model"],
                     drag=tuple(doc["drag"]["coefficients"]))


def clean_recording(seed: int = 1):
    """(recording, release, catch) of the one clean flight."""
    from .fit_bench import recording_from_arrays

    truth = syn.Truth(moments=CLEAN_BODY)
    rng = np.random.default_rng(seed)
    w0 = syn.spin_near(truth, 1, 8.0, CLEAN_SPEED, rng)
    t = np.round(np.arange(0.0, CLEAN_END, 1.0 / CLEAN_RATE_HZ), 9)
    w = np.zeros((len(t), 3))
    free = (t >= CLEAN_RELEASE) & (t < CLEAN_CATCH)
    w[free] = syn.free_flight(truth, w0, t[free])
    return recording_from_arrays("clean flight", t, w)


def racket_session(seed: int = 2026, recordings: int = SESSION_RECORDINGS, throws: int = SESSION_THROWS):
    """(recordings, number of throws) of a racket-like session."""
    from .fit_bench import recording_from_arrays

    truth = racket_truth()
    world = syn.RealWorld(still=False, clip=17.45, catch=25.0, bounce=0.3)
    rng = np.random.default_rng(seed)
    out, n = [], 0
    for k in range(recordings):
        rates = [syn.spin_near(truth, 1, rng.uniform(3.0, 12.0), rng.uniform(9.0, 15.0), rng) for _ in range(throws)]
        t, w, thrown = syn.make_recording(truth, rates, rng, flight_s=(0.5, 0.9), world=world)
        out.append(recording_from_arrays(f"racket {k + 1}", t, w))
        n += len(thrown)
    return out, n


def reference_seconds(repeats: int = 20) -> float:
    """Best wall time of the fit's compiled integrator over 1 s at 200 Hz (the reference)."""
    times = np.arange(1, 201) / 200.0
    inertia = np.diag(CLEAN_BODY)
    simulate_rates(times, 0.0, [0.5, 11.0, 0.3], inertia, "quadratic", [0.004, 0.012, 0.003])  # compiled
    best = np.inf
    for _ in range(repeats):
        began = time.perf_counter()
        simulate_rates(times, 0.0, [0.5, 11.0, 0.3], inertia, "quadratic", [0.004, 0.012, 0.003])
        best = min(best, time.perf_counter() - began)
    return best


def _timed_fit(recordings, **kwargs):
    forget()  # nothing an earlier fit found is known to this one
    cpu = time.process_time()
    result = fit_recordings(recordings, **kwargs)
    return result, time.process_time() - cpu


def run_speed_bench(seed: int = 2026, say=print, recordings: int = SESSION_RECORDINGS) -> dict:
    """Both figures (see the module's docstring); ``say`` prints the lines."""
    clean = clean_recording()
    fit_recordings([clean])  # the compiled kernels loaded once, as in any longer session
    ref = reference_seconds()
    result, cpu = _timed_fit([clean])
    t = clean.t
    edges = [(float(t[f.i0]), float(t[f.i1 - 1])) for f in result.flights]
    clean_row = {"seconds": result.seconds, "cpu_seconds": cpu,
                 "moments": [float(m) for m in result.moments], "edges": edges}
    session, n_throws = racket_session(seed, recordings)
    result, cpu = _timed_fit(session)
    ref_after = reference_seconds()
    ref = min(ref, ref_after)  # the best of both: the machine's load changes while the bench runs
    clean_row["ratio_to_reference"] = clean_row["seconds"] / ref
    truth = racket_truth()
    n = len([f for f in result.flights if not f.excluded])
    per100 = 100.0 * result.seconds / max(n, 1)
    session_row = {"throws": n_throws, "flights_fitted": n, "flights_found": len(result.flights),
                   "seconds": result.seconds, "cpu_seconds": cpu, "seconds_per_100": per100,
                   "cpu_seconds_per_100": 100.0 * cpu / max(n, 1),
                   "ratio_to_reference_per_100": per100 / ref,
                   "ratio_error": float(np.max(np.abs(result.moments / np.asarray(truth.moments) - 1)))}
    figures = {"reference_seconds": ref, "clean_flight": clean_row, "racket_session": session_row}
    say(f"reference: the fit's integrator over 1 s at 200 Hz, best of 20: {1e6 * ref:.0f} us")
    say(f"one clean flight (1.2 s at 200 Hz, no noise, body {CLEAN_BODY}): {clean_row['seconds']:.3f} s "
        f"({clean_row['cpu_seconds']:.3f} s CPU), {clean_row['ratio_to_reference']:.0f}x the reference; edges "
        + ", ".join(f"{a:.3f}-{b:.3f} s" for a, b in edges))
    say(f"racket-like session ({n_throws} throws in {recordings} recordings, {n} flights fitted, "
        f"{len(result.flights)} found): {session_row['seconds']:.2f} s ({cpu:.2f} s CPU), "
        f"{per100:.2f} s per 100 flights ({session_row['cpu_seconds_per_100']:.2f} s CPU), "
        f"{session_row['ratio_to_reference_per_100']:.0f}x the reference per 100 flights; "
        f"ratio error {100 * session_row['ratio_error']:.3f}%")
    return figures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tumble.throws.benches.speed_bench",
                                     description="the throw fit's speed: one clean flight, seconds per 100 flights")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--recordings", type=int, default=SESSION_RECORDINGS,
                        help=f"recordings of {SESSION_THROWS} throws in the session (default {SESSION_RECORDINGS})")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.recordings < 1:
        print(f"tumble: --recordings must be >= 1, got {args.recordings}", file=sys.stderr)
        return 2
    figures = run_speed_bench(args.seed, (lambda *_: None) if args.json else print, args.recordings)
    if args.json:
        print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
