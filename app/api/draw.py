"""Drawing from Python: :func:`render` one frame, :func:`export` an animation, :func:`show` a view.

``render`` and ``export`` draw off screen with the export's own frame loop
(:mod:`app.export.exporter`: the scene posed by the same call the window makes); VTK is
imported when they are called, not before. ``show`` plays the view inline in Jupyter (a
small animation made by the same loop, under a caption saying what it shows) and opens the
window elsewhere (the only place the API imports the GUI).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from .tables import LISTED_FLIPS
from .types import Run, Scenario, flag_number, integrator_name, load
from ..physics.errors import ParameterError

#: what an export draws over the scene unless told (``tumble export``'s --overlay default)
DEFAULT_OVERLAY = "time,flips,title,legend"
EXPORT_OVERLAYS = ("time", "flips", "title", "legend", "ghost")
#: an animation shown inline in Jupyter: frame size (pixels) and rate. Small, so a notebook
#: stays light: 10 s of t-handle is a 360 KB GIF made in 2.0 s here once VTK is loaded
#: (tumble.export("t-handle", "x.gif", duration=10, fps=15, size=(480, 270)))
SHOW_SIZE = (480, 270)
SHOW_FPS = 15
#: an inline animation plays at real time for at most this long (s of video); a longer run
#: shows its first SHOW_LONGEST_S seconds, and says so
SHOW_LONGEST_S = 10.0
#: a run shorter than this (a fitted flight of 0.8 s) plays in slow motion to last about as long (s of video)
SHOW_SHORTEST_S = 3.0
#: what an inline animation is: an animated GIF (shown by every notebook viewer) or an MP4
#: in an HTML5 video (smaller at larger sizes, with controls to pause on a flip)
SHOW_FORMATS = ("gif", "mp4")


def _scenario(sc) -> Scenario:
    return load(sc.scenario if isinstance(sc, Run) else sc)


def overlay_of(overlay, title=None):
    """An :class:`~app.export.Overlay` from ``overlay``: a comma list of time, flips, title,
    legend, ghost (``--overlay``), ``"none"``, a list of those names, or None (the default)."""
    from ..export import Overlay

    text = DEFAULT_OVERLAY if overlay is None else overlay
    if isinstance(text, (list, tuple, set, frozenset)) and all(isinstance(x, str) for x in text):
        text = ",".join(text) or "none"
    if not isinstance(text, str):
        raise ParameterError("--overlay", overlay, f"be a comma list of {', '.join(EXPORT_OVERLAYS)}, or none")
    shown = {item.strip() for item in text.split(",")}
    if shown == {"none"}:
        shown = set()
    if not shown <= set(EXPORT_OVERLAYS):
        raise ParameterError("--overlay", text, f"be a comma list of {', '.join(EXPORT_OVERLAYS)}, or none")
    return Overlay(time="time" in shown, flips="flips" in shown,
                   title=None if "title" not in shown else (title if title is not None else ""),
                   legend="legend" in shown, ghost="ghost" in shown)


def _flagged(err: ParameterError, text: str) -> ParameterError:
    """``err`` with the message ``text`` (the command line's wording of it)."""
    out = ParameterError(err.field, err.value, err.rule)
    out.args = (text,)
    return out


def export_result(sc, path, *, view="main", duration=None, fps=None, size=None, speed=1.0, overlay=None,
                  with_plots=False, start=0.0, title=None, integrator=None, dt=None, options=None,
                  progress=None, cancel=None, data_progress=None, slow_flips=None):
    """Everything :func:`export` does, returning what was written: the export's
    :class:`~app.export.exporter.ExportResult` for an animation, ``(path, rows, plan)`` for data
    (.csv/.npz: the trajectory, one row per frame; .toml: the scenario). ``fps`` and ``size``
    None take the format's default (30 fps, 1280x720; 20 fps and 640x360 for a GIF);
    ``options`` the view's own (``{"integrators": ("rk4", "euler")}`` for compare);
    ``progress(done, total)`` and ``cancel()`` as for the export loop; ``slow_flips`` X plays
    X times slower from 0.5 s before each flip to 0.5 s after (the clip grows by it)."""
    from types import SimpleNamespace

    from .arguments import with_solver_flags
    from ..export import DATA_FORMATS, ExportSettings, export_data, plan_export
    from ..export.gltf import gltf_format
    from ..views import get_view

    if gltf_format(path) is not None:
        if overlay is not None and overlay != DEFAULT_OVERLAY:
            raise ParameterError("--overlay", overlay, f"not be given with a .{gltf_format(path)} (nothing is drawn "
                                 "over a glTF scene; the page shows the clock and the flip count itself)")
        return export_gltf_result(sc, path, view=view, duration=duration, fps=fps, size=size, speed=speed,
                                  with_plots=with_plots, start=start, title=title, integrator=integrator, dt=dt,
                                  slow_flips=slow_flips, progress=data_progress)
    shown = overlay_of(overlay, title)
    spec = get_view(view)
    options = dict(options or {})
    integrator = integrator_name(integrator)
    if spec.name == "compare" and integrator is not None:
        raise ParameterError("--integrator", integrator, "not be used with --view compare (use --integrators A B)")
    flags = SimpleNamespace(integrator=integrator, dt=flag_number("--dt", dt))
    sc = with_solver_flags(_scenario(sc), flags, ("integrator", "dt"))
    try:
        settings = ExportSettings(out=str(path), fps=fps, duration=duration, start=start, speed=speed,
                                  size=None if size is None else tuple(size) if isinstance(size, (list, tuple))
                                  else size, with_plots=with_plots, overlay=shown, slow_flips=slow_flips)
        plan = plan_export(sc, settings)
    except ParameterError as err:
        raise ParameterError(f"--{err.field}", err.value, err.rule) from None
    if plan.format in DATA_FORMATS.values() and spec.name != "main":
        raise ParameterError("--out", str(path), f"end in .mp4, .gif or .png with --view {spec.name}")
    if spec.name == "compare" and flags.dt is not None and "dts" not in options:
        options["dts"] = (flags.dt, flags.dt)
    try:
        runs = spec.runs(sc, options)
    except ParameterError as err:
        if err.field.startswith("-"):  # named by the view's own option
            raise
        raise _flagged(err, f"--{'dts' if err.field.endswith('dt') else 'integrators'}: {err}") from None
    if shown.ghost:
        from ..export.exporter import check_ghost

        try:
            check_ghost(runs)
        except ParameterError as err:
            raise ParameterError(f"--{err.field}", err.value, err.rule) from None
    if plan.format in DATA_FORMATS.values():
        return (*export_data(sc, settings, progress=data_progress), plan)
    from ..export.exporter import export as run_export

    return run_export(spec, runs, plan, progress=progress, cancel=cancel, options=options)


def export_gltf_result(sc, path, *, view="main", duration=None, fps=None, size=None, speed=1.0, with_plots=False,
                       start=0.0, title=None, integrator=None, dt=None, slow_flips=None, progress=None):
    """A run as glTF (``path`` ending in .glb) or the page that plays it (.html): the
    :class:`~app.export.gltf.GltfResult`. The main view only, without plots; ``fps`` and
    ``size`` must be None (glTF has neither); ``title`` names the page (default the scenario's)."""
    from types import SimpleNamespace

    from .arguments import with_solver_flags
    from ..export.gltf import export_gltf, gltf_format

    fmt = gltf_format(path)
    if view != "main":
        raise ParameterError("--view", view, f"be main with a .{fmt} (glTF holds the body's own motion)")
    if with_plots:
        raise ParameterError("--with-plots", True, f"not be given with a .{fmt} (a glTF scene has no plots)")
    flags = SimpleNamespace(integrator=integrator_name(integrator), dt=flag_number("--dt", dt))
    sc = with_solver_flags(_scenario(sc), flags, ("integrator", "dt"))
    if title is not None:
        sc = sc.replace(name=str(title))
    try:
        return export_gltf(sc, path, duration=duration, speed=speed, start=start, slow_flips=slow_flips, fps=fps,
                           size=size, progress=progress)
    except ParameterError as err:
        if err.field.startswith("-") or "." in err.field:
            raise
        raise ParameterError(f"--{err.field}", err.value, err.rule) from None


def export(sc, path, *, view="main", duration=None, fps=30, size=(1280, 720), speed=1.0, overlay=None,
           with_plots=False, slow_flips=None) -> Path:
    """Write an animation of ``view`` off screen (``tumble export``): ``path`` ending in .mp4,
    .gif or .png (a numbered PNG sequence), or data (.csv/.npz trajectory, .toml scenario).

    ``duration``: s of video (default 10, or less if the run ends sooner); ``fps`` and
    ``size`` (width, height; even) of the frames, None for the format's default; ``speed``:
    simulated seconds per second of video; ``overlay``: what is drawn over the scene, a comma
    list or list of time, flips, title, legend, ghost, or ``"none"`` (default
    ``time,flips,title,legend``); ``with_plots``: the plots beside the scene; ``slow_flips`` X
    plays X times slower around each flip. Returns the path written (the first frame of a PNG
    sequence).

    A ``path`` ending in .glb writes the run as glTF 2.0 (the body turning by the simulation's
    quaternions, for slides, Blender and phones), one ending in .html the page that plays it
    offline in any browser; glTF has no frame rate or size: leave ``fps`` and ``size`` at their
    defaults (any other value is refused).
    """
    from ..export.gltf import gltf_format

    if gltf_format(path) is not None:
        if overlay is not None:
            raise ParameterError("overlay", overlay, "not be given with a glTF export (the page shows the clock and "
                                 "the flip count itself)")
        return Path(export_gltf_result(sc, path, view=view, duration=duration, speed=speed, with_plots=with_plots,
                                       slow_flips=slow_flips, fps=None if fps == 30 else fps,
                                       size=None if isinstance(size, (list, tuple)) and tuple(size) == (1280, 720) else size).path)
    result = export_result(sc, path, view=view, duration=duration, fps=fps, size=size, speed=speed,
                           overlay=overlay, with_plots=with_plots, slow_flips=slow_flips)
    return Path(result[0]) if isinstance(result, tuple) else Path(result.path)


def render(sc, t=0.0, *, view="main", size=(800, 600)):
    """The view of ``sc`` (a scenario or a run's) at simulated time ``t`` (s), drawn off screen
    as the export draws a frame: a numpy uint8 array (height, width, 3)."""
    from ..export import ExportSettings, Overlay, plan_export
    from ..export.exporter import FrameComposer
    from ..export.settings import MAX_FPS
    from ..export.timeline import simulate_timeline
    from ..views import get_view

    sc = _scenario(sc)
    spec = get_view(view)
    t = flag_number("t", t, "be a number >= 0", lambda v: v >= 0)
    runs = spec.runs(sc, {})
    with tempfile.TemporaryDirectory(prefix="tumble-render-") as folder:  # the plan wants a target; none is written
        settings = ExportSettings(out=Path(folder) / "frame.png", fps=MAX_FPS, duration=1.0 / MAX_FPS, start=t,
                                  size=tuple(size) if isinstance(size, (list, tuple)) else size,
                                  overlay=Overlay(time=True, flips=True, title="", legend=True))
        try:
            plan = plan_export(runs[0], settings)
        except ParameterError as err:
            field = {"start": "t"}.get(err.field, err.field)
            if err.field == "duration":  # one frame past the end of the run
                raise ParameterError("t", t, f"be < the scenario's run ({runs[0].solver.duration:g} s)") from None
            raise ParameterError(field, err.value, err.rule) from None
        timelines = [simulate_timeline(run, plan) for run in runs]
        composer = FrameComposer(spec, runs, plan, timelines, {})
        try:
            return composer.frame(0)
        finally:
            composer.close()


def clip_bundle(data: bytes, fmt: str, caption: str) -> dict:
    """The MIME bundle of an inline clip: ``image/gif``, or an HTML5 ``<video>`` of the MP4;
    the caption as its plain text."""
    import base64

    encoded = base64.b64encode(data).decode("ascii")
    if fmt == "gif":
        return {"image/gif": encoded, "text/plain": caption}
    return {"text/html": f'<video controls autoplay loop muted playsinline>'
                         f'<source type="video/mp4" src="data:video/mp4;base64,{encoded}"/></video>',
            "text/plain": caption}


def speed_text(speed: float) -> str:
    """How a clip's time runs: ``real time``, ``slow motion, 0.25x`` or ``sped up, 2x``."""
    if speed == 1:
        return "real time"
    return f"{'slow motion' if speed < 1 else 'sped up'}, {speed:g}x"


def clip_caption(sc, view, plan, shown_runs, run=None) -> str:
    """What an inline clip shows, in plain text: the scenario, the view, the span of simulated
    time and of the run, the speed, the solver of each of the view's runs (``shown_runs``: the
    compare view's pair), and for a run shown alone its flips in the span."""
    total = sc.solver.duration
    end = min(plan.start + plan.duration * plan.speed, total)  # the last frame shows the span up to here
    span = f"t = {plan.start:.3g} to {end:.3g} s" + ("" if end >= total * (1 - 1e-9) and plan.start == 0
                                                     else f" of the {total:.3g} s run")
    text = (f"{sc.name}, {view} view: {span}, {speed_text(plan.speed)} "
            f"({plan.duration:.3g} s of video at {plan.fps} fps, looping); "
            + " against ".join(f"{r.solver.integrator}, dt = {r.solver.dt:g} s" for r in shown_runs))
    if run is not None and len(shown_runs) == 1:
        shown = [t for t in run.flips if plan.start <= t <= end]
        listed = ", ".join(f"{t:.2f}" for t in shown[:LISTED_FLIPS]) + (", …" if len(shown) > LISTED_FLIPS else "")
        text += "; " + (f"flips at {listed} s" if shown else "no flip in this span")
    return text + "."


def caption_bundle(caption: str, name: str) -> dict:
    """The MIME bundle of a caption: Markdown with the scenario's ``name`` (its start) in bold."""
    import html

    rest = caption[len(name):] if caption.startswith(name) else caption
    bold = html.escape(name).replace("*", "\\*").replace("_", "\\_")
    return {"text/markdown": f"**{bold}**{html.escape(rest)}", "text/plain": caption}


def inline_speed(sc, start: float, duration, speed):
    """The speed of an inline clip: as given, else real time, or slow motion for a run
    shorter than :data:`SHOW_SHORTEST_S` (the clip then lasts about that long)."""
    from ..export.settings import speed_to_fit

    if speed is not None:
        return speed
    span = sc.solver.duration - start
    if duration is None and 0 < span < SHOW_SHORTEST_S:
        return speed_to_fit(span, SHOW_SHORTEST_S) or 1.0
    return 1.0


def inline_clip(sc_or_run, *, view="main", duration=None, speed=None, start=0.0, size=None, fps=None,
                format="gif"):
    """An animation of ``view`` for a notebook, made off screen by the export loop:
    ``(bytes, format, caption)`` (see :func:`show`)."""
    from ..views import get_view

    sc = _scenario(sc_or_run)
    if format not in SHOW_FORMATS:
        raise ParameterError("format", format, f"be {' or '.join(SHOW_FORMATS)}")
    run_s = sc.solver.duration
    start = flag_number("--start", start, f"be >= 0 and < the scenario's run ({run_s:g} s)",
                        lambda v: 0 <= v < run_s)
    speed = inline_speed(sc, start, duration, speed)
    if duration is None and isinstance(speed, (int, float)) and not isinstance(speed, bool) and speed > 0:
        duration = min(SHOW_LONGEST_S, (run_s - start) / speed)
    with tempfile.TemporaryDirectory(prefix="tumble-show-") as folder:
        result = export_result(sc, Path(folder) / f"clip.{format}", view=view, duration=duration,
                               fps=SHOW_FPS if fps is None else fps, size=SHOW_SIZE if size is None else size,
                               speed=speed, start=start)
        data = result.path.read_bytes()
    spec = get_view(view)
    return data, format, clip_caption(sc, spec.name, result.plan, spec.runs(sc, {}),
                                      sc_or_run if isinstance(sc_or_run, Run) else None)


def in_jupyter() -> bool:
    """Whether this runs in a Jupyter kernel (an IPython shell with a kernel)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    return shell is not None and getattr(shell, "kernel", None) is not None


def interactive_page(sc_or_run, *, duration=None, speed=None, start=0.0, slow_flips=None) -> str:
    """The page ``tumble export --out FILE.html`` writes, as text: the run as glTF with the
    viewer inlined (it plays offline and turns with the mouse); ``duration`` s of animation
    (default the run, at most :data:`SHOW_LONGEST_S`), ``speed`` as for :func:`show`."""
    sc = _scenario(sc_or_run)
    run_s = sc.solver.duration
    start = flag_number("--start", start, f"be >= 0 and < the scenario's run ({run_s:g} s)", lambda v: 0 <= v < run_s)
    speed = inline_speed(sc, start, duration, speed)
    with tempfile.TemporaryDirectory(prefix="tumble-show-") as folder:
        result = export_gltf_result(sc, Path(folder) / "flip.html", duration=duration, speed=speed, start=start,
                                    slow_flips=slow_flips)
        return result.path.read_text(encoding="utf-8")


def show(sc_or_run, *, view="main", duration=None, speed=None, start=0.0, size=None, fps=None, format="gif",
         interactive=False):
    """Show ``view`` of a scenario or a run: in Jupyter the view moving inline, under a
    caption that says what it shows; elsewhere the app's window, until it is closed
    (returns its exit status).

    In Jupyter the clip is made off screen by the export's loop (as ``tumble export``):
    ``duration`` s of video (default: the run, at most :data:`SHOW_LONGEST_S`), ``speed``
    simulated seconds per second of video (default 1; slow motion for a run shorter than
    :data:`SHOW_SHORTEST_S`), from simulated time ``start``, ``size`` (width, height;
    480x270), ``fps`` (15), ``format`` ``"gif"`` (an animated GIF, shown by any notebook
    viewer) or ``"mp4"`` (an HTML5 video with controls). These apply to the inline clip only.
    Without a display (Linux with neither DISPLAY nor WAYLAND_DISPLAY) it raises
    :class:`ParameterError` with the line ``tumble gui`` prints there.

    ``interactive=True`` in Jupyter shows the page ``tumble export --out FILE.html`` writes
    (:func:`interactive_page`: the run as glTF, played by three.js) in an ``<iframe srcdoc>``:
    it turns with the mouse, with play/pause, a time slider and the speed; it needs no server
    and no file. Elsewhere it opens the window, as without it.
    """
    sc = _scenario(sc_or_run)
    if in_jupyter() and interactive:
        from IPython.display import HTML, display

        from ..export.page import notebook_iframe

        if view != "main":
            raise ParameterError("view", view, "be main with interactive=True (the page plays the body's own motion)")
        display(HTML(notebook_iframe(interactive_page(sc_or_run, duration=duration, speed=speed, start=start))))
        return None
    if in_jupyter():
        import warnings

        from IPython.display import display

        with warnings.catch_warnings():  # pyvista's import of pooch asks tqdm for notebook widgets
            warnings.filterwarnings("ignore", message="IProgress not found")
            data, fmt, caption = inline_clip(sc_or_run, view=view, duration=duration, speed=speed, start=start,
                                             size=size, fps=fps, format=format)
        display(caption_bundle(caption, sc.name), raw=True)
        display(clip_bundle(data, fmt, caption), raw=True)
        return None
    from .arguments import display_missing, no_display_error
    from ..gui.launch import run_gui
    from ..views import get_view

    get_view(view)
    if display_missing():  # Qt would abort the interpreter (exit 134): say it as the command line does
        raise no_display_error()
    with tempfile.TemporaryDirectory(prefix="tumble-show-") as folder:
        path = sc.save(Path(folder) / "scenario.toml")
        return run_gui(str(path), view=view)
