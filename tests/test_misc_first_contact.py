"""What a new user met on first contact (issue 19, section 2), outside the window: each test
failed before its fix."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from conftest import ROOT, refused, tumble

from tumble.export import ExportSettings, plan_export
from tumble.physics.errors import ParameterError
from tumble.scenario import SolverSpec, load



def short_run(seconds: float):
    """The T-handle run for ``seconds``, as a fitted flight lasts (0.87 s)."""
    sc = load("t-handle")
    return sc.replace(solver=SolverSpec(sc.solver.integrator, sc.solver.dt, seconds))


@pytest.mark.parametrize("duration, start", [(3.0, 0.0), (10.0, 0.0), (2.0, 0.3)])
def test_a_clip_longer_than_the_run_names_the_speed_that_shows_it_all(tmp_path, duration, start):
    sc = short_run(0.87)
    with pytest.raises(ParameterError) as info:
        plan_export(sc, ExportSettings(out=tmp_path / "fit.gif", duration=duration, start=start))
    match = re.search(r"speed ([0-9.]+) shows the whole run", str(info.value))
    assert match, str(info.value)
    speed = float(match[1])
    # the speed it names plans without an error and shows all but the last frame's share of the run
    plan = plan_export(sc, ExportSettings(out=tmp_path / "fit.gif", duration=duration, start=start, speed=speed))
    assert plan.end <= 0.87
    assert plan.start + plan.duration * speed >= start + 0.9 * (0.87 - start)


def test_the_readme_and_the_help_name_only_the_png_files_an_export_writes(tmp_path):
    """``--out NAME.png`` writes NAME_0000.png, ... and no NAME.png: no text promises one."""
    from tumble.cli.core import build_parser
    from tumble.export import sequence_paths

    written = {p.name for p in sequence_paths(tmp_path / "NAME.png", 3)}
    assert "NAME.png" not in written and "NAME_0000.png" in written
    readme = " ".join(ROOT.joinpath("README.md").read_text(encoding="utf-8").split())
    sentence = readme[readme.index("`NAME_0000.png`") - 80:readme.index("`NAME_0000.png`") + 120]
    assert "beside `NAME.png`" not in sentence and "no file `NAME.png`" in sentence, sentence
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    help_out = next(a.help for a in sub.choices["export"]._actions if a.dest == "out")
    assert "beside it" not in help_out and "no FILE.png itself" in help_out


NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?")


def negative_zeros(text: str) -> list:
    """Number tokens of ``text`` that read as a negative zero ("-0", "-0.00")."""
    return [tok for tok in NUMBER.findall(text) if tok.startswith("-") and float(tok) == 0]


def test_inspect_prints_no_negative_zero(capsys):
    from tumble.cli.core import main
    from tumble.scenario import preset_names

    for name in preset_names():
        assert main(["inspect", name]) == 0
        text = capsys.readouterr().out
        assert not negative_zeros(text), (name, text)
        assert main(["inspect", name, "--json"]) == 0
        info = json.loads(capsys.readouterr().out)

        def walk(x):
            if isinstance(x, float):
                assert not (x == 0 and math.copysign(1.0, x) < 0), (name, info)
            elif isinstance(x, (list, tuple)):
                for y in x:
                    walk(y)
            elif isinstance(x, dict):
                for y in x.values():
                    walk(y)

        walk(info)


HUGE_DAMPED = """
name = "huge"
[body]
shape = "box"
mass = 1e100
size = [1e90, 2e90, 3e90]
[body.damper]
inertia = 1.0
coefficient = 1.0
[initial]
angular_velocity = [1.0, 0.0, 0.0]
"""


def test_inspect_json_is_json_for_a_body_whose_momentum_squared_overflows(tmp_path, capsys):
    """|L| ~ 1e280 overflows |L|^2, but the final energy |L|^2 / (2 (I_max + J)) is below E0
    (it is the least energy |L| allows), so it is finite: printed, never as Infinity."""
    from tumble.cli.core import main

    path = tmp_path / "huge.toml"
    path.write_text(HUGE_DAMPED, encoding="utf-8")
    assert main(["inspect", str(path), "--json"]) == 0
    text = capsys.readouterr().out
    info = json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} is not JSON: {text}"))
    assert 0 < info["final_energy"] <= info["E0"]
    # the body spins about its major axis already: nothing to drain
    assert info["final_energy"] == pytest.approx(info["E0"], rel=1e-12)


@pytest.mark.parametrize("mesh", ["a\\u0000b.stl", "x" * 5000 + ".stl", ("d" * 300 + "/") * 20 + "m.stl"])
def test_a_mesh_path_the_system_cannot_take_is_one_line_exit_2(tmp_path, mesh):
    path = tmp_path / "nul.toml"
    path.write_text(f'name = "nul"\n[body]\nshape = "mesh"\nmesh = "{mesh}"\nmass = 1.0\n', encoding="utf-8")
    line = refused(tumble("inspect", path))
    assert line.startswith("tumble: error: body.mesh must ") and "internal" not in line, line


def stiff_damper(tmp_path, inertia: float, coefficient: float, integrator: str = "rk4", dt: float = 0.0005,
                 duration: float = 90.0) -> Path:
    """explorer-1 with another damper and solver."""
    text = ROOT.joinpath("resources/scenarios/explorer-1.toml").read_text(encoding="utf-8")
    text = re.sub(r"(?m)^inertia = .*$", f"inertia = {inertia!r}", text)
    text = re.sub(r"(?m)^coefficient = .*$", f"coefficient = {coefficient!r}", text)
    text = re.sub(r"(?m)^integrator = .*$", f'integrator = "{integrator}"', text)
    text = re.sub(r"(?m)^dt = .*$", f"dt = {dt!r}", text)
    text = re.sub(r"(?m)^duration = .*$", f"duration = {duration!r}", text)
    path = tmp_path / f"stiff-{integrator}.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("integrator, field", [("rk4", "solver.dt"), ("euler", "solver.dt"),
                                               ("midpoint", "solver.dt"), ("dop853", "solver.duration")])
def test_a_damper_too_stiff_for_the_method_is_refused_before_the_run(tmp_path, integrator, field):
    """J 1e-9 kg m^2, c 1e3 N m s: the sphere's rate relaxes at c / J = 1e12 /s. A fixed step of
    0.5 ms blew up at step 1 (exit 1); dop853 ran for minutes towards ~1e13 steps. Both are
    refused on loading, in one line naming the field and the rule (exit 2)."""
    path = stiff_damper(tmp_path, 1e-9, 1e3, integrator)
    for command in (("inspect", path), ("simulate", path, "--out", tmp_path / "x.csv")):
        line = refused(tumble(*command, timeout=120), "c (1/J + 1/I_min)", unwritten=[tmp_path / "x.csv"])
        assert line.startswith(f"tumble: error: {field} must "), line


def test_a_fixed_step_just_inside_the_damper_limit_runs_and_drains_energy():
    """At dt c (1/J + 1/I_min) = 0.9 (inside RK4's real stability interval, 2.79) the run stays
    finite and the energy only falls; at 3 (outside it) the scenario is refused."""
    import numpy as np

    from tumble.physics.gyrostat import damper_relaxation_rate
    from tumble.physics.integrators import simulate
    from tumble.scenario import DamperSpec

    base = load("explorer-1")
    body = base.body.__class__(**{**base.body.__dict__, "damper": DamperSpec(1e-3, 1.0)})
    rate = damper_relaxation_rate(body.build())
    assert rate == pytest.approx(1.0 * (1 / 1e-3 + 1 / min(body.build().principal()[0])))
    sc = base.replace(body=body, solver=SolverSpec("rk4", 0.9 / rate, 2.0))
    traj = simulate(sc.model, sc.initial_state, "rk4", sc.solver.dt, sc.solver.duration)
    from tumble.physics import diagnostics

    energy = diagnostics.kinetic_energy(sc.rigid_body, traj.v, traj.w, traj.s)
    assert np.all(np.isfinite(energy)) and np.all(np.diff(energy) <= 1e-9 * energy[0])
    with pytest.raises(ParameterError, match=r"solver\.dt must be <= "):
        base.replace(body=body, solver=SolverSpec("rk4", 3.0 / rate, 2.0))


@pytest.mark.parametrize("preset, says", [("rocket-top", "applied torques or forces"),
                                          ("explorer-1", "a damper or a rotor")])
def test_the_ghost_refusal_is_one_plain_sentence(preset, says):
    """It read "(integrator must be used only without applied torques or forces (the closed form
    is torque-free), got 'exact'), got 'ghost'": another error's message inside this one."""
    from tumble.export.exporter import check_ghost
    from tumble.physics.reference import exact_unavailable_reason

    reason = exact_unavailable_reason(load(preset).model)
    assert says in reason and "got" not in reason and "integrator" not in reason and "must" not in reason
    with pytest.raises(ParameterError) as info:
        check_ghost([load(preset)])
    text = str(info.value)
    assert text.startswith("overlay must not include ghost ") and text.endswith(", got 'ghost'")
    assert text.count("got") == 1 and text.count("(") == text.count(")") <= 1, text


