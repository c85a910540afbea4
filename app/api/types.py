"""What ``import tumble`` hands back: :class:`Scenario`, :class:`Run` and :class:`Fit`.

Each is immutable in use and pickles (so ``executor.map(tumble.simulate, scenarios)`` works
over processes and machines), and shows itself in Jupyter: a scenario as its summary, a run
as its summary and plots, a fit as tables of its ratios and flights, rounded to what they mean
(:mod:`.tables`). Nothing here draws with Qt or VTK; a run's plots import
matplotlib only when asked for.
"""

from __future__ import annotations

import dataclasses
import html
import io
from pathlib import Path

import numpy as np

from ..physics.errors import ParameterError
from ..scenario import document, files
from ..scenario.schema import Scenario as _ScenarioSpec

#: the key of a run's columns for each of its named series
_SERIES = {"q": ("qw", "qx", "qy", "qz"), "omega": ("wx", "wy", "wz"), "L": ("Lx", "Ly", "Lz"),
           "c": ("cx", "cy", "cz"), "v": ("vx", "vy", "vz")}
#: size of a run's plots in Jupyter (inches) and their resolution
PLOT_SIZE_IN = (8.0, 5.0)
PLOT_DPI = 80


class Scenario(_ScenarioSpec):
    """A validated scenario: the body, its initial state, the loads and the solver.

    Frozen: :meth:`with_values` makes a new one. Every field of the TOML file is an
    attribute (``sc.solver.duration``, ``sc.angular_velocity``, ...).
    """

    @classmethod
    def of(cls, scenario) -> "Scenario":
        """``scenario`` (any validated scenario of :mod:`tumble.scenario`) as this class,
        without validating it again."""
        if isinstance(scenario, cls):
            return scenario
        if not isinstance(scenario, _ScenarioSpec):
            raise ParameterError("scenario", scenario, "be a tumble.Scenario (from tumble.load)")
        out = object.__new__(cls)
        out.__dict__.update(scenario.__dict__)  # the fields and what was derived from them
        return out

    def __reduce__(self):
        # the fields only: what is derived (the compiled model) is rebuilt on the other side
        return (type(self), tuple(getattr(self, f.name) for f in dataclasses.fields(self)))

    def to_dict(self) -> dict:
        """The scenario's TOML document as a dict (what :meth:`save` writes)."""
        return document.to_dict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Scenario":
        """A validated scenario from a TOML document as a dict; raises :class:`ParameterError`."""
        return cls.of(document.from_dict(data))

    def with_values(self, values: dict) -> "Scenario":
        """A new scenario with the values of dotted TOML keys changed, for example
        ``{"solver.duration": 5.0, "initial.angular_velocity": [0.1, 6, 0]}`` (a list's
        item by its index: ``"loads.0.vector"``); every value is checked as in a file."""
        if not isinstance(values, dict):
            raise ParameterError("values", values, "be a dict of dotted TOML keys (solver.duration) to values")
        doc = self.to_dict()
        for key, value in values.items():
            _set_dotted(doc, key, value)
        return self.from_dict(doc)

    def save(self, path) -> Path:
        """Write the scenario as TOML (atomically); returns the path."""
        files.save(self, path)
        return Path(path)

    def summary(self) -> dict:
        """The keys and values of ``tumble inspect --json``."""
        from ..scenario.inspection import inspect_dict

        return inspect_dict(self)

    def _repr_markdown_(self) -> str:
        info = self.summary()
        moments = ", ".join(f"{m:.4g}" for m in info["principal_moments"])
        flip = info["flip_period"]
        rows = [("body", f"{info['shape']}, {info['mass']:.4g} kg"),
                ("principal moments (kg m²)", moments),
                ("ω₀ (rad/s, body)", ", ".join(f"{w:.4g}" for w in self.angular_velocity)),
                ("flip period (s)", "none" if flip is None else f"{flip:.4g}"),
                ("solver", f"{self.solver.integrator}, dt = {self.solver.dt:g} s, {self.solver.duration:g} s")]
        text = [f"**{_md(self.name)}**" + (f": {_md(self.description)}" if self.description else ""), "",
                "| | |", "|---|---|"] + [f"| {k} | {v} |" for k, v in rows]
        return "\n".join(text)


def _md(text: str) -> str:
    return html.escape(str(text)).replace("|", "\\|")


def _set_dotted(doc: dict, key, value) -> None:
    """Set ``doc[a][b]...`` for the dotted key ``"a.b..."``; a list's item by its index."""
    rule = "be a dotted TOML key of the scenario, such as solver.duration or loads.0.vector"
    if not isinstance(key, str) or not key or any(not part for part in key.split(".")):
        raise ParameterError("values", key, rule)
    parts = key.split(".")
    node = doc
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise ParameterError(".".join(parts[:depth]), part, f"be indexed from 0 to {len(node) - 1}")
            part = int(part)
        elif not isinstance(node, dict):
            raise ParameterError(key, value, rule)
        if last:
            node[part] = value
        else:
            if isinstance(node, dict) and part not in node:
                node[part] = {}
            node = node[part]
    if parts[:2] == ["initial", "orientation_xyz"] and len(parts) == 2:
        doc["initial"].pop("orientation", None)  # the one given replaces the other


