"""Sweeps over executors: the stability map's directions split into chunks over a process pool
and over a Dask cluster of two worker processes equal the map of one process, and the map
of ``tumble.stability`` is the file ``tumble stability`` writes."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest
from conftest import tumble as cli

import tumble

#: each direction is integrated by the same kernels on the same numbers in any process and
#: any chunk (no sum runs across directions), so the maps agree to round-off at most
TOL = 1e-12
#: a small map: the test is about splitting, not about the map
DIRECTIONS, DURATION = 60, 4.0


@pytest.fixture(scope="module")
def in_process():
    return tumble.stability("t-handle", directions=DIRECTIONS, duration=DURATION)


def assert_same_map(a: dict, b: dict) -> None:
    assert list(a) == list(b)
    for key in a:
        if a[key].dtype.kind in "fc":
            np.testing.assert_allclose(b[key], a[key], rtol=TOL, atol=TOL, err_msg=key)
        else:
            np.testing.assert_array_equal(b[key], a[key], err_msg=key)


def test_the_map_is_the_file_of_the_command(tmp_path, in_process):
    res = cli("stability", "t-handle", f"--directions={DIRECTIONS}", f"--duration={DURATION:g}",
              "--out", tmp_path / "map.npz")
    assert res.returncode == 0, res.stderr
    with np.load(tmp_path / "map.npz") as data:
        assert_same_map({k: data[k] for k in data}, in_process)


def test_the_map_over_a_process_pool_equals_the_in_process_one(in_process):
    with ProcessPoolExecutor(2) as pool:
        assert_same_map(in_process, tumble.stability("t-handle", directions=DIRECTIONS, duration=DURATION,
                                                     executor=pool))


def test_the_kernels_are_loaded_once_per_worker_process():
    """Every chunk after a worker's first finds the kernels compiled: a pool of one worker
    runs all the chunks in one process, and its kernels' dispatchers hold one signature each."""
    from tumble.simulation.stability import direction_chunks

    with ProcessPoolExecutor(1) as pool:
        assert len(direction_chunks(DIRECTIONS, pool)) > 1
        tumble.stability("t-handle", directions=DIRECTIONS, duration=DURATION, executor=pool)
        pids, signatures = pool.submit(_kernel_signatures).result()
    assert pids != os.getpid()
    assert signatures and all(n == 1 for n in signatures.values()), signatures


def _kernel_signatures():
    from tumble.physics.compiled import kernels

    used = {name: len(f.signatures) for name, f in vars(kernels).items()
            if hasattr(f, "signatures") and f.signatures}
    return os.getpid(), used


@pytest.mark.slow  # starts a dask cluster of two processes
def test_the_map_over_a_dask_cluster_equals_the_in_process_one(in_process):
    import distributed  # the test extra installs dask[distributed]
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None,
                                  host="127.0.0.1") as cluster, distributed.Client(cluster) as client:
        executor = client.get_executor()
        assert_same_map(in_process, tumble.stability("t-handle", directions=DIRECTIONS, duration=DURATION,
                                                     executor=executor))
        runs = list(executor.map(tumble.simulate, [tumble.load("book").with_values({"solver.duration": 1.0})]))
        here = tumble.simulate(tumble.load("book").with_values({"solver.duration": 1.0}))
        np.testing.assert_allclose(runs[0].omega, here.omega, rtol=TOL, atol=TOL)
