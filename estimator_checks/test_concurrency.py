"""One fitted estimator used from 8 threads at once gives the sequential results, for every registered
estimator (numba kernels, torch modules and lazily built caches shared between the threads)."""

import threading
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from estimator_checks.data import fit_on_task_data
from estimator_checks.instances import all_entries

ENTRIES = all_entries()
N_THREADS = 8


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_predict_transform_from_8_threads_equals_sequential(entry):
    methods = [m for m in ("predict", "transform") if hasattr(entry.instance(), m)]
    if not methods:
        pytest.skip(f"{entry.name} has neither predict nor transform")
    for method in methods:
        est, X, _ = fit_on_task_data(entry)  # fresh: lazily built caches are built by the concurrent calls themselves
        reference, _, _ = fit_on_task_data(entry)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = np.asarray(getattr(reference, method)(X), dtype=float)
        barrier = threading.Barrier(N_THREADS)

        def call(_):
            barrier.wait()  # all threads enter the method together
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return np.asarray(getattr(est, method)(X), dtype=float)

        with ThreadPoolExecutor(N_THREADS) as pool:
            results = list(pool.map(call, range(N_THREADS)))
        for out in results:
            np.testing.assert_array_equal(out, expected, err_msg=f"{entry.name}.{method} from {N_THREADS} threads")
        np.testing.assert_array_equal(np.asarray(getattr(est, method)(X), dtype=float), expected)
