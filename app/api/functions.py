"""Tumble from Python: the functions ``import tumble`` offers, the one front door.

Each function is the code of its command: ``tumble simulate``, ``inspect``, ``presets``,
``stability``, ``fit``, ``predict`` and ``export`` call these, so a script and the command
line give the same numbers and refuse the same input with the same one-line message
(:class:`ParameterError`, a ``ValueError``; its text is what the command prints after
``tumble: error:``; options are named by their flags, ``--dt``, as the command names them)::

    import tumble
    sc = tumble.load("t-handle").with_values({"solver.duration": 5.0})
    run = tumble.simulate(sc)            # run.columns: the CSV columns of tumble simulate
    run.t, run.omega, run.flips
    tumble.stability(sc, directions=500, executor=concurrent.futures.ProcessPoolExecutor())

Drawing (:func:`render`, :func:`export`, :func:`show`) lives in :mod:`.draw` and loads
VTK only when called; nothing here imports Qt.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np

from .. import __version__  # noqa: F401  (tumble.__version__, the same as tumble --version)
from .auditing import audit, audit_trajectory  # noqa: F401
from .draw import export, render, show  # noqa: F401
from .types import Fit, Run, Scenario, flag_number, integrator_name, load
from ..physics.errors import DivergenceError, ParameterError  # noqa: F401

__all__ = ["__version__", "ParameterError", "DivergenceError", "Scenario", "Run", "Fit", "presets", "load",
           "simulate", "inspect", "samples", "fit", "predict", "export", "render", "show", "stability", "audit",
           "audit_trajectory", "replay"]

def presets() -> dict[str, str]:
    """The shipped presets: name -> one-line description (``tumble presets``)."""
    from ..scenario import presets as rows

    return dict(rows())


def _outputs(outputs) -> list[str]:
    """Extra column groups from a comma list or a list of Exudyn names (``--outputs``)."""
    from ..simulation.table import parse_outputs

    if outputs is None or isinstance(outputs, str):
        return parse_outputs(outputs)
    if not isinstance(outputs, (list, tuple)) or not all(isinstance(o, str) for o in outputs):
        raise ParameterError("--outputs", outputs, "be a list of output group names (AngularVelocity, Position, ...)")
    return parse_outputs(",".join(outputs))


def simulate(sc, *, integrator=None, dt=None, duration=None, sample=None, outputs=None, point=None,
             progress=None) -> Run:
    """Simulate ``sc`` headless (``tumble simulate``).

    Parameters
    ----------
    sc : Scenario, or a preset name or TOML path
    integrator, dt, duration : override the scenario's solver (``--integrator``, ``--dt``, ``--duration``)
    sample : output interval (s), default dt; a whole multiple of dt for fixed-step integrators
    outputs : extra column groups, Exudyn names (``"AngularVelocity,Position"`` or a list)
    point : body-fixed point (body frame, m, from the reference point) of the point outputs
    progress : called with the fraction done (0 to 1)

    Returns
    -------
    Run : ``run.columns`` holds exactly the CSV columns of ``tumble simulate`` with these options.
    """
    from .arguments import parse_point, with_solver_flags
    from ..physics import diagnostics
    from ..physics import theory
    from ..physics.integrators import REGISTRY, check_run_size, integrator_info
    from ..physics.integrators import simulate as integrate
    from ..simulation.table import POINT_GROUPS, check_finite, check_outputs, trajectory_table

    groups = _outputs(outputs)
    if point is not None:
        point = parse_point(point if isinstance(point, str) else ",".join(_point_text(x) for x in _items(point)))
        if not any(g in groups for g in POINT_GROUPS):
            raise ParameterError("--point", point, "come with a point output in --outputs (Position, Velocity, ...)")
    flags = SimpleNamespace(integrator=integrator_name(integrator), dt=flag_number("--dt", dt),
                            duration=flag_number("--duration", duration))
    sample = flag_number("--sample", sample)
    sc = Scenario.of(with_solver_flags(load(sc), flags))
    check_outputs(sc, groups)
    solver = sc.solver
    if sample is not None and sample > solver.duration:
        raise ParameterError("--sample", sample, f"be <= the duration ({solver.duration:g} s)")
    if sample is not None and integrator_info(solver.integrator).fixed_step:
        # the rows are the integrator's own states: a sample between two steps, or a
        # step shrunk to fit the samples, would not be the run the summary describes
        ratio = sample / solver.dt
        if round(ratio) < 1 or abs(ratio - round(ratio)) > 1e-9 * ratio:
            raise ParameterError("--sample", sample, f"be a whole multiple of dt ({solver.dt:g} s) for "
                                 f"{solver.integrator} (only {' and '.join(i.name for i in REGISTRY if not i.fixed_step)} "
                                 "sample anywhere)")
    given = {k for k in ("dt", "duration") if getattr(flags, k) is not None}
    check_run_size(solver.integrator, solver.dt, solver.duration, sample,
                   blame="duration" if given == {"duration"} else "step",
                   names={"sample": "--sample", **{k: f"--{k}" if k in given else f"solver.{k}"
                                                  for k in ("dt", "duration")}})
    traj = integrate(sc.model, sc.initial_state, solver.integrator, solver.dt, solver.duration,
                     sample=sample, progress=progress, **solver.options)
    columns = trajectory_table(sc, traj, groups, point)
    check_finite(columns)
    d = diagnostics.diagnose(sc.rigid_body, sc.gravity, traj)
    flips = diagnostics.flip_times(sc.rigid_body, traj.t, traj.w)
    figures = {
        "integrator": solver.integrator, "dt": solver.dt, "duration": solver.duration, "sample": sample,
        "outputs": tuple(groups), "point": None if point is None else tuple(point),
        "flip_times": flips,
        "predicted_flip_period": theory.flip_period(sc.rigid_body, sc.angular_velocity, sc.applied_loads),
        "mean_flip_period": float(np.mean(np.diff(flips))) if len(flips) > 1 else None,
        "max_E_drift": float(np.max(np.abs(d.E_drift))),
        "max_L_drift": float(np.max(d.L_drift)),
        "max_L_norm_drift": float(np.max(np.abs(d.L_norm_drift))),
    }
    return Run(sc, columns, figures)


def _items(value) -> list:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if not isinstance(value, (list, tuple)):
        raise ParameterError("--point", value, "be three numbers x,y,z (m)")
    return list(value)


def _point_text(x) -> str:
    x = x.item() if isinstance(x, np.generic) else x
    return repr(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else str(x)


def inspect(sc) -> dict:
    """The body's mass properties and predictions: the keys and values of ``tumble inspect --json``."""
    return load(sc).summary()


