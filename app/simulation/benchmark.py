"""Accuracy and speed benchmark of the integrators against exact references.

For each scenario, integrator and dt: max and RMS error of the centre-of-mass position and
velocity, of the orientation (angle of q_num^-1 q_ref) and of omega, as Gazebo's "Boxes"
benchmark reports them; the largest relative drift of E, of |L| and of the world L; and
speed (wall seconds per simulated second, steps per second, body-steps per second over a
batch). The reference is the closed-form torque-free solution where it applies, else
DOP853 at tight tolerance; the ``exact`` row itself is checked against that DOP853 run, so
no row is compared with itself.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..physics import diagnostics, quaternion as quat
from ..physics.compiled import jit
from ..physics.errors import DivergenceError
from ..physics.integrators import (
    INTEGRATORS,
    check_exact_applies,
    check_run_size,
    check_step_fits,
    integrator_info,
    simulate,
)
from ..physics.errors import ParameterError
from ..physics.compiled.runs import run_name
from ..physics.state import State
from ..scenario import Scenario

#: error samples are taken at this interval (or every step if dt is larger)
ERROR_SAMPLE = 0.01
#: the independent high-accuracy run (reference for torqued scenarios and for `exact`):
#: DOP853 near scipy's smallest rtol (100 eps), its step left free (a cap only adds steps
#: and round-off: at max_step 1e-3 it was 40x worse against the closed form on Boxes)
REFERENCE_RTOL = 2.5e-14
REFERENCE_ATOL = 1e-16
#: bodies in the batched speed measurement
BATCH_BODIES = 1000
#: how a step longer than the scenario is refused (the bench's steps come from --dt)
STEP_NAMES = {"dt": "--dt", "duration": "the scenario's duration"}
#: timing repeats (best of) for the single-body measurement
TIMING_REPEATS = 3

COLUMNS = (
    "scenario", "integrator", "dt", "pos_err_max", "pos_err_rms", "vel_err_max", "vel_err_rms",
    "angle_err_max", "angle_err_rms", "omega_err_max", "omega_err_rms", "E_drift_max",
    "L_drift_max", "Lnorm_drift_max", "orth_err_max", "det_err_max", "wall_per_sim_s", "steps_per_s",
    "batch_body_steps_per_s",
)


@dataclass
class _Reference:
    t: np.ndarray
    c: np.ndarray
    v: np.ndarray
    q: np.ndarray
    w: np.ndarray


def _sample_for(dt: float, duration: float) -> float:
    every = max(1, round(ERROR_SAMPLE / dt))
    return min(every * dt, duration)


def _errors(traj, ref) -> dict:
    def mx_rms(e):
        return float(np.max(e)), float(np.sqrt(np.mean(e * e)))

    pos = np.linalg.norm(traj.c - ref.c, axis=-1)
    vel = np.linalg.norm(traj.v - ref.v, axis=-1)
    ang = quat.angle_between(traj.q, ref.q)
    om = np.linalg.norm(traj.w - ref.w, axis=-1)
    out = {}
    for key, e in (("pos", pos), ("vel", vel), ("angle", ang), ("omega", om)):
        out[f"{key}_err_max"], out[f"{key}_err_rms"] = mx_rms(e)
    return out


def _drifts(scenario: Scenario, traj) -> dict:
    """Conservation drifts; for a method that integrates a rotation matrix (rotmat-euler),
    also max |R^T R - 1| (Frobenius) and max |det R - 1|; else max ||q| - 1| in both."""
    d = diagnostics.diagnose(scenario.rigid_body, scenario.gravity, traj)
    if traj.R is not None:
        gram = np.swapaxes(traj.R, -1, -2) @ traj.R - np.eye(3)
        orth = float(np.max(np.linalg.norm(gram, axis=(-2, -1))))
        det = float(np.max(np.abs(np.linalg.det(traj.R) - 1)))
    else:
        orth = det = float(np.max(np.abs(np.linalg.norm(traj.q, axis=-1) - 1)))
    return {
        "E_drift_max": float(np.max(np.abs(d.E_drift))),
        "L_drift_max": float(np.max(d.L_drift)),
        "Lnorm_drift_max": float(np.max(np.abs(d.L_norm_drift))),
        "orth_err_max": orth,
        "det_err_max": det,
    }


def _timed(fn) -> float:
    best = math.inf
    for _ in range(TIMING_REPEATS):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _batch_span(name: str, dt: float, duration: float) -> float:
    """Simulated time of the batched speed measurement (s)."""
    if not integrator_info(name).fixed_step:
        return min(duration, max(10 * dt, 0.01))
    return min(duration, max(100 * dt, 0.1))


def check_bench_size(scenarios: list[Scenario], integrators: list[str] | None, dts: list[float]) -> None:
    """Refuse, before any work, a step that would take one of the runs past the step or
    sample budget (:func:`~app.physics.integrators.check_run_size`), in the name of ``--dt``."""
    for sc in scenarios:
        duration = sc.solver.duration
        for dt in dts:
            check_step_fits(dt, duration, names=STEP_NAMES)
            for name in integrators or INTEGRATORS:
                check_run_size(name, dt, duration, _sample_for(dt, duration), names={"dt": "--dt", "sample": "--dt"})
                check_run_size(name, dt, _batch_span(name, dt, duration), n_bodies=BATCH_BODIES,
                               names={"dt": "--dt"})


def _compile_timed_kernels(scenarios, integrators, progress) -> None:
    """Load, or compile, every kernel the bench runs before it times any: on a first run it would
    otherwise time the uncompiled code that steps while they compile (:mod:`..physics.jit`)."""
    names = {"deriv_batch"}  # dop853, the reference of the torqued scenarios
    for sc in scenarios:
        for name in integrators:
            info = integrator_info(name)
            if info.fixed_step:
                names.add(run_name(info.kernel_id, sc.model.params, sc.model.points))
    if progress:
        progress(0.0, "loading the kernels (compiling them once)")
    jit.compile_now(sorted(names), processes=2)


def run_bench(
    scenarios: list[Scenario],
    integrators: list[str] | None = None,
    dts: list[float] | None = None,
    progress: Callable[[float, str], None] | None = None,
) -> list[dict]:
    """One row per (scenario, integrator, dt); keys are :data:`COLUMNS`.

    A row whose run diverges or does not apply has NaN figures and an ``error`` key.
    """
    integrators = list(integrators or INTEGRATORS)
    _compile_timed_kernels(scenarios, integrators, progress)
    rows = []
    total = len(scenarios) * len(integrators) * len(dts or [None])
    done = 0
    for sc in scenarios:
        duration = sc.solver.duration
        model = sc.model
        state0 = sc.initial_state
        exact_ok = True
        try:
            check_exact_applies(model)
        except ParameterError:
            exact_ok = False
        for dt in dts or [sc.solver.dt]:
            check_step_fits(dt, duration, names=STEP_NAMES)
            sample = _sample_for(dt, duration)
            refs = {}

            def reference(kind):
                if kind not in refs:
                    integ = "exact" if kind == "exact" else "dop853"
                    refs[kind] = simulate(model, state0, integ, duration, duration, sample=sample,
                                          rtol=REFERENCE_RTOL, atol=REFERENCE_ATOL)
                return refs[kind]

            for name in integrators:
                if progress:
                    progress(done / total, f"{sc.name} {name} dt={dt:g}")
                row = {"scenario": sc.name, "integrator": name, "dt": dt}
                try:
                    if integrator_info(name).torque_free_only and not exact_ok:
                        raise ParameterError("integrator", name, "be used only without applied torques or forces")
                    opts = sc.solver.options
                    traj = simulate(model, state0, name, dt, duration, sample=sample, **opts)
                    ref = reference("exact" if exact_ok and name != "exact" else "dop853")
                    row.update(_errors(traj, ref))
                    row.update(_drifts(sc, traj))
                    wall = _timed(lambda: simulate(model, state0, name, dt, duration, sample=duration, **opts))
                    n_steps = math.ceil(duration / dt * (1 - 1e-9))
                    row["wall_per_sim_s"] = wall / duration
                    row["steps_per_s"] = n_steps / wall
                    batch_t = _batch_span(name, dt, duration)
                    batch_steps = max(1, math.ceil(batch_t / dt * (1 - 1e-9)))
                    rng = np.random.default_rng(0)
                    wb = state0.w + 1e-3 * np.linalg.norm(state0.w) * rng.standard_normal((BATCH_BODIES, 3))
                    batch0 = State(state0.t, np.tile(state0.c, (BATCH_BODIES, 1)), np.tile(state0.v, (BATCH_BODIES, 1)),
                                   np.tile(state0.q, (BATCH_BODIES, 1)), wb)
                    simulate(model, batch0, name, dt, batch_t, sample=batch_t, **opts)  # warm-up
                    bwall = _timed(lambda: simulate(model, batch0, name, dt, batch_t, sample=batch_t, **opts))
                    row["batch_body_steps_per_s"] = BATCH_BODIES * batch_steps / bwall
                except (DivergenceError, ParameterError) as err:
                    for key in COLUMNS[3:]:
                        row.setdefault(key, math.nan)
                    row["error"] = str(err)
                rows.append(row)
                done += 1
                if progress:
                    progress(done / total, f"{sc.name} {name} dt={dt:g}")
    return rows


def markdown_table(rows: list[dict]) -> str:
    """The rows as a Markdown table (figures to 2-3 significant digits)."""
    head = ["scenario", "integrator", "dt", "pos max", "pos rms", "vel max", "vel rms", "angle max (rad)",
            "angle rms", "omega max", "omega rms", "E drift", "L drift", "|L| drift", "R^T R - 1", "det R - 1",
            "wall s/sim s", "steps/s", "batch body-steps/s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["scenario"], r["integrator"], f"{r['dt']:g}"]
        for key in COLUMNS[3:]:
            val = r.get(key, math.nan)
            if key in ("steps_per_s", "batch_body_steps_per_s"):
                cells.append("-" if not math.isfinite(val) else f"{val:.3g}")
            else:
                cells.append("-" if not math.isfinite(val) else f"{val:.2e}")
        if "error" in r:
            cells[3] = "n/a: " + r["error"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


#: widest line of :func:`text_table` (characters): fits an 100-column terminal
TEXT_WIDTH = 100
#: (header, row key, format) of the columns :func:`text_table` shows
TEXT_COLUMNS = (
    ("angle max", "angle_err_max", "{:.1e}"),
    ("ω max", "omega_err_max", "{:.1e}"),
    ("c max", "pos_err_max", "{:.1e}"),
    ("E drift", "E_drift_max", "{:.1e}"),
    ("L drift", "L_drift_max", "{:.1e}"),
    ("ms/sim s", "wall_per_sim_s", "{:.3g}"),
    ("batch M/s", "batch_body_steps_per_s", "{:.3g}"),
)
TEXT_LEGEND = (
    "angle: orientation error (rad), ω: omega error (rad/s), c: centre-of-mass error (m), the largest "
    "over the run against the reference (the exact solution; DOP853 at rtol "
    f"{REFERENCE_RTOL:g} where torques act, and for exact itself); E drift, L drift: largest relative drift of the energy and "
    "of the world angular momentum; ms/sim s: wall milliseconds per simulated second, best of "
    f"{TIMING_REPEATS}; batch M/s: million body-steps per second with {BATCH_BODIES} bodies. "
    "--wide prints every figure, --json the rows."
)


#: widest figure of :func:`text_table` (characters)
CELL_WIDTH = 7


def _fit(text: str, value: float) -> str:
    """``text``, or ``value`` with no decimals if a three-digit exponent makes it too wide."""
    return text if len(text) <= CELL_WIDTH else f"{value:.0e}"


def text_table(rows: list[dict], width: int = TEXT_WIDTH) -> str:
    """The main figures as aligned text, one table per scenario, at most ``width`` columns
    (the rest is in :func:`markdown_table`); a row that does not apply says why below."""
    import textwrap

    from ..physics.errors import shorten

    out, notes = [], []
    for scenario in dict.fromkeys(r["scenario"] for r in rows):
        table = [["integrator", "dt"] + [head for head, _, _ in TEXT_COLUMNS]]
        for r in (r for r in rows if r["scenario"] == scenario):
            cells = [r["integrator"], f"{r['dt']:g}"]
            for _, key, fmt in TEXT_COLUMNS:
                val = r.get(key, math.nan)
                scale = 1e3 if key == "wall_per_sim_s" else 1e-6 if key == "batch_body_steps_per_s" else 1.0
                cells.append("-" if not math.isfinite(val) else _fit(fmt.format(val * scale), val * scale))
            if "error" in r:
                notes.append(f"[{len(notes) + 1}] {r['integrator']}, dt {r['dt']:g}: {r['error']}")
                cells[2] = f"n/a [{len(notes)}]"
            table.append(cells)
        widths = [max(len(row[k]) for row in table) for k in range(len(table[0]))]
        out.append(shorten(f"{scenario}:", width))
        for row in table:
            line = "  ".join(c.ljust(w) if k < 2 else c.rjust(w) for k, (c, w) in enumerate(zip(row, widths)))
            out.append(line.rstrip())
        out.append("")
    for note in notes:
        out.extend(textwrap.wrap(note, width, subsequent_indent="    "))
    out.extend(textwrap.wrap(TEXT_LEGEND, width))
    return "\n".join(out)
