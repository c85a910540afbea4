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

#: the vendored viewer and its licence, in the package's resources
VIEWER_SCRIPT = ("viewer", "three-viewer.min.js")
VIEWER_LICENCE = ("viewer", "LICENSE-three.txt")
VIEWER_VERSION = ("viewer", "VERSION.txt")


def _resource(parts) -> str:
    from ..scenario.files import RESOURCES_DIR

    return RESOURCES_DIR.joinpath(*parts).read_text(encoding="utf-8")


def _template() -> str:
    return resources.files(__package__).joinpath("viewer_page.html").read_text(encoding="utf-8")


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
