"""The polhode view: omega's path on the energy ellipsoid, in body axes. GUI thread only.

For a torque-free body omega stays on the energy ellipsoid ``w . I w = 2 T`` and on the
momentum ellipsoid ``|I w| = |L|``; their intersection is the polhode (Landau & Lifshitz,
*Mechanics*, section 37). Near the intermediate axis the curves pass close to the
separatrix, and a flip is omega travelling along it to the opposite side.
"""

from __future__ import annotations

import math

import numpy as np
import pyvista as pv

from ..physics.body import Body
from . import meshes
from .actors import QUIET, SceneActors, aim_camera, fill_polyline, pose_matrix
from .style import AXIS_COLORS, BACKGROUND, BACKGROUND_TOP, OMEGA_COLOR, TEXT_COLOR, TRAIL_COLOR, tone, use_font_file

#: points kept in the polhode polyline (history samples, newest last)
POLHODE_POINTS = 3000
#: body axes drawn to this multiple of the ellipsoid's largest semi-axis
AXES_REACH = 1.25
#: camera direction (body axes) and view angle (degrees)
CAMERA_DIRECTION = (1.0, 0.8, 0.6)
VIEW_ANGLE = 30.0
#: the ellipsoid's height takes at most this share of the pane's, and sits this share of the
#: pane's half height lower than its centre: the title at the top stays clear
ELLIPSOID_SHARE = 0.65
TITLE_SHIFT = 0.15
#: the family of polhodes: curves around each stable axis, points per curve
FAMILY_COUNT = 6
FAMILY_POINTS = 121
#: colours of the family of polhodes and of the two separatrices
FAMILY_COLOR = "#9aabc2"
SEPARATRIX_COLOR = "#ff7b72"
#: the family is drawn this much outside the ellipsoid (relative), in front of its surface
FAMILY_LIFT = 1.006
#: moments closer than this (relative) count as equal: no intermediate axis, no separatrix
DEGENERATE_MOMENTS = 1e-9


