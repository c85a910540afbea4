"""``tumble fit-bench``: the throw fit's figures on synthetic recordings, printed as tables.

Recovery: recordings of a known body (ratios, drag, sensor mounting) written as phyphox
folders, read back and fitted; the flights found are matched to the true releases.
Speed: the fit's wall time for 5 and for 100 flights of 1 s, and as a ratio to one plain
``rk4`` run of the same flights through :mod:`app.physics` (dt 1 ms), timed in the same run.
Real world: a session of recordings carrying real recordings' features (a still phone reading
exact zeros, 1000 and 2000 deg/s sensors, catch spikes past the range, bounces, a recording
starting mid-flight, one throw of a different object), fitted together.
Prediction: a body fitted on 5 throws predicts 50 others from the mean of their first 3
samples, and (``tumble predict``) from omega0 fitted on their first 0.1 s, also on clips
that end 0.1 s after the release: the first flip time and the omega trajectory.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from . import synthetic as syn
from ..fitting.fit import fit_recordings
from ..fitting.memo import forget
from ..fitting.predict import FittedBody, predict_flights, predict_recording
from ..recordings.reader import Recording, read_recording

#: how far (s) a found flight's start may lie from the true release
START_TOLERANCE_S = 0.02
#: the file ``fit-bench --out DIR`` keeps the figures in, beside the sessions (what ``--json`` prints)
FIGURES_NAME = "figures.json"


def _recording(truth, rng, n, folder: Path, name: str, speed=(12.0, 24.0), flight_s=1.0, rate_hz=100.0):
    t, w, throws = syn.make_recording(truth, syn.throw_mix(truth, n, rng, speed), rng, flight_s, rate_hz)
    path = syn.write_phyphox(folder / name, t, w)
    write_truth(path, truth, throws)
    return read_recording(path), throws


def write_truth(path: Path, truth, throws) -> None:
    """``truth.json`` in a session's folder: the body and the throws it was made with (kept by
    ``fit-bench --out``)."""
    import json

    doc = {"ratios": [float(m) for m in truth.moments], "principal_axes": [[float(x) for x in c] for c in truth.axes.T],
           "drag": {"model": truth.drag_model, "coefficients": [float(c) for c in truth.drag]},
           "throws": [{"release": th.start, "catch": th.end, "omega0": [float(x) for x in th.omega0],
                       "angle_from_intermediate_deg": th.angle_deg} for th in throws]}
    (Path(path) / "truth.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


def _match(result, throws, rec):
    """(found, worst |start error|) of the true throws among the fitted flights; a throw
    released faster than the sensor reads starts at its first sample read whole."""
    starts = np.array([f.start for f in result.flights if not f.excluded])
    errors = []
    for th in throws:
        first = rec.t[(rec.t >= th.start - 1e-9) & ~rec.saturated]
        errors.append(float(np.min(np.abs(starts - first[0]))) if len(first) and len(starts) else np.inf)
    found = sum(e <= START_TOLERANCE_S for e in errors)
    return found, max(errors)


def _recovery_row(label, truth, rec, throws, axes_mode="fit"):
    forget()  # its seconds those of a fit that knows nothing of an earlier one
    result = fit_recordings([rec], drag_model=truth.drag_model, axes_mode=axes_mode)
    found, worst = _match(result, throws, rec)
    ratio_err = np.max(np.abs(result.moments / np.asarray(truth.moments) - 1))
    drag_err = np.max(np.abs(result.drag / np.asarray(truth.drag) - 1))
    return result, {"data": label, "flights": len(throws), "found": found, "extra": len(result.flights) - found,
                    "worst_start_ms": 1e3 * worst if np.isfinite(worst) else None,
                    "ratio_error": float(ratio_err), "drag_error": float(drag_err),
                    "ratio_std_max": float(np.max(result.moments_std[:2] / result.moments[:2])),
                    "clipped_samples": int(rec.saturated.sum()), "fit_seconds": result.seconds}


def _reference_seconds(truth, throws) -> float:
    """Wall time of one plain rk4 run (tumble.physics, dt 1 ms) of every flight, best of three."""
    from ...physics.body import Body
    from ...physics.integrators import simulate
    from ...physics.loads import Drag, Loads
    from ...physics.model import compile_model
    from ...physics.state import State

    model = compile_model(Body(1.0, truth.inertia, allow_unphysical=True),
                          Loads(drags=(Drag(truth.drag_model, np.asarray(truth.drag)),)))
    best = np.inf
    for _ in range(3):
        began = time.perf_counter()
        for th in throws:
            simulate(model, State.initial(np.zeros(3), np.zeros(3), (1.0, 0, 0, 0), th.omega0), "rk4", 1e-3,
                     th.end - th.start)
        best = min(best, time.perf_counter() - began)
    return best


def _prediction_row(label, result, rec):
    preds = predict_recording(result, rec)
    near = [p for p in preds if p.near_intermediate and p.flip_measured is not None]
    errors = np.array([p.flip_error if p.flip_error is not None else np.inf for p in near])
    rms = np.array([p.rms_relative for p in preds])
    return {"model": label, "throws": len(preds), "near_with_flip": len(near),
            "flip_within_5pct": float(np.mean(errors <= 0.05)) if len(near) else None,
            "median_flip_error": float(np.median(errors)) if len(near) else None,
            "omega_within_10pct": float(np.mean(rms <= 0.10)) if len(rms) else None,
            "median_omega_rms": float(np.median(rms)) if len(rms) else None}


def _real_world(truth, rng, folder: Path) -> dict:
    """The figures of a real-world session (see :func:`~app.throws.benches.synthetic.real_world_session`)."""
    parts = syn.real_world_session(truth, rng)
    recordings = []
    for k, (label, t, w, throws) in enumerate(parts):
        path = syn.write_phyphox(folder / f"world{k}", t, w)
        write_truth(path, syn.OTHER_OBJECT if k == len(parts) - 1 else truth, throws)
        recordings.append(read_recording(path, name=label))
    forget()
    result = fit_recordings(recordings, axes_mode="fit")
    rows = []
    for k, ((label, t, _, throws), rec) in enumerate(zip(parts, recordings)):
        mine = [f for f in result.flights if f.rec_index == k]
        found, edges, missed_short = 0, [], 0
        for th in throws:
            over = [f for f in mine if f.start < th.end and f.end > th.start]
            first = rec.t[(rec.t >= th.start - 1e-9) & ~rec.saturated]
            # a flight holds no clipped sample at either edge: each edge is measured from the
            # first unclipped sample after the release and the last one before the catch
            last = rec.t[(rec.t <= th.end + 1e-9) & ~rec.saturated]
            if len(over) == 1 and len(first) and len(last):
                found += 1
                if not over[0].excluded:
                    edges += [abs(over[0].start - first[0]), abs(over[0].end - last[-1])]
            elif not over and th.end - th.start < 0.35:
                missed_short += 1
        rows.append({"data": label, "flights": len(throws), "found": found, "short_bounces_left_out": missed_short,
                     "excluded": sum(f.excluded for f in mine), "cut": sum(f.cut is not None for f in mine),
                     "worst_edge_ms": 1e3 * max(edges) if edges else None,
                     "clipped_samples": int(rec.saturated.sum()),
                     "exact_zeros": int(np.sum(np.all(rec.w == 0.0, axis=1)))})
    return {"rows": rows, "ratio_error": float(np.max(np.abs(result.moments / np.asarray(truth.moments) - 1))),
            "ratio_std_max": float(np.max(result.moments_std[:2] / result.moments[:2])),
            "drag_error": float(np.max(np.abs(result.drag / np.asarray(truth.drag) - 1))),
            "fit_seconds": result.seconds}


def _lead_row(label, result, rec, throws, truth, clip_s=None):
    """Prediction figures of ``tumble predict --lead 0.1`` on windows from each release (to the
    catch, or ``clip_s`` after the release: the flip never in the data)."""
    from ..fitting.report import flight_scenario

    body = FittedBody.of(flight_scenario(result))
    windows = [(th.start, th.end if clip_s is None else th.start + clip_s) for th in throws]
    preds = predict_flights(body, [rec], windows, lead=0.1, horizon=2.0)
    errors, rms = [], []
    for th, p in zip(throws, preds):
        rms.append(p["rms_relative"])
        if p["flip_time_predicted"] is None or th.angle_deg >= 30:
            continue
        times = np.arange(th.start, th.start + 2.0, 1e-4)
        mid = syn.free_flight(truth, th.omega0, times) @ truth.axes[:, 1]
        cross = np.flatnonzero(np.sign(mid) != np.sign(mid[0]))
        if len(cross):
            true = 1e-4 * cross[0] - (p["start"] - th.start)
            errors.append(abs(p["flip_time_predicted"] - true) / true)
    errors = np.array(errors)
    return {"model": label, "throws": len(preds), "near_with_flip": len(errors),
            "flip_within_5pct": float(np.mean(errors <= 0.05)) if len(errors) else None,
            "median_flip_error": float(np.median(errors)) if len(errors) else None,
            "omega_within_10pct": float(np.mean(np.array(rms) <= 0.10)) if clip_s is None else None,
            "median_omega_rms": float(np.median(rms)) if clip_s is None else None}


def run_fit_bench(seed: int = 2026, say=print, out=None) -> dict:
    """Run every measurement; ``say`` gets the printed lines. Returns the figures. The sessions
    are written to a temporary folder removed at the end, or kept in the folder ``out``."""
    say = say or (lambda _line: None)
    rng = np.random.default_rng(seed)
    truth = syn.Truth.rotated(2.0)
    say(f"tumble fit-bench (seed {seed}): a body with ratios {', '.join(f'{m:g}' for m in truth.moments)}, "
        f"{truth.drag_model} drag [{', '.join(f'{c:g}' for c in truth.drag)}] (sensor frame, largest moment 1), "
        "principal axes turned 2 deg from the sensor's; 100 Hz stamps 10.02 ms apart with jitter (or 400 Hz "
        "irregular), noise 0.01 rad/s, a smooth hand ramp before each flight and a catch burst after, clipping at "
        "+-34.9 rad/s (the real-world session: see its table); fitted with --axes fit --drag quadratic")
    figures = {"seed": seed, "recovery": [], "prediction": []}
    with tempfile.TemporaryDirectory(prefix="tumble-fit-bench-") as tmp:
        folder = Path(tmp) if out is None else Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        rows = []
        rec5, throws5 = _recording(truth, rng, 5, folder, "five")
        fit5, row = _recovery_row("5 flights of 1 s, 100 Hz", truth, rec5, throws5)
        rows.append(row)
        rows.append(_recovery_row("the same, fitted with the defaults (--axes sensor: the 2 deg turn ignored)", truth,
                                  rec5, throws5, axes_mode="sensor")[1])
        rec400, throws400 = _recording(truth, rng, 5, folder, "fast", rate_hz=400.0)
        rows.append(_recovery_row("5 flights of 1 s, 400 Hz irregular", truth, rec400, throws400)[1])
        rec100, throws100 = _recording(truth, rng, 100, folder, "hundred", speed=(12.0, 38.0))
        _, row = _recovery_row("100 flights of 1 s, up to 38 rad/s (clipped samples left out)", truth, rec100,
                               throws100)
        rows.append(row)
        reference = _reference_seconds(truth, throws100)
        figures["recovery"] = rows
        figures["reference_seconds_100"] = reference
        figures["fit_over_reference_100"] = rows[-1]["fit_seconds"] / reference
        say("")
        say("| data | flights found (start within 20 ms of the first whole sample) | worst start error (ms) | ratio error (max) | "
            "ratio std error (max) | drag error (max) | clipped samples | fit (s) |")
        say("|---|---|---|---|---|---|---|---|")
        for r in rows:
            extra = f" (+{r['extra']} extra)" if r["extra"] else ""
            worst = "-" if r["worst_start_ms"] is None else f"{r['worst_start_ms']:.1f}"
            say(f"| {r['data']} | {r['found']}/{r['flights']}{extra} | {worst} | "
                f"{100 * r['ratio_error']:.3f}% | {100 * r['ratio_std_max']:.3f}% | {100 * r['drag_error']:.2f}% | "
                f"{r['clipped_samples']} | {r['fit_seconds']:.2f} |")
        say(f"reference: one plain rk4 run (tumble.physics, dt 1 ms) of the same 100 flights took {reference:.3f} s; "
            f"the fit took {figures['fit_over_reference_100']:.0f}x that")

        # the real world: still phones, two sensor ranges, catch spikes, bounces, a cut start, another object
        world = _real_world(truth, rng, folder)
        figures["real_world"] = world
        say("")
        say(f"real world: {len(world['rows'])} recordings of one session fitted together (--axes fit) in "
            f"{world['fit_seconds']:.2f} s: ratio error {100 * world['ratio_error']:.3f}%, ratio std error "
            f"{100 * world['ratio_std_max']:.3f}%, drag error {100 * world['drag_error']:.2f}%")
        say("| recording | throws and bounces | found as one flight | short bounces left out | excluded | "
            "cut at the recording's edge | worst edge error (ms) | clipped samples | exact zeros |")
        say("|---|---|---|---|---|---|---|---|---|")
        for r in world["rows"]:
            worst = "-" if r["worst_edge_ms"] is None else f"{r['worst_edge_ms']:.1f}"
            say(f"| {r['data']} | {r['flights']} | {r['found']} | {r['short_bounces_left_out']} | {r['excluded']} | "
                f"{r['cut']} | {worst} | {r['clipped_samples']} | {r['exact_zeros']} |")

        # prediction: a session of 5 throws fits the body; 50 later throws are predicted
        session, _ = _recording(truth, rng, 5, folder, "session", flight_s=(0.8, 1.2))
        later, later_throws = _recording(truth, rng, 50, folder, "later", flight_s=(0.6, 1.2))
        fitted = fit_recordings([session], drag_model="quadratic", axes_mode="fit")
        plain = fit_recordings([session], drag_model="none", axes_mode="fit")
        preds = [_prediction_row("fitted ratios + quadratic drag", fitted, later),
                 _prediction_row("fitted ratios, no drag", plain, later)]
        figures["prediction"] = preds
        say("")
        say("prediction: fitted on 5 throws, 50 later throws predicted from the mean of their first 3 samples")
        say("| model | throws | near the intermediate axis, flip seen | first flip within 5% | median flip error | "
            "ω within 10% of ‖ω0‖ RMS | median ω RMS / ‖ω0‖ |")
        say("|---|---|---|---|---|---|---|")
        for p in preds:
            say(f"| {p['model']} | {p['throws']} | {p['near_with_flip']} | {_pct(p['flip_within_5pct'])} | "
                f"{_pct(p['median_flip_error'], 2)} | {_pct(p['omega_within_10pct'])} | "
                f"{_pct(p['median_omega_rms'], 2)} |")
        leads = [_lead_row("tumble predict --lead 0.1, windows release to catch", fitted, later, later_throws, truth),
                 _lead_row("tumble predict --lead 0.1, clips ending 0.1 s after the release", fitted, later,
                           later_throws, truth, clip_s=0.1)]
        figures["prediction_lead"] = leads
        say("")
        say("tumble predict: the same 50 throws, omega0 fitted on their first 0.1 s; flip errors against the true "
            "first flip (throws within 30 deg of the intermediate axis)")
        say("| windows | throws | near the intermediate axis | first flip within 5% | median flip error | "
            "median ω RMS / ‖ω0‖ |")
        say("|---|---|---|---|---|---|")
        for p in leads:
            say(f"| {p['model']} | {p['throws']} | {p['near_with_flip']} | {_pct(p['flip_within_5pct'])} | "
                f"{_pct(p['median_flip_error'], 2)} | {_pct(p['median_omega_rms'], 2)} |")
        if out is not None:
            from ...atomic import write_text

            write_text(folder / FIGURES_NAME, figures_json(figures) + "\n")
            say(f"kept the sessions in {folder} (phyphox folders, each with truth.json) and the figures in "
                f"{FIGURES_NAME}")
    return figures


def figures_json(figures: dict) -> str:
    """The figures as the one JSON object ``fit-bench --json`` prints (and ``--out`` keeps)."""
    import json

    return json.dumps(figures, allow_nan=False)


def _pct(x, digits=0):
    return "-" if x is None else f"{100 * x:.{digits}f}%"


def recording_from_arrays(name, t, w) -> Recording:
    """A one-segment :class:`Recording` from arrays (tests and the bench)."""
    from ..recordings.reader import saturated_samples

    return Recording(name, np.asarray(t, dtype=float), np.asarray(w, dtype=float),
                     np.zeros(len(t), dtype=np.int64), saturated_samples(w))
