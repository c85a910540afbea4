"""The one registry of views, read by the window, the export dialog and the command line (light: importing it loads no VTK)."""

from __future__ import annotations

from ..physics.errors import ParameterError
from .base import PaneSpec, ViewOption, ViewScene, ViewSpec  # noqa: F401

_VIEWS: dict[str, ViewSpec] = {}


def register(spec: ViewSpec) -> ViewSpec:
    """Add ``spec`` to the registry (``--view spec.name`` everywhere); returns it."""
    _VIEWS[spec.name] = spec
    return spec


def view_names() -> list[str]:
    """The registered views, in the order they were registered (main first)."""
    return list(_VIEWS)


def get_view(name: str) -> ViewSpec:
    """The view called ``name``, or :class:`ParameterError` naming ``--view`` and the known ones."""
    try:
        return _VIEWS[name]
    except (KeyError, TypeError):
        raise ParameterError("--view", name, "be one of " + ", ".join(_VIEWS)) from None


from . import main, poinsot, compare, stability, engines  # noqa: E402  (each defines its SPEC and imports nothing of this module)

for _module in (main, poinsot, compare, stability, engines):
    register(_module.SPEC)
