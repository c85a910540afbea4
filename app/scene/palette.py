"""The colour schemes: one :class:`Palette` per scheme ("dark", the default; "projector", light
for a lit room), the scheme in use, and the WCAG contrast every text and line colour is held to.

Every colour the app draws is declared once in the dark scheme's terms (``style.py`` and the
modules' own constants hold the dark values). A drawing site passes a declared colour through
:func:`tone`, which returns the same role's colour in the scheme in use: the projector scheme
lists, for each dark colour, what replaces it (:attr:`Palette.roles`). Colours no scheme names
(the body's faces) pass through unchanged. No Qt, no pyvista here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: the schemes' names, the default first
SCHEME_NAMES = ("dark", "projector")
DEFAULT_SCHEME = "dark"
#: WCAG 2.x level AA: the least contrast of normal text against its background; the
#: projector scheme holds its lines and curves to it too (issue 34)
AA_TEXT = 4.5


@dataclass(frozen=True)
class Palette:
    """One colour scheme: named roles -> "#rrggbb".

    ``roles`` holds every role (the names are :data:`ROLES`' keys). ``light`` says whether the
    backgrounds are light (the Qt style's frame shades follow it).
    """

    name: str
    light: bool
    roles: dict = field(hash=False, compare=False)

    def __getattr__(self, name: str) -> str:
        roles = self.__dict__.get("roles", {})
        if name in roles:
            return roles[name]
        raise AttributeError(name)

    @property
    def axis(self) -> tuple:
        """The body x, y, z colours (hex)."""
        return (self.roles["axis_x"], self.roles["axis_y"], self.roles["axis_z"])

    @property
    def axis_rgb(self) -> tuple:
        """The body x, y, z colours as RGB 0-1."""
        return tuple(rgb01(c) for c in self.axis)


#: role -> (what it colours, against which background role, "text" or "line"; None: a surface
#: or a background, no contrast rule)
ROLES = {
    "background": ("the 3D scene's and the plots' background", None, None),
    "background_top": ("the top of the scene's gradient", None, None),
    "text": ("text over the scene and the plots", "background", "text"),
    "muted_text": ("hints, greyed text", "window", "text"),
    "error_text": ("errors, an unstable verdict", "window", "text"),
    "ok_text": ("a stable verdict, done", "window", "text"),
    "window": ("the widgets' window colour", None, None),
    "base": ("the widgets' fields", None, None),
    "button": ("buttons", None, None),
    "highlight": ("a selection, a link", None, None),
    "frame": ("group boxes' border", None, None),
    "overlay": ("the translucent labels over the scene (r, g, b)", None, None),
    "overlay_text": ("the labels' text over the scene", "overlay", "text"),
    "banner_text": ("presentation mode's big banner", "overlay", "text"),
    "grid": ("the floor grid and the Poinsot plane's lines", "background", "line"),
    "axis_x": ("body x axis and the x curves", "background", "line"),
    "axis_y": ("body y axis and the y curves", "background", "line"),
    "axis_z": ("body z axis and the z curves", "background", "line"),
    "omega": ("the ω arrow and curves", "background", "line"),
    "momentum": ("the L arrow and curves", "background", "line"),
    "trail": ("the trail, the intermediate axis' tip, the flip markers", "background", "line"),
    "path": ("the path of the centre of mass", "background", "line"),
    "kick": ("the kick markers, the herpolhode, the separatrix", "background", "line"),
    "ghost": ("the exact ghost (a translucent body, its wireframe, its plot curve)", "background", "line"),
    "side_a": ("compare view: side A", "background", "line"),
    "side_b": ("compare view: side B", "background", "line"),
    "engine_3": ("engines view: the third engine", "background", "line"),
    "engine_4": ("engines view: the fourth engine", "background", "line"),
    "track": ("the stability map's track", "background", "line"),
    "ellipsoid": ("Poinsot's and the polhode's ellipsoids (surfaces; a key entry)", "background", "line"),
    "ellipsoid_wire": ("the ellipsoids' wireframe", None, None),
    "polhode_surface": ("the polhode view's ellipsoid (a translucent surface under the curves)", None, None),
    "polhode_wire": ("the polhode view's wireframe", None, None),
    "plane": ("the invariable plane (a surface)", None, None),
    "family": ("the polhode family's curves", "background", "line"),
    "centre": ("Poinsot's centre marker", "background", "line"),
    "plane_key": ("the invariable plane's key entry", "background", "line"),
    "excluded": ("a report's excluded points", None, None),
}

DARK = Palette("dark", False, {
    "background": "#16191e", "background_top": "#2b313b", "text": "#c9d1d9", "muted_text": "#8b949e",
    "error_text": "#ff7b72", "ok_text": "#7ee787", "window": "#20242b", "base": "#181b20", "button": "#2c323b",
    "highlight": "#3d7bd9", "frame": "#39414c", "overlay": "#16191e", "overlay_text": "#e6edf3",
    "banner_text": "#ffd166", "grid": "#4a5361",
    "axis_x": "#e65c54", "axis_y": "#66c76b", "axis_z": "#4c94f2",
    "omega": "#ffb13b", "momentum": "#d58cff", "trail": "#f5e663", "path": "#8b949e", "kick": "#ff7b72",
    "ghost": "#dfe9f5", "side_a": "#58a6ff", "side_b": "#f0883e", "engine_3": "#3fb950", "engine_4": "#d2a8ff",
    "track": "#4dd0e1", "ellipsoid": "#7aa2d6", "ellipsoid_wire": "#7f93ab", "plane": "#3b4757",
    "family": "#9aabc2", "centre": "#e6edf3", "plane_key": "#8796a8", "excluded": "#9aa0a6",
    "polhode_surface": "#8aa0b8", "polhode_wire": "#5b6b80",
})

PROJECTOR = Palette("projector", True, {
    "background": "#ffffff", "background_top": "#e9eef5", "text": "#14181d", "muted_text": "#4f5863",
    "error_text": "#c0111f", "ok_text": "#0f6b2b", "window": "#f4f5f7", "base": "#fefefe", "button": "#e3e6ea",
    "highlight": "#0a5cc2", "frame": "#9aa3ad", "overlay": "#ffffff", "overlay_text": "#101317",
    "banner_text": "#8a3b00", "grid": "#6a7480",
    "axis_x": "#c62828", "axis_y": "#1b7a2e", "axis_z": "#1558b8",
    "omega": "#b34700", "momentum": "#7b1fa2", "trail": "#00727d", "path": "#4f5863", "kick": "#c0111f",
    "ghost": "#62738a", "side_a": "#0550ae", "side_b": "#a33c00", "engine_3": "#116329", "engine_4": "#6639ba",
    "track": "#00677a", "ellipsoid": "#3f6ea8", "ellipsoid_wire": "#3f5670", "plane": "#c9d3df",
    "family": "#3c5a78", "centre": "#101317", "plane_key": "#455d75", "excluded": "#6b7280",
    "polhode_surface": "#d3deeb", "polhode_wire": "#93a4b8",
})

SCHEMES = {p.name: p for p in (DARK, PROJECTOR)}

#: colours drawn in the dark scheme that are no role's own value but mean one (older literals)
ALIASES = {"#4d94f2": "axis_z", "#e5534b": "axis_x", "#57ab5a": "axis_y", "#539bf5": "axis_z", "#c69026": "trail",
           "#e6edf3": "overlay_text"}

_current = [DARK]
#: whether :func:`use` chose the scheme in this process (a command line's --colours): the
#: remembered choice then does not override it
_chosen = [False]


def current() -> Palette:
    """The palette in use (process-wide; the GUI thread and the export's renderer read it)."""
    return _current[0]


def check_scheme(name, flag: str = "--colours") -> str:
    """``name`` if it is a scheme's name (any case, spaces around ignored), else a
    :class:`~app.physics.errors.ParameterError` naming ``flag``, the value and the rule."""
    from ..physics.errors import ParameterError

    text = str(name).strip().lower()
    if text not in SCHEMES:
        raise ParameterError(flag, name, "be one of " + ", ".join(SCHEME_NAMES))
    return text


def use(name: str) -> Palette:
    """Make the scheme ``name`` the one in use (:func:`check_scheme` rules); returns the palette
    that was in use before."""
    before = _current[0]
    _current[0] = SCHEMES[check_scheme(name)]
    _chosen[0] = True
    return before


def chosen() -> bool:
    """Whether a scheme was chosen in this process (:func:`use`), rather than left at the default."""
    return _chosen[0]


def hex_of(colour) -> str:
    """``colour`` ("#rrggbb", "#rgb", or RGB 0-1) as "#rrggbb" in lower case."""
    if isinstance(colour, str):
        text = colour.strip().lower()
        if len(text) == 4 and text.startswith("#"):
            text = "#" + "".join(ch * 2 for ch in text[1:])
        return text
    return "#%02x%02x%02x" % tuple(int(round(255 * float(c))) for c in tuple(colour)[:3])


def rgb01(colour) -> tuple:
    """``colour`` as RGB 0-1."""
    text = hex_of(colour)
    return tuple(int(text[i:i + 2], 16) / 255.0 for i in (1, 3, 5))


def role_of(colour, palette: Palette = DARK) -> str | None:
    """The role whose colour in ``palette`` is ``colour`` (or an alias of the dark scheme), or None."""
    text = hex_of(colour)
    for role, value in palette.roles.items():
        if value == text:
            return role
    return ALIASES.get(text) if palette is DARK else None


def translate(colour, source: Palette, target: Palette):
    """``colour`` drawn in ``source``'s scheme -> the same role's colour in ``target`` (a hex
    string; RGB 0-1 stays RGB 0-1); a colour of no role is returned as it is."""
    if source is target:
        return colour
    try:
        role = role_of(colour, source)
    except (ValueError, TypeError, IndexError):
        return colour
    if role is None:
        return colour
    value = target.roles[role]
    return value if isinstance(colour, str) else rgb01(value)


def tone(colour):
    """A colour declared in the dark scheme's terms, in the scheme in use."""
    return translate(colour, DARK, current())


def relative_luminance(colour) -> float:
    """WCAG 2.x relative luminance of an sRGB colour (0 black .. 1 white).

    https://www.w3.org/TR/WCAG21/#dfn-relative-luminance
    """
    def linear(c):
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgb01(colour))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(a, b) -> float:
    """WCAG contrast ratio of two colours, (L1 + 0.05) / (L2 + 0.05) with L1 the lighter: 1 to 21.

    https://www.w3.org/TR/WCAG21/#dfn-contrast-ratio
    """
    la, lb = relative_luminance(a), relative_luminance(b)
    hi, lo = max(la, lb), min(la, lb)
    return (hi + 0.05) / (lo + 0.05)


def contrasts(palette: Palette) -> list:
    """(role, kind, ratio) of every text and line role of ``palette`` against its background role."""
    rows = []
    for role, (_what, against, kind) in ROLES.items():
        if against is not None:
            rows.append((role, kind, contrast_ratio(palette.roles[role], palette.roles[against])))
    return rows


class Role(str):
    """A colour declared in the dark scheme's terms that formats (``f"{c}"``, ``str(c)``) as
    the same role's colour in the scheme in use: a style sheet or rich text built when it is
    shown draws the scheme of that moment."""

    __slots__ = ()

    def __str__(self) -> str:
        return tone(str.__str__(self))

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


_HEX = re.compile(r"#[0-9a-fA-F]{6}\b")
_RGB = re.compile(r"rgba?\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)")


def translate_text(text: str, source: Palette = DARK, target: Palette | None = None) -> str:
    """``text`` (a style sheet, rich text) with every colour of a role in ``source``'s scheme,
    "#rrggbb" or "rgb(a)(r, g, b", written as that role's colour in ``target``'s (default: the
    scheme in use); an rgba colour keeps its alpha."""
    target = current() if target is None else target
    if source is target:
        return text

    def swap_hex(m):
        role = role_of(m.group(0), source)
        return m.group(0) if role is None else target.roles[role]

    def swap_rgb(m):
        rgb = tuple(int(g) for g in m.groups())
        role = role_of("#%02x%02x%02x" % rgb, source)
        if role is None:
            return m.group(0)
        r, g, b = (round(255 * c) for c in rgb01(target.roles[role]))
        return m.group(0).split("(")[0] + f"({r}, {g}, {b}"

    return _RGB.sub(swap_rgb, _HEX.sub(swap_hex, text))
