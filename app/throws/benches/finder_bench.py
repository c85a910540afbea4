"""One flight finder, measured: ``tumble fit``, ``tumble predict`` and ``tumble live`` on the same throws.

A session (a synthetic one with real catches' spikes, clipping and bounces, or any recording)
is fitted (``tumble fit X --json --out FIT.toml``), predicted with that fit (``tumble predict
FIT.toml X --json``) and replayed in real time through a stand-in phone with an outage and a
clear between throws while ``tumble live URL --json`` follows it. For every throw found by all
three: the largest difference of start, end and measured flip between them (the last live
report of a flight counts), and how long after its catch live first reported it (wall s).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from . import synthetic as syn
from ..live.phyphox_server import PhyphoxReplay
from .live_bench import follow

#: wall seconds the live client runs past the end of the replay
TAIL_S = 4.0
#: a flight of one command is the same throw as another's when they overlap by this share of the shorter
SAME_THROW = 0.5
#: the outage's length (s)
OUTAGE_S = 2.5
#: the phone's gyroscope is turned this far (deg) from the body's principal axes (a phone is
#: never mounted on an object to a degree; fitted with the default --axes sensor all the same)
TURN_DEG = 2.0


def real_session(folder: Path, throws: int = 12, seed: int = 27, clip: float = 34.9):
    """A phyphox folder of one continuous recording of ``throws`` throws near the intermediate
    axis with real catches (bursts past the range, clipped at ``clip`` rad/s, bounces on a
    cushion); (path, t, w, plan)."""
    rng = np.random.default_rng(seed)
    truth = syn.Truth.rotated(TURN_DEG, moments=(0.18, 0.82, 1.0), drag=(0.004, 0.002, 0.006))
    rates = [syn.spin_near(truth, 1, rng.uniform(3.0, 12.0), rng.uniform(14.0, 26.0), rng) for _ in range(throws)]
    world = syn.RealWorld(still=True, clip=clip, catch=40.0, bounce=0.4)
    t, w, plan = syn.make_recording(truth, rates, rng, flight_s=(0.8, 0.95), world=world)
    return syn.write_phyphox(folder / "session", t, w), t, w, plan


def _tumble(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tumble", *args], capture_output=True, text=True,
                          env=os.environ.copy(), timeout=600)


def live_flights(t, w, plan, outage_s: float = OUTAGE_S, extra=()) -> tuple[list[dict], list[dict]]:
    """(flights as last reported, every flight event) of ``tumble live`` following ``(t, w)``
    replayed in real time with an outage and a clear between throws; times in recording time,
    each flight with ``first_wall`` (wall s after the replay began of its first report)."""
    replay = PhyphoxReplay([(t, w)])
    shift = replay.timeline.t[0] - t[0]           # recording time -> timeline time
    span = float(replay.timeline.t[-1])
    gaps = [(p.end + shift + 0.4, q.start + shift - 0.4) for p, q in zip(plan, plan[1:]) if q.start - p.end > 0.9]
    for at, kind, seconds in ((0.4 * span, "outage", outage_s), (0.6 * span, "clear", 0.0)):
        best = min(gaps, key=lambda g: abs(0.5 * (g[0] + g[1]) - at))
        replay.schedule(best[0], kind, seconds)
    cmd = [sys.executable, "-m", "tumble", "live", replay.url, "--json", "--duration", f"{span + TAIL_S:.2f}", *extra]
    replay.start()
    proc, events, began, reader = follow(cmd)
    try:
        proc.wait(timeout=span + TAIL_S + 120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        reader.join(5.0)
        proc.stdout.close()
        origin = replay.epoch_origin
        replay.stop()
    flights = []
    for e in (e for e in events if e["event"] == "flight"):
        back = (origin if e["segment"] else 0.0) - shift
        g = dict(e, start=e["start"] + back, end=e["end"] + back)
        same = [k for k, f in enumerate(flights) if f["segment"] == g["segment"] and _overlap(f, g)]
        if same:
            g["first_wall"] = flights[same[0]]["first_wall"]
            flights[same[0]] = g
        else:
            g["first_wall"] = e["_wall"]
            flights.append(g)
    return flights, events


def _overlap(a, b) -> bool:
    inter = min(a["end"], b["end"]) - max(a["start"], b["start"])
    return inter > SAME_THROW * min(a["end"] - a["start"], b["end"] - b["start"])


def compare(fitted: list[dict], predicted: list[dict], live: list[dict]) -> list[dict]:
    """Rows of the throws found by all three: each's start, end and measured flip per command."""
    rows = []
    for f in fitted:
        p = next((p for p in predicted if _overlap(f, p)), None)
        q = next((q for q in live if _overlap(f, q)), None)
        if p is None or q is None:
            continue
        rows.append({"fit": f, "predict": p, "live": q})
    return rows


