"""What ``tumble inspect`` reports about a scenario: mass properties, initial momentum and
energy, and the closed form's predictions, as a JSON-ready dict and as text."""

from __future__ import annotations

import math

import numpy as np

from ..physics import diagnostics, gyrostat, theory
from ..physics.body import has_intermediate_axis


def _plain(value):
    """``value`` with every float JSON and the eye can read: -0.0 (an eigenvector's sign, a
    product with a zero) becomes 0.0, and a non-finite number None (JSON has no Infinity)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float):
        return value + 0.0 if math.isfinite(value) else None
    return value


def inspect_dict(sc) -> dict:
    """The body report of ``tumble inspect`` of the scenario ``sc`` (JSON-ready: no -0.0,
    no Infinity or NaN)."""
    return _plain(_report(sc))


def _report(sc) -> dict:
    body = sc.rigid_body
    moments, axes = body.principal()
    s0 = sc.initial_state
    L0 = diagnostics.angular_momentum(body, s0.q, s0.w, s0.s)
    E0 = float(diagnostics.kinetic_energy(body, s0.v, s0.w, s0.s)
               + diagnostics.potential_energy(body, sc.gravity, s0.c))
    return {
        "name": sc.name,
        "shape": body.shape,
        "mass": body.mass,
        "inertia": body.inertia.tolist(),
        "principal_moments": moments.tolist(),
        "principal_axes": axes.T.tolist(),
        # None for a body with two equal moments: it has no intermediate axis to flip about
        "intermediate_axis": axes[:, 1].tolist() if has_intermediate_axis(moments) else None,
        "center_of_mass": np.asarray(body.center_of_mass).tolist(),
        "L0": L0.tolist(),
        "E0": E0,
        "flip_period": theory.flip_period(body, sc.angular_velocity, sc.applied_loads),
        **theory.predict(body, sc.angular_velocity, sc.applied_loads).as_dict(),
        **_gyrostat_keys(sc),
    }


def _gyrostat_keys(sc) -> dict:
    """``rotor_threshold`` (kg m^2/s) and ``final_energy`` (J, rotational) of a body with a
    rotor or a damper (null where not defined; see :mod:`app.physics.gyrostat`)."""
    body, s0 = sc.rigid_body, sc.initial_state
    torque_free = not sc.applied_loads.has_torque
    return {"rotor_threshold": gyrostat.rotor_threshold(body, s0.w),
            "final_energy": gyrostat.final_energy(body, s0.w, s0.s) if torque_free else None}


def inspect_text(name: str, info: dict) -> str:
    """The report of :func:`inspect_dict` as ``tumble inspect`` prints it."""
    out: list[str] = []

    def vec(v):
        return "[" + ", ".join(f"{x: .6g}" for x in v) + "]"

    out.append(f"{name} ({info['shape']})")
    out.append(f"  mass               {info['mass']:.6g} kg")
    out.append("  inertia (kg m^2)   " + "\n                     ".join(vec(r) for r in info["inertia"]))
    out.append(f"  principal moments  {vec(info['principal_moments'])} kg m^2 (ascending)")
    for k, (m, a) in enumerate(zip(info["principal_moments"], info["principal_axes"])):
        tag = "  <- intermediate (unstable)" if k == 1 and info["intermediate_axis"] is not None else ""
        out.append(f"  axis {k + 1}             {vec(a)} (I = {m:.6g}){tag}")
    if info["intermediate_axis"] is None:
        out.append("  (two or three moments are equal: a symmetric body, no intermediate axis)")
    out.append(f"  centre of mass     {vec(info['center_of_mass'])} m")
    out.append(f"  L0 (world)         {vec(info['L0'])} kg m^2/s")
    out.append(f"  E0                 {info['E0']:.9g} J")
    fp = info["flip_period"]
    out.append(f"  flip period        {'none (no flip)' if fp is None else f'{fp:.9g} s'}")
    for key, label, unit in (("polhode_period", "polhode period", "s (omega repeats in the body)"),
                             ("growth_rate", "growth rate", "1/s (near the intermediate axis)"),
                             ("montgomery_phase", "Montgomery phase", "rad (turn about L per polhode period)")):
        value = info[key]
        text = "none" if value is None else f"{value:.9g} {unit}"
        if key == "growth_rate" and value is None and fp is None and info["polhode_period"] is not None:
            text = "stable spin: no growth (only a spin that flips grows away from the intermediate axis)"
        out.append(f"  {label:<18} {text}")
    if info["rotor_threshold"] is not None:
        out.append(f"  rotor threshold    {info['rotor_threshold']:.9g} kg m^2/s (h along the spin above it: stable)")
    if info["final_energy"] is not None:
        out.append(f"  final energy       {info['final_energy']:.9g} J (rotational, once the damper has settled)")
    return "\n".join(out)
