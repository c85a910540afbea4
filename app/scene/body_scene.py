"""The 3D scene of the tumbling body, built into any pyvista plotter. GUI thread only.

Works the same in the window's ``QtInteractor`` and in an off-screen ``pv.Plotter`` (the
export renders frames with it). Meshes are built once per body; every frame only sets
actor user matrices and moves the trail's points in place, so posing is cheap.

Usage::

    scene = RigidBodyScene(plotter)
    scene.set_body(scenario.rigid_body, center=scenario.position, w0=scenario.angular_velocity)
    scene.set_pose(c, q, w_body, L_world, trail_q=q_history)   # each frame
    plotter.render()
"""

from __future__ import annotations

import math

import numpy as np
import pyvista as pv

from ..physics import quaternion as quat
from ..physics.body import Body
from . import meshes
from .style import (
    AXIS_HEX,
    BACKGROUND,
    BACKGROUND_TOP,
    GRID_COLOR,
    L_COLOR,
    OMEGA_COLOR,
    TEXT_COLOR,
    PATH_COLOR,
    TRAIL_COLOR,
    use_font_file,
)

#: the omega arrow's length at the start, in body radii (it scales with |omega|); a radius
#: is the farthest surface point from the centre, so every arrow leaves the body
ARROW_LENGTH = 1.7
#: the L arrow's length, in body radii: longer than omega's, so that with omega along L (a
#: spin about a principal axis) L's head shows beyond omega's instead of inside it
L_ARROW_LENGTH = 2.0
#: body axes drawn this far from the centre, in body radii
AXES_LENGTH = 1.3
#: the trail's tip sits this far out along the intermediate axis, in body radii
TRAIL_TIP = 1.15
#: points in the trail polyline (history samples, newest last)
TRAIL_POINTS = 600
#: floor grid: cells each side of the centre, and its depth below the body, in body radii
GRID_HALF_CELLS = 12
GRID_DEPTH = 1.8
#: the camera starts far enough back that a sphere of this radius (in body radii) about
#: the body fits the view: the arrows (L_ARROW_LENGTH) with their heads and a margin
FRAMED_RADII = 2.2
#: the vertical view angle (degrees) and the preferred viewing direction (body to camera)
VIEW_ANGLE = 30.0
CAMERA_DIRECTION = (1.0, -1.35, 0.75)
#: an arrow seen closer than this to the line of sight (deg) hides behind the body or in
#: front of it: its tip projects inside the body's outline (radius 1) unless
#: ARROW_LENGTH x sin(angle) clears it with its head (1.7 x sin 60 deg = 1.47)
MIN_ARROW_VIEW_DEG = 60.0
#: ... and every arrow points this much toward the camera (deg out of the picture's plane):
#: its part outside the body is in front of the body, and the body is seen three-quarter
#: on rather than square to a face
MIN_ARROW_TOWARD_DEG = 15.0
#: the directions the default view is chosen among: elevations above the floor and
#: azimuths (deg)
VIEW_ELEVATIONS_DEG = tuple(range(15, 51, 5))
VIEW_AZIMUTH_STEP_DEG = 5


#: the colour key: (label, colour) of everything drawn
LEGEND = (
    ("body x axis", AXIS_HEX[0]),
    ("body y axis", AXIS_HEX[1]),
    ("body z axis", AXIS_HEX[2]),
    ("ω  angular velocity", OMEGA_COLOR),
    ("L  angular momentum (fixed in space)", L_COLOR),
    ("trail of the intermediate axis' tip", TRAIL_COLOR),
    ("path of the centre of mass", PATH_COLOR),
)