class PolhodeScene(SceneActors):
    """Energy ellipsoid, body axes and the omega curve, built into any pyvista plotter.

    With ``family``, also the family of polhodes on the energy ellipsoid
    (:func:`~app.physics.poinsot.polhode_family`) and, highlighted, the two separatrices
    through the intermediate axis (:func:`~app.physics.poinsot.separatrices`), recomputed
    at each :meth:`set_body` (the energy changes with a kick).

    Thread: GUI thread.
    """

    def __init__(self, plotter, gradient: bool = False, family: bool = False):
        super().__init__(plotter)
        self.family = bool(family)
        self.separatrix_curves: list = []
        self._curve = meshes.polyline(POLHODE_POINTS)
        plotter.set_background(tone(BACKGROUND), top=tone(BACKGROUND_TOP) if gradient else None)

    def set_body(self, body: Body, w0) -> None:
        """Rebuild for ``body`` at the energy of the body-frame angular velocity ``w0``."""
        self.clear()
        self.body = body
        w0 = np.asarray(w0, dtype=float)
        two_T = float(w0 @ body.inertia @ w0)
        moments, axes = body.principal()
        semi = np.sqrt(two_T / moments) if two_T > 0 else np.ones(3)
        self.scale = float(semi.max())
        self._semi_axes = (axes * semi).T  # the semi-axes as rows (body axes)
        ell = pv.Sphere(radius=1.0, theta_resolution=40, phi_resolution=20)
        ell.points = (np.asarray(ell.points) * semi) @ axes.T
        # with the family drawn, a denser surface dims the curves on the far side
        self._actors["ellipsoid"] = self.plotter.add_mesh(ell, color=tone("#8aa0b8"), opacity=0.45 if self.family else 0.18,
                                                          smooth_shading=True, specular=0.0, **QUIET)
        if self.family and two_T > 0:
            self._add_family(moments, axes, two_T)
        else:
            wire = _lat_long_grid(semi, axes)
            self._actors["wire"] = self.plotter.add_mesh(wire, style="wireframe", color=tone("#5b6b80"), line_width=1,
                                                         lighting=False, **QUIET)
        reach = AXES_REACH * self.scale
        for k in range(3):
            line = pv.Line(-reach * np.eye(3)[k], reach * np.eye(3)[k])
            self._actors[f"axis{k}"] = self.plotter.add_mesh(line, color=tone(AXIS_COLORS[k]), line_width=2,
                                                             lighting=False, **QUIET)
        self._curve.points[:] = w0
        self._curve.points = self._curve.points
        self._actors["curve"] = self.plotter.add_mesh(self._curve, color=tone(TRAIL_COLOR), line_width=2,
                                                      lighting=False, **QUIET)
        dot = pv.Sphere(radius=0.045 * self.scale, theta_resolution=12, phi_resolution=8)
        self._actors["omega"] = self.plotter.add_mesh(dot, color=tone(OMEGA_COLOR), lighting=False, **QUIET)
        self.title = title = ("polhodes on the energy ellipsoid (body axes):\nseparatrices red, ω the orange dot"
                              if self.family else "polhode: ω on the energy ellipsoid (body axes)")
        label = self.plotter.add_text(title, position="upper_left", font_size=11, color=tone(TEXT_COLOR))
        use_font_file(label.GetTextProperty())  # VTK's own fonts have no ω
        self._actors["label"] = label
        self.set_omega(w0)
        self.reset_camera()

    def _add_family(self, moments, axes, two_T: float) -> None:
        """The family of polhodes and the separatrices (principal axes -> body axes)."""
        from ..physics.poinsot import polhode_family, separatrices

        i1, i2, i3 = moments
        self.separatrix_curves = []
        if (i2 - i1) <= DEGENERATE_MOMENTS * i3 or (i3 - i2) <= DEGENERATE_MOMENTS * i3:
            return  # a symmetric body: no intermediate axis, polhodes are circles
        # each closed-form orbit keeps the sign of its circulation axis; its mirror -omega is
        # the orbit on the other side of the ellipsoid
        family = polhode_family(moments, two_T, FAMILY_COUNT, FAMILY_POINTS)
        curves = [sign * c @ axes.T for c in family for sign in (1.0, -1.0)]
        self.separatrix_curves = [c @ axes.T for c in separatrices(moments, two_T, FAMILY_POINTS)]
        # drawn a little outside the surface, so that the translucent surface does not cover them
        if curves:
            self._actors["family"] = self.plotter.add_mesh(_lines(curves, FAMILY_LIFT), color=tone(FAMILY_COLOR),
                                                           line_width=1, lighting=False, **QUIET)
        self._actors["separatrices"] = self.plotter.add_mesh(_lines(self.separatrix_curves, FAMILY_LIFT),
                                                             color=tone(SEPARATRIX_COLOR), line_width=3, lighting=False,
                                                             **QUIET)

    def set_label_visible(self, on: bool) -> None:
        """Show or hide the title (an export draws its own, sized to the frame)."""
        if "label" in self._actors:
            self._actors["label"].SetVisibility(bool(on))

    def reset_camera(self) -> None:
        """Look along CAMERA_DIRECTION at the whole ellipsoid, held below the pane's title: a long
        thin one (Explorer 1's, 11 times taller than wide) reached up into the title before."""
        d = np.asarray(CAMERA_DIRECTION, dtype=float)
        d /= np.linalg.norm(d)
        up = np.array([0.0, 0.0, 1.0]) - d[2] * d  # the pane's upward direction, in body axes
        up /= np.linalg.norm(up)
        reach = float(np.max(np.abs(self._semi_axes @ up)))  # the ellipsoid's half height on screen
        half = math.tan(math.radians(VIEW_ANGLE / 2))
        distance = max(4.2 * self.scale, reach / (ELLIPSOID_SHARE * half))
        focus = TITLE_SHIFT * distance * half * up  # the view's centre above the ellipsoid's: it sits lower
        aim_camera(self.plotter, focus, focus + distance * d, (0.0, 0.0, 1.0), VIEW_ANGLE)

    def set_omega(self, w_body, history=None) -> None:
        """Move the omega dot to ``w_body``; ``history`` (n, 3), oldest first, is the curve."""
        self._actors["omega"].user_matrix = pose_matrix(offset=np.asarray(w_body, dtype=float))
        if history is not None and len(history):
            fill_polyline(self._curve, np.asarray(history, dtype=float))


def _lines(curves, scale: float = 1.0) -> pv.PolyData:
    """Several polylines in one polydata (one actor draws them all), scaled about the origin."""
    points = scale * np.concatenate(curves)
    cells, start = [], 0
    for c in curves:
        cells.append(np.concatenate([[len(c)], np.arange(start, start + len(c))]))
        start += len(c)
    return pv.PolyData(points, lines=np.concatenate(cells))


def _lat_long_grid(semi: np.ndarray, axes: np.ndarray) -> pv.StructuredGrid:
    """Meridians and parallels of the ellipsoid with these semi-axes along these axes."""
    theta, phi = np.meshgrid(np.linspace(0, 2 * np.pi, 25), np.linspace(0, np.pi, 13), indexing="ij")
    unit = np.stack([np.sin(phi) * np.cos(theta), np.sin(phi) * np.sin(theta), np.cos(phi)], axis=-1)
    pts = (unit * semi) @ axes.T
    return pv.StructuredGrid(pts[..., 0], pts[..., 1], pts[..., 2])
