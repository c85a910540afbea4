"""The 3D scene: body meshes coloured by axis, arrows, trail, floor grid, follow camera, and
the polhode view. Built into any pyvista plotter (the window's ``QtInteractor`` or an
off-screen ``pv.Plotter`` for export). GUI thread only."""

from .body_scene import RigidBodyScene  # noqa: F401
from .meshes import body_mesh, body_radius  # noqa: F401
from .polhode import PolhodeScene  # noqa: F401

