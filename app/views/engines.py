"""The engines view: up to four engine settings side by side, each with the exact ghost, and under
them each one's orientation error, intermediate-axis omega and separatrix ratio (app.engines)."""

from __future__ import annotations

import contextlib

import numpy as np

from .base import PaneSpec, ViewOption, ViewScene, ViewSpec

#: settings shown side by side at most
MAX_SETTINGS = 4
#: the labels' size relative to the export's text (they name engine, setting and step)
LABEL_SCALE = 1.0
#: seconds of each body's trail (the intermediate axis' tip), as in the main view
TRAIL_SECONDS = 2.0
#: the curves pane is posed this often in the window (s of wall time): it redraws a figure
CURVES_REFRESH_S = 1.0 / 5.0


def default_engines() -> str:
    """Every installed engine's default, then Tumble's RK4, at most :data:`MAX_SETTINGS`."""
    from ..engines import registry

    return ",".join(registry.canonical(e, s) for e, s in registry.parse("all")[:MAX_SETTINGS])


def settings_of(options, check_installed: bool = True) -> list:
    """The (engine, setting) pairs the options name (``--engines``; default :func:`default_engines`)."""
    from ..engines import registry
    from ..physics.errors import ParameterError

    text = (options or {}).get("engines") or default_engines()
    pairs = registry.parse(text, check_installed=check_installed)
    if len(pairs) > MAX_SETTINGS:
        raise ParameterError("--engines", text, f"name at most {MAX_SETTINGS} settings for --view engines")
    return pairs


def runs(scenario, options=None) -> tuple:
    """The scenario itself (its run is the view's clock), the engines named checked. Whether an
    engine can take the scenario is the audit's to say (after the export's own checks)."""
    settings_of(options)
    return (scenario,)


def check_request(scenario, view: str, engines) -> None:
    """``tumble gui [SCENARIO] --view engines --engines LIST``: refused in one line before any
    window (``--engines`` with another view, an unknown name, a scenario an engine cannot take);
    a missing engine is not refused here: the window greys it out."""
    from ..physics.errors import ParameterError
    from ..scenario import load

    if view != "engines":
        raise ParameterError("--engines", engines, "go with --view engines")
    settings_of({"engines": engines}, check_installed=False)
    if scenario is not None:
        from ..engines.start import check_free_body

        check_free_body(load(scenario))


def check_plan(scenarios, options=None) -> None:
    """The audit this view would run, checked as the audit checks it (its steps, samples and
    sizes; nothing run), refused in the scenario's words: an export says so before it builds the
    view or renders a frame."""
    from ..engines.audit import plan
    from ..physics.errors import ParameterError

    sc = scenarios[0]
    names = [f"{e}:{s}" for e, s in settings_of(options)]
    try:
        plan(sc, names, [float(sc.solver.dt)], sc.solver.duration, None)
    except ParameterError as err:
        raise scenarios_error(err) from None


#: what the audit's flags are in this view: the scenario's own fields (an export's --duration is
#: the clip's length, and its --dt, if given, is already the scenario's step)
SCENARIO_FIELDS = {"--duration": "the scenario's solver.duration", "--dt": "the scenario's solver.dt",
                   "--sample": "the engines view's sample interval"}


def scenarios_error(err):
    """``err`` (a refusal of the audit's plan) naming the scenario's fields instead of the audit's
    flags, which the engines view's user never gave (an engines export said "--duration ...
    got 60": the T-handle's run, not the clip's --duration)."""
    from ..physics.errors import ParameterError

    if err.field not in SCENARIO_FIELDS:
        return err
    rule = err.rule
    for flag, field in (("--dt", "dt"), ("--duration", "the run"), ("--sample", "the sample interval")):
        rule = rule.replace(flag, field)
    return ParameterError(SCENARIO_FIELDS[err.field], err.value, rule)


