"""Command line of the live stream: ``tumble live`` (a phone's throws fitted as they land) and
``tumble phyphox-replay`` (a stand-in phone serving recordings over phyphox's protocol).

``tumble live`` exits 0 at ``--duration`` or on Ctrl+C, 130 only when Ctrl+C ends a run that
received nothing, 1 when it never connected (one line saying so), 2 on bad input (one line).
The URL ``demo`` is a stand-in phone serving a shipped sample in process (:mod:`app.throws.live.demo`).
"""

from __future__ import annotations

import json
import signal
import sys
import time

from ..api.arguments import check_out_folder, nonnegative, positive, whole

EXIT_OK, EXIT_FAILED, EXIT_INTERRUPTED = 0, 1, 130
DRAG_CHOICES = ("none", "linear", "quadratic")
FAULTS = ("outage", "sleep", "clear", "session", "drop", "redirect", "garbage", "huge")


def add_live_parsers(sub, commands: dict) -> None:
    """``tumble live`` and ``tumble phyphox-replay``; their handlers go into ``commands``."""
    lv = sub.add_parser("live", help="follow a phone's gyroscope live (phyphox remote access): each throw "
                                     "fitted as it lands")
    lv.add_argument("url", metavar="URL", help="the address phyphox shows under remote access, "
                                               "e.g. http://192.168.1.23:8080; demo: a stand-in phone "
                                               "replaying the phone-throws sample (no phone needed)")
    lv.add_argument("--fit", metavar="FIT.toml", help="hold this body fixed (a scenario from tumble fit --out)")
    lv.add_argument("--drag", default="quadratic", choices=DRAG_CHOICES, metavar="none|linear|quadratic",
                    help="the drag torque fitted (default quadratic)")
    lv.add_argument("--json", action="store_true", help="one JSON object per event and line")
    lv.add_argument("--duration", type=positive("--duration"), metavar="S", help="stop after S wall seconds")
    lv.add_argument("--out", metavar="DIR", help="write every sample (one CSV per segment) and the last fit there")
    rp = sub.add_parser("phyphox-replay", help="a stand-in phone: serve recordings over phyphox's remote "
                                               "access on 127.0.0.1, in real time")
    rp.add_argument("recordings", nargs="+", metavar="RECORDING", help="phyphox folders or zips, or CSV files")
    rp.add_argument("--port", type=whole("--port", 0, 65535), default=8080, help="port (default 8080; 0: any free)")
    rp.add_argument("--speed", type=positive("--speed"), default=1.0, metavar="X",
                    help="playback speed (default 1, at most 1000)")
    rp.add_argument("--loop", action="store_true", help="play the recordings over and over")
    rp.add_argument("--jitter", type=nonnegative("--jitter"), default=0.0, metavar="S",
                    help="move each stamp by this much (s, standard deviation), keeping their order")
    rp.add_argument("--batch", type=nonnegative("--batch"), default=0.0, metavar="S",
                    help="the samples appear in batches this long (s)")
    rp.add_argument("--fault", action="append", default=[], metavar="KIND@T[:S]",
                    help="at playback time T (s): outage:S (requests hang, measuring goes on), sleep:S "
                         "(requests hang, nothing measured), clear, session, drop, redirect, garbage, huge (100 MB)")
    rp.add_argument("--duration", type=positive("--duration"), metavar="S", help="stop after S wall seconds")
    lb = sub.add_parser("live-bench", help="the live stream's figures: a synthetic session replayed in real time "
                                           "with an outage and a clear, followed by tumble live")
    lb.add_argument("--throws", type=whole("--throws", 2, 200), default=12, help="throws in the session (default 12)")
    lb.add_argument("--seed", type=whole("--seed", 0, 2**31 - 1), default=2026, help="random seed (default 2026)")
    lb.add_argument("--speed", type=positive("--speed"), default=1.0, metavar="X", help="replay speed (default 1)")
    lb.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    commands.update({"live": cmd_live, "phyphox-replay": cmd_phyphox_replay, "live-bench": cmd_live_bench})


