"""Issue 34, item 3: the lesson's demo 2 spins a real object (a book) about each of its axes,
with presets named for what they show; the Matlab report's unphysical body stays for parity,
marked so in ``tumble presets``."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tumble.physics import analysis
from tumble.scenario import load, preset_names
from conftest import ROOT, tumble


def _lesson_demo_2() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lesson = text.split("### A 45-minute lesson in three demos", 1)[1].split("\n### ", 1)[0]
    return lesson.split("\n2. ", 1)[1].split("\n3. ", 1)[0]


def _lesson_presets() -> list[str]:
    return re.findall(r"^\s*tumble gui (\S+)\s*$", _lesson_demo_2(), flags=re.M)


def test_demo_2_spins_one_real_body_about_each_of_its_three_axes():
    names = _lesson_presets()
    assert len(names) == 3 and all(n in preset_names() for n in names), names
    bodies = [load(n).rigid_body for n in names]
    moments = [b.principal()[0] for b in bodies]
    for a in moments[1:]:
        np.testing.assert_allclose(a, moments[0], rtol=1e-12)  # the same object each time
    axes = set()
    for name in names:
        sc = load(name)
        body = sc.rigid_body
        assert not body.allow_unphysical, name
        i1, i2, i3 = sorted(body.principal()[0])
        assert i1 + i2 >= i3, (name, i1, i2, i3)  # a real object's moments
        w = np.asarray(sc.angular_velocity, dtype=float)
        _, vectors = body.principal()
        axes.add(int(np.argmax(np.abs(vectors.T @ w))))  # the principal axis it spins about (ascending order)
        # named for what it shows: a "stable" spin never turns over, a "flips" one does
        assert analysis.flips(body, w) == ("flips" in name), name
    assert axes == {0, 1, 2}


def test_the_reports_unphysical_bodies_are_marked_for_parity_in_tumble_presets():
    res = tumble("presets")
    assert res.returncode == 0, res.stderr
    lines = {line.split()[0]: line for line in res.stdout.splitlines() if line.strip()}
    for name in preset_names():
        if load(name).rigid_body.allow_unphysical:
            assert "For parity with the Matlab report" in lines[name] and "unphysical" in lines[name], lines[name]
    assert "asymmetric-stable" in lines and "asymmetric-unstable" in lines  # kept


@pytest.mark.parametrize("name", ["asymmetric-stable", "asymmetric-unstable"])
def test_the_lesson_no_longer_uses_the_reports_body(name):
    assert f"tumble gui {name}\n" not in _lesson_demo_2()
