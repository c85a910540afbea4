"""Poinsot's construction as a 3D scene: the energy ellipsoid rolling on the invariable plane.

In angular-velocity space (rad/s), with the centre of mass fixed at the origin:

* the energy ellipsoid ``{x : x . I x = 2T}`` (semi-axes ``sqrt(2T / I_i)``), fixed to the
  body, translucent, with body-fixed meridians so that its rolling can be seen, and the
  body itself drawn small inside it;
* the invariable plane, normal to L (fixed in space) at distance ``2T / |L|`` from the
  centre; the ellipsoid touches it at omega (world ``R omega``), the contact point;
* the polhode (omega's path in the body, drawn on the ellipsoid and carried with it) and
  the herpolhode (the contact point's path on the plane).

Every quantity comes from :func:`app.physics.poinsot.poinsot_state` for the pose being
drawn, so the picture is the construction of the simulated state (with an integrator that
drifts, the ellipsoid and the plane follow the drifting energy and momentum). Built into
any pyvista plotter: the Poinsot window's ``QtInteractor`` or the export's off-screen
plotter. GUI thread only (or the thread owning the off-screen plotter).

Usage::

    scene = PoinsotScene(plotter)
    scene.set_body(body)
    scene.set_pose(c, q, w_body, trail_q=q_history, trail_w=w_history)   # each frame
"""

from __future__ import annotations

import numpy as np
import pyvista as pv

from ..physics import quaternion as quat
from ..physics.body import Body
from ..physics.poinsot import PoinsotState, poinsot_state
from . import meshes
from .actors import QUIET, GhostActors, TrailScene, aim_camera, completing_axes, fill_polyline, pose_matrix
from .ghost import GHOST_COLOR
from .style import AXIS_COLORS, GRID_COLOR, L_COLOR, OMEGA_COLOR, TRAIL_COLOR, tone

#: points kept in the polhode and herpolhode polylines (history samples, newest last; 30 s
#: of 10 ms samples thinned by 2: smooth enough, and half the per-frame copying)
TRACE_POINTS = 1500
#: simulated time the polhode and herpolhode cover (s); the history records every 10 ms
TRACE_SECONDS = 30.0
#: invariable plane radius, in multiples of the ellipsoid's largest semi-axis
PLANE_REACH = 1.45
#: the body is drawn inside the ellipsoid at this fraction of its largest semi-axis
BODY_FRACTION = 0.62
#: the polhode is drawn this much outside the ellipsoid's surface (relative) so that the
#: translucent surface does not hide it; the data itself lies on the ellipsoid
POLHODE_LIFT = 1.006
#: the camera is placed again when a new body or energy changes the ellipsoid's size by more than this factor
RESCALE_SLACK = 1.3
#: camera: distance in largest semi-axes, and elevation above the plane seen from the ellipsoid's side (deg)
CAMERA_DISTANCE = 7.5
CAMERA_ELEVATION_DEG = 28.0
CAMERA_AZIMUTH_DEG = -35.0

#: the scene's lights: a headlight, and a light from above-left of the camera for relief
LIGHTS = (dict(light_type="headlight", intensity=0.75),
          dict(light_type="camera light", position=(-1.0, 1.0, 1.0), intensity=0.45))

ELLIPSOID_COLOR = "#7aa2d6"
ELLIPSOID_OPACITY = 0.22
WIRE_COLOR = "#7f93ab"
PLANE_COLOR = "#3b4757"
HERPOLHODE_COLOR = "#ff7b72"
POLHODE_COLOR = TRAIL_COLOR
CENTRE_COLOR = "#e6edf3"

#: the colour key: (label, colour) of everything drawn
LEGEND = (
    ("energy ellipsoid (fixed to the body)", ELLIPSOID_COLOR),
    ("invariable plane (normal to L, fixed)", "#8796a8"),
    ("ω = contact point, instantaneous axis", OMEGA_COLOR),
    ("L direction, centre to plane: 2T/|L|", L_COLOR),
    ("polhode (on the ellipsoid, in the body)", POLHODE_COLOR),
    ("herpolhode (on the plane)", HERPOLHODE_COLOR),
)