def legend_rows(scenarios=()) -> tuple:
    """The bodies' part of the key (each setting is named by its label, in its colour, above it)."""
    from ..scene.body_scene import legend

    return legend(scenarios)[3:6]


def setting_label(engine: str, setting: str, dt: float, separator: str = "\n") -> str:
    from ..engines import registry

    return f"{registry.canonical(engine, setting)}{separator}dt {dt:g}"


class EnginesView(ViewScene):
    """Engine runs in a row (:class:`~app.scene.engines.EnginesScene`), one exact ghost each, and
    the curves (:meth:`picture`). The runs come from :meth:`set_audit`: built anywhere, the view
    audits in its constructor (the export, a script); built by the window inside
    :meth:`deferred`, it waits for the window's thread to hand the audit over, each body standing
    at the start until then. Thread: the one owning the plotters."""

    #: True while a window builds the view (:meth:`deferred`; GUI thread only)
    _deferred = False

    @classmethod
    @contextlib.contextmanager
    def deferred(cls):
        """Views built inside this block leave the audit to the caller (:meth:`set_audit`)."""
        cls._deferred = True
        try:
            yield
        finally:
            cls._deferred = False

    def __init__(self, plotters, scenarios, options=None, text_px=None):
        from ..scene.engines import EnginesScene, GhostRow

        self.options = dict(options or {})
        deferred = EnginesView._deferred
        self.pairs = settings_of(self.options, check_installed=not deferred)
        plotter = plotters["bodies"]
        scene = EnginesScene(plotter, len(self.pairs), follow=True, trail=True)
        super().__init__(scenarios, {"bodies": scene}, ghosts=(GhostRow(plotter, len(self.pairs)),))
        self._text_px = text_px
        self.audit = None
        self.t = 0.0
        self.show(scenarios)
        if not deferred:  # the export, a script: audit now, on this thread
            self.set_audit(self.run_audit())

    @property
    def dt(self) -> float:
        return float(self.scenarios[0].solver.dt)

    @property
    def labels(self) -> list:
        return [setting_label(e, s, self.dt) for e, s in self.pairs]

    @property
    def legend_rows(self) -> tuple:
        """The bodies' arrows and trail, then each setting in its colour (engine, setting, step)."""
        from ..scene.engines import ENGINE_COLORS

        return legend_rows(self.scenarios) + tuple((setting_label(e, s, self.dt, ", "), color)
                                                   for (e, s), color in zip(self.pairs, ENGINE_COLORS))

    def run_audit(self, progress=None, cancelled=None):
        """The audit this view shows: its settings at the scenario's step over its duration."""
        from ..engines.audit import run_audit

        from ..physics.errors import ParameterError

        sc = self.scenarios[0]
        names = [f"{e}:{s}" for e, s in self.pairs]
        try:
            return run_audit(sc, names, [self.dt], sc.solver.duration, None, progress=progress, cancelled=cancelled)
        except ParameterError as err:  # the audit's flags were never given here: the scenario's fields were
            raise scenarios_error(err) from None

    def set_audit(self, audit) -> None:
        """Show ``audit``'s runs (one per setting, in order)."""
        self.audit = audit

    def show(self, scenarios, reset_camera: bool = True) -> None:
        self.scenarios = tuple(scenarios)
        self.audit = None
        sc = self.scenarios[0]
        scene = self.scenes["bodies"]
        scene.set_bodies(sc.rigid_body, center=np.asarray(sc.initial_state.c, dtype=float), w0=sc.angular_velocity,
                         q0=sc.initial_state.q, labels=self.labels, reset_camera=reset_camera)
        if self._text_px is not None:
            scene.set_label_size(max(9, round(LABEL_SCALE * self._text_px)))
        for ghost in self.ghosts:
            ghost.set_body(sc.rigid_body)
        scene.attach(self.ghosts)  # the ghosts share the bodies' offsets, moved with them
        self._restart_ghosts()

    def poses_at(self, t: float) -> list:
        """Each body's ``(c, q, w, L, trail_q, trail_c)`` at ``t`` from its engine run (the start
        before the audit is in; the last sample after its end)."""
        from ..physics import diagnostics

        sc = self.scenarios[0]
        body = sc.rigid_body
        if self.audit is None:
            s0 = sc.initial_state
            L = diagnostics.angular_momentum(body, s0.q, s0.w)
            return [(s0.c, s0.q, s0.w, L, None, None)] * len(self.pairs)
        poses = []
        scene = self.scenes["bodies"]
        for run in self.audit.runs:
            traj = run.trajectory
            c, q, w = interpolate(traj.t, traj.c, traj.q, traj.w, t)
            trail_q = trail_c = None
            if scene.trail_visible:
                lo, hi = np.searchsorted(traj.t, [t - TRAIL_SECONDS, t], side="right")
                trail_q, trail_c = traj.q[lo:hi], traj.c[lo:hi]
            poses.append((c, q, w, diagnostics.angular_momentum(body, q, w), trail_q, trail_c))
        return poses

    def pose(self, recordings, t: float, panes=None):
        """Every body and ghost at simulated time ``t``; the curves' cursor at ``t``."""
        self.t = float(t)
        if panes is None or "bodies" in panes:
            scene = self.scenes["bodies"]
            scene.set_poses(self.poses_at(self.t))
            self._pose_ghost(0, self.t)  # the row of ghosts, each at its body's offset
        return True

    def picture(self, name: str, size):
        """The curves pane drawn with matplotlib, at ``size`` (width, height): the export's and
        the window's drawing alike."""
        return CurvesPicture(self, size)


