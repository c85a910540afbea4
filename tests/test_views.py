"""Every registered view (app.views): exported in MP4, GIF and PNG, posed live and exported alike, its colour key drawn with the font file, its exact ghost on request."""

from __future__ import annotations

import time

import imageio.v3 as iio
import numpy as np
import pytest

from tumble.export import ExportSettings, Overlay, plan_export, sequence_paths
from tumble.physics.errors import ParameterError
from tumble.scenario import load
from tumble.views import get_view, view_names
from conftest import mp4_frames, refused, tumble_headless as tumble

#: three frames, small: the export machinery is what is tested, not the picture's size
SIZE = (320, 240)
FRAMES, FPS = 3, 10
#: the live pose and the exported pose of the same run at the same time (see the test)
POSE_TOLERANCE = 1e-12


def _export(name, out, overlay=None, with_plots=False, start=1.0, size=SIZE):
    from tumble.export.exporter import export

    sc = load("t-handle")
    spec = get_view(name)
    settings = ExportSettings(out=out, fps=FPS, duration=FRAMES / FPS, start=start, size=size, with_plots=with_plots,
                              overlay=overlay or Overlay())
    return export(spec, spec.runs(sc, {}), settings)


def test_every_view_is_registered_once_for_the_window_the_export_and_the_command_line():
    from tumble.gui.views import view_factory

    assert view_names()[0] == "main" and {"main", "poinsot", "compare", "stability"} <= set(view_names())
    for name in view_names():
        spec = get_view(name)
        assert spec.name == name and spec.exported_panes and view_factory(name).__name__ in spec.window
    with pytest.raises(ParameterError, match="--view must be one of main, poinsot"):
        get_view("nope")


# ------------------------------------------------------------------ 3 frames, every format


@pytest.mark.parametrize("fmt", ["mp4", "gif", "png"])
@pytest.mark.parametrize("name", view_names())
def test_three_frames_of_every_view_in_every_format(tmp_path, name, fmt):
    out = tmp_path / f"clip.{fmt}"
    size = (640, 360) if fmt == "mp4" else SIZE  # the movie with the view's plots beside it
    result = _export(name, out, with_plots=fmt == "mp4", size=size)
    assert result.frames == FRAMES
    if fmt == "png":
        paths = sequence_paths(out, FRAMES)
        assert list(result.paths) == paths and sorted(tmp_path.iterdir()) == paths
        frames = [iio.imread(p) for p in paths]
    else:
        assert list(tmp_path.iterdir()) == [out] and out.stat().st_size > 0
        frames = mp4_frames(out) if fmt == "mp4" else list(iio.imiter(out, extension=".gif"))
    assert len(frames) == FRAMES
    assert all(f.shape[:2] == (size[1], size[0]) for f in frames)
    assert not np.array_equal(frames[0][..., :3], frames[-1][..., :3])  # it moves


# ------------------------------------------------------------------ live and exported alike


def _step_to(workers, t_end: float) -> None:
    """Step paused workers until each has recorded past ``t_end`` (the same steps for each)."""
    for worker in workers:
        worker.start()
    deadline = time.monotonic() + 60
    while min(w.latest().t for w in workers) < t_end:
        serials = [w.latest().serial for w in workers]
        for worker in workers:
            worker.step()
        while any(w.latest().serial == s for w, s in zip(workers, serials)):
            assert time.monotonic() < deadline, "the worker does not step"
            time.sleep(0.002)


