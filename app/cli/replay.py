"""Command line of ``tumble replay``: one recorded flight replayed in 3D (the window), as a clip or as a table of orientations.

Exit status as everywhere: 0 success, 2 bad input (one line), 1 a run that failed on its own.
"""

from __future__ import annotations

import sys

from ..api.arguments import COLOURS_HELP, ProgressBar, check_out, colour_scheme, number_type, quit_after

EXIT_OK, EXIT_FAILED = 0, 1
#: what ``--out`` may end in
REPLAY_OUTPUTS = (".mp4", ".gif", ".csv")


def add_replay_parser(sub) -> None:
    """``tumble replay RECORDING [--fit FIT.toml] [--flight N] [--speed X] [--out FILE]``."""
    from ..throws.fitting.defaults import DEFAULT_SPEED  # a light module: the parser is built by every command

    r = sub.add_parser("replay", help="replay one recorded flight in 3D: the measured rates turned into the object's "
                                      "orientation, the fitted model beside it")
    r.add_argument("recording", metavar="RECORDING", help="a phyphox folder or .zip, or a CSV file (time and three rates)")
    r.add_argument("--fit", metavar="FIT.toml", help="the fitted body and drag (tumble fit --out): drawn as the object "
                                                     "and flown as the ghost from the same start (default: a phone, no model)")
    r.add_argument("--flight", type=number_type("--flight", "be a whole number >= 1 (flights count from 1, as tumble "
                                                            "fit lists them)", lambda v: v >= 1, whole=True),
                   default=1, metavar="N", help="which flight, from 1, in the order tumble fit lists them (default 1)")
    r.add_argument("--speed", type=number_type("--speed", "be a number from 0.01 to 100", lambda v: 0.01 <= v <= 100),
                   default=DEFAULT_SPEED, metavar="X",
                   help=f"playback speed: s of flight per s of video or of the window (default {DEFAULT_SPEED:g})")
    r.add_argument("--out", metavar="FILE", help="FILE.mp4 or FILE.gif: the clip, off screen; FILE.csv: t,qw,qx,qy,qz,"
                                                 "wx,wy,wz per measured sample (and model_qw..model_qz with --fit); "
                                                 "without --out the window opens")
    r.add_argument("--colours", metavar="SCHEME", type=colour_scheme, help=COLOURS_HELP)
    r.add_argument("--screenshot", metavar="FILE", help="the window: save a PNG of it and exit")
    r.add_argument("--quit-after", type=quit_after(), metavar="S",
                   help="the window: seconds of wall time before the screenshot/exit")


def run_replay(args) -> int:
    """The command, once a window could open if one is asked for (``app.cli.core`` checks)."""
    from ..api.functions import replay

    out = check_out(args.out, REPLAY_OUTPUTS) if args.out else None
    for flag, value in (("--screenshot", args.screenshot), ("--quit-after", args.quit_after)):
        if out is not None and value is not None:  # the window's options: --out opens none
            from ..physics.errors import ParameterError

            raise ParameterError(flag, value, "go with the window, not with --out (which writes off screen): give one "
                                              "or the other")
    if args.screenshot is not None:
        from ..gui.launch import check_screenshot

        check_screenshot(args.screenshot)
    with ProgressBar("replay") as bar:
        flight = replay(args.recording, fit=args.fit, flight=args.flight, progress=bar)
    said = f"flight {flight.number}: {flight.start:.3f} s to {flight.t[-1]:.3f} s, {len(flight.t)} samples"
    clipped = int(flight.saturated.sum())
    if clipped:
        print(f"tumble: note: flight {flight.number} holds {clipped} clipped sample{'s' if clipped > 1 else ''} "
              "(past the gyroscope's range): the orientation follows the clipped rates there", file=sys.stderr)
    if out is not None and out.suffix.lower() == ".csv":
        from ..atomic import write_text

        write_text(out, flight.csv_text())
        print(said)
        print(f"wrote {out}")
        return EXIT_OK
    if out is not None:
        from ..export import EncodeError, ExportCancelled
        from ..export.protocol import sigterm_as_interrupt
        from ..export.replay import export_replay
        from ..physics.errors import shorten

        try:
            with ProgressBar("export") as bar, sigterm_as_interrupt():
                result = export_replay(flight, out, speed=args.speed,
                                       progress=lambda done, total: bar(done / max(total, 1)))
        except ExportCancelled:
            print("tumble: export cancelled, nothing written", file=sys.stderr)
            return EXIT_FAILED
        except EncodeError as err:  # ffmpeg could not write it (a full disk): as tumble export says it
            print(f"tumble: error: {shorten(str(err), 300)} (nothing written)", file=sys.stderr)
            return EXIT_FAILED
        print(said)
        clip = result.frames / result.plan.fps  # the clip's own length; result.seconds is the wall time to make it
        print(f"wrote {out}: a {clip:.2f} s clip ({result.frames} frames at {result.plan.fps} fps), "
              f"made in {result.seconds:.1f} s")
        return EXIT_OK
    from ..gui.launch import run_replay

    print(said)
    code = run_replay(flight, speed=args.speed, screenshot=args.screenshot, quit_after=args.quit_after)
    if code == EXIT_OK and args.screenshot:
        print(f"wrote {args.screenshot}")
    return code
