"""Up to four bodies side by side in one scene, each labelled with its engine, setting and step and
ringed in its setting's colour: the engines view and its export. GUI thread only (or the export's
rendering thread).

The compare view's scene (:class:`~app.scene.compare.CompareScene`) grown from a pair to a grid:
each body is a :class:`~app.scene.RigidBodyScene` posed at its engine's centre of mass plus an
offset in the plane facing the camera. :func:`lay_out` chooses the grid (a row of four in a wide
pane, two rows of two in the window's) that draws the bodies largest in the pane's shape, each
with its ghost, trail, arrows and label clear of its neighbours, of the pane's edges and of the
colour key; the camera is then placed so that a body radius spans :attr:`Layout.scale` pixels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyvista as pv

from ..physics import quaternion as quat
from ..physics.body import Body
from .actors import QUIET, aim_camera
from .body_scene import ARROW_LENGTH, GRID_DEPTH, L_ARROW_LENGTH, RigidBodyScene
from .compare import VIEW_ANGLE, CompareScene, side_direction
from .palette import tone
from .poinsot import use_two_lights

#: the most bodies one row holds (the engines view's settings)
MAX_BODIES = 4
#: each setting's colour, in order (the key, the labels, the rings and the curves use the same)
ENGINE_COLORS = ("#58a6ff", "#f0883e", "#3fb950", "#d2a8ff")
#: the ring around each body in its setting's colour, facing the camera: inner and outer radius in
#: body radii. It holds the body (1), its ghost (1.06), both sets of axes (1.3, the ghost's 1.38)
#: and the trail's tip (1.15) as the perspective enlarges them, so only the arrows cross it
RING_RADII = (1.45, 1.52)
#: the omega and L arrows are drawn this much shorter than in the main view: still leaving the
#: body and its ghost with their heads, they no longer set how far apart the bodies must stand
ARROW_SCALE = 0.75
#: an arrow's head reaches this far beside its axis, in body radii (meshes.unit_arrow at L's length)
ARROW_HEAD = 0.1
#: space kept between two bodies' reaches (and each body's share of a perspective's growth), in radii
GAP = 0.2
#: pixels kept free at each edge of the pane, and between a label and the body below it
MARGIN_PX = 8
LABEL_GAP_PX = 6
#: the ring's facets (a polygon this fine reads as a circle at any size here)
RING_RESOLUTION = 72


@dataclass(frozen=True)
class Layout:
    """Where :func:`lay_out` puts ``n`` bodies: ``cols`` x ``rows`` cells, a body radius drawn
    ``scale`` pixels long, each body's centre at ``centres`` (pixels from the pane's top left,
    y down), each body's ``boxes`` (x0, y0, x1, y1: its reach and its label above it), and
    ``label_form`` the index of the label form used (of those :func:`lay_out` was given)."""

    cols: int
    rows: int
    scale: float
    centres: np.ndarray
    boxes: np.ndarray
    label_form: int = 0


def _grid(n, cols, region, reach, label):
    """``n`` bodies in ``cols`` columns, as large as fit in ``region`` (x0, y0, x1, y1; px):
    (scale, centres, boxes), or None where the labels cannot fit side by side."""
    left, right, down, up = reach
    label_w, label_h = label
    rows = math.ceil(n / cols)
    avail_w, avail_h = region[2] - region[0], region[3] - region[1]
    if cols * (label_w + LABEL_GAP_PX) > avail_w:
        return None
    scale = min(avail_w / (cols * (left + right + GAP)),
                (avail_h - rows * (label_h + LABEL_GAP_PX)) / (rows * (down + up + GAP)))
    if scale <= 0:
        return None
    cell_w = max((left + right + GAP) * scale, label_w + LABEL_GAP_PX)
    cell_h = (down + up + GAP) * scale + label_h + LABEL_GAP_PX
    x0 = region[0] + 0.5 * (avail_w - cols * cell_w)
    y0 = region[1] + 0.5 * (avail_h - rows * cell_h)
    centres, boxes = [], []
    for k in range(n):
        row, col = divmod(k, cols)
        in_row = min(cols, n - row * cols)
        cx = x0 + (col + 0.5 * (cols - in_row) + 0.5) * cell_w + 0.5 * (left - right) * scale
        cy = y0 + row * cell_h + label_h + LABEL_GAP_PX + (up + 0.5 * GAP) * scale
        centres.append((cx, cy))
        boxes.append((min(cx - left * scale, cx - 0.5 * label_w), cy - up * scale - LABEL_GAP_PX - label_h,
                      max(cx + right * scale, cx + 0.5 * label_w), cy + down * scale))
    return scale, np.array(centres), np.array(boxes)


def lay_out(n: int, size, reach, labels=((0.0, 0.0),), key=(0, 0)) -> Layout:
    """The grid that draws ``n`` bodies largest in a pane of ``size`` (width, height; px).

    ``reach`` (left, right, down, up) is how far one body's drawing reaches from its centre on the
    screen, in body radii (:meth:`EnginesScene.reaches`); ``labels`` the sizes (width, height; px)
    of the largest label in each form it may take (two lines, one line), set above each body;
    ``key`` (width, height) the colour key in the pane's top left corner, which no body or label
    may touch: the grid then stands beside it or below it. Each number of columns (the last row
    centred), label form and place is tried; the largest scale wins, the fewer rows on a tie.
    """
    width, height = (float(v) for v in size)
    reach = tuple(float(v) for v in reach)
    key_w, key_h = (float(v) for v in key)
    whole = (MARGIN_PX, MARGIN_PX, width - MARGIN_PX, height - MARGIN_PX)
    regions = [whole]
    if key_w > 0 and key_h > 0:
        regions += [(MARGIN_PX, key_h + LABEL_GAP_PX, width - MARGIN_PX, height - MARGIN_PX),  # below the key
                    (key_w + LABEL_GAP_PX, MARGIN_PX, width - MARGIN_PX, height - MARGIN_PX)]  # beside it
    best = None
    for cols in range(1, max(1, n) + 1):
        rows = math.ceil(n / cols)
        if cols * rows - n >= cols:  # a row left empty
            continue
        for form, label in enumerate(labels):
            for region in regions:
                found = _grid(n, cols, region, reach, label)
                if found is None:
                    continue
                scale, centres, boxes = found
                if region is whole and key_w > 0 and np.any((boxes[:, 0] < key_w) & (boxes[:, 1] < key_h)):
                    continue  # under the key
                rank = (round(scale, 6), -rows, -form)
                if best is None or rank > best[0]:
                    best = (rank, Layout(cols, rows, scale, centres, boxes, form))
    if best is None:  # a pane too small for anything: one row, whatever fits
        left, right, down, up = reach
        scale = max(1.0, (width - 2 * MARGIN_PX) / (max(1, n) * (left + right + GAP)))
        xs = (np.arange(n) + 0.5) * width / max(1, n)
        centres = np.column_stack([xs, np.full(n, 0.5 * height)])
        boxes = np.column_stack([xs - left * scale, centres[:, 1] - up * scale, xs + right * scale,
                                 centres[:, 1] + down * scale])
        return Layout(n, 1, scale, centres, boxes)
    return best[1]


def omega_bound(body: Body, w0) -> tuple[float, float]:
    """``(a, b)``: every angular velocity of the torque-free motion from ``w0`` (body frame) has
    the component ``a`` = 2E/|L| along L and at most ``b`` across it (rad/s).

    The largest |omega| over the states with the start's energy E and momentum |L| is found at a
    vertex of {x_i = L_i^2 >= 0: sum x_i = |L|^2, sum x_i / I_i = 2E} (principal axes), where
    sum x_i / I_i^2 = |omega|^2 is largest (a linear programme: a pair of axes at most).
    """
    moments, axes = body.principal()
    w = axes.T @ np.asarray(w0, dtype=float)
    L = moments * w
    L2, E2 = float(L @ L), float(w @ L)
    if L2 == 0.0:
        return 0.0, 0.0
    best = float(w @ w)
    for i in range(3):
        for j in range(i + 1, 3):
            m = np.array([[1.0, 1.0], [1.0 / moments[i], 1.0 / moments[j]]])
            if abs(np.linalg.det(m)) < 1e-12 * abs(m).max() ** 2:
                continue
            x = np.linalg.solve(m, [L2, E2])
            if np.all(x >= -1e-12 * L2):
                best = max(best, float(x[0] / moments[i] ** 2 + x[1] / moments[j] ** 2))
    a = E2 / math.sqrt(L2)
    return a, math.sqrt(max(best - a * a, 0.0))


class EngineBody(RigidBodyScene):
    """One body of the grid: the main view's drawing, its arrows :data:`ARROW_SCALE` as long."""

    def _pose_arrow(self, name: str, c: np.ndarray, vector, per_unit: float | None) -> None:
        super()._pose_arrow(name, c, vector, per_unit)
        actor = self._actors[name]
        if actor.GetVisibility():
            m = np.array(actor.user_matrix)
            m[:3, :3] *= ARROW_SCALE
            actor.user_matrix = m


