"""Public wrappers and registrations of the graphs kernels (the package re-exports them)."""

import numpy as np

from .._dispatch import register_kernel

__all__ = ["local_scaling_weights", "nn_descent"]


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


_nn_descent = register_kernel(
    "nn_descent",
    reference="sklearn_frontier.kernels.graphs._reference:nn_descent",
    numba="sklearn_frontier.kernels.graphs._numba:nn_descent")


def nn_descent(X, n_neighbors, *, seed=0, n_trees=8, leaf_size=None, max_iter=10, delta=0.001):
    """Approximate Euclidean kNN lists: a random-projection forest, then NN-descent rounds.

    The forest's leaves give every row its first candidates; each round then tries, for every row, the pairs
    among its neighbours and reverse neighbours (Dong, Charikar & Li, WWW 2011), until a round changes at
    most ``delta * n * k`` entries. Deterministic: the graph is a function of ``X`` and ``seed``.

    Parameters
    ----------
    X : array-like of shape (n, d)
        The points.
    n_neighbors : int
        Neighbours per row, ``1 <= n_neighbors < n``.
    seed : int, default=0
        Seeds the forest's pivots.
    n_trees : int, default=8
        Random-projection trees.
    leaf_size : int, default=None
        Largest leaf; None means ``max(2 * n_neighbors, 16)``.
    max_iter : int, default=10
        NN-descent rounds at most.
    delta : float, default=0.001
        Early-stop fraction of changed list entries.

    Returns
    -------
    dist : ndarray of shape (n, n_neighbors)
        Distances, each row ascending (ties by index); ``inf`` where fewer candidates were found.
    idx : ndarray of shape (n, n_neighbors)
        Neighbour indices (never the row itself); ``-1`` where fewer candidates were found.
    n_rounds : int
        NN-descent rounds run.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import nn_descent
    >>> X = np.arange(10.0)[:, None] ** 2
    >>> dist, idx, _ = nn_descent(X, 2)
    >>> idx[5].tolist(), dist[5].tolist()
    ([4, 6], [9.0, 11.0])
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    k = int(n_neighbors)
    if X.ndim != 2 or not 1 <= k < X.shape[0]:
        raise ValueError(f"nn_descent needs a 2-D X and 1 <= n_neighbors < n_samples, got X of shape {X.shape} "
                         f"and n_neighbors={n_neighbors}.")
    leaf = max(2 * k, 16) if leaf_size is None else int(leaf_size)
    if leaf < 2 or int(n_trees) < 1 or int(seed) < 0:
        raise ValueError("nn_descent needs leaf_size >= 2, n_trees >= 1 and seed >= 0.")
    return _nn_descent(X, k, int(seed), int(n_trees), leaf, int(max_iter), float(delta))


nn_descent.kernel_spec = _nn_descent.kernel_spec
