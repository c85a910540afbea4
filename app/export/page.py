"""The page that plays a run's .glb offline (``tumble export --out flip.html``): one HTML file.

The template (``viewer_page.html`` beside this module) gets the .glb as base64, the page's data
as JSON and the vendored viewer (three.js with GLTFLoader and OrbitControls, bundled as one
classic script in ``resources/viewer/three-viewer.min.js``, MIT: ``LICENSE-three.txt`` beside it)
inlined: the page asks no server for anything and needs no file beside it.
"""

from __future__ import annotations

import base64
import html
import json
from importlib import resources

import numpy as np

from ..physics import quaternion as quat
from ..simulation.worker import RECORD_INTERVAL_S
from .settings import default_title

#: the vendored viewer and its licence, in the package's resources
VIEWER_SCRIPT = ("viewer", "three-viewer.min.js")
VIEWER_LICENCE = ("viewer", "LICENSE-three.txt")
VIEWER_VERSION = ("viewer", "VERSION.txt")
#: the page's trail: a point every this much simulated time (s, the window's history), at most
#: TRAIL_MAX_POINTS over the whole span (thinned evenly past it)
TRAIL_SPACING_S = RECORD_INTERVAL_S
TRAIL_MAX_POINTS = 200_000


def _resource(parts) -> str:
    from ..scenario.files import RESOURCES_DIR

    return RESOURCES_DIR.joinpath(*parts).read_text(encoding="utf-8")


def _template() -> str:
    from ..scene.palette import translate_text

    # written in the dark scheme's colours: drawn in the scheme in use
    return translate_text(resources.files(__package__).joinpath("viewer_page.html").read_text(encoding="utf-8"))


def _script_safe(text: str) -> str:
    """Text that cannot close the ``<script>`` element it is inlined in."""
    return text.replace("</script", "<\\/script").replace("<!--", "<\\!--")


def viewer_page(glb: bytes, data: dict) -> str:
    """The page's HTML for ``glb`` (the run) and ``data`` (:func:`app.export.gltf.page_data`)."""
    fill = {
        "@@TITLE@@": html.escape(data["title"]),
        "@@WHY1@@": html.escape(data["why"][0]),
        "@@WHY2@@": html.escape(data["why"][1]),
        "@@VIEWER_VERSION@@": html.escape(_resource(VIEWER_VERSION).strip()),
        "@@VIEWER_LICENCE@@": _script_safe(_resource(VIEWER_LICENCE).replace("*/", "* /")),
        "@@DATA_JSON@@": _script_safe(json.dumps(data)),
        "@@GLB_BASE64@@": base64.b64encode(glb).decode("ascii"),
    }
    page = _template()
    viewer = _script_safe(_resource(VIEWER_SCRIPT))
    for key, value in fill.items():
        page = page.replace(key, value)
    # the viewer last: its own text is never searched for the markers above
    return page.replace("@@VIEWER_SCRIPT@@", viewer)


def notebook_iframe(page: str, height: int = 520) -> str:
    """``page`` in an ``<iframe srcdoc>`` (a notebook's output cell: no file, no server)."""
    return (f'<iframe srcdoc="{html.escape(page, quote=True)}" style="width:100%;height:{int(height)}px;border:0" '
            'sandbox="allow-scripts" title="Tumble: the flip, turning with the mouse"></iframe>')


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


def page_data(scenario, plan, samples, keys) -> dict:
    """What the page needs besides the .glb: title, the two lines, the clock's knots
    (animation time against simulated time), the flips, the trail's tip and the camera (the
    caller adds the names of the root and the body nodes, ``rootNode`` and ``bodyNode``)."""
    from ..scene.body_scene import (CAMERA_DIRECTION, FRAMED_RADII, GRID_DEPTH, GRID_HALF_CELLS, TRAIL_TIP, VIEW_ANGLE,
                                    view_direction)
    from ..scene.meshes import nice_spacing
    from ..scene.style import BACKGROUND, GRID_COLOR, TRAIL_COLOR, tone
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
        "viewAngle": VIEW_ANGLE, "background": tone(BACKGROUND), "grid": tone(GRID_COLOR), "trail": tone(TRAIL_COLOR),
        "keys": int(len(keys.rotation)), "keyError": keys.rotation_error,
    }
