"""Carlson's symmetric elliptic integrals R_F and R_J for real arguments, in numpy.

The closed forms (:mod:`app.physics.exact`, :mod:`app.physics.theory`) need R_F once per
motion and R_J on every sample time. ``scipy.special`` has both, but importing it costs 0.3 s
of CPU (scipy clones numpy's namespace on first use), a sixth of a window's start-up; these
two functions are all the closed forms take from it.

Method: Carlson's duplication theorem, B. C. Carlson, "Numerical computation of real or complex
elliptic integrals", Numerical Algorithms 10 (1995) 13-26 (also DLMF 19.36.1-2). Each
duplication step divides the spread of the arguments about their mean by 4; the steps stop once
the spread is small enough for the fifth-order Taylor series to be within :data:`RELATIVE`, and
the series is summed. Vectorised: the steps go on until every element is there (a further step
changes nothing of the result), so arrays of any shape broadcast as in numpy.

Domains: :func:`rf`: x, y, z >= 0, at most one of them 0. :func:`rj`: the same, and p at least
:data:`P_SHARE` of the largest of x, y, z (the closed forms' R_J has p >= 1 >= x, y, z): there it
is within 4 ulps of a 40-digit value (tests/test_carlson.py), while for a smaller p the R_C terms
cancel and digits are lost (23,000 ulps at p = 1e-9 max(x, y, z); scipy's 2,000). Both up to
:data:`LARGEST`. Arguments outside go to ``scipy.special``, which says what they are (nan, inf,
a Cauchy principal value for p < 0) or loses fewer digits.
"""

from __future__ import annotations

import numpy as np

#: the relative truncation error the duplication steps aim at: the Taylor series after the last
#: step is within it (Carlson 1995, eq. 2.2 and 2.5), below one rounding of a double
RELATIVE = np.finfo(float).eps / 2.0
#: more steps than any finite double needs (each divides the spread by 4)
MAX_STEPS = 1100
#: arguments up to this size are taken here; products of three of them stay finite
LARGEST = 1e90
#: R_J's p is taken here from this share of max(x, y, z) up
P_SHARE = 1e-2


def _arrays(*values):
    return np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in values))


def _in_domain(x, y, z, p=None) -> bool:
    """x, y, z in [0, LARGEST] with at most one 0, and p (if given) in (0, LARGEST] and at
    least P_SHARE of the largest of x, y, z."""
    ok = (x >= 0) & (y >= 0) & (z >= 0) & (x <= LARGEST) & (y <= LARGEST) & (z <= LARGEST)
    ok &= (x > 0).astype(int) + (y > 0) + (z > 0) >= 2
    if p is not None:
        ok &= (p > 0) & (p <= LARGEST) & (p >= P_SHARE * np.maximum(np.maximum(x, y), z))
    return bool(np.all(ok))


def rf(x, y, z):
    """R_F(x, y, z) = 1/2 int_0^inf dt / sqrt((t+x)(t+y)(t+z)) (DLMF 19.16.1)."""
    x0, y0, z0 = _arrays(x, y, z)
    if not _in_domain(x0, y0, z0):
        from scipy import special

        return special.elliprf(x0, y0, z0)
    a0 = (x0 + y0 + z0) / 3.0
    q = (3.0 * RELATIVE) ** (-1.0 / 6.0) * np.maximum(np.maximum(abs(a0 - x0), abs(a0 - y0)), abs(a0 - z0))
    x, y, z, a = x0, y0, z0, a0
    scale = 1.0  # 4**-m after m steps
    for _ in range(MAX_STEPS):
        if np.all(q * scale < abs(a)):
            break
        sx, sy, sz = np.sqrt(x), np.sqrt(y), np.sqrt(z)
        lam = sx * sy + sx * sz + sy * sz
        x, y, z, a = (x + lam) / 4.0, (y + lam) / 4.0, (z + lam) / 4.0, (a + lam) / 4.0
        scale /= 4.0
    big_x = (a0 - x0) * scale / a
    big_y = (a0 - y0) * scale / a
    big_z = -(big_x + big_y)
    e2 = big_x * big_y - big_z * big_z
    e3 = big_x * big_y * big_z
    series = 1.0 - e2 / 10.0 + e3 / 14.0 + e2 * e2 / 24.0 - 3.0 * e2 * e3 / 44.0
    out = series / np.sqrt(a)
    return out if out.ndim else float(out)