def _spread(values) -> float | None:
    if any(v is None for v in values):
        return None if all(v is None for v in values) else float("inf")
    return float(max(values) - min(values))


def run_finder_bench(recording: str | None = None, throws: int = 12, seed: int = 27, say=print,
                     clip: float = 34.9) -> dict:
    """Fit, predict and follow live one session; the figures (see the module's docstring)."""
    from ..recordings.reader import read_recording
    from ..recordings.samples import find

    with tempfile.TemporaryDirectory(prefix="tumble-finder-bench-") as tmp:
        folder = Path(tmp)
        if recording is None:
            path, t, w, plan = real_session(folder, throws, seed, clip)
            catches = [p.end for p in plan]
        else:
            sample = find(recording)
            path = sample.path if sample is not None else Path(recording)
            rec = read_recording(Path(path))
            t, w, plan, catches = rec.t, rec.w, None, None
        fit_toml = folder / "fit.toml"
        done = _tumble("fit", str(path), "--json", "--out", str(fit_toml))
        if done.returncode:
            raise RuntimeError(f"tumble fit failed: {done.stderr.strip()}")
        fitted = [f for f in json.loads(done.stdout)["flights"]]
        done = _tumble("predict", str(fit_toml), str(path), "--json")
        if done.returncode:
            raise RuntimeError(f"tumble predict failed: {done.stderr.strip()}")
        doc = json.loads(done.stdout)
        predicted = doc["flights"] if isinstance(doc, dict) else doc
        if plan is None:  # a recording: its throws are the fit's flights
            plan = [syn.Throw(f["start"], f["end"], np.zeros(3), 0.0) for f in fitted]
            catches = [f["end"] for f in fitted]
        live, events = live_flights(t, w, plan)
    rows = compare(fitted, predicted, live)
    worst = {"start": 0.0, "end": 0.0, "flip": 0.0}
    for r in rows:
        for key, name in (("start", "start"), ("end", "end"), ("flip", "flip_time_measured")):
            s = _spread([r[c][name] for c in ("fit", "predict", "live")])
            r[f"{key}_spread"] = s
            if s is not None:
                worst[key] = max(worst[key], s)
    latencies = []
    for catch in catches:
        hit = next((q for q in live if q["start"] - 0.2 <= catch <= q["end"] + 0.3), None)
        latencies.append(None if hit is None else hit["first_wall"] - (catch - t[0]))
    reported = [x for x in latencies if x is not None]
    figures = {"throws": len(catches), "fit": len(fitted), "predict": len(predicted), "live": len(live),
               "live_events": sum(e["event"] == "flight" for e in events), "found_by_all": len(rows),
               "largest_start_s": worst["start"], "largest_end_s": worst["end"], "largest_flip_s": worst["flip"],
               "latency_s": latencies, "within_2s": int(sum(x <= 2.0 for x in reported)),
               "latency_median_s": float(np.median(reported)) if reported else None,
               "rows": [{c: {k: r[c][k] for k in ("start", "end", "flip_time_measured")} for c in ("fit", "predict", "live")}
                        for r in rows],
               "events": [{k: e.get(k) for k in ("event", "segment", "start", "end", "flip_time_measured", "_wall")}
                          for e in events]}
    say(f"{len(catches)} throws; flights: fit {len(fitted)}, predict {len(predicted)}, live {len(live)} "
        f"({figures['live_events']} flight events); {len(rows)} found by all three")
    for r in rows:
        say("  " + " | ".join(f"{c} {r[c]['start']:.3f}-{r[c]['end']:.3f} flip "
                              f"{'-' if r[c]['flip_time_measured'] is None else format(r[c]['flip_time_measured'], '.3f')}"
                              for c in ("fit", "predict", "live")))
    say(f"largest difference between the three: start {worst['start']:.3f} s, end {worst['end']:.3f} s, "
        f"measured flip {worst['flip']:.3f} s")
    if reported:
        say(f"live reports within 2 s of the catch: {figures['within_2s']} of {len(catches)}; latency median "
            f"{figures['latency_median_s']:.2f} s, max {max(reported):.2f} s "
            f"({', '.join('-' if x is None else f'{x:.2f}' for x in latencies)})")
    return figures


if __name__ == "__main__":  # python -m app.throws.benches.finder_bench [RECORDING]
    out = run_finder_bench(sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] else None)
    if len(sys.argv) > 2:
        Path(sys.argv[2]).write_text(json.dumps(out, allow_nan=False, default=str))