def use_two_lights(plotter) -> None:
    """Light ``plotter`` with :data:`LIGHTS` instead of pyvista's five-light kit.

    A large lit surface is shaded per fragment for each light: in software GL the kit took
    about a third of the construction's frame (CPU time per render 14 ms -> 11 ms measured
    with two lights). Both views of the Poinsot window and its export use it.
    """
    plotter.remove_all_lights()
    for light in LIGHTS:
        plotter.add_light(pv.Light(**light))


def _frame_from_z(normal: np.ndarray) -> np.ndarray:
    """A rotation whose third column is the unit vector ``normal``, its first normal to x."""
    return np.column_stack([*completing_axes(normal, 0), normal])


def _frame_from_x(direction: np.ndarray) -> np.ndarray:
    """A rotation whose first column is the unit vector ``direction``."""
    frame = _frame_from_z(direction)
    return np.column_stack([frame[:, 2], frame[:, 0], frame[:, 1]])


def _unit_lat_long(n_meridians: int = 12, n_parallels: int = 7, n: int = 65) -> pv.PolyData:
    """Meridians and parallels of the unit sphere, as lines."""
    pts, lines = [], []
    s = np.linspace(0.0, 2.0 * np.pi, n)
    for k in range(n_meridians):
        lon = np.pi * k / n_meridians  # each great circle gives two meridians
        circle = np.column_stack([np.cos(s) * np.cos(lon), np.cos(s) * np.sin(lon), np.sin(s)])
        lines.append(np.arange(len(pts) * n, (len(pts) + 1) * n))
        pts.append(circle)
    for k in range(1, n_parallels + 1):
        lat = -np.pi / 2 + np.pi * k / (n_parallels + 1)
        circle = np.column_stack([np.cos(s) * np.cos(lat), np.sin(s) * np.cos(lat), np.full(n, np.sin(lat))])
        lines.append(np.arange(len(pts) * n, (len(pts) + 1) * n))
        pts.append(circle)
    cells = np.concatenate([np.concatenate([[len(ln)], ln]) for ln in lines])
    return pv.PolyData(np.concatenate(pts), lines=cells)


def _polar_grid(rings: int = 4, spokes: int = 12, n: int = 97) -> pv.PolyData:
    """Circles and radii of the unit disc in the z = 0 plane, as lines."""
    pts, cells = [], []
    s = np.linspace(0.0, 2.0 * np.pi, n)
    for k in range(1, rings + 1):
        r = k / rings
        start = sum(len(p) for p in pts)
        pts.append(np.column_stack([r * np.cos(s), r * np.sin(s), np.zeros(n)]))
        cells.append(np.concatenate([[n], np.arange(start, start + n)]))
    for k in range(spokes):
        a = 2 * np.pi * k / spokes
        start = sum(len(p) for p in pts)
        pts.append(np.array([[0.0, 0.0, 0.0], [np.cos(a), np.sin(a), 0.0]]))
        cells.append(np.array([2, start, start + 1]))
    return pv.PolyData(np.concatenate(pts), lines=np.concatenate(cells))


class PrincipalFrame:
    """A body's principal moments and axes (body frame), and the Poinsot construction of a
    pose in them: the construction scene and its exact ghost are both posed by it."""

    def __init__(self, body: Body):
        self.moments, self.axes = body.principal()
        self._q_axes = quat.from_matrix(self.axes)

    def construction(self, q: np.ndarray, w_body: np.ndarray) -> tuple[np.ndarray, PoinsotState, np.ndarray]:
        """For orientation ``q`` (body to world) and body-frame ``w_body``: the rotation
        matrix, the construction (:func:`~app.physics.poinsot.poinsot_state`), and the user
        matrix that makes the unit sphere the energy ellipsoid carried with the body."""
        R = quat.to_matrix(q)
        state = poinsot_state(self.moments, quat.multiply(q, self._q_axes), self.axes.T @ w_body)
        return R, state, pose_matrix(R @ self.axes @ np.diag(state.semi_axes))


