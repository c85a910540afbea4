"""Words that are true in front of a class: a growth rate only for a spin that flips, a trail
named by the axis it follows, ``tumble.show`` refusing where no window can open, and the small
lines seen (a missing flip time, one flight, ``gui --help``, a phone never reached)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import numpy as np
import pytest

from tumble.physics import analysis, theory
from tumble.physics.body import from_principal_moments
from tumble.scenario import load
from tumble.scene.body_scene import TRAIL_LABEL, legend, trail_label
from conftest import ROOT, tumble


def _run(*args, env=None, cwd=None, timeout=300):
    return tumble(*args, env=env, cwd=ROOT if cwd is None else cwd, timeout=timeout)


def test_a_stable_spin_has_no_growth_rate_and_a_flipping_one_has():
    stable = json.loads(_run("inspect", "asymmetric-stable", "--json").stdout)
    assert stable["flip_period"] is None and stable["growth_rate"] is None
    flipping = json.loads(_run("inspect", "t-handle", "--json").stdout)
    assert flipping["flip_period"] is not None and flipping["growth_rate"] > 0
    assert "growth rate        stable spin: no growth" in _run("inspect", "asymmetric-stable").stdout


@pytest.mark.parametrize("axis", [0, 2])
def test_no_growth_near_the_major_or_minor_axis_but_on_the_unstable_side(axis):
    """Linear theory: about the major or minor axis a small deviation oscillates (no growth);
    about the intermediate one it grows as exp(sigma t), sigma = |Omega2| sqrt((I2-I1)(I3-I2)/(I1 I3))."""
    body = from_principal_moments(1.0, [1.0, 2.0, 3.0])
    w = np.full(3, 0.05)
    w[axis] = 3.0
    assert not analysis.flips(body, w) and theory.predict(body, w).growth_rate is None
    w = np.array([0.05, 3.0, 0.05])
    assert theory.predict(body, w).growth_rate == pytest.approx(3.0 * np.sqrt(1.0 * 1.0 / 3.0))


def test_the_trail_names_the_axis_it_follows_for_every_body():
    for name in ("t-handle", "book", "tennis-racket"):
        body = load(name).rigid_body
        label = trail_label(body)
        axis = body.intermediate_axis
        k = int(np.argmax(np.abs(axis)))
        assert label == f"{TRAIL_LABEL}, body {'xyz'[k]}", name
    top = load("symmetric-top")
    label = trail_label(top.rigid_body)
    assert "intermediate" not in label and "across the symmetry axis" in label
    sphere = from_principal_moments(1.0, [2.0, 2.0, 2.0])
    assert "all three moments are equal" in trail_label(sphere) and "intermediate" not in trail_label(sphere)
    # the colour key of the window and the exports says it
    rows = dict((color, text) for text, color in legend([top]))
    assert label in rows.values() and TRAIL_LABEL not in rows.values()


def test_show_without_a_display_raises_the_command_lines_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["XDG_CONFIG_HOME"] = str(tmp_path)
    script = ("import tumble\n"
              "try:\n    tumble.show('t-handle')\n"
              "except tumble.ParameterError as err:\n    print(err)\n")
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    cli = _run("gui", "t-handle", env=env, cwd=tmp_path)
    assert cli.returncode == 2
    assert res.stdout.strip() == cli.stderr.strip().removeprefix("tumble: error: ")
    assert "xvfb-run -a tumble" in res.stdout


def test_a_flight_line_says_dash_for_a_missing_flip_and_one_flight():
    from tumble.cli.live import _line

    event = {"event": "flight", "number": 1, "refined": False, "segment": 0, "start": 1.0, "end": 2.0,
             "omega0": [3.0, 4.0, 0.0], "flip_time_measured": None, "flip_time_predicted": 0.25,
             "ratios": [0.3, 0.7, 1.0], "flights_used": 1, "excluded": False, "reason": None}
    line = _line(event)
    assert line.startswith("flight 1: 1.000-2.000 s") and "segment" not in line
    assert "measured -, predicted 0.250 s" in line and "- s" not in line and "(fitted to 1 flight)" in line
    assert "(fitted to 2 flights)" in _line({**event, "flights_used": 2})
    end = _line({"event": "end", "samples": 1, "segments": 1, "flights": 1, "ratios": None})
    assert end == "end: 1 sample, 1 flight; ratios -"
    assert _line({"event": "end", "samples": 2, "segments": 2, "flights": 0, "ratios": None}) == \
        "end: 2 samples, 2 segments, 0 flights; ratios -"


def test_live_says_each_flight_once_and_each_refinement_once():
    """One line when a flight is found, one when a later fit changes its edges or flips
    ("flight N refined"), none for a report that changes only the ratios; "segment" only once
    the session has more than one; the stand-in phone says when its sample starts again."""
    from tumble.cli.live import LiveWords

    def flight(number, start, end, segment=0, ratios=(0.3, 0.7, 1.0), flip=0.2, refined=False):
        return {"event": "flight", "number": number, "refined": refined, "segment": segment, "start": start,
                "end": end, "omega0": [3.0, 4.0, 0.0], "flip_time_measured": flip, "flip_time_predicted": flip,
                "ratios": list(ratios), "flights_used": number, "excluded": False, "reason": None}

    words = LiveWords()
    said = [words.line(e) for e in (
        flight(1, 1.0, 2.0),
        flight(2, 3.0, 4.0),
        flight(1, 1.0, 2.0, ratios=(0.31, 0.7, 1.0), refined=True),     # only the ratios moved: no line
        flight(2, 2.98, 4.01, refined=True),                             # its edges moved
        {"event": "looped", "lap": 2, "period": 15.1},
        {"event": "cleared", "segment": 1},
        flight(3, 0.5, 1.5, segment=1),
        {"event": "end", "samples": 900, "segments": 2, "flights": 3, "ratios": [0.3, 0.7, 1.0]},
    )]
    assert said[0].startswith("flight 1: 1.000-2.000 s;") and said[1].startswith("flight 2: 3.000-4.000 s;")
    assert said[2] is None
    assert said[3].startswith("flight 2 refined: 2.980-4.010 s;")
    assert said[4].startswith("demo: the sample starts again at 15.1 s (pass 2)")
    assert said[5] == "the phone's time restarted: segment 1 begins"
    assert said[6].startswith("flight 3: segment 1 0.500-1.500 s;")
    assert said[7].startswith("end: 900 samples, 2 segments, 3 flights;")
    assert sum(line is not None and line.startswith("flight ") and "refined" not in line for line in said) == 3


def test_the_stand_in_phone_says_when_its_sample_starts_again():
    from tumble.throws.live.session import LiveSession

    events = []
    session = LiveSession("demo", events.append)
    try:
        period = session.demo.timeline.period
        for t0 in (0.0, 0.5 * period, 1.2 * period, 1.5 * period, 2.1 * period):
            session._on_samples(0, np.array([t0, t0 + 0.01]), np.zeros((2, 3)))
    finally:
        session.demo.stop()
    assert [(e["event"], e["lap"]) for e in events] == [("looped", 2), ("looped", 3)]


def test_gui_help_explains_every_argument():
    import argparse

    from tumble.cli.core import build_parser

    sub = next(a for a in build_parser(["gui"])._actions if isinstance(a, argparse._SubParsersAction))
    gui = sub.choices["gui"]
    for action in gui._actions:
        assert action.help, action.dest
    out = _run("gui", "--help").stdout
    assert "preset" in out and "paused" in out.split("--paused", 1)[1] and "demo" in out


def test_live_that_never_connects_says_so_and_exits_1():
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    res = _run("live", f"http://127.0.0.1:{port}", "--duration", "3", timeout=120)
    assert res.returncode == 1
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith(f"tumble: never connected to http://127.0.0.1:{port}: ")
