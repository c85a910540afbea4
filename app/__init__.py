"""Tumble: see and measure the free rotation of a rigid body.

From Python (the same code as the ``tumble`` command; see :mod:`tumble.api`)::

    import tumble
    sc = tumble.load("t-handle")
    run = tumble.simulate(sc, duration=5.0)
    run.t, run.omega, run.flips

``import tumble`` itself imports nothing heavy: each name below loads :mod:`tumble.api` on
first use, and nothing imports Qt, VTK, pyvista or matplotlib until something is drawn.
"""

import sys
import types

__version__ = "0.1.0"

#: the names of the API (tumble.api), loaded on first use
_API = ("ParameterError", "DivergenceError", "Scenario", "Run", "Fit", "presets", "samples", "load", "simulate",
        "inspect", "fit", "predict", "export", "render", "show", "stability", "audit", "audit_trajectory", "replay")
__all__ = ["__version__", *_API]


class _Package(types.ModuleType):
    """This package's module: a subpackage named like a function of the API (``tumble.export``,
    the export machinery) is not bound over the function when it is imported; it stays
    reachable as ``sys.modules["tumble.export"]`` and by ``from tumble.export import ...``."""

    def __setattr__(self, name, value):
        if name in _API and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name):
    if name in _API:
        # by name, not `from . import api`: every layer imports this package (for
        # __version__), and the API sits near the top of the layers
        import importlib

        return getattr(importlib.import_module(f"{__name__}.api"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_API))