# ------------------------------------------------------------------ the stability map


def stability_map(sc, directions=None, duration=None, executor=None, progress=None):
    """(the scenario, its :class:`~app.simulation.stability.StabilityMap`): ``sc``'s body at its
    |omega| (``tumble stability``; None takes the default directions and duration)."""
    from ..physics.integrators import MAX_SAMPLES
    from ..simulation.stability import DEFAULT_DIRECTIONS, DEFAULT_DURATION
    from ..simulation.stability import stability_map as compute

    highest = MAX_SAMPLES // 2
    if executor is not None and not callable(getattr(executor, "map", None)):
        raise ParameterError("executor", executor, "be a concurrent.futures.Executor (with a map method) or None")
    n = flag_number("--directions", directions, f"be a whole number from 1 to {highest:,}",
                    lambda v: 1 <= v <= highest, whole=True)
    seconds = flag_number("--duration", duration)
    sc = load(sc)
    omega_norm = float(np.linalg.norm(sc.angular_velocity))
    if omega_norm == 0:
        raise ParameterError(f"initial.angular_velocity of {sc.name!r}", [0, 0, 0],
                             "be non-zero for a stability map (its magnitude sets the spin rate)")
    n = DEFAULT_DIRECTIONS if n is None else n
    seconds = DEFAULT_DURATION if seconds is None else seconds
    blame = "directions" if directions is not None and duration is None else "duration"
    try:
        smap = compute(sc.rigid_body, omega_norm, n, seconds, progress=progress, blame=blame, executor=executor)
    except ParameterError as err:
        if err.field in ("directions", "duration"):  # the flags' own names
            raise ParameterError(f"--{err.field}", err.value, err.rule) from None
        raise
    return sc, smap


