"""Stability map: how far omega wanders from its start, for spin axes all over the sphere.

API (for ``tumble stability`` and the GUI's stability view)::

    smap = stability_map(body, omega_norm, n_directions=2000, duration=20.0,
                         integrator="rk4", dt=None, progress=None, executor=None)
    (executor: any concurrent.futures.Executor; the directions are split into chunks over it)
    smap.directions   (N, 3) unit initial spin axes, BODY frame (Fibonacci lattice)
    smap.wander       (N,)  largest angle (rad) between omega(t) and omega(0) over the run
    smap.flip_period  (N,)  predicted time between intermediate-axis reversals (s), NaN where
                            there is none or the closed form is not available
    smap.first_flip   (N,)  predicted time of the first reversal (s), NaN likewise
    smap.moments (3,), smap.axes (3, 3)   principal moments (ascending), axes as columns
    smap.axis_labels  ("minor: stable", "intermediate: unstable", "major: stable") or the
                      symmetric-body variants
    smap.nearest(axis_vector) -> index of the lattice direction closest to a body vector
    smap.initial_omega(k) -> body-frame omega0 of direction k (to load it into the main view)
    smap.to_npz_dict() / write_npz(smap, path) / write_png(smap, path)
    smap.frame (3, 3)  rows: the map's x, y, z axes in body coordinates (x along the
                       intermediate axis, y along the major one, z along the minor one)
    lat_lon(directions, frame) -> latitude, longitude (rad) of body-frame unit vectors, in
                       that frame (the intermediate axis at the map's centre, the major one
                       at longitude +-90 deg, the minor one at the poles)
    map_grid(smap) -> the wander on a regular latitude-longitude grid, for drawing

All directions are integrated in ONE batched call of the physics core per chunk of time
(:func:`app.physics.integrators.simulate` with a State of N bodies; the compiled kernels
step all N), torque-free (gravity does not turn a body about its centre of mass; applied
loads are left out on purpose: the map is a property of the body). The running maximum
of the angle is taken over samples every few steps, chunk by chunk, so memory stays near
``CHUNK_BYTES`` whatever N and the duration.

Step size: the fastest rate in the body frame is |omega| times max(1, |I_j - I_k| / I_i)
(Euler's equations; for a physical body the ratio is <= 1). ``STEP_ANGLE`` of it per step
and a sample every ``SAMPLE_ANGLE`` keep the wander within 7e-4 rad (0.04 deg) of a run
at 0.005 rad per step sampled every step (measured over 20 s, 500 directions, on the
t-handle, boxes-complex and tennis-racket bodies: max 3.8e-4, 6.9e-4, 5.4e-4 rad; median
1e-6). Almost all of it is the sampling: RK4's own error at this step is ~1e-7 rad.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..physics.body import Body
from ..physics.errors import ParameterError
from ..physics.body import EQUAL_MOMENTS
from ..physics.integrators import MAX_SAMPLES, check_run_size, simulate, validate_dt
from ..physics.model import compile_model
from ..physics.state import State

#: rotation angle (rad) of the fastest body-frame motion per integration step
STEP_ANGLE = 0.08
#: omega is compared with its start at least this often (rad of the fastest motion); the
#: running maximum sits at a turning point, so sampling errs only to second order
SAMPLE_ANGLE = 0.16
#: memory for one chunk's samples (bytes); the chunk length follows from it
CHUNK_BYTES = 48 * 2**20
#: bytes per sample and body kept by simulate (13 state numbers, plus the user-frame copy)
BYTES_PER_SAMPLE = 2 * 13 * 8
#: the run is split into at least this many chunks, so that progress moves smoothly
MIN_CHUNKS = 25
#: moments within this relative amount of each other count as equal (a symmetric body):
#: the physics' own rule (:func:`app.physics.body.has_intermediate_axis`)
SYMMETRY_SLACK = EQUAL_MOMENTS
DEFAULT_DIRECTIONS = 2000
DEFAULT_DURATION = 20.0
#: most directions of one map: each chunk of the run holds at least two samples of every
#: direction, within the run's sample budget
MAX_DIRECTIONS = MAX_SAMPLES // 2


@dataclass(frozen=True)
class StabilityMap:
    """The result of :func:`stability_map`; see the module docstring for each field."""

    directions: np.ndarray
    wander: np.ndarray
    flip_period: np.ndarray
    first_flip: np.ndarray
    moments: np.ndarray
    axes: np.ndarray
    omega_norm: float
    duration: float
    dt: float
    integrator: str
    axis_labels: tuple

    def nearest(self, vector) -> int:
        """Index of the lattice direction closest to a body-frame vector."""
        v = np.asarray(vector, dtype=float)
        return int(np.argmax(self.directions @ (v / np.linalg.norm(v))))

    def initial_omega(self, k: int) -> np.ndarray:
        """Body-frame initial angular velocity of direction ``k`` (rad/s)."""
        return self.omega_norm * self.directions[k]

    @property
    def frame(self) -> np.ndarray:
        """Rows: the map's axes in body coordinates (see :func:`map_frame`)."""
        return map_frame(self.axes)

    def axis_wander(self) -> np.ndarray:
        """(3,) wander of the lattice direction nearest each principal axis (either sign:
        the larger), ascending moments."""
        return np.array([max(self.wander[self.nearest(a)], self.wander[self.nearest(-a)]) for a in self.axes.T])

    def to_npz_dict(self) -> dict:
        """Arrays for ``numpy.savez`` (the ``tumble stability`` file)."""
        return {
            "directions": self.directions,
            "wander": self.wander,
            "flip_period": self.flip_period,
            "first_flip": self.first_flip,
            "moments": self.moments,
            "principal_axes": self.axes,
            "map_frame": self.frame,
            "axis_wander": self.axis_wander(),
            "axis_labels": np.array(self.axis_labels),
            "omega_norm": np.float64(self.omega_norm),
            "duration": np.float64(self.duration),
            "dt": np.float64(self.dt),
            "integrator": np.array(self.integrator),
        }


