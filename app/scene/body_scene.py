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
from .actors import (
    QUIET,
    FloorGrid,
    TrailScene,
    aim_camera,
    completing_axes,
    fill_polyline,
    pose_matrix,
    shift_camera,
)
from .style import AXIS_HEX, L_COLOR, OMEGA_COLOR, PATH_COLOR, TRAIL_COLOR, tone

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
#: most of a view's height :meth:`RigidBodyScene.keep_top_clear` gives up to a colour key
MAX_TOP_CLEAR = 0.5
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
#: a flat body's face is seen at least this far from edge-on (deg) where the arrows allow it
MIN_FACE_VIEW_DEG = 45.0
#: a body is flat when its largest moment is at least this share of the sum of the other two
#: (a plate's is the whole sum: the perpendicular-axis theorem), and not a rod: its smallest
#: moment at least ROD_SHARE of the largest (a thin rod lies in every plane through it)
FLAT_SHARE = 0.9
ROD_SHARE = 0.05
VIEW_AZIMUTH_STEP_DEG = 5


#: what the colour key says of L: fixed in space without a torque about the centre of mass
#: (gravity, forces through it, a damper or a rotor keep it), turned by the loads otherwise
L_FIXED = "(fixed in space)"
L_TURNED = "(turned by the applied loads)"


def l_turns(scenarios) -> bool:
    """Whether L turns in any of ``scenarios``: the one rule every colour key, live or
    exported, follows (``applied_loads.has_torque``: a drag counts)."""
    return any(sc.applied_loads.has_torque for sc in scenarios)


def say_momentum(rows, scenarios, fixed: str = L_FIXED, turned: str = L_TURNED) -> tuple:
    """``rows`` (label, colour), with ``fixed`` in a label replaced by ``turned`` where L
    turns in ``scenarios`` (:func:`l_turns`)."""
    if not l_turns(scenarios):
        return tuple(rows)
    return tuple((label.replace(fixed, turned), color) for label, color in rows)


def legend(scenarios=()) -> tuple:
    """:data:`LEGEND` as it applies to ``scenarios`` (L fixed in space, or turned; the trail
    named by the axis it follows, :func:`trail_label`)."""
    rows = say_momentum(LEGEND, scenarios)
    labels = {trail_label(sc.rigid_body) for sc in scenarios}
    if len(labels) != 1:
        return rows
    (label,) = labels
    return tuple((label if color == TRAIL_COLOR and text == TRAIL_LABEL else text, color) for text, color in rows)


#: the trail's row in :data:`LEGEND` before a body names its axis
TRAIL_LABEL = "trail of the intermediate axis' tip"
_BODY_AXES = "xyz"


def trail_label(body) -> str:
    """What the trail follows on ``body`` (its second principal axis, ``body.intermediate_axis``),
    named for every body: the intermediate axis of an asymmetric body, an axis across the
    symmetry axis of a symmetric one, a body axis of a spherical one; with its body direction
    (``body x`` where it is one of the body's axes)."""
    from ..physics.body import EQUAL_MOMENTS, has_intermediate_axis

    moments, axes = body.principal()
    axis = axes[:, 1]
    k = int(np.argmax(np.abs(axis)))
    where = f"body {_BODY_AXES[k]}" if abs(axis[k]) > 0.999 else "body (" + ", ".join(f"{x:.2f}" for x in axis) + ")"
    if has_intermediate_axis(moments):
        return f"{TRAIL_LABEL}, {where}"
    if moments[2] - moments[0] > EQUAL_MOMENTS * moments[2]:  # two equal moments: one of the pair
        return f"trail of the tip of an axis across the symmetry axis, {where}"
    return f"trail of the tip of a body axis, {where} (all three moments are equal)"


#: the colour key: (label, colour) of everything drawn
LEGEND = (
    ("body x axis", AXIS_HEX[0]),
    ("body y axis", AXIS_HEX[1]),
    ("body z axis", AXIS_HEX[2]),
    ("ω  angular velocity", OMEGA_COLOR),
    ("L  angular momentum (fixed in space)", L_COLOR),
    ("trail of the intermediate axis' tip", TRAIL_COLOR),  # TRAIL_LABEL: legend() names the body's axis
    ("path of the centre of mass", PATH_COLOR),
)


