"""What a view is (ViewSpec, PaneSpec), what both the window and the export call to pose it (ViewScene), and the pose helpers they share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from ..physics.errors import ParameterError

#: a run recorded ahead of the time posed (the other side of a comparison) is read this far
#: ahead for the sample after it (s): the two workers of a pair are a batch or two apart
AHEAD_SECONDS = 1.0


def ghost_scenario(scenario):
    """The scenario the exact ghost follows for a run of ``scenario``: ``scenario`` itself, or,
    for a rigid body whose only loads are drags (a body made by ``tumble fit``), the same body
    without its drag: the throw in a vacuum, in closed form, beside the run slowed by the air."""
    loads = tuple(getattr(scenario, "loads", ()) or ())
    if loads and all(spec.kind == "drag" for spec in loads) and scenario.rigid_body.is_rigid:
        return scenario.replace(loads=())
    return scenario


def ghost_without_drag(scenario) -> bool:
    """Whether the ghost of ``scenario`` leaves out its drag (see :func:`ghost_scenario`)."""
    return ghost_scenario(scenario) is not scenario


@dataclass(frozen=True)
class PaneSpec:
    """One pane of a view: a 3D scene (``kind`` "3d", on a plotter) or a picture drawn by the
    export with matplotlib (``kind`` "2d"); ``share`` of the export's scene width; ``exported``
    False for a pane shown live only; ``refresh_s`` how often the window poses it (0: every frame)."""

    name: str
    share: float = 1.0
    kind: str = "3d"
    exported: bool = True
    refresh_s: float = 0.0


@dataclass(frozen=True)
class ViewOption:
    """A command-line option of one view (``tumble export --view NAME --flag VALUE``):
    ``flag``, argparse keywords, and ``key`` the name in the options mapping."""

    flag: str
    key: str
    kwargs: dict = field(default_factory=dict)


@dataclass(frozen=True)
class ViewSpec:
    """A view, declared once for the window, the export dialog and the command line.

    ``runs(scenario, options)`` -> the scenarios it runs (compare: the pair); ``build(plotters,
    scenarios, options, text_px)`` -> its :class:`ViewScene` (``plotters`` maps each pane's name
    to a pyvista plotter; ``text_px`` the export's text height, None live); ``plots`` its
    ``PlotSpec`` (app.views.plots) or None; ``ghost`` whether the exact ghost exists in this view;
    ``window`` the Qt window hosting it, as "module:Class" (imported by the GUI only);
    ``legend_rows()`` its colour key; ``options`` its own command-line options (:class:`ViewOption`);
    ``title_corner`` where an export puts the title ("top" or "bottom" right), ``legend_corner``
    its colour key ("top" or "bottom" left); ``check(scenarios, options)`` refuses a request the
    view would refuse only once built (an export calls it before it renders anything).
    """

    name: str
    title: str
    description: str
    window: str
    panes: tuple
    build: Callable
    runs: Callable = lambda scenario, options: (scenario,)
    check: Callable = lambda scenarios, options: None
    plots: object = None  # a PlotSpec (app.views.plots), or None
    legend_rows: Callable = lambda: ()
    ghost: bool = True
    options: tuple = ()
    title_corner: str = "top"
    legend_corner: str = "top"

    def pane(self, name: str) -> PaneSpec:
        return next(p for p in self.panes if p.name == name)

    @property
    def exported_panes(self) -> tuple:
        return tuple(p for p in self.panes if p.exported)


class ViewScene:
    """What the window and the export both call, so the two cannot drift apart.

    Subclasses set ``legend_for`` (their module's ``legend_rows(scenarios)``: the key says what
    L does in the scenarios shown) and implement :meth:`pose`; the toggles forward to the
    scenes they list in ``_scenes`` (objects with set_follow/set_trail_visible/reset_camera/clear).
    Thread: the thread owning the plotters (the GUI thread, or the export's).
    """

    #: the colour key of the scenarios shown: ``legend_for(scenarios)`` -> ((label, colour), ...)
    legend_for: Callable = staticmethod(lambda scenarios: ())

    @property
    def legend_rows(self) -> tuple:
        """The colour key of the scenarios the view shows now (a new scenario may change it)."""
        return tuple(self.legend_for(self.scenarios))

    def __init__(self, scenarios, scenes: dict, ghosts: Sequence = ()):
        self.scenarios = tuple(scenarios)
        self.scenes = scenes
        self.ghosts = tuple(ghosts)
        self.references: list = [None] * len(self.ghosts)
        self.ghost_visible = False

    # ------------------------------------------------------------------ toggles

    def set_follow(self, on: bool) -> None:
        for scene in self.scenes.values():
            if hasattr(scene, "set_follow"):
                scene.set_follow(on)

    def set_trail_visible(self, on: bool) -> None:
        for scene in self.scenes.values():
            if hasattr(scene, "set_trail_visible"):
                scene.set_trail_visible(on)

    @property
    def trail_visible(self) -> bool:
        return next(iter(self.scenes.values())).trail_visible

    @property
    def follow(self) -> bool:
        return bool(getattr(next(iter(self.scenes.values())), "follow", False))

    def set_ghost_visible(self, on: bool) -> None:
        """Show the exact ghost, from each run's start (see :meth:`set_ghost_start`).

        Raises :class:`ParameterError` naming ``ghost`` where the closed form does not apply.
        """
        if on:
            for k, scenario in enumerate(self.scenarios[:len(self.ghosts)]):
                if self.references[k] is None:
                    self.set_ghost_start(k, scenario.initial_state)
        self.ghost_visible = bool(on) and bool(self.ghosts)
        for ghost in self.ghosts:
            ghost.set_visible(self.ghost_visible)

    def set_ghost_start(self, k: int, state) -> None:
        """Start run ``k``'s ghost from ``state`` (the run's start, or its last kick)."""
        from ..physics.reference import ExactReference, exact_unavailable_reason

        model = ghost_scenario(self.scenarios[k]).model
        reason = exact_unavailable_reason(model)
        if reason is not None:
            raise ParameterError("ghost", "on", f"be off for this scenario: it has {reason}")
        self.references[k] = ExactReference(model, state)

    def reset_camera(self, center=None) -> None:
        """Every pane from its default direction; a body's scene looks at ``center`` (world,
        the body's simulated centre) when given, else at its current focus."""
        for scene in self.scenes.values():
            if center is not None and hasattr(scene, "set_follow"):
                scene.reset_camera(center)
            else:
                scene.reset_camera()

    def set_ghost_reference(self, k: int, reference) -> None:
        """Pose run ``k``'s ghost from ``reference`` (anything with ``at(t) -> (c, q, w)``: the
        window's cached closed form), until the next :meth:`show` or :meth:`set_ghost_start`."""
        self.references[k] = reference

    def _restart_ghosts(self) -> None:
        """After :meth:`show`: the ghosts start again from the runs' starts, or go off where
        the closed form does not apply to the new scenario."""
        self.references = [None] * len(self.ghosts)
        if self.ghost_visible:
            try:
                self.set_ghost_visible(True)
            except ParameterError:
                self.set_ghost_visible(False)

    def show(self, scenarios, reset_camera: bool = True) -> None:
        """(Re)build the scenes for ``scenarios`` (a new scenario in the window; the
        constructor calls it for the first)."""
        raise NotImplementedError

    def clear(self) -> None:
        for scene in self.scenes.values():
            scene.clear()
        for ghost in self.ghosts:
            ghost.clear()

    # ------------------------------------------------------------------ each frame

    def pose(self, recordings, t: float, panes=None):
        """Pose every pane (or the ``panes`` named) for simulated time ``t`` from
        ``recordings`` (one :class:`~app.simulation.recording.Recording` per run). Returns
        False when nothing could be posed (a run restarted since ``t``: drawn next frame)."""
        raise NotImplementedError

    def _pose_ghost(self, k: int, t: float) -> None:
        if self.ghost_visible and self.references[k] is not None:
            c, q, w = self.references[k].at(float(t))
            self.ghosts[k].set_pose(c, q, w)


def recent(recording, t: float, seconds: float, max_points: int, since: float | None = None):
    """The span of ``recording`` over the last ``seconds`` up to ``t`` (not before ``since``),
    thinned to ``max_points``, with the pose at ``t`` as ``(c, q, w, L)``: the newest sample
    when it is at ``t``, else linear between the samples around ``t`` (:func:`pose_at`).
    Returns ``(span, pose, n)``: ``n`` rows of the span are at or before ``t``; ``pose`` is
    None when nothing is recorded yet."""
    from ..simulation.compare import pose_at

    t0 = t - seconds if since is None else max(t - seconds, since)
    span = recording.span(t0, t, max_points)
    if len(span) and span["t"][-1] == t:
        return span, tuple(span[k][-1] for k in ("c", "q", "w", "L")), len(span)
    ahead = recording.span(t, t + AHEAD_SECONDS)
    # the two samples around t are all the interpolation needs
    rows = {k: np.concatenate([span[k][-1:], ahead[k][:1]]) for k in ("t", "c", "q", "w", "L")}
    if not len(rows["t"]):
        return span, None, 0
    c, q, w, L, _ = pose_at(rows, t)
    return span, (c, q, w, L), len(span)


#: most the body turns between two points of a trail of orientations (rad): a faster spin gets
#: points filled in between its samples, and a shorter trail, so that its circles stay round
#: (explorer-1's 78 rad/s turned 0.8 rad between 10 ms samples, and drew a square)
TRAIL_STEP = 0.1


def pose_with_trail(scene, recording, t: float, seconds: float, points: int, trail: dict, since=None):
    """Pose ``scene`` at ``t`` with its trail when shown: ``trail`` maps each ``set_pose``
    keyword to the span column it takes (``{"trail_q": "q", "trail_c": "c"}``), over the last
    ``seconds`` (not before ``since``) thinned to ``points``. Returns the pose ``(c, q, w, L)``,
    or None when nothing is recorded yet."""
    if scene.trail_visible:
        span, pose, n = recent(recording, t, seconds, points, since=since)
        rate = 0.0 if pose is None else float(np.linalg.norm(pose[2]))
        if rate * seconds > points * TRAIL_STEP:  # the trail's points cannot follow so many turns
            span, pose, n = recent(recording, t, points * TRAIL_STEP / rate, points, since=since)
        trails = {keyword: span[column][:n] for keyword, column in trail.items()}
        # a fast spin turns far between samples: fill in its arcs, but only where the
        # orientations are not paired with rates (Poinsot's herpolhode rotates trail_w by trail_q)
        if "trail_q" in trails and "trail_w" not in trails and n:
            from ..physics.theory import densify_orientations

            dense = densify_orientations(span["t"][:n], span["q"][:n], span["w"][:n], TRAIL_STEP)
            trails["trail_q"] = dense[-points:]
    else:
        span, pose, n = recent(recording, t, 0.0, 1)
        trails = dict.fromkeys(trail)
    if pose is not None:
        c, q, w, L = pose
        scene.set_pose(c, q, w, L, **trails)
    return pose


def segment_since(recording, t: float) -> float | None:
    """Where the segment being drawn at ``t`` began (the run's start or its last kick)."""
    return recording.span(t, t, 1).segment_start