class EnginesScene(CompareScene):
    """``n`` tumbling bodies in a grid under one camera (see the module docstring).

    Thread: GUI thread (or the export's rendering thread).
    """

    COLORS = ENGINE_COLORS

    def __init__(self, plotter, n: int, *, follow: bool = True, trail: bool = True):
        super().__init__(plotter, follow=follow, trail=trail)
        # four bodies this large are shaded per fragment for each light: two lights, as the
        # Poinsot views (CPU per render 81 -> 72 ms measured off screen at 840x628, loaded)
        use_two_lights(plotter)
        for scene in self.scenes:  # the pair's two: rebuilt for n
            scene.clear()
        self.scenes = tuple(EngineBody(plotter, follow=False, trail=trail) for _ in range(max(1, n)))
        self.offsets = np.zeros((len(self.scenes), 3))
        self.rings: list = []
        self.layout: Layout | None = None
        self._reach = (RING_RADII[1],) * 4
        self._label_px = [(0.0, 0.0)]
        self._key_px = (0.0, 0.0)
        self._center = np.zeros(3)
        self._poses = None
        self._companions: tuple = ()
        self._fitted_offset = None
        self._laid_out_for = None  # the pane's size (px) the layout was made for
        self._texts: tuple = ()  # the labels as given (:meth:`_label_forms`)

    @property
    def count(self) -> int:
        return len(self.scenes)

    # ------------------------------------------------------------------ building

    def set_bodies(self, body: Body, center=(0.0, 0.0, 0.0), w0=None, labels=("A", "B"),
                   reset_camera: bool = True, q0=None) -> None:
        """As :meth:`CompareScene.set_bodies`, each body ringed in its colour, the grid laid out
        for the pane's shape (:func:`lay_out`)."""
        self._poses = None
        super().set_bodies(body, center, w0, labels, reset_camera=False, q0=q0)
        self._center = np.asarray(center, dtype=float).copy()
        self._reach = self.reaches(body, w0, q0)
        self._texts = tuple(labels)
        self._measure_labels()
        from vtkmodules.vtkRenderingCore import vtkFollower

        disc = pv.Disc(inner=RING_RADII[0] * self.radius, outer=RING_RADII[1] * self.radius, normal=(0, 0, 1),
                       r_res=1, c_res=RING_RESOLUTION)
        for color in self.COLORS[:self.count]:
            ring = vtkFollower()
            ring.SetMapper(pv.DataSetMapper(disc))
            ring.GetProperty().SetColor(pv.Color(tone(color)).float_rgb)  # the scheme in use
            ring.GetProperty().LightingOff()
            ring.SetCamera(self.plotter.renderer.GetActiveCamera())
            self.plotter.add_actor(ring, **QUIET)
            self.rings.append(ring)
        self._arrange()
        if reset_camera:
            self.reset_camera(center)
        else:
            self._focus = self._center + self.offsets.mean(axis=0)

    def attach(self, companions) -> None:
        """Rows posed with this one (the view's :class:`GhostRow`): they share its offsets, and
        are posed again where a new layout moves the bodies."""
        self._companions = tuple(companions)
        for row in self._companions:
            row.offsets = self.offsets

    def clear(self) -> None:
        super().clear()
        for ring in self.rings:
            self.plotter.remove_actor(ring, render=False)
        self.rings = []

    def reaches(self, body: Body, w0=None, q0=None) -> tuple:
        """(left, right, down, up): how far from its centre one body's drawing reaches on the
        screen from the default direction, in body radii, over its whole torque-free motion from
        ``w0`` (body frame) at ``q0``: its ring (which holds the body, ghost, axes and trail), the
        L arrow (fixed in space) and the omega arrow (along L by 2E/|L|, across it at most by
        :func:`omega_bound`; drawn ``ARROW_LENGTH`` radii long at the start's |omega|)."""
        d = self._view / np.linalg.norm(self._view)
        right = side_direction(d)
        up = np.cross(right, -d)
        reach = []
        w0 = np.zeros(3) if w0 is None else np.asarray(w0, dtype=float)
        R0 = quat.to_matrix(np.array([1.0, 0.0, 0.0, 0.0]) if q0 is None else np.asarray(q0, dtype=float))
        L = R0 @ (body.inertia @ w0)
        n_L, n_w = float(np.linalg.norm(L)), float(np.linalg.norm(w0))
        a, b = omega_bound(body, w0)
        per_unit = ARROW_LENGTH / n_w if n_w > 0 else 0.0
        for e in (-right, right, -up, up):
            r = RING_RADII[1]
            if n_L > 0:
                along = float(L @ e) / n_L
                across = math.sqrt(max(1.0 - along * along, 0.0))
                r = max(r, ARROW_SCALE * L_ARROW_LENGTH * along + ARROW_HEAD,
                        ARROW_SCALE * per_unit * (a * along + b * across) + ARROW_HEAD)
            reach.append(r)
        return tuple(reach)

    def set_labels(self, labels) -> None:
        super().set_labels(labels)
        self._texts = tuple(labels)
        self._measure_labels()
        self._arrange()

    def _label_forms(self) -> list:
        """Each label's texts: as given (engine and setting over the step), and on one line."""
        texts = self._texts or self.labels
        return [texts, tuple(", ".join(t.split("\n")) for t in texts)]

    def _measure_labels(self) -> None:
        """The largest label's size on screen (px), in each of its forms."""
        self._texts = self._texts or self.labels
        forms = []
        for texts in self._label_forms():
            sizes = [(0.0, 0.0)]
            for actor, text in zip(self._labels, texts):
                actor.SetInput(text)
                box = [0.0] * 4
                actor.GetBoundingBox(self.plotter.renderer, box)
                sizes.append((box[1] - box[0], box[3] - box[2]))
            forms.append(tuple(np.max(sizes, axis=0)))
        self._label_px = forms

    def set_label_size(self, points: int) -> None:
        super().set_label_size(points)
        self._measure_labels()
        self._arrange()
        self.reset_camera()

    def keep_key_clear(self, width_px: float, height_px: float) -> None:
        """Keep every body and label out of the colour key's corner (``width_px`` x
        ``height_px`` at the pane's top left), and re-aim."""
        key = (max(0.0, float(width_px)), max(0.0, float(height_px)))
        if key == self._key_px and self.layout is not None:
            return  # as laid out (a user's turn of the camera is kept)
        self._key_px = key
        self._arrange()
        self.reset_camera()

    # ------------------------------------------------------------------ the grid and the camera

    def _pane_size(self) -> tuple:
        width, height = self.plotter.window_size
        return max(int(width), 1), max(int(height), 1)

    def _arrange(self) -> None:
        """Lay the bodies out for the pane's shape now (offsets changed in place, so the ghosts
        sharing them follow), and pose everything again at the last poses."""
        width, height = self._pane_size()
        self._laid_out_for = (width, height)
        self.layout = lay_out(self.count, (width, height), self._reach, self._label_px, self._key_px)
        for actor, text in zip(self._labels, self._label_forms()[self.layout.label_form]):
            actor.SetInput(text)
        d = self._view / np.linalg.norm(self._view)
        right = side_direction(d)
        up = np.cross(right, -d)
        px = self.radius / self.layout.scale  # metres per pixel at the bodies
        dx = self.layout.centres[:, 0] - 0.5 * width
        dy = 0.5 * height - self.layout.centres[:, 1]
        self.offsets[...] = (np.outer(dx, right) + np.outer(dy, up)) * px
        self._label_lift = (self._reach[3] * self.radius + LABEL_GAP_PX * px) * up
        if self._grid is not None:  # the floor under the lowest body
            self._grid.depth = GRID_DEPTH * self.radius + max(0.0, -float(self.offsets[:, 2].min()))
            self._grid.origin = np.full(3, np.nan)
            self._grid.follow(self._center + self.offsets.mean(axis=0))
        if self._poses is not None:
            self.set_poses(self._poses)
            for row in self._companions:
                row.repose()

    def camera_distance(self) -> float:
        """How far back (m) the camera must be for a body radius to span the layout's scale."""
        width, height = self._pane_size()
        scale = self.layout.scale if self.layout is not None else height / 10
        return self.radius * height / (2.0 * scale * math.tan(math.radians(VIEW_ANGLE / 2)))

    def reset_camera(self, center=None) -> None:
        """Look at the grid from the default direction, a body radius spanning the layout's
        scale, the pane's middle on the simulated centre ``center``."""
        if center is not None:
            self._center = np.asarray(center, dtype=float).copy()
        if self.layout is None or self.layout_size != self._pane_size():
            self._arrange()
        c = self._center
        aim_camera(self.plotter, c, c + self.camera_distance() * self._view, (0.0, 0.0, 1.0), VIEW_ANGLE)
        self._focus = c + self.offsets.mean(axis=0)  # what following tracks: the bodies' mean
        cam = self.plotter.camera
        self._fitted_offset = np.subtract(cam.position, cam.focal_point)

    @property
    def layout_size(self):
        """The pane's size (width, height; px) the layout was made for (None before the first)."""
        return self._laid_out_for

    def fit_to_view(self) -> None:
        """After a resize: lay out and re-aim for the new shape, unless the user has turned or
        zoomed the camera since it was last fitted."""
        cam = self.plotter.camera
        offset = np.subtract(cam.position, cam.focal_point)
        if self._fitted_offset is None or np.allclose(offset, self._fitted_offset, rtol=1e-9, atol=0.0):
            self._arrange()
            self.reset_camera()

    # ------------------------------------------------------------------ each frame

    def set_poses(self, poses) -> None:
        """As :meth:`CompareScene.set_poses`; each body's ring follows it."""
        self._poses = list(poses)
        super().set_poses(self._poses)
        for ring, offset, pose in zip(self.rings, self.offsets, self._poses):
            ring.SetPosition(*(np.asarray(pose[0], dtype=float) + offset))