def stability(sc, *, directions=2000, duration=20.0, executor=None, progress=None) -> dict:
    """How far omega wanders from its start for ``directions`` spin axes over the sphere
    (body frame, Fibonacci lattice) at the scenario's |omega|, over ``duration`` s.

    ``executor``: any :class:`concurrent.futures.Executor` (a ``ProcessPoolExecutor``, a Dask
    ``client.get_executor()``); the directions are split into chunks mapped over it, with the
    same result as in one process. Returns the arrays of ``tumble stability --out FILE.npz``
    (same keys).
    """
    _, smap = stability_map(sc, directions, duration, executor, progress)
    return smap.to_npz_dict()


# ------------------------------------------------------------------ throws: fit and predict


def samples() -> list[dict]:
    """The sample recordings shipped with Tumble (``tumble samples --json``): each a dict of
    ``name`` (what :func:`fit`, :func:`predict` and every command take in place of a
    recording), ``what``, ``file``, the true ``ratios`` (ascending, the largest 1), ``made`` and
    ``seed``."""
    from ..throws.recordings.samples import samples as shipped

    return [s.to_dict() for s in shipped()]


def _recordings(recordings) -> list:
    """A path, a Recording, or a list of them, as a list; each path checked (not empty, no NUL, a
    path at all: a replay passed as the recording is refused in one line)."""
    from ..throws.recordings.reader import Recording, check_path

    if isinstance(recordings, (str, Path)) or not isinstance(recordings, (list, tuple)):
        recordings = [recordings]
    if not recordings:
        raise ParameterError("recordings", recordings, "name at least one recording")
    for item in recordings:
        if not isinstance(item, Recording):
            check_path(item)
    return list(recordings)


def _windows_text(flights):
    """``flights`` as the command line's text: ``auto`` or ``START:END,...``."""
    if isinstance(flights, str):
        return flights
    if isinstance(flights, (list, tuple)):
        try:
            return ",".join(f"{float(a)!r}:{float(b)!r}" for a, b in flights)
        except (TypeError, ValueError):
            pass
    raise ParameterError("--flights", flights, "be auto, START:END,... or a list of (start, end) pairs (s)")


def fit(recordings, *, flights="auto", drag="quadratic", axes="sensor", inertia_scale=1.0, exclude=(),
        include=(), allow_unphysical=False, progress=None) -> Fit:
    """Fit inertia ratios and air drag to gyroscope recordings of throws (``tumble fit``).

    ``recordings``: a phyphox folder or .zip, a CSV file, a sample's name (:func:`samples`), or a
    list of them (fitted together);
    ``flights``: ``"auto"`` or windows ``"START:END,..."`` / ``[(start, end), ...]`` (s);
    ``drag``: none, linear or quadratic; ``axes``: sensor or fit; ``inertia_scale``: the
    largest principal moment (kg m^2) the reported inertia and drag are scaled to;
    ``exclude`` / ``include``: times (s) of flights to leave out / to put back after the fit
    excluded them, in every recording; ``allow_unphysical``: let :meth:`Fit.scenario` keep
    ratios that break the triangle inequality; ``progress(fraction, note)``.
    """
    from ..throws.fitting import flights as fl
    from ..throws.fitting.fit import fit_paths, fit_recordings
    from ..throws.recordings.reader import Recording

    scale = flag_number("--inertia-scale", inertia_scale)
    items = _recordings(recordings)
    text = _windows_text(flights)
    marks = {name: [(k, flag_number(f"--{name}", t, "be times in s separated by commas", lambda v: True))
                    for k in range(len(items)) for t in times]
             for name, times in (("exclude", _times(exclude)), ("include", _times(include)))}
    if all(isinstance(r, Recording) for r in items):
        read, result = items, fit_recordings(items, fl.parse_windows(text), drag, axes, progress, **marks)
    else:
        read, result = fit_paths([str(r) for r in items], text, drag, axes, progress=progress, **marks)
    for name, times in (("exclude", _times(exclude)), ("include", _times(include))):
        for t0 in times:
            if not any(f.start - 0.2 <= float(t0) <= f.end for f in result.flights):
                raise ParameterError(f"--{name}", f"{float(t0):g}", "name a time (s, recording time) inside a flight found")
    notes = tuple(f"{rec.name}: {note}" for rec in read for note in rec.notes) + tuple(result.notes)
    return Fit(result, scale, bool(allow_unphysical), notes)


