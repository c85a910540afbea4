"""``tumble bench --gui``'s reference window: its figures are there, positive and finite, and
it closes cleanly (figures are printed, never asserted as speeds)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_reference_window_measures_and_closes_cleanly(qapp):
    from app.gui.bench import run_reference_window

    fps = run_reference_window(1.0)
    assert math.isfinite(fps) and fps > 0
    # the no_leaks guard fails the test if the interactor, its plotter or a timer outlives it


def run_bench(*args):
    env = dict(os.environ)
    env.pop("TUMBLE_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "app", "bench", "--gui", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=180)


def test_bench_json_has_the_reference_and_the_ratio_beside_the_old_keys():
    # 5 s: a second or so passes before the worker's first state reaches the scene
    res = run_bench("--json", "--seconds", "5", "--reference-seconds", "1")
    assert res.returncode == 0, res.stderr
    fig = json.loads(res.stdout)
    for key in ("fps", "realtime_factor", "startup_s", "memory_growth_mb", "speed", "seconds", "frames",
                "rss_mb", "view"):
        assert key in fig
    for key in ("fps", "reference_fps", "fps_ratio"):
        assert isinstance(fig[key], float) and math.isfinite(fig[key]) and fig[key] > 0, (key, fig[key])
    assert math.isclose(fig["fps_ratio"], fig["fps"] / fig["reference_fps"], rel_tol=1e-12)


def test_bench_text_names_the_ratio_and_zero_skips_the_reference():
    res = run_bench("--seconds", "1", "--reference-seconds", "1")
    assert res.returncode == 0, res.stderr
    assert "reference window fps" in res.stdout and "fps ratio" in res.stdout
    res = run_bench("--json", "--seconds", "1", "--reference-seconds", "0")
    assert res.returncode == 0, res.stderr
    fig = json.loads(res.stdout)
    assert fig["reference_fps"] is None and fig["fps_ratio"] is None and "fps" in fig


def test_bad_reference_seconds_is_one_line_and_exit_2():
    res = run_bench("--reference-seconds", "-1")
    assert res.returncode == 2
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "--reference-seconds must be a number from 0 to 3600" in lines[0], res.stderr
