"""Command line of the engine audit: ``tumble audit`` (logic in app.engines, over app.api.audit).

Exit status as everywhere: 0 success, 2 bad input (one line: an unknown engine lists the known
ones, a missing one names ``pip install "tumble[engines]"``, a trajectory file in another
convention names the flag that fits), 1 a run that failed on its own.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..api.arguments import ProgressBar, check_out, check_out_folder, parse_number, positive

EXIT_OK = 0


def _steps(text):
    """``--dt S[,S...]``: each a finite number > 0."""
    from ..physics.errors import ParameterError

    rule = "be finite numbers > 0 separated by commas (s)"
    try:
        values = [parse_number(part, "--dt", rule) for part in str(text).split(",")]
        if not values or any(v <= 0 for v in values):
            raise ParameterError("--dt", text, rule)
    except ParameterError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return values


def add_audit_parser(sub) -> None:
    """``tumble audit``; its handler is :func:`cmd_audit`."""
    a = sub.add_parser("audit", help="run a scenario's body in physics engines (MuJoCo, PyBullet, DART, Drake) "
                                     "and score each against the exact solution; or score another engine's file")
    a.add_argument("scenario", help="preset name or TOML file (no applied loads, damper or rotor)")
    a.add_argument("--engines", default="all", metavar="LIST",
                   help="ENGINE[:SETTING],...: mujoco (= mujoco:euler), mujoco:rk4, mujoco:implicit, "
                        "mujoco:implicitfast, pybullet, dart, drake (= drake:discrete), drake:continuous, "
                        "tumble:NAME; all (default): every installed engine's default and tumble:rk4")
    a.add_argument("--dt", type=_steps, metavar="S[,S...]",
                   help="engine steps (s; default the scenario's); several give a work-precision figure")
    a.add_argument("--duration", type=positive("--duration"), metavar="S", help="simulated time (s, default the "
                                                                                "scenario's)")
    a.add_argument("--sample", type=positive("--sample"), metavar="S",
                   help="interval of the samples scored (s, default 0.01; a whole multiple of --dt)")
    a.add_argument("--budget", type=positive("--budget"), metavar="S",
                   help="wall clock an adaptive setting's run (drake:continuous, tumble:dop853) may take before it "
                        "stops, not scored (s; default 20, or 0.1 ms a step of dt where more)")
    a.add_argument("--json", action="store_true", help="print one JSON object")
    a.add_argument("--out", metavar="DIR", help="write one CSV per setting, audit.json, audit.csv and audit.png")
    a.add_argument("--plot", metavar="FILE.png", help="orientation error, intermediate-axis omega and separatrix "
                                                      "ratio of each setting")
    a.add_argument("--trajectory", metavar="FILE", help="score another engine's trajectory, a CSV or NPZ of "
                                                        "t,qw,qx,qy,qz with optional wx,wy,wz and cx,cy,cz")
    a.add_argument("--label", metavar="NAME", help="the trajectory's name in the outputs (default trajectory)")
    a.add_argument("--quaternion", choices=("wxyz", "xyzw"), metavar="wxyz|xyzw",
                   help="the order of the trajectory's four quaternion columns as the file holds them (default wxyz)")
    a.add_argument("--omega", choices=("body", "world"), metavar="body|world",
                   help="the frame of the trajectory's omega (default body)")


def cmd_audit(args) -> int:
    from ..api import auditing as api_audit
    from ..engines.report import check_outputs, output_names, table_text, write_outputs, write_plot
    from ..physics.errors import ParameterError

    out = check_out_folder(args.out) if args.out else None
    plot = check_out(args.plot, (".png",), "--plot") if args.plot else None
    if args.trajectory is None:
        for flag in ("--label", "--quaternion", "--omega"):
            if getattr(args, flag[2:]) is not None:
                raise ParameterError(flag, getattr(args, flag[2:]), "be given with --trajectory only (it describes "
                                     "a trajectory file)")
    sc = api_audit.load(args.scenario)
    if args.trajectory is not None:
        for flag, given in (("--engines", args.engines != "all"), ("--dt", args.dt is not None),
                            ("--duration", args.duration is not None), ("--sample", args.sample is not None),
                            ("--budget", args.budget is not None)):
            if given:
                raise ParameterError(flag, getattr(args, flag[2:]), "not be given with --trajectory (a file is "
                                     "scored at its own times)")
        label_text = api_audit.check_label("trajectory" if args.label is None else args.label)
        if out is not None:  # every path checked before the file is read
            check_outputs(out, output_names([label_text]))
        result = api_audit.run_trajectory(sc, args.trajectory, label_text, args.quaternion or "wxyz",
                                          args.omega or "body")
    else:
        if out is not None:  # every path checked before the first run
            check_outputs(out, output_names(api_audit.labels(sc, args.engines, args.dt, args.duration, args.sample)))
        with ProgressBar("audit") as bar:
            result = api_audit.run(sc, args.engines, args.dt, args.duration, args.sample, progress=bar,
                                   reference_aside=True, budget=args.budget)
    print(json.dumps(result.summary, allow_nan=False) if args.json else table_text(result.summary))
    written = []
    if out is not None:
        written += write_outputs(sc, result, out)
    if plot is not None:
        written.append(write_plot(result, plot))
    if written:
        print("wrote " + ", ".join(str(p) for p in written), file=sys.stderr)
    return EXIT_OK
