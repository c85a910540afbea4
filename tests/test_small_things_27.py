"""Small things seen in front of a class (issue 27, item 10), each checked where it was seen."""

from __future__ import annotations

import numpy as np
import pytest
import pyvista as pv

from tumble.scene.polhode import PolhodeScene
from tumble.scenario import load

#: the window's polhode pane (px) and the band its title takes at the top (two lines of 11 pt text)
POLHODE_PANE = (400, 180)
TITLE_BAND_PX = 40


def _display_y(plotter, point) -> float:
    """Pixel row of a world point from the top of the plotter's window."""
    ren = plotter.renderer
    ren.SetWorldPoint(*point, 1.0)
    ren.WorldToDisplay()
    return plotter.window_size[1] - ren.GetDisplayPoint()[1]


@pytest.mark.parametrize("preset", ["explorer-1", "t-handle", "tennis-racket"])
def test_the_polhode_stays_under_its_title(preset):
    sc = load(preset)
    plotter = pv.Plotter(off_screen=True, window_size=POLHODE_PANE)
    try:
        scene = PolhodeScene(plotter)
        scene.set_body(sc.rigid_body, sc.angular_velocity)
        plotter.render()
        # the ellipsoid's extreme points on screen: its semi-axes' ends, and omega on it
        body = sc.rigid_body
        w = np.asarray(sc.angular_velocity, dtype=float)
        moments, axes = body.principal()
        semi = np.sqrt(float(w @ body.inertia @ w) / moments)
        ends = [sign * semi[k] * axes[:, k] for k in range(3) for sign in (1, -1)]
        rows = [_display_y(plotter, p) for p in ends]
        assert min(rows) >= TITLE_BAND_PX, f"{preset}: the ellipsoid reaches row {min(rows):.0f}, into the title"
        assert max(rows) <= POLHODE_PANE[1]  # and it is whole at the bottom
    finally:
        plotter.close()


def test_a_clip_with_plots_keeps_its_key_off_the_body_and_its_plot_keys_readable(tmp_path):
    from tumble.export.exporter import FrameComposer
    from tumble.export.plots import DPI
    from tumble.export.settings import ExportSettings, Overlay, plan_export
    from tumble.export.timeline import simulate_timeline
    from tumble.views import get_view

    sc = load("t-handle")
    plan = plan_export(sc, ExportSettings(out=tmp_path / "clip.mp4", duration=0.1, with_plots=True,
                                          overlay=Overlay(legend=True)))
    spec = get_view("main")
    composer = FrameComposer(spec, (sc,), plan, [simulate_timeline(sc, plan)])
    try:
        scene = composer.view.scenes[spec.panes[0].name]
        # the key over the scene beside the plots (800 of 1280 px) reaches 45 % across it: the body
        # (and the omega and L arrows pointing up) is framed below the band it covers
        assert composer.canvas.legend_right > 0.4 * plan.scene_size[0]
        assert scene._top_clear == pytest.approx(composer.canvas.legend_reach / plan.size[1])
        # each plot's key: text of at least 12 px in a 720 px frame (it was under 10 px)
        figure = composer.plots.panel.canvas.figure
        keys = [ax.get_legend() for ax in figure.axes if ax.get_legend() is not None] + list(figure.legends)
        sizes = [text.get_fontsize() * DPI / 72 for key in keys for text in key.get_texts()]
        assert sizes and min(sizes) >= 12
    finally:
        composer.close()


def test_the_compare_key_names_the_body_axes_it_draws():
    from tumble.scene.body_scene import LEGEND
    from tumble.views import get_view

    rows = [label for label, _ in get_view("compare").legend_rows((load("t-handle"),) * 2)]
    assert rows[:3] == [label for label, _ in LEGEND[:3]] == ["body x axis", "body y axis", "body z axis"]
    assert any(r.startswith("ω") for r in rows) and any(r.startswith("L") for r in rows)


@pytest.mark.parametrize("preset", ["tennis-racket", "t-handle"])
def test_a_flat_body_is_seen_across_its_face_not_edge_on(preset):
    from tumble.scene.body_scene import MIN_FACE_VIEW_DEG, MIN_ARROW_VIEW_DEG, view_direction

    sc = load(preset)
    body = sc.rigid_body
    moments, axes = body.principal()
    w = np.asarray(sc.angular_velocity, dtype=float)
    arrows = [w, body.inertia @ w]
    d = view_direction(arrows, axes[:, 2])  # the face normal of these flat bodies: their major axis
    assert np.degrees(np.arcsin(abs(d @ axes[:, 2]))) >= MIN_FACE_VIEW_DEG - 1e-9
    for a in arrows:  # and the arrows still clear of the body
        cos = abs(d @ a) / np.linalg.norm(a)
        assert np.degrees(np.arccos(min(cos, 1.0))) >= MIN_ARROW_VIEW_DEG - 1e-9


