"""The windows ``tumble gui --view NAME`` and ``bench --gui --view NAME`` open, read from the one registry of views (app.views); no Qt imported here."""

from __future__ import annotations

import importlib

from ..views import get_view


def view_factory(name: str):
    """Import and return the view's window class (``ViewSpec.window``, "module:Class"): a
    ``QMainWindow`` subclass built as ``factory(scenario, paused=..., persist=...)`` exposing
    ``worker``, the signal ``first_frame_drawn`` and the counter ``frames_drawn``."""
    module, _, attr = get_view(name).window.partition(":")
    return getattr(importlib.import_module(module), attr)