# ------------------------------------------------------------------ what the API takes in

#: the rule of the command line's positive numbers (app.api.arguments), for the same numbers given here
POSITIVE = "be a finite number > 0"


def load(name_or_path) -> Scenario:
    """A preset by name (``"t-handle"``) or a scenario TOML file, validated."""
    from ..scenario import load as load_file

    if isinstance(name_or_path, Scenario):
        return name_or_path
    if not isinstance(name_or_path, (str, Path)):
        if isinstance(name_or_path, _ScenarioSpec):
            return Scenario.of(name_or_path)
        raise ParameterError("scenario", name_or_path, "be a preset name, a TOML file's path or a tumble.Scenario")
    return Scenario.of(load_file(name_or_path))


def flag_number(flag: str, value, rule: str = POSITIVE, accept=lambda v: v > 0, whole: bool = False):
    """``value`` checked as the command line checks the text of ``flag`` (the same rule and
    message, :func:`app.api.arguments.parse_number`); None stays None."""
    from .arguments import parse_number

    if value is None:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ParameterError(flag, value, rule)
    text = value if isinstance(value, str) else repr(value)
    number = parse_number(text, flag, rule, whole)
    if not accept(number):
        raise ParameterError(flag, text, rule)
    return number


def integrator_name(name):
    """The integrator's name as ``--integrator`` takes it, or None."""
    from ..physics.integrators import integrator_info

    if name is None:
        return None
    try:
        return integrator_info(name).name
    except ParameterError as err:
        raise ParameterError("--integrator", name, err.rule) from None


# ------------------------------------------------------------------ a simulated run