def fibonacci_sphere(n: int) -> np.ndarray:
    """(n, 3) near-uniform unit vectors: the Fibonacci (golden-angle) lattice.

    Point i sits at z = 1 - (2i + 1)/n and longitude i * pi (3 - sqrt 5), which gives each
    point nearly equal area (Gonzalez, "Measurement of areas on a sphere using Fibonacci and
    latitude-longitude lattices", Math. Geosci. 42, 2010).
    """
    i = np.arange(n, dtype=float)
    z = 1.0 - (2.0 * i + 1.0) / n
    r = np.sqrt(np.maximum(0.0, 1.0 - z * z))
    phi = i * math.pi * (3.0 - math.sqrt(5.0))
    return np.column_stack([r * np.cos(phi), r * np.sin(phi), z])


def map_frame(axes) -> np.ndarray:
    """The map's axes as rows, in body coordinates: x = intermediate principal axis, y =
    major, z = x cross y (the minor axis up to sign), so the unstable axis sits at the
    centre of a latitude-longitude map and neither of its separatrices crosses a pole."""
    axes = np.asarray(axes, dtype=float)
    x, y = axes[:, 1], axes[:, 2]
    return np.array([x, y, np.cross(x, y)])


def lat_lon(directions, frame=None) -> tuple[np.ndarray, np.ndarray]:
    """Latitude asin(z) and longitude atan2(y, x) (rad) of body-frame unit vectors, with
    x, y, z the rows of ``frame`` (body axes if None)."""
    d = np.asarray(directions, dtype=float)
    if frame is not None:
        d = d @ np.asarray(frame, dtype=float).T
    return np.arcsin(np.clip(d[..., 2], -1.0, 1.0)), np.arctan2(d[..., 1], d[..., 0])


def rate_factor(moments) -> float:
    """max(1, |I_j - I_k| / I_i) over the axes: the body-frame rate in units of |omega|."""
    i1, i2, i3 = np.asarray(moments, dtype=float)
    return max(1.0, abs(i2 - i3) / i1, abs(i3 - i1) / i2, abs(i1 - i2) / i3)


