"""The registered view a window hosts: built on the window's 3D panes and posed from the running workers with the export's own calls, each pane at its refresh period."""

from __future__ import annotations


class LivePanes:
    """When each pane of a view is posed live (GUI thread): the panes without a refresh
    period (``PaneSpec.refresh_s`` 0) every drawn frame, the others at their period, and
    then once more at the frame drawn last if the run paused in between.

    ``view`` is the :class:`~app.views.ViewScene` built on ``panes`` (pane name -> a
    QtInteractor of the window); a 2D pane (the stability map) has no widget here.
    """

    def __init__(self, spec, view, panes: dict):
        self.view = view
        self.widgets = dict(panes)
        self.every_frame = tuple(p.name for p in spec.panes if p.refresh_s <= 0)
        self.periodic = tuple((p.name, p.refresh_s) for p in spec.panes
                              if p.refresh_s > 0 and (p.name in panes or p.kind != "3d"))
        self.posed_at = {name: 0.0 for name, _ in self.periodic}  # wall time of the last pose
        self.shown: dict = {}  # simulated time each periodic pane shows
        self.drawn_time = 0.0  # simulated time of the panes posed every frame

    def restart(self) -> None:
        """Pose every pane on the next frame (a new scenario)."""
        self.posed_at = dict.fromkeys(self.posed_at, 0.0)

    def pose(self, recordings, t: float, now: float):
        """Pose the view at ``t``: the every-frame panes and the periodic ones due at wall
        time ``now``. Returns the periodic panes posed, or None when nothing was posed."""
        due = tuple(name for name, period in self.periodic if now - self.posed_at[name] >= period)
        if self.view.pose(recordings, t, panes=self.every_frame + due) is False:
            return None
        self.drawn_time = t
        return self._posed(due, t, now)

    def catch_up(self, recordings, now: float) -> tuple:
        """No news: the periodic panes still showing an earlier time than the frame drawn,
        posed at it once their period has passed. Returns those posed."""
        t = self.drawn_time
        due = tuple(name for name, period in self.periodic
                    if self.shown.get(name) != t and now - self.posed_at[name] >= period)
        if not due or self.view.pose(recordings, t, panes=due) is False:
            return ()
        return self._posed(due, t, now)

    def _posed(self, names: tuple, t: float, now: float) -> tuple:
        for name in names:
            self.posed_at[name] = now
            self.shown[name] = t
        return names

    @property
    def times(self) -> dict:
        """The simulated time each pane shows (pane name -> t; None: not posed yet)."""
        return {**dict.fromkeys(self.every_frame, self.drawn_time),
                **{name: self.shown.get(name) for name, _ in self.periodic}}
