"""Drawing from Python: ``tumble.render`` changes with time, ``tumble.export`` writes the frames
asked for (as ``tumble export`` does), and ``tumble.show`` outside Jupyter opens the window."""

from __future__ import annotations

import imageio.v3 as iio
import numpy as np
import pytest
from conftest import tumble as cli

import tumble


def test_render_is_an_rgb_image_that_changes_with_time():
    sc = tumble.load("t-handle")
    first = tumble.render(sc, 0.0, size=(400, 300))
    later = tumble.render(sc, 2.0, size=(400, 300))
    assert first.shape == (300, 400, 3) and first.dtype == np.uint8
    # the body turns: the middle of the scene (away from the time and title text) changes
    middle = (slice(75, 225), slice(100, 300))
    changed = np.any(first[middle] != later[middle], axis=-1).mean()
    assert changed > 0.01, changed
    again = tumble.render(sc, 0.0, size=(400, 300))
    np.testing.assert_array_equal(again, first)  # the same time draws the same picture


def test_render_of_a_run_draws_its_scenario():
    run = tumble.simulate("book", duration=1.0)
    np.testing.assert_array_equal(tumble.render(run, 0.5, size=(320, 240)),
                                  tumble.render(run.scenario, 0.5, size=(320, 240)))


def test_render_refuses_a_time_past_the_run():
    sc = tumble.load("book").with_values({"solver.duration": 2.0})
    with pytest.raises(tumble.ParameterError, match=r"^t must be"):
        tumble.render(sc, 5.0)


def test_a_gif_has_the_frames_asked_for_as_the_commands(tmp_path):
    path = tumble.export("t-handle", tmp_path / "api.gif", duration=1.5, fps=8, size=(320, 240))
    assert path == tmp_path / "api.gif"
    frames = iio.imread(path, index=None)
    assert frames.shape == (12, 240, 320, 3)
    res = cli("export", "t-handle", "--duration=1.5", "--fps=8", "--size", "320x240", "--out", tmp_path / "cli.gif")
    assert res.returncode == 0, res.stderr
    assert iio.imread(tmp_path / "cli.gif", index=None).shape == frames.shape


def test_export_writes_the_commands_data(tmp_path):
    tumble.export("book", tmp_path / "api.csv", duration=2.0, fps=10)
    res = cli("export", "book", "--duration=2", "--fps=10", "--out", tmp_path / "cli.csv")
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "api.csv").read_bytes() == (tmp_path / "cli.csv").read_bytes()


def test_show_outside_jupyter_opens_the_window_on_the_scenario(monkeypatch):
    """Elsewhere than in Jupyter, show runs the app's window on the scenario given."""
    import tumble.gui.launch as launch

    seen = {}

    def fake_run_gui(scenario, view="main", **_):
        seen["scenario"], seen["view"] = tumble.load(scenario), view
        return 0

    monkeypatch.setattr(launch, "run_gui", fake_run_gui)
    sc = tumble.load("book").with_values({"solver.duration": 3.0})
    assert tumble.show(sc, view="poinsot") == 0
    assert seen["view"] == "poinsot"
    assert seen["scenario"].solver.duration == 3.0 and seen["scenario"].body == sc.body
