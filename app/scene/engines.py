"""Up to four bodies side by side in one scene, each labelled with its engine, setting and step:
the engines view and its export. GUI thread only (or the export's rendering thread).

The compare view's scene (:class:`~app.scene.compare.CompareScene`) grown from a pair to a row:
each body is a :class:`~app.scene.RigidBodyScene` posed at its engine's centre of mass plus a
fixed offset along the screen's horizontal, under one camera that frames the whole row.
"""

from __future__ import annotations

import numpy as np

from ..physics.body import Body
from .body_scene import RigidBodyScene
from .compare import FRAME_HALF_HEIGHT, SEPARATION, VIEW_ANGLE, CompareScene

#: the most bodies one row holds (the engines view's settings)
MAX_BODIES = 4
#: each setting's colour, in order (the key, the labels and the curves use the same)
ENGINE_COLORS = ("#58a6ff", "#f0883e", "#3fb950", "#d2a8ff")


class EnginesScene(CompareScene):
    """``n`` tumbling bodies in a row under one camera (see the module docstring).

    Thread: GUI thread (or the export's rendering thread).
    """

    COLORS = ENGINE_COLORS

    def __init__(self, plotter, n: int, *, follow: bool = True, trail: bool = True):
        super().__init__(plotter, follow=follow, trail=trail)
        for scene in self.scenes:  # the pair's two: rebuilt for n
            scene.clear()
        self.scenes = tuple(RigidBodyScene(plotter, follow=False, trail=trail) for _ in range(max(1, n)))
        self.offsets = np.zeros((len(self.scenes), 3))

    @property
    def count(self) -> int:
        return len(self.scenes)

    def camera_distance(self) -> float:
        """How far back (m) the camera must be to frame the whole row and its labels."""
        width, height = self.plotter.window_size
        aspect = max(width, 1) / max(height, 1)
        tan_half = np.tan(np.radians(VIEW_ANGLE / 2))
        half_width = 0.5 * SEPARATION * (self.count - 1) + 2.4
        return self.radius * max(FRAME_HALF_HEIGHT / tan_half, half_width / (tan_half * aspect))


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
        for ghost, offset in zip(self.scenes, self.offsets):
            ghost.set_pose(np.asarray(c, dtype=float) + offset, q, w_body)

    def clear(self) -> None:
        for ghost in self.scenes:
            ghost.clear()
