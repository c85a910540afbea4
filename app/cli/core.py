"""Command line: argument parsing, exit codes and one-line errors for every subcommand.

Exit status: 0 success, 2 bad input (one line on stderr naming the field, the value and
the rule), 1 a run that failed on its own (divergence, a disk that filled up).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import sys

from .audit import add_audit_parser, cmd_audit
from .export import EXPORT_HELP, UsageError, add_export_parser, cmd_export
from .replay import add_replay_parser, run_replay
from .throws import THROW_COMMANDS, add_throw_parsers
from ..api.arguments import (
    COLOURS_HELP,
    NO_DISPLAY,
    VIEW_NAMES,
    ProgressBar,
    check_out,
    check_out_folder,
    colour_scheme,
    display_missing,
    number_flag,
    number_type,
    positive,
    quit_after,
    whole,
)

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
#: what a shell reports for a process killed by SIGPIPE (128 + 13)
EXIT_BROKEN_PIPE = 141
from .words import EXIT_INTERRUPTED, INTERRUPTED_LINE  # noqa: E402 (Ctrl+C's line and status)


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors on one line (long values cut) and exits 2."""

    def error(self, message):  # noqa: D401 - argparse API
        from ..physics.errors import MAX_VALUE_CHARS, shorten

        # "argument --dt: --dt must be ..." -> "--dt must be ..."
        head, sep, rest = message.partition(": ")
        if head.startswith("argument ") and sep and rest.startswith(head[len("argument "):].split("/")[0]):
            message = rest
        # argparse quotes what it could not take ("invalid choice: 'xxx...'"): cut it
        message = re.sub(r"'[^']{%d,}'" % (MAX_VALUE_CHARS + 1), lambda m: shorten(m.group(0)), message)
        raise UsageError(shorten(message if rest.startswith("-") and sep else f"{self.prog}: {message}", 1000))


def _integrator(text):
    from ..physics.errors import ParameterError
    from ..physics.integrators import integrator_info

    try:
        return integrator_info(text).name
    except ParameterError as err:
        raise argparse.ArgumentTypeError(str(ParameterError("--integrator", text, err.rule))) from None


def _integrator_help(what: str) -> str:
    from ..physics.integrators import INTEGRATORS

    return f"{what}: one of {', '.join(INTEGRATORS)}"


