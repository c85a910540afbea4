"""The 3D scene: body meshes coloured by axis, arrows, trail, floor grid, follow camera, and
the polhode view. Built into any pyvista plotter (the window's ``QtInteractor`` or an
off-screen ``pv.Plotter`` for export). GUI thread only.

The names below are imported on first use: the colour schemes (:mod:`.palette`) are read by the
command line, which must not pay for pyvista's import to check ``--colours``.
"""

_LAZY = {"RigidBodyScene": ".body_scene", "body_mesh": ".meshes", "body_radius": ".meshes",
         "PolhodeScene": ".polhode"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
