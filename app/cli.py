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

from .cli_export import EXPORT_HELP, UsageError, add_export_parser, cmd_export
from .cli_support import (
    VIEW_NAMES,
    ProgressBar,
    check_out,
    check_out_folder,
    nonnegative,
    number_type,
    parse_point,
    positive,
    whole,
    with_solver_flags,
)

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
#: what a shell reports for a process killed by SIGPIPE (128 + 13)
EXIT_BROKEN_PIPE = 141
#: what a shell reports for a process stopped by Ctrl+C (128 + SIGINT)
EXIT_INTERRUPTED = 130


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors on one line (long values cut) and exits 2."""

    def error(self, message):  # noqa: D401 - argparse API
        from .physics.errors import MAX_VALUE_CHARS, shorten

        # "argument --dt: --dt must be ..." -> "--dt must be ..."
        head, sep, rest = message.partition(": ")
        if head.startswith("argument ") and sep and rest.startswith(head[len("argument "):].split("/")[0]):
            message = rest
        # argparse quotes what it could not take ("invalid choice: 'xxx...'"): cut it
        message = re.sub(r"'[^']{%d,}'" % (MAX_VALUE_CHARS + 1), lambda m: shorten(m.group(0)), message)
        raise UsageError(shorten(message if rest.startswith("-") and sep else f"{self.prog}: {message}", 1000))


def _integrator(text):
    from .physics.errors import ParameterError
    from .physics.integrators import integrator_info

    try:
        return integrator_info(text).name
    except ParameterError as err:
        raise argparse.ArgumentTypeError(str(ParameterError("--integrator", text, err.rule))) from None


def _integrator_help(what: str) -> str:
    from .physics.integrators import INTEGRATORS

    return f"{what}: one of {', '.join(INTEGRATORS)}"


def build_parser(argv=None) -> argparse.ArgumentParser:
    """The parser of every subcommand. Given the command line ``argv``, ``export``'s options
    (read from the view registry, which imports pyvista) are built only if that is the command
    run: the other commands start without drawing code."""
    from . import __version__
    from .simulation.stability import DEFAULT_DIRECTIONS, DEFAULT_DURATION, MAX_DIRECTIONS

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
    from .gui.bench import MAX_REFERENCE_SECONDS, REFERENCE_SECONDS  # a light module: constants, no Qt

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
    g.add_argument("scenario", nargs="?")
    g.add_argument("--paused", action="store_true")
    g.add_argument("--view", default="main", help="the window opened: " + ", ".join(VIEW_NAMES) + " (default main)")
    g.add_argument("--screenshot", metavar="FILE", help="save a PNG of the window and exit")
    g.add_argument("--quit-after", type=nonnegative("--quit-after"), metavar="S",
                   help="seconds of wall time before the screenshot/exit")
    add_fit_parsers(sub)
    return p


def _command(argv) -> str | None:
    """The subcommand named on the command line ``argv`` (its first word that is not an option)."""
    return next((a for a in argv if not str(a).startswith("-")), None)


def _load_scenario(arg):
    from .scenario import load

    return load(arg)


# ------------------------------------------------------------------ commands


def cmd_simulate(args) -> int:
    import numpy as np

    from .physics import diagnostics
    from .physics.analysis import predicted_flip_period
    from .physics.errors import ParameterError
    from .physics.integrators import REGISTRY, check_run_size, integrator_info, simulate
    from .simulation.table import POINT_GROUPS, check_finite, check_outputs, parse_outputs, trajectory_table, write_table

    out = check_out(args.out, (".csv", ".npz"))
    outputs = parse_outputs(args.outputs)
    point = None
    if args.point is not None:
        point = parse_point(args.point)
        if not any(g in outputs for g in POINT_GROUPS):
            raise ParameterError("--point", args.point,
                                 "come with a point output in --outputs (Position, Velocity, ...)")
    sc = with_solver_flags(_load_scenario(args.scenario), args)
    check_outputs(sc, outputs)
    solver = sc.solver
    if args.sample is not None and args.sample > solver.duration:
        raise ParameterError("--sample", args.sample, f"be <= the duration ({solver.duration:g} s)")
    if args.sample is not None and integrator_info(solver.integrator).fixed_step:
        # the rows are the integrator's own states: a sample between two steps, or a
        # step shrunk to fit the samples, would not be the run the summary describes
        ratio = args.sample / solver.dt
        if round(ratio) < 1 or abs(ratio - round(ratio)) > 1e-9 * ratio:
            raise ParameterError("--sample", args.sample, f"be a whole multiple of dt ({solver.dt:g} s) for "
                                 f"{solver.integrator} (only {' and '.join(i.name for i in REGISTRY if not i.fixed_step)} "
                                 "sample anywhere)")
    given = {k for k in ("dt", "duration") if getattr(args, k) is not None}
    check_run_size(solver.integrator, solver.dt, solver.duration, args.sample,
                   blame="duration" if given == {"duration"} else "step",
                   names={"sample": "--sample", **{k: f"--{k}" if k in given else f"solver.{k}"
                                                  for k in ("dt", "duration")}})
    with ProgressBar("simulate") as bar:
        traj = simulate(sc.model, sc.initial_state, solver.integrator, solver.dt, solver.duration,
                        sample=args.sample, progress=bar, **solver.options)
    table = trajectory_table(sc, traj, outputs, point)
    check_finite(table)
    write_table(out, table)
    d = diagnostics.diagnose(sc.rigid_body, sc.gravity, traj)
    flips = diagnostics.flip_times(sc.rigid_body, traj.t, traj.w)
    period = predicted_flip_period(sc.rigid_body, sc.angular_velocity)
    print(f"{sc.name}: {solver.integrator}, dt = {solver.dt:g} s, {solver.duration:g} s simulated, {len(traj)} samples")
    print("| quantity | value |")
    print("|---|---|")
    print(f"| flips (intermediate-axis reversals) | {len(flips)} |")
    print(f"| predicted flip period (s) | {'-' if period is None else f'{period:.6f}'} |")
    print(f"| observed mean flip period (s) | {np.mean(np.diff(flips)):.6f} |" if len(flips) > 1 else "| observed mean flip period (s) | - |")
    print(f"| max relative energy drift | {np.max(np.abs(d.E_drift)):.3e} |")
    print(f"| max relative world-L drift | {np.max(d.L_drift):.3e} |")
    print(f"| max relative |L| drift | {np.max(np.abs(d.L_norm_drift)):.3e} |")
    if np.any(np.asarray(sc.rigid_body.center_of_mass) != 0):
        print("columns c*, v* describe the centre of mass; the body's reference point is at "
              "-center_of_mass from it (use --outputs Position --point 0,0,0 for the reference point)")
    print(f"wrote {out}")
    return EXIT_OK


def cmd_presets(args) -> int:
    from .scenario import presets

    rows = presets()
    if not rows:
        from .scenario.files import PRESETS_DIR

        print(f"tumble: no presets found in {PRESETS_DIR} (a broken install: reinstall tumble)", file=sys.stderr)
        return EXIT_FAILED
    width = max(len(n) for n, _ in rows)
    for name, desc in rows:
        print(f"{name:<{width}}  {desc}")
    return EXIT_OK


def cmd_inspect(args) -> int:
    from .scenario.inspection import inspect_dict, inspect_text

    sc = _load_scenario(args.scenario)
    info = inspect_dict(sc)
    print(json.dumps(info) if args.json else inspect_text(sc.name, info))
    return EXIT_OK


DEFAULT_BENCH = ["boxes-simple", "boxes-complex"]
DEFAULT_BENCH_DT = [0.01, 0.005, 0.0025, 0.001]


def cmd_bench(args) -> int:
    if args.gui:
        from .gui.bench import figures_text, run_gui_bench

        if no_display():
            return EXIT_USAGE
        fig = run_gui_bench(seconds=args.seconds, speed=args.speed, view=args.view,
                            reference_seconds=args.reference_seconds)
        print(json.dumps(fig) if args.json else figures_text(fig))
        return EXIT_OK
    from .simulation.benchmark import check_bench_size, markdown_table, run_bench, text_table

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
        from .simulation.bench_output import write_bench_outputs

        out_dir.mkdir(parents=True, exist_ok=True)
        paths = write_bench_outputs(rows, out_dir)
        print("wrote " + ", ".join(str(p) for p in paths), file=sys.stderr)
    return EXIT_OK


def cmd_stability(args) -> int:
    import numpy as np

    from .physics.errors import ParameterError
    from .simulation.stability import DEFAULT_DIRECTIONS, DEFAULT_DURATION, stability_map, write_npz, write_png

    out = check_out(args.out, (".npz", ".png"))
    sc = _load_scenario(args.scenario)
    omega_norm = float(np.linalg.norm(sc.angular_velocity))
    if omega_norm == 0:
        raise ParameterError(f"initial.angular_velocity of {sc.name!r}", [0, 0, 0],
                             "be non-zero for a stability map (its magnitude sets the spin rate)")
    directions = DEFAULT_DIRECTIONS if args.directions is None else args.directions
    duration = DEFAULT_DURATION if args.duration is None else args.duration
    blame = "directions" if args.directions is not None and args.duration is None else "duration"
    try:
        with ProgressBar("stability") as bar:
            smap = stability_map(sc.rigid_body, omega_norm, directions, duration, progress=bar, blame=blame)
    except ParameterError as err:
        if err.field in ("directions", "duration"):  # the flags' own names
            raise ParameterError(f"--{err.field}", err.value, err.rule) from None
        raise
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
    if not sys.platform.startswith("linux") or any(os.environ.get(v) for v in DISPLAY_VARIABLES):
        return False
    print("tumble: error: no display found (DISPLAY and WAYLAND_DISPLAY are not set): run the window on a "
          "virtual one, xvfb-run -a tumble, or work headless with tumble export, simulate or inspect "
          "(tumble --help)", file=sys.stderr)
    return True


#: any of these set means a window can open (QT_QPA_PLATFORM=offscreen draws without a display)
DISPLAY_VARIABLES = ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")


def cmd_gui(args) -> int:
    from .gui.launch import run_gui

    if no_display():
        return EXIT_USAGE
    return run_gui(args.scenario, paused=args.paused, view=args.view, screenshot=args.screenshot,
                   quit_after=args.quit_after)


COMMANDS = {
    "simulate": cmd_simulate,
    "presets": cmd_presets,
    "inspect": cmd_inspect,
    "bench": cmd_bench,
    "stability": cmd_stability,
    "export": cmd_export,
    "gui": cmd_gui,
}


# ------------------------------------------------------------------ fit: gyroscope recordings of throws


def add_fit_parsers(sub) -> None:
    """``tumble fit`` and ``tumble fit-bench`` (the logic lives in :mod:`app.throws`)."""
    f = sub.add_parser("fit", help="fit inertia ratios and air drag to gyroscope recordings of throws")
    f.add_argument("recordings", nargs="+", metavar="RECORDING",
                   help="a phyphox folder or .zip, or a CSV file (time and three rates); several are fitted together")
    f.add_argument("--flights", default="auto", metavar="auto|START:END,...",
                   help="auto (default) finds the free flights; START:END windows (s, recording time) "
                        "restrict the search, each still trimmed to its free part")
    f.add_argument("--drag", default="quadratic", metavar="none|linear|quadratic",
                   help="the drag torque per sensor axis: none, linear -c w, quadratic -c |w| w (default)")
    f.add_argument("--axes", default="sensor", metavar="sensor|fit",
                   help="sensor: the principal axes are the sensor's (default); fit: a small rotation between them")
    f.add_argument("--inertia-scale", type=positive("--inertia-scale"), default=1.0, metavar="KGM2",
                   help="the largest principal moment (kg m^2, default 1): scales the inertia and drag reported")
    f.add_argument("--json", action="store_true", help="print one JSON object")
    f.add_argument("--out", metavar="FIT.toml", help="a scenario that replays the first flight")
    f.add_argument("--plot", metavar="FIT.png", help="measured rates over the fitted curves, per flight")
    b = sub.add_parser("fit-bench", help="the throw fit's figures on synthetic recordings: recovery, speed, prediction")
    b.add_argument("--seed", type=whole("--seed", 0, 2**31 - 1), default=2026, help="random seed (default 2026)")
    b.add_argument("--json", action="store_true", help="print the figures as one JSON object")


def cmd_fit(args) -> int:
    from .throws.fit import fit_paths
    from .throws.report import flight_scenario, summary, write_plot

    out = check_out(args.out, (".toml",)) if args.out else None
    plot = check_out(args.plot, (".png",), "--plot") if args.plot else None
    bar = ProgressBar("fit")
    _, result = fit_paths(args.recordings, args.flights, args.drag, args.axes,
                          progress=lambda fraction, note: bar(fraction, note))
    bar.close()
    scenario = flight_scenario(result, 0, args.inertia_scale) if out else None  # validated before any write
    if args.json:
        print(json.dumps(result.to_json(args.inertia_scale), allow_nan=False))
    else:
        print(summary(result, args.inertia_scale))
    said = sys.stderr if args.json else sys.stdout
    if out:
        from .scenario import save

        save(scenario, out)
        print(f"wrote {out}", file=said)
    if plot:
        write_plot(result, plot)
        print(f"wrote {plot}", file=said)
    return EXIT_OK


def cmd_fit_bench(args) -> int:
    from .throws.bench import run_fit_bench

    figures = run_fit_bench(seed=args.seed, say=lambda line: print(line, flush=True) if not args.json else None)
    if args.json:
        print(json.dumps(figures, allow_nan=False))
    return EXIT_OK


COMMANDS.update({"fit": cmd_fit, "fit-bench": cmd_fit_bench})


def main(argv=None) -> int:
    """Entry point of ``tumble`` and ``python -m tumble``; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    from .physics.errors import DivergenceError, ParameterError, shorten

    try:
        if not argv:
            argv = ["gui"]
        args = build_parser(argv).parse_args(argv)
        if args.command is None:
            args = build_parser(["gui"]).parse_args(["gui"])
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
        print("tumble: interrupted, nothing written", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as err:  # a bug of ours: still one line, the traceback on request
        if os.environ.get("TUMBLE_DEBUG"):
            raise
        text = str(err).strip().splitlines()[0] if str(err).strip() else ""
        print(f"tumble: internal error: {err.__class__.__name__}: {shorten(text, 200)} "
              "(set TUMBLE_DEBUG=1 for the traceback)", file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
