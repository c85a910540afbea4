"""Two bodies side by side in one scene, each labelled: the compare view and its export.
GUI thread only (or the export's rendering thread owning an off-screen plotter).

Each body is a :class:`~app.scene.RigidBodyScene` (the main view's drawing, arrows and
trail included) posed at its simulated centre of mass plus a fixed offset, so the two
sit apart across the screen as the default camera sees them. This class owns what the
two share: one floor grid, the camera (following the midpoint) and the labels that say
which integrator drives which body.

Usage::

    scene = CompareScene(plotter)
    scene.set_bodies(body, center, w0, labels=("euler, dt 1 ms", "splitting, dt 1 ms"))
    scene.set_poses([(c_a, q_a, w_a, L_a, trail_q_a, trail_c_a), (c_b, ...)])   # each frame
    plotter.render()
"""

from __future__ import annotations

import numpy as np
import pyvista as pv

from ..physics.body import Body
from . import meshes
from .actors import QUIET, FloorGrid, aim_camera, shift_camera
from .body_scene import CAMERA_DIRECTION, GRID_DEPTH, GRID_HALF_CELLS, RigidBodyScene
from .style import BACKGROUND, tone

#: centre-to-centre distance of the two bodies, in body radii (arrows reach 2.1 radii)
SEPARATION = 5.0
#: the camera frames this half-width and half-height around the midpoint, in body radii:
#: both bodies with their arrows (2.1 radii), and the labels above them
FRAME_HALF_WIDTH = 0.5 * SEPARATION + 2.4
FRAME_HALF_HEIGHT = 3.2
#: vertical view angle of the camera (deg)
VIEW_ANGLE = 30.0
#: labels float this far above each body's centre, in body radii
LABEL_HEIGHT = 2.6
#: label font size (points) and the colour of each side (plots use the same)
LABEL_FONT = 15
SIDE_COLORS = ("#58a6ff", "#f0883e")


def side_direction(direction=CAMERA_DIRECTION, up=(0.0, 0.0, 1.0)) -> np.ndarray:
    """Unit vector pointing to the right of the screen for a camera looking along
    ``-direction`` with ``up`` up (world frame): the axis the two bodies are spread along."""
    d = np.asarray(direction, dtype=float)
    d = d / np.linalg.norm(d)
    right = np.cross(-d, np.asarray(up, dtype=float))
    return right / np.linalg.norm(right)


