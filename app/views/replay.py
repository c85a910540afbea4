"""The replay view: a measured flight's orientation driving the object, the fitted model as its ghost, measured and modelled omega in the plots.

Posed by :meth:`ReplayView.pose` from two recordings: the measured flight (run 0: the
orientation integrated from the gyroscope's samples) and the model flown from the same start
(run 1, when there is a model), both :class:`~app.export.timeline.Timeline` objects made by
:func:`app.export.replay.replay_timelines`, so the window (app.gui.windows.replay_window) and
the clip (app.export.replay) pose the same frames with the same call. Not in the registry of
views: it shows a recording, not a scenario's run (``tumble replay`` opens and exports it).
"""

from __future__ import annotations

from .base import PaneSpec, ViewSpec, recent
from .main import BodyView
from .plots import Curve, PlotRow, PlotSpec

#: the model's curves: a little wider than the measured ones, dashed
MODEL_WIDTH = 1.6
#: the plots' time axis
TIME_SINCE_RELEASE = "time since the release t"


def _omega_curves(run: int, suffix: str, dashed: bool) -> tuple:
    from ..scene.style import AXIS_HEX

    return tuple(Curve("w", k, f"ω{'xyz'[k]}{suffix}", AXIS_HEX[k], run=run, dashed=dashed,
                       width=MODEL_WIDTH if dashed else 1.5) for k in range(3))


#: the measured rates alone (no model)
MEASURED_PLOTS = PlotSpec(
    rows=(PlotRow("Measured angular velocity ω, sensor frame", "rad/s", _omega_curves(0, "", False),
                  markers=True, short_title="ω measured, sensor"),),
    default_window="all", time_title=TIME_SINCE_RELEASE)
#: the measured rates and the model's from the same start (dashed)
REPLAY_PLOTS = PlotSpec(
    rows=(PlotRow("Angular velocity ω, sensor frame: measured (solid), model (dashed)", "rad/s",
                  _omega_curves(0, "", False) + _omega_curves(1, " model", True), markers=True,
                  short_title="ω: measured, model dashed"),),
    default_window="all", time_title=TIME_SINCE_RELEASE)


def legend_rows(scenarios=(), model: bool = True) -> tuple:
    """The replay's colour key: the body's axes, omega, L (with a model: the fitted inertia
    times the measured omega, fixed in space while the flight is free), the trail, the ghost."""
    from ..scene.body_scene import legend
    from ..scene.ghost import GHOST_COLOR

    rows = legend(())
    body = rows[:3] + (("ω  measured angular velocity", rows[3][1]),)
    if model:
        body += (("L = J ω  from the fitted inertia", rows[4][1]),)
    body += (rows[5],)
    if model:
        body += (("fitted model from the same start (ghost)", GHOST_COLOR),)
    return body


class ReplayView(BodyView):
    """The object posed by the measured orientation with its trail; the model as the ghost.

    ``options["model"]``: whether a model is flown (run 1 of :meth:`pose`'s recordings).
    Thread: the thread owning the plotters.
    """

    def __init__(self, plotters, scenarios, options=None, text_px=None):
        self.model = bool((options or {}).get("model"))
        super().__init__(plotters, scenarios)
        self.legend_for = lambda scenarios: legend_rows(scenarios, self.model)
        self.show(scenarios)
        self.set_ghost_visible(self.model)

    def _restart_ghosts(self) -> None:
        """The ghost is the fitted model, posed from its own run (never the closed form)."""

    def set_ghost_visible(self, on: bool) -> None:
        self.ghost_visible = bool(on) and self.model
        for ghost in self.ghosts:
            ghost.set_visible(self.ghost_visible)

    def pose(self, recordings, t: float, panes=None):
        """The measured flight at ``t`` (s since the release) with its trail; the model beside it."""
        pose = self.pose_body(recordings[0], t)
        if self.ghost_visible and len(recordings) > 1:
            _, model, _ = recent(recordings[1], t, 0.0, 1)
            if model is not None:
                self.ghosts[0].set_pose(model[0], model[1], model[2])
        return pose is not None


def spec(model: bool) -> ViewSpec:
    """The replay's view, with or without a model (its plots and colour key differ)."""
    return ViewSpec(
        name="replay", title="Tumble: a throw replayed",
        description="a recorded flight: the measured orientation drives the object, the fitted model is its ghost",
        window="tumble.gui.windows.replay_window:ReplayWindow",
        panes=(PaneSpec("body", 1.0),), build=ReplayView, plots=REPLAY_PLOTS if model else MEASURED_PLOTS,
        legend_rows=lambda: legend_rows((), model), ghost=model, legend_corner="top")
