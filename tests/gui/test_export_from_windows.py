"""The File menu's exports: each view exports itself; the trajectory and the 3D view as files."""

from __future__ import annotations

import imageio.v3 as iio
import numpy as np

from tumble.export import plan_export
from tumble.simulation.table import DEFAULT_COLUMNS

#: a child export starts Python, VTK and ffmpeg: give it time on a busy 2-core machine
EXPORT_TIMEOUT_MS = 90_000


def _menu_texts(window) -> list:
    return [a.text() for a in window.file_menu.actions() if not a.isSeparator()]


def test_the_file_menu_offers_every_export(open_window):
    window = open_window("t-handle", paused=True)
    texts = _menu_texts(window)
    for text in ("Export animation…", "Export trajectory…", "Save 3D view as PNG…", "Save screenshot…"):
        assert text in texts


def test_the_poinsot_view_exports_its_own_construction(open_view, qtbot, tmp_path):
    window = open_view("t-handle", view="poinsot", paused=True)
    dialog = window.export_animation_dialog()
    assert dialog.view_args == ("--view", "poinsot") and "Poinsot" in dialog.windowTitle()
    assert dialog.scenario == window.panel.scenario
    dialog.out_edit.setText(str(tmp_path / "p.gif"))
    dialog.size_combo.setCurrentText("Custom")
    dialog.width_spin.setValue(320)
    dialog.height_spin.setValue(240)
    dialog.fps_spin.setValue(5)
    dialog.duration_spin.setValue(1.0)
    with qtbot.waitSignal(dialog.export_finished, timeout=EXPORT_TIMEOUT_MS):
        dialog.start_export()
    frames = iio.imread(tmp_path / "p.gif", index=None)
    assert frames.shape[:3] == (5, 240, 320)
    dialog.close()


def test_an_edited_scenario_exports_under_its_own_name(open_window, qtbot):
    window = open_window("t-handle", paused=True)
    window.panel.omega[1].setText("3")
    assert window.panel.apply()
    qtbot.waitUntil(lambda: window.panel.scenario.name == "T-handle (edited)", timeout=10_000)
    dialog = window.export_animation_dialog()
    assert dialog.title_edit.text() == "T-handle"
    assert plan_export(dialog.scenario, dialog.settings()).title == "T-handle"
    dialog.title_edit.setText("")  # an emptied field falls back to the same title
    assert plan_export(dialog.scenario, dialog.settings()).title == "T-handle"
    dialog.close()


def test_the_compare_view_exports_both_sides_as_they_run(open_view):
    window = open_view("t-handle", view="compare", paused=True)
    a, b = window.scenarios
    dialog = window.export_animation_dialog()
    assert dialog.view_args == ("--view", "compare", "--integrators", a.solver.integrator, b.solver.integrator,
                                "--dts", repr(a.solver.dt), repr(b.solver.dt))
    dialog.close()


def test_the_trajectory_is_the_simulate_table_one_row_per_step(open_window, tmp_path):
    window = open_window("boxes-simple", paused=True)
    sc = window.panel.scenario
    rows = window.export_trajectory(tmp_path / "run.csv")
    steps = round(sc.solver.duration / sc.solver.dt)
    assert rows == steps + 1
    lines = (tmp_path / "run.csv").read_text().splitlines()
    assert lines[0] == ",".join(DEFAULT_COLUMNS)
    data = np.loadtxt(tmp_path / "run.csv", delimiter=",", skiprows=1)
    assert data.shape == (steps + 1, len(DEFAULT_COLUMNS))
    # boxes-simple has no gravity: the centre of mass moves in a straight line
    t, c, v0 = data[:, 0], data[:, 1:4], data[0, 4:7]
    np.testing.assert_allclose(c, data[0, 1:4] + t[:, None] * v0, atol=1e-12)
    assert window.export_trajectory(tmp_path / "run.npz") == steps + 1
    with np.load(tmp_path / "run.npz") as npz:
        np.testing.assert_array_equal(npz["E"], data[:, -1])


def test_the_3d_view_is_saved_at_the_scene_size(open_window, tmp_path):
    from tumble.export.data import export_view_png

    window = open_window("t-handle", paused=True)
    export_view_png(window.scene_view, tmp_path / "view.png")
    image = iio.imread(tmp_path / "view.png")
    w, h = window.scene_view.window_size
    assert image.shape[:2] == (h, w)
    assert image.std() > 5  # not a blank picture


def test_the_stability_view_exports_its_map_as_the_window_computes_it(open_view):
    window = open_view("t-handle", view="stability", paused=True, directions=300)
    assert "Export animation…" in _menu_texts(window)
    window.duration_box.setValue(5.0)
    dialog = window.export_animation_dialog()
    assert dialog.view_args == ("--view", "stability", "--directions", "300", "--map-duration", "5.0")
    assert dialog.scenario is window.chosen
    dialog.close()