def _stop_flag():
    """(should_stop, stop, restore): SIGINT and SIGTERM set the flag instead of raising; a
    second one raises KeyboardInterrupt (the session's files are closed on the way out)."""
    state = {"stop": False, "signal": None}

    def handler(signum, _frame):
        if state["stop"]:  # a second one: the user will not wait for the final fit either
            raise KeyboardInterrupt
        state["stop"], state["signal"] = True, signum

    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}

    def restore():
        for s, h in old.items():
            signal.signal(s, h)
    return state, restore


class LiveWords:
    """``tumble live``'s text: one line per event worth a line, in the order they come.

    A flight gets one line when it is found (``flight 3: ...``) and one more each time a later
    fit changes what that line says (its edges, its measured or predicted flip, its exclusion:
    ``flight 3 refined: ...``); a report that changes only the ratios prints nothing (the next
    line and the end line carry them). "segment N" is said only once the session has more than
    one (the phone's time restarted). The JSON events (``--json``) are all printed as they are.
    """

    def __init__(self):
        self.segments = 1
        self.shown: dict[int, str] = {}   # flight number -> what its last line said of it

    def line(self, event: dict) -> str | None:
        """The line of ``event``, or None when it says nothing new."""
        kind = event["event"]
        if kind == "connected":
            return f"connected: {event['title'] or 'phyphox'} (session {event['session']})"
        if kind == "reconnecting":
            return f"reconnecting: {event['error']}"
        if kind == "cleared":
            self.segments = max(self.segments, int(event["segment"]) + 1)
            return f"the phone's time restarted: segment {event['segment']} begins"
        if kind == "stopped":
            return f"stopped: {event['reason']}"
        if kind == "looped":
            return (f"demo: the sample starts again at {(event['lap'] - 1) * event['period']:.1f} s (pass "
                    f"{event['lap']}): the throws from there on are its throws once more")
        if kind == "flight":
            return self._flight(event)
        ratios = ", ".join(f"{x:.4f}" for x in event["ratios"]) if event.get("ratios") else "-"
        segments = f", {_count(event['segments'], 'segment')}" if event["segments"] > 1 else ""
        return (f"end: {_count(event['samples'], 'sample')}{segments}, {_count(event['flights'], 'flight')}; "
                f"ratios {ratios}")

    def _flight(self, event: dict) -> str | None:
        self.segments = max(self.segments, int(event["segment"]) + 1)
        where = f"segment {event['segment']} " if self.segments > 1 else ""
        flips = ", ".join(f"{name} {'-' if event[key] is None else format(event[key], '.3f') + ' s'}" for name, key in
                          (("measured", "flip_time_measured"), ("predicted", "flip_time_predicted")))
        skipped = f"; left out: {event['reason']}" if event["excluded"] else ""
        what = f"{where}{event['start']:.3f}-{event['end']:.3f} s; flip {flips}{skipped}"
        number = int(event["number"])
        last = self.shown.get(number)
        if last == what:
            return None
        self.shown[number] = what
        speed = sum(x * x for x in event["omega0"]) ** 0.5
        ratios = ", ".join(f"{x:.4f}" for x in event["ratios"]) if event["ratios"] else "-"
        fitted = f" (fitted to {_count(event['flights_used'], 'flight')})" if event["ratios"] else ""
        head = f"flight {number}" + (" refined" if last is not None else "")
        return f"{head}: {what}; |w0| {speed:.2f} rad/s; ratios {ratios}{fitted}"


def _line(event: dict) -> str:
    """The line of one event on its own (a first report; see :class:`LiveWords`)."""
    return LiveWords().line(event)


