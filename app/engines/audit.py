"""An audit: a scenario's body run in engine settings at some steps, each scored against the reference.

:func:`run_audit` is the one place the ``--json`` object of ``tumble audit`` is assembled; the
command line, ``tumble.audit`` and the engines view all call it. Each setting runs alone
(:func:`run_setting`, picklable, so an ``executor`` may spread the settings over processes); the
reference is evaluated once at the shared sample times and every setting is scored in the caller.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..physics.errors import ParameterError
from ..physics.integrators import MAX_SAMPLES, STEP_FIT_SLACK, sample_times
from . import registry, score
from .start import START_MATCH, Start, start_mismatch, start_of, state_words, step_counts

#: the sample interval (s) unless one is given
DEFAULT_SAMPLE = 0.01
#: most samples of one setting (each is read from the engine in Python)
MAX_AUDIT_SAMPLES = MAX_SAMPLES
#: most samples held over every run of an audit (settings times steps times samples): a run's
#: trajectory, series and scoring take about 0.3 KB a sample, so about 1 GB in all
MAX_AUDIT_HELD = 3_000_000
#: most distinct --dt values of one audit (a work-precision figure needs a handful)
MAX_AUDIT_DTS = 50
#: most engine steps of one setting, summed over every setting of an audit: the Python-stepped
#: engines (PyBullet, DART) take about 3-5 us a step here, so 2e7 steps is about 1-2 minutes
MAX_AUDIT_STEPS = 20_000_000
#: a flip of a run within this share of the reference's flip spacing counts as the same flip
FLIP_MATCH_SHARE = 0.25


@dataclass
class SettingRun:
    """One scored setting: its ``figures`` (a run of the ``--json`` object), the trajectory in
    Tumble's convention, and the per-sample :func:`~.score.series`."""

    figures: dict
    trajectory: object
    series: dict = field(repr=False)


@dataclass
class Audit:
    """The ``--json`` object (``summary``), and the scored runs in its order."""

    summary: dict
    runs: list
    reference: object


