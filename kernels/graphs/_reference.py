"""numpy references for the graph kernels (the oracles)."""

import numpy as np


def local_scaling_weights(dist, idx, sigma):
    """Zelnik-Manor–Perona weights ``w_ij = exp(-d_ij**2 / (sigma_i * sigma_j))`` on a kNN list.

    Parameters
    ----------
    dist : ndarray of shape (n, k), float64
        Distance from row ``i`` to its ``j``-th neighbour.
    idx : ndarray of shape (n, k), int64
        Index (into ``sigma``) of that neighbour.
    sigma : ndarray of shape (m,), float64
        Positive local scale of every vertex (``m >= idx.max() + 1``).

    Returns
    -------
    w : ndarray of shape (n, k), float64
    """
    return np.exp(-(dist**2) / (sigma[: dist.shape[0], None] * sigma[idx]))
