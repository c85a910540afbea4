"""View > Projector colours: the open window re-coloured in place (scene, plots, key, widgets), the run going
on; the choice remembered; a screenshot of the projector scheme light, its curves in the palette's colours."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import WAIT_MS, tumble

from PyQt5.QtWidgets import QLabel

from tumble.scene import palette
from tumble.scene.palette import DARK, PROJECTOR

pytestmark = pytest.mark.slow

#: a curve's pixels: within this of its colour in each channel (0-255; the line's smoothed edge
#: blends it with the white around it), and at least this many of them (a legend's sample alone
#: is about 20 px long)
CURVE_TOLERANCE = 12
MIN_CURVE_PIXELS = 20
#: a flat colour's pixels: within this in each channel (pytest-xvfb's display may be 16 bits deep,
#: 5-6-5: a channel is cut to a step of 8)
FLAT_TOLERANCE = 8


@pytest.fixture(autouse=True)
def dark_again(qapp):
    """Every test starts and ends in the dark scheme (the scheme is the process's)."""
    from tumble.gui.common.colours import switch_scheme
    from tumble.gui.common.theme import apply_theme

    palette.use("dark")
    apply_theme(qapp)
    yield
    switch_scheme("dark", remember=False)


def _rgb(hex_colour) -> tuple:
    return tuple(round(255 * c) for c in palette.rgb01(hex_colour))


def _flat_share(pixels, hex_colour) -> float:
    """Share of ``pixels`` (n, 3) that are ``hex_colour``, within FLAT_TOLERANCE."""
    return float(np.mean(np.all(np.abs(pixels.astype(int) - _rgb(hex_colour)) <= FLAT_TOLERANCE, axis=1)))


def _scene_background(window) -> str:
    return palette.hex_of(window.scene_view.renderer.GetBackground())


def _curve_colours(window) -> list:
    return [c.opts["pen"].color().name() for c in window.plots.curves]


def _expected_curves(scheme) -> list:
    return [palette.translate(c.color, DARK, scheme) for row in window_spec().rows for c in row.curves]


def window_spec():
    from tumble.views.plots import MAIN_PLOTS

    return MAIN_PLOTS


def _in(window, scheme) -> bool:
    """Whether the scene, the plots, the key and the widgets of ``window`` are drawn in ``scheme``."""
    actors = window.scene.actors
    return (_scene_background(window) == scheme.background
            and palette.hex_of(actors["omega"].prop.color.float_rgb) == scheme.omega
            and palette.hex_of(actors["L"].prop.color.float_rgb) == scheme.momentum
            and palette.hex_of(actors["grid"].prop.color.float_rgb) == scheme.grid
            and window.plots.backgroundBrush().color().name() == scheme.background
            and _curve_colours(window) == _expected_curves(scheme)
            and scheme.axis_x in window.legend.text() and scheme.trail in window.legend.text()
            and window.palette().window().color().name() == scheme.window)


def test_the_menu_switch_recolours_the_open_window_and_the_run_goes_on(open_window, qtbot):
    window = open_window("t-handle")
    qtbot.waitUntil(lambda: window.worker.latest().t > 0.2, timeout=WAIT_MS)
    assert _in(window, DARK)
    assert not window.colours_action.isChecked() and window.colours_action in window.view_menu.actions()
    before = window.worker.latest()
    window.colours_action.trigger()
    assert palette.current() is PROJECTOR and window.colours_action.isChecked()
    qtbot.waitUntil(lambda: _in(window, PROJECTOR), timeout=WAIT_MS)
    # the run was not restarted: the same run, later in it, and the scene still drawn from it
    frames = window.frames_drawn
    qtbot.waitUntil(lambda: window.frames_drawn > frames + 2, timeout=WAIT_MS)
    after = window.worker.latest()
    assert after.run_id == before.run_id and after.t > before.t
    # the axes of the body (a per-line colour array) follow too; the body's shaded faces keep theirs
    from tumble.scene.recolour import _drawn_data

    axes_rgb = np.asarray(_drawn_data(window.scene.actors["axes"].GetMapper())[1].cell_data["rgb"])
    assert [palette.hex_of(row / 255) for row in axes_rgb] == list(PROJECTOR.axis)
    window.colours_action.trigger()
    qtbot.waitUntil(lambda: _in(window, DARK), timeout=WAIT_MS)


def test_the_choice_is_remembered_for_the_next_start(open_window, qtbot):
    from tumble.gui.common.colours import remembered_scheme

    window = open_window("t-handle", persist=True)
    assert remembered_scheme() == "dark"
    window.colours_action.trigger()
    assert remembered_scheme() == "projector"
    window.close()
    palette.use("dark")  # as a new process starts
    from tumble.gui.launch import resolve_scenario
    from tumble.gui.windows.main_window import MainWindow

    palette.use(remembered_scheme())  # what qt_application does without --colours
    sc, preset = resolve_scenario("t-handle")
    second = MainWindow(sc, preset=preset, persist=False)
    qtbot.addWidget(second)
    with qtbot.waitSignal(second.first_frame_drawn, timeout=WAIT_MS):
        second.show()
    assert second.colours_action.isChecked()
    qtbot.waitUntil(lambda: _in(second, PROJECTOR), timeout=WAIT_MS)


def test_presentation_mode_offers_the_switch(open_window, qtbot):
    window = open_window("t-handle")
    window.presentation.toggle()
    qtbot.waitUntil(lambda: "P: projector colours" in window.presentation.clock.text(), timeout=WAIT_MS)
    qtbot.keyClick(window, "P")
    qtbot.waitUntil(lambda: palette.current() is PROJECTOR, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: "P: dark colours" in window.presentation.clock.text(), timeout=WAIT_MS)
    clock = window.presentation.clock.styleSheet()
    assert f"color: {PROJECTOR.overlay_text}" in clock
    window.presentation.leave()  # the key's style comes back at its size, in the scheme now in use
    assert "rgba(255, 255, 255" in window.legend.styleSheet() and "8pt" in window.legend.styleSheet()


def test_a_projector_screenshot_is_light_with_its_curves_in_the_palette(tmp_path):
    """``tumble gui --colours projector --screenshot``: the scene's and the plots' backgrounds are the
    palette's, and every plot curve is drawn in its projector colour, none in its dark one."""
    import imageio.v3 as iio

    shot = tmp_path / "projector.png"
    res = tumble("gui", "t-handle", "--colours", "projector", "--screenshot", shot, "--quit-after", "3")
    assert res.returncode == 0, res.stderr
    image = iio.imread(shot)[..., :3]
    height, width = image.shape[:2]

    # the scene (the middle of the window) and the plots (its right part) are mostly background
    for x0, x1 in ((0.35, 0.65), (0.72, 0.98)):
        band = image[int(0.15 * height):int(0.6 * height), int(x0 * width):int(x1 * width)].reshape(-1, 3)
        assert _flat_share(band, PROJECTOR.background) > 0.5, (x0, x1)

    # the plots: the right part of the window, above the polhode view
    plots = image[int(0.05 * height):int(0.68 * height), int(0.72 * width):].reshape(-1, 3).astype(int)

    def near(hex_colour) -> int:
        """Plot pixels within CURVE_TOLERANCE of ``hex_colour`` in every channel (curves' edges are smoothed)."""
        return int(np.sum(np.all(np.abs(plots - _rgb(hex_colour)) <= CURVE_TOLERANCE, axis=1)))

    for light, dark in zip(_expected_curves(PROJECTOR), _expected_curves(DARK)):
        assert near(light) >= MIN_CURVE_PIXELS, light
        assert near(dark) == 0, dark  # no curve left in its dark-scheme colour


def test_a_bad_remembered_scheme_gives_the_default_and_a_note(private_settings):
    from tumble.gui.common import settings as keys
    from tumble.gui.common.colours import remembered_scheme

    path = private_settings / keys.ORGANIZATION / f"{keys.APPLICATION}.ini"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[view]\ncolours=pink\n")
    keys.take_notes()
    assert remembered_scheme() == "dark"
    (note,) = keys.take_notes()
    assert str(path) in note and "[view] colours" in note and "pink" in note and "dark, projector" in note


@pytest.mark.parametrize("flag, drawn", [(None, PROJECTOR), ("dark", DARK)], ids=["remembered", "flag wins"])
def test_the_flag_wins_over_the_remembered_scheme(private_settings, tmp_path, flag, drawn):
    """With projector remembered, ``tumble gui`` opens in it, and ``--colours dark`` in dark for that run
    (and leaves the remembered choice as it was)."""
    import imageio.v3 as iio

    from tumble.gui.common.colours import remember_scheme, remembered_scheme

    remember_scheme("projector")
    shot = tmp_path / "shot.png"
    res = tumble("gui", "t-handle", *(["--colours", flag] if flag else []), "--screenshot", shot, "--quit-after", "1")
    assert res.returncode == 0, res.stderr
    image = iio.imread(shot)[..., :3]
    height, width = image.shape[:2]
    scene = image[int(0.15 * height):int(0.6 * height), int(0.35 * width):int(0.65 * width)].reshape(-1, 3)
    assert _flat_share(scene, drawn.background) > 0.5
    assert remembered_scheme() == "projector"


@pytest.mark.parametrize("view", ["poinsot", "compare", "stability"])
def test_every_view_window_switches_in_place(open_view, qtbot, view):
    """Each view's window has the menu entry, and every 3D pane and plot of it turns light, the
    key's colours with them."""
    from pyqtgraph import GraphicsView
    from pyvistaqt import QtInteractor

    options = {"directions": 200, "duration": 2.0} if view == "stability" else {}
    window = open_view("t-handle", view=view, **options)
    assert window.colours_action in window.view_menu.actions()
    window.colours_action.trigger()

    def light() -> bool:
        panes = window.findChildren(QtInteractor)
        plots = window.findChildren(GraphicsView)
        return (all(palette.hex_of(p.renderer.GetBackground()) == PROJECTOR.background for p in panes)
                and all(p.backgroundBrush().color().name() == PROJECTOR.background for p in plots)
                and window.palette().window().color().name() == PROJECTOR.window)

    qtbot.waitUntil(light, timeout=WAIT_MS)
    for label in window.findChildren(QLabel):
        assert not any(c in label.text() for c in (DARK.axis_x, DARK.omega, DARK.momentum, DARK.trail)), label.text()