def view_direction(arrows) -> np.ndarray:
    """The unit vector from the body to the camera at start, chosen from the arrows drawn
    from the centre (world vectors; zero ones are ignored).

    CAMERA_DIRECTION when it sees every arrow at least MIN_ARROW_VIEW_DEG from the line of
    sight, pointing at least MIN_ARROW_TOWARD_DEG toward the camera (so the part outside
    the body is in front of it, not behind); else the nearest direction to it, among VIEW_ELEVATIONS_DEG
    and azimuths every VIEW_AZIMUTH_STEP_DEG, that does; where none does, the one that
    sees them widest. A spin about the vertical keeps the usual view; one about a
    horizontal axis is looked at from the side, across omega and L.
    """
    default = np.asarray(CAMERA_DIRECTION, dtype=float)
    default /= np.linalg.norm(default)
    units = [np.asarray(a, dtype=float) for a in arrows]
    units = [a / np.linalg.norm(a) for a in units if np.all(np.isfinite(a)) and np.linalg.norm(a) > 0]
    if not units:
        return default
    el = np.radians(np.repeat(VIEW_ELEVATIONS_DEG, 360 // VIEW_AZIMUTH_STEP_DEG))
    az = np.radians(np.tile(np.arange(0, 360, VIEW_AZIMUTH_STEP_DEG), len(VIEW_ELEVATIONS_DEG)))
    candidates = np.vstack([default, np.column_stack([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)])])
    along = candidates @ np.array(units).T                       # cos of each arrow's angle to the view
    seen = np.degrees(np.arcsin(np.sqrt(np.clip(1.0 - along ** 2, 0.0, 1.0)))).min(axis=1)
    toward = np.all(along >= np.sin(np.radians(MIN_ARROW_TOWARD_DEG)), axis=1)
    clear = seen >= MIN_ARROW_VIEW_DEG
    nearness = candidates @ default
    # lexicographic: clear of the body, then pointing to the camera, then (when nothing is
    # clear) seen widest, then nearest the usual view
    order = np.lexsort((nearness, np.where(clear, 0.0, seen), toward, clear))
    return candidates[order[-1]]


def _pose_matrix(R: np.ndarray, c: np.ndarray, scale: float = 1.0) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3] = R * scale
    m[:3, 3] = c
    return m


def _frame_from_x(direction: np.ndarray) -> np.ndarray:
    """A rotation whose first column is ``direction`` (unit)."""
    x = direction
    helper = np.array([0.0, 0.0, 1.0]) if abs(x[2]) < 0.9 else np.array([0.0, 1.0, 0.0])
    y = np.cross(helper, x)
    y /= np.linalg.norm(y)
    z = np.cross(x, y)
    return np.column_stack([x, y, z])


