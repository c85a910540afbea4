"""Shared pieces of the command line: numbers read strictly, output paths, the solver's
flags, progress on stderr. Each is the one place its rule lives (``app.cli.core`` and every
subcommand use them)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

#: the views ``--view`` names (the registry app.views, which imports pyvista, is read only where
#: a view is drawn; tests/test_cold_parser.py checks that this list is the registry's)
VIEW_NAMES = ("main", "poinsot", "compare", "stability", "engines")


def parse_number(text: str, flag: str, rule: str, whole: bool = False):
    """The one place the command line reads a number.

    ``text`` must be a plain decimal number (a whole one if ``whole``), finite and at most
    1e100 in magnitude like every number in a scenario file. Returns a float (an int if
    ``whole``); raises :class:`ParameterError` ``"{flag} must {rule}, got {text}"``.
    """
    from ..scenario.document import plain_number

    return plain_number(text, flag, rule, whole)


def number_type(flag: str, rule: str, accept=lambda value: True, whole: bool = False):
    """An argparse ``type`` reading ``flag`` with :func:`parse_number` and ``accept``."""
    from ..physics.errors import ParameterError

    def parse(text):
        try:
            value = parse_number(text, flag, rule, whole)
            if not accept(value):
                raise ParameterError(flag, text, rule)
        except ParameterError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
        return value
    return parse


def positive(flag):
    return number_type(flag, "be a finite number > 0", lambda v: v > 0)


def nonnegative(flag):
    return number_type(flag, "be a finite number >= 0", lambda v: v >= 0)


def quit_after(flag="--quit-after"):
    """``--quit-after S``: 0 to the window's :data:`~app.gui.launch.MAX_QUIT_AFTER_S`."""
    from ..gui.launch import MAX_QUIT_AFTER_S, QUIT_AFTER_RULE  # a light module: constants, no Qt

    return number_type(flag, QUIT_AFTER_RULE, lambda v: 0 <= v <= MAX_QUIT_AFTER_S)


def whole(flag, lowest, highest):
    return number_type(flag, f"be a whole number from {lowest:,} to {highest:,}",
                        lambda v: lowest <= v <= highest, whole=True)


def colour_scheme(text):
    """An argparse ``type`` for ``--colours``: a colour scheme's name (dark, projector)."""
    from ..scene.palette import check_scheme
    from ..physics.errors import ParameterError

    try:
        return check_scheme(text)
    except ParameterError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


#: the help of ``--colours``
COLOURS_HELP = ("colour scheme: dark (default), or projector: dark text and strong colours on white, for a "
                "projector in a lit room; the window remembers the last one chosen (View > Projector colours)")


def number_flag(flag):
    """A number whose range the command checks later (the export plan's rules)."""
    return number_type(flag, "be a number")


def parse_point(text: str, flag: str = "--point") -> list:
    """``X,Y,Z``: three plain numbers (m), each at most 1e100 in magnitude."""
    from ..physics.errors import ParameterError

    parts = str(text).split(",")
    rule = "be three numbers x,y,z (m)"
    if len(parts) != 3:
        raise ParameterError(flag, text, rule)
    return [parse_number(part, flag, rule) for part in parts]


