"""The Poinsot view (``tumble gui --view poinsot``): the main window with Poinsot's
construction in place of the body scene, and the family of polhodes beside it.

It is the main window (:class:`~app.gui.main_window.MainWindow`: parameter dock, worker,
frame timer, plots, controls, exact ghost) with its scenes built and posed by its own hooks:

* the 3D scene is a :class:`~app.scene.poinsot.PoinsotScene` (the energy ellipsoid rolling
  on the invariable plane, polhode, herpolhode, contact point), posed every drawn frame from
  the newest snapshot and the history since the run (or its last kick) began, at most
  :data:`~app.scene.poinsot.TRACE_SECONDS` back;
* the small view under the plots is a :class:`~app.scene.PolhodeScene` with the family of
  polhodes and the two separatrices, and the current omega;
* the exact ghost is a :class:`~app.scene.poinsot.PoinsotGhost` (the closed form's
  ellipsoid and contact point).
"""

from __future__ import annotations

from ..scene import PolhodeScene
from ..scene.poinsot import TRACE_POINTS, TRACE_SECONDS, PoinsotGhost, PoinsotScene, use_two_lights
from .ghost import ExactGhost
from .main_window import MainWindow

#: heights of the plots and of the polhode-family view in the right column (px, initial)
RIGHT_SIZES = (470, 390)


class PoinsotWindow(MainWindow):
    """The Poinsot view. Same signals, worker and counters as :class:`MainWindow`."""

    VIEW = "poinsot"
    EXPORT_VIEW_ARGS = ("--view", "poinsot")
    EXPORT_VIEW_NAME = "Poinsot view"
    VIEW_TITLE = "Tumble: Poinsot's construction"
    TOGGLES = ("trail",)
    TIPS = {"trail": f"Trace omega's path on the ellipsoid (polhode) and the contact point's path on "
                     f"the plane (herpolhode) over the last {TRACE_SECONDS:g} s"}

    def __init__(self, scenario, *, preset=None, paused=False, persist=True, source=None, parent=None):
        super().__init__(scenario, preset=preset, paused=paused, persist=persist, source=source, parent=parent)
        self.splitter.widget(1).setSizes(list(RIGHT_SIZES))
        self.trail_box.setText("polhode + herpolhode")

    # ------------------------------------------------------------------ the main window's hooks

    def _build_scenes(self, stored) -> None:
        """The construction, the closed form's ellipsoid and contact point, the polhode family."""
        self.scene = PoinsotScene(self.scene_view, trail=self.setting(stored, "trail", True, bool))
        self.ghost = ExactGhost(PoinsotGhost(self.scene_view), parent=self,
                                checked=self.setting(stored, "exact_ghost", False, bool))
        use_two_lights(self.polhode_view)  # its translucent ellipsoid is larger here than in the main view
        self.polhode = PolhodeScene(self.polhode_view, family=True)

    def _pose_scenes(self, snaps) -> bool:
        """Pose the construction; the traces start at the run's start or its last kick."""
        snap = snaps[0]
        trail_q = trail_w = None
        if self.scene.trail_visible:
            since = snap.t - TRACE_SECONDS
            if snap.segment_start is not None:
                since = max(since, snap.segment_start.t)
            recent = self.worker.history_since(since, TRACE_POINTS)
            trail_q, trail_w = recent["q"], recent["w"]
        s = snap.state
        self.scene.set_pose(s.c, s.q, s.w, snap.L, trail_q=trail_q, trail_w=trail_w)
        self.ghost.pose(snap)
        return True