def view_direction(arrows, face=None) -> np.ndarray:
    """The unit vector from the body to the camera at start, chosen from the arrows drawn
    from the centre (world vectors; zero ones are ignored).

    CAMERA_DIRECTION when it sees every arrow at least MIN_ARROW_VIEW_DEG from the line of
    sight, pointing at least MIN_ARROW_TOWARD_DEG toward the camera (so the part outside
    the body is in front of it, not behind); else the nearest direction to it, among VIEW_ELEVATIONS_DEG
    and azimuths every VIEW_AZIMUTH_STEP_DEG, that does; where none does, the one that
    sees them widest. A spin about the vertical keeps the usual view; one about a
    horizontal axis is looked at from the side, across omega and L. ``face`` (world, unit),
    the normal of a flat body's face, is then seen at least MIN_FACE_VIEW_DEG from edge-on
    where a view can do so too (a tennis racket lying flat was seen edge-on, a thin line).
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
    faces = np.ones(len(candidates), dtype=bool)
    if face is not None and np.linalg.norm(face) > 0:
        faces = np.abs(candidates @ (np.asarray(face, dtype=float) / np.linalg.norm(face))) \
            >= np.sin(np.radians(MIN_FACE_VIEW_DEG))
    # lexicographic: clear of the body, then pointing to the camera, then a flat body's face
    # seen, then (when nothing is clear) seen widest, then nearest the usual view
    order = np.lexsort((nearness, np.where(clear, 0.0, seen), faces, toward, clear))
    return candidates[order[-1]]


def _frame_from_x(direction: np.ndarray) -> np.ndarray:
    """A rotation whose first column is ``direction`` (unit), its second horizontal."""
    return np.column_stack([direction, *completing_axes(direction, 2)])


class RigidBodyScene(TrailScene):
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
        Accepted and ignored: the windows draw the colour key (:data:`LEGEND`) as a Qt
        label and the export draws it on its canvas.
    gradient
        Gradient background. Off by default: in software GL (Mesa llvmpipe) the gradient
        quad costs 3-8 ms per frame at 700x740, more than the whole scene without it.

    Actors (:attr:`actors`): ``body``, ``axes``, ``tip``, ``omega``, ``L``, ``path``, ``trail``, ``grid``.

    Thread: GUI thread (or the export's rendering thread owning an off-screen plotter).
    """

    TRAIL_ACTORS = ("trail", "path")

    def __init__(self, plotter, *, follow: bool = True, trail: bool = True, gradient: bool = False):
        super().__init__(plotter, follow=follow, trail=trail, gradient=gradient)
        self._fitted_offset = None  # camera position - focal point as last fitted
        self._top_clear = 0.0  # share of the view's height kept clear at the top (keep_top_clear)
        self.radius = 1.0
        self._focus = np.zeros(3)
        self._omega_ref = 1.0
        self._grid: FloorGrid | None = None
        self._view = np.asarray(CAMERA_DIRECTION, dtype=float) / np.linalg.norm(CAMERA_DIRECTION)

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
        self._actors["body"] = p.add_mesh(mesh, scalars="rgb", rgb=True, smooth_shading=body.shape == "ellipsoid",
                                          ambient=0.25, diffuse=0.8, specular=0.25, specular_power=20, **QUIET)
        self._actors["axes"] = p.add_mesh(meshes.axes_lines(AXES_LENGTH * r), scalars="rgb", rgb=True,
                                          line_width=3, lighting=False, **QUIET)
        marker = pv.Sphere(radius=0.06 * r, center=self._tip, theta_resolution=16, phi_resolution=12)
        self._actors["tip"] = p.add_mesh(marker, color=tone(TRAIL_COLOR), lighting=False, **QUIET)
        self._actors["omega"] = p.add_mesh(self._arrow, color=tone(OMEGA_COLOR), ambient=0.35, **QUIET)
        self._actors["L"] = p.add_mesh(self._arrow, color=tone(L_COLOR), ambient=0.35, **QUIET)
        self._path = meshes.polyline(TRAIL_POINTS)
        self._actors["path"] = p.add_mesh(self._path, color=tone(PATH_COLOR), line_width=1, lighting=False, **QUIET)
        self._actors["path"].SetVisibility(self._trail_on)
        self._trail = meshes.polyline(TRAIL_POINTS)
        self._actors["trail"] = p.add_mesh(self._trail, color=tone(TRAIL_COLOR), line_width=2, lighting=False, **QUIET)
        self._actors["trail"].SetVisibility(self._trail_on)
        self._grid = FloorGrid(p, meshes.nice_spacing(r), GRID_HALF_CELLS, GRID_DEPTH * r, center)
        self._actors["grid"] = self._grid.actor
        self._focus = center.copy()
        q0 = np.array([1.0, 0.0, 0.0, 0.0]) if q0 is None else np.asarray(q0, dtype=float)
        R0 = quat.to_matrix(q0)
        moments, axes = body.principal()
        # a flat body's face normal: its major axis
        flat = moments[2] >= FLAT_SHARE * (moments[0] + moments[1]) and moments[0] >= ROD_SHARE * moments[2]
        self._view = view_direction([R0 @ w0, R0 @ (body.inertia @ w0)], R0 @ axes[:, 2] if flat else None)
        self.set_pose(center, q0, w0, None)
        if reset_camera:
            self.reset_camera(center)

    def reset_camera(self, center=None) -> None:
        """Look at ``center`` (default: the current focus) from the default direction, the
        one chosen for the body's start (:func:`view_direction`)."""
        center = self._focus if center is None else np.asarray(center, dtype=float)
        d = self._view
        # the arrows fit across the narrower of the view's two directions (below a band kept
        # clear at the top, :meth:`keep_top_clear`)
        half = math.radians(VIEW_ANGLE / 2)
        clear = self._top_clear
        width, height = self.plotter.window_size
        if width > 1 and height > 1:  # a view not laid out yet: the height only, re-fitted on resize
            half = min(math.atan(math.tan(half) * (1.0 - clear)), math.atan(math.tan(half) * width / height))
        aim_camera(self.plotter, center, center + FRAMED_RADII * self.radius / math.sin(half) * d, (0.0, 0.0, 1.0),
                   VIEW_ANGLE)
        self.plotter.camera.SetWindowCenter(0.0, clear)  # the body in the middle of what is left
        self._focus = center.copy()
        cam = self.plotter.camera
        self._fitted_offset = np.subtract(cam.position, cam.focal_point)

    def keep_top_clear(self, share: float) -> None:
        """Frame the body in the view below its top ``share`` of the height (an export's colour
        key reaching past the middle of a narrow pane, where L points up), and re-aim."""
        self._top_clear = min(max(float(share), 0.0), MAX_TOP_CLEAR)
        self.reset_camera()

    def fit_to_view(self) -> None:
        """Fit the camera to the view's new shape (after a resize), unless the user has
        turned or zoomed it since the last fit (following the body moves both ends alike)."""
        cam = self.plotter.camera
        offset = np.subtract(cam.position, cam.focal_point)
        if self._fitted_offset is not None and np.allclose(offset, self._fitted_offset, rtol=1e-9, atol=0.0):
            self.reset_camera()

    # ------------------------------------------------------------------ toggles

    @property
    def view(self) -> np.ndarray:
        """The default viewing direction (body to camera, unit) chosen for this body's start."""
        return self._view.copy()

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
        pose = pose_matrix(R, c)
        for name in ("body", "axes", "tip"):
            self._actors[name].user_matrix = pose
        self._pose_arrow("omega", c, None if w_body is None else R @ np.asarray(w_body, dtype=float),
                         ARROW_LENGTH * self.radius / self._omega_ref)
        self._pose_arrow("L", c, L_world, None)
        if self._trail_on and trail_q is not None and len(trail_q):
            self._set_trail(c, np.asarray(trail_q, dtype=float))
        if self._trail_on and trail_c is not None and len(trail_c):
            fill_polyline(self._path, np.asarray(trail_c, dtype=float))
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
        actor.user_matrix = pose_matrix(_frame_from_x(v / n) * length, c)

    def _set_trail(self, c: np.ndarray, qs: np.ndarray) -> None:
        qs = qs[-TRAIL_POINTS:]
        fill_polyline(self._trail, c + quat.rotate(qs, self._tip))

    def _follow(self, c: np.ndarray) -> None:
        self._focus = shift_camera(self.plotter, self._focus, c)
        # the grid keeps under the body (a thrown body stays over a floor)
        self._grid.follow(c)