class ProgressBar:
    """Progress of a long command on stderr (tqdm), drawn only when stderr is a terminal,
    so that a refusal or a failure in a script is still the one line it prints.

    Call it with the fraction done (0 to 1) and a note; use it as a context manager so
    the bar is closed before an error or "interrupted" is printed.
    """

    #: steps of the bar (the fraction is shown to 0.1%)
    STEPS = 1000

    def __init__(self, label: str, stream=None):
        from tqdm import tqdm

        self.stream = stream or sys.stderr
        self.enabled = hasattr(self.stream, "isatty") and self.stream.isatty()
        try:  # a terminal that reports no size (a fresh pseudo-terminal) gets 80 x 24
            columns, rows = os.get_terminal_size(self.stream.fileno()) if self.enabled else (0, 0)
        except (OSError, ValueError, AttributeError):
            columns, rows = 0, 0
        self._bar = tqdm(total=self.STEPS, desc=label, file=self.stream, disable=not self.enabled,
                         ncols=min(columns or 80, 100), nrows=rows or 24, leave=True,
                         bar_format="{desc} {percentage:5.1f}%|{bar}| {elapsed}<{remaining} {postfix}")

    def __call__(self, fraction: float, note: str = "") -> None:
        if not self.enabled:
            return
        self._bar.n = int(round(self.STEPS * min(max(float(fraction), 0.0), 1.0)))
        jit = sys.modules.get("tumble.physics.compiled.jit")  # loaded by any run of the compiled kernels
        note = note or (jit.note() if jit is not None else "")
        if note or self._bar.postfix:
            self._bar.set_postfix_str(note[:70], refresh=False)
        self._bar.refresh()

    def close(self) -> None:
        self._bar.close()

    def __enter__(self) -> "ProgressBar":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def check_out(path: str, suffixes: tuple[str, ...], flag: str = "--out") -> Path:
    """The output path if it ends in one of ``suffixes`` and can be written (app.atomic)."""
    from ..atomic import check_target
    from ..physics.errors import ParameterError

    if not str(path).endswith(("/", os.sep)) and Path(path).suffix.lower() not in suffixes:
        raise ParameterError(flag, path, f"end in {' or '.join(suffixes)}")
    return check_target(path, flag)


def check_out_folder(path: str, flag: str = "--out") -> Path:
    """The folder ``path`` (made later if missing) if it is one, or its parent is a
    writable folder; raises :class:`ParameterError` naming ``flag``."""
    from ..physics.errors import ParameterError

    folder = Path(path)
    try:
        if folder.exists() and not folder.is_dir():
            raise ParameterError(flag, path, "be a folder")
        parent = folder if folder.exists() else (folder.parent if str(folder.parent) else Path("."))
        writable = parent.is_dir() and os.access(parent, os.W_OK)
    except OSError:  # a name longer than the system takes
        writable = False
    if not writable:
        raise ParameterError(flag, path, "be a writable folder")
    return folder


def with_solver_flags(sc, args, keys=("integrator", "dt", "duration")):
    """``sc`` with the solver options given on the command line; a refusal names the flag
    the user gave (``--duration``, ``--dt``), else the scenario's field."""
    from ..physics.errors import ParameterError
    from ..physics.integrators import check_run_size, check_step_fits
    from ..scenario import SolverSpec

    changes = {k: getattr(args, k) for k in keys if getattr(args, k, None) is not None}
    if not changes:
        return sc
    solver = SolverSpec(**{**sc.solver.__dict__, **changes})
    names = {k: f"--{k}" if k in changes else f"solver.{k}" for k in ("dt", "duration")}
    blame = "duration" if "duration" in changes and "dt" not in changes else "step"
    check_step_fits(solver.dt, solver.duration, blame=blame,
                    names={"dt": "--dt", "duration": "the duration"} if blame == "step" else
                    {"duration": "--duration", "dt": "the scenario's step dt"})
    check_run_size(solver.integrator, solver.dt, solver.duration, names=names, samples=False, blame=blame)
    try:
        return sc.replace(solver=solver)
    except ParameterError as err:
        for key in changes:
            if err.field == f"solver.{key}":
                raise ParameterError(f"--{key}", err.value, err.rule) from None
        raise


#: any of these set means a window can open (QT_QPA_PLATFORM=offscreen draws without a display)
DISPLAY_VARIABLES = ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
#: the one line said where a window cannot open (``tumble gui`` prints it; ``tumble.show`` raises it)
NO_DISPLAY = ("no display found (DISPLAY and WAYLAND_DISPLAY are not set): run the window on a virtual one, "
              "xvfb-run -a tumble, or work headless with tumble export, simulate or inspect (tumble --help)")


def display_missing() -> bool:
    """True where a window cannot open: Linux without DISPLAY, WAYLAND_DISPLAY or a
    QT_QPA_PLATFORM chosen. Qt itself would abort the process with a message about
    reinstalling the application (exit 134), which no ``try`` catches."""
    return sys.platform.startswith("linux") and not any(os.environ.get(v) for v in DISPLAY_VARIABLES)


def no_display_error():
    """The :class:`ParameterError` of a window asked for without a display: its text is
    :data:`NO_DISPLAY`, the command line's line."""
    from ..physics.errors import ParameterError

    err = ParameterError("display", None, "be there to open a window")
    err.args = (NO_DISPLAY,)
    return err
