"""The windows ``tumble gui --view NAME`` and ``bench --gui --view NAME`` open, read from the one registry of views (app.views); no Qt imported here."""

from __future__ import annotations

import importlib

from ..views import get_view


def view_factory(name: str):
    """Import and return the view's window class (``ViewSpec.window``, "module:Class"): a
    ``QMainWindow`` subclass built as ``factory(scenario, paused=..., persist=...)`` exposing
    ``worker``, the signal ``first_frame_drawn`` and the counter ``frames_drawn``."""
    spec = get_view(name)
    module, _, attr = spec.window.partition(":")
    window = getattr(importlib.import_module(module), attr)
    if window.VIEW == spec.name:
        return window
    # a view that names another view's window (it needs no widgets of its own): that window,
    # showing this view (its scenes, settings prefix, title and View menu check)
    return type(window.__name__, (window,), {"VIEW": spec.name, "VIEW_TITLE": spec.title,
                                             "__module__": window.__module__})
