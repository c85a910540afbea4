"""The live stream's figures: a synthetic session replayed in real time through a stand-in phone
with an outage and a clear midway, while ``tumble live --json --out`` runs in a child process.

As a user does it: the phone is open but not measuring until the child says ``connected`` (the
user presses start once the app is following), and the child is stopped with Ctrl+C TAIL_S after
the last sample was played. A child that starts slowly (a busy machine) thus misses no throw: the
playback's clock, which a clear and an outage follow, starts only once it listens.

Printed: throws reported as one flight each (start and end within 0.1 s of the true ones, as
last reported), the latency of each flight's first report after its catch (wall s), the child's CPU time over its wall time
(from the kernel's accounting of the child), the end ratios against an offline fit of the
same recordings, and whether every served sample reached the CSV files.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from . import synthetic as syn
from ..fitting.fit import fit_paths
from ..live.fitter import last_reports
from ..live.phyphox_server import PhyphoxReplay
from ..recordings.reader import read_recording

#: a throw counts as found when a flight's start and end lie this close (s) to the true ones
MATCH_S = 0.1
#: wall seconds the client runs past the end of the replay
TAIL_S = 3.0
#: the longest the phone waits for the child's ``connected`` before it starts measuring anyway
#: (wall s): a child's start-up (imports, compiled kernels) takes 1-2 s idle, 5-10 s on a machine
#: busy with other jobs; generous, since a child that never connects is reported, not waited for
CONNECT_DEADLINE_S = 120.0
#: how often the bench looks at the child's events while waiting (s)
LOOK_S = 0.02


def session(folder: Path, throws: int, seed: int):
    """A synthetic session of ``throws`` throws written as a phyphox folder; (path, t, w, throws)."""
    rng = np.random.default_rng(seed)
    truth = syn.Truth.rotated(2.0)
    t, w, plan = syn.make_recording(truth, syn.throw_mix(truth, throws, rng), rng, (0.5, 1.0))
    return syn.write_phyphox(folder / "session", t, w), t, w, plan


def read_events(proc, events, began):
    """The JSON events a running ``tumble live`` prints, each with ``_wall`` (s since ``began``)."""
    for line in proc.stdout:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        event["_wall"] = time.monotonic() - began
        events.append(event)


def follow(cmd):
    """Start ``tumble live ... --json`` (``cmd``) and read its events in a thread as they come:
    (process, events list filled as they arrive, start time, reader thread)."""
    began = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=os.environ.copy())
    events: list[dict] = []
    reader = threading.Thread(target=read_events, args=(proc, events, began), daemon=True)
    reader.start()
    return proc, events, began, reader


def wait_for(condition, deadline_s: float) -> bool:
    """Wait until ``condition()`` holds or ``deadline_s`` (wall s) have passed; whether it held."""
    end = time.monotonic() + deadline_s
    while not condition():
        if time.monotonic() >= end:
            return False
        time.sleep(LOOK_S)
    return True


def run_live_bench(throws: int = 12, seed: int = 2026, speed: float = 1.0, outage_s: float = 2.5,
                   say=print) -> dict:
    """Replay, follow, measure; returns the figures (see the module's docstring)."""
    with tempfile.TemporaryDirectory(prefix="tumble-live-bench-") as tmp:
        folder = Path(tmp)
        path, t, w, plan = session(folder, throws, seed)
        replay = PhyphoxReplay([(t, w)], speed=speed)
        shift = replay.timeline.t[0] - t[0]           # recording time -> timeline time
        span = float(replay.timeline.t[-1])
        outage_at, clear_at = 0.4 * span, 0.6 * span
        for at, kind, seconds in ((outage_at, "outage", outage_s), (clear_at, "clear", 0.0)):
            # between two throws, so that no throw is cut by the fault itself
            gaps = [(p.end + shift + 0.4, q.start + shift - 0.4) for p, q in zip(plan, plan[1:])]
            best = min(gaps, key=lambda g: abs(0.5 * (g[0] + g[1]) - at))
            replay.schedule(best[0], kind, seconds)
        out = folder / "out"
        # --duration only bounds a child the bench could not stop; Ctrl+C ends it normally
        cmd = [sys.executable, "-m", "tumble", "live", replay.url, "--json", "--out", str(out),
               "--duration", f"{CONNECT_DEADLINE_S + span / speed + 2 * TAIL_S:.2f}"]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        replay.control("stop")  # the phone is open, not measuring yet
        replay.start()
        proc, events, began, reader = follow(cmd)
        wait_for(lambda: any(e["event"] == "connected" for e in events) or proc.poll() is not None,
                 CONNECT_DEADLINE_S)
        played_from = time.monotonic() - began - replay.position() / speed  # the wall s of timeline time 0
        replay.control("start")
        wait_for(lambda: replay.finished() or proc.poll() is not None, CONNECT_DEADLINE_S + span / speed)
        wait_for(lambda: proc.poll() is not None, TAIL_S)
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # Ctrl+C: the child fits what it received and ends with 0
        proc.wait()
        wall = time.monotonic() - began
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        reader.join(5.0)
        replay.stop()
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        clear_origin = replay.epoch_origin
        first_wall = {}
        for e in events:
            if e["event"] == "flight":
                first_wall.setdefault(e["number"], e["_wall"])
        flights = last_reports(events)  # a flight reported again with refined edges counts as last reported
        found, latencies, per_throw = 0, [], []
        for p in plan:
            start, end = p.start + shift, p.end + shift
            hits = [e for e in flights
                    if abs(e["start"] + (clear_origin if e["segment"] else 0.0) - start) <= MATCH_S
                    and abs(e["end"] + (clear_origin if e["segment"] else 0.0) - end) <= MATCH_S]
            if len(hits) == 1:
                found += 1
                latencies.append(first_wall[hits[0]["number"]] - played_from - end / speed)
            per_throw.append({"start": start, "end": end, "hits": len(hits),
                              "latency_s": latencies[-1] if len(hits) == 1 else None})
        _, reference = fit_paths([str(path)])
        end = next((e for e in events if e["event"] == "end"), None)
        ratio_error = (float(np.max(np.abs(np.asarray(end["ratios"]) - reference.moments)))
                       if end and end["ratios"] else None)
        served = sum(len(read_recording(p).t) for p in sorted(out.glob("segment-*.csv")))
        figures = {
            "throws": len(plan), "found": found, "flight_events": sum(e["event"] == "flight" for e in events),
            "latency_median_s": float(np.median(latencies)) if latencies else None,
            "latency_max_s": float(np.max(latencies)) if latencies else None,
            "within_2s": int(sum(x <= 2.0 for x in latencies)),
            "reconnecting": sum(e["event"] == "reconnecting" for e in events),
            "cleared": sum(e["event"] == "cleared" for e in events),
            "cpu_s": cpu, "wall_s": wall, "cpu_share": cpu / wall,
            "end_ratios": end["ratios"] if end else None, "reference_ratios": [float(x) for x in reference.moments],
            "ratio_error": ratio_error,
            "per_throw": per_throw, "events": [{k: e.get(k) for k in ("event", "segment", "start", "end", "_wall",
                                                                      "error")} for e in events],
            "samples_in_csv": served, "samples_played": len(t), "exit": proc.returncode,
        }
    say(f"{found} of {len(plan)} throws reported as one flight each (start and end within {MATCH_S:g} s); "
        f"{figures['within_2s']} within 2 s of the catch")
    if latencies:
        say(f"latency after the catch: median {figures['latency_median_s']:.2f} s, "
            f"max {figures['latency_max_s']:.2f} s")
    say(f"events: {figures['reconnecting']} reconnecting, {figures['cleared']} cleared; exit {proc.returncode}")
    say(f"CPU {cpu:.2f} s over {wall:.1f} s wall = {100 * cpu / wall:.0f}% of one core")
    if ratio_error is not None:
        say(f"end ratios {', '.join(f'{x:.4f}' for x in end['ratios'])}, offline fit "
            f"{', '.join(f'{x:.4f}' for x in reference.moments)}: largest difference {ratio_error:.4f}")
    say(f"samples in the CSV files: {served} of {len(t)} played (a clear discards those it empties)")
    return figures
