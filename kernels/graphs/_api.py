"""Public wrappers and registrations of the graphs kernels (the package re-exports them)."""

import numpy as np

from .._dispatch import register_kernel

__all__ = ["local_scaling_weights"]


_local_scaling_weights = register_kernel(
    "local_scaling_weights",
    reference="sklearn_frontier.kernels.graphs._reference:local_scaling_weights",
    numba="sklearn_frontier.kernels.graphs._numba:local_scaling_weights")


def local_scaling_weights(dist, idx, sigma):
    """Zelnik-Manor–Perona weights ``exp(-d_ij**2 / (sigma_i * sigma_j))`` on a kNN list.

    Parameters
    ----------
    dist : array-like of shape (n, k)
        Distance from row ``i`` to its ``j``-th neighbour.
    idx : array-like of shape (n, k)
        Neighbour indices into ``sigma``.
    sigma : array-like of shape (m,)
        Positive local scales, ``m > idx.max()`` and ``m >= n``.

    Returns
    -------
    w : ndarray of shape (n, k)
        Weight of each kNN edge.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import local_scaling_weights
    >>> local_scaling_weights(np.array([[1.0]]), np.array([[0]]), np.array([1.0])).round(4)
    array([[0.3679]])
    """
    dist = np.ascontiguousarray(dist, dtype=np.float64)
    idx = np.ascontiguousarray(idx, dtype=np.int64)
    sigma = np.ascontiguousarray(sigma, dtype=np.float64)
    if dist.ndim != 2 or idx.shape != dist.shape:
        raise ValueError(f"dist and idx must be 2-D of one shape, got {dist.shape} and {idx.shape}.")
    out_of_range = idx.size and (idx.min() < 0 or idx.max() >= sigma.shape[0])
    if sigma.ndim != 1 or sigma.shape[0] < dist.shape[0] or out_of_range:
        raise ValueError("sigma must be 1-D and cover every row and every neighbour index.")
    return _local_scaling_weights(dist, idx, sigma)


local_scaling_weights.kernel_spec = _local_scaling_weights.kernel_spec
