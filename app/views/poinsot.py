"""The Poinsot view: the energy ellipsoid rolling on the invariable plane (0.6 of the width) beside the family of polhodes (0.4), with the exact ghost."""

from __future__ import annotations

import numpy as np

from .base import PaneSpec, ViewScene, ViewSpec, pose_with_trail, segment_since
from .main import pose_polhode
from .plots import MAIN_PLOTS

#: the construction takes this fraction of the scene's width; the polhode family the rest
CONSTRUCTION_FRACTION = 0.6
#: a narrow pane is framed as if it were at least this wide (width / height): the
#: ellipsoid's outline may touch its sides rather than shrink to a third of it
NARROWEST_FIT = 0.6
#: the family pane's title: a glyph is about this fraction of the font size wide
GLYPH_WIDTH = 0.55


def legend_rows(scenarios=()) -> tuple:
    """The construction's colour key; under a torque the invariable plane turns with L."""
    from ..scene.body_scene import say_momentum
    from ..scene.poinsot import LEGEND

    return say_momentum(LEGEND, scenarios, "L, fixed)", "L, turned by the applied loads)")


def fit_narrow(camera, aspect: float) -> None:
    """Move ``camera`` back so that a view framed for a square pane fits one ``aspect``
    (width / height) wide: the horizontal field of view is the narrower one there."""
    if aspect >= 1.0:
        return
    focus = np.asarray(camera.focal_point)
    camera.position = tuple(focus + (np.asarray(camera.position) - focus) / max(aspect, NARROWEST_FIT))


class PoinsotView(ViewScene):
    """Poinsot's construction with its ghost, and the family of polhodes with omega on it."""

    legend_for = staticmethod(legend_rows)

    def __init__(self, plotters, scenarios, options=None, text_px=None):
        from ..scene import PolhodeScene
        from ..scene.poinsot import PoinsotGhost, PoinsotScene, use_two_lights

        family_plotter = plotters["family"]
        use_two_lights(family_plotter)  # its translucent ellipsoid is large here
        scenes = {"construction": PoinsotScene(plotters["construction"], trail=True),
                  "family": PolhodeScene(family_plotter, family=True)}
        super().__init__(scenarios, scenes, ghosts=(PoinsotGhost(plotters["construction"]),))
        self._text_px = text_px
        self._family_title = None
        self._segment = None
        self.show(scenarios)

    def show(self, scenarios, reset_camera: bool = True) -> None:
        self.scenarios = tuple(scenarios)
        sc = self.scenarios[0]
        self.scenes["construction"].set_body(sc.rigid_body, w0=sc.angular_velocity, reset_camera=reset_camera)
        self.scenes["family"].set_body(sc.rigid_body, sc.angular_velocity)
        self.ghosts[0].set_body(sc.rigid_body)
        self._restart_ghosts()
        self._segment = float(sc.initial_state.t)
        if self._text_px is not None:
            self._export_family_title()

    def _export_family_title(self) -> None:
        """The family pane framed for its narrow shape and titled at the export's text size
        (as large as the overlay text, or as fits across the pane)."""
        from ..scene.style import TEXT_COLOR, tone, use_font_file

        family = self.scenes["family"]
        plotter = family.plotter
        width, h = plotter.window_size  # the pane's size (the export's pane plotter)
        fit_narrow(plotter.camera, width / h)
        family.set_label_visible(False)
        margin = max(4, round(0.7 * self._text_px))
        fits = int((width - 2 * margin) / (GLYPH_WIDTH * max(len(line) for line in family.title.split("\n"))))
        size = max(9, min(self._text_px, fits))
        label = plotter.add_text(family.title, position=(margin, h - margin), font_size=size, color=tone(TEXT_COLOR),
                                 name="polhode-title")
        prop = label.GetTextProperty()
        prop.SetFontSize(size)
        prop.SetVerticalJustificationToTop()
        use_font_file(prop)
        self._family_title = label

    def set_follow(self, on: bool) -> None:
        pass  # the construction's centre is fixed: nothing to follow

    def set_trail_visible(self, on: bool) -> None:
        self.scenes["construction"].set_trail_visible(on)

    @property
    def trail_visible(self) -> bool:
        return self.scenes["construction"].trail_visible

    def pose(self, recordings, t: float, panes=None) -> None:
        from ..scene.poinsot import TRACE_POINTS, TRACE_SECONDS

        rec = recordings[0]
        if panes is None or "construction" in panes:
            scene = self.scenes["construction"]
            # the traces start at the run's start or its last kick
            pose_with_trail(scene, rec, t, TRACE_SECONDS, TRACE_POINTS, {"trail_q": "q", "trail_w": "w"},
                            since=segment_since(rec, t) if scene.trail_visible else None)
            self._pose_ghost(0, t)
        if panes is None or "family" in panes:
            pose_polhode(self, self.scenes["family"], rec, t)


SPEC = ViewSpec(
    name="poinsot", title="Tumble: Poinsot's construction",
    description="Poinsot's construction: the energy ellipsoid rolling on the invariable plane, polhode and "
                "herpolhode, beside the family of polhodes with the separatrices",
    window="tumble.gui.windows.poinsot_window:PoinsotWindow",
    panes=(PaneSpec("construction", CONSTRUCTION_FRACTION),
           PaneSpec("family", 1.0 - CONSTRUCTION_FRACTION, refresh_s=1.0 / 5.0)),
    build=PoinsotView, plots=MAIN_PLOTS, legend_rows=legend_rows, title_corner="bottom")
