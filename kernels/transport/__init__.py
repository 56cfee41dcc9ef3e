"""Kernels of the LOT active-experimentation family (:mod:`sklearn_frontier.transport`).

``sqeuclidean_cost`` (the cost matrix handed to POT), ``barycentric_projection`` (plan -> LOT tangent vector),
``mccann_interpolate`` (displacement interpolation, the McCann baseline) and ``quantile_cell_means`` (the exact
1-D LOT embedding). POT does every OT solve; no Triton twin, since the solves dominate and these are memory-bound
loops far below launch overhead (``backend="triton"`` runs the numba twin). The functions exported here convert
their inputs to C-contiguous float64 before dispatching.

>>> import numpy as np
>>> from sklearn_frontier.kernels.transport import sqeuclidean_cost
>>> sqeuclidean_cost(np.zeros((1, 2)), np.ones((2, 2)))
array([[2., 2.]])
"""

import functools

import numpy as np
from sklearn_frontier.kernels._dispatch import register_kernel

__all__ = ["sqeuclidean_cost", "barycentric_projection", "mccann_interpolate", "quantile_cell_means"]

_REF = "sklearn_frontier.kernels.transport._reference:"
_NB = "sklearn_frontier.kernels.transport._numba:"


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


_sqeuclidean_cost = register_kernel("sqeuclidean_cost", reference=_REF + "sqeuclidean_cost",
                                    numba=_NB + "sqeuclidean_cost", make_inputs=_make_cost_inputs)
_barycentric_projection = register_kernel("barycentric_projection", reference=_REF + "barycentric_projection",
                                          numba=_NB + "barycentric_projection",
                                          make_inputs=_make_projection_inputs)
_mccann_interpolate = register_kernel("mccann_interpolate", reference=_REF + "mccann_interpolate",
                                      numba=_NB + "mccann_interpolate", make_inputs=_make_mccann_inputs)
_quantile_cell_means = register_kernel("quantile_cell_means", reference=_REF + "quantile_cell_means",
                                       numba=_NB + "quantile_cell_means", make_inputs=_make_quantile_inputs)


def _contiguous(dispatch):
    @functools.wraps(dispatch)
    def wrapper(*arrays):
        return dispatch(*(np.ascontiguousarray(a, dtype=np.float64) for a in arrays))

    wrapper.kernel_spec = dispatch.kernel_spec
    return wrapper


sqeuclidean_cost = _contiguous(_sqeuclidean_cost)
barycentric_projection = _contiguous(_barycentric_projection)
mccann_interpolate = _contiguous(_mccann_interpolate)
quantile_cell_means = _contiguous(_quantile_cell_means)
