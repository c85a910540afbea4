"""Command line of the throw fit: ``tumble fit``, ``tumble predict`` and ``tumble fit-bench`` (logic in app.throws).

Exit status as everywhere: 0 success, 2 bad input (one line), 1 a fit whose ratios break the
triangle inequality (one line, nothing written) unless ``--allow-unphysical``.
"""

from __future__ import annotations

import contextlib
import json
import sys

from ..api.arguments import ProgressBar, check_out, check_out_folder, positive, whole

EXIT_OK, EXIT_FAILED = 0, 1


#: what a recording argument may be
RECORDING_HELP = "a phyphox folder or .zip, a CSV file (time and three rates), or a sample's name (tumble samples)"


def add_throw_parsers(sub) -> None:
    """``tumble samples``, ``tumble fit``, ``tumble predict`` and ``tumble fit-bench``."""
    sm = sub.add_parser("samples", help="list the sample recordings shipped with Tumble (name, what, true ratios): "
                                        "each name works wherever a recording does")
    sm.add_argument("--json", action="store_true", help="print one JSON list")
    f = sub.add_parser("fit", help="fit inertia ratios and air drag to gyroscope recordings of throws")
    f.add_argument("recordings", nargs="+", metavar="RECORDING",
                   help=RECORDING_HELP + "; several are fitted together")
    f.add_argument("--flights", default="auto", metavar="auto|START:END,...",
                   help="auto (default) finds the free flights; START:END windows (s, recording time) "
                        "restrict the search, each still trimmed to its free part")
    f.add_argument("--drag", default="quadratic", metavar="none|linear|quadratic",
                   help="the drag torque per sensor axis: none, linear -c w, quadratic -c |w| w (default)")
    f.add_argument("--axes", default="sensor", metavar="sensor|fit",
                   help="sensor: the principal axes are the sensor's (default); fit: a small rotation between them")
    f.add_argument("--inertia-scale", type=positive("--inertia-scale"), default=1.0, metavar="KGM2",
                   help="the largest principal moment (kg m^2, default 1): scales the inertia and drag reported")
    f.add_argument("--exclude", metavar="T,...", type=_times("--exclude"), default=(),
                   help="leave out the flights holding these times (s, recording time, in every recording given)")
    f.add_argument("--include", metavar="T,...", type=_times("--include"), default=(),
                   help="put back flights the fit excluded as far off the others (the flights holding these times)")
    f.add_argument("--allow-unphysical", action="store_true",
                   help="keep ratios that break the triangle inequality (refused by default: exit 1, nothing written)")
    f.add_argument("--json", action="store_true", help="print one JSON object")
    f.add_argument("--out", metavar="FIT.toml", help="a scenario that replays the first fitted flight")
    f.add_argument("--plot", metavar="FIT.png", help="measured rates over the fitted curves, per flight")

    p = sub.add_parser("predict", help="predict each throw's first flip from its first samples with a fitted body")
    p.add_argument("scenario", metavar="FIT.toml", help="the body and drag (a FIT.toml from tumble fit)")
    p.add_argument("recordings", nargs="+", metavar="RECORDING",
                   help="recordings holding the throws to predict: " + RECORDING_HELP)
    p.add_argument("--flights", default="auto", metavar="auto|START:END,...",
                   help="auto (default) finds the flights as tumble fit does; START:END windows (s, recording "
                        "time) are each one flight exactly as given, in every recording (any length)")
    p.add_argument("--lead", type=positive("--lead"), default=None, metavar="S",
                   help="omega0 is fitted on each flight's first S seconds (default 0.1)")
    p.add_argument("--horizon", type=positive("--horizon"), default=None, metavar="S",
                   help="each flight is simulated S seconds from its start (default 2)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--plot", metavar="FILE.png", help="measured rates over the predicted curves, per flight")

    b = sub.add_parser("fit-bench", help="the throw fit's figures on synthetic recordings: recovery, speed, prediction")
    b.add_argument("--seed", type=whole("--seed", 0, 2**31 - 1), default=2026, help="random seed (default 2026)")
    b.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    b.add_argument("--out", metavar="DIR", help="keep the synthetic sessions there (phyphox folders, each with "
                                                "truth.json: the body and the throws it was made with) and the "
                                                "figures (figures.json, what --json prints)")
    b.add_argument("--speed", action="store_true",
                   help="only the fit's speed: one clean flight, and s per 100 flights of a racket-like session "
                        "(python -m tumble.throws.benches.speed_bench)")


def _times(flag):
    """An argparse type: comma-separated times (s)."""
    import argparse

    from ..api.arguments import parse_number
    from ..physics.errors import ParameterError

    def parse(text):
        try:
            return tuple(parse_number(part.strip(), flag, "be times in s separated by commas")
                         for part in text.split(","))
        except ParameterError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
    return parse


