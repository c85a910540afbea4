"""The scenario schema: frozen specs validated with field names (the dict round trip: :mod:`.document`)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..physics import body as bodies
from ..physics.body import Body, Damper, Rotor
from ..physics.errors import ParameterError
from ..physics.limits import OMEGA_LIMIT
from ..physics import quaternion as quat
from ..physics.integrators import (
    DEFAULT_REORTHO,
    DEFAULT_REORTHO_EVERY,
    DOP853_ATOL,
    DOP853_RTOL,
    check_run_size,
    check_step_fits,
    integrator_info,
    integrator_options,
    validate_tolerances,
)
from ..physics.loads import Drag, Force, Loads, Torque
from ..physics.model import Model, compile_model
from ..physics.state import State

SHAPES = ("box", "ellipsoid", "cylinder", "t-handle", "custom", "mesh")
#: number of entries and their meaning of ``body.size`` for each analytic shape
SIZE_ENTRIES = {
    "box": (3, "edge lengths x, y, z"),
    "ellipsoid": (3, "semi-axes x, y, z"),
    "cylinder": (2, "radius, height"),
    "t-handle": (4, "shaft_length, shaft_radius, bar_length, bar_radius"),
}
#: largest magnitude of any number in a scenario file: products and squares of such
#: numbers (m size^2, |L|^2) stay finite
MAX_MAGNITUDE = 1e100
DEFAULT_INTEGRATOR = "rk4"
DEFAULT_DT = 1e-3
DEFAULT_DURATION = 10.0


@dataclass(frozen=True)
class DamperSpec:
    """``[body.damper]``: a spherical viscous damper (:class:`~app.physics.body.Damper`),
    ``inertia`` J (kg m^2) and ``coefficient`` c (N m s)."""

    inertia: float = 0.01
    coefficient: float = 0.01

    def build(self) -> Damper:
        try:
            return Damper(self.inertia, self.coefficient)
        except ParameterError as err:
            raise err.prefixed("damper") from None


@dataclass(frozen=True)
class RotorSpec:
    """``[body.rotor]``: a wheel of constant relative momentum (:class:`~app.physics.body.Rotor`),
    ``axis`` (body frame, any non-zero length, normalised) and ``momentum`` h (kg m^2/s)."""

    axis: tuple = (0.0, 1.0, 0.0)
    momentum: float = 0.0

    def build(self) -> Rotor:
        try:
            return Rotor(self.axis, self.momentum)
        except ParameterError as err:
            raise err.prefixed("rotor") from None


@dataclass(frozen=True)
class BodySpec:
    """How the body is described in a scenario (shape and dimensions, or inertia)."""

    shape: str = "box"
    mass: float = 1.0
    size: tuple | None = (0.1, 0.4, 0.9)
    inertia: tuple | None = None  # custom: [Jxx, Jyy, Jzz, Jyz, Jxz, Jxy] or 3 principal moments
    allow_unphysical: bool = False
    # custom only: the centre of mass seen from the reference point (body frame, m); the
    # inertia is then about the reference point, as in Exudyn's physicsCenterOfMass
    center_of_mass: tuple | None = None
    # mesh only: the file (absolute once loaded from a TOML file, whose folder a relative
    # path is taken from), its unit (m | cm | mm) and exactly one of mass (then density is
    # None) or density (kg/m^3; then mass is None). initial.position and velocity are the
    # centre of mass's.
    mesh: str | None = None
    unit: str = "m"
    density: float | None = None
    # internal parts (any shape): a spherical viscous damper, a rotor of constant momentum
    damper: DamperSpec | None = None
    rotor: RotorSpec | None = None

    def build(self) -> Body:
        """The physics :class:`Body` with its damper and rotor; raises
        :class:`ParameterError` with ``body.`` fields."""
        rigid = self._build_rigid()
        if self.damper is None and self.rotor is None:
            return rigid
        try:
            damper = None if self.damper is None else self.damper.build()
            rotor = None if self.rotor is None else self.rotor.build()
        except ParameterError as err:
            raise err.prefixed("body") from None
        return dataclasses.replace(rigid, damper=damper, rotor=rotor)

    def _build_rigid(self) -> Body:
        try:
            if self.shape not in SHAPES:
                raise ParameterError("shape", self.shape, "be one of " + " | ".join(SHAPES))
            if self.shape == "mesh":
                from .meshes import mesh_body

                if self.mesh is None:
                    raise ParameterError("mesh", None, "be given for shape = \"mesh\" (an STL, OBJ or PLY file)")
                try:
                    return mesh_body(self.mesh, self.unit, self.mass, self.density)
                except ParameterError as err:
                    if err.field == "mesh":  # name the file as the scenario wrote it
                        raise ParameterError("mesh", self.mesh, err.rule) from None
                    raise
            if self.shape == "custom":
                if self.inertia is None:
                    raise ParameterError("inertia", None, "be given for shape = \"custom\" ([Jxx, Jyy, Jzz, Jyz, Jxz, Jxy])")
                j = np.asarray(self.inertia, dtype=float)
                if j.shape not in ((3,), (6,)):
                    raise ParameterError("inertia", self.inertia, "have 6 entries [Jxx, Jyy, Jzz, Jyz, Jxz, Jxy] (or 3 principal moments)")
                if self.center_of_mass is not None and any(x != 0 for x in self.center_of_mass):
                    return bodies.from_reference_point(self.mass, j, self.center_of_mass, self.allow_unphysical)
                if j.shape == (3,):
                    return bodies.from_principal_moments(self.mass, j, self.allow_unphysical)
                if j.shape != (6,):
                    raise ParameterError("inertia", self.inertia, "have 6 entries [Jxx, Jyy, Jzz, Jyz, Jxz, Jxy] (or 3 principal moments)")
                return bodies.from_vector6(self.mass, j, self.allow_unphysical)
            if self.size is None:
                n, what = SIZE_ENTRIES[self.shape]
                raise ParameterError("size", None, f"be given for shape = \"{self.shape}\" ({what})")
            maker = {"box": bodies.box, "ellipsoid": bodies.ellipsoid, "cylinder": bodies.cylinder,
                     "t-handle": bodies.t_handle}[self.shape]
            return maker(self.mass, self.size)
        except ParameterError as err:
            raise err.prefixed("body") from None


LOAD_KINDS = ("torque", "force", "drag")


@dataclass(frozen=True)
class LoadSpec:
    """One ``[[loads]]`` entry: a torque, a force at a body point, or a drag (``model`` and
    body-frame ``coefficients``; ``frame``, ``vector`` and ``point`` unused)."""

    kind: str = "torque"
    frame: str = "body"
    vector: tuple = (0.0, 0.0, 0.0)
    point: tuple = (0.0, 0.0, 0.0)
    model: str = "quadratic"
    coefficients: tuple = (0.0, 0.0, 0.0)

    def build(self, index: int):
        where = f"loads[{index}]"
        try:
            if self.kind not in LOAD_KINDS:
                raise ParameterError("kind", self.kind, "be one of " + ", ".join(LOAD_KINDS))
            if self.kind == "drag":
                return Drag(self.model, self.coefficients)
            if self.kind == "torque":
                return Torque(self.vector, self.frame)
            return Force(self.vector, self.point, self.frame)
        except ParameterError as err:
            raise err.prefixed(where) from None


@dataclass(frozen=True)
class SolverSpec:
    """Integrator name, step and duration (s), and the adaptive tolerances."""

    integrator: str = DEFAULT_INTEGRATOR
    dt: float = DEFAULT_DT
    duration: float = DEFAULT_DURATION
    rtol: float = DOP853_RTOL
    atol: float = DOP853_ATOL
    reorthonormalize: str = DEFAULT_REORTHO          # rotmat-euler: polar | gram-schmidt | none
    reorthonormalize_every: int = DEFAULT_REORTHO_EVERY  # rotmat-euler: every k steps

    def validate(self) -> None:
        try:
            integrator_info(self.integrator)
        except ParameterError as err:
            raise err.prefixed("solver") from None
        for name in ("duration", "dt", "rtol", "atol"):
            value = getattr(self, name)
            if not _is_positive_finite(value):
                raise ParameterError(f"solver.{name}", value, "be a finite number > 0")
        check_step_fits(self.dt, self.duration, names=SOLVER_NAMES)
        try:
            integrator_options(self.reorthonormalize, self.reorthonormalize_every)
            validate_tolerances(self.rtol, self.atol)
        except ParameterError as err:
            raise err.prefixed("solver") from None
        # the same step budget as every run (simulate, export, the window's worker)
        check_run_size(self.integrator, self.dt, self.duration, names=SOLVER_NAMES, samples=False)

    @property
    def options(self) -> dict:
        """Keyword arguments of :func:`~app.physics.integrators.simulate` besides dt."""
        return {"rtol": self.rtol, "atol": self.atol, "reorthonormalize": self.reorthonormalize,
                "reorthonormalize_every": self.reorthonormalize_every}


#: largest dt c (1/J + 1/I_min) a fixed-step method is given with a damper: inside explicit
#: Euler's real stability interval (2) and RK4's (2.79), and where implicit midpoint's
#: fixed-point iteration still contracts (below 2)
DAMPER_STEP_LIMIT = 1.0
#: DOP853's steps on a stiff decaying mode of rate r stay below about this over r: its real
#: stability interval reaches about -6 (measured here: 4.1-4.8 over r on y' = -r (y - sin t)),
#: so duration r / 6 is a lower bound on the steps it takes
DOP853_STIFF_REACH = 6.0

#: how :func:`check_run_size` names the solver's fields in a scenario's messages
SOLVER_NAMES = {"dt": "solver.dt", "duration": "solver.duration"}


def _is_positive_finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


@dataclass(frozen=True)
class Scenario:
    """A complete, validated scenario. Frozen: edits make a new one with :meth:`replace`."""

    name: str = "untitled"
    description: str = ""
    body: BodySpec = field(default_factory=BodySpec)
    position: tuple = (0.0, 0.0, 0.0)
    velocity: tuple = (0.0, 0.0, 0.0)
    orientation: tuple = (1.0, 0.0, 0.0, 0.0)
    angular_velocity: tuple = (0.0, 0.0, 0.0)
    gravity: tuple = (0.0, 0.0, 0.0)
    loads: tuple = ()
    solver: SolverSpec = field(default_factory=SolverSpec)
    # the damper sphere's angular velocity (body frame, rad/s); None: it turns with the body
    damper_angular_velocity: tuple | None = None

    def __post_init__(self):
        # validate everything now, so that a Scenario that exists is a good one
        self.rigid_body
        self.initial_state
        self.applied_loads
        self.solver.validate()
        self._check_derived()
        self._check_damper_step()

    def _check_damper_step(self) -> None:
        """Refuse a damper too stiff for the solver before any step: a fixed step needs
        dt c (1/J + 1/I_min) <= :data:`DAMPER_STEP_LIMIT` (past it the first step blew up),
        and ``dop853``, whose steps shrink to about :data:`DOP853_STIFF_REACH` over that rate,
        would need more steps than a run may take (it ran for minutes before failing)."""
        from ..physics.gyrostat import damper_relaxation_rate
        from ..physics.integrators import max_steps

        rate = damper_relaxation_rate(self.rigid_body)
        if not rate:
            return
        solver, info = self.solver, integrator_info(self.solver.integrator)
        rule = f"c (1/J + 1/I_min) = {rate:.3g} /s with this damper"
        # (a splitting refuses any damper, with its own reason, when it is run)
        if info.fixed_step and not info.rigid_only and solver.dt * rate > DAMPER_STEP_LIMIT:
            raise ParameterError("solver.dt", solver.dt,
                                 f"be <= {DAMPER_STEP_LIMIT / rate:.3g} s for {solver.integrator} "
                                 f"(a fixed step needs dt c (1/J + 1/I_min) <= {DAMPER_STEP_LIMIT:g}; {rule}; "
                                 "a softer damper, a smaller c or a larger J, allows a longer step)")
        if not info.fixed_step and not info.torque_free_only:
            limit = max_steps(solver.integrator)
            if solver.duration * rate / DOP853_STIFF_REACH > limit:
                raise ParameterError("solver.duration", solver.duration,
                                     f"be <= {limit * DOP853_STIFF_REACH / rate:.3g} s for {solver.integrator} "
                                     f"(its steps shrink to about {DOP853_STIFF_REACH:g} / (c (1/J + 1/I_min)), "
                                     f"{rule}: about {solver.duration * rate / DOP853_STIFF_REACH:.3g} steps, "
                                     f"more than its {limit:,}; a softer damper, a smaller c or a larger J, "
                                     "runs longer)")

    def _check_derived(self) -> None:
        """Refuse inputs each finite (at most 1e100) whose products are not: the initial
        angular momentum L0 = R I omega and energy E0 = T + V (``tumble inspect`` prints
        them; every run's drifts are relative to them)."""
        from ..physics import diagnostics

        body, s0 = self.rigid_body, self.initial_state
        with np.errstate(over="ignore", invalid="ignore"):
            checks = (
                ("initial.angular_velocity", self.angular_velocity, "angular momentum L0 = I omega",
                 diagnostics.angular_momentum(body, s0.q, s0.w)),
                ("initial.angular_velocity", self.angular_velocity, "rotational energy 1/2 omega.I omega",
                 diagnostics.rotational_energy(body, s0.w)),
                ("initial.velocity", self.velocity, "kinetic energy 1/2 m |v|^2",
                 0.5 * body.mass * np.dot(s0.v, s0.v)),
                ("initial.position", self.position, "potential energy -m g.c",
                 diagnostics.potential_energy(body, np.asarray(self.gravity, dtype=float), s0.c)),
                ("initial.velocity", self.velocity, "momentum m v", body.mass * np.asarray(s0.v)),
            )
            energy = sum(float(value) for _, _, _, value in checks[1:4])
        for field_name, value, what, derived in checks:
            if not np.all(np.isfinite(derived)):
                raise ParameterError(field_name, value, f"give a finite {what} with this body "
                                     f"(mass {body.mass:.3g} kg, largest moment {np.max(body.principal()[0]):.3g} kg m^2)")
        if not math.isfinite(energy):
            raise ParameterError("initial.velocity", self.velocity, "give a finite energy E0 = T + V with this body")

    def replace(self, **changes) -> "Scenario":
        """A new validated scenario with some fields changed."""
        return dataclasses.replace(self, **changes)

    @cached_property
    def rigid_body(self) -> Body:
        return self.body.build()

    @cached_property
    def initial_state(self) -> State:
        """The initial state of the centre of mass (position and velocity are converted from
        the reference point when the body has one off its centre of mass)."""
        try:
            s = State.initial(self.position, self.velocity, self.orientation, self.angular_velocity)
        except ParameterError as err:
            raise err.prefixed("initial") from None
        if np.linalg.norm(s.w) > OMEGA_LIMIT:
            raise ParameterError("initial.angular_velocity", s.w,
                                 f"have a magnitude <= {OMEGA_LIMIT:g} rad/s (past it a run counts as diverged)")
        s = s.replace(s=self._damper_rate(s.w))
        b = np.asarray(self.rigid_body.center_of_mass)
        if self.body.shape == "custom" and np.any(b != 0):
            arm = quat.rotate(s.q, b)
            spin = quat.rotate(s.q, np.cross(s.w, b))
            s = s.replace(c=s.c + arm, v=s.v + spin)
        return s

    def _damper_rate(self, w: np.ndarray) -> np.ndarray | None:
        """The damper sphere's initial rate (body frame): given, or w; None without a damper."""
        field_name = "initial.damper_angular_velocity"
        given = self.damper_angular_velocity
        if self.body.damper is None:
            if given is not None:
                raise ParameterError(field_name, given, "be given only for a body with a [body.damper]")
            return None
        if given is None:
            return w
        rate = np.asarray(given, dtype=float)
        if rate.shape != (3,) or not np.all(np.isfinite(rate)):
            raise ParameterError(field_name, given, "be 3 finite numbers (rad/s, body frame)")
        if np.linalg.norm(rate) > OMEGA_LIMIT:
            raise ParameterError(field_name, given, f"have a magnitude <= {OMEGA_LIMIT:g} rad/s")
        return rate

    @cached_property
    def applied_loads(self) -> Loads:
        """The loads about the centre of mass. A force's ``point`` is given from the body's
        reference point, as ``initial.position`` and ``--point`` are: the centre of mass
        unless a custom body names ``center_of_mass`` (Exudyn's physicsCenterOfMass)."""
        built = [spec.build(i) for i, spec in enumerate(self.loads)]
        offset = np.asarray(self.rigid_body.center_of_mass, dtype=float)
        if self.body.shape == "custom" and np.any(offset != 0):
            built = [Force(b.vector, b.point - offset, b.frame) if isinstance(b, Force) else b for b in built]
        try:
            g = Loads(gravity=self.gravity).gravity
        except ParameterError as err:
            raise ParameterError("world.gravity", err.value, err.rule) from None
        return Loads(
            gravity=g,
            torques=[b for b in built if isinstance(b, Torque)],
            forces=[b for b in built if isinstance(b, Force)],
            drags=[b for b in built if isinstance(b, Drag)],
        )

    @cached_property
    def model(self) -> Model:
        return compile_model(self.rigid_body, self.applied_loads)
