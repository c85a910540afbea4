"""The command line's ``tumble export``: its parser, built from the view registry (app.views), and the command."""

from __future__ import annotations

import argparse
import sys

from ..api.arguments import COLOURS_HELP, ProgressBar, colour_scheme, number_flag, positive

EXIT_OK, EXIT_FAILED = 0, 1


#: the one line ``tumble --help`` shows for ``export``
EXPORT_HELP = "render an animation (MP4, GIF, PNG frames) or its data, off screen"


class UsageError(Exception):
    """Bad command-line input; the message is the whole line printed."""


def add_export_parser(sub, integrator, integrator_help) -> None:
    """``tumble export``: every registered view with its own options (``integrator`` and
    ``integrator_help`` are the command line's type and help for an integrator's name)."""
    from ..api.draw import DEFAULT_OVERLAY
    from ..views import get_view, view_names

    _integrator, _integrator_help = integrator, integrator_help
    e = sub.add_parser("export", help=EXPORT_HELP)
    e.add_argument("scenario", help="preset name or TOML file")
    e.add_argument("--out", required=True,
                   help="FILE.mp4 (H.264), FILE.gif, FILE.png (the frames FILE_0000.png, FILE_0001.png, ... in its folder; no FILE.png itself), "
                        "FILE.glb (glTF 2.0: the body turning by the run's own quaternions, for slides, Blender, phones; "
                        "no --fps, --size or --overlay) or FILE.html (one page that plays it offline in any browser), "
                        "or data: FILE.csv / FILE.npz (trajectory, one row per frame), FILE.toml (the scenario)")
    e.add_argument("--fps", metavar="N", type=number_flag("--fps"),
                   help="frames per second, 1 to 240 (default 30; 20 for a GIF)")
    e.add_argument("--duration", metavar="S", type=number_flag("--duration"),
                   help="clip length in seconds of video (default 10, or less if the scenario's run ends sooner)")
    e.add_argument("--start", metavar="S", default=0.0, type=number_flag("--start"),
                   help="simulated time of the first frame (s, default 0)")
    e.add_argument("--speed", metavar="X", default=1.0, type=number_flag("--speed"),
                   help="simulated seconds per second of video: 0.25 slow motion, 4 time-lapse (default 1)")
    e.add_argument("--slow-flips", metavar="X", type=number_flag("--slow-flips"),
                   help="slow motion around each flip: X times slower from 0.5 s before each flip of the run to "
                        "0.5 s after (simulated time; the time shown stays the simulated one), 1 to 50; the clip "
                        "grows by it: --duration counts it at normal speed")
    e.add_argument("--size", metavar="WxH", help="frame size in pixels, even (default 1280x720; 640x360 for a GIF)")
    e.add_argument("--with-plots", action="store_true", help="the plots of L, omega and the drifts beside the scene")
    e.add_argument("--overlay", metavar="LIST", default=DEFAULT_OVERLAY,
                   help="over the scene: any of time, flips, title, legend (the colour key), ghost (the exact "
                        f"closed-form ghost, where it applies), or none (default {DEFAULT_OVERLAY})")
    e.add_argument("--title", metavar="TEXT", help="title text (default the scenario's name without notes such as (edited))")
    e.add_argument("--integrator", type=_integrator, metavar="NAME",
                   help=_integrator_help("integrator (default: the scenario's)"))
    e.add_argument("--dt", type=positive("--dt"), help="step (s); for dop853 the largest step")
    e.add_argument("--view", choices=view_names(), default="main",
                   help="what is drawn: " + "; ".join(f"{n}: {get_view(n).description}" for n in view_names())
                        + " (default main)")
    for name in view_names():
        for option in get_view(name).options:
            e.add_argument(option.flag, dest=f"view_{option.key}", **option.kwargs)
    e.add_argument("--colours", metavar="SCHEME", type=colour_scheme, help=COLOURS_HELP)
    e.add_argument("--progress-json", action="store_true", help=argparse.SUPPRESS)


def _view_options(args, spec) -> dict:
    """The options of ``spec`` given on the command line; an option of another view is a
    :class:`UsageError` ("--dts must come with --view compare")."""
    from ..views import get_view, view_names

    options = {}
    for name in view_names():
        for option in get_view(name).options:
            value = getattr(args, f"view_{option.key}", None)
            if value is None:
                continue
            if name != spec.name:
                raise UsageError(f"{option.flag} must come with --view {name}")
            options[option.key] = tuple(value) if isinstance(value, list) else value
    return options