def plan(sc, engines, dts, duration, sample) -> tuple[list, float, float, list[float]]:
    """Validate the request: (settings [(engine, setting)], duration, sample, dts), every size
    checked from the numbers given before anything is allocated: the count of distinct steps,
    the samples (duration / sample), the samples held over every run, the engine steps (duration /
    dt, summed over every setting and step). Raises :class:`ParameterError` naming the flag the
    user gave, or the scenario's field where the number is the scenario's."""
    pairs = registry.parse(engines)
    given_dt, given_duration, given_sample = dts is not None, duration is not None, sample is not None
    if given_dt:
        dts = list(dts)
        for dt in dts:
            _check_positive("--dt", dt)
        dts = list(dict.fromkeys(float(dt) for dt in dts))
        if not dts:
            raise ParameterError("--dt", "no step", "name at least one step (s)")
        if len(dts) > MAX_AUDIT_DTS:
            raise ParameterError("--dt", f"{len(dts):,} distinct steps", f"name at most {MAX_AUDIT_DTS} steps")
    else:
        dts = [float(sc.solver.dt)]
    duration = float(sc.solver.duration) if not given_duration else _check_positive("--duration", duration)
    sample = DEFAULT_SAMPLE if not given_sample else _check_positive("--sample", sample)
    dt_name = "--dt" if given_dt else "solver.dt (the scenario's step; --dt sets another)"
    duration_name = "--duration" if given_duration else "solver.duration (the scenario's; --duration sets another)"
    sample_words = f"{sample:g} s" + ("" if given_sample else ", --sample's default")
    if sample > duration:
        raise ParameterError("--sample" if given_sample else duration_name, sample if given_sample else duration,
                             f"{'be <= the duration' if given_sample else 'be >= the sample interval'} "
                             f"({duration if given_sample else sample:g} s)")
    samples = duration / sample
    if samples > MAX_AUDIT_SAMPLES * (1 + STEP_FIT_SLACK):
        budget = f"an audit keeps at most {MAX_AUDIT_SAMPLES:,} samples of a run"
        if given_sample:
            raise ParameterError("--sample", sample, f"be >= {duration / MAX_AUDIT_SAMPLES:.4g} s ({budget}; here "
                                 f"over {duration:g} s)")
        raise ParameterError(duration_name, duration, f"be <= {MAX_AUDIT_SAMPLES * sample:.4g} s ({budget}; here one "
                             f"every {sample_words})")
    runs = len(pairs) * len(dts)
    if samples * runs > MAX_AUDIT_HELD * (1 + STEP_FIT_SLACK):
        budget = (f"an audit holds at most {MAX_AUDIT_HELD:,} samples over all its runs; here {runs} run(s) "
                  f"of {samples:,.0f}")
        if given_sample:
            raise ParameterError("--sample", sample, f"be >= {duration * runs / MAX_AUDIT_HELD:.4g} s ({budget})")
        raise ParameterError(duration_name, duration, f"be <= {MAX_AUDIT_HELD / runs * sample:.4g} s ({budget})")
    for dt in dts:
        if dt > sample:
            raise ParameterError(dt_name, dt, f"be <= the sample interval ({sample_words})")
    steps = sum(duration / dt for dt in dts) * len(pairs)
    if steps > MAX_AUDIT_STEPS:
        words = (f"an audit takes at most {MAX_AUDIT_STEPS:,} engine steps over every setting and step; "
                 f"here about {steps:.3g} for {len(pairs)} setting(s) over {duration:g} s")
        if given_dt or not given_duration:
            smallest = min(dts)
            others = steps - duration / smallest * len(pairs)
            room = (MAX_AUDIT_STEPS - others) / len(pairs)
            if room > 0:
                raise ParameterError(dt_name, smallest, f"be >= {duration / room:.4g} s ({words})")
            raise ParameterError(dt_name, smallest, f"name fewer or longer steps ({words})")
        raise ParameterError(duration_name, duration, f"be <= {duration * MAX_AUDIT_STEPS / steps:.4g} s ({words})")
    times = sample_times(duration, sample)
    for dt in dts:
        for engine, setting in pairs:
            if registry.fixed_step(engine, setting):
                try:
                    step_counts(times, dt)
                except ParameterError as err:
                    raise ParameterError("--sample" if given_sample else dt_name, sample if given_sample else dt,
                                         f"divide the sample interval ({sample_words}) and the duration "
                                         f"({duration:g} s) into whole steps of {dt:g} s for "
                                         f"{registry.canonical(engine, setting)} (a fixed-step engine's state "
                                         "exists only on its steps)") from None
    return pairs, duration, sample, dts


def _check_positive(flag, value) -> float:
    try:
        ok = not isinstance(value, bool) and math.isfinite(float(value)) and float(value) > 0
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ParameterError(flag, value, "be a finite number > 0 (s)")
    return float(value)


def run_setting(engine: str, setting: str, start: Start, dt: float, times, budget_s: float | None = None) -> tuple:
    """(trajectory, settings, version, seconds, remarks) of one setting: set-up and stepping
    timed; ``remarks`` as :func:`.registry.run` gives them (notes, and why not to score it);
    ``budget_s`` the wall clock an adaptive setting may take (:func:`.budget.wall_clock`)."""
    from .budget import wall_clock

    began = time.perf_counter()
    with wall_clock(budget_s):
        trajectory, settings, version, remarks = registry.run(engine, setting, start, dt, times)
    return trajectory, settings, version, time.perf_counter() - began, remarks


def _run_packed(job):
    return run_setting(*job)


