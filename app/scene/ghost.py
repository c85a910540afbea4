"""The exact ghost: a translucent copy of the body posed by the closed-form solution.

Drawn into the same plotter as the :class:`~app.scene.RigidBodyScene`, a little larger than
the body so that, while the two agree, it reads as a glass shell around it, and its own
axes as thin light lines, so that when the integrator drifts the two visibly part.
GUI thread only (or the thread owning an off-screen plotter).
"""

from __future__ import annotations

import numpy as np

from ..physics import quaternion as quat
from ..physics.body import Body
from . import meshes
from .actors import QUIET, GhostActors, pose_matrix
from .style import tone

#: the ghost is drawn this much larger than the body (a shell around it while they agree)
GHOST_SCALE = 1.06
#: its surface opacity, and its colour (edges and axes in the same colour, opaque)
GHOST_OPACITY = 0.22
GHOST_COLOR = "#dfe9f5"
#: the ghost's axes reach this far, in body radii (the body's own reach 1.3)
GHOST_AXES_LENGTH = 1.3


class GhostBody(GhostActors):
    """Translucent shell, feature edges and axes of ``body``, posed by :meth:`set_pose`.

    Hidden until :meth:`set_visible`. Actors (:attr:`actors`): ``shell``, ``edges``, ``axes``.
    Thread: GUI thread.
    """

    def __init__(self, plotter):
        super().__init__(plotter)
        # one translucent shell needs no sorting: plain blending instead of VTK's
        # order-independent transparency, whose extra full-window passes cost several
        # milliseconds per frame in software GL (about 20 -> 13 ms measured for the window)
        plotter.renderer.SetUseOIT(False)

    def _add_actors(self, body: Body) -> None:
        mesh = meshes.body_mesh(body)
        radius = float(np.max(np.linalg.norm(np.asarray(mesh.points), axis=1)))
        shell = mesh.copy()
        shell.points = np.asarray(shell.points) * GHOST_SCALE
        edges = shell.extract_feature_edges(feature_angle=35.0, boundary_edges=True, manifold_edges=False,
                                            non_manifold_edges=False)
        p = self.plotter
        # unlit: the shell is read by its outline and edges, and shading it under the scene's
        # five lights doubled its cost (CPU per render +4.3 ms lit, +2.0 ms unlit, measured)
        self._actors["shell"] = p.add_mesh(shell, color=tone(GHOST_COLOR), opacity=GHOST_OPACITY, lighting=False, **QUIET)
        self._actors["edges"] = p.add_mesh(edges, color=tone(GHOST_COLOR), opacity=0.75, line_width=1, lighting=False,
                                           **QUIET)
        self._actors["axes"] = p.add_mesh(meshes.axes_lines(GHOST_AXES_LENGTH * radius), color=tone(GHOST_COLOR),
                                          line_width=1, lighting=False, **QUIET)

    def set_pose(self, c, q, w_body=None) -> None:
        """Pose at centre of mass ``c`` (world) and orientation ``q`` (body to world);
        ``w_body`` is not needed here (the Poinsot ghost uses it)."""
        m = pose_matrix(quat.to_matrix(np.asarray(q, dtype=float)), np.asarray(c, dtype=float))
        for actor in self._actors.values():
            actor.user_matrix = m
