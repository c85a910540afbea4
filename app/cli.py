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
import sys
from pathlib import Path

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
#: what a shell reports for a process killed by SIGPIPE (128 + 13)
EXIT_BROKEN_PIPE = 141



class UsageError(Exception):
    """Bad command-line input; the message is the whole line printed."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors on one line and exits 2."""

    def error(self, message):  # noqa: D401 - argparse API
        # "argument --dt: --dt must be ..." -> "--dt must be ..."
        head, sep, rest = message.partition(": ")
        if head.startswith("argument ") and sep and rest.startswith(head[len("argument "):].split("/")[0]):
            message = rest
        raise UsageError(message if rest.startswith("-") and sep else f"{self.prog}: {message}")


def _positive(name):
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number > 0, got {text!r}") from None
        if not math.isfinite(value) or value <= 0:
            raise argparse.ArgumentTypeError(f"{name} must be a finite number > 0, got {text}")
        return value
    return parse


def _nonnegative(name):
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number >= 0, got {text!r}") from None
        if not math.isfinite(value) or value < 0:
            raise argparse.ArgumentTypeError(f"{name} must be a finite number >= 0, got {text}")
        return value
    return parse


def _whole(name, lowest, highest):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a whole number, got {text!r}") from None
        if not lowest <= value <= highest:
            raise argparse.ArgumentTypeError(f"{name} must be between {lowest} and {highest}, got {text}")
        return value
    return parse