@pytest.mark.parametrize("name", view_names())
def test_the_live_pose_and_the_exported_pose_of_one_run_agree(tmp_path, name, pose_numbers):
    """The window's recording (a SimulationWorker's history, stepped while paused) and the
    export's (a Timeline re-simulated from the start) of the same run, posed by the view's one
    ``pose`` at the same time: body, arrows, trails (end points) and ghosts agree to round-off."""
    import pyvista as pv

    from tumble.export.canvas import egl_without_display
    from tumble.export.exporter import FrameComposer
    from tumble.export.timeline import simulate_timeline
    from tumble.simulation import SimulationWorker

    spec = get_view(name)
    runs = spec.runs(load("t-handle"), {})
    workers = [SimulationWorker(sc, running=False) for sc in runs]
    try:
        _step_to(workers, 1.5)
        t_live = min(w.latest().t for w in workers)
        assert all(w.latest().t == t_live for w in workers)  # the same steps
        live_plotters = {}
        with egl_without_display():
            for pane in spec.panes:  # the window's panes, those it shows live only included
                if pane.kind == "3d":
                    live_plotters[pane.name] = pv.Plotter(off_screen=True, window_size=(400, 300))
        live = spec.build(live_plotters, runs, {}, None)
        live.set_ghost_visible(True)
        live.pose(workers, t_live)
        live_numbers = pose_numbers(live)
        if "polhode" in live.scenes:  # a pane shown live only: omega's dot where the worker's omega is
            dot = np.array(live.scenes["polhode"]._actors["omega"].user_matrix)[:3, 3]
            np.testing.assert_array_equal(dot, workers[0].latest().state.w)
    finally:
        for worker in workers:
            worker.stop()
    # the worker's time is a sum of steps: the export starts at the same time without its round-off,
    # so that it samples the run at the worker's record interval exactly
    plan = plan_export(runs[0], ExportSettings(out=tmp_path / "x.png", fps=FPS, duration=1 / FPS, start=round(t_live, 9),
                                               size=SIZE, overlay=Overlay(ghost=True)))
    timelines = [simulate_timeline(sc, plan) for sc in runs]
    composer = FrameComposer(spec, runs, plan, timelines)
    try:
        t_export = float(timelines[0].t[timelines[0].frame_index[0]])
        assert t_export == pytest.approx(t_live, abs=1e-12)
        composer.frame(0)
        exported = pose_numbers(composer.view)
    finally:
        composer.close()
        for plotter in live_plotters.values():
            plotter.close()
    live_only = {p.name for p in spec.panes if not p.exported}
    live_numbers = {k: v for k, v in live_numbers.items() if k.split("/")[0] not in live_only}
    assert set(exported) == set(live_numbers) and len(exported) > 10
    for key, value in live_numbers.items():
        np.testing.assert_allclose(exported[key], value, rtol=POSE_TOLERANCE, atol=POSE_TOLERANCE, err_msg=key)


# ------------------------------------------------------------------ the colour key


def _legend_cell(rows, size, monkeypatch=None):
    """A canvas of ``size`` with the colour key ``rows`` only; returns (image, first label glyph box)."""
    from tumble.export.canvas import Canvas

    canvas = Canvas(size, [1.0])
    try:
        canvas.finish(legend_rows=rows)
        out = np.empty((size[1], size[0], 3), dtype=np.uint8)
        canvas.render(out)
        margin, _, font = canvas.legend_box
    finally:
        canvas.close()
    x = margin + round(1.2 * font)
    top = margin + (round(1.3 * font) - font) // 2
    return out, out[max(0, top - 2): top + round(1.3 * font), x: x + font]


def test_the_colour_key_draws_omega_with_the_font_file(monkeypatch):
    """At the smallest default frame (a GIF's 640x360) ω is drawn: its pixels differ from the
    font's missing-glyph box and from VTK's own font, which has no ω."""
    from tumble.scene import style

    size = (640, 360)
    _, omega = _legend_cell((("ω  angular velocity", style.OMEGA_COLOR),), size)
    _, missing = _legend_cell((("\uffff  angular velocity", style.OMEGA_COLOR),), size)
    assert np.count_nonzero(omega.max(axis=-1) > 120) > 8  # ink of the text colour
    assert np.abs(omega.astype(int) - missing.astype(int)).sum() > 2000
    monkeypatch.setattr(style, "text_font_file", lambda: None)
    _, builtin = _legend_cell((("ω  angular velocity", style.OMEGA_COLOR),), size)
    assert np.abs(omega.astype(int) - builtin.astype(int)).sum() > 2000


@pytest.mark.parametrize("name", view_names())
def test_every_view_exports_its_colour_key_with_omega(tmp_path, name):
    from tumble.export.canvas import MARGIN_FRACTION, legend_size, text_px

    out = tmp_path / "key.png"
    size = (640, 360)
    _export(name, out, overlay=Overlay(time=False, flips=False, title=None, legend=True), size=size)
    _export(name, tmp_path / "bare.png", overlay=Overlay(time=False, flips=False, title=None), size=size)
    keyed, bare = iio.imread(sequence_paths(out, FRAMES)[0]), iio.imread(sequence_paths(tmp_path / "bare.png", FRAMES)[0])
    rows = get_view(name).legend_rows()
    row = next(i for i, (label, _) in enumerate(rows) if label.startswith("ω"))
    font = legend_size(size[1])
    margin = max(4, round(MARGIN_FRACTION * size[1]))
    line = round(1.3 * font)
    if get_view(name).legend_corner == "top":
        top = margin + row * line
    else:  # standing on the time line
        top = size[1] - (margin + round(1.6 * text_px(size[1])) + (len(rows) - row) * line)
    x = margin + round(1.2 * font)
    cell = (slice(top, top + line + 2), slice(x, x + font))
    assert np.abs(keyed[cell].astype(int) - bare[cell].astype(int)).sum() > 1000, "no ω in the key"