class GhostRow:
    """The exact ghost drawn at every body of the row: one :class:`~app.scene.ghost.GhostBody` a
    body, posed together from one reference at the row's ``offsets``. It stands in for one ghost
    where a view has one (``actors``: every body's ghost actors, the first body's first).

    Thread: GUI thread (or the export's rendering thread).
    """

    def __init__(self, plotter, n: int):
        from .ghost import GhostBody

        self.scenes = tuple(GhostBody(plotter) for _ in range(max(1, n)))
        self.offsets = np.zeros((len(self.scenes), 3))
        self._pose = None

    @property
    def actors(self) -> dict:
        return {f"{k}/{name}": actor for k, ghost in enumerate(self.scenes) for name, actor in ghost.actors.items()}

    def set_body(self, body: Body) -> None:
        for ghost in self.scenes:
            ghost.set_body(body)

    def set_visible(self, on: bool) -> None:
        for ghost in self.scenes:
            ghost.set_visible(on)

    def set_pose(self, c, q, w_body=None) -> None:
        """Every body's ghost at the reference's ``c`` (world) plus its body's offset, turned by ``q``."""
        self._pose = (c, q, w_body)
        for ghost, offset in zip(self.scenes, self.offsets):
            ghost.set_pose(np.asarray(c, dtype=float) + offset, q, w_body)

    def repose(self) -> None:
        """Pose again at the last pose (the offsets have moved)."""
        if self._pose is not None:
            self.set_pose(*self._pose)

    def clear(self) -> None:
        for ghost in self.scenes:
            ghost.clear()
