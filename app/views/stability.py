"""The stability view: the chosen spin running in the body scene beside the stability map, with omega's track drawn over the map."""

from __future__ import annotations

import math

import numpy as np

from .base import PaneSpec, ViewOption, ViewSpec
from .main import BodyView, legend_rows as body_legend
from .plots import MAIN_PLOTS

#: omega's track on the map covers this much simulated time (s), thinned to TRACK_POINTS
TRACK_SECONDS = 30.0
TRACK_POINTS = 3000
#: colour of omega's track on the map, and of the map's colours (wander 0 to 180 deg)
TRACK_COLOR = "#4dd0e1"
COLOR_MAP = "magma"
#: the export's map may stretch a degree of latitude to this many degrees of longitude to fill its pane
MAP_STRETCH = 1.6
#: an export computes a small map so that it stays fast (about 0.2 s for t-handle; the
#: window's default is 2000 directions over 20 s): directions and simulated time per direction
EXPORT_DIRECTIONS = 500
EXPORT_MAP_DURATION = 10.0
#: the window poses the map's track this often (s of wall time)
TRACK_REFRESH_S = 1.0 / 10.0


def break_wraps(lon: np.ndarray, lat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Insert a NaN where the track jumps across the map's edge (|d lon| > 180 deg), so the
    line is not drawn across the whole map."""
    if len(lon) < 2:
        return lon, lat
    cut = np.nonzero(np.abs(np.diff(lon)) > 180.0)[0] + 1
    return np.insert(lon, cut, np.nan), np.insert(lat, cut, np.nan)


def map_position(direction, frame) -> tuple[float, float]:
    """(longitude, latitude) in degrees of a body-frame vector on the map."""
    from ..simulation.stability import lat_lon

    d = np.asarray(direction, dtype=float)
    la, lo = lat_lon(d / np.linalg.norm(d), frame)
    return math.degrees(float(lo)), math.degrees(float(la))


def map_track(w: np.ndarray, frame) -> tuple[np.ndarray, np.ndarray]:
    """(lon, lat) in degrees of the body-frame omegas ``w`` (n, 3) on the map, zero ones
    dropped, with NaN where the track crosses the map's edge."""
    from ..simulation.stability import lat_lon

    w = np.asarray(w, dtype=float)
    w = w[np.linalg.norm(w, axis=1) > 0] if len(w) else w
    if not len(w):
        return np.zeros(0), np.zeros(0)
    la, lo = lat_lon(w / np.linalg.norm(w, axis=1, keepdims=True), frame)
    return break_wraps(np.degrees(lo), np.degrees(la))


def runs(scenario, options=None) -> tuple:
    """The scenario's own spin; its map's options checked (``directions``, ``map_duration``)."""
    from ..physics.errors import ParameterError
    from ..simulation.stability import MAX_DIRECTIONS

    options = options or {}
    directions, duration = options.get("directions"), options.get("map_duration")
    if directions is not None and not 1 <= directions <= MAX_DIRECTIONS:
        raise ParameterError("--directions", directions, f"be a whole number from 1 to {MAX_DIRECTIONS}")
    if duration is not None and not (math.isfinite(duration) and duration > 0):
        raise ParameterError("--map-duration", duration, "be a finite number > 0 (s of simulated time)")
    return (scenario,)


def legend_rows(scenarios=()) -> tuple:
    return body_legend(scenarios)[3:6] + (("ω's track on the map (last 30 s)", TRACK_COLOR),)


class StabilityView(BodyView):
    """The body scene running the spin; ``track`` (lon, lat in degrees) is omega's track on
    the map after each pose of the ``map`` pane, drawn by the window (pyqtgraph) or by the
    export (:meth:`picture`, matplotlib)."""

    legend_for = staticmethod(legend_rows)

    def __init__(self, plotters, scenarios, options=None, text_px=None):
        from ..simulation.stability import map_frame

        super().__init__(plotters, scenarios)
        self.options = dict(options or {})
        self.frame = map_frame(scenarios[0].rigid_body.principal()[1])
        self.track = (np.zeros(0), np.zeros(0))
        self.show(scenarios)

    def pose(self, recordings, t: float, panes=None) -> None:
        rec = recordings[0]
        if panes is None or "body" in panes:
            self.pose_body(rec, t)
        if panes is None or "map" in panes:
            self.track = map_track(rec.span(t - TRACK_SECONDS, t, TRACK_POINTS)["w"], self.frame)

    def picture(self, name: str, size):
        """The export's drawing of the 2D pane ``name`` ("map") at ``size`` (width, height)."""
        from ..physics.errors import ParameterError
        from ..simulation.stability import stability_map

        sc = self.scenarios[0]
        omega_norm = float(np.linalg.norm(sc.angular_velocity))
        if omega_norm == 0:
            raise ParameterError(f"initial.angular_velocity of {sc.name!r}", [0, 0, 0],
                                 "be non-zero for the stability view (its magnitude sets the spin rate)")
        directions = self.options.get("directions")
        directions = EXPORT_DIRECTIONS if directions is None else int(directions)
        duration = self.options.get("map_duration")
        duration = EXPORT_MAP_DURATION if duration is None else float(duration)
        try:
            smap = stability_map(sc.rigid_body, omega_norm, directions, duration)
        except ParameterError as err:
            flag = {"directions": "--directions", "duration": "--map-duration"}.get(err.field, err.field)
            raise ParameterError(flag, err.value, err.rule) from None
        return MapPicture(self, size, smap)


class MapPicture:
    """The stability map drawn with matplotlib (Agg), omega's track blitted over it each frame.

    Thread: the export's.
    """

    def __init__(self, view: StabilityView, size, smap):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        from ..scene.style import BACKGROUND, GRID_COLOR, OMEGA_COLOR, TEXT_COLOR, tone
        from ..simulation.stability import map_grid

        self.view = view
        self.width, self.height = (int(v) for v in size)
        dpi = 100
        fs = max(6.5, 0.022 * self.height * 72 / dpi)
        fig = Figure(figsize=(self.width / dpi, self.height / dpi), dpi=dpi, facecolor=tone(BACKGROUND))
        self.canvas = FigureCanvasAgg(fig)
        ax = fig.add_axes((0.1, 0.14, 0.86, 0.74))
        lon_edges, lat_edges, grid = map_grid(smap)
        ax.pcolormesh(lon_edges, lat_edges, np.degrees(grid), cmap=COLOR_MAP, vmin=0.0, vmax=180.0,
                      shading="flat", rasterized=True)
        for k, label in enumerate(smap.axis_labels):
            name = label.partition(": ")[0]
            for sign in (1, -1):
                lon, lat = map_position(sign * smap.axes[:, k], view.frame)
                # an axis on the date line is marked on the right edge: on the left its label sat on the 0 tick
                lon = 0.0 if abs(lat) > 89.999 else (180.0 if lon < -179.999 else lon)
                ax.plot(lon, lat, "oXs"[k], ms=fs, mfc="none", mec="white", mew=1.5, clip_on=False)
                ax.annotate(f"{'+' if sign > 0 else '−'}{name[:3]}", (lon, lat), xytext=(6, -13 if lat > 89.0 else 5),
                            textcoords="offset points", color="white", fontsize=fs * 0.8,
                            ha="left" if lon < 120 else "right",
                            bbox={"boxstyle": "round,pad=0.15", "fc": "black", "alpha": 0.5, "lw": 0})
        ax.set_xlim(-180, 180)
        ax.set_ylim(-90, 90)
        ax.set_xticks(np.arange(-180, 181, 90))
        ax.set_yticks(np.arange(-90, 91, 45))
        ax.tick_params(colors=tone(TEXT_COLOR), labelsize=fs * 0.9, length=3)
        for spine in ax.spines.values():
            spine.set_color(tone(GRID_COLOR))
        ax.set_xlabel("longitude of the spin axis (deg)", color=tone(TEXT_COLOR), fontsize=fs)
        ax.set_ylabel("latitude (deg)", color=tone(TEXT_COLOR), fontsize=fs)
        # a degree of latitude up to MAP_STRETCH times a degree of longitude: the map fills a tall
        # pane (equal degrees left it a strip across the middle of the export's half of the frame)
        box_w, box_h = 0.86 * self.width, 0.74 * self.height
        ax.set_aspect(min(MAP_STRETCH, max(1.0, 2.0 * box_h / box_w)), anchor="C")
        ax.set_title(f"wander of ω: 0° dark, 180° light\n{len(smap.wander)} spins over {smap.duration:g} s each",
                     color=tone(TEXT_COLOR), fontsize=fs, loc="left")
        (self._line,) = ax.plot([], [], color=tone(TRACK_COLOR), linewidth=1.4, animated=True)
        (self._head,) = ax.plot([], [], "o", color=tone(OMEGA_COLOR), ms=fs * 0.8, animated=True)
        self._ax = ax
        self.canvas.draw()
        self._background = self.canvas.copy_from_bbox(fig.bbox)

    def render(self, out: np.ndarray | None = None) -> np.ndarray:
        """The map with the view's current track, as (height, width, 3) uint8 RGB."""
        lon, lat = self.view.track
        self.canvas.restore_region(self._background)
        self._line.set_data(lon, lat)
        finite = np.isfinite(lon)
        self._head.set_data(lon[finite][-1:], lat[finite][-1:])
        self._ax.draw_artist(self._line)
        self._ax.draw_artist(self._head)
        rgba = np.asarray(self.canvas.buffer_rgba())
        if out is None:
            out = np.empty((self.height, self.width, 3), dtype=np.uint8)
        out[...] = rgba[..., :3]
        return out

    def close(self) -> None:
        pass


def _options() -> tuple:
    return (ViewOption("--directions", "directions",
                       dict(type=int, metavar="N", help=f"--view stability: directions of the exported map "
                                                        f"(default {EXPORT_DIRECTIONS}, small so the export stays fast)")),
            ViewOption("--map-duration", "map_duration",
                       dict(type=float, metavar="S", help=f"--view stability: simulated time per direction of the "
                                                          f"exported map (s, default {EXPORT_MAP_DURATION:g})")))


SPEC = ViewSpec(
    name="stability", title="Tumble: stability map",
    description="stability map of the body's spin axes (wander of omega), click a point to run that spin",
    window="tumble.gui.windows.stability_window:StabilityWindow",
    panes=(PaneSpec("body", 0.5), PaneSpec("map", 0.5, kind="2d", refresh_s=TRACK_REFRESH_S)),
    build=StabilityView, runs=runs, plots=MAIN_PLOTS, legend_rows=legend_rows, options=_options(),
    title_corner="bottom")