def run_audit(sc, engines=None, dts=None, duration=None, sample=None, executor=None, progress=None,
              cancelled=None, reference_aside: bool = False, budget_s: float | None = None) -> Audit:
    """Run and score every setting at every step of ``dts``.

    ``sc`` a scenario; ``engines`` "all" or "ENGINE[:SETTING],..." (or a list); ``dts`` steps
    (s; default the scenario's); ``duration`` (default the scenario's) and ``sample`` (s);
    ``executor`` anything with ``map`` (settings run in its workers); ``progress(fraction,
    note)``; ``cancelled()`` is asked between settings (True stops with
    :class:`KeyboardInterrupt`); ``budget_s``: the wall clock each adaptive setting's run may take
    (s; default :mod:`.budget`'s); ``reference_aside``: evaluate the reference in a forked child
    process while the engines step (the command line: importing scipy's special functions
    for the closed form takes about 0.5 s here, which the other core then spends).
    """
    began = time.perf_counter()
    pairs, duration, sample, dts = plan(sc, engines, dts, duration, sample)
    start = start_of(sc)
    times = sample_times(duration, sample)
    aside = ReferenceAside(sc, times) if reference_aside else None
    jobs = [(engine, setting, start, dt, times, budget_s) for dt in dts for engine, setting in pairs]
    if executor is not None:
        results = list(executor.map(_run_packed, jobs))
    else:
        results = []
        for k, job in enumerate(jobs):
            if cancelled is not None and cancelled():
                raise KeyboardInterrupt
            if progress is not None:
                progress(k / len(jobs), f"{registry.canonical(job[0], job[1])} at dt {job[3]:g}")
            results.append(run_setting(*job))
    if progress is not None:
        progress(1.0, "")
    ref = aside.result() if aside is not None else None
    ref = score.reference(sc, times) if ref is None else ref
    runs = [score_run(sc, ref, engine, setting, dt, *result, start=start)
            for (engine, setting, _, dt, *_), result in zip(jobs, results)]
    summary = {"scenario": sc.name, "reference": ref.kind, "duration": duration, "sample": sample,
               "runs": [r.figures for r in runs], "seconds": time.perf_counter() - began}
    return Audit(summary, runs, ref)


class ReferenceAside:
    """The reference evaluated in a forked child process (see :func:`run_audit`); where fork is
    unavailable, threads are running (forking them is unsafe) or the child fails, :meth:`result`
    is None and the caller evaluates it itself. Thread: the caller's."""

    #: longest wait for the child's answer (s) before the caller evaluates the reference itself
    TIMEOUT_S = 60.0

    def __init__(self, sc, times):
        import multiprocessing
        import threading

        self._process = self._conn = None
        if threading.active_count() > 1 or "fork" not in multiprocessing.get_all_start_methods():
            return
        context = multiprocessing.get_context("fork")
        self._conn, child = context.Pipe(duplex=False)
        self._process = context.Process(target=_reference_child, args=(sc, times, child), daemon=True,
                                        name="tumble-audit-reference")
        self._process.start()
        child.close()

    def result(self):
        if self._process is None:
            return None
        try:
            if self._conn.poll(self.TIMEOUT_S):
                return self._conn.recv()
            return None
        except (EOFError, OSError):
            return None
        finally:
            self._conn.close()
            self._process.join(1.0)
            if self._process.is_alive():
                self._process.terminate()
                self._process.join()


def _reference_child(sc, times, conn) -> None:
    try:
        conn.send(score.reference(sc, times))
    except BaseException:  # noqa: BLE001 - the parent evaluates it itself
        pass
    finally:
        conn.close()


