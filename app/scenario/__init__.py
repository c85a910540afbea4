"""Scenarios: validated parameters of a run, presets, and TOML load/save.

A scenario is everything needed to reproduce a run: the body, the initial state, gravity
and applied loads, and the solver settings. ``load`` accepts a preset name or a TOML path;
every rule is checked with a one-line message naming the field, the value and the rule.
"""

from .schema import SHAPES, BodySpec, DamperSpec, LoadSpec, RotorSpec, Scenario, SolverSpec  # noqa: F401
from .document import from_dict, to_dict  # noqa: F401
from .files import (  # noqa: F401
    PRESETS_DIR,
    dumps,
    load,
    loads_toml,
    plain_name,
    preset_names,
    presets,
    resolve,
    save,
)