def _count(n: int, noun: str) -> str:
    """``1 flight``, ``2 flights``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def cmd_live(args) -> int:
    from ..throws.live.session import LiveSession
    from ..throws.live.client import parse_url
    from ..throws.live.demo import is_demo

    if not is_demo(args.url):
        parse_url(args.url)
    if args.fit:
        from ..throws.live.fitter import fixed_body

        fixed = fixed_body(args.fit)
    else:
        fixed = None
    out = check_out_folder(args.out) if args.out else None

    heard = {"connected": False, "error": None}
    words = LiveWords()

    def emit(event):
        if event["event"] == "connected":
            heard["connected"] = True
        elif event["event"] == "reconnecting":
            heard["error"] = event.get("error")
        line = json.dumps(event, allow_nan=False) if args.json else words.line(event)
        if line is not None:
            print(line, flush=True)

    session = LiveSession(args.url, emit, args.drag, fixed, out)
    state, restore = _stop_flag()
    deadline = time.monotonic() + args.duration if args.duration else None
    try:
        session.run(lambda: state["stop"] or (deadline is not None and time.monotonic() >= deadline))
    finally:
        restore()
    if state["signal"] == signal.SIGINT and session.stream.samples == 0:
        print("tumble: interrupted, nothing received", file=sys.stderr)
        return EXIT_INTERRUPTED
    emit(session.end_event())
    if not heard["connected"]:
        phone = "the stand-in phone" if is_demo(args.url) else "the phone"
        if heard["error"]:
            why = heard["error"]
        elif deadline is not None and time.monotonic() >= deadline:  # no phone was to blame
            why = f"--duration {args.duration:g} s ended before {phone}'s first answer"
        elif is_demo(args.url):
            why = "no answer from the stand-in phone"
        else:
            why = "no answer (is phyphox open with remote access allowed, on the same network?)"
        print(f"tumble: never connected to {args.url}: {why}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def _fault(text: str):
    from ..physics.errors import ParameterError

    from ..scenario.document import plain_number

    rule = f"be KIND@T or KIND@T:S with KIND one of {', '.join(FAULTS)} (outage and sleep take S > 0)"
    kind, _, rest = text.partition("@")
    at, _, seconds = rest.partition(":")
    try:  # the one number rule (no '_', no other script's digits); the refusal names the whole fault
        at_s = plain_number(at, "--fault", rule)
        dur = plain_number(seconds, "--fault", rule) if seconds else 0.0
    except ParameterError as err:
        raise ParameterError("--fault", text, err.rule) from None
    if kind not in FAULTS or not (0 <= at_s < 1e6) or not (0 <= dur < 1e6) or (kind in ("outage", "sleep") and dur <= 0):
        raise ParameterError("--fault", text, rule)
    return kind, at_s, dur


def cmd_phyphox_replay(args) -> int:
    from ..throws.live.phyphox_server import replay_recordings

    faults = [_fault(f) for f in args.fault]
    try:
        replay = replay_recordings(args.recordings, speed=args.speed, loop=args.loop, jitter_s=args.jitter,
                                   batch_s=args.batch, port=args.port)
    except OSError as err:
        from ..physics.errors import ParameterError

        raise ParameterError("--port", args.port, f"be free on 127.0.0.1 ({err.strerror or err})") from None
    for kind, at, seconds in faults:
        replay.schedule(at, kind, seconds)
    n, span = len(replay.timeline), float(replay.timeline.t[-1])
    print(f"serving {n} samples ({span:.1f} s at {args.speed:g}x) at {replay.url}", flush=True)
    state, restore = _stop_flag()
    deadline = time.monotonic() + args.duration if args.duration else None
    replay.start()
    try:
        while not state["stop"] and (deadline is None or time.monotonic() < deadline):
            time.sleep(0.05)
    finally:
        replay.stop()
        restore()
    return EXIT_OK


def cmd_live_bench(args) -> int:
    from ..throws.benches.live_bench import run_live_bench

    figures = run_live_bench(args.throws, args.seed, args.speed,
                             say=(lambda line: None) if args.json else (lambda line: print(line, flush=True)))
    if args.json:
        print(json.dumps(figures, allow_nan=False))
    return EXIT_OK
