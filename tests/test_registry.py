"""The integrator registry is the one table of integrator facts, and "dt <= duration" is one
rule refused the same way from every entry point."""

from __future__ import annotations

import argparse

import numpy as np
import pytest
from conftest import refused, tumble_here

from tumble.physics.compiled import kernels
from tumble.physics.errors import ParameterError
from tumble.physics.integrators import (
    DESCRIPTIONS,
    INTEGRATORS,
    ORDERS,
    REGISTRY,
    check_step_fits,
    integrator_info,
    simulate,
    validate_dt,
)
from tumble.scenario import SolverSpec, load


def test_the_menus_tables_are_views_of_the_registry():
    assert INTEGRATORS == tuple(info.name for info in REGISTRY)
    assert DESCRIPTIONS == {info.name: info.description for info in REGISTRY}
    assert ORDERS == {info.name: info.order for info in REGISTRY if info.kernel_id is not None}
    assert {i.name for i in REGISTRY if i.rigid_only and not i.torque_free_only} == {"splitting", "splitting4"}
    assert len(set(INTEGRATORS)) == len(INTEGRATORS)
    ids = [info.kernel_id for info in REGISTRY if info.fixed_step]
    assert len(set(ids)) == len(ids)  # two names never run the same kernel


def test_every_entry_runs_with_the_row_width_it_declares():
    sc = load("boxes-simple")
    for info in REGISTRY:
        rows = sc.model.to_rows(sc.initial_state.c, sc.initial_state.v, sc.initial_state.q,
                                sc.initial_state.w, info.row_width)
        assert rows.shape[-1] == info.row_width
        traj = simulate(sc.model, sc.initial_state, info.name, 0.01, 0.05)
        assert np.all(np.isfinite(traj.q)) and (traj.R is not None) == (info.row_width > kernels.ROW_WIDTH)


def test_an_unknown_integrator_is_a_parameter_error_naming_the_choices():
    with pytest.raises(ParameterError, match=r"^integrator must be one of euler, .*lie-rk4, got 'nope'$"):
        integrator_info("nope")
    with pytest.raises(ParameterError, match=r"^integrator must be one of"):
        integrator_info(["unhashable"])
    with pytest.raises(ParameterError, match=r"^solver\.integrator must be one of"):
        SolverSpec(integrator="nope").validate()


def test_a_step_longer_than_its_run_is_refused_by_the_one_rule():
    check_step_fits(1.0, 1.0)  # equal is fine
    with pytest.raises(ParameterError, match=r"^dt must be <= duration \(1 s\), got 2$"):
        check_step_fits(2.0, 1.0)
    with pytest.raises(ParameterError, match=r"^--duration must be >= the step \(2 s\), got 1$"):
        check_step_fits(2.0, 1.0, names={"duration": "--duration", "dt": "the step"}, blame="duration")
    with pytest.raises(ParameterError, match=r"^dt must be <= duration"):
        validate_dt(2.0, 1.0)
    sc = load("boxes-simple")
    with pytest.raises(ParameterError, match=r"^dt must be <= duration"):
        simulate(sc.model, sc.initial_state, "rk4", 2.0, 1.0)
    with pytest.raises(ParameterError, match=r"^solver\.dt must be <= solver\.duration \(1 s\), got 2$"):
        SolverSpec(dt=2.0, duration=1.0).validate()


def test_the_sample_rule_names_the_integrators_that_sample_anywhere(tmp_path, capsys):
    anywhere = " and ".join(info.name for info in REGISTRY if not info.fixed_step)
    refused(tumble_here(capsys, "simulate", "boxes-simple", "--integrator", "rk4", "--dt", "0.01", "--sample", "0.015",
                        "--duration", "1", "--out", tmp_path / "x.csv"), f"(only {anywhere} sample anywhere)",
            unwritten=[tmp_path / "x.csv"])


def test_the_command_line_refuses_an_unknown_integrator_in_one_line():
    from tumble.cli.core import _integrator

    with pytest.raises(argparse.ArgumentTypeError, match=r"^--integrator must be one of euler, .*, got 'x'$"):
        _integrator("x")
