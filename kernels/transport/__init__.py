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

from ._api import (
    barycentric_projection,
    mccann_interpolate,
    quantile_cell_means,
    sqeuclidean_cost,
)

__all__ = ["sqeuclidean_cost", "barycentric_projection", "mccann_interpolate", "quantile_cell_means"]
