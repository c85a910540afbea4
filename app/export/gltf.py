"""A run as glTF 2.0 (a binary .glb): the body's mesh, its turn and fall as keyframes, the fixed L arrow.

Call tree::

    export_gltf(scenario, settings)          # .glb, or .html through app.export.page
      plan_gltf                              # every number checked before any work
      sample_run                             # the run on a fine grid of candidate keys
      choose_keys                            # the fewest keys whose slerp stays within KEY_ERROR_RAD
      build_glb                              # nodes, meshes, one animation; bytes
      atomic_path                            # nothing half-written

The scene holds one root node that turns Tumble's Z-up world into glTF's Y-up (a rotation of
-90 degrees about x, :data:`Z_UP_TO_Y_UP`, made once here); under it the body's node carries the
simulation's own quaternions (body to world, in Tumble's world) as its rotation keyframes and the
centre of mass as its translation keyframes where the body moves, and the angular momentum arrow
stays fixed where L is (it is left out where the loads turn L). glTF has no line revealed over
time, so the intermediate axis' trail is not in the .glb: the page (:mod:`app.export.page`) draws
it from the same keyframes. Units: metres and seconds, as in Tumble.

Times: a key's glTF time is the time of video (``--speed`` simulated seconds per second, slowed
``--slow-flips`` times around each flip) at which the window's clip would show it. Keys are
chosen adaptively: the run is sampled every :data:`CANDIDATE_INTERVAL_S` (and at each edge of a
slowed window, where the clock's rate changes), and from each key the next is the farthest sample
whose slerp (glTF's LINEAR rotation) stays within the budget at every sample between; between
two samples the slerp's error is bounded by ``d^2 max|dw/dt| / 8`` (``d`` their spacing, ``w``
the body-frame angular velocity: the quadratic term of the rotation vector), which the budget
leaves room for.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..atomic import atomic_path, check_target
from ..physics import diagnostics
from ..physics import quaternion as quat
from ..physics.errors import ParameterError
from ..physics.integrators import simulate
from ..simulation.worker import RECORD_INTERVAL_S
from .settings import DEFAULT_DURATION, MAX_SPEED, MIN_SPEED, SPAN_SLACK, default_title, speed_to_fit

#: glTF formats by file extension: the binary glTF itself, or the page that plays it
GLTF_FORMATS = {".glb": "glb", ".html": "html"}
#: slerp between two keys stays this close to the run (rad), and linear interpolation of the
#: centre this close in units of the body's radius (the rotation's error at the body's edge)
KEY_ERROR_RAD = 1e-3
#: the share of KEY_ERROR_RAD the choice of keys spends at the samples; the rest covers the
#: error between samples and float32 rounding of the keys (about 1e-7)
KEY_BUDGET_SHARE = 0.5
#: the run is sampled this often for candidate keys (s of simulated time): at 2 ms the slerp
#: between two samples is within d^2 max|dw/dt| / 8 = 5e-7 max|dw/dt| rad
CANDIDATE_INTERVAL_S = 0.002
#: the most keyframes an export may make (the candidates: every key is one of them)
MAX_KEYFRAMES = 2_000_000
#: candidates simulated per call (the integrator keeps at most 1,000,000 samples)
CHUNK_SAMPLES = 250_000
#: Tumble's world (z up) to glTF's (y up): x stays, z becomes y, y becomes -z. (w, x, y, z)
Z_UP_TO_Y_UP = (math.sqrt(0.5), -math.sqrt(0.5), 0.0, 0.0)
#: the node names (three.js and Blender keep them as they are: no spaces, no dots)
ROOT_NODE, BODY_NODE = "tumble_world_z_up", "body"
#: the page's trail: a point every this much simulated time (s, the window's history), at most
#: TRAIL_MAX_POINTS over the whole span (thinned evenly past it)
TRAIL_SPACING_S = RECORD_INTERVAL_S
TRAIL_MAX_POINTS = 200_000
#: the L arrow's length, in body radii (the window's L_ARROW_LENGTH)
L_ARROW_RADII = 2.0
#: the body axes' half-length, in body radii (the window's AXES_LENGTH)
AXES_RADII = 1.3
#: the body's surface: not metallic, a little glossy
BODY_ROUGHNESS = 0.55

_GLB_MAGIC, _JSON_CHUNK, _BIN_CHUNK = 0x46546C67, 0x4E4F534A, 0x004E4942
_FLOAT, _UINT = 5126, 5125
_ARRAY_BUFFER, _ELEMENT_ARRAY_BUFFER = 34962, 34963


@dataclass(frozen=True)
class GltfPlan:
    """Every number of a glTF export, settled and checked (see :func:`plan_gltf`).

    ``start``/``end``: the simulated span (s); ``speed``: simulated seconds per second of
    animation; ``time_map``: slow motion around the flips, or None; ``knots``: simulated times
    where the clock's rate changes (the span's ends included); ``candidates``: samples of the
    run the keys are chosen from (the most keyframes the export can make)."""

    out: Path
    format: str
    start: float
    end: float
    speed: float
    knots: tuple
    candidates: int
    time_map: object = None
    title: str = ""

    def gltf_time(self, t):
        """The animation's time (s) at simulated time ``t`` (a number or an array)."""
        if self.time_map is None:
            return (np.asarray(t, dtype=float) - self.start) / self.speed
        p0 = self.time_map.presentation_time(self.start)
        return (np.asarray(self.time_map.presentation_time(t)) - p0) / self.speed

    @property
    def duration(self) -> float:
        """Length of the animation (s)."""
        return float(self.gltf_time(self.end))


