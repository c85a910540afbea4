"""The fit's kept answers (tumble.throws.fitting.memo): a repeated question gets exactly the
answer the function gives, never one of a merely close question, and no caller can change it."""

import numpy as np

from tumble.throws.fitting import edges, flights as fl
from tumble.throws.fitting.memo import Store, forget


def _counted():
    calls = []

    def compute(x):
        calls.append(1)
        return np.cumsum(x), float(x.sum())
    return calls, compute


def test_a_repeated_question_is_answered_once_and_identically():
    store = Store()
    calls, compute = _counted()
    x = np.linspace(0.0, 1.0, 7)
    a = store.get((x, "quadratic", 2), lambda: compute(x))
    b = store.get((x.copy(), "quadratic", 2), lambda: compute(x))
    assert len(calls) == 1
    assert np.array_equal(a[0], b[0]) and a[1] == b[1]


def test_inputs_differing_in_any_bit_type_or_shape_are_different_questions():
    store = Store()
    calls, compute = _counted()
    x = np.zeros(4)
    store.get((x,), lambda: compute(x))
    store.get((np.nextafter(x, 1.0),), lambda: compute(x))        # one ulp apart
    store.get((-x,), lambda: compute(x))                          # -0.0 is not 0.0 to the key
    store.get((x.astype(np.float32),), lambda: compute(x))        # another dtype
    store.get((x.reshape(2, 2),), lambda: compute(x))             # another shape
    store.get((x, 1), lambda: compute(x))
    store.get((x, 1.0), lambda: compute(x))                       # an int is not a float
    assert len(calls) == 7


def test_an_answer_changed_by_its_caller_stays_as_kept():
    store = Store()
    x = np.arange(5.0)
    first = store.get((x,), lambda: (np.cumsum(x), 1.0))
    first[0][:] = -1.0
    again = store.get((x,), lambda: (np.zeros(5), 0.0))
    assert np.array_equal(again[0], np.cumsum(x))


def test_the_store_keeps_within_its_bounds():
    store = Store(max_bytes=10 ** 6, max_entries=3)
    for k in range(10):
        store.get((np.full(3, float(k)),), lambda: np.zeros(3))
    assert len(store._items) == 3
    big = Store(max_bytes=1000)
    big.get((np.zeros(1000),), lambda: np.zeros(1000))  # larger than the bound: answered, not kept
    assert len(big._items) == 0


def test_kept_smoothing_and_launch_rate_are_the_functions_own():
    rng = np.random.default_rng(3)
    t = np.cumsum(0.01 + 1e-4 * rng.standard_normal(300))
    w = np.column_stack((np.sin(3 * t), np.cos(2 * t), 0.5 * t)) * 10 + 0.01 * rng.standard_normal((300, 3))
    forget()
    fresh = fl._smooth_and_derivative(t, w, fl.DERIVATIVE_WINDOW_S)
    for _ in range(2):  # made, then kept
        got = fl.smooth_and_derivative(t, w)
        assert all(np.array_equal(a, b) for a, b in zip(got, fresh))
    rec = fl.Recording("r", t, w, np.zeros(300, dtype=int), np.zeros(300, dtype=bool))
    f = fl.Flight(0, 20, 260)
    inertia, drag = np.diag([0.3, 0.75, 1.0]), np.array([0.004, 0.012, 0.003])
    w0 = w[20] + 0.1
    fresh = edges._refit_start(rec, f, w0, inertia, "quadratic", drag)
    assert np.array_equal(edges.refit_start(rec, f, w0, inertia, "quadratic", drag), fresh)
    assert np.array_equal(edges.refit_start(rec, f, w0, inertia, "quadratic", drag), fresh)
    fresh = edges._core_start(rec, f, w0, inertia, "quadratic", drag)
    for _ in range(2):
        got = edges.core_start(rec, f, w0, inertia, "quadratic", drag)
        assert np.array_equal(got[0], fresh[0]) and got[1] == fresh[1]
