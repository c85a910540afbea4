"""Carlson's R_F and R_J (app.physics.carlson), which the closed forms use instead of importing
scipy.special: against 40-digit values (mpmath) over the domain, against scipy.special (an
independent implementation) on the closed forms' own arguments, and against values known exactly.

Tolerances: the duplication steps stop when the series' truncation is below half an ulp
(carlson.RELATIVE); what is left is the rounding of about twenty steps of a few operations each:
20 ulps (4.4e-15) from the exact value, and from scipy's value (its own rounding added)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy import special

from tumble.physics import carlson

ULPS = 20 * np.finfo(float).eps


def _relative(ours, theirs):
    return float(np.max(np.abs(np.asarray(ours) - theirs) / np.abs(theirs)))


def _exact(function, *columns):
    with mpmath.workdps(40):
        return np.array([float(function(*map(mpmath.mpf, row))) for row in zip(*columns)])


@pytest.mark.parametrize("decades", [(-12, 0), (-3, 3), (0, 12), (-80, 80)], ids=str)
def test_rf_and_rj_are_within_20_ulps_of_40_digits(decades):
    """x, y, z over the decades (one of them 0 in a tenth), p from 1/100 of their largest to
    10^6 times it: the domain taken here (smaller p goes to scipy)."""
    rng = np.random.default_rng(abs(hash(decades)) % 2**32)
    x, y, z = 10.0 ** rng.uniform(*decades, (3, 300))
    x[:30] = 0.0
    p = np.maximum(np.maximum(x, y), z) * 10.0 ** rng.uniform(-2.0, 6.0, 300)
    assert _relative(carlson.rf(x, y, z), _exact(mpmath.elliprf, x, y, z)) <= ULPS
    assert _relative(carlson.rj(x, y, z, p), _exact(mpmath.elliprj, x, y, z, p)) <= ULPS


def test_the_closed_forms_own_arguments():
    """exact._pi_excess: R_J(cn^2, dn^2, 1, 1 - nu sn^2) with nu <= 0, m in [0, 1]; classify:
    R_F(c^2, c^2 + m1 s^2, 1); theory: R_J(0, m1, 1, 1 - nu)."""
    rng = np.random.default_rng(7)
    u, m = rng.uniform(-2.0, 2.0, 50000), np.concatenate(([0.0, 1.0 - 1e-15], rng.uniform(0.0, 1.0, 49998)))
    nu = -(10.0 ** rng.uniform(-10.0, 4.0, 50000))
    sn, cn, dn, _ = special.ellipj(u, m)
    assert _relative(carlson.rj(cn * cn, dn * dn, 1.0, 1.0 - nu * sn * sn),
                     special.elliprj(cn * cn, dn * dn, 1.0, 1.0 - nu * sn * sn)) <= ULPS
    c, s, m1 = np.cos(u), np.sin(u), 1.0 - m
    assert _relative(carlson.rf(c * c, c * c + m1 * s * s, 1.0), special.elliprf(c * c, c * c + m1 * s * s, 1.0)) <= ULPS
    assert _relative(carlson.rj(0.0, m1[1:], 1.0, 1.0 - nu[1:]), special.elliprj(0.0, m1[1:], 1.0, 1.0 - nu[1:])) <= ULPS


def test_values_known_exactly():
    assert carlson.rf(2.0, 2.0, 2.0) == pytest.approx(2.0**-0.5, rel=ULPS)  # R_F(x,x,x) = x^-1/2
    assert carlson.rj(3.0, 3.0, 3.0, 3.0) == pytest.approx(3.0**-1.5, rel=ULPS)  # R_J(x,x,x,x) = x^-3/2
    assert carlson.rf(0.0, 1.0, 1.0) == pytest.approx(math.pi / 2, rel=ULPS)  # K(0) = R_F(0, 1, 1)
    # R_J(0, y, y, y)... via R_D: R_J(x, y, z, z) = R_D(x, y, z); R_D(0, 1, 1) = 3 pi / 4 (DLMF 19.20.2)
    assert carlson.rj(0.0, 1.0, 1.0, 1.0) == pytest.approx(3.0 * math.pi / 4.0, rel=ULPS)
    # homogeneity: R_F(l x, l y, l z) = l^-1/2 R_F, R_J(l ...) = l^-3/2 R_J
    assert carlson.rf(8.0, 12.0, 20.0) == pytest.approx(carlson.rf(2.0, 3.0, 5.0) / 2.0, rel=ULPS)
    assert carlson.rj(8.0, 12.0, 20.0, 28.0) == pytest.approx(carlson.rj(2.0, 3.0, 5.0, 7.0) / 8.0, rel=ULPS)


def test_shapes_broadcast_and_scalars_stay_scalars():
    assert isinstance(carlson.rf(1.0, 2.0, 3.0), float) and isinstance(carlson.rj(1.0, 2.0, 3.0, 4.0), float)
    assert carlson.rj(np.ones((2, 3)), 2.0, np.ones(3), 4.0).shape == (2, 3)


def test_outside_the_domain_is_scipys_answer():
    """Two zeros (R_F infinite), p < 0 (a Cauchy principal value), p far below x, y, z (where
    digits cancel, fewer in scipy): what scipy.special says."""
    assert carlson.rf(0.0, 0.0, 1.0) == special.elliprf(0.0, 0.0, 1.0)
    assert carlson.rj(1.0, 2.0, 3.0, -0.5) == special.elliprj(1.0, 2.0, 3.0, -0.5)
    assert carlson.rj(1e9, 2e9, 3e9, 1.0) == special.elliprj(1e9, 2e9, 3e9, 1.0)
    assert np.isnan(carlson.rf(-1.0, 2.0, 3.0))