def build_parser(argv=None) -> argparse.ArgumentParser:
    """The parser of every subcommand. Given the command line ``argv``, ``export``'s options
    (read from the view registry, which imports pyvista) are built only if that is the command
    run: the other commands start without drawing code."""
    from .. import __version__
    from ..simulation.stability import DEFAULT_DIRECTIONS, DEFAULT_DURATION, MAX_DIRECTIONS

    p = _Parser(prog="tumble", description="Free rigid-body rotation: watch it, measure it, export it.")
    p.add_argument("--version", action="version", version=f"tumble {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    s = sub.add_parser("simulate", help="simulate a scenario headless and write its trajectory")
    s.add_argument("scenario", help="preset name or TOML file")
    s.add_argument("--integrator", type=_integrator, metavar="NAME",
                   help=_integrator_help("integrator (default: the scenario's)"))
    s.add_argument("--dt", type=positive("--dt"), help="step (s); for dop853 the largest step")
    s.add_argument("--duration", type=positive("--duration"), help="simulated time (s)")
    s.add_argument("--sample", type=positive("--sample"), help="output interval (s), default dt")
    s.add_argument("--out", required=True, help="FILE.csv or FILE.npz")
    s.add_argument("--outputs", metavar="LIST",
                   help="extra column groups, Exudyn names: AngularVelocity, Rotation, RotationMatrix, "
                        "AngularAcceleration, AngularAccelerationLocal, Position, Velocity, Acceleration, "
                        "VelocityLocal, AccelerationLocal; DamperAngularVelocity (a body with a damper)")
    s.add_argument("--point", metavar="X,Y,Z", help="body-fixed point (body frame, m, from the reference point) "
                   "for Position/Velocity/Acceleration outputs")

    sub.add_parser("presets", help="list the shipped presets")

    i = sub.add_parser("inspect", help="print the body's mass properties and predictions")
    i.add_argument("scenario")
    i.add_argument("--json", action="store_true", help="one JSON object")

    b = sub.add_parser("bench", help="accuracy/speed table against exact solutions, or the GUI frame rate")
    b.add_argument("scenarios", nargs="*", help="presets or TOML files (default: boxes-simple boxes-complex)")
    b.add_argument("--integrators", nargs="+", type=_integrator, metavar="NAME",
                   help=_integrator_help("integrators to measure (default: all)"))
    b.add_argument("--dt", nargs="+", type=positive("--dt"), metavar="S",
                   help="steps to test (default 0.01 0.005 0.0025 0.001)")
    b.add_argument("--json", action="store_true", help="print rows as a JSON list (or the GUI figures)")
    b.add_argument("--wide", action="store_true",
                   help="print every figure as one Markdown table (about 230 columns) instead of a table per "
                        "scenario in 100 columns")
    b.add_argument("--out", help="folder for bench.csv and the work-precision plot")
    b.add_argument("--gui", action="store_true", help="measure the real window instead")
    b.add_argument("--seconds", type=positive("--seconds"), default=60.0, help="GUI bench length (s)")
    b.add_argument("--speed", type=positive("--speed"), default=1.0, help="GUI bench playback speed")
    b.add_argument("--view", default="main", help="GUI bench: the view measured (default main)")
    from ..gui.bench import MAX_REFERENCE_SECONDS, REFERENCE_SECONDS  # a light module: constants, no Qt

    b.add_argument("--reference-seconds", metavar="S",
                   type=number_type("--reference-seconds", f"be a number from 0 to {MAX_REFERENCE_SECONDS:g}",
                                    lambda v: 0 <= v <= MAX_REFERENCE_SECONDS),
                   help="GUI bench: seconds the simplest pyvistaqt window is measured after the view, for "
                        f"fps_ratio (default: --seconds, at most {REFERENCE_SECONDS:g}; 0 skips it)")

    st = sub.add_parser("stability", help="map how far omega wanders, for spin axes all over the sphere")
    st.add_argument("scenario", help="preset name or TOML file (its body and |omega| are used)")
    st.add_argument("--directions", type=whole("--directions", 1, MAX_DIRECTIONS), metavar="N",
                    help=f"initial spin axes, a Fibonacci lattice in body axes (default {DEFAULT_DIRECTIONS})")
    st.add_argument("--duration", type=positive("--duration"), metavar="S",
                    help=f"simulated time per direction (s, default {DEFAULT_DURATION:g})")
    st.add_argument("--out", required=True, help="FILE.npz (arrays) or FILE.png (latitude-longitude map)")

    if argv is None or _command(argv) == "export":
        add_export_parser(sub, _integrator, _integrator_help)
    else:
        sub.add_parser("export", help=EXPORT_HELP)

    g = sub.add_parser("gui", help="open the app window")
    g.add_argument("scenario", nargs="?", help="a preset's name (tumble presets), a scenario TOML, or a recording "
                                               "or sample's name (tumble samples) to fit in the import dialog")
    g.add_argument("--paused", action="store_true", help="open with the run paused (Space plays it)")
    g.add_argument("--view", default="main", help="the window opened: " + ", ".join(VIEW_NAMES) + " (default main)")
    g.add_argument("--screenshot", metavar="FILE", help="save a PNG of the window and exit")
    g.add_argument("--quit-after", type=quit_after(), metavar="S",
                   help="seconds of wall time before the screenshot/exit")
    g.add_argument("--live", metavar="URL", help="follow a phone live (phyphox remote access, http://HOST:PORT; "
                                                 "demo: a stand-in phone replaying a sample)")
    g.add_argument("--engines", metavar="LIST", help="--view engines: up to 4 settings ENGINE[:SETTING],...")
    g.add_argument("--presentation", action="store_true",
                   help="open in presentation mode: the scene alone, full screen, large type, a big clock (F11)")
    g.add_argument("--colours", metavar="SCHEME", type=colour_scheme, help=COLOURS_HELP)
    g.add_argument("--slow-flips", metavar="X", type=number_flag("--slow-flips"),
                   help="slow motion around each flip: X times slower from 0.5 s before each flip to 0.5 s after, "
                        "1 to 50 (M toggles it)")
    add_throw_parsers(sub)
    add_audit_parser(sub)
    add_replay_parser(sub)
    from .live import add_live_parsers
    add_live_parsers(sub, COMMANDS)
    return p


def _command(argv) -> str | None:
    """The subcommand named on the command line ``argv`` (its first word that is not an option)."""
    return next((a for a in argv if not str(a).startswith("-")), None)


def _load_scenario(arg):
    from ..scenario import load

    return load(arg)


# ------------------------------------------------------------------ commands


def cmd_simulate(args) -> int:
    import numpy as np

    from ..api.functions import simulate
    from ..simulation.table import write_table

    out = check_out(args.out, (".csv", ".npz"))
    with ProgressBar("simulate") as bar:
        run = simulate(args.scenario, integrator=args.integrator, dt=args.dt, duration=args.duration,
                       sample=args.sample, outputs=args.outputs, point=args.point, progress=bar)
    write_table(out, run.columns)
    print(run.summary())
    if np.any(np.asarray(run.scenario.rigid_body.center_of_mass) != 0):
        print("columns c*, v* describe the centre of mass; the body's reference point is at "
              "-center_of_mass from it (use --outputs Position --point 0,0,0 for the reference point)")
    print(f"wrote {out}")
    return EXIT_OK


def cmd_presets(args) -> int:
    from ..api.functions import presets

    rows = list(presets().items())
    if not rows:
        from ..scenario.files import PRESETS_DIR

        print(f"tumble: no presets found in {PRESETS_DIR} (a broken install: reinstall tumble)", file=sys.stderr)
        return EXIT_FAILED
    width = max(len(n) for n, _ in rows)
    for name, desc in rows:
        print(f"{name:<{width}}  {desc}")
    return EXIT_OK


def cmd_inspect(args) -> int:
    from ..api.functions import inspect
    from ..scenario.inspection import inspect_text

    info = inspect(args.scenario)
    print(json.dumps(info) if args.json else inspect_text(info["name"], info))
    return EXIT_OK


DEFAULT_BENCH = ["boxes-simple", "boxes-complex"]
DEFAULT_BENCH_DT = [0.01, 0.005, 0.0025, 0.001]


def cmd_bench(args) -> int:
    if args.gui:
        from ..gui.bench import figures_text, run_gui_bench

        if no_display():
            return EXIT_USAGE
        fig = run_gui_bench(seconds=args.seconds, speed=args.speed, view=args.view,
                            reference_seconds=args.reference_seconds)
        print(json.dumps(fig) if args.json else figures_text(fig))
        return EXIT_OK
    from ..simulation.benchmark import check_bench_size, markdown_table, run_bench, text_table

    out_dir = check_out_folder(args.out) if args.out else None
    scenarios = [_load_scenario(s) for s in (args.scenarios or DEFAULT_BENCH)]
    dts = args.dt or DEFAULT_BENCH_DT
    check_bench_size(scenarios, args.integrators, dts)
    with ProgressBar("bench") as bar:
        rows = run_bench(scenarios, args.integrators, dts, progress=bar)
    if args.json:
        # a row that does not apply (exact with torques) or diverged has no figures: null
        print(json.dumps([{k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.items()}
                          for r in rows], allow_nan=False))
    else:
        print(markdown_table(rows) if args.wide else text_table(rows))
    if out_dir is not None:
        from ..simulation.bench_output import write_bench_outputs

        out_dir.mkdir(parents=True, exist_ok=True)
        paths = write_bench_outputs(rows, out_dir)
        print("wrote " + ", ".join(str(p) for p in paths), file=sys.stderr)
    return EXIT_OK


def cmd_stability(args) -> int:
    from ..api.functions import stability_map
    from ..simulation.stability import write_npz, write_png

    out = check_out(args.out, (".npz", ".png"))
    with ProgressBar("stability") as bar:
        sc, smap = stability_map(args.scenario, args.directions, args.duration, progress=bar)
    directions, duration, omega_norm = len(smap.wander), smap.duration, smap.omega_norm
    if out.suffix.lower() == ".png":
        write_png(smap, out, title=f"{sc.name}: stability map, |ω| = {omega_norm:.4g} rad/s, "
                                   f"{duration:g} s, {directions} directions")
    else:
        write_npz(smap, out)
    axis = ", ".join(f"{label.split(':')[0]} {w:.3g}" for label, w in zip(smap.axis_labels, smap.axis_wander()))
    print(f"{sc.name}: {directions} directions at |omega| = {omega_norm:.6g} rad/s over {duration:g} s "
          f"({smap.integrator}, dt = {smap.dt:.3g} s); wander (rad) near the axes: {axis}")
    print(f"wrote {out}")
    return EXIT_OK


def no_display() -> bool:
    """True, after saying so in one line on stderr, where a window cannot open: Linux without
    DISPLAY, WAYLAND_DISPLAY or a QT_QPA_PLATFORM chosen. Qt itself would abort the process
    with a message about reinstalling the application (exit 134)."""
    if not display_missing():
        return False
    print(f"tumble: error: {NO_DISPLAY}", file=sys.stderr)
    return True


def cmd_gui(args) -> int:
    if no_display():
        return EXIT_USAGE
    from ..gui.launch import check_screenshot, run_gui, run_gui_on_recording
    from ..gui.recordings.opening import is_recording

    check_screenshot(args.screenshot)  # before a recording is read or a window opens
    if args.scenario is not None and is_recording(args.scenario):  # a recording: the import dialog fits it
        return run_gui_on_recording([args.scenario], paused=args.paused, view=args.view, screenshot=args.screenshot,
                                    quit_after=args.quit_after)
    if args.live is not None:
        from ..throws.live.client import parse_url
        from ..throws.live.demo import is_demo

        if not is_demo(args.live):
            parse_url(args.live)
        if args.view != "main":
            raise UsageError(f"--live goes with the main view, not --view {args.view}")
    if args.view == "engines" or args.engines is not None:
        from ..views.engines import check_request
        check_request(args.scenario, args.view, args.engines)
    return run_gui(args.scenario, paused=args.paused, view=args.view, screenshot=args.screenshot,
                   quit_after=args.quit_after, live=args.live, engines=args.engines,
                   presentation=args.presentation, slow_flips=args.slow_flips)


def cmd_replay(args) -> int:
    if args.out is None and no_display():  # the window
        return EXIT_USAGE
    return run_replay(args)


COMMANDS = {
    "replay": cmd_replay,
    "simulate": cmd_simulate,
    "presets": cmd_presets,
    "inspect": cmd_inspect,
    "bench": cmd_bench,
    "stability": cmd_stability,
    "export": cmd_export,
    "gui": cmd_gui,
    "audit": cmd_audit,
}


COMMANDS.update(THROW_COMMANDS)


def signed_values(argv: list[str]) -> list[str]:
    """``--flag -1:1`` as ``--flag=-1:1``: argparse takes a word that begins with '-' for a flag
    unless it is a plain negative number, so a window or a point that starts negative would
    meet "expected one argument" instead of the flag's own rule."""
    out = list(argv)
    for k in range(len(out) - 1):
        flag, value = out[k], out[k + 1]
        if flag is not None and value is not None and flag.startswith("--") and "=" not in flag and len(flag) > 2 and value[:1] == "-" \
                and value[1:2] in tuple("0123456789."):
            out[k], out[k + 1] = f"{flag}={value}", None
    return [a for a in out if a is not None]


def threads_to_normal_priority() -> None:
    """Put this process's threads that run below normal priority back to it, where the system
    allows (root, or CAP_SYS_NICE). The last thread to end tears the process's memory down (half
    a gigabyte with a window open); Mesa's shader-cache thread runs at nice 19 (SCHED_BATCH), and
    when it was last, on a machine whose cores were busy, that took 1.5-1.8 s instead of 0.05 s."""
    try:
        tids = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:  # not Linux
        return
    for tid in tids:
        with contextlib.suppress(OSError, AttributeError):
            if os.sched_getscheduler(tid) in (os.SCHED_BATCH, os.SCHED_IDLE):
                os.sched_setscheduler(tid, os.SCHED_OTHER, os.sched_param(0))
        with contextlib.suppress(OSError, AttributeError):
            if os.getpriority(os.PRIO_PROCESS, tid) > 0:
                os.setpriority(os.PRIO_PROCESS, tid, 0)


def _end_now(code: int) -> None:
    """End the process with ``code`` once stdout and stderr are flushed, skipping the
    interpreter's teardown: after Ctrl+C in a window (its closeEvents have stopped the workers and
    saved the settings), tearing down Qt's and VTK's objects alone took 0.8-2.5 s here."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    threads_to_normal_priority()
    os._exit(code)


def main(argv=None) -> int:
    """Entry point of ``tumble`` and ``python -m tumble``; returns the exit status. Called as the
    entry point (``argv`` None), Ctrl+C once a window's toolkit is loaded ends the process at once."""
    entry_point = argv is None
    argv = signed_values(sys.argv[1:] if argv is None else list(argv))
    from ..physics.errors import DivergenceError, ParameterError, shorten

    try:
        if not argv:
            argv = ["gui"]
        args = build_parser(argv).parse_args(argv)
        if args.command is None:
            args = build_parser(["gui"]).parse_args(["gui"])
        if getattr(args, "colours", None) is not None:  # the scheme of this run: it wins over the remembered one
            from ..scene.palette import use

            use(args.colours)
        return COMMANDS[args.command](args)
    except UsageError as err:
        print(f"tumble: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except ParameterError as err:
        print(f"tumble: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except DivergenceError as err:
        print(f"tumble: {err}", file=sys.stderr)
        return EXIT_FAILED
    except BrokenPipeError:  # the reader went away (tumble presets | head -1): nothing to say
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except OSError as err:  # the system refused (a full disk): the run failed, not the input
        where = f" ({shorten(err.filename, 200)})" if getattr(err, "filename", None) else ""
        print(f"tumble: error: {shorten(err.strerror or err, 200)}{where}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:  # every file is written atomically: nothing partial is left
        print(INTERRUPTED_LINE, file=sys.stderr)
        if entry_point and "PyQt5.QtCore" in sys.modules:
            _end_now(EXIT_INTERRUPTED)
        return EXIT_INTERRUPTED
    except Exception as err:  # a bug of ours: still one line, the traceback on request
        if os.environ.get("TUMBLE_DEBUG"):
            raise
        text = str(err).strip().splitlines()[0] if str(err).strip() else ""
        print(f"tumble: internal error: {err.__class__.__name__}: {shorten(text, 200)} "
              "(set TUMBLE_DEBUG=1 for the traceback)", file=sys.stderr)
        return EXIT_FAILED
    finally:
        if entry_point:  # the process ends next: its memory torn down at normal priority
            threads_to_normal_priority()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