def dragged_t_handle():
    """The T-handle with a small quadratic drag, as a fitted throw carries."""
    from tumble.scenario import LoadSpec

    return load("t-handle").replace(loads=(LoadSpec("drag", model="quadratic", coefficients=(1e-9, 2e-9, 1e-9)),))


def test_one_rule_says_where_free_body_theory_applies(capsys):
    """The status bar showed a predicted flip period for a fitted (dragged) flight while the
    Theory dock said "No free-body theory here": every prediction now follows
    theory.applies (no torque about the centre of mass, no damper or rotor)."""
    from tumble.cli.core import main
    from tumble.gui.panels.describe import spin_summary
    from tumble.physics import theory
    from tumble.simulation.worker import predicted_period

    free, dragged = load("t-handle"), dragged_t_handle()
    assert theory.applies(free.rigid_body, free.applied_loads)
    assert not theory.applies(dragged.rigid_body, dragged.applied_loads)
    assert predicted_period(free) is not None and theory.predict(
        free.rigid_body, free.angular_velocity, free.applied_loads).flip_period == predicted_period(free)
    assert predicted_period(dragged) is None  # the status bar's figure
    assert theory.predict(dragged.rigid_body, dragged.angular_velocity, dragged.applied_loads) == theory.Theory()
    assert "flips every" not in spin_summary(dragged) and "no free-body" in spin_summary(dragged)
    from tumble.scenario import dumps

    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "dragged.toml"
        path.write_text(dumps(dragged), encoding="utf-8")
        assert main(["inspect", str(path), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["flip_period"] is None


@pytest.mark.parametrize("name", ["main", "poinsot", "compare", "stability"])
def test_every_view_s_key_says_l_turns_under_a_drag_and_stays_fixed_without(tmp_path, monkeypatch, name):
    """A fitted throw's drag turns L: the exports said "(fixed in space)" while the main window
    said "(turned by the applied loads)". One rule (body_scene.legend) for every view."""
    from tumble.export import Overlay
    from tumble.export.canvas import Canvas
    from tumble.export.exporter import export
    from tumble.views import get_view

    seen = []
    finish = Canvas.finish

    def spy(self, *args, legend_rows=(), **kwargs):
        seen.append(tuple(legend_rows))
        return finish(self, *args, legend_rows=legend_rows, **kwargs)

    monkeypatch.setattr(Canvas, "finish", spy)
    spec = get_view(name)
    options = {"directions": 20, "map_duration": 1.0} if name == "stability" else {}
    for sc, fixed in ((load("t-handle"), True), (dragged_t_handle(), False)):
        seen.clear()
        settings = ExportSettings(out=tmp_path / f"{name}.png", fps=10, duration=0.1, size=(320, 240),
                                  overlay=Overlay(time=False, flips=False, title=None, legend=True))
        export(spec, spec.runs(sc, options), settings, options=options)
        (rows,) = seen
        labels = [label for label, _ in rows]
        assert any("fixed in space" in label or "L, fixed" in label for label in labels) == fixed, labels
        assert any("turned by the applied loads" in label for label in labels) == (not fixed), labels


def test_the_trail_of_a_fast_spin_is_round(tmp_path):
    """explorer-1 spins at 78.5 rad/s: 0.8 rad between two 10 ms samples, and its trail drew a
    square. The trail's points are now at most TRAIL_STEP of turning apart (Hermite orientations
    between samples), and lie on the circle the spin sweeps, many a turn."""
    import numpy as np

    from tumble.export.timeline import simulate_timeline
    from tumble.physics import quaternion as quat
    from tumble.views import base
    from tumble.views.base import pose_with_trail

    TRAIL_STEP = getattr(base, "TRAIL_STEP", 0.1)  # noqa: N806 - the module's constant

    class Scene:
        trail_visible = True

        def set_pose(self, c, q, w, L, trail_q=None, trail_c=None):
            self.trail_q = trail_q

    sc = load("explorer-1")
    plan = plan_export(sc, ExportSettings(out=tmp_path / "x.png", fps=10, duration=0.2, start=5.0))
    timeline = simulate_timeline(sc, plan)
    scene = Scene()
    pose_with_trail(scene, timeline, plan.end, 6.0, 600, {"trail_q": "q"})
    qs = scene.trail_q
    assert 300 <= len(qs) <= 600
    steps = quat.angle_between(qs[:-1], qs[1:])
    assert np.max(steps) <= TRAIL_STEP * 1.01
    # the tip of a body axis across the spin: at least 2 pi / TRAIL_STEP points a turn
    tips = quat.rotate(qs, np.array([1.0, 0.0, 0.0]))
    assert np.max(np.linalg.norm(np.diff(tips, axis=0), axis=1)) <= TRAIL_STEP * 1.01


def _text_boxes(canvas):
    """(text, x0, x1, y0, y1) of every text on the canvas, in pixels from the bottom left of the frame."""
    boxes = []
    x_offset = 0
    for pane, renderer in zip(canvas.panes, canvas.plotter.renderers):
        for actor in renderer.GetViewProps():
            if actor.IsA("vtkTextActor") and actor.GetInput():
                bb = [0.0] * 4
                actor.GetBoundingBox(renderer, bb)
                x, y = actor.GetPosition()
                boxes.append((actor.GetInput(), x_offset + x + bb[0], x_offset + x + bb[1], y + bb[2], y + bb[3]))
        x_offset += pane.window_size[0]
    return boxes


@pytest.mark.parametrize("size, shares", [((800, 720), [1.0]), ((400, 360), [1.0]), ((640, 360), [1.0, 1.0])])
def test_a_long_title_stays_inside_its_pane_and_off_the_key(size, shares):
    """With --with-plots the title ran off the left edge and over the colour key: it wraps
    (and at worst ends in an ellipsis) within its pane, clear of the key."""
    from tumble.export.canvas import Canvas
    from tumble.scene.body_scene import LEGEND

    title = "Fit of Gyroscope rotation rate 2026-11-27 10-11-12, flight at 1.14 s, replayed with drag " * 2
    canvas = Canvas(size, shares)
    try:
        canvas.finish(title, status=True, legend_rows=LEGEND)
        boxes = _text_boxes(canvas)
        titles = [b for b in boxes if b[0] not in {label for label, _ in LEGEND} and b[0] != "\u25a0"]
        (shown,) = [b for b in titles if b[0].split()[0] == "Fit"]
        key = [b for b in boxes if b[0] in {label for label, _ in LEGEND}]
        last = sum(p.window_size[0] for p in canvas.panes[:-1])
        _, x0, x1, y0, y1 = shown
        assert last <= x0 and x1 <= size[0], shown  # inside its pane
        for _, kx0, kx1, ky0, ky1 in key:  # no overlap with any row of the key
            assert x0 >= kx1 or x1 <= kx0 or y0 >= ky1 or y1 <= ky0, (shown, key)
        assert "\n" in shown[0] or shown[0].endswith("…")
    finally:
        canvas.close()


@pytest.mark.parametrize("size", [(640, 360), (1280, 720)])
def test_the_stability_export_frames_its_body_below_the_colour_key(tmp_path, size):
    """The key crosses the middle of the stability view's narrow body pane, and the L arrow
    pointing up poked into it: the body is framed below the key, so the reach of its arrows
    (L_ARROW_LENGTH body radii, pointing anywhere) stays under the key's bottom edge."""
    import numpy as np

    from tumble.export import Overlay
    from tumble.export.exporter import FrameComposer
    from tumble.export.timeline import simulate_timeline
    from tumble.scene.body_scene import L_ARROW_LENGTH
    from tumble.views import get_view

    sc = load("t-handle")
    spec = get_view("stability")
    options = {"directions": 20, "map_duration": 1.0}
    plan = plan_export(sc, ExportSettings(out=tmp_path / "s.png", fps=10, duration=0.1, size=size,
                                          overlay=Overlay(legend=True)))
    runs = spec.runs(sc, options)
    composer = FrameComposer(spec, runs, plan, [simulate_timeline(r, plan) for r in runs], options)
    try:
        composer.frame(0)
        scene = composer.view.scenes["body"]
        renderer = composer.canvas.plotter.renderers[0]
        cam = renderer.GetActiveCamera()
        up = np.asarray(cam.GetViewUp())
        renderer.SetWorldPoint(*(np.asarray(cam.GetFocalPoint()) + L_ARROW_LENGTH * scene.radius * up), 1.0)
        renderer.WorldToDisplay()
        reach = renderer.GetDisplayPoint()[1]  # px from the bottom
        key_bottom = size[1] - composer.canvas.legend_reach
        assert composer.canvas.legend_right > composer.canvas.panes[0].window_size[0] / 2
        assert reach < key_bottom, (reach, key_bottom)
    finally:
        composer.close()
