"""What an animation export makes: the user's choices, checked, and the frame plan they imply.

:class:`ExportSettings` holds the choices as given (``None`` means "the default for this
format"); :func:`plan_export` checks them against the scenario and returns an
:class:`ExportPlan` with every number settled: format, size, frame rate, frame count and
the simulated time of each frame. Errors are :class:`~app.physics.errors.ParameterError`
naming the setting (``fps``, ``size``, ...), the value and the rule; the command line puts
``--`` in front of the name.

Time: a clip lasts ``duration`` seconds of video. Frame ``i`` is shown at ``i / fps`` and
shows the simulation at ``start + i * speed / fps``, so ``speed`` 0.25 is slow motion and
4 a time-lapse. The simulated span ``duration * speed`` must fit in the scenario's run.

With ``slow_flips`` X, the same simulated span is shown, and each second of it from half a
second before a flip to half a second after takes X times as long (the clip grows by that):
frame ``i`` shows the time a :class:`~app.export.timeline.TimeMap` gives for ``i * speed / fps``
of presentation time after ``start``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..atomic import check_target
from ..physics.errors import ParameterError
from ..physics.integrators import MAX_SAMPLES
from ..scenario import plain_name
from ..simulation.worker import RECORD_INTERVAL_S

if TYPE_CHECKING:
    from .timeline import TimeMap

#: animation formats by file extension
FORMATS = {".mp4": "mp4", ".gif": "gif", ".png": "png"}
#: data formats by file extension: the trajectory at the frame times (the ``tumble simulate``
#: columns, one row per frame) or the scenario itself
DATA_FORMATS = {".csv": "csv", ".npz": "npz", ".toml": "toml"}
#: defaults of a movie or frame sequence
DEFAULT_FPS = 30
DEFAULT_SIZE = (1280, 720)
#: defaults of a GIF: small enough to share in a chat, and 20 fps is a whole number of
#: the format's 1/100 s frame delays (30 fps is not)
GIF_DEFAULT_FPS = 20
GIF_DEFAULT_SIZE = (640, 360)
#: longest default clip (s of video); shorter when the scenario's run is shorter
DEFAULT_DURATION = 10.0
#: frame-rate limits (frames per second of video)
MAX_FPS = 240
#: frame size limits (pixels); both sides even, because H.264 in yuv420p needs it
MIN_SIZE = (160, 120)
MAX_SIZE = (3840, 2160)
#: scene beside plots needs room for both
MIN_WIDTH_WITH_PLOTS = 480
#: playback speed limits (simulated seconds per second of video)
MIN_SPEED = 0.01
MAX_SPEED = 100.0
#: most frames one export may make (10 minutes at 60 fps)
MAX_FRAMES = 36000
#: the plot panel takes this fraction of the frame width when plots are on
PLOT_FRACTION = 0.375
#: a span that overshoots the scenario's run by less than this (relative) still fits
SPAN_SLACK = 1e-9


@dataclass(frozen=True)
class Overlay:
    """What is drawn over the scene: simulated time, flip count, a title, the colour key
    (``legend``) and the exact closed-form ghost (``ghost``, where the closed form applies).

    ``title`` is the text itself; ``""`` means the scenario's name (without the window's
    notes, :func:`default_title`) and ``None`` no title.
    """

    time: bool = True
    flips: bool = True
    title: str | None = ""
    legend: bool = False
    ghost: bool = False


@dataclass(frozen=True)
class ExportSettings:
    """An animation export as the user asked for it; ``None`` fields take the format's default.

    Parameters
    ----------
    out : path ending in .mp4, .gif or .png (.png writes ``NAME_0000.png``, ``NAME_0001.png``, ...),
        or for data .csv/.npz (the trajectory, one row per frame) or .toml (the scenario)
    fps : frames per second of video (whole number, 1 to 240)
    duration : length of the clip in seconds of video
    start : simulated time of the first frame (s)
    speed : simulated seconds per second of video (0.25 slow motion, 4 time-lapse)
    size : (width, height) of a frame in pixels, both even
    with_plots : the scene with the plots of L, omega and the drifts beside it
    overlay : the text drawn over the scene
    slow_flips : None, or X: play X times slower from half a second before each flip of the run
        to half a second after (the clip grows by that; ``duration`` counts it at normal speed)
    """

    out: Path
    fps: int | None = None
    duration: float | None = None
    start: float = 0.0
    speed: float = 1.0
    size: tuple | None = None
    with_plots: bool = False
    overlay: Overlay = field(default_factory=Overlay)
    slow_flips: float | None = None


@dataclass(frozen=True)
class ExportPlan:
    """Every number of an export, settled and checked (see :func:`plan_export`)."""

    out: Path
    format: str
    fps: int
    size: tuple
    n_frames: int
    start: float
    speed: float
    with_plots: bool
    overlay: Overlay
    title: str | None
    #: slow motion around the flips (``slow_flips``), None: every frame a frame interval apart
    time_map: TimeMap | None = None

    @property
    def duration(self) -> float:
        """Length of the clip (s of video)."""
        return self.n_frames / self.fps

    @property
    def frame_interval(self) -> float:
        """Simulated time between two frames (s)."""
        return self.speed / self.fps

    @property
    def end(self) -> float:
        """Simulated time of the last frame (s)."""
        if self.time_map is not None:
            return float(self.frame_times[-1])
        return self.start + (self.n_frames - 1) * self.frame_interval

    @property
    def frame_times(self) -> np.ndarray:
        """Simulated time of every frame (s)."""
        if self.time_map is None:
            return self.start + np.arange(self.n_frames) * self.frame_interval
        from .timeline import frame_times  # the scene's modules (pyvista) only for a slowed clip

        return frame_times(self.start, self.n_frames, self.frame_interval, self.time_map)

    @property
    def scene_size(self) -> tuple:
        """(width, height) of the 3D scene: the whole frame, or its left part beside the plots."""
        w, h = self.size
        return (w - self.plot_width, h)

    @property
    def plot_width(self) -> int:
        """Width of the plot panel (pixels, even; 0 without plots)."""
        if not self.with_plots:
            return 0
        return 2 * int(round(self.size[0] * PLOT_FRACTION / 2))


def _finite(name: str, value, rule: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ParameterError(name, value, rule) from None
    if not math.isfinite(x):
        raise ParameterError(name, value, rule)
    return x


def parse_size(text: str) -> tuple:
    """``"1280x720"`` -> (1280, 720); raises :class:`ParameterError` on anything else."""
    match = _SIZE.fullmatch(str(text))
    if match is None:
        raise ParameterError("size", text, "be WIDTHxHEIGHT in pixels, like 1280x720 (ASCII digits, no spaces)")
    return (int(match[1]), int(match[2]))


#: ``WIDTHxHEIGHT``: ASCII digits only (int() would take " 1280 ", "1_280" and other scripts' digits)
_SIZE = re.compile(r"([0-9]{1,6})[xX*]([0-9]{1,6})", re.ASCII)


def check_size(size, with_plots: bool = False) -> tuple:
    """The (width, height) if it is allowed, else :class:`ParameterError`."""
    try:
        w, h = (int(v) for v in size)
        if (w, h) != tuple(size):
            raise ValueError
    except (TypeError, ValueError):
        raise ParameterError("size", size, "be two whole numbers of pixels (width, height)") from None
    text = f"{w}x{h}"
    if w % 2 or h % 2:
        raise ParameterError("size", text, "have an even width and height (H.264 in yuv420p needs it)")
    if w < MIN_SIZE[0] or h < MIN_SIZE[1]:
        raise ParameterError("size", text, f"be at least {MIN_SIZE[0]}x{MIN_SIZE[1]}")
    if w > MAX_SIZE[0] or h > MAX_SIZE[1]:
        raise ParameterError("size", text, f"be at most {MAX_SIZE[0]}x{MAX_SIZE[1]}")
    if with_plots and w < MIN_WIDTH_WITH_PLOTS:
        raise ParameterError("size", text, f"be at least {MIN_WIDTH_WITH_PLOTS} pixels wide with plots")
    return (w, h)


def check_out(out) -> tuple[Path, str]:
    """(path, format) of an output path, or :class:`ParameterError` naming ``out``."""
    path = Path(out)
    known = {**FORMATS, **DATA_FORMATS}
    fmt = known.get(path.suffix.lower())
    if fmt is None:
        raise ParameterError("out", str(out), "end in " + ", ".join(known))
    return check_target(out, "out"), fmt


def plan_export(scenario, settings: ExportSettings) -> ExportPlan:
    """Settle and check every number of ``settings`` for ``scenario``.

    Raises :class:`~app.physics.errors.ParameterError` naming the first setting that
    breaks a rule (``out``, ``fps``, ``size``, ``speed``, ``start``, ``duration``).
    """
    out, fmt = check_out(settings.out)
    gif = fmt == "gif"

    fps_in = (GIF_DEFAULT_FPS if gif else DEFAULT_FPS) if settings.fps is None else settings.fps
    fps_x = _finite("fps", fps_in, f"be a whole number from 1 to {MAX_FPS}")
    if fps_x != int(fps_x) or not 1 <= fps_x <= MAX_FPS:
        raise ParameterError("fps", fps_in, f"be a whole number from 1 to {MAX_FPS}")
    fps = int(fps_x)

    size = check_size((GIF_DEFAULT_SIZE if gif else DEFAULT_SIZE) if settings.size is None else settings.size,
                      settings.with_plots)

    speed = _finite("speed", settings.speed, f"be a number from {MIN_SPEED:g} to {MAX_SPEED:g}")
    if not MIN_SPEED <= speed <= MAX_SPEED:
        raise ParameterError("speed", settings.speed, f"be a number from {MIN_SPEED:g} to {MAX_SPEED:g}")

    run = float(scenario.solver.duration)
    start = _finite("start", settings.start, f"be >= 0 and < the scenario's run ({run:g} s)")
    if not 0 <= start < run:
        raise ParameterError("start", settings.start, f"be >= 0 and < the scenario's run ({run:g} s)")

    longest = (run - start) / speed  # s of video that still fit in the run
    if settings.duration is None:
        duration = min(DEFAULT_DURATION, longest)
    else:
        duration = _finite("duration", settings.duration, "be a finite number > 0 (s of video)")
        if duration <= 0:
            raise ParameterError("duration", settings.duration, "be a finite number > 0 (s of video)")
        if duration > longest * (1 + SPAN_SLACK):
            slower = speed_to_fit(run - start, duration)
            hint = f"; speed {slower:g} shows the whole run in {duration:g} s" if slower is not None else ""
            raise ParameterError(
                "duration", settings.duration,
                f"be <= {longest:.6g} s (s of video: from start {start:g} s at speed {speed:g} the clip must end "
                f"within the scenario's run of {run:g} s{hint})")
    time_map = None
    if settings.slow_flips is not None:
        from .timeline import check_slow_factor, frame_count, slow_flips_map

        factor = check_slow_factor(settings.slow_flips, "slow-flips")
        if factor != 1.0:
            time_map = slow_flips_map(scenario, factor, until=start + duration * speed)
    n_frames = int(round(duration * fps)) if time_map is None else frame_count(start, duration * speed, fps, speed,
                                                                                 time_map)
    if n_frames < 1:
        raise ParameterError("duration", settings.duration, f"last at least one frame (>= {1 / fps:.6g} s at {fps} fps)")
    if n_frames > MAX_FRAMES:
        raise ParameterError("duration", settings.duration,
                             f"make at most {MAX_FRAMES} frames (here {n_frames} at {fps} fps)")
    before, during = timeline_samples(start, n_frames, speed / fps, time_map)
    if before > MAX_SAMPLES:
        raise ParameterError("start", settings.start,
                             f"be <= {MAX_SAMPLES * RECORD_INTERVAL_S:g} s (the run up to it is kept in memory: at "
                             f"most {MAX_SAMPLES:,} samples, one every {RECORD_INTERVAL_S:g} s)")
    if before + during > MAX_SAMPLES:
        raise ParameterError("duration", settings.duration if settings.duration is not None else duration,
                             f"keep at most {MAX_SAMPLES:,} samples of the run in memory (one every "
                             f"{RECORD_INTERVAL_S:g} s of simulated time or faster; here {before + during:,}): "
                             "shorten the clip or lower the speed")

    title = settings.overlay.title
    if title == "":
        title = default_title(scenario)
    return ExportPlan(out=out, format=fmt, fps=fps, size=size, n_frames=n_frames, start=start, speed=speed,
                      with_plots=bool(settings.with_plots), overlay=settings.overlay, title=title, time_map=time_map)


def speed_to_fit(span: float, duration: float) -> float | None:
    """The playback speed, rounded down to two significant digits, at which a clip of
    ``duration`` s of video shows ``span`` s of simulated time (a fitted flight lasts under
    a second: ``tumble export FIT.toml --duration 3`` needs about 0.29); None below
    :data:`MIN_SPEED`."""
    exact = span / duration
    if not exact >= MIN_SPEED:
        return None
    step = 10.0 ** (math.floor(math.log10(exact)) - 1)
    return min(MAX_SPEED, math.floor(exact / step * (1 + SPAN_SLACK)) * step)


def default_title(scenario) -> str:
    """The title an export shows for ``scenario``: its name without the notes the window
    appends ("T-handle (edited)" -> "T-handle"), or the whole name if that is all notes."""
    return plain_name(scenario.name) or scenario.name


def timeline_samples(start: float, n_frames: int, frame_interval: float,
                     time_map: TimeMap | None = None) -> tuple[int, int]:
    """Samples an export keeps of its run before the first frame and from it on (the
    sampling of :func:`app.export.timeline.simulate_timeline`)."""
    before = max(1, math.ceil(start / RECORD_INTERVAL_S)) if start > 0 else 0
    if time_map is not None:
        from .timeline import frame_pieces, frame_times, samples_per_interval

        times = frame_times(start, n_frames, frame_interval, time_map)
        during = sum(m * samples_per_interval((times[i + m] - times[i]) / m) for i, m in frame_pieces(times))
        return before, during + 1
    per_frame = max(1, math.ceil(frame_interval / RECORD_INTERVAL_S))
    return before, (n_frames - 1) * per_frame + 1


def sequence_digits(n_frames: int) -> int:
    """Digits in the frame numbers of a PNG sequence: four, more from 10000 frames on."""
    return max(4, len(str(n_frames - 1)))


def sequence_paths(out, n_frames: int) -> list:
    """The files of a PNG sequence for ``out`` = ``NAME.png``: ``NAME_0000.png``,
    ``NAME_0001.png``, ... beside ``out`` (not in a folder, so a file manager or an editor
    that imports numbered images finds them where the user pointed)."""
    out = Path(out)
    digits = sequence_digits(n_frames)
    return [out.with_name(f"{out.stem}_{i:0{digits}d}{out.suffix}") for i in range(n_frames)]


#: rough bytes per pixel per frame of the outputs, measured on t-handle: MP4 0.0052 at
#: 1280x720 and 0.0036 at 1920x1080 with plots; GIF 0.018-0.045 from 640x360 down to
#: 320x240; PNG 0.075 at 1280x720 (small frames cost more per pixel)
BYTES_PER_PIXEL_FRAME = {"mp4": 0.005, "gif": 0.025, "png": 0.1}
#: bytes per row of a CSV / NPZ table, and of a scenario file
BYTES_PER_ROW = {"csv": 460, "npz": 165}
TOML_BYTES = 600


def estimate_bytes(plan: ExportPlan) -> int:
    """A rough size of the output (bytes), for the dialog's preview."""
    if plan.format == "toml":
        return TOML_BYTES
    if plan.format in BYTES_PER_ROW:
        return BYTES_PER_ROW[plan.format] * plan.n_frames
    w, h = plan.size
    return int(BYTES_PER_PIXEL_FRAME[plan.format] * w * h * plan.n_frames)
