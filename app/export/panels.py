"""The plot panel of an export, for any view: the generic panel of app.export.plots drawing the view's PlotSpec."""

from __future__ import annotations


class PanelAdapter:
    """``render(i, out)`` for frame ``i``: the panel draws up to that frame's time."""

    def __init__(self, panel, timeline):
        self.panel, self.timeline = panel, timeline

    def render(self, i: int, out=None):
        k = int(self.timeline.frame_index[i])
        return self.panel.render(float(self.timeline.t[k]), out=out)


def plot_panel(spec, size, scenarios, timelines, t_end: float) -> PanelAdapter | None:
    """The plots ``spec`` (a :class:`~app.views.ViewSpec`) declares, drawn from ``timelines``
    (None when the view declares none)."""
    plots = spec.plots
    if plots is None:
        return None
    from ..views.compare import side_labels
    from .plots import PlotPanel

    first = timelines[0]
    names = side_labels(scenarios) if len(scenarios) > 1 else None  # a pair's sides; a replay's model names itself
    return PanelAdapter(PlotPanel(size, plots, timelines, t_end, t_start=float(first.t[first.first]), names=names),
                        first)
