"""Twin-test inputs and tolerances of the transport kernels, keyed by kernel name."""

import numpy as np

from kernel_inputs import TwinCase


def _make_cost_inputs(rng):
    m, n, d = (int(rng.choice(v)) for v in ([1, 7, 64], [1, 9, 130], [1, 2, 5]))
    X = rng.normal(size=(m, d))
    Y = np.vstack([rng.normal(size=(n - 1, d)), X[:1]]) if n > 1 else rng.normal(size=(n, d))
    return (X, Y), {}


def _make_projection_inputs(rng):
    m, n, d = (int(rng.choice(v)) for v in ([1, 8, 50], [1, 12, 70], [1, 2, 3]))
    if rng.random() < 0.5:  # dense plan (entropic)
        P = rng.random((m, n))
    else:  # sparse plan (exact: few nonzeros per row)
        P = rng.random((m, n)) * (rng.random((m, n)) < 0.1)
    if m > 1:
        P[int(rng.integers(m))] = 0.0  # a row without mass
    P /= max(P.sum(), 1e-300)
    a = rng.random(m) + 0.1
    return (P, rng.normal(size=(n, d)), a / a.sum(), rng.normal(size=(m, d))), {}


def _make_mccann_inputs(rng):
    m, d = int(rng.choice([1, 10, 33])), int(rng.choice([1, 2, 4]))
    return (rng.normal(size=(m, d)), rng.normal(size=(m, d)), rng.random(int(rng.choice([1, 5])))), {}


def _make_quantile_inputs(rng):
    n, m = int(rng.choice([1, 5, 40])), int(rng.choice([1, 3, 17, 64]))
    b = rng.random(n) + 0.05
    if rng.random() < 0.5:
        edges = np.linspace(0.0, 1.0, m + 1)
    else:
        edges = np.concatenate([[0.0], np.sort(rng.random(m - 1)), [1.0]])
    return (np.sort(rng.normal(size=n)), b / b.sum(), edges), {}


CASES = {
    "sqeuclidean_cost": TwinCase(make_inputs=_make_cost_inputs),
    "barycentric_projection": TwinCase(make_inputs=_make_projection_inputs),
    "mccann_interpolate": TwinCase(make_inputs=_make_mccann_inputs),
    "quantile_cell_means": TwinCase(make_inputs=_make_quantile_inputs),
}