def test_the_window_looks_at_the_racket_across_its_face():
    from tumble.scene.body_scene import MIN_FACE_VIEW_DEG, RigidBodyScene

    sc = load("tennis-racket")
    plotter = pv.Plotter(off_screen=True, window_size=(320, 240))
    try:
        scene = RigidBodyScene(plotter)
        scene.set_body(sc.rigid_body, np.zeros(3), sc.angular_velocity)
        _, axes = sc.rigid_body.principal()
        assert np.degrees(np.arcsin(abs(scene.view @ axes[:, 2]))) >= MIN_FACE_VIEW_DEG - 1e-9
    finally:
        plotter.close()


def test_the_stability_export_fills_its_pane_and_marks_no_axis_over_the_latitude_ticks(tmp_path):
    from tumble.export.exporter import FrameComposer
    from tumble.export.settings import ExportSettings, plan_export
    from tumble.export.timeline import simulate_timeline
    from tumble.views import get_view

    sc = load("t-handle")  # its -int axis lies on the date line, at latitude 0
    spec = get_view("stability")
    plan = plan_export(sc, ExportSettings(out=tmp_path / "map.mp4", duration=0.1))
    composer = FrameComposer(spec, (sc,), plan, [simulate_timeline(sc, plan)], {"directions": 60})
    try:
        (x0, x1, picture), = composer.pictures
        ax = picture._ax
        picture.canvas.draw()
        box = ax.get_window_extent()
        assert box.height >= 0.55 * plan.size[1]  # an equal-degree map took 0.38 of it
        markers = [line for line in ax.lines if line.get_marker() in ("o", "X", "s") and line.get_markeredgecolor() == "white"]
        assert len(markers) == 6
        for line in markers:  # none on the left edge, where the latitude ticks' labels are
            lon, lat = line.get_xdata()[0], line.get_ydata()[0]
            assert lon > -179.999 or abs(lat) > 89.999
    finally:
        composer.close()


def _session(n, seed=1):
    from tumble.throws.benches import synthetic as syn

    truth = syn.Truth.rotated(2.0)
    rng = np.random.default_rng(seed)
    rates = [syn.spin_near(truth, 1, 5.0 + 2 * k, 15.0 + k, rng) for k in range(n)]
    return syn.make_recording(truth, rates, rng, flight_s=0.9)


def _key_of(fig):
    fig.canvas.draw()
    assert len(fig.legends) == 1  # one key for every panel, not one panel's half
    key = fig.legends[0]
    box, frame = key.get_window_extent(fig.canvas.get_renderer()), fig.bbox
    assert box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0 and box.y1 <= frame.y1
    return [text.get_text() for text in key.get_texts()]


def test_fit_png_has_visible_points_and_a_whole_key():
    from tumble.throws.benches.fit_bench import recording_from_arrays
    from tumble.throws.fitting import report
    from tumble.throws.fitting.fit import fit_recordings

    t, w, _ = _session(2)
    result = fit_recordings([recording_from_arrays("session", t, w)])
    fig = report.plot_figure(result)
    labels = _key_of(fig)
    assert labels[:3] == ["ωx fitted", "ωy fitted", "ωz fitted"]
    assert {"measured", "clipped, not fitted", "flip measured", "flip fitted"} <= set(labels)
    dots = [line for ax in fig.axes for line in ax.lines if line.get_marker() == "."]
    assert dots and min(line.get_markersize() for line in dots) >= 4  # 2.5 pt was a speck


def test_predict_png_has_an_omega_key_and_marks_the_lead(tmp_path):
    from matplotlib.patches import Polygon, Rectangle

    from tumble.throws.benches.fit_bench import recording_from_arrays
    from tumble.throws.fitting import predict as pr
    from tumble.throws.fitting import report
    from tumble.throws.fitting.fit import fit_recordings

    t, w, _ = _session(2)
    rec = recording_from_arrays("session", t, w)
    result = fit_recordings([rec])
    scenario = report.flight_scenario(result)
    flights = pr.predict_flights(scenario, [rec], lead=0.1, horizon=1.0)
    seen = {}

    def keep(fig, *args, **kwargs):  # the figure as it is saved
        seen["fig"] = fig

    import matplotlib.figure

    original = matplotlib.figure.Figure.savefig
    matplotlib.figure.Figure.savefig = lambda self, *a, **k: (keep(self), original(self, *a, **k))[1]
    try:
        report.draw_predictions(pr.FittedBody.of(scenario), [rec], flights, 1.0, tmp_path / "p.png", lead=0.1)
    finally:
        matplotlib.figure.Figure.savefig = original
    fig = seen["fig"]
    labels = _key_of(fig)
    assert labels[:3] == ["ωx predicted", "ωy predicted", "ωz predicted"]
    assert "first 0.1 s: ω0 fitted here" in labels and "flip predicted" in labels and "flip measured" in labels
    for ax in fig.axes:  # each panel shades the lead: a span from 0 to 0.1 s
        spans = [p.get_bbox() for p in ax.patches if isinstance(p, (Polygon, Rectangle))]
        assert any(np.allclose([b.x0, b.x1], [0.0, 0.1]) for b in spans)
