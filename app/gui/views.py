"""Registry of the windows ``tumble gui --view NAME`` can open (light: no Qt imported here).

A view is a ``QMainWindow`` subclass built as ``factory(scenario, paused=..., persist=...)``
that exposes ``worker`` (the :class:`~app.simulation.SimulationWorker`), the signal
``first_frame_drawn`` and the counter ``frames_drawn``. Later issues register theirs with
:func:`register_view` (e.g. ``poinsot``, ``stability``, ``compare``) in this module's table.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from ..physics.errors import ParameterError


@dataclass(frozen=True)
class ViewInfo:
    name: str
    target: str          # "package.module:Factory"
    description: str


_VIEWS: dict[str, ViewInfo] = {}


def register_view(name: str, target: str, description: str) -> None:
    """Make ``--view name`` open ``target`` ("module:factory", imported on use)."""
    _VIEWS[name] = ViewInfo(name, target, description)


def view_names() -> list[str]:
    return list(_VIEWS)


def resolve_view(name: str) -> ViewInfo:
    """The registered view, or :class:`ParameterError` naming the known ones."""
    try:
        return _VIEWS[name]
    except KeyError:
        raise ParameterError("--view", name, "be one of " + ", ".join(_VIEWS)) from None


def view_factory(name: str):
    """Import and return the view's factory (a QMainWindow subclass)."""
    module, _, attr = resolve_view(name).target.partition(":")
    return getattr(importlib.import_module(module), attr)


register_view("main", "app.gui.main_window:MainWindow",
              "parameter panel, 3D scene of the body, live plots of L, omega, drift and the polhode")
register_view("poinsot", "app.gui.poinsot_window:PoinsotWindow",
              "Poinsot's construction: the energy ellipsoid rolling on the invariable plane, polhode and "
              "herpolhode, beside the family of polhodes with the separatrices")
register_view("compare", "app.gui.compare_window:CompareWindow",
              "two integrators (or steps) on one scenario side by side, their energy and |L| drifts on shared plots")
register_view("stability", "app.gui.stability_window:StabilityWindow",
              "stability map of the body's spin axes (wander of omega), click a point to run that spin")