class RigidBodyScene:
    """Body, body axes, omega and L arrows, trail, floor grid and a follow camera.

    Parameters
    ----------
    plotter
        Any pyvista plotter (``pyvistaqt.QtInteractor``, ``pv.Plotter(off_screen=True)``).
    follow
        Move the camera with the centre of mass (a thrown body stays in view).
    trail
        Draw the path of the intermediate axis' tip over the recent history.
    legend
        Draw the colour key in a corner.
    gradient
        Gradient background. Off by default: in software GL (Mesa llvmpipe) the gradient
        quad costs 3-8 ms per frame at 700x740, more than the whole scene without it.

    Thread: GUI thread (or the export's rendering thread owning an off-screen plotter).
    """

    def __init__(self, plotter, *, follow: bool = True, trail: bool = True, legend: bool = True,
                 gradient: bool = False):
        self.plotter = plotter
        self._fitted_offset = None  # camera position - focal point as last fitted
        self.follow = follow
        self._trail_on = trail
        self._legend_on = legend
        self._actors: dict = {}
        self.body: Body | None = None
        self.radius = 1.0
        self._focus = np.zeros(3)
        self._omega_ref = 1.0
        self._grid_origin = np.zeros(3)
        self._view = np.asarray(CAMERA_DIRECTION, dtype=float) / np.linalg.norm(CAMERA_DIRECTION)
        self._arrow = meshes.unit_arrow()
        plotter.set_background(BACKGROUND, top=BACKGROUND_TOP if gradient else None)

    # ------------------------------------------------------------------ building

    def set_body(self, body: Body, center=(0.0, 0.0, 0.0), w0=None, reset_camera: bool = True, q0=None) -> None:
        """(Re)build every actor for ``body``; ``center`` is where the run starts (world),
        ``w0`` (body frame) and ``q0`` (default: no rotation) its spin and orientation there,
        from which the camera's default direction is chosen (:func:`view_direction`)."""
        self.clear()
        self.body = body
        mesh = meshes.body_mesh(body)
        self.radius = r = float(np.max(np.linalg.norm(np.asarray(mesh.points), axis=1)))
        w0 = np.zeros(3) if w0 is None else np.asarray(w0, dtype=float)
        self._omega_ref = float(np.linalg.norm(w0)) or 1.0
        self._tip = body.intermediate_axis * TRAIL_TIP * r
        center = np.asarray(center, dtype=float)
        p = self.plotter
        add = dict(reset_camera=False, render=False, pickable=False)
        self._actors["body"] = p.add_mesh(mesh, scalars="rgb", rgb=True, smooth_shading=body.shape == "ellipsoid",
                                          ambient=0.25, diffuse=0.8, specular=0.25, specular_power=20, **add)
        self._actors["axes"] = p.add_mesh(meshes.axes_lines(AXES_LENGTH * r), scalars="rgb", rgb=True,
                                          line_width=3, lighting=False, **add)
        marker = pv.Sphere(radius=0.06 * r, center=self._tip, theta_resolution=16, phi_resolution=12)
        self._actors["tip"] = p.add_mesh(marker, color=TRAIL_COLOR, lighting=False, **add)
        self._actors["omega"] = p.add_mesh(self._arrow, color=OMEGA_COLOR, ambient=0.35, **add)
        self._actors["L"] = p.add_mesh(self._arrow, color=L_COLOR, ambient=0.35, **add)
        self._path = meshes.polyline(TRAIL_POINTS)
        self._actors["path"] = p.add_mesh(self._path, color=PATH_COLOR, line_width=1, lighting=False, **add)
        self._actors["path"].SetVisibility(self._trail_on)
        self._trail = meshes.polyline(TRAIL_POINTS)
        self._actors["trail"] = p.add_mesh(self._trail, color=TRAIL_COLOR, line_width=2, lighting=False, **add)
        self._actors["trail"].SetVisibility(self._trail_on)
        spacing = meshes.nice_spacing(r)
        self._grid_spacing = spacing
        self._grid_origin = np.array([0.0, 0.0, center[2] - GRID_DEPTH * r])
        self._actors["grid"] = p.add_mesh(meshes.floor_grid(spacing, GRID_HALF_CELLS), color=GRID_COLOR,
                                          line_width=1, lighting=False, **add)
        self._actors["grid"].user_matrix = _pose_matrix(np.eye(3), self._grid_origin)
        if self._legend_on:
            self._add_legend()
        self._focus = center.copy()
        q0 = np.array([1.0, 0.0, 0.0, 0.0]) if q0 is None else np.asarray(q0, dtype=float)
        R0 = quat.to_matrix(q0)
        self._view = view_direction([R0 @ w0, R0 @ (body.inertia @ w0)])
        self.set_pose(center, q0, w0, None)
        if reset_camera:
            self.reset_camera(center)

    def _add_legend(self) -> None:
        labels = [[text, color] for text, color in LEGEND]
        self._actors["legend"] = self.plotter.add_legend(labels, bcolor=BACKGROUND, border=False, size=(0.34, 0.24),
                                                         loc="upper left", face="rectangle",
                                                         background_opacity=0.6)
        entries = self._actors["legend"].GetEntryTextProperty()
        entries.SetColor(pv.Color(TEXT_COLOR).float_rgb)
        use_font_file(entries)

    def clear(self) -> None:
        """Remove every actor this scene added."""
        for name, actor in list(self._actors.items()):
            if name == "legend":
                self.plotter.remove_legend(render=False)
            else:
                self.plotter.remove_actor(actor, render=False)
        self._actors.clear()
        self.body = None

    def reset_camera(self, center=None) -> None:
        """Look at ``center`` (default: the current focus) from the default direction, the
        one chosen for the body's start (:func:`view_direction`)."""
        center = self._focus if center is None else np.asarray(center, dtype=float)
        d = self._view
        # the arrows fit across the narrower of the view's two directions
        half = math.radians(VIEW_ANGLE / 2)
        width, height = self.plotter.window_size
        if width > 1 and height > 1:  # a view not laid out yet: the height only, re-fitted on resize
            half = min(half, math.atan(math.tan(half) * width / height))
        cam = self.plotter.camera
        cam.focal_point = tuple(center)
        cam.position = tuple(center + FRAMED_RADII * self.radius / math.sin(half) * d)
        cam.up = (0.0, 0.0, 1.0)
        cam.view_angle = VIEW_ANGLE
        self._focus = center.copy()
        self._fitted_offset = np.subtract(cam.position, cam.focal_point)
        self.plotter.reset_camera_clipping_range()

    def fit_to_view(self) -> None:
        """Fit the camera to the view's new shape (after a resize), unless the user has
        turned or zoomed it since the last fit (following the body moves both ends alike)."""
        cam = self.plotter.camera
        offset = np.subtract(cam.position, cam.focal_point)
        if self._fitted_offset is not None and np.allclose(offset, self._fitted_offset, rtol=1e-9, atol=0.0):
            self.reset_camera()

    # ------------------------------------------------------------------ toggles

    def set_follow(self, on: bool) -> None:
        self.follow = bool(on)

    def set_trail_visible(self, on: bool) -> None:
        self._trail_on = bool(on)
        for name in ("trail", "path"):
            if name in self._actors:
                self._actors[name].SetVisibility(self._trail_on)

    @property
    def trail_visible(self) -> bool:
        return self._trail_on

    @property
    def view(self) -> np.ndarray:
        """The default viewing direction (body to camera, unit) chosen for this body's start."""
        return self._view.copy()

    @property
    def actors(self) -> dict:
        """Name -> actor (``body``, ``axes``, ``tip``, ``omega``, ``L``, ``trail``, ``grid``)."""
        return dict(self._actors)

    # ------------------------------------------------------------------ each frame

    def set_pose(self, c, q, w_body=None, L_world=None, trail_q=None, trail_c=None) -> None:
        """Pose everything for one frame.

        Parameters
        ----------
        c : (3,) centre of mass, world frame (m)
        q : (4,) orientation quaternion (w, x, y, z), body to world
        w_body : (3,) angular velocity, body frame (rad/s); None hides the arrow
        L_world : (3,) angular momentum, world frame; None hides the arrow
        trail_q : (n, 4) recent orientations, oldest first, for the trail (drawn about ``c``)
        trail_c : (n, 3) recent centres of mass (world), oldest first, for the flight path
        """
        if self.body is None:
            return
        c = np.asarray(c, dtype=float)
        R = quat.to_matrix(np.asarray(q, dtype=float))
        pose = _pose_matrix(R, c)
        for name in ("body", "axes", "tip"):
            self._actors[name].user_matrix = pose
        self._pose_arrow("omega", c, None if w_body is None else R @ np.asarray(w_body, dtype=float),
                         ARROW_LENGTH * self.radius / self._omega_ref)
        self._pose_arrow("L", c, L_world, None)
        if self._trail_on and trail_q is not None and len(trail_q):
            self._set_trail(c, np.asarray(trail_q, dtype=float))
        if self._trail_on and trail_c is not None and len(trail_c):
            _fill_polyline(self._path, np.asarray(trail_c, dtype=float))
        if self.follow:
            self._follow(c)

    def _pose_arrow(self, name: str, c: np.ndarray, vector, per_unit: float | None) -> None:
        actor = self._actors[name]
        if vector is None:
            actor.SetVisibility(False)
            return
        v = np.asarray(vector, dtype=float)
        n = float(np.linalg.norm(v))
        if not np.isfinite(n) or n == 0.0:
            actor.SetVisibility(False)
            return
        length = L_ARROW_LENGTH * self.radius if per_unit is None else n * per_unit
        actor.SetVisibility(True)
        actor.user_matrix = _pose_matrix(_frame_from_x(v / n), c, length)

    def _set_trail(self, c: np.ndarray, qs: np.ndarray) -> None:
        qs = qs[-TRAIL_POINTS:]
        _fill_polyline(self._trail, c + quat.rotate(qs, self._tip))

    def _follow(self, c: np.ndarray) -> None:
        delta = c - self._focus
        if np.any(delta):
            cam = self.plotter.camera
            cam.focal_point = tuple(np.asarray(cam.focal_point) + delta)
            cam.position = tuple(np.asarray(cam.position) + delta)
            self._focus = c.copy()
            self.plotter.reset_camera_clipping_range()
        # the grid keeps under the body (a thrown body stays over a floor), moved across in
        # whole cells so that its lines appear fixed in the world while the body flies
        origin = np.array([*(np.round(c[:2] / self._grid_spacing) * self._grid_spacing),
                           c[2] - GRID_DEPTH * self.radius])
        if np.any(origin != self._grid_origin):
            self._grid_origin = origin
            self._actors["grid"].user_matrix = _pose_matrix(np.eye(3), origin)


def _fill_polyline(poly: pv.PolyData, points: np.ndarray) -> None:
    """Move a fixed-size polyline onto ``points`` (newest last), padding with the oldest."""
    n = poly.n_points
    points = points[-n:]
    pts = np.empty((n, 3))
    pts[: n - len(points)] = points[0]
    pts[n - len(points):] = points
    poly.points = pts