def interpolate(t_samples, c, q, w, t: float):
    """(c, q, w) at ``t`` between the samples around it (linear; the quaternion normalised)."""
    k = int(np.clip(np.searchsorted(t_samples, t, side="right") - 1, 0, len(t_samples) - 1))
    if k == len(t_samples) - 1 or t <= t_samples[0]:
        return c[k], q[k], w[k]
    f = (t - t_samples[k]) / (t_samples[k + 1] - t_samples[k])
    q1 = q[k + 1] if np.dot(q[k], q[k + 1]) >= 0 else -q[k + 1]
    qi = (1 - f) * q[k] + f * q1
    return (1 - f) * c[k] + f * c[k + 1], qi / np.linalg.norm(qi), (1 - f) * w[k] + f * w[k + 1]


class CurvesPicture:
    """Orientation error (log10 rad), intermediate-axis omega over the exact one, separatrix ratio,
    one curve per setting and a cursor at the view's time; matplotlib (Agg), the cursor blitted.

    Thread: the one that draws it (the export's, or the window's GUI thread).
    """

    def __init__(self, view: EnginesView, size):
        self.view = view
        self.width, self.height = (max(int(v), 50) for v in size)
        self._audit = object()  # not drawn yet
        self._build()

    def _build(self) -> None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        from ..engines.plot import ERROR_FLOOR
        from ..scene.engines import ENGINE_COLORS
        from ..scene.palette import current
        from ..scene.style import BACKGROUND, GRID_COLOR, TEXT_COLOR, TRAIL_COLOR, tone

        # the scheme in use (View > Projector colours): :meth:`render` builds again when it changes
        self._scheme = current().name
        BACKGROUND, GRID_COLOR, TEXT_COLOR, TRAIL_COLOR = map(tone, (BACKGROUND, GRID_COLOR, TEXT_COLOR, TRAIL_COLOR))

        dpi = 100
        fs = max(6.5, 0.02 * self.height * 72 / dpi)
        fig = Figure(figsize=(self.width / dpi, self.height / dpi), dpi=dpi, facecolor=BACKGROUND)
        self.canvas = FigureCanvasAgg(fig)
        axes = fig.subplots(3, 1, sharex=True)
        fig.subplots_adjust(left=0.16, right=0.97, top=0.95, bottom=0.1, hspace=0.25)
        audit = self.view.audit
        #: each setting's orientation-error curve (matplotlib Line2D), in the settings' order
        self.lines = []
        titles = ("orientation error, log10 rad", "ω along the intermediate axis, rad/s", "separatrix ratio D/D₀")
        for ax, title in zip(axes, titles):
            ax.set_facecolor(BACKGROUND)
            ax.tick_params(colors=TEXT_COLOR, labelsize=fs * 0.85, length=3)
            for spine in ax.spines.values():
                spine.set_color(GRID_COLOR)
            ax.set_title(title, color=TEXT_COLOR, fontsize=fs, loc="left")
            ax.grid(True, color=GRID_COLOR, alpha=0.4, lw=0.6)
        axes[-1].set_xlabel("simulation time t (s)", color=TEXT_COLOR, fontsize=fs)
        if audit is None:
            axes[0].text(0.5, 0.5, "running the engines…", color=TEXT_COLOR, fontsize=fs, ha="center",
                         va="center", transform=axes[0].transAxes)
        else:
            ref = audit.reference
            for run, color in zip(audit.runs, map(tone, ENGINE_COLORS)):  # the scheme in use
                t = run.trajectory.t
                self.lines.append(axes[0].plot(t, np.log10(np.maximum(run.series["orientation_error"], ERROR_FLOOR)),
                                               color=color, lw=1)[0])
                if run.series["omega2"] is not None:
                    axes[1].plot(t, run.series["omega2"], color=color, lw=1)
                if run.series["separatrix_ratio"] is not None:
                    axes[2].plot(t, run.series["separatrix_ratio"], color=color, lw=1)
            if audit.runs:
                axes[1].plot(ref.t, audit.runs[0].series["omega2_reference"], color=TEXT_COLOR, lw=1, ls="--")
            axes[2].axhline(1.0, color=TEXT_COLOR, lw=1, ls="--")
            axes[0].set_xlim(ref.t[0], ref.t[-1])
        self._cursors = [ax.axvline(0.0, color=TRAIL_COLOR, lw=1.2, animated=True) for ax in axes]
        self._axes = axes
        self.canvas.draw()
        self._background = self.canvas.copy_from_bbox(fig.bbox)
        self._audit = audit

    def render(self, out: np.ndarray | None = None) -> np.ndarray:
        """The curves with the cursor at the view's time, as (height, width, 3) uint8 RGB."""
        from ..scene.palette import current

        if self._audit is not self.view.audit or self._scheme != current().name:
            self._build()
        self.canvas.restore_region(self._background)
        for ax, cursor in zip(self._axes, self._cursors):
            cursor.set_xdata([self.view.t, self.view.t])
            ax.draw_artist(cursor)
        rgba = np.asarray(self.canvas.buffer_rgba())
        if out is None:
            out = np.empty((self.height, self.width, 3), dtype=np.uint8)
        out[...] = rgba[: self.height, : self.width, :3]
        return out

    def close(self) -> None:
        pass


def _options() -> tuple:
    return (ViewOption("--engines", "engines",
                       dict(metavar="LIST", help="--view engines: up to 4 settings ENGINE[:SETTING],... (default: "
                                                 "every installed engine's default, then tumble:rk4)")),)


SPEC = ViewSpec(
    name="engines", title="Tumble: physics engines audited",
    description="up to four physics engines (MuJoCo, PyBullet, DART, Drake) side by side with the exact ghost, "
                "their orientation error, intermediate-axis ω and separatrix ratio",
    window="tumble.gui.windows.engines_window:EnginesWindow",
    panes=(PaneSpec("bodies", 0.62), PaneSpec("curves", 0.38, kind="2d", refresh_s=CURVES_REFRESH_S)),
    build=EnginesView, runs=runs, check=check_plan, plots=None, legend_rows=legend_rows, options=_options())