@dataclasses.dataclass(frozen=True, eq=False)
class Run:
    """A simulated run: ``columns`` are exactly the CSV columns of ``tumble simulate`` with
    the same options (name -> array); ``t``, ``q`` (N, 4), ``omega`` (N, 3, body frame),
    ``L`` (N, 3, world), ``E`` (N,) and ``flips`` (times of the flips, s) are read from them.
    ``figures`` holds the numbers of the command's summary table."""

    scenario: Scenario
    columns: dict
    figures: dict

    def _stack(self, name):
        return np.column_stack([self.columns[k] for k in _SERIES[name]])

    @property
    def t(self) -> np.ndarray:
        return self.columns["t"]

    @property
    def q(self) -> np.ndarray:
        """(N, 4) quaternions, scalar first, body to world."""
        return self._stack("q")

    @property
    def omega(self) -> np.ndarray:
        """(N, 3) angular velocity, body frame (rad/s)."""
        return self._stack("omega")

    @property
    def L(self) -> np.ndarray:  # noqa: N802 - the physics' name
        """(N, 3) angular momentum about the centre of mass, world frame (kg m^2/s)."""
        return self._stack("L")

    @property
    def E(self) -> np.ndarray:  # noqa: N802
        """(N,) total energy (J)."""
        return self.columns["E"]

    @property
    def flips(self) -> np.ndarray:
        """Times of the flips (intermediate-axis reversals), s."""
        return self.figures["flip_times"]

    def drift(self) -> dict:
        """Relative drifts over the run: ``E``, ``L`` (world vector) and ``L_norm`` (|L|),
        each (N,) and relative to its start (:func:`tumble.physics.diagnostics.relative_drift`)."""
        from ..physics.diagnostics import relative_drift

        return {"E": relative_drift(self.E), "L": relative_drift(self.L),
                "L_norm": relative_drift(np.linalg.norm(self.L, axis=1))}

    def to_csv(self, path) -> Path:
        """The columns as the CSV ``tumble simulate --out FILE.csv`` writes; returns the path."""
        return self._write(path, ".csv")

    def to_npz(self, path) -> Path:
        """The columns as the NPZ ``tumble simulate --out FILE.npz`` writes; returns the path."""
        return self._write(path, ".npz")

    def _write(self, path, suffix) -> Path:
        from .arguments import check_out
        from ..simulation.table import write_table

        out = check_out(str(path), (suffix,), "path")
        write_table(out, self.columns)
        return out

    def summary(self) -> str:
        """The summary table ``tumble simulate`` prints (Markdown)."""
        f = self.figures
        period, mean = f["predicted_flip_period"], f["mean_flip_period"]
        return "\n".join([
            f"{self.scenario.name}: {f['integrator']}, dt = {f['dt']:g} s, {f['duration']:g} s simulated, "
            f"{len(self.t)} samples",
            "| quantity | value |",
            "|---|---|",
            f"| flips (intermediate-axis reversals) | {len(self.flips)} |",
            f"| predicted flip period (s) | {'-' if period is None else f'{period:.6f}'} |",
            f"| observed mean flip period (s) | {'-' if mean is None else f'{mean:.6f}'} |",
            f"| max relative energy drift | {f['max_E_drift']:.3e} |",
            f"| max relative world-L drift | {f['max_L_drift']:.3e} |",
            f"| max relative |L| drift | {f['max_L_norm_drift']:.3e} |",
        ])

    def plot(self, path=None) -> bytes:
        """PNG of omega (body frame) and the relative energy and |L| drift over time; written
        to ``path`` (atomically) when given. Returns the PNG's bytes."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=PLOT_SIZE_IN, dpi=PLOT_DPI)
        FigureCanvasAgg(fig)
        top, bottom = fig.subplots(2, 1, sharex=True)
        for k, label in enumerate(("ωx", "ωy", "ωz")):
            top.plot(self.t, self.omega[:, k], lw=1.2, label=label)
        top.set_ylabel("ω, body frame (rad/s)")
        top.legend(loc="upper right", fontsize=8)
        top.set_title(f"{self.scenario.name}: {len(self.flips)} flips", fontsize=10)
        drift = self.drift()
        bottom.semilogy(self.t, np.abs(drift["E"]) + 1e-300, lw=1.0, label="|ΔE| / E₀")
        bottom.semilogy(self.t, np.abs(drift["L_norm"]) + 1e-300, lw=1.0, label="|Δ|L|| / |L₀|")
        bottom.set_xlabel("t (s)")
        bottom.set_ylabel("relative drift")
        bottom.legend(loc="lower right", fontsize=8)
        fig.tight_layout()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png")
        data = buffer.getvalue()
        if path is not None:
            from ..atomic import atomic_path

            with atomic_path(path) as tmp, open(tmp, "wb") as fh:
                fh.write(data)
        return data

    def _repr_html_(self) -> str:
        # one HTML block: the summary above the plot (a PNG beside it would be stored twice)
        from .tables import run_html

        return run_html(self.scenario.name, self.figures, len(self.t), self.plot())

    def __repr__(self) -> str:
        return f"<tumble.Run of {self.scenario.name!r}: {len(self.t)} samples, {len(self.flips)} flips>"


# ------------------------------------------------------------------ a fit of recordings


@dataclasses.dataclass(frozen=True, eq=False)
class Fit:
    """A fit of gyroscope recordings of throws (``tumble fit``): the body's inertia ratios,
    its drag and each flight. ``result`` is the fit itself (:class:`tumble.throws.fitting.fit.FitResult`)."""

    result: object
    inertia_scale: float = 1.0
    allow_unphysical: bool = False
    #: what the readers decided for the user to know (a unit inferred, an Excel twin read once)
    notes: tuple = ()

    def __post_init__(self):
        from ..throws.fitting.fit import FitResult

        if not isinstance(self.result, FitResult):  # Fit(None) failed later, in its HTML, with AttributeError
            raise ParameterError("Fit.result", type(self.result).__name__, "be a fit's result (tumble.fit makes a "
                                 "Fit; its .result is one)")

    def to_dict(self) -> dict:
        """The object ``tumble fit --json`` prints."""
        return self.result.to_json(self.inertia_scale)

    @property
    def ratios(self) -> np.ndarray:
        """The principal moments over the largest, ascending (the last is 1)."""
        return np.array(self.result.moments, dtype=float)

    def scenario(self, flight: int | None = None) -> Scenario:
        """The scenario that replays flight ``flight`` (default: the first one fitted; what
        ``tumble fit --out FIT.toml`` writes). Ratios that break the triangle inequality are
        refused unless the fit was asked with ``allow_unphysical``."""
        from ..throws.fitting.report import flight_scenario

        count = len(self.result.flights)
        if flight is not None and (isinstance(flight, bool) or not isinstance(flight, (int, np.integer))
                                   or not 0 <= flight < count):
            raise ParameterError("flight", flight, f"be a flight's index from 0 to {count - 1}")
        index = None if flight is None else int(flight)
        return Scenario.of(flight_scenario(self.result, index, self.inertia_scale, self.allow_unphysical))

    def summary(self) -> str:
        """The report ``tumble fit`` prints."""
        from ..throws.fitting.report import summary

        return summary(self.result, self.inertia_scale)

    def plot(self, path) -> Path:
        """Measured rates over the fitted curves, per flight, as PNG (``tumble fit --plot``)."""
        from .arguments import check_out
        from ..throws.fitting.report import write_plot

        out = check_out(str(path), (".png",), "path")
        write_plot(self.result, out)
        return out

    def _repr_html_(self) -> str:
        from .tables import fit_html

        return fit_html(self.result, self.inertia_scale, self.notes)

    def __repr__(self) -> str:
        ratios = ", ".join(f"{r:.4f}" for r in self.ratios)
        return f"<tumble.Fit: ratios {ratios}, {len(self.result.flights)} flights>"
