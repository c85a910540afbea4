"""Saved scenario files: vectors on one line, and every number reads back exactly."""

from __future__ import annotations

import re

import pytest

from tumble.scenario import BodySpec, LoadSpec, Scenario, SolverSpec, dumps, load, loads_toml, preset_names, save

#: a line holding nothing but one array item, as tomli_w writes arrays
ITEM_LINE = re.compile(r"^\s+[-+0-9.eE]+,$")


@pytest.mark.parametrize("name", preset_names())
def test_a_preset_is_written_with_its_vectors_on_one_line(name):
    sc = load(name)
    text = dumps(sc)
    assert not [line for line in text.splitlines() if ITEM_LINE.match(line)]
    assert re.search(r"^angular_velocity = \[[^\n\]]+\]$", text, re.M)
    assert loads_toml(text, name) == sc


def test_awkward_numbers_read_back_exactly(tmp_path):
    sc = Scenario(
        name="awkward",
        description="an array [\n 1,\n] in the text is left alone",
        body=BodySpec("custom", 1e-300 * 1e300, None, (2.0, 3.0, 4.0, -1e-7, 0.0, 1.5e-17), False,
                      center_of_mass=(-0.0, 0.1, 0.0123456789125)),
        angular_velocity=(1e-12, -3.0, 0.30000000000000004),
        velocity=(1e99, -1e-99, 7),
        loads=(LoadSpec("force", "world", (0.0, -1.5e-5, 2.5), (0.1, 0.2, 0.3)),),
        solver=SolverSpec("dop853", 1e-3, 2.0, 1e-11, 1e-13),
    )
    path = tmp_path / "awkward.toml"
    save(sc, path)
    text = path.read_text()
    assert "inertia = [2.0, 3.0, 4.0, -1e-07, 0.0, 1.5e-17]" in text
    assert "center_of_mass = [-0.0, 0.1, 0.0123456789125]" in text
    assert 'description = "an array [\\n 1,\\n] in the text is left alone"' in text
    assert load(path) == sc