class CompareScene:
    """Two tumbling bodies, offset side by side, under one camera.

    Parameters
    ----------
    plotter
        Any pyvista plotter (``pyvistaqt.QtInteractor``, ``pv.Plotter(off_screen=True)``).
    follow
        Move the camera with the midpoint of the two centres of mass.
    trail
        Draw each body's trail of the intermediate axis' tip and its centre-of-mass path.

    Thread: GUI thread (or the export's rendering thread).
    """

    #: the bodies' label colours, in order
    COLORS = SIDE_COLORS

    def __init__(self, plotter, *, follow: bool = True, trail: bool = True):
        self.plotter = plotter
        self.follow = follow
        # each body scene leaves the camera alone: this class moves it for both
        self.scenes = tuple(RigidBodyScene(plotter, follow=False, trail=trail) for _ in range(2))
        self.offsets = np.zeros((2, 3))
        self.radius = 1.0
        self._grid: FloorGrid | None = None
        self._labels: list = []
        self._focus = np.zeros(3)
        #: where each label stands from its body's centre (world): straight up by LABEL_HEIGHT radii
        self._label_lift = np.array([0.0, 0.0, LABEL_HEIGHT])
        self._view = np.asarray(CAMERA_DIRECTION, dtype=float) / np.linalg.norm(CAMERA_DIRECTION)
        plotter.set_background(tone(BACKGROUND))

    # ------------------------------------------------------------------ building

    def set_bodies(self, body: Body, center=(0.0, 0.0, 0.0), w0=None, labels=("A", "B"),
                   reset_camera: bool = True, q0=None) -> None:
        """(Re)build the bodies (the same ``body``, starting at ``center`` + their offsets,
        spinning at ``w0`` from ``q0``), labelled ``labels`` in :attr:`COLORS`; they sit apart in
        a row across the default view, which is the main view's for that start."""
        self.clear()
        center = np.asarray(center, dtype=float)
        for scene in self.scenes:
            scene.set_body(body, center=center, w0=w0, reset_camera=False, q0=q0)
            # one shared grid, under the pair, instead of one per body
            scene.actors["grid"].SetVisibility(False)
        r = self.radius = self.scenes[0].radius
        self._label_lift = np.array([0.0, 0.0, LABEL_HEIGHT * r])
        self._view = self.scenes[0].view
        n = len(self.scenes)
        self.offsets = np.outer(np.arange(n) - 0.5 * (n - 1), side_direction(self._view) * SEPARATION * r)
        self._grid = FloorGrid(self.plotter, meshes.nice_spacing(r), 2 * GRID_HALF_CELLS * max(1, n // 2),
                               GRID_DEPTH * r, center)
        self._labels = [self._add_label(text, color) for text, color in zip(labels, self.COLORS)]
        q0 = np.array([1.0, 0.0, 0.0, 0.0]) if q0 is None else np.asarray(q0, dtype=float)
        self.set_poses([(center, q0, w0, None, None, None)] * n)
        self._focus = center.copy()
        if reset_camera:
            self.reset_camera(center)

    def _add_label(self, text: str, color: str):
        from vtkmodules.vtkRenderingCore import vtkTextActor

        actor = vtkTextActor()
        actor.SetInput(text)
        prop = actor.GetTextProperty()
        prop.SetFontSize(LABEL_FONT)
        prop.SetColor(pv.Color(tone(color)).float_rgb)
        prop.BoldOn()
        prop.SetJustificationToCentered()
        prop.SetVerticalJustificationToBottom()
        prop.SetBackgroundColor(pv.Color(tone(BACKGROUND)).float_rgb)
        prop.SetBackgroundOpacity(0.65)
        actor.GetPositionCoordinate().SetCoordinateSystemToWorld()
        self.plotter.add_actor(actor, **QUIET)
        return actor

    def set_labels(self, labels) -> None:
        """Change the label texts (integrator and step of each side)."""
        for actor, text in zip(self._labels, labels):
            actor.SetInput(text)

    def set_label_size(self, points: int) -> None:
        """Font size of the labels (the export scales them with the frame)."""
        for actor in self._labels:
            actor.GetTextProperty().SetFontSize(int(points))

    @property
    def labels(self) -> tuple:
        return tuple(actor.GetInput() for actor in self._labels)

    def clear(self) -> None:
        """Remove every actor this scene added."""
        for scene in self.scenes:
            scene.clear()
        for actor in [self._grid and self._grid.actor, *self._labels]:
            if actor is not None:
                self.plotter.remove_actor(actor, render=False)
        self._grid = None
        self._labels = []

    def camera_distance(self) -> float:
        """How far back (m) the camera must be to frame the pair in the plotter's current
        shape: a narrow view is limited by the width, a wide one by the height."""
        width, height = self.plotter.window_size
        aspect = max(width, 1) / max(height, 1)
        tan_half = np.tan(np.radians(VIEW_ANGLE / 2))
        return self.radius * max(FRAME_HALF_HEIGHT / tan_half, FRAME_HALF_WIDTH / (tan_half * aspect))

    def reset_camera(self, center=None) -> None:
        """Look at the midpoint of the pair (``center``: their simulated centre) from the
        default direction, far enough back for both bodies, their arrows and labels."""
        center = self._focus if center is None else np.asarray(center, dtype=float)
        d = self._view
        aim_camera(self.plotter, center, center + self.camera_distance() * d, (0.0, 0.0, 1.0), VIEW_ANGLE)
        self._focus = center.copy()

    # ------------------------------------------------------------------ toggles

    def set_follow(self, on: bool) -> None:
        self.follow = bool(on)

    def set_trail_visible(self, on: bool) -> None:
        for scene in self.scenes:
            scene.set_trail_visible(on)

    @property
    def trail_visible(self) -> bool:
        return self.scenes[0].trail_visible

    # ------------------------------------------------------------------ each frame

    def set_poses(self, poses) -> None:
        """Pose both bodies for one frame.

        ``poses`` holds two tuples ``(c, q, w_body, L_world, trail_q, trail_c)`` in the
        simulation's own world frame, as :meth:`RigidBodyScene.set_pose` takes them (the
        trails may be None); each is drawn shifted by its side's offset.
        """
        centres = []
        for scene, offset, label, (c, q, w, L, trail_q, trail_c) in zip(
                self.scenes, self.offsets, self._labels or [None] * len(self.scenes), poses):
            c = np.asarray(c, dtype=float) + offset
            if trail_c is not None and len(trail_c):
                trail_c = np.asarray(trail_c, dtype=float) + offset
            scene.set_pose(c, q, w, L, trail_q=trail_q, trail_c=trail_c)
            if label is not None:
                label.GetPositionCoordinate().SetValue(*(c + self._label_lift))
            centres.append(c)
        if self.follow and centres:
            self._follow(np.mean(centres, axis=0))  # of two: their midpoint

    def _follow(self, mid: np.ndarray) -> None:
        self._focus = shift_camera(self.plotter, self._focus, mid)
        if self._grid is not None:  # as in the main view: the grid stays under the pair
            self._grid.follow(mid)
