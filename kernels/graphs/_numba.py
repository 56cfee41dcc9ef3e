"""numba twins of the graph kernels."""

import numpy as np
from numba import float64, int64, njit, types

_F2 = types.Array(float64, 2, "C", readonly=True)
_I2 = types.Array(int64, 2, "C", readonly=True)
_F1 = types.Array(float64, 1, "C", readonly=True)


@njit(float64[:, ::1](_F2, _I2, _F1), cache=True, nogil=True)
def local_scaling_weights(dist, idx, sigma):
    n, k = dist.shape
    w = np.empty((n, k))
    for i in range(n):
        for j in range(k):
            d = dist[i, j]
            w[i, j] = np.exp(-(d * d) / (sigma[i] * sigma[idx[i, j]]))
    return w
