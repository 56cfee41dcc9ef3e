"""Twin-test inputs and tolerances of the graphs kernels, keyed by kernel name."""

import numpy as np

from kernel_inputs import TwinCase


def _make_local_scaling_inputs(rng):
    n, k = int(rng.integers(1, 60)), int(rng.integers(1, 8))
    dist = np.sort(rng.random((n, k)) * 3, axis=1)
    idx = rng.integers(0, n, size=(n, k)).astype(np.int64)
    sigma = 0.1 + rng.random(n)
    return (dist, idx, sigma), {}


CASES = {
    "local_scaling_weights": TwinCase(make_inputs=_make_local_scaling_inputs, rtol=1e-13, atol=0.0),
}
