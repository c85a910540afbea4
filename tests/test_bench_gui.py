"""``tumble bench --gui``: its figures, with the same run's reference window (the simplest
pyvistaqt window) and the frame-rate ratio. Run only in a child process under the session's
Xvfb: the bench runs its own Qt event loops, which must never spin inside the test process
(an in-process test once left one running into the next test's teardown and hung CI).
Figures are checked for shape, never asserted as speeds."""

from __future__ import annotations

import json
import math
import os

from conftest import refused, tumble

#: the longest a 2 s bench may take in a child: start-up, two windows, their warm-ups
TIMEOUT_S = 240
OLD_KEYS = ("fps", "realtime_factor", "startup_s", "memory_growth_mb", "speed", "seconds", "frames", "rss_mb",
            "view")


def run_bench(tmp_path, *args):
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path))
    assert env.get("DISPLAY"), "pytest-xvfb gives the session a display"
    return tumble("bench", "--gui", *args, env=env, timeout=TIMEOUT_S)


def test_bench_json_has_the_reference_and_the_ratio_beside_the_old_keys(tmp_path):
    res = run_bench(tmp_path, "--seconds", "2", "--json")
    assert res.returncode == 0, res.stderr
    fig = json.loads(res.stdout)
    for key in OLD_KEYS:
        assert key in fig, key
    assert fig["view"] == "main" and fig["seconds"] == 2.0
    for key in ("fps", "reference_fps", "fps_ratio"):
        assert isinstance(fig[key], float) and math.isfinite(fig[key]) and fig[key] > 0, (key, fig[key])
    assert math.isclose(fig["fps_ratio"], fig["fps"] / fig["reference_fps"], rel_tol=1e-12)
    # the body moved, and not before the first frame was drawn
    assert isinstance(fig["first_motion_s"], float) and fig["first_motion_s"] >= fig["startup_s"] > 0


def test_bench_text_names_the_ratio_and_zero_skips_the_reference(tmp_path):
    res = run_bench(tmp_path, "--seconds", "1", "--reference-seconds", "1")
    assert res.returncode == 0, res.stderr
    assert "reference window fps" in res.stdout and "fps ratio" in res.stdout and "first motion " in res.stdout
    res = run_bench(tmp_path, "--json", "--seconds", "1", "--reference-seconds", "0")
    assert res.returncode == 0, res.stderr
    fig = json.loads(res.stdout)
    assert fig["reference_fps"] is None and fig["fps_ratio"] is None and fig["fps"] > 0


def test_bad_reference_seconds_is_one_line_and_exit_2(tmp_path):
    refused(run_bench(tmp_path, "--reference-seconds", "-1"), "--reference-seconds must be a number from 0 to 3600")