class PoinsotScene(TrailScene):
    """The rolling ellipsoid, the invariable plane, polhode, herpolhode and contact point.

    Same interface as :class:`~app.scene.RigidBodyScene` (``set_body``, ``set_pose``,
    ``set_follow``, ``set_trail_visible``, ``reset_camera``, ``actors``), so the main
    window can show it in place of the body scene. ``follow`` is accepted and ignored: the
    centre of the construction is fixed (the centre of mass's flight is not drawn).

    Published after each :meth:`set_pose` (for tests and overlays): ``construction`` (the
    :class:`~app.physics.poinsot.PoinsotState` drawn), ``herpolhode`` (n, 3) world points
    and ``polhode`` (n, 3) body-frame points of the traces (oldest first, unpadded).

    Actors (:attr:`actors`): ``ellipsoid``, ``meridians``, ``principal_axes``, ``body``, ``plane``,
    ``plane_grid``, ``normal``, ``omega``, ``centre``, ``contact``, ``polhode``, ``herpolhode``.

    Thread: GUI thread (or the thread owning an off-screen plotter).
    """

    legend_rows = LEGEND
    TRAIL_ACTORS = ("polhode", "herpolhode")

    def __init__(self, plotter, *, follow: bool = False, trail: bool = True, gradient: bool = False):
        super().__init__(plotter, follow=follow, trail=trail, gradient=gradient)
        self.construction: PoinsotState | None = None
        self.herpolhode = np.zeros((0, 3))
        self.polhode = np.zeros((0, 3))
        self.scale = 1.0
        self._camera_pending = True
        # two translucent surfaces (ellipsoid, plane) that never need exact sorting: plain
        # blending instead of VTK's order-independent transparency, whose extra full-window
        # passes cost more than the whole rest of the frame in software GL (MEASURED.md)
        plotter.renderer.SetUseOIT(False)
        use_two_lights(plotter)

    # ------------------------------------------------------------------ building

    def set_body(self, body: Body, center=None, w0=None, reset_camera: bool = True, q0=None) -> None:
        """(Re)build every actor for ``body``. ``center`` and ``q0`` are ignored (the centre
        is fixed at the origin); the camera is placed at the first :meth:`set_pose` when
        ``reset_camera`` (it needs the direction of L)."""
        self.clear()
        self.body = body
        self.principal = PrincipalFrame(body)
        moments = self.principal.moments
        w0 = np.zeros(3) if w0 is None else np.asarray(w0, dtype=float)
        two_t = float(w0 @ body.inertia @ w0)
        semi = np.sqrt(two_t / moments) if two_t > 0 else 1.0 / np.sqrt(moments / moments.min())
        old_scale, self.scale = self.scale, float(semi.max())
        # a new energy changes the ellipsoid's size: frame it again if it would not fit
        reset_camera = reset_camera or not (1 / RESCALE_SLACK < self.scale / old_scale < RESCALE_SLACK)
        p = self.plotter

        sphere = pv.Sphere(radius=1.0, theta_resolution=48, phi_resolution=28)
        # translucent and unlit: its meridians give it its shape, and lighting a surface this
        # large was a third of the scene's render in software GL (CPU 12.0 -> 7.6 ms without it)
        self._actors["ellipsoid"] = p.add_mesh(sphere, color=tone(ELLIPSOID_COLOR), opacity=ELLIPSOID_OPACITY,
                                               lighting=False, culling="back", **QUIET)
        self._actors["meridians"] = p.add_mesh(_unit_lat_long(), color=tone(WIRE_COLOR), line_width=1, lighting=False,
                                               **QUIET)
        axes = np.array([[-1, 0, 0], [1, 0, 0], [0, -1, 0], [0, 1, 0], [0, 0, -1], [0, 0, 1]], float)
        axes_poly = pv.PolyData(axes, lines=np.array([2, 0, 1, 2, 2, 3, 2, 4, 5]))
        # principal axis k drawn in the colour of the body axis it lies along (as in the main view)
        colours = [AXIS_COLORS[int(np.argmax(np.abs(self.principal.axes[:, k])))] for k in range(3)]
        axes_poly.cell_data["rgb"] = np.round(np.asarray(colours) * 255).astype(np.uint8)
        self._actors["principal_axes"] = p.add_mesh(axes_poly, scalars="rgb", rgb=True, line_width=2,
                                                    lighting=False, **QUIET)
        mesh = meshes.body_mesh(body)
        self._body_scale = BODY_FRACTION * self.scale / max(float(np.max(np.linalg.norm(mesh.points, axis=1))), 1e-12)
        self._actors["body"] = p.add_mesh(mesh, scalars="rgb", rgb=True, ambient=0.3, diffuse=0.7, **QUIET)

        self._actors["plane"] = p.add_mesh(pv.Disc(inner=0.0, outer=1.0, r_res=1, c_res=96), color=tone(PLANE_COLOR),
                                           lighting=False, **QUIET)
        self._actors["plane_grid"] = p.add_mesh(_polar_grid(), color=tone(GRID_COLOR), line_width=1, lighting=False, **QUIET)
        self._actors["normal"] = p.add_mesh(pv.Line((0, 0, 0), (0, 0, 1)), color=tone(L_COLOR), line_width=3,
                                            lighting=False, **QUIET)
        self._actors["omega"] = p.add_mesh(self._arrow, color=tone(OMEGA_COLOR), ambient=0.35, **QUIET)
        self._actors["centre"] = p.add_mesh(pv.Sphere(radius=0.025 * self.scale), color=tone(CENTRE_COLOR),
                                            lighting=False, **QUIET)
        self._actors["contact"] = p.add_mesh(pv.Sphere(radius=0.045 * self.scale, theta_resolution=16,
                                                       phi_resolution=12), color=tone(OMEGA_COLOR), lighting=False, **QUIET)
        self._polhode_line = meshes.polyline(TRACE_POINTS)
        self._herpolhode_line = meshes.polyline(TRACE_POINTS)
        self._actors["polhode"] = p.add_mesh(self._polhode_line, color=tone(POLHODE_COLOR), line_width=2,
                                             lighting=False, **QUIET)
        self._actors["herpolhode"] = p.add_mesh(self._herpolhode_line, color=tone(HERPOLHODE_COLOR), line_width=2,
                                                lighting=False, **QUIET)
        for name in ("polhode", "herpolhode"):
            self._actors[name].SetVisibility(self._trail_on)
        self._camera_pending = self._camera_pending or reset_camera
        self.construction = None
        self.herpolhode = np.zeros((0, 3))
        self.polhode = np.zeros((0, 3))

    def reset_camera(self, center=None) -> None:
        """Look at the construction from beside the plane, slightly above it (``center`` is
        ignored: the construction's centre is the origin). Needs a drawn pose."""
        if self.construction is None:
            self._camera_pending = True
            return
        n = self.construction.plane_normal
        d = self.construction.plane_distance
        frame = _frame_from_z(n)
        az = np.radians(CAMERA_AZIMUTH_DEG)
        el = np.radians(CAMERA_ELEVATION_DEG)
        side = np.cos(az) * frame[:, 0] + np.sin(az) * frame[:, 1]
        # the plane is drawn as a floor: "up" points from the plane back to the centre (-n)
        direction = np.cos(el) * side - np.sin(el) * n
        focus = 0.45 * d * n
        aim_camera(self.plotter, focus, focus + CAMERA_DISTANCE * self.scale * direction, -n, 30.0)
        self._camera_pending = False

    # ------------------------------------------------------------------ toggles

    # ------------------------------------------------------------------ each frame

    def set_pose(self, c, q, w_body=None, L_world=None, trail_q=None, trail_c=None, trail_w=None) -> None:
        """Pose the construction for orientation ``q`` (body to world) and body-frame
        ``w_body``; ``trail_q``/``trail_w`` (n, 4)/(n, 3), oldest first, draw the polhode
        and the herpolhode. ``c``, ``L_world`` and ``trail_c`` are accepted for the body
        scene's interface and not used (L follows from q and omega)."""
        if self.body is None or w_body is None:
            return
        q = np.asarray(q, dtype=float)
        w = np.asarray(w_body, dtype=float)
        if not np.any(w):
            return
        R, state, ellipsoid = self.principal.construction(q, w)
        self.construction = state
        for name in ("ellipsoid", "meridians", "principal_axes"):
            self._actors[name].user_matrix = ellipsoid
        self._actors["body"].user_matrix = pose_matrix(R * self._body_scale)
        n, d = state.plane_normal, state.plane_distance
        reach = PLANE_REACH * float(state.semi_axes.max())
        plane = pose_matrix(_frame_from_z(n) * reach, d * n)
        self._actors["plane"].user_matrix = plane
        self._actors["plane_grid"].user_matrix = plane
        self._actors["normal"].user_matrix = pose_matrix(_frame_from_z(n) * d)
        contact = state.contact_world
        self._actors["contact"].user_matrix = pose_matrix(offset=contact)
        length = float(np.linalg.norm(contact))
        self._actors["omega"].user_matrix = pose_matrix(_frame_from_x(contact / length) * length)
        if trail_q is not None and trail_w is not None and len(trail_q):
            tq = np.asarray(trail_q, dtype=float)[-TRACE_POINTS:]
            tw = np.asarray(trail_w, dtype=float)[-TRACE_POINTS:]
            self.polhode = tw
            self.herpolhode = quat.rotate(tq, tw)
            if self._trail_on:
                fill_polyline(self._polhode_line, tw)
                fill_polyline(self._herpolhode_line, self.herpolhode)
        self._actors["polhode"].user_matrix = pose_matrix(R * POLHODE_LIFT)
        if self._camera_pending:
            self.reset_camera()