def _rc_one(e):
    """R_C(1, 1 + e) for e > -1 (DLMF 19.2.19-20): arctan(sqrt e)/sqrt e, or artanh for e < 0."""
    e = np.asarray(e, dtype=float)
    out = np.ones_like(e)
    pos, neg = e > 0, e < 0
    s = np.sqrt(abs(e))
    out[pos] = np.arctan(s[pos]) / s[pos]
    out[neg] = np.arctanh(s[neg]) / s[neg]
    return out


def rj(x, y, z, p):
    """R_J(x, y, z, p) = 3/2 int_0^inf dt / ((t+p) sqrt((t+x)(t+y)(t+z))) (DLMF 19.16.2)."""
    x0, y0, z0, p0 = _arrays(x, y, z, p)
    if not _in_domain(x0, y0, z0, p0):
        from scipy import special

        return special.elliprj(x0, y0, z0, p0)
    a0 = (x0 + y0 + z0 + 2.0 * p0) / 5.0
    delta = (p0 - x0) * (p0 - y0) * (p0 - z0)
    spread = np.maximum(np.maximum(abs(a0 - x0), abs(a0 - y0)), np.maximum(abs(a0 - z0), abs(a0 - p0)))
    q = (RELATIVE / 4.0) ** (-1.0 / 6.0) * spread
    x, y, z, p, a = x0, y0, z0, p0, a0
    scale = 1.0  # 4**-m after m steps
    total = np.zeros_like(a0)  # sum over k < m of 4**-k R_C(1, 1 + e_k) / d_k
    for _ in range(MAX_STEPS):
        if np.all(q * scale < abs(a)):
            break
        sx, sy, sz, sp = np.sqrt(x), np.sqrt(y), np.sqrt(z), np.sqrt(p)
        lam = sx * sy + sx * sz + sy * sz
        d = (sp + sx) * (sp + sy) * (sp + sz)
        e = scale**3 * delta / (d * d)
        if np.any(e <= -1.0):  # R_C of a non-positive argument: not met for p > 0; scipy's own way
            from scipy import special

            return special.elliprj(x0, y0, z0, p0)
        total = total + scale * _rc_one(e) / d
        x, y, z, p, a = (x + lam) / 4.0, (y + lam) / 4.0, (z + lam) / 4.0, (p + lam) / 4.0, (a + lam) / 4.0
        scale /= 4.0
    big_x = (a0 - x0) * scale / a
    big_y = (a0 - y0) * scale / a
    big_z = (a0 - z0) * scale / a
    big_p = -(big_x + big_y + big_z) / 2.0
    xyz = big_x * big_y * big_z
    e2 = big_x * big_y + big_x * big_z + big_y * big_z - 3.0 * big_p * big_p
    e3 = xyz + 2.0 * e2 * big_p + 4.0 * big_p**3
    e4 = (2.0 * xyz + e2 * big_p + 3.0 * big_p**3) * big_p
    e5 = xyz * big_p * big_p
    series = (1.0 - 3.0 * e2 / 14.0 + e3 / 6.0 + 9.0 * e2 * e2 / 88.0 - 3.0 * e4 / 22.0 - 9.0 * e2 * e3 / 52.0
              + 3.0 * e5 / 26.0)
    out = scale * series / (a * np.sqrt(a)) + 6.0 * total
    return out if out.ndim else float(out)