def cmd_export(args) -> int:
    import time

    t_begin = time.perf_counter()
    from ..api.draw import export_result
    from ..export import EncodeError, ExportCancelled, parse_size
    from ..export.protocol import JsonProgress, StdinCancel, sigterm_as_interrupt
    from ..physics.errors import ParameterError, shorten
    from ..views import get_view

    options = _view_options(args, get_view(args.view))
    if str(args.out).lower().endswith(".toml"):  # the scenario alone: no frame is made, these would do nothing
        given = {"--slow-flips": args.slow_flips, "--fps": args.fps, "--duration": args.duration, "--size": args.size,
                 "--speed": None if args.speed == 1.0 else args.speed, "--start": None if args.start == 0.0 else args.start}
        for flag, value in given.items():
            if value is not None:
                made = "a clip (.mp4, .gif, .png)" if flag == "--size" else \
                    "a clip or a trajectory (.mp4, .gif, .png, .csv, .npz)"
                raise ParameterError(flag, value, f"go with {made}: a .toml output is the scenario alone")
    from ..export.gltf import gltf_format

    fmt = gltf_format(args.out)
    if fmt is not None:
        return _export_gltf(args, fmt)
    try:
        size = None if args.size is None else parse_size(args.size)
    except ParameterError as err:
        raise UsageError(f"--{err}") from None

    json_progress = JsonProgress() if args.progress_json else None
    first_frame = []

    def progress(done, total):
        if json_progress is not None:
            json_progress(done, total)
        now = time.perf_counter()
        if done and not first_frame:  # the rate counts from the first frame, after start-up
            first_frame.append((now, done))
        rate = (done - first_frame[0][1]) / (now - first_frame[0][0]) if first_frame and now > first_frame[0][0] else 0
        bar(done / total, f"frame {done}/{total}" + (f", {(total - done) / rate:.0f} s left" if rate else ""))

    try:
        with ProgressBar("export") as bar, sigterm_as_interrupt():
            result = export_result(
                args.scenario, args.out, view=args.view, duration=args.duration, fps=args.fps, size=size,
                speed=args.speed, slow_flips=args.slow_flips, overlay=args.overlay, with_plots=args.with_plots, start=args.start,
                title=args.title, integrator=args.integrator, dt=args.dt, options=options, progress=progress,
                cancel=StdinCancel() if args.progress_json else None,
                data_progress=lambda fraction: bar(fraction, "simulating"))
    except ExportCancelled:
        print("tumble: export cancelled, nothing written", file=sys.stderr)
        return EXIT_FAILED
    except EncodeError as err:
        print(f"tumble: error: {shorten(str(err), 300)} (nothing written)", file=sys.stderr)
        return EXIT_FAILED
    if isinstance(result, tuple):  # data: the trajectory or the scenario
        path, rows, plan = result
        print(f"wrote {path}" + (f" ({rows} rows, one per frame at {plan.fps} fps)" if rows else ""))
        return EXIT_OK
    wall = time.perf_counter() - t_begin
    plan = result.plan
    (w, h), paths = plan.size, result.paths
    where = str(paths[0]) if len(paths) == 1 else f"{paths[0]} ... {paths[-1].name}"
    print(f"wrote {where}: {result.frames} frames, {w}x{h}, {plan.fps} fps, {plan.duration:g} s "
          f"({result.bytes / 1e6:.2f} MB)")
    from ..export.timing import process_age

    age = process_age()
    wall = age if age is not None and age >= wall else wall  # from process start when known
    print(f"wall time {wall:.2f} s for a {plan.duration:g} s clip: {plan.duration / wall:.2f}x real time "
          f"({'since the process started' if age is not None else 'of the command'}; "
          f"simulation {result.simulate_seconds:.2f} s, "
          f"frames {result.frames / max(result.seconds - result.simulate_seconds, 1e-9):.1f}/s)")
    if json_progress is not None:
        json_progress.emit("done", path=str(paths[0]), files=len(paths), frames=result.frames,
                           bytes=result.bytes, seconds=wall)
    return EXIT_OK


def _export_gltf(args, fmt: str) -> int:
    """``tumble export ... --out FILE.glb`` or ``FILE.html``: the run as glTF, or the page that plays it."""
    from ..api.draw import export_gltf_result
    from ..export import ExportCancelled
    from ..export.protocol import JsonProgress, StdinCancel, sigterm_as_interrupt

    from ..api.draw import DEFAULT_OVERLAY

    for flag, value in (("--fps", args.fps), ("--size", args.size)):
        if value is not None:
            raise UsageError(f"{flag} must not be given with a .{fmt} (glTF has no frame rate or frame size: "
                             f"the viewer draws at its own), got {value}")
    if args.overlay != DEFAULT_OVERLAY:
        raise UsageError(f"--overlay must not be given with a .{fmt} (nothing is drawn over a glTF scene; the page "
                         f"shows the clock, the flip count, the title and the colour key itself), got {args.overlay}")
    json_progress = JsonProgress() if args.progress_json else None
    cancel = StdinCancel() if args.progress_json else None

    def progress(fraction):
        if cancel is not None and cancel():
            raise ExportCancelled
        if json_progress is not None:  # the window's export dialog: the fraction simulated, in thousandths
            json_progress(int(round(1000 * fraction)), 1000)
        bar(fraction, "simulating")

    try:
        with ProgressBar("export") as bar, sigterm_as_interrupt():
            result = export_gltf_result(args.scenario, args.out, view=args.view, duration=args.duration,
                                        speed=args.speed, with_plots=args.with_plots, start=args.start,
                                        title=args.title, integrator=args.integrator, dt=args.dt,
                                        slow_flips=args.slow_flips, progress=progress)
    except (ExportCancelled, KeyboardInterrupt):
        print("tumble: export cancelled, nothing written", file=sys.stderr)
        return EXIT_FAILED
    plan, keys = result.plan, result.keys
    moved = f", {len(keys.translation)} of the centre" if keys.moves else ""
    print(f"wrote {result.path}: {plan.duration:.3g} s of animation (simulated {plan.start:g} to {plan.end:.4g} s at "
          f"speed {plan.speed:g}), {len(keys.rotation)} rotation keyframes{moved}, slerp within "
          f"{keys.rotation_error:.2g} rad of the run ({result.bytes / 1e6:.2f} MB, {result.seconds:.2f} s)")
    if json_progress is not None:
        json_progress.emit("done", path=str(result.path), files=1, keyframes=int(len(keys.rotation)),
                           bytes=result.bytes, seconds=result.seconds)
    return EXIT_OK
