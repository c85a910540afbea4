"""The compiled kernels' numbers: method ids, where each part lives in ``params`` and in a state
row, flag bits, iteration limits (see :mod:`.kernels`' docstring). Plain Python, no numba: the
model, the integrators' registry and the command line's parser read them without starting
numba's compiler (half a second of every command); :mod:`.kernels` imports them all."""

#: method ids (:mod:`.runs` has one entry kernel per id); the names and every other fact of
#: each method are in ``integrators.REGISTRY``
EULER, SEMI_IMPLICIT_EULER, RK4, MIDPOINT, SPLITTING, SPLITTING4, ROTMAT_EULER, LIE_RK4 = range(8)
#: length of ``params`` and where the drag and the internal parts live in it (see the
#: module docstring)
N_PARAMS = 45
DRAG_FLAG = 20
DRAG_LINEAR = 21
DRAG_QUADRATIC = 30
PARTS_FLAG = 39
DAMPER_INERTIA = 40
DAMPER_COEFFICIENT = 41
ROTOR_MOMENTUM = 42
#: drag flag bits
DRAG_LINEAR_BIT, DRAG_QUADRATIC_BIT = 1, 2
#: internal parts flag bits
DAMPER_BIT, ROTOR_BIT = 1, 2
#: row width of each method: rotmat-euler carries its rotation matrix and a step counter
ROW_WIDTH = 13
ROTMAT_ROW_WIDTH = 23
#: numbers a damper adds at the end of a row (its sphere's angular velocity)
DAMPER_WIDTH = 3
#: re-orthonormalisation schemes of rotmat-euler (``options[1]``)
REORTHO_POLAR, REORTHO_GRAM_SCHMIDT = 0, 1
#: polar decomposition by Bjorck-Bowie iteration R <- R (3 I - R^T R) / 2: iterations at most
POLAR_MAX_ITER = 20

from ..limits import OMEGA_LIMIT  # noqa: E402, F401 (|omega| past which a run counts as diverged)
#: implicit midpoint: fixed-point iterations before giving up (converges ~ h|w|/2 per iteration)
MIDPOINT_MAX_ITER = 200

_CBRT2 = 2.0 ** (1.0 / 3.0)
#: Yoshida (1990) triple-jump weights: S(w1 h) S(w0 h) S(w1 h) is of order four
YOSHIDA_W1 = 1.0 / (2.0 - _CBRT2)
YOSHIDA_W0 = -_CBRT2 / (2.0 - _CBRT2)
