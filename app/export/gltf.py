"""A run as glTF 2.0 (a binary .glb): the body's mesh, its turn and fall as keyframes, the fixed L arrow.

Call tree::

    export_gltf(scenario, settings)          # .glb, or .html through app.export.page
      plan_gltf                              # every number checked before any work
      keys.sample_run                        # the run on a fine grid of candidate keys
      keys.choose_keys                       # the fewest keys whose slerp stays within KEY_ERROR_RAD
      build_glb                              # nodes, meshes, one animation; bytes
      page.viewer_page                       # (.html) the .glb and the viewer in one page
      atomic_path                            # nothing half-written

The scene holds one root node that turns Tumble's Z-up world into glTF's Y-up (a rotation of
-90 degrees about x, :data:`Z_UP_TO_Y_UP`, made once here); under it the body's node carries the
simulation's own quaternions (body to world, in Tumble's world) as its rotation keyframes and the
centre of mass as its translation keyframes where the body moves, and the angular momentum arrow
stays fixed where L is (it is left out where the loads turn L). glTF has no line revealed over
time, so the intermediate axis' trail is not in the .glb: the page (:mod:`app.export.page`) draws
it from the same run's samples. Units: metres and seconds, as in Tumble.

Times: a key's glTF time is the time of video (``--speed`` simulated seconds per second, slowed
``--slow-flips`` times around each flip) at which the window's clip would show it. The keys are
chosen adaptively (:mod:`app.export.keys`) within :data:`~app.export.keys.KEY_ERROR_RAD` of the run.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..atomic import atomic_path, check_target
from ..physics.errors import ParameterError
from .keys import CANDIDATE_INTERVAL_S, KEY_ERROR_RAD, Keys, Samples, candidate_pieces, choose_keys, sample_run
from .settings import DEFAULT_DURATION, MAX_SPEED, MIN_SPEED, SPAN_SLACK, default_title, speed_to_fit

__all__ = ["GLTF_FORMATS", "KEY_ERROR_RAD", "MAX_KEYFRAMES", "GltfPlan", "GltfResult", "build_glb", "export_gltf",
           "gltf_format", "plan_gltf"]

#: glTF formats by file extension: the binary glTF itself, or the page that plays it
GLTF_FORMATS = {".glb": "glb", ".html": "html"}
#: the most keyframes an export may make (the candidates: every key is one of them)
MAX_KEYFRAMES = 2_000_000
#: Tumble's world (z up) to glTF's (y up): x stays, z becomes y, y becomes -z. (w, x, y, z)
Z_UP_TO_Y_UP = (math.sqrt(0.5), -math.sqrt(0.5), 0.0, 0.0)
#: the node names (three.js and Blender keep them as they are: no spaces, no dots)
ROOT_NODE, BODY_NODE = "tumble_world_z_up", "body"
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
    candidates = sum(candidate_pieces(knots)) + 1
    if candidates > MAX_KEYFRAMES:
        raise _too_many(duration if duration is not None else duration_x, candidates, end - start_x)
    return GltfPlan(out=path, format=fmt, start=start_x, end=end, speed=speed_x, knots=tuple(knots),
                    candidates=candidates, time_map=time_map, title=default_title(scenario))


def _too_many(duration, keys: int, span: float) -> ParameterError:
    return ParameterError("duration", duration,
                          f"make at most {MAX_KEYFRAMES:,} keyframes (a candidate every {CANDIDATE_INTERVAL_S * 1e3:g} ms "
                          f"of simulated time: here {keys:,} for {span:.6g} s): shorten it or lower the speed")




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
    from ..scene.style import AXIS_COLORS, tone

    points = np.array([[-1, 0, 0], [1, 0, 0], [0, -1, 0], [0, 1, 0], [0, 0, -1], [0, 0, 1]], float) * length
    colors = srgb_to_linear(np.repeat(np.asarray([tone(c) for c in AXIS_COLORS], dtype=float), 2, axis=0))
    return {"POSITION": points, "COLOR_0": colors, "mode": 1}


def build_glb(scenario, samples: Samples, keys: Keys, extras: dict | None = None) -> bytes:
    """The .glb of a run: root (Z-up to Y-up) > body (mesh, axes; animated) and the L arrow."""
    from ..scene.meshes import body_mesh
    from ..scene.style import L_COLOR, tone

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
            "baseColorFactor": [*map(float, srgb_to_linear(hex_rgb(tone(L_COLOR)))), 1.0], "metallicFactor": 0.0,
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
    from .page import page_data

    data = {**page_data(scenario, plan, samples, keys), "rootNode": ROOT_NODE, "bodyNode": BODY_NODE}
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