def _integrator(text):
    from .physics.integrators import INTEGRATORS

    if text not in INTEGRATORS:
        raise argparse.ArgumentTypeError(f"--integrator must be one of {', '.join(INTEGRATORS)}, got {text!r}")
    return text


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    p = _Parser(prog="tumble", description="Free rigid-body rotation: watch it, measure it, export it.")
    p.add_argument("--version", action="version", version=f"tumble {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    s = sub.add_parser("simulate", help="simulate a scenario headless and write its trajectory")
    s.add_argument("scenario", help="preset name or TOML file")
    s.add_argument("--integrator", type=_integrator)
    s.add_argument("--dt", type=_positive("--dt"), help="step (s); for dop853 the largest step")
    s.add_argument("--duration", type=_positive("--duration"), help="simulated time (s)")
    s.add_argument("--sample", type=_positive("--sample"), help="output interval (s), default dt")
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
    b.add_argument("--integrators", nargs="+", type=_integrator, metavar="NAME")
    b.add_argument("--dt", nargs="+", type=_positive("--dt"), metavar="S",
                   help="steps to test (default 0.01 0.005 0.0025 0.001)")
    b.add_argument("--json", action="store_true", help="print rows as a JSON list (or the GUI figures)")
    b.add_argument("--out", help="folder for bench.csv and the work-precision plot")
    b.add_argument("--gui", action="store_true", help="measure the real window instead")
    b.add_argument("--seconds", type=_positive("--seconds"), default=60.0, help="GUI bench length (s)")
    b.add_argument("--speed", type=_positive("--speed"), default=1.0, help="GUI bench playback speed")
    b.add_argument("--view", default="main", help="GUI bench: the view measured (default main)")

    st = sub.add_parser("stability", help="map how far omega wanders, for spin axes all over the sphere")
    st.add_argument("scenario", help="preset name or TOML file (its body and |omega| are used)")
    st.add_argument("--directions", type=_whole("--directions", 1, 1_000_000), default=2000, metavar="N",
                    help="initial spin axes, a Fibonacci lattice in body axes (default 2000)")
    st.add_argument("--duration", type=_positive("--duration"), default=20.0, metavar="S",
                    help="simulated time per direction (s, default 20)")
    st.add_argument("--out", required=True, help="FILE.npz (arrays) or FILE.png (latitude-longitude map)")

    e = sub.add_parser("export", help="render an animation (MP4, GIF, PNG frames) or its data, off screen")
    e.add_argument("scenario", help="preset name or TOML file")
    e.add_argument("--out", required=True,
                   help="FILE.mp4 (H.264), FILE.gif, FILE.png (FILE_0000.png, FILE_0001.png, ... beside it), "
                        "or data: FILE.csv / FILE.npz (trajectory, one row per frame), FILE.toml (the scenario)")
    e.add_argument("--fps", metavar="N", help="frames per second, 1 to 240 (default 30; 20 for a GIF)")
    e.add_argument("--duration", metavar="S", help="clip length in seconds of video (default 10, or less if "
                   "the scenario's run ends sooner)")
    e.add_argument("--start", metavar="S", default="0", help="simulated time of the first frame (s, default 0)")
    e.add_argument("--speed", metavar="X", default="1", help="simulated seconds per second of video: "
                   "0.25 slow motion, 4 time-lapse (default 1)")
    e.add_argument("--size", metavar="WxH", help="frame size in pixels, even (default 1280x720; 640x360 for a GIF)")
    e.add_argument("--with-plots", action="store_true", help="the plots of L, omega and the drifts beside the scene")
    e.add_argument("--overlay", metavar="LIST", default="time,flips,title",
                   help="text over the scene: any of time, flips, title, or none (default all)")
    e.add_argument("--title", metavar="TEXT", help="title text (default the scenario's name)")
    e.add_argument("--integrator", type=_integrator)
    e.add_argument("--dt", type=_positive("--dt"), help="step (s); for dop853 the largest step")
    e.add_argument("--view", choices=EXPORT_VIEWS, default="main",
                   help="what is drawn: main (the body), poinsot, or compare (two integrators side by side, "
                        "with --integrators/--dts; default main)")
    e.add_argument("--integrators", nargs=2, type=_integrator, metavar=("A", "B"),
                   help="--view compare: the two integrators (default semi-implicit-euler splitting)")
    e.add_argument("--dts", nargs=2, type=_positive("--dts"), metavar=("DT_A", "DT_B"),
                   help="--view compare: the two steps (s; default --dt, else 0.01 or the scenario's dt if coarser)")
    e.add_argument("--progress-json", action="store_true", help=argparse.SUPPRESS)

    g = sub.add_parser("gui", help="open the app window")
    g.add_argument("scenario", nargs="?")
    g.add_argument("--paused", action="store_true")
    g.add_argument("--view", default="main")
    g.add_argument("--screenshot", metavar="FILE", help="save a PNG of the window and exit")
    g.add_argument("--quit-after", type=_nonnegative("--quit-after"), metavar="S",
                   help="seconds of wall time before the screenshot/exit")
    return p


# ------------------------------------------------------------------ helpers


class ProgressBar:
    """A one-line progress bar on stderr, drawn only when stderr is a terminal."""

    def __init__(self, label: str, stream=None):
        self.stream = stream or sys.stderr
        self.label = label
        self.enabled = self.stream.isatty()

    def __call__(self, fraction: float, note: str = "") -> None:
        if not self.enabled:
            return
        width = 30
        full = int(round(width * min(max(fraction, 0.0), 1.0)))
        self.stream.write(f"\r{self.label} [{'#' * full}{'.' * (width - full)}] {100 * fraction:5.1f}% {note[:40]:<40}")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


def _check_out(path: str, suffixes: tuple[str, ...], flag: str = "--out") -> Path:
    out = Path(path)
    if out.suffix.lower() not in suffixes:
        raise UsageError(f"{flag} must end in {' or '.join(suffixes)}, got {path!r}")
    folder = out.parent if str(out.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(f"{flag} must be in an existing folder, got {path!r}")
    if not os.access(folder, os.W_OK):
        raise UsageError(f"{flag} must be in a writable folder, got {path!r}")
    if out.is_dir():
        raise UsageError(f"{flag} must be a file, not a folder, got {path!r}")
    return out


def _load_scenario(arg):
    from .scenario import load

    return load(arg)


# ------------------------------------------------------------------ commands


def cmd_simulate(args) -> int:
    import numpy as np

    from .physics import diagnostics
    from .physics.analysis import predicted_flip_period
    from .physics.integrators import MAX_SAMPLES, simulate
    from .scenario import SolverSpec

    from .simulation.table import POINT_GROUPS, check_outputs, parse_outputs, trajectory_table, write_table

    out = _check_out(args.out, (".csv", ".npz"))
    outputs = parse_outputs(args.outputs)
    point = None
    if args.point is not None:
        try:
            point = [float(x) for x in args.point.split(",")]
        except ValueError:
            point = None
        if point is None or len(point) != 3 or not all(math.isfinite(x) for x in point):
            raise UsageError(f"--point must be three finite numbers x,y,z (m), got {args.point!r}")
        if not any(g in outputs for g in POINT_GROUPS):
            raise UsageError(f"--point must come with a point output in --outputs (Position, Velocity, ...), got {args.point!r}")
    sc = _load_scenario(args.scenario)
    check_outputs(sc, outputs)
    solver = sc.solver
    changes = {k: getattr(args, k) for k in ("integrator", "dt", "duration") if getattr(args, k) is not None}
    if changes:
        if "dt" in changes and changes["dt"] > changes.get("duration", solver.duration):
            raise UsageError(f"--dt must be <= the duration ({changes.get('duration', solver.duration):g} s), got {changes['dt']:g}")
        sc = sc.replace(solver=SolverSpec(**{**solver.__dict__, **changes}))
    if args.sample is not None and args.sample > sc.solver.duration:
        raise UsageError(f"--sample must be <= the duration ({sc.solver.duration:g} s), got {args.sample:g}")
    sample = sc.solver.dt if args.sample is None else args.sample
    if sc.solver.duration / sample > MAX_SAMPLES:
        raise UsageError(f"--duration must leave at most {MAX_SAMPLES:,} samples at a sample interval of "
                         f"{sample:g} s (raise --sample), got {sc.solver.duration:g}")
    if args.sample is not None and sc.solver.integrator not in ("dop853", "exact"):
        # the rows are the integrator's own states: a sample between two steps, or a
        # step shrunk to fit the samples, would not be the run the summary describes
        ratio = args.sample / sc.solver.dt
        if round(ratio) < 1 or abs(ratio - round(ratio)) > 1e-9 * ratio:
            raise UsageError(f"--sample must be a whole multiple of dt ({sc.solver.dt:g} s) for "
                             f"{sc.solver.integrator} (only dop853 and exact sample anywhere), got {args.sample:g}")
    bar = ProgressBar("simulate")
    traj = simulate(sc.model, sc.initial_state, sc.solver.integrator, sc.solver.dt, sc.solver.duration,
                    sample=args.sample, progress=bar, **sc.solver.options)
    bar.close()
    write_table(out, trajectory_table(sc, traj, outputs, point))
    d = diagnostics.diagnose(sc.rigid_body, sc.gravity, traj)
    flips = diagnostics.flip_times(sc.rigid_body, traj.t, traj.w)
    period = predicted_flip_period(sc.rigid_body, sc.angular_velocity)
    print(f"{sc.name}: {sc.solver.integrator}, dt = {sc.solver.dt:g} s, {sc.solver.duration:g} s simulated, {len(traj)} samples")
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


def inspect_dict(sc) -> dict:
    """The body report of ``tumble inspect`` (JSON-ready)."""
    import numpy as np

    from .physics import diagnostics
    from .physics.analysis import predicted_flip_period

    body = sc.rigid_body
    moments, axes = body.principal()
    s0 = sc.initial_state
    L0 = diagnostics.angular_momentum(body, s0.q, s0.w, s0.s)
    E0 = float(diagnostics.kinetic_energy(body, s0.v, s0.w, s0.s)
               + diagnostics.potential_energy(body, sc.gravity, s0.c))
    return {
        "name": sc.name,
        "shape": body.shape,
        "mass": body.mass,
        "inertia": body.inertia.tolist(),
        "principal_moments": moments.tolist(),
        "principal_axes": axes.T.tolist(),
        "intermediate_axis": axes[:, 1].tolist(),
        "center_of_mass": np.asarray(body.center_of_mass).tolist(),
        "L0": L0.tolist(),
        "E0": E0,
        "flip_period": predicted_flip_period(body, sc.angular_velocity),
        **_gyrostat_keys(sc),
    }


def _gyrostat_keys(sc) -> dict:
    """``rotor_threshold`` (kg m^2/s) and ``final_energy`` (J, rotational) of a body with a
    rotor or a damper (null where not defined; see :mod:`app.physics.gyrostat`)."""
    from .physics import gyrostat

    body, s0 = sc.rigid_body, sc.initial_state
    torque_free = not sc.applied_loads.has_torque
    return {"rotor_threshold": gyrostat.rotor_threshold(body, s0.w),
            "final_energy": gyrostat.final_energy(body, s0.w, s0.s) if torque_free else None}


def cmd_inspect(args) -> int:
    sc = _load_scenario(args.scenario)
    info = inspect_dict(sc)
    if args.json:
        print(json.dumps(info))
        return EXIT_OK

    def vec(v):
        return "[" + ", ".join(f"{x: .6g}" for x in v) + "]"

    print(f"{sc.name} ({info['shape']})")
    print(f"  mass               {info['mass']:.6g} kg")
    print("  inertia (kg m^2)   " + "\n                     ".join(vec(r) for r in info["inertia"]))
    print(f"  principal moments  {vec(info['principal_moments'])} kg m^2 (ascending)")
    for k, (m, a) in enumerate(zip(info["principal_moments"], info["principal_axes"])):
        tag = "  <- intermediate (unstable)" if k == 1 else ""
        print(f"  axis {k + 1}             {vec(a)} (I = {m:.6g}){tag}")
    print(f"  centre of mass     {vec(info['center_of_mass'])} m")
    print(f"  L0 (world)         {vec(info['L0'])} kg m^2/s")
    print(f"  E0                 {info['E0']:.9g} J")
    fp = info["flip_period"]
    print(f"  flip period        {'none (no flip)' if fp is None else f'{fp:.9g} s'}")
    if info["rotor_threshold"] is not None:
        print(f"  rotor threshold    {info['rotor_threshold']:.9g} kg m^2/s (h along the spin above it: stable)")
    if info["final_energy"] is not None:
        print(f"  final energy       {info['final_energy']:.9g} J (rotational, once the damper has settled)")
    return EXIT_OK


DEFAULT_BENCH = ["boxes-simple", "boxes-complex"]
DEFAULT_BENCH_DT = [0.01, 0.005, 0.0025, 0.001]


def cmd_bench(args) -> int:
    if args.gui:
        from .gui.bench import run_gui_bench

        fig = run_gui_bench(seconds=args.seconds, speed=args.speed, view=args.view)
        if args.json:
            print(json.dumps(fig))
        else:
            print(f"fps {fig['fps']:.1f}, real-time factor {fig['realtime_factor']:.3f}, "
                  f"first frame {fig['startup_s']:.2f} s, memory growth {fig['memory_growth_mb']:.1f} MB")
        return EXIT_OK
    from .simulation.benchmark import markdown_table, run_bench

    out_dir = None
    if args.out:
        out_dir = Path(args.out)
        if out_dir.exists() and not out_dir.is_dir():
            raise UsageError(f"--out must be a folder, got {args.out!r}")
        parent = out_dir if out_dir.exists() else (out_dir.parent if str(out_dir.parent) else Path("."))
        if not parent.is_dir() or not os.access(parent, os.W_OK):
            raise UsageError(f"--out must be a writable folder, got {args.out!r}")
    scenarios = [_load_scenario(s) for s in (args.scenarios or DEFAULT_BENCH)]
    bar = ProgressBar("bench")
    rows = run_bench(scenarios, args.integrators, args.dt or DEFAULT_BENCH_DT, progress=bar)
    bar.close()
    if args.json:
        # a row that does not apply (exact with torques) or diverged has no figures: null
        print(json.dumps([{k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.items()}
                          for r in rows], allow_nan=False))
    else:
        print(markdown_table(rows))
    if out_dir is not None:
        from .simulation.bench_output import write_bench_outputs

        out_dir.mkdir(parents=True, exist_ok=True)
        paths = write_bench_outputs(rows, out_dir)
        print("wrote " + ", ".join(str(p) for p in paths), file=sys.stderr)
    return EXIT_OK


def cmd_stability(args) -> int:
    import numpy as np

    from .simulation.stability import stability_map, write_npz, write_png

    out = _check_out(args.out, (".npz", ".png"))
    sc = _load_scenario(args.scenario)
    omega_norm = float(np.linalg.norm(sc.angular_velocity))
    if omega_norm == 0:
        raise UsageError(f"initial.angular_velocity of {sc.name!r} must be non-zero for a stability map "
                         "(its magnitude sets the spin rate), got [0, 0, 0]")
    bar = ProgressBar("stability")
    smap = stability_map(sc.rigid_body, omega_norm, args.directions, args.duration, progress=bar)
    bar.close()
    if out.suffix.lower() == ".png":
        write_png(smap, out, title=f"{sc.name}: stability map, |ω| = {omega_norm:.4g} rad/s, "
                                   f"{args.duration:g} s, {args.directions} directions")
    else:
        write_npz(smap, out)
    axis = ", ".join(f"{label.split(':')[0]} {w:.3g}" for label, w in zip(smap.axis_labels, smap.axis_wander()))
    print(f"{sc.name}: {args.directions} directions at |omega| = {omega_norm:.6g} rad/s over {args.duration:g} s "
          f"({smap.integrator}, dt = {smap.dt:.3g} s); wander (rad) near the axes: {axis}")
    print(f"wrote {out}")
    return EXIT_OK


EXPORT_OVERLAYS = ("time", "flips", "title")
#: what ``tumble export --view`` can draw
EXPORT_VIEWS = ("main", "poinsot", "compare")


def cmd_export(args) -> int:
    import time

    t_begin = time.perf_counter()
    from .export import (
        DATA_FORMATS,
        EncodeError,
        ExportCancelled,
        ExportSettings,
        Overlay,
        export_animation,
        export_data,
        parse_size,
        plan_export,
    )
    from .export.protocol import JsonProgress, StdinCancel, sigterm_as_interrupt
    from .physics.errors import ParameterError
    from .scenario import SolverSpec

    shown = {item.strip() for item in args.overlay.split(",")}
    if shown == {"none"}:
        shown = set()
    if not shown <= set(EXPORT_OVERLAYS):
        raise UsageError(f"--overlay must be a comma list of {', '.join(EXPORT_OVERLAYS)}, or none, got {args.overlay!r}")
    sc = _load_scenario(args.scenario)
    changes = {k: getattr(args, k) for k in ("integrator", "dt") if getattr(args, k) is not None}
    if changes:
        if "dt" in changes and changes["dt"] > sc.solver.duration:
            raise UsageError(f"--dt must be <= the scenario's duration ({sc.solver.duration:g} s), got {changes['dt']:g}")
        sc = sc.replace(solver=SolverSpec(**{**sc.solver.__dict__, **changes}))
    title = None if "title" not in shown else (args.title if args.title is not None else "")
    try:
        settings = ExportSettings(
            out=args.out, fps=args.fps, duration=args.duration, start=args.start, speed=args.speed,
            size=None if args.size is None else parse_size(args.size), with_plots=args.with_plots,
            overlay=Overlay(time="time" in shown, flips="flips" in shown, title=title))
        plan = plan_export(sc, settings)
    except ParameterError as err:
        raise UsageError(f"--{err}") from None

    animate = export_animation
    if args.view != "compare" and (args.integrators or args.dts):
        raise UsageError(f"--{'integrators' if args.integrators else 'dts'} must come with --view compare")
    if args.view == "compare":
        if args.integrator is not None:
            raise UsageError(f"--integrator must not be used with --view compare (use --integrators A B), "
                             f"got {args.integrator!r}")
        if plan.format in DATA_FORMATS.values():
            raise UsageError(f"--out must end in .mp4, .gif or .png with --view compare, got {args.out!r}")
        from .export.compare import export_compare
        from .simulation.compare import make_pair

        try:
            steps = args.dts or ((args.dt, args.dt) if args.dt is not None else (None, None))
            pair = make_pair(sc, args.integrators or (None, None), steps)
        except ParameterError as err:
            raise UsageError(f"--{'dts' if err.field.endswith('dt') else 'integrators'}: {err}") from None

        def animate(_scenario, plan, progress=None, cancel=None):
            return export_compare(pair, plan, progress=progress, cancel=cancel)
    elif args.view == "poinsot":
        try:  # the Poinsot view's export (same call as export_animation)
            from .export.poinsot import export_poinsot as animate
        except ImportError:
            raise UsageError("--view poinsot is not available in this build") from None
        if plan.format in DATA_FORMATS.values():
            raise UsageError(f"--out must end in .mp4, .gif or .png with --view poinsot, got {args.out!r}")

    if plan.format in DATA_FORMATS.values():
        path, rows = export_data(sc, settings)
        print(f"wrote {path}" + (f" ({rows} rows, one per frame at {plan.fps} fps)" if rows else ""))
        return EXIT_OK

    json_progress = JsonProgress() if args.progress_json else None
    bar = ProgressBar("export")
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
        with sigterm_as_interrupt():
            result = animate(sc, plan, progress=progress, cancel=StdinCancel() if args.progress_json else None)
    except ExportCancelled:
        bar.close()
        print("tumble: export cancelled, nothing written", file=sys.stderr)
        return EXIT_FAILED
    except EncodeError as err:
        bar.close()
        print(f"tumble: error: {err} (nothing written)", file=sys.stderr)
        return EXIT_FAILED
    bar.close()
    wall = time.perf_counter() - t_begin
    (w, h), paths = plan.size, result.paths
    where = str(paths[0]) if len(paths) == 1 else f"{paths[0]} ... {paths[-1].name}"
    print(f"wrote {where}: {result.frames} frames, {w}x{h}, {plan.fps} fps, {plan.duration:g} s "
          f"({result.bytes / 1e6:.2f} MB)")
    from .export.timing import process_age

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


def cmd_gui(args) -> int:
    from .gui.launch import run_gui

    if args.quit_after is not None and args.screenshot is None:
        pass  # --quit-after alone: run that long, then exit
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


def main(argv=None) -> int:
    """Entry point of ``tumble`` and ``python -m app``; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    from .physics.errors import DivergenceError, ParameterError

    try:
        if not argv:
            argv = ["gui"]
        args = build_parser().parse_args(argv)
        if args.command is None:
            args = build_parser().parse_args(["gui"])
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
    except OSError as err:
        where = f" ({err.filename})" if getattr(err, "filename", None) else ""
        print(f"tumble: error: {err.strerror or err}{where}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("tumble: interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # a bug of ours: still one line, the traceback on request
        if os.environ.get("TUMBLE_DEBUG"):
            raise
        print(f"tumble: internal error: {err.__class__.__name__}: {err} (set TUMBLE_DEBUG=1 for the traceback)",
              file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