def score_run(sc, ref, engine, setting, dt, trajectory, settings, version, seconds, remarks=None,
              start=None) -> SettingRun:
    """One run's figures. A run is reported with the reason and scored as nothing (its figures
    None) when its first sample is not the body's ``start`` (within :data:`~.start.START_MATCH`:
    a convention error of the adapter), when ``remarks["not_scored"]`` names a reason (the engine
    changed the body, its budget was spent), or when its state turns non-finite."""
    body = sc.rigid_body
    remarks = remarks or {}
    notes, not_scored = list(remarks.get("notes", ())), remarks.get("not_scored")
    convention = None
    if not_scored is None:
        not_scored = _not_finite(trajectory)
    if start is not None and not_scored is None:
        mismatch = start_mismatch(start, trajectory.q[0], trajectory.w[0], trajectory.c[0], START_MATCH)
        if mismatch is not None:
            not_scored = f"a convention error at the start: {mismatch}"
            convention = {"at": "start", "body": state_words(start.q, start.w, start.c),
                          "first_sample": state_words(trajectory.q[0], trajectory.w[0], trajectory.c[0])}
    if not_scored is None:
        figures, series = score.figures(body, ref, trajectory.t, trajectory.q, trajectory.w, trajectory.c)
    else:
        figures, series = score.nothing(body, ref, len(trajectory.t))
    run = {"engine": engine, "setting": setting, "version": version, "dt": dt, **figures,
           "seconds": seconds, "settings": settings, "not_scored": not_scored, "convention_error": convention,
           "notes": list(notes)}
    return SettingRun(_finite(run), trajectory, series)


def _not_finite(trajectory) -> str | None:
    """Why a run whose state turns non-finite is not scored, else None."""
    parts = [np.reshape(x, (len(trajectory.t), -1)) for x in (trajectory.q, trajectory.w, trajectory.c)]
    bad = ~np.all(np.isfinite(np.hstack(parts)), axis=1)
    if not bad.any():
        return None
    k = int(np.argmax(bad))
    return (f"its state is not finite from t = {trajectory.t[k]:g} s (sample {k + 1} of {len(trajectory.t)}): "
            "the engine's run blew up")


def scored(run: dict) -> bool:
    """True unless the run was reported and not scored (:func:`score_run`)."""
    return run.get("not_scored") is None


def _finite(value):
    """``value`` with every non-finite float as None (JSON has no NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    if isinstance(value, np.generic):
        return _finite(value.item())
    return value


def flip_tolerance(reference_flips) -> float:
    """How far (s) a run's flip may be from the reference's to count as the same one."""
    gaps = np.diff(reference_flips) if len(reference_flips) > 1 else []
    return FLIP_MATCH_SHARE * float(np.median(gaps)) if len(gaps) else math.inf


def label(run: dict) -> str:
    """``engine[:setting] dt`` as the table, legends and colour keys name a run."""
    name = run["engine"] if run.get("setting") in (None, "file") else \
        registry.canonical(run["engine"], run["setting"]) if run["engine"] in registry.adapters() else \
        f"{run['engine']}:{run['setting']}"
    return name if run.get("dt") is None or run.get("setting") == "file" else f"{name} dt {run['dt']:g}"


def audit_arrays(sc, arrays, label: str = "trajectory", order: str = "wxyz", frame: str = "body") -> Audit:
    """Score a trajectory file's content (:class:`~.trajectory.Arrays`) exactly like an engine run,
    the reference evaluated at the file's own times; its conventions are checked first."""
    from . import trajectory as tr
    from ..physics.state import Trajectory

    began = time.perf_counter()
    start = start_of(sc)
    t, q, w, c = tr.checked(arrays, start, order, frame)
    ref = score.reference(sc, t)
    figures, series = score.figures(sc.rigid_body, ref, t, q, w, c)
    spacing = np.diff(t)
    run = {"engine": label, "setting": "file", "version": None, "dt": float(np.median(spacing)), **figures,
           "seconds": None, "settings": {"quaternion": order, "omega": frame, "rows": int(len(t)),
                                          "uniform": bool(np.ptp(spacing) <= 1e-9 * np.max(spacing))},
           "not_scored": None, "convention_error": None, "notes": []}
    zeros = np.zeros_like(q[:, :3])
    trajectory = Trajectory(t, c if c is not None else zeros, zeros, q, w if w is not None else zeros)
    setting_run = SettingRun(_finite(run), trajectory, series)
    summary = {"scenario": sc.name, "reference": ref.kind, "duration": float(t[-1]),
               "sample": float(np.median(spacing)), "runs": [setting_run.figures],
               "seconds": time.perf_counter() - began}
    return Audit(summary, [setting_run], ref)