@contextlib.contextmanager
def _outputs(paths):
    """Temporary paths for every output; all are renamed into place only when the block
    succeeds (a failed plot leaves the user's old FIT.toml as it was)."""
    from ..atomic import atomic_path

    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(atomic_path(p)) if p is not None else None for p in paths]


def cmd_samples(args) -> int:
    from ..api.functions import samples

    rows = samples()
    if args.json:
        print(json.dumps(rows, allow_nan=False))
        return EXIT_OK
    if not rows:
        print("tumble: no sample recordings found (a broken install: reinstall tumble)", file=sys.stderr)
        return EXIT_FAILED
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        ratios = ", ".join(f"{x:.4f}" for x in r["ratios"])
        print(f"{r['name']:<{width}}  {r['what']}; true ratios {ratios}")
    return EXIT_OK


def cmd_fit(args) -> int:
    from ..api.functions import fit
    from ..throws.fitting.fit import flat_note, triangle_violation
    from ..throws.fitting.report import draw_plot, scenario_text

    out = check_out(args.out, (".toml",)) if args.out else None
    plot = check_out(args.plot, (".png",), "--plot") if args.plot else None
    with ProgressBar("fit") as bar:
        fitted = fit(args.recordings, flights=args.flights, drag=args.drag, axes=args.axes,
                     inertia_scale=args.inertia_scale, exclude=args.exclude, include=args.include,
                     allow_unphysical=args.allow_unphysical, progress=bar)
    result = fitted.result
    for note in fitted.notes:
        print(f"tumble: note: {note}", file=sys.stderr)
    broken = triangle_violation(result.moments, result.moments_std)
    if broken and not args.allow_unphysical:
        print(f"tumble: {broken}", file=sys.stderr)
        return EXIT_FAILED
    note = flat_note(result.moments)
    if note:
        print(f"tumble: note: {note}", file=sys.stderr)
    # validated before anything is printed or written
    scenario = fitted.scenario() if out else None
    if args.json:
        print(json.dumps(fitted.to_dict(), allow_nan=False))
    else:
        print(fitted.summary())
    with _outputs([out, plot]) as (out_tmp, plot_tmp):
        if out:
            out_tmp.write_text(scenario_text(scenario, out.parent), encoding="utf-8")
        if plot:
            draw_plot(result, plot_tmp)
    said = sys.stderr if args.json else sys.stdout
    for path in (out, plot):
        if path:
            print(f"wrote {path}", file=said)
    return EXIT_OK


def cmd_predict(args) -> int:
    import time

    from ..api.functions import predict
    from ..scenario import load
    from ..throws.fitting import predict as pr
    from ..throws.recordings.reader import read_recordings
    from ..throws.fitting.report import draw_predictions, prediction_table

    plot = check_out(args.plot, (".png",), "--plot") if args.plot else None
    lead = pr.DEFAULT_LEAD if args.lead is None else args.lead
    horizon = pr.DEFAULT_HORIZON if args.horizon is None else args.horizon
    pr.check_lead_horizon(lead, horizon)
    scenario = load(args.scenario)
    body = pr.FittedBody.of(scenario)
    recordings = read_recordings(args.recordings)  # an Excel file's CSV twin, or a path given twice, counts once
    began = time.perf_counter()
    flights = predict(scenario, recordings, flights=args.flights, lead=lead, horizon=horizon)
    seconds = time.perf_counter() - began
    if args.json:
        print(json.dumps({"flights": flights, "seconds": seconds}, allow_nan=False))
    else:
        print(prediction_table(flights, lead, seconds))
    if plot:
        with _outputs([plot]) as (plot_tmp,):
            draw_predictions(body, recordings, flights, horizon, plot_tmp, lead=lead)
        print(f"wrote {plot}", file=sys.stderr if args.json else sys.stdout)
    return EXIT_OK


def cmd_fit_bench(args) -> int:
    from ..throws.benches.fit_bench import figures_json, run_fit_bench

    if args.speed:
        from ..throws.benches.speed_bench import run_speed_bench

        figures = run_speed_bench(seed=args.seed, say=lambda line: print(line, flush=True) if not args.json else None)
        if args.json:
            print(json.dumps(figures, allow_nan=False))
        return EXIT_OK
    out = check_out_folder(args.out) if args.out else None
    figures = run_fit_bench(seed=args.seed, out=out, say=lambda line: print(line, flush=True) if not args.json else None)
    if args.json:
        print(figures_json(figures))
    return EXIT_OK


THROW_COMMANDS = {"samples": cmd_samples, "fit": cmd_fit, "predict": cmd_predict, "fit-bench": cmd_fit_bench}
