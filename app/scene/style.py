"""Colours and sizes shared by the 3D scene, the plots and the export.

The colours here are the dark scheme's (:data:`~app.scene.palette.DARK`): each one names a role. A
drawing site passes them through :func:`~app.scene.palette.tone` to draw the scheme in use.
"""

from __future__ import annotations

import functools

from .palette import DARK, current, tone  # noqa: F401 - re-exported for the drawing sites

#: body x, y, z (and the plot curves of x, y, z components): muted red, green, blue (RGB 0-1)
AXIS_COLORS = ((0.90, 0.36, 0.33), (0.40, 0.78, 0.42), (0.30, 0.58, 0.95))
#: brightness of a face whose normal points along the negative axis
NEGATIVE_SHADE = 0.55
#: hex forms for Qt / pyqtgraph
AXIS_HEX = tuple("#%02x%02x%02x" % tuple(round(255 * c) for c in rgb) for rgb in AXIS_COLORS)
#: angular velocity arrow (moves with the body)
OMEGA_COLOR = "#ffb13b"
#: angular momentum arrow (fixed in space for a torque-free body)
L_COLOR = "#d58cff"
#: trail of the intermediate axis tip, and the intermediate-axis marker
TRAIL_COLOR = "#f5e663"
#: flight path of the centre of mass
PATH_COLOR = "#8b949e"
#: floor grid
GRID_COLOR = "#4a5361"
#: scene background, bottom and top of the gradient
BACKGROUND = "#16191e"
BACKGROUND_TOP = "#2b313b"
#: text in the scene
TEXT_COLOR = "#c9d1d9"


@functools.lru_cache(maxsize=1)
def text_font_file() -> str | None:
    """DejaVu Sans, as matplotlib ships it (so VTK text can draw ω, ², ₀), or None.

    VTK's built-in fonts cover Latin-1 only; the plots already use this face.
    """
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("matplotlib")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / "mpl-data" / "fonts" / "ttf" / "DejaVuSans.ttf"
        if path.is_file():
            return str(path)
    return None


def use_font_file(text_property) -> None:
    """Draw a vtkTextProperty in :func:`text_font_file` where there is one."""
    path = text_font_file()
    if path is not None:
        text_property.SetFontFamily(4)  # VTK_FONT_FILE
        text_property.SetFontFile(path)
