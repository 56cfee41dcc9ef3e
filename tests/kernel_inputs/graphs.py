"""Twin-test inputs and tolerances of the graphs kernels, keyed by kernel name."""

import numpy as np

from kernel_inputs import TwinCase


def _make_local_scaling_inputs(rng):
    n, k = int(rng.integers(1, 60)), int(rng.integers(1, 8))
    dist = np.sort(rng.random((n, k)) * 3, axis=1)
    idx = rng.integers(0, n, size=(n, k)).astype(np.int64)
    sigma = 0.1 + rng.random(n)
    return (dist, idx, sigma), {}


def _make_nn_descent_inputs(rng):
    n, d = int(rng.integers(3, 120)), int(rng.integers(1, 5))
    X = rng.normal(size=(n, d))
    if rng.random() < 0.3:  # exact duplicates and a coarse grid: ties in distance and at the pivots
        X = np.round(X[rng.integers(0, n, n)] * 2) / 2
    k = int(rng.integers(1, min(n, 9)))
    return (X, k, int(rng.integers(0, 2**62)), int(rng.integers(1, 4)), int(rng.integers(2, 24)),
            int(rng.integers(1, 6)), float(rng.choice([0.0, 0.01]))), {}


CASES = {
    "local_scaling_weights": TwinCase(make_inputs=_make_local_scaling_inputs, rtol=1e-13, atol=0.0),
    "nn_descent": TwinCase(make_inputs=_make_nn_descent_inputs, rtol=0.0, atol=0.0),
}
