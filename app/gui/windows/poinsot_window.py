"""The Poinsot view (``tumble gui --view poinsot``): the main window with Poinsot's
construction in place of the body scene, and the family of polhodes beside it.

It is the main window (:class:`~app.gui.windows.main_window.MainWindow`: parameter dock, worker,
frame timer, plots, controls, exact ghost) hosting the registered view ``poinsot``
(:mod:`app.views.poinsot`, which builds and poses the construction, its traces since the
run or its last kick, the closed form's ellipsoid and contact point, and the family of
polhodes under the plots, at that pane's own period).
"""

from __future__ import annotations

from ...scene.poinsot import TRACE_SECONDS
from .main_window import MainWindow

#: heights of the plots and of the polhode-family view in the right column (px, initial)
RIGHT_SIZES = (470, 390)


class PoinsotWindow(MainWindow):
    """The Poinsot view. Same signals, worker and counters as :class:`MainWindow`."""

    VIEW = "poinsot"
    VIEW_TITLE = "Tumble: Poinsot's construction"
    TOGGLES = ("trail",)
    TIPS = {"trail": f"Trace omega's path on the ellipsoid (polhode) and the contact point's path on "
                     f"the plane (herpolhode) over the last {TRACE_SECONDS:g} s"}

    def __init__(self, scenario, *, preset=None, paused=False, persist=True, source=None, parent=None):
        super().__init__(scenario, preset=preset, paused=paused, persist=persist, source=source, parent=parent)
        self.side_tabs.widget(0).setSizes(list(RIGHT_SIZES))  # the Plots tab: plots over the polhode
        # the plane is drawn as a floor, so "up" is -L: the world's axes in the corner showed z
        # pointing down; the colour key and the body's own axes say which way things point here
        self.scene_view.hide_axes()
        self.trail_box.setText("polhode + herpolhode")