def choose_dt(moments, omega_norm: float, duration: float) -> float:
    """Step giving ``STEP_ANGLE`` of the fastest body-frame motion, at most duration / 10."""
    return min(STEP_ANGLE / (rate_factor(moments) * omega_norm), duration / 10.0)


def axis_labels(moments) -> tuple:
    """Labels of the principal axes (ascending moments) with their stability."""
    i1, i2, i3 = moments
    close12 = not i2 - i1 > SYMMETRY_SLACK * i3  # the negation of has_intermediate_axis's test
    close23 = not i3 - i2 > SYMMETRY_SLACK * i3
    if close12 and close23:
        return ("axis 1: neutral (sphere)", "axis 2: neutral (sphere)", "axis 3: neutral (sphere)")
    if close12:
        return ("minor (pair): neutral", "minor (pair): neutral", "major (symmetry axis): stable")
    if close23:
        return ("minor (symmetry axis): stable", "major (pair): neutral", "major (pair): neutral")
    return ("minor: stable", "intermediate: unstable", "major: stable")


def _executor_part(executor, part, size: int) -> np.ndarray:
    """One chunk's wander angles as an executor's map returned them, checked: ``size`` finite
    angles from 0 to pi (rad); else :class:`ParameterError` naming the executor."""
    rule = (f"return from map, for each chunk of directions, its wander angles (one finite angle from 0 to pi "
            f"rad per direction, {size} here)")
    if part is None:
        raise ParameterError("executor", executor, rule + "; it returned fewer results than chunks")
    try:
        values = np.asarray(part, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise ParameterError("executor", executor, rule + f"; it returned a {type(part).__name__}") from None
    if values.shape != (size,):
        raise ParameterError("executor", executor, rule + f"; it returned an array of shape {values.shape}")
    if not np.all(np.isfinite(values)) or values.min() < 0 or values.max() > math.pi + 1e-9:
        raise ParameterError("executor", executor, rule + "; it returned NaN, infinite or out-of-range angles")
    return values


def stability_map(
    body: Body,
    omega_norm: float,
    n_directions: int = DEFAULT_DIRECTIONS,
    duration: float = DEFAULT_DURATION,
    integrator: str = "rk4",
    dt: float | None = None,
    progress: Callable[[float], None] | None = None,
    predict: bool = True,
    min_chunks: int = MIN_CHUNKS,
    blame: str = "duration",
    executor=None,
) -> StabilityMap:
    """Sweep the initial spin axis over the sphere and measure how far omega wanders.

    Parameters
    ----------
    body : Body
        Any body (its frame need not be principal).
    omega_norm : float
        |omega| (rad/s) shared by every initial condition.
    n_directions : int
        Number of directions (Fibonacci lattice in body axes).
    duration : float
        Simulated time (s).
    integrator : str
        A fixed-step integrator of the physics core (``rk4`` by default).
    dt : float, optional
        Step (s); default :func:`choose_dt`.
    progress : callable, optional
        Called with the fraction done (0..1) after every chunk (any thread: the caller's).
    predict : bool
        Also fill ``flip_period`` and ``first_flip`` from the closed form
        (:mod:`app.physics.analysis`); NaN where there is no flip or it is unavailable.
    min_chunks : int
        Split the run into at least this many batched calls. Each call holds the
        interpreter lock throughout, so a window computing the map on a thread asks for
        more, shorter ones to keep its display going.
    blame : str
        ``"duration"`` or ``"directions"``: which one a map past the step budget
        (:data:`app.physics.integrators.MAX_STEPS` body-steps) is refused in the name of.
    executor : concurrent.futures.Executor, optional
        Split the directions into chunks (:func:`direction_chunks`) and map them over it (a
        process pool, a Dask cluster's ``client.get_executor()``); each direction's run is
        the same arithmetic as in one process, so the map equals the in-process one.
        ``progress`` is then called as each chunk ends.

    Returns
    -------
    StabilityMap

    Raises
    ------
    ParameterError
        Bad ``omega_norm``, ``n_directions``, ``duration`` or ``dt``.
    DivergenceError
        If the integration leaves the finite world.
    """
    if not (isinstance(omega_norm, (int, float, np.floating)) and math.isfinite(omega_norm) and omega_norm > 0):
        raise ParameterError("angular_velocity", omega_norm, "have a finite magnitude > 0 (it sets the spin rate of the map)")
    if isinstance(n_directions, bool) or not isinstance(n_directions, (int, np.integer)) or \
            not 1 <= n_directions <= MAX_DIRECTIONS:
        raise ParameterError("directions", n_directions, f"be a whole number from 1 to {MAX_DIRECTIONS:,}")
    if not (isinstance(duration, (int, float)) and math.isfinite(duration) and duration > 0):
        raise ParameterError("duration", duration, "be a finite number > 0 (s)")
    moments, axes = body.principal()
    if dt is None:
        dt = choose_dt(moments, omega_norm, duration)
    dt = validate_dt(dt, duration)
    check_run_size(integrator, dt, duration, sample=duration, n_bodies=int(n_directions),
                   blame="bodies" if blame == "directions" else "duration",
                   names={"bodies": "directions", "duration": "duration"})

    n = int(n_directions)
    directions = fibonacci_sphere(n)
    plan = _sampling(n, dt, duration, min_chunks)
    if executor is None:
        wander = _wander(body, omega_norm, directions, duration, dt, integrator, plan, progress)
    else:
        chunks = direction_chunks(n, executor)
        parts, done = [], 0
        jobs = executor.map(_wander, *zip(*[(body, omega_norm, directions[chunk], duration, dt, integrator, plan)
                                             for chunk in chunks]))
        try:
            jobs = iter(jobs)
        except TypeError:
            raise ParameterError("executor", executor, "return an iterable of results from map") from None
        for chunk in chunks:
            part = _executor_part(executor, next(jobs, None), len(chunk))
            parts.append(part)
            done += len(chunk)
            if progress is not None:
                progress(done / n)
        wander = np.concatenate(parts)

    flip_period = np.full(n, np.nan)
    first_flip = np.full(n, np.nan)
    if predict:
        flip_period, first_flip = _predictions(body, omega_norm * directions)
    return StabilityMap(
        directions, wander, flip_period, first_flip, moments, axes, float(omega_norm), float(duration),
        float(dt), integrator, axis_labels(moments),
    )


#: chunks of directions per worker of an executor (a few, so that a slow worker does not
#: hold up the end); an executor that does not say how many workers it has gets EXECUTOR_CHUNKS
CHUNKS_PER_WORKER = 2
EXECUTOR_CHUNKS = 16


def direction_chunks(n: int, executor) -> list[np.ndarray]:
    """Indices of the ``n`` directions split into near-equal consecutive chunks for ``executor``."""
    workers = getattr(executor, "_max_workers", None)
    count = EXECUTOR_CHUNKS if not isinstance(workers, int) or workers < 1 else CHUNKS_PER_WORKER * workers
    return [c for c in np.array_split(np.arange(n), min(n, count)) if len(c)]


def _sampling(n: int, dt: float, duration: float, min_chunks: int) -> tuple[int, int]:
    """(samples of the whole run, samples per batched call) for ``n`` directions. Chunks of
    directions run with the plan of the whole map, so that their steps and samples are the
    same as in one process."""
    every = max(1, int(SAMPLE_ANGLE // STEP_ANGLE))
    samples_total = max(1, math.ceil(duration / (every * dt) * (1 - 1e-12)))
    per_chunk = max(1, min(math.ceil(samples_total / max(1, int(min_chunks))),
                           CHUNK_BYTES // (n * BYTES_PER_SAMPLE)))
    return samples_total, per_chunk


def _wander(body: Body, omega_norm: float, directions: np.ndarray, duration: float, dt: float, integrator: str,
            plan: tuple[int, int], progress=None) -> np.ndarray:
    """(n,) largest angle (rad) between omega(t) and omega(0) of each direction, integrated in
    batched calls of ``plan[1]`` samples each (one process; module-level so that an executor
    can run it: the compiled kernels are loaded once per worker process)."""
    n = len(directions)
    samples_total, per_chunk = plan
    sample = max(1, int(SAMPLE_ANGLE // STEP_ANGLE)) * dt
    model = compile_model(body)  # torque-free, no gravity
    state = State(
        0.0, np.zeros((n, 3)), np.zeros((n, 3)), np.tile([1.0, 0.0, 0.0, 0.0], (n, 1)), omega_norm * directions
    )
    best_cos = np.ones(n)  # running min of cos(angle), i.e. the running max of the angle
    done = 0
    while done < samples_total:
        k = min(per_chunk, samples_total - done)
        left = duration - state.t
        if left <= 1e-12 * duration:  # the previous chunk reached the end up to round-off
            break
        span = min(k * sample, left)
        traj = simulate(model, state, integrator, min(dt, span), span, sample=min(sample, span))
        w = traj.w[1:]
        cos = np.einsum("tnk,nk->tn", w, directions) / (np.linalg.norm(w, axis=-1) + 1e-300)
        np.minimum(best_cos, cos.min(axis=0), out=best_cos)
        state = traj.state(-1)
        done += k
        if progress is not None:
            progress(min(1.0, state.t / duration))
    if state.t < duration * (1 - 1e-9):  # pragma: no cover - a map must cover its whole run
        raise RuntimeError(f"stability map stopped at t = {state.t:g} s of {duration:g} s")
    return np.arccos(np.clip(best_cos, -1.0, 1.0))


def _predictions(body: Body, omegas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Closed-form flip period and first flip time per direction (NaN where none).

    Calls :func:`app.physics.exact.flip_period` and ``first_flip_time`` in the principal
    frame directly (what :mod:`app.physics.analysis` does per call, with the eigen-
    decomposition done once here).
    """
    period = np.full(len(omegas), np.nan)
    first = np.full(len(omegas), np.nan)
    try:
        from ..physics import exact
    except ImportError:  # the closed forms are not there: leave NaN
        return period, first
    from ..physics.diagnostics import FLIP_SHARE, intermediate_peak_share

    moments, axes = body.principal()
    turns_over = intermediate_peak_share(body, omegas) > FLIP_SHARE  # else a stable wobble
    for k, wp in enumerate(omegas @ axes):
        if not turns_over[k]:
            continue
        p = exact.flip_period(moments, wp)
        f = exact.first_flip_time(moments, wp)
        period[k] = np.nan if p is None or not np.isfinite(p) else p
        first[k] = np.nan if f is None or not np.isfinite(f) else f
    return period, first


# ----------------------------------------------------------------- files


def write_npz(smap: StabilityMap, path) -> None:
    """The map as ``.npz`` (keys of :meth:`StabilityMap.to_npz_dict`), atomically."""
    from ..atomic import atomic_path

    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, **smap.to_npz_dict())


#: size of the PNG map (pixels = inches x dpi) and its grid (cells per degree)
PNG_SIZE_IN = (10.0, 5.6)
PNG_DPI = 110
GRID_PER_DEGREE = 2
#: lattice neighbours blended (inverse-distance squared) into each grid cell
GRID_NEIGHBOURS = 4


def map_grid(smap: StabilityMap, per_degree: int = GRID_PER_DEGREE):
    """Wander on a regular latitude-longitude grid of the map frame (:func:`map_frame`).

    Each cell blends its ``GRID_NEIGHBOURS`` nearest lattice directions by inverse squared
    distance. Returns ``lon_edges``, ``lat_edges`` (degrees) and ``grid`` (lat x lon, rad).
    """
    from scipy.spatial import cKDTree

    lon_edges = np.linspace(-180.0, 180.0, 360 * per_degree + 1)
    lat_edges = np.linspace(-90.0, 90.0, 180 * per_degree + 1)
    lon_c = np.radians(0.5 * (lon_edges[1:] + lon_edges[:-1]))
    lat_c = np.radians(0.5 * (lat_edges[1:] + lat_edges[:-1]))
    lat, lon = np.meshgrid(lat_c, lon_c, indexing="ij")
    pts = np.stack([np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon), np.sin(lat)], axis=-1)
    pts = pts.reshape(-1, 3) @ smap.frame  # map coordinates -> body coordinates
    k = min(GRID_NEIGHBOURS, len(smap.wander))
    dist, idx = cKDTree(smap.directions).query(pts, k=k)
    dist, idx = dist.reshape(len(pts), k), idx.reshape(len(pts), k)
    weight = 1.0 / np.maximum(dist, 1e-12) ** 2
    grid = np.sum(weight * smap.wander[idx], axis=1) / np.sum(weight, axis=1)
    return lon_edges, lat_edges, grid.reshape(lat.shape)


def write_png(smap: StabilityMap, path, title: str = "") -> dict:
    """A latitude-longitude map of the wander with the principal axes marked, atomically.

    Returns the pixel (column, row from the top) of each axis marker in the image, keyed
    ``(k, sign)`` with k the principal axis index (ascending moments) and sign +1 or -1.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from ..atomic import atomic_path

    lon_edges, lat_edges, grid = map_grid(smap)
    fig = Figure(figsize=PNG_SIZE_IN, dpi=PNG_DPI)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    mesh = ax.pcolormesh(lon_edges, lat_edges, np.degrees(grid), cmap="magma", vmin=0.0, vmax=180.0,
                         shading="flat", rasterized=True)
    cbar = fig.colorbar(mesh, ax=ax, fraction=0.035, pad=0.02)
    cbar.set_label("wander: largest angle between ω(t) and ω(0) (deg)")
    markers = ("o", "X", "s")
    places = {}
    for k, label in enumerate(smap.axis_labels):
        name, _, verdict = label.partition(": ")
        for sign in (1, -1):
            la, lo = lat_lon(sign * smap.axes[:, k], smap.frame)
            la, lo = math.degrees(float(la)), math.degrees(float(lo))
            lo = -180.0 if lo > 179.999 else lo  # draw the antipode on the left edge only
            lo = 0.0 if abs(la) > 89.999 else lo  # a pole's longitude is round-off
            places[(k, sign)] = (lo, la)
            ax.plot(lo, la, markers[k], ms=10, mfc="none", mec="white", mew=2.0, clip_on=False,
                    label=f"{name} axis, I{k + 1} = {smap.moments[k]:.4g} kg m²: {verdict}" if sign > 0 else None)
            ha = "left" if lo < 150 else "right"
            va = "bottom" if la < 80 else "top"
            ax.annotate(f"{'+' if sign > 0 else '−'}{name}\n{verdict}", (lo, la),
                        xytext=(9 if ha == "left" else -9, 7 if va == "bottom" else -7), textcoords="offset points",
                        ha=ha, va=va, color="white", fontsize=8,
                        bbox={"boxstyle": "round,pad=0.2", "fc": "black", "alpha": 0.55, "lw": 0})
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, -0.32), ncol=1, fontsize=8, frameon=False,
              handletextpad=0.4, labelcolor="black")
    for handle in ax.get_legend().legend_handles:
        handle.set_markeredgecolor("black")
    ax.set_xlim(-180, 180)
    ax.set_ylim(-90, 90)
    ax.set_xticks(np.arange(-180, 181, 45))
    ax.set_yticks(np.arange(-90, 91, 30))
    ax.set_xlabel("longitude of the initial spin axis (deg): 0 = intermediate axis, 90 = major axis")
    ax.set_ylabel("latitude (deg): ±90 = minor axis")
    ax.set_title(title or f"Stability map: |ω| = {smap.omega_norm:.4g} rad/s, {smap.duration:g} s, "
                          f"{len(smap.wander)} directions", fontsize=10)
    ax.text(1.0, 1.01, f"{smap.integrator}, dt = {smap.dt:.3g} s", transform=ax.transAxes, ha="right",
            va="bottom", fontsize=7, color="0.3")
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png")
    height = fig.get_size_inches()[1] * fig.dpi
    pixels = {}
    for key, (lo, la) in places.items():
        x, y = ax.transData.transform((lo, la))
        pixels[key] = (float(x), float(height - y))
    return pixels