def _times(times) -> list:
    if isinstance(times, (int, float)) and not isinstance(times, bool):
        return [times]
    return list(times)


def predict(fit_or_scenario, recordings, *, flights="auto", lead=0.1, horizon=2.0) -> list[dict]:
    """Predict each flight of ``recordings`` from its first ``lead`` s with a fitted body
    (a :class:`Fit`, or a scenario such as ``fit.scenario()`` or a FIT.toml): the flights of
    ``tumble predict --json``, one dict each (:func:`app.throws.fitting.predict.predict_flights`).
    ``flights``: ``"auto"`` (found as the fit finds them), or windows ``"START:END,..."`` /
    ``[(start, end), ...]`` (s, recording time), each one flight exactly as given;
    ``horizon``: each flight is simulated this long (s)."""
    from ..throws.fitting.predict import predict_flights

    body = fit_or_scenario.scenario() if isinstance(fit_or_scenario, Fit) else load(fit_or_scenario)
    windows = flights if isinstance(flights, str) else [tuple(pair) for pair in _pairs(flights)]
    return predict_flights(body, _recordings(recordings), windows=windows, lead=lead, horizon=horizon)


def _pairs(flights) -> list:
    if not isinstance(flights, (list, tuple)) or not all(isinstance(p, (list, tuple)) and len(p) == 2
                                                         for p in flights):
        raise ParameterError("--flights", flights, "be auto, START:END,... or a list of (start, end) pairs (s)")
    return list(flights)


# ------------------------------------------------------------------ throws: one flight replayed


def replay(recording, *, fit=None, flight=1, progress=None):
    """One flight of ``recording`` replayed (``tumble replay``): its measured rates integrated
    into the object's orientation (sensor frame, the identity at the flight's first sample;
    fourth order in the samples), with the fitted model flown beside it from the same start.

    ``recording``: a phyphox folder or .zip, a CSV file, or a read Recording; ``fit``: the
    model, a FIT.toml (its path, a :class:`Scenario`) or a :class:`Fit` (None: no model, a
    phone drawn); ``flight``: its number from 1, as ``tumble fit`` lists the flights (the same
    fit finds them); ``progress(fraction, note)`` of that fit. Returns a
    :class:`~app.throws.fitting.replay.FlightReplay` (``.t``, ``.q``, ``.w``, ``.model_at(t)``,
    ``.csv_text()``).
    """
    from ..throws.fitting.replay import listed_flights, pick_flight, replay_listed
    from ..throws.recordings.reader import Recording, read_recordings

    if isinstance(flight, bool) or not isinstance(flight, (int, np.integer)) or flight < 1:
        raise ParameterError("--flight", flight, "be a whole number >= 1 (flights count from 1, as tumble fit "
                             "lists them)")
    model = None
    if fit is not None:
        from ..throws.fitting.predict import FittedBody

        model = fit.result if isinstance(fit, Fit) else load(fit)
        # a model it cannot step is refused before the recording's fit
        FittedBody.of(model, "--fit", str(fit) if isinstance(fit, (str, Path)) else None)
    items = _recordings(recording)
    if len(items) != 1:
        raise ParameterError("recording", len(items), "be one recording")
    read = items if isinstance(items[0], Recording) else read_recordings([str(items[0])])
    result = listed_flights(read, progress=progress)
    pick_flight(result, int(flight))
    return replay_listed(read, result, int(flight), model)