def _number(name: str, value, rule: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ParameterError(name, value, rule) from None
    if isinstance(value, bool) or not math.isfinite(x):
        raise ParameterError(name, value, rule)
    return x


def gltf_format(out) -> str | None:
    """``"glb"`` or ``"html"`` for a path ending so, else None."""
    return GLTF_FORMATS.get(Path(str(out)).suffix.lower())


def _pieces(knots, interval: float):
    """Samples per piece between consecutive ``knots``: each piece evenly at most ``interval`` apart."""
    return [max(1, math.ceil((b - a) / interval * (1 - SPAN_SLACK))) for a, b in zip(knots[:-1], knots[1:])]


def plan_gltf(scenario, out, *, duration=None, speed=1.0, start=0.0, slow_flips=None, fps=None, size=None) -> GltfPlan:
    """Check a glTF export of ``scenario`` to ``out`` (.glb or .html) before any work.

    ``duration``: seconds of animation at ``speed`` (default 10, or less if the run ends
    sooner; ``slow_flips`` lengthens it as the video's), ``start``: simulated time of the first
    key. ``fps`` and ``size`` must be None: glTF has neither. Raises
    :class:`~app.physics.errors.ParameterError` naming the first setting that breaks a rule
    (``out``, ``fps``, ``size``, ``speed``, ``start``, ``duration``), among them a span that
    would make more than :data:`MAX_KEYFRAMES` keyframes.
    """
    fmt = gltf_format(out)
    if fmt is None:
        raise ParameterError("out", str(out), "end in " + " or ".join(GLTF_FORMATS))
    if fps is not None:
        raise ParameterError("fps", fps, f"not be given with a .{fmt} (glTF plays at the viewer's own frame rate)")
    if size is not None:
        raise ParameterError("size", size if isinstance(size, str) else "x".join(map(str, size))
                             if isinstance(size, (tuple, list)) else size,
                             f"not be given with a .{fmt} (the viewer's window sets the size)")
    path = check_target(out, "out")
    rule = f"be a number from {MIN_SPEED:g} to {MAX_SPEED:g}"
    speed_x = _number("speed", speed, rule)
    if not MIN_SPEED <= speed_x <= MAX_SPEED:
        raise ParameterError("speed", speed, rule)
    run = float(scenario.solver.duration)
    start_rule = f"be >= 0 and < the scenario's run ({run:g} s)"
    start_x = _number("start", start, start_rule)
    if not 0 <= start_x < run:
        raise ParameterError("start", start, start_rule)
    longest = (run - start_x) / speed_x
    if duration is None:
        duration_x = min(DEFAULT_DURATION, longest)
    else:
        duration_x = _number("duration", duration, "be a finite number > 0 (s of animation)")
        if duration_x <= 0:
            raise ParameterError("duration", duration, "be a finite number > 0 (s of animation)")
        if duration_x > longest * (1 + SPAN_SLACK):
            slower = speed_to_fit(run - start_x, duration_x)
            hint = f"; speed {slower:g} shows the whole run in {duration_x:g} s" if slower is not None else ""
            raise ParameterError("duration", duration,
                                 f"be <= {longest:.6g} s (s of animation: from start {start_x:g} s at speed "
                                 f"{speed_x:g} it must end within the scenario's run of {run:g} s{hint})")
    end = min(start_x + duration_x * speed_x, run)
    # the count of candidates is known from the span alone: refuse before any simulation
    rough = math.ceil((end - start_x) / CANDIDATE_INTERVAL_S) + 1
    if rough > MAX_KEYFRAMES:
        raise _too_many(duration if duration is not None else duration_x, rough, end - start_x)
    time_map = None
    knots = [start_x, end]
    if slow_flips is not None:
        from .timeline import check_slow_factor, slow_flips_map

        factor = check_slow_factor(slow_flips, "slow-flips")
        if factor != 1.0:
            time_map = slow_flips_map(scenario, factor, until=end)
            edges = [x for w in time_map.windows for x in w if start_x < x < end]
            knots = [start_x, *sorted(edges), end]
    candidates = sum(_pieces(knots, CANDIDATE_INTERVAL_S)) + 1
    if candidates > MAX_KEYFRAMES:
        raise _too_many(duration if duration is not None else duration_x, candidates, end - start_x)
    return GltfPlan(out=path, format=fmt, start=start_x, end=end, speed=speed_x, knots=tuple(knots),
                    candidates=candidates, time_map=time_map, title=default_title(scenario))


def _too_many(duration, keys: int, span: float) -> ParameterError:
    return ParameterError("duration", duration,
                          f"make at most {MAX_KEYFRAMES:,} keyframes (a candidate every {CANDIDATE_INTERVAL_S * 1e3:g} ms "
                          f"of simulated time: here {keys:,} for {span:.6g} s): shorten it or lower the speed")


# ---------------------------------------------------------------------------------------- the run


@dataclass(frozen=True)
class Samples:
    """The run at the candidate keys: simulated time ``t``, animation time ``tau``, centre ``c``
    (world, m), orientation ``q`` (w, x, y, z; body to world, signs made continuous), body-frame
    ``w``; ``knots``: the indices where the clock's rate changes (keys there are forced);
    ``flips``: the run's flip times from t = 0 (simulated s); ``L``: angular momentum at the start
    of the span (world)."""

    t: np.ndarray
    tau: np.ndarray
    c: np.ndarray
    q: np.ndarray
    w: np.ndarray
    knots: np.ndarray
    flips: np.ndarray
    L: np.ndarray


def _simulate(scenario, state, span: float, sample: float, progress=None):
    solver = scenario.solver
    return simulate(scenario.model, state, solver.integrator, min(solver.dt, span), span, sample=sample,
                    progress=progress, **solver.options)


def continuous_signs(q: np.ndarray) -> np.ndarray:
    """``q`` (n, 4) with each quaternion's sign chosen nearest the previous one (q and -q are one
    rotation; slerp between keys of opposite sign would take the long way)."""
    q = np.array(q, dtype=float)
    if len(q) < 2:
        return q
    flips = np.cumsum(np.einsum("ij,ij->i", q[1:], q[:-1]) < 0) % 2
    q[1:][flips == 1] *= -1
    return q


def sample_run(scenario, plan: GltfPlan, progress=None) -> Samples:
    """Simulate ``scenario`` from its start to ``plan.end`` and sample the span on the candidate
    grid (:data:`CANDIDATE_INTERVAL_S`, each piece between ``plan.knots`` evenly).
    ``progress(fraction)`` rises to 1. Raises :class:`~app.physics.errors.DivergenceError`."""
    body = scenario.rigid_body
    state = scenario.initial_state
    total = plan.end
    t_before = np.empty(0)
    w_before = np.empty((0, 3))

    def part(t0, span):
        return None if progress is None else (lambda f: progress(min(1.0, (t0 + span * f) / total)))

    if plan.start > 0:  # the run before the span, on the window's grid: its flips count
        k0 = max(1, math.ceil(plan.start / RECORD_INTERVAL_S))
        before = _simulate(scenario, state, plan.start, plan.start / k0, part(0.0, plan.start))
        t_before, w_before = before.t[:-1], before.w[:-1]
        state = before.state(-1)
    parts, knots = [], [0]
    for (a, b), n in zip(zip(plan.knots[:-1], plan.knots[1:]), _pieces(plan.knots, CANDIDATE_INTERVAL_S)):
        sample = (b - a) / n
        done = 0
        while done < n:
            m = min(CHUNK_SAMPLES, n - done)
            span = m * sample if done + m < n else (b - a) - done * sample
            traj = _simulate(scenario, state, span, span / m, part(a + done * sample, span))
            if len(traj.t) != m + 1:  # pragma: no cover - guards the sampling arithmetic
                raise RuntimeError(f"glTF sampling: {len(traj.t)} samples, expected {m + 1}")
            parts.append(traj if not parts else traj.select(slice(1, None)))
            state = traj.state(-1)
            done += m
        knots.append(knots[-1] + n)
    t = np.concatenate([p.t for p in parts])
    c = np.concatenate([p.c for p in parts])
    q = continuous_signs(quat.normalize(np.concatenate([p.q for p in parts])))
    w = np.concatenate([p.w for p in parts])
    if progress is not None:
        progress(1.0)
    flips = diagnostics.flip_times(body, np.concatenate([t_before, t]), np.concatenate([w_before, w]))
    L = diagnostics.angular_momentum(body, q[0], w[0])
    return Samples(t=t, tau=np.asarray(plan.gltf_time(t), dtype=float), c=c, q=q, w=w,
                   knots=np.asarray(knots), flips=np.asarray(flips, dtype=float), L=np.asarray(L, dtype=float))


# ------------------------------------------------------------------------------------- the keys


def slerp(q0: np.ndarray, q1: np.ndarray, s: np.ndarray) -> np.ndarray:
    """glTF's LINEAR rotation: the slerp from unit ``q0`` to ``q1`` at fractions ``s`` (the
    shorter way, as the glTF specification's appendix and three.js take it); any component
    order. ``q0``, ``q1``: (4,) or (n, 4); ``s``: (n,)."""
    q0, q1 = np.broadcast_arrays(np.asarray(q0, dtype=float), np.asarray(q1, dtype=float))
    s = np.asarray(s, dtype=float)[..., None]
    d = np.einsum("...i,...i->...", q0, q1)[..., None]
    q1 = np.where(d < 0, -q1, q1)
    d = np.abs(d)
    theta = np.arccos(np.clip(d, -1.0, 1.0))
    sin = np.sin(theta)
    small = sin < 1e-9
    safe = np.where(small, 1.0, sin)
    a = np.where(small, 1.0 - s, np.sin((1.0 - s) * theta) / safe)
    b = np.where(small, s, np.sin(s * theta) / safe)
    out = a * q0 + b * q1
    return out / np.linalg.norm(out, axis=-1, keepdims=True)


def rotation_angle(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The angle (rad) of the rotation between unit quaternions ``p`` and ``q`` (w, x, y, z),
    accurate for small angles."""
    r = quat.multiply(quat.conjugate(p), q)
    return 2.0 * np.arctan2(np.linalg.norm(r[..., 1:], axis=-1), np.abs(r[..., 0]))


def _greedy(lo: int, hi: int, fits) -> list:
    """Indices from ``lo`` to ``hi`` (both kept): from each, the farthest next one for which
    ``fits(i, j)`` holds (found by doubling, then halving; ``fits(i, i + 1)`` is taken as true)."""
    keys = [lo]
    i = lo
    while i < hi:
        good, step = i + 1, 1
        while True:  # double while it fits
            j = min(i + 2 * step, hi)
            if j == good or not fits(i, j):
                bad = j if j != good else None
                break
            good, step = j, 2 * step
            if j == hi:
                bad = None
                break
        if bad is not None:  # halve between the last that fits and the first that does not
            while bad - good > 1:
                mid = (good + bad) // 2
                if fits(i, mid):
                    good = mid
                else:
                    bad = mid
        keys.append(good)
        i = good
    return keys


def _between(tau: np.ndarray, i: int, j: int) -> np.ndarray:
    return (tau[i + 1:j] - tau[i]) / (tau[j] - tau[i])


def rotation_keys(samples: Samples, budget: float) -> np.ndarray:
    """Indices of the rotation keys: slerp between consecutive ones within ``budget`` (rad) of
    every sample between, keys at every knot."""
    q, tau = samples.q, samples.tau

    def fits(i, j):
        if float(np.dot(q[i], q[j])) <= 0.0:  # slerp would take the other, shorter way
            return False
        if j - i < 2:
            return True
        between = slerp(q[i], q[j], _between(tau, i, j))
        return float(np.max(rotation_angle(between, q[i + 1:j]))) <= budget

    return _keys(samples.knots, fits)


def translation_keys(samples: Samples, budget: float) -> np.ndarray:
    """Indices of the centre's keys: linear interpolation within ``budget`` (m) of every sample between."""
    c, tau = samples.c, samples.tau

    def fits(i, j):
        if j - i < 2:
            return True
        s = _between(tau, i, j)[:, None]
        between = (1 - s) * c[i] + s * c[j]
        return float(np.max(np.linalg.norm(between - c[i + 1:j], axis=1))) <= budget

    return _keys(samples.knots, fits)


def _keys(knots, fits) -> np.ndarray:
    out = [0]
    for lo, hi in zip(knots[:-1], knots[1:]):
        out += _greedy(int(lo), int(hi), fits)[1:]
    return np.asarray(out, dtype=int)


def between_samples_error(samples: Samples) -> float:
    """A bound on slerp's error between two neighbouring samples (rad): ``d^2 max|dw/dt| / 8``
    with the largest spacing ``d`` (s) and the angular acceleration from the samples' own
    differences, with the next order's ``(1 + |w| d)``."""
    if len(samples.t) < 2:
        return 0.0
    d = np.diff(samples.t)
    accel = np.linalg.norm(np.diff(samples.w, axis=0), axis=1) / d
    rate = float(np.max(np.linalg.norm(samples.w, axis=1)))
    h = float(np.max(d))
    return h * h * float(np.max(accel)) / 8.0 * (1.0 + rate * h)


@dataclass(frozen=True)
class Keys:
    """What :func:`choose_keys` settled: indices into the samples of the rotation keys and the
    centre's (empty when it does not move), and the error bounds they keep (rad; m)."""

    rotation: np.ndarray
    translation: np.ndarray
    rotation_error: float
    translation_error: float
    radius: float = 1.0
    moves: bool = False


def choose_keys(samples: Samples, radius: float) -> Keys:
    """The fewest keys found greedily whose interpolation stays within :data:`KEY_ERROR_RAD`
    of the run (the centre within ``KEY_ERROR_RAD * radius`` m), the error between samples
    included (:func:`between_samples_error`)."""
    between = between_samples_error(samples)
    budget = KEY_ERROR_RAD * KEY_BUDGET_SHARE
    if between > KEY_ERROR_RAD - budget:  # pragma: no cover - a body past ~1000 rad/s^2
        raise ParameterError("initial.angular_velocity", "its run",
                             f"keep the slerp between {CANDIDATE_INTERVAL_S * 1e3:g} ms samples within "
                             f"{KEY_ERROR_RAD - budget:g} rad (here up to {between:.3g} rad: a faster tumble "
                             "than a glTF export samples)")
    rotation = rotation_keys(samples, budget)
    moves = bool(np.max(np.linalg.norm(samples.c - samples.c[0], axis=1)) > 1e-9 * max(radius, 1e-300))
    translation = np.empty(0, dtype=int)
    translation_error = 0.0
    if moves:
        d = float(np.max(np.diff(samples.t))) if len(samples.t) > 1 else 0.0
        cd = samples.c
        accel = 0.0
        if len(cd) > 2:
            dt = np.diff(samples.t)
            v = np.diff(cd, axis=0) / dt[:, None]
            accel = float(np.max(np.linalg.norm(np.diff(v, axis=0), axis=1) / dt[1:]))
        translation_error = d * d * accel / 8.0
        translation = translation_keys(samples, max(KEY_ERROR_RAD * radius * KEY_BUDGET_SHARE, 0.0))
    return Keys(rotation=rotation, translation=translation, rotation_error=budget + between,
                translation_error=KEY_ERROR_RAD * radius * KEY_BUDGET_SHARE + translation_error,
                radius=radius, moves=moves)


# ------------------------------------------------------------------------------------- the file


def srgb_to_linear(rgb) -> np.ndarray:
    """sRGB components (0-1) to linear ones, as glTF's colours are."""
    x = np.asarray(rgb, dtype=float)
    return np.where(x <= 0.04045, x / 12.92, ((x + 0.055) / 1.055) ** 2.4)


def hex_rgb(text: str) -> np.ndarray:
    """``"#d58cff"`` -> its sRGB components (0-1)."""
    return np.array([int(text[k:k + 2], 16) / 255 for k in (1, 3, 5)])


def surface_arrays(mesh) -> dict:
    """A coloured pyvista surface (:func:`app.scene.meshes.body_mesh`) as glTF vertex arrays:
    ``POSITION``, ``NORMAL``, ``COLOR_0`` (linear) and ``indices``, faces counter-clockwise
    seen from outside. A mesh coloured per cell is split into one vertex per corner (flat faces)."""
    tri = mesh if mesh.is_all_triangles else mesh.triangulate()
    faces = np.asarray(tri.faces).reshape(-1, 4)[:, 1:]
    points = np.asarray(tri.points, dtype=float)
    a, b, c = points[faces[:, 0]], points[faces[:, 1]], points[faces[:, 2]]
    geometric = np.cross(b - a, c - a)
    if "rgb" in tri.cell_data:
        normals = np.asarray(tri.cell_data["Normals"], dtype=float)
        flip = np.einsum("ij,ij->i", geometric, normals) < 0
        faces = np.where(flip[:, None], faces[:, [0, 2, 1]], faces)
        corners = faces.ravel()
        position = points[corners]
        normal = np.repeat(normals, 3, axis=0)
        color = np.repeat(np.asarray(tri.cell_data["rgb"], dtype=float) / 255.0, 3, axis=0)
        indices = np.arange(len(corners))
    else:
        normals = np.asarray(tri.point_data["Normals"], dtype=float)
        mean = normals[faces].sum(axis=1)
        flip = np.einsum("ij,ij->i", geometric, mean) < 0
        faces = np.where(flip[:, None], faces[:, [0, 2, 1]], faces)
        position, normal = points, normals
        color = np.asarray(tri.point_data["rgb"], dtype=float) / 255.0
        indices = faces.ravel()
    normal = normal / np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-12)
    return {"POSITION": position, "NORMAL": normal, "COLOR_0": srgb_to_linear(color), "indices": indices}


class _Builder:
    """Accumulates a glTF document's JSON and its one binary buffer."""

    def __init__(self):
        self.bin = bytearray()
        self.doc = {"asset": {}, "buffers": [], "bufferViews": [], "accessors": [], "meshes": [], "materials": [],
                    "nodes": [], "scenes": [], "scene": 0}

    def view(self, data: bytes, target: int | None = None) -> int:
        while len(self.bin) % 4:
            self.bin.append(0)
        entry = {"buffer": 0, "byteOffset": len(self.bin), "byteLength": len(data)}
        if target is not None:
            entry["target"] = target
        self.bin.extend(data)
        self.doc["bufferViews"].append(entry)
        return len(self.doc["bufferViews"]) - 1

    def accessor(self, array, kind: str, target: int | None = None, bounds: bool = True) -> int:
        """An accessor of float32 (or uint32 ``SCALAR`` indices) ``array``, with min/max."""
        array = np.asarray(array)
        if kind == "indices":
            data = np.ascontiguousarray(array, dtype="<u4")
            entry = {"componentType": _UINT, "type": "SCALAR"}
        else:
            data = np.ascontiguousarray(array, dtype="<f4")
            entry = {"componentType": _FLOAT, "type": kind}
        entry.update(bufferView=self.view(data.tobytes(), target), count=int(len(data)))
        if bounds:
            flat = data.reshape(len(data), -1)
            as_number = int if kind == "indices" else float
            entry["min"] = [as_number(x) for x in flat.min(axis=0)]
            entry["max"] = [as_number(x) for x in flat.max(axis=0)]
        self.doc["accessors"].append(entry)
        return len(self.doc["accessors"]) - 1

    def add(self, key: str, item: dict) -> int:
        self.doc[key].append(item)
        return len(self.doc[key]) - 1

    def glb(self) -> bytes:
        while len(self.bin) % 4:
            self.bin.append(0)
        self.doc["buffers"] = [{"byteLength": len(self.bin)}]
        doc = {k: v for k, v in self.doc.items() if v != [] or k in ("scenes", "nodes")}
        text = json.dumps(doc, separators=(",", ":")).encode("utf-8")
        text += b" " * (-len(text) % 4)
        length = 12 + 8 + len(text) + 8 + len(self.bin)
        return b"".join([struct.pack("<III", _GLB_MAGIC, 2, length), struct.pack("<II", len(text), _JSON_CHUNK), text,
                         struct.pack("<II", len(self.bin), _BIN_CHUNK), bytes(self.bin)])


def _xyzw(q) -> np.ndarray:
    """(w, x, y, z) -> glTF's (x, y, z, w)."""
    q = np.asarray(q, dtype=float)
    return np.concatenate([q[..., 1:], q[..., :1]], axis=-1)


def _primitive(builder: _Builder, arrays: dict, material: int) -> dict:
    attributes = {name: builder.accessor(arrays[name], "VEC3", _ARRAY_BUFFER, bounds=name == "POSITION")
                  for name in ("POSITION", "NORMAL", "COLOR_0") if name in arrays}
    out = {"attributes": attributes, "material": material}
    if "indices" in arrays:
        out["indices"] = builder.accessor(arrays["indices"], "indices", _ELEMENT_ARRAY_BUFFER)
    if "mode" in arrays:
        out["mode"] = arrays["mode"]
    return out


def arrow_arrays(direction, length: float) -> dict:
    """The window's arrow (:func:`app.scene.meshes.unit_arrow`) along ``direction`` (world), ``length`` m."""
    from ..scene.actors import completing_axes
    from ..scene.meshes import unit_arrow

    d = np.asarray(direction, dtype=float)
    d = d / np.linalg.norm(d)
    frame = np.column_stack([d, *completing_axes(d, 2)])
    arrow = unit_arrow().triangulate().compute_normals(cell_normals=True, point_normals=False, auto_orient_normals=True)
    arrow.points = np.asarray(arrow.points) @ (frame * length).T
    arrow = arrow.compute_normals(cell_normals=True, point_normals=False, auto_orient_normals=True)
    arrow.cell_data["rgb"] = np.full((arrow.n_cells, 3), 255, dtype=np.uint8)
    arrays = surface_arrays(arrow)
    del arrays["COLOR_0"]
    return arrays


def axes_arrays(length: float) -> dict:
    """The body's x, y, z axes as three coloured segments (glTF LINES), as in the window."""
    from ..scene.style import AXIS_COLORS

    points = np.array([[-1, 0, 0], [1, 0, 0], [0, -1, 0], [0, 1, 0], [0, 0, -1], [0, 0, 1]], float) * length
    colors = srgb_to_linear(np.repeat(np.asarray(AXIS_COLORS, dtype=float), 2, axis=0))
    return {"POSITION": points, "COLOR_0": colors, "mode": 1}


def build_glb(scenario, samples: Samples, keys: Keys, extras: dict | None = None) -> bytes:
    """The .glb of a run: root (Z-up to Y-up) > body (mesh, axes; animated) and the L arrow."""
    from ..scene.meshes import body_mesh
    from ..scene.style import L_COLOR

    from .. import __version__

    body = scenario.rigid_body
    mesh = body_mesh(body)
    radius = float(np.max(np.linalg.norm(np.asarray(mesh.points), axis=1)))
    b = _Builder()
    b.doc["asset"] = {"version": "2.0", "generator": f"Tumble {__version__}"}
    body_material = b.add("materials", {"name": "body (coloured by axis)", "pbrMetallicRoughness": {
        "baseColorFactor": [1.0, 1.0, 1.0, 1.0], "metallicFactor": 0.0, "roughnessFactor": BODY_ROUGHNESS}})
    lines_material = b.add("materials", {"name": "body axes", "pbrMetallicRoughness": {
        "baseColorFactor": [1.0, 1.0, 1.0, 1.0], "metallicFactor": 0.0, "roughnessFactor": 1.0},
        "extensions": {"KHR_materials_unlit": {}}})
    b.doc["extensionsUsed"] = ["KHR_materials_unlit"]
    body_mesh_index = b.add("meshes", {"name": "body", "primitives": [_primitive(b, surface_arrays(mesh), body_material)]})
    axes_mesh = b.add("meshes", {"name": "body axes", "primitives": [_primitive(b, axes_arrays(AXES_RADII * radius),
                                                                                  lines_material)]})
    rot, tr = keys.rotation, keys.translation
    q0, c0 = samples.q[0], samples.c[0]
    axes_node = b.add("nodes", {"name": "body_axes", "mesh": axes_mesh})
    body_node = b.add("nodes", {"name": BODY_NODE, "mesh": body_mesh_index, "children": [axes_node],
                                "rotation": [float(x) for x in _xyzw(q0)],
                                "translation": [float(x) for x in c0]})
    children = [body_node]
    arrow_node = None
    if not scenario.applied_loads.has_torque and np.linalg.norm(samples.L) > 0:
        arrow_material = b.add("materials", {"name": "L angular momentum", "pbrMetallicRoughness": {
            "baseColorFactor": [*map(float, srgb_to_linear(hex_rgb(L_COLOR))), 1.0], "metallicFactor": 0.0,
            "roughnessFactor": 0.6}})
        arrow_mesh = b.add("meshes", {"name": "L arrow", "primitives": [
            _primitive(b, arrow_arrays(samples.L, L_ARROW_RADII * radius), arrow_material)]})
        arrow_node = b.add("nodes", {"name": "L_angular_momentum", "mesh": arrow_mesh,
                                     "translation": [float(x) for x in c0]})
        children.append(arrow_node)
    root = b.add("nodes", {"name": ROOT_NODE, "rotation": [float(x) for x in _xyzw(Z_UP_TO_Y_UP)],
                           "children": children})
    b.add("scenes", {"name": default_title(scenario), "nodes": [root], "extras": extras or {}})
    tau = samples.tau
    rotation_times = b.accessor(tau[rot], "SCALAR")
    rotation_values = b.accessor(_xyzw(samples.q[rot]), "VEC4", bounds=False)
    samplers = [{"input": rotation_times, "output": rotation_values, "interpolation": "LINEAR"}]
    channels = [{"sampler": 0, "target": {"node": body_node, "path": "rotation"}}]
    if keys.moves and len(tr):
        times = b.accessor(tau[tr], "SCALAR")
        values = b.accessor(samples.c[tr], "VEC3", bounds=False)
        for node in [body_node] + ([arrow_node] if arrow_node is not None else []):
            samplers.append({"input": times, "output": values, "interpolation": "LINEAR"})
            channels.append({"sampler": len(samplers) - 1, "target": {"node": node, "path": "translation"}})
    b.doc["animations"] = [{"name": "flip", "samplers": samplers, "channels": channels}]
    return b.glb()


# ------------------------------------------------------------------------------------- exporting


@dataclass(frozen=True)
class GltfResult:
    """What :func:`export_gltf` wrote: the path, its bytes, the plan, the keys and the page's data."""

    path: Path
    bytes: int
    plan: GltfPlan
    keys: Keys
    samples: Samples = field(repr=False)
    seconds: float = 0.0


def why_it_flips(scenario, flips) -> tuple:
    """The page's two lines under the title: what the scenario is, and why it flips (or does not)."""
    from ..physics.body import has_intermediate_axis

    first = scenario.description.strip() or default_title(scenario)
    moments = scenario.rigid_body.principal()[0]
    if len(flips):
        second = ("A spin near the intermediate axis is unstable: a wobble too small to see grows until the body "
                  "turns over, then back again. Nothing pushes it: it keeps its angular momentum and its energy.")
    elif has_intermediate_axis(moments):
        second = ("This spin keeps close to the easiest or the hardest axis, where a small wobble stays small: "
                  "it wobbles but does not flip.")
    else:
        second = "Two of this body's moments are equal: it has no intermediate axis, so it wobbles but never flips."
    return first, second


def page_data(scenario, plan: GltfPlan, samples: Samples, keys: Keys) -> dict:
    """What the page needs besides the .glb: title, the two lines, the clock's knots
    (animation time against simulated time), the flips, the trail's tip and the camera."""
    from ..scene.body_scene import (CAMERA_DIRECTION, FRAMED_RADII, GRID_DEPTH, GRID_HALF_CELLS, TRAIL_TIP, VIEW_ANGLE,
                                    view_direction)
    from ..scene.meshes import nice_spacing
    from ..scene.style import BACKGROUND, GRID_COLOR, TRAIL_COLOR
    from .timeline import TRAIL_SECONDS

    body = scenario.rigid_body
    k = samples.knots
    R0 = quat.to_matrix(samples.q[0])
    view = view_direction([R0 @ samples.w[0], samples.L])
    if not np.all(np.isfinite(view)):  # pragma: no cover
        view = np.asarray(CAMERA_DIRECTION) / np.linalg.norm(CAMERA_DIRECTION)
    why = why_it_flips(scenario, samples.flips)
    tip = body.intermediate_axis * TRAIL_TIP * keys.radius
    count = min(TRAIL_MAX_POINTS, int((plan.end - plan.start) / TRAIL_SPACING_S) + 1)
    picked = np.unique(np.searchsorted(samples.t, np.linspace(plan.start, plan.end, max(count, 2))).clip(0, len(samples.t) - 1))
    trail = quat.rotate(samples.q[picked], tip)
    r = keys.radius
    return {
        "title": plan.title, "why": list(why), "duration": plan.duration, "speed": plan.speed,
        "start": plan.start, "end": plan.end,
        "clock": {"tau": [float(x) for x in samples.tau[k]], "t": [float(x) for x in samples.t[k]]},
        "flips": [float(x) for x in samples.flips],
        "radius": r, "tip": [float(x) for x in tip],
        "trailSeconds": TRAIL_SECONDS, "trailPoints": [round(float(x), 7) for x in trail.ravel()],
        "trailTau": [round(float(x), 6) for x in samples.tau[picked]],
        "trailT": [round(float(x), 6) for x in samples.t[picked]],
        "centre": [float(x) for x in samples.c[0]], "gridSpacing": nice_spacing(r), "gridHalfCells": GRID_HALF_CELLS,
        "gridDepth": GRID_DEPTH * r, "view": [float(x) for x in view], "framedRadii": FRAMED_RADII,
        "viewAngle": VIEW_ANGLE, "background": BACKGROUND, "grid": GRID_COLOR, "trail": TRAIL_COLOR,
        "keys": int(len(keys.rotation)), "keyError": keys.rotation_error, "rootNode": ROOT_NODE, "bodyNode": BODY_NODE,
    }


def export_gltf(scenario, out, *, duration=None, speed=1.0, start=0.0, slow_flips=None, fps=None, size=None,
                progress=None) -> GltfResult:
    """Write ``out`` (.glb: the binary glTF; .html: the page that plays it) for ``scenario``;
    see :func:`plan_gltf` for the settings. Written atomically: a failure leaves nothing."""
    import time

    began = time.perf_counter()
    plan = plan_gltf(scenario, out, duration=duration, speed=speed, start=start, slow_flips=slow_flips,
                     fps=fps, size=size)
    samples = sample_run(scenario, plan, progress=progress)
    from ..scene.meshes import body_radius

    keys = choose_keys(samples, body_radius(scenario.rigid_body))
    data = page_data(scenario, plan, samples, keys)
    glb = build_glb(scenario, samples, keys, extras={"tumble": {k: data[k] for k in ("title", "why", "speed",
                                                                                       "start", "end", "flips")}})
    if plan.format == "glb":
        payload = glb
    else:
        from .page import viewer_page

        payload = viewer_page(glb, data).encode("utf-8")
    with atomic_path(plan.out) as tmp:
        tmp.write_bytes(payload)
    return GltfResult(path=plan.out, bytes=len(payload), plan=plan, keys=keys, samples=samples,
                      seconds=time.perf_counter() - began)