# ------------------------------------------------------------------ the exact ghost


@pytest.mark.parametrize("name", view_names())
def test_overlay_ghost_draws_the_closed_form(tmp_path, name):
    from tumble.export.exporter import FrameComposer
    from tumble.export.timeline import simulate_timeline
    from tumble.physics import quaternion as quat
    from tumble.physics.reference import ExactReference

    spec = get_view(name)
    runs = spec.runs(load("t-handle"), {})
    plan = plan_export(runs[0], ExportSettings(out=tmp_path / "x.png", fps=FPS, duration=FRAMES / FPS, start=2.0,
                                               size=SIZE, overlay=Overlay(ghost=True)))
    timelines = [simulate_timeline(sc, plan) for sc in runs]
    composer = FrameComposer(spec, runs, plan, timelines)
    try:
        frame = composer.frame(FRAMES - 1)
        view = composer.view
        assert view.ghost_visible and view.ghosts
        t = float(timelines[0].t[timelines[0].frame_index[-1]])
        for k, ghost in enumerate(view.ghosts):
            assert all(a.GetVisibility() for a in ghost.actors.values())
            _, q, w = ExactReference(runs[k].model, runs[k].initial_state).at(t)
            m = np.array(next(iter(ghost.actors.values())).user_matrix)[:3, :3]
            R = quat.to_matrix(q)
            if name == "poinsot":  # the ghost's meridians: the closed form's ellipsoid
                np.testing.assert_allclose(ghost.construction.contact_world, quat.rotate(q, w), rtol=1e-9)
            else:
                np.testing.assert_allclose(m, R, atol=1e-9)
    finally:
        composer.close()
    plain = FrameComposer(spec, runs, plan_export(runs[0], ExportSettings(
        out=tmp_path / "y.png", fps=FPS, duration=FRAMES / FPS, start=2.0, size=SIZE)), timelines)
    try:
        assert np.abs(plain.frame(FRAMES - 1).astype(int) - frame.astype(int)).sum() > 1000  # the ghost shows
    finally:
        plain.close()


@pytest.mark.parametrize("name", view_names())
def test_overlay_ghost_is_refused_where_the_closed_form_does_not_apply(tmp_path, name):
    res = tumble("export", "rocket-top", "--view", name, "--out", tmp_path / "x.mp4", "--duration", "0.1",
                 "--overlay", "time,ghost")
    refused(res, "--overlay must not include ghost", "torques")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("args, message", [
    (["--view", "stability", "--directions", "0"], "--directions must be a whole number from 1 to"),
    (["--view", "stability", "--map-duration", "-1"], "--map-duration must be a finite number > 0"),
    (["--directions", "100"], "--directions must come with --view stability"),
    (["--view", "poinsot", "--dts", "0.01", "0.01"], "--dts must come with --view compare"),
    (["--view", "stability", "--out", "{d}/x.csv"], "--out must end in .mp4, .gif or .png with --view stability"),
])
def test_a_view_s_own_options_are_checked_on_the_command_line(tmp_path, args, message):
    args = [a.format(d=tmp_path) for a in args]
    refused(tumble("export", "t-handle", *(args if "--out" in args else [*args, "--out", tmp_path / "x.mp4"])), message)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("name", view_names())
def test_the_export_dialog_s_command_names_the_view_and_its_options_from_the_registry(tmp_path, name):
    """protocol.command(view=NAME, options=...) makes argv that ``tumble export`` parses back
    to the same view and options (no argv hand-made per view)."""
    from tumble.cli.core import build_parser
    from tumble.cli.export import _view_options
    from tumble.export import protocol

    options = {"compare": {"integrators": ("rk4", "euler"), "dts": (0.01, 0.005)},
               "stability": {"directions": 60, "map_duration": 2.5}}.get(name, {})
    settings = ExportSettings(out=tmp_path / "x.mp4", overlay=Overlay(legend=True, ghost=True))
    argv = protocol.command(tmp_path / "s.toml", settings, view=name, options=options)
    args = build_parser().parse_args(argv[3:])
    assert args.view == name and args.overlay == "time,flips,title,legend,ghost"
    assert _view_options(args, get_view(name)) == options
