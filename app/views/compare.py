"""The compare view: one scenario run by two integrators (or steps) side by side, each with its exact ghost where the closed form applies."""

from __future__ import annotations

import numpy as np

from .base import PaneSpec, ViewOption, ViewScene, ViewSpec, recent
from .main import trail_seconds
from .plots import COMPARE_PLOTS

#: the side labels' size relative to the export's text (they name the integrators)
LABEL_SCALE = 1.15


def runs(scenario, options=None) -> tuple:
    """The pair: ``options["integrators"]`` and ``options["dts"]`` (None: each side's default)."""
    from ..simulation.compare import make_pair

    options = options or {}
    return make_pair(scenario, tuple(options.get("integrators") or (None, None)),
                     tuple(options.get("dts") or (None, None)))


def legend_rows(scenarios=()) -> tuple:
    from ..scene.body_scene import legend
    # the body axes drawn on both bodies, omega, L and the trail; each side is named by its
    # label, in its colour, above it (no path of the centre: the two bodies stand still apart)
    return legend(scenarios)[:6]


def side_labels(pair, separator: str = ", ") -> list:
    from ..simulation.compare import SIDES, side_label

    return [f"{side}: {side_label(s, separator)}" for side, s in zip(SIDES, pair)]


class CompareView(ViewScene):
    """Two bodies under one camera (:class:`~app.scene.compare.CompareScene`), two ghosts."""

    legend_for = staticmethod(legend_rows)

    def __init__(self, plotters, scenarios, options=None, text_px=None):
        from ..scene.compare import CompareScene
        from ..scene.ghost import GhostBody

        plotter = plotters["pair"]
        scene = CompareScene(plotter, follow=True, trail=True)
        super().__init__(scenarios, {"pair": scene}, ghosts=(GhostBody(plotter), GhostBody(plotter)))
        self._text_px = text_px
        self.show(scenarios)

    def show(self, scenarios, reset_camera: bool = True) -> None:
        self.scenarios = tuple(scenarios)
        sc = self.scenarios[0]
        scene = self.scenes["pair"]
        scene.set_bodies(sc.rigid_body, center=np.asarray(sc.position, dtype=float), w0=sc.angular_velocity,
                         q0=sc.initial_state.q, labels=side_labels(self.scenarios, "\n"), reset_camera=reset_camera)
        if self._text_px is not None:
            scene.set_label_size(max(9, round(LABEL_SCALE * self._text_px)))
        for ghost in self.ghosts:
            ghost.set_body(sc.rigid_body)
        self._restart_ghosts()

    def pose(self, recordings, t: float, panes=None):
        """Both sides at the same simulated time ``t`` (live: the earlier of their latest)."""
        from ..scene.body_scene import TRAIL_POINTS

        scene = self.scenes["pair"]
        seconds = trail_seconds() if scene.trail_visible else 0.0
        poses = []
        for rec in recordings:
            span, pose, n = recent(rec, t, seconds, TRAIL_POINTS)
            if pose is None:  # restarted since its snapshot: drawn next frame
                return False
            trail_q = trail_c = None
            if scene.trail_visible:
                trail_q, trail_c = span["q"][:n], span["c"][:n]
            poses.append((*pose, trail_q, trail_c))
        scene.set_poses(poses)
        if self.ghost_visible:
            for k, offset in enumerate(scene.offsets):
                if self.references[k] is not None:
                    c, q, w = self.references[k].at(float(t))
                    self.ghosts[k].set_pose(np.asarray(c) + offset, q, w)


def _options() -> tuple:
    def integrator(text):
        import argparse

        from ..physics.errors import format_value
        from ..physics.integrators import INTEGRATORS

        if text not in INTEGRATORS:
            raise argparse.ArgumentTypeError(f"--integrators must be one of {', '.join(INTEGRATORS)}, "
                                             f"got {format_value(text)}")
        return text

    return (ViewOption("--integrators", "integrators",
                       dict(nargs=2, type=integrator, metavar=("A", "B"),
                            help="--view compare: the two integrators (default semi-implicit-euler splitting)")),
            ViewOption("--dts", "dts",
                       dict(nargs=2, type=float, metavar=("DT_A", "DT_B"),
                            help="--view compare: the two steps (s; default --dt, else 0.01 or the scenario's dt "
                                 "if coarser)")))


SPEC = ViewSpec(
    name="compare", title="Tumble: integrators compared",
    description="two integrators (or steps) on one scenario side by side, their energy and |L| drifts on shared plots",
    window="tumble.gui.windows.compare_window:CompareWindow",
    panes=(PaneSpec("pair", 1.0),), build=CompareView, runs=runs, plots=COMPARE_PLOTS,
    legend_rows=legend_rows, options=_options(), legend_corner="bottom")