class PoinsotGhost(GhostActors):
    """The exact ghost in the Poinsot construction: the ellipsoid's meridians and the
    contact point where the closed-form solution has them (same interface as
    :class:`~app.scene.ghost.GhostBody`). While the integrator is accurate they lie on the
    simulated ones; a drifting integrator's ellipsoid rolls away from them.
    Actors (:attr:`actors`): ``meridians``, ``contact``.

    Thread: GUI thread.
    """

    def __init__(self, plotter):
        super().__init__(plotter)
        self.construction: PoinsotState | None = None

    def _add_actors(self, body: Body) -> None:
        self.principal = PrincipalFrame(body)
        p = self.plotter
        self._actors["meridians"] = p.add_mesh(_unit_lat_long(), color=tone(GHOST_COLOR), line_width=1,
                                               lighting=False, **QUIET)
        self._actors["contact"] = p.add_mesh(pv.Sphere(radius=1.0, theta_resolution=16, phi_resolution=12),
                                             color=tone(GHOST_COLOR), style="wireframe", line_width=1, lighting=False,
                                             **QUIET)

    def set_pose(self, c, q, w_body=None) -> None:
        """Pose for the exact orientation ``q`` and body-frame ``w_body`` (``c`` unused: the
        construction's centre is fixed)."""
        if self.body is None or w_body is None or not np.any(w_body):
            return
        q = np.asarray(q, dtype=float)
        w = np.asarray(w_body, dtype=float)
        _, state, ellipsoid = self.principal.construction(q, w)
        self.construction = state
        self._actors["meridians"].user_matrix = ellipsoid
        self._actors["contact"].user_matrix = pose_matrix(np.eye(3) * 0.07 * float(state.semi_axes.max()),
                                                      state.contact_world)
