"""What every scene shares: named actors in one plotter, user matrices, polylines, the camera."""

from __future__ import annotations

import numpy as np
import pyvista as pv

from ..physics.body import Body
from . import meshes
from .style import BACKGROUND, BACKGROUND_TOP, GRID_COLOR, tone

#: keywords for adding an actor while a scene is built: no camera reset, no render, no picking
QUIET = dict(reset_camera=False, render=False, pickable=False)


def pose_matrix(linear=None, offset=None) -> np.ndarray:
    """The 4x4 user matrix of an actor: ``linear`` (3, 3; default the identity) then a shift
    by ``offset`` (3,; default none)."""
    m = np.eye(4)
    if linear is not None:
        m[:3, :3] = linear
    if offset is not None:
        m[:3, 3] = offset
    return m


def completing_axes(unit: np.ndarray, preferred: int) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors ``b``, ``c`` that make ``(unit, b, c)`` a right-handed orthonormal frame,
    ``b`` normal to world axis ``preferred`` (to the y axis where ``unit`` lies near that
    axis, within about 26 deg); ``unit`` is a unit vector."""
    helper = np.eye(3)[preferred] if abs(unit[preferred]) < 0.9 else np.array([0.0, 1.0, 0.0])
    b = np.cross(helper, unit)
    b /= np.linalg.norm(b)
    return b, np.cross(unit, b)


def fill_polyline(poly: pv.PolyData, points: np.ndarray) -> None:
    """Move a fixed-size polyline onto ``points`` (newest last), padding with the oldest."""
    pts = poly.points  # written in place: no new array each frame
    n = len(pts)
    points = points[-n:]
    pts[: n - len(points)] = points[0]
    pts[n - len(points):] = points
    poly.points = pts  # marks the points modified


def aim_camera(plotter, focus: np.ndarray, position: np.ndarray, up, view_angle: float) -> None:
    """Place ``plotter``'s camera at ``position`` looking at ``focus`` (world)."""
    cam = plotter.camera
    cam.focal_point = tuple(focus)
    cam.position = tuple(position)
    cam.up = tuple(up)
    cam.view_angle = view_angle
    plotter.reset_camera_clipping_range()


def shift_camera(plotter, focus: np.ndarray, new_focus: np.ndarray) -> np.ndarray:
    """Move the camera's two ends by ``new_focus - focus`` (following a body keeps the
    user's turn and zoom); returns the focus now looked at."""
    delta = new_focus - focus
    if not np.any(delta):
        return focus
    cam = plotter.camera
    cam.focal_point = tuple(np.asarray(cam.focal_point) + delta)
    cam.position = tuple(np.asarray(cam.position) + delta)
    plotter.reset_camera_clipping_range()
    return new_focus.copy()


class FloorGrid:
    """A floor grid ``depth`` below a point, moved across in whole cells so that its lines
    appear fixed in the world while the point (a body, a pair of bodies) flies."""

    def __init__(self, plotter, spacing: float, half_cells: int, depth: float, center) -> None:
        self.spacing = spacing
        self.depth = depth
        self.actor = plotter.add_mesh(meshes.floor_grid(spacing, half_cells), color=tone(GRID_COLOR), line_width=1,
                                      lighting=False, **QUIET)
        self.origin = np.array([0.0, 0.0, center[2] - depth])
        self.actor.user_matrix = pose_matrix(offset=self.origin)

    def follow(self, c: np.ndarray) -> None:
        """Keep the grid under ``c`` (world), moving it only by whole cells."""
        origin = np.array([*(np.round(c[:2] / self.spacing) * self.spacing), c[2] - self.depth])
        if np.any(origin != self.origin):
            self.origin = origin
            self.actor.user_matrix = pose_matrix(offset=origin)


class SceneActors:
    """Named actors added to one plotter for one body: listed by :attr:`actors`, removed
    together by :meth:`clear`. Thread: GUI thread (or the thread owning an off-screen plotter)."""

    def __init__(self, plotter):
        self.plotter = plotter
        self._actors: dict = {}
        self.body: Body | None = None

    def clear(self) -> None:
        """Remove every actor this scene added."""
        for actor in self._actors.values():
            self.plotter.remove_actor(actor, render=False)
        self._actors.clear()
        self.body = None

    @property
    def actors(self) -> dict:
        """Name -> actor."""
        return dict(self._actors)


class TrailScene(SceneActors):
    """A scene with a background, a follow switch and trails (the actors named in
    ``TRAIL_ACTORS``) that can be hidden; the body and Poinsot scenes build on it."""

    #: the actors :meth:`set_trail_visible` shows and hides
    TRAIL_ACTORS: tuple = ()

    def __init__(self, plotter, *, follow: bool, trail: bool, gradient: bool):
        super().__init__(plotter)
        self.follow = bool(follow)
        self._trail_on = bool(trail)
        self._arrow = meshes.unit_arrow()
        plotter.set_background(tone(BACKGROUND), top=tone(BACKGROUND_TOP) if gradient else None)

    def set_follow(self, on: bool) -> None:
        self.follow = bool(on)

    def set_trail_visible(self, on: bool) -> None:
        self._trail_on = bool(on)
        for name in self.TRAIL_ACTORS:
            if name in self._actors:
                self._actors[name].SetVisibility(self._trail_on)

    @property
    def trail_visible(self) -> bool:
        return self._trail_on


class GhostActors(SceneActors):
    """An exact ghost's actors: hidden until :meth:`set_visible`, posed by ``set_pose(c, q,
    w_body)`` from the closed-form solution (:class:`~app.scene.ghost.GhostBody`,
    :class:`~app.scene.poinsot.PoinsotGhost`)."""

    def __init__(self, plotter):
        super().__init__(plotter)
        self.visible = False

    def set_body(self, body: Body) -> None:
        """(Re)build the ghost's actors for ``body`` (hidden if the ghost is off)."""
        self.clear()
        self.body = body
        self._add_actors(body)
        self.set_visible(self.visible)

    def _add_actors(self, body: Body) -> None:
        """Add the ghost's actors for ``body`` to :attr:`_actors` (each ghost draws its own)."""
        raise NotImplementedError

    def set_visible(self, on: bool) -> None:
        self.visible = bool(on)
        for actor in self._actors.values():
            actor.SetVisibility(self.visible)
