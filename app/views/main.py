"""The main view: the tumbling body (exported) and the polhode under the plots (live only), with the exact ghost."""

from __future__ import annotations

import numpy as np

from .base import PaneSpec, ViewScene, ViewSpec, pose_with_trail
from .plots import MAIN_PLOTS

#: the polhode pane shows omega's path over this much simulated time (s), as the plots do by default
POLHODE_SECONDS = 10.0
#: the window poses the polhode pane this often (s of wall time)
POLHODE_REFRESH_S = 1.0 / 5.0


def trail_seconds() -> float:
    """Simulated time the body's trail covers (s): TRAIL_POINTS record intervals, as in the window."""
    from ..scene.body_scene import TRAIL_POINTS
    from ..simulation.worker import RECORD_INTERVAL_S

    return TRAIL_POINTS * RECORD_INTERVAL_S


def legend_rows(scenarios=()) -> tuple:
    """The body scene's colour key, L as it moves in ``scenarios``."""
    from ..scene.body_scene import legend

    return legend(scenarios)


def ghost_row() -> tuple:
    """The colour key's row of the exact ghost."""
    from ..scene.ghost import GHOST_COLOR

    return (("exact ghost: the closed form", GHOST_COLOR),)


class BodyView(ViewScene):
    """One body in the pane ``body``, posed with its trail of the last :func:`trail_seconds`,
    and its exact ghost: what the main and stability views share."""

    legend_for = staticmethod(legend_rows)

    def __init__(self, plotters, scenarios, extra=None):
        from ..scene import RigidBodyScene
        from ..scene.ghost import GhostBody

        scenes = {"body": RigidBodyScene(plotters["body"], follow=True, trail=True), **(extra or {})}
        super().__init__(scenarios, scenes, ghosts=(GhostBody(plotters["body"]),))

    def show(self, scenarios, reset_camera: bool = True) -> None:
        """(Re)build the scenes for ``scenarios`` (a new scenario in the window)."""
        self.scenarios = tuple(scenarios)
        sc = self.scenarios[0]
        self.scenes["body"].set_body(sc.rigid_body, center=np.asarray(sc.position, dtype=float),
                                     w0=sc.angular_velocity, q0=sc.initial_state.q, reset_camera=reset_camera)
        self.ghosts[0].set_body(sc.rigid_body)
        self._restart_ghosts()

    def set_follow(self, on: bool) -> None:
        self.scenes["body"].set_follow(on)

    def set_trail_visible(self, on: bool) -> None:
        self.scenes["body"].set_trail_visible(on)

    @property
    def trail_visible(self) -> bool:
        return self.scenes["body"].trail_visible

    def reset_camera(self, center=None) -> None:
        self.scenes["body"].reset_camera(center)

    def pose_body(self, recording, t: float):
        """Pose the body (and its ghost) at ``t``; returns the pose ``(c, q, w, L)`` or None."""
        from ..scene.body_scene import TRAIL_POINTS

        pose = pose_with_trail(self.scenes["body"], recording, t, trail_seconds(), TRAIL_POINTS,
                               {"trail_q": "q", "trail_c": "c"})
        self._pose_ghost(0, t)
        return pose


class MainScene(BodyView):
    """The body scene, its ghost and (live) the polhode pane."""

    def __init__(self, plotters, scenarios, options=None, text_px=None):
        from ..scene import PolhodeScene

        extra = {"polhode": PolhodeScene(plotters["polhode"])} if "polhode" in plotters else None
        super().__init__(plotters, scenarios, extra)
        self._segment = None
        self.show(scenarios)

    def show(self, scenarios, reset_camera: bool = True) -> None:
        super().show(scenarios, reset_camera)
        sc = self.scenarios[0]
        self._segment = float(sc.initial_state.t)
        if "polhode" in self.scenes:
            self.scenes["polhode"].set_body(sc.rigid_body, sc.angular_velocity)

    def pose(self, recordings, t: float, panes=None) -> None:
        rec = recordings[0]
        if panes is None or "body" in panes:
            self.pose_body(rec, t)
        if "polhode" in self.scenes and (panes is None or "polhode" in panes):
            pose_polhode(self, self.scenes["polhode"], rec, t)


def pose_polhode(view: ViewScene, polhode, recording, t: float) -> None:
    """Put omega and its path over the last :data:`POLHODE_SECONDS` on ``polhode``; the
    ellipsoid is rebuilt for the energy of a new segment (the run's start or a kick)."""
    from ..scene.polhode import POLHODE_POINTS

    span = recording.span(t - POLHODE_SECONDS, t, POLHODE_POINTS)
    if not len(span):
        return
    w = span["w"][-1]
    if span.segment_start != view._segment:
        view._segment = span.segment_start
        polhode.set_body(view.scenarios[0].rigid_body, w)
    polhode.set_omega(w, span["w"])


SPEC = ViewSpec(
    name="main", title="Tumble",
    description="parameter panel, 3D scene of the body, live plots of L, omega, drift and the polhode",
    window="tumble.gui.windows.main_window:MainWindow",
    panes=(PaneSpec("body", 1.0), PaneSpec("polhode", 0.0, exported=False, refresh_s=POLHODE_REFRESH_S)),
    build=MainScene, plots=MAIN_PLOTS, legend_rows=legend_rows)
