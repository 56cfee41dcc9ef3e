"""Public wrappers and registrations of the configurations kernels (the package re-exports them)."""

import numpy as np

from .._dispatch import register_kernel
from .._validation import float_2d, int_1d

__all__ = [
    "knn_bruteforce",
    "self_tuning_csr",
    "partition_energy",
    "knn_vote",
    "cluster_entropy",
    "louvain",
    "upper_envelope",
]

_REF = "sklearn_frontier.kernels.configurations._reference:"
_NB = "sklearn_frontier.kernels.configurations._numba:"


_knn = register_kernel("knn_bruteforce", reference=_REF + "knn_bruteforce", numba=_NB + "knn_bruteforce")
_csr = register_kernel("self_tuning_csr", reference=_REF + "self_tuning_csr", numba=_NB + "self_tuning_csr")
_energy = register_kernel("partition_energy", reference=_REF + "partition_energy",
                          numba=_NB + "partition_energy")
_vote = register_kernel("knn_vote", reference=_REF + "knn_vote", numba=_NB + "knn_vote")
_entropy = register_kernel("cluster_entropy", reference=_REF + "cluster_entropy", numba=_NB + "cluster_entropy")
_louvain = register_kernel("louvain", reference=_REF + "louvain", numba=_NB + "louvain")


def _check_csr(indptr, indices, data, strength):
    indptr, indices = int_1d(indptr, "indptr"), int_1d(indices, "indices")
    data = np.ascontiguousarray(data, dtype=np.float64)
    strength = np.ascontiguousarray(strength, dtype=np.float64)
    n = strength.shape[0]
    if strength.ndim != 1 or indptr.shape != (n + 1,) or indptr[0] != 0 or indptr[-1] != indices.shape[0]:
        raise ValueError("indptr must have n + 1 entries from 0 to nnz, with n = len(strength).")
    if data.shape != indices.shape:
        raise ValueError("data and indices must have one length.")
    if indices.size and (indices.min() < 0 or indices.max() >= n):
        raise ValueError("indices must lie in [0, n).")
    if np.any(np.diff(indptr) < 0):
        raise ValueError("indptr must be non-decreasing.")
    return indptr, indices, data, strength


def _check_labels(labels, n, K):
    labels = int_1d(labels, "labels")
    if labels.shape[0] != n:
        raise ValueError(f"labels must have {n} entries, got {labels.shape[0]}.")
    K = int(K)
    if labels.size and (labels.min() < 0 or labels.max() >= K):
        raise ValueError(f"labels must lie in [0, K={K}).")
    return labels, K


def knn_bruteforce(Z, Q, k, exclude_self=False):
    """Exact Euclidean k nearest rows of ``Z`` for each row of ``Q``; ties go to the smaller index.

    Parameters
    ----------
    Z : array-like of shape (n, p)
        Reference rows.
    Q : array-like of shape (m, p)
        Query rows.
    k : int
        Number of neighbours.
    exclude_self : bool, default=False
        ``Q`` is ``Z`` (row ``i`` never is its own neighbour).

    Returns
    -------
    idx : ndarray of shape (m, k), int64
        Indices of the neighbours in ``Z``.
    dist : ndarray of shape (m, k), float64
        Distances to the neighbours.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import knn_bruteforce
    >>> Z = np.array([[0.0], [1.0], [3.0]])
    >>> knn_bruteforce(Z, Z, 1, exclude_self=True)[0].ravel().tolist()
    [1, 0, 1]
    """
    Z, Q = float_2d(Z, "Z"), float_2d(Q, "Q")
    if Z.shape[1] != Q.shape[1]:
        raise ValueError(f"Z and Q must have the same number of columns, got {Z.shape[1]} and {Q.shape[1]}.")
    k = int(k)
    limit = Z.shape[0] - (1 if exclude_self else 0)
    if not 1 <= k <= limit:
        raise ValueError(f"k must be in [1, {limit}], got {k}.")
    if exclude_self and Q.shape[0] != Z.shape[0]:
        raise ValueError("exclude_self=True needs Q to be Z (same number of rows).")
    return _knn(Z, Q, k, bool(exclude_self))


def self_tuning_csr(idx, w, n):
    """Symmetric-max CSR graph ``max(W, W.T)`` of a kNN weight list (no self loops, no zero weights).

    The weights themselves come from the shared kernel
    :func:`sklearn_frontier.kernels.local_scaling_weights` (self-tuning) or are ones (binary).

    Parameters
    ----------
    idx : array-like of shape (r, k), int
        Neighbour indices of each row.
    w : array-like of shape (r, k), float
        Weight of each kNN edge.
    n : int
        Number of vertices (``n >= r``, ``n > idx.max()``).

    Returns
    -------
    indptr, indices, data : ndarray
        CSR arrays (int64, int64, float64), columns sorted per row.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import self_tuning_csr
    >>> indptr, indices, data = self_tuning_csr(np.array([[1], [0]]), np.array([[0.5], [0.25]]), 2)
    >>> indptr.tolist(), indices.tolist(), data.tolist()
    ([0, 1, 2], [1, 0], [0.5, 0.5])
    """
    idx = np.ascontiguousarray(idx, dtype=np.int64)
    w = float_2d(w, "w")
    n = int(n)
    if idx.ndim != 2 or idx.shape != w.shape:
        raise ValueError(f"idx and w must be 2-D of one shape, got {idx.shape} and {w.shape}.")
    if idx.shape[0] > n or (idx.size and (idx.min() < 0 or idx.max() >= n)):
        raise ValueError("idx must index vertices in [0, n) and have at most n rows.")
    return _csr(idx, w, n)


def partition_energy(indptr, indices, data, strength, labels, K):
    """Attraction ``a`` and repulsion ``b`` of a partition, ``Q(gamma) = a - gamma * b``.

    ``a = (1/2m) sum_ij W_ij [c_i = c_j]`` and ``b = sum_c (S_c / 2m)**2`` (modularity null model;
    pass ``strength = ones`` for ``n**2``-normalised constant Potts).

    Parameters
    ----------
    indptr, indices, data : array-like
        CSR of the symmetric weight matrix ``W``.
    strength : array-like of shape (n,)
        Node strengths of the null model.
    labels : array-like of shape (n,), int
        Cluster label of each node, in ``range(K)``.
    K : int
        Number of clusters.

    Returns
    -------
    a, b : float
        Attraction and repulsion of the partition.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import partition_energy
    >>> indptr, indices, data = np.array([0, 1, 2]), np.array([1, 0]), np.array([1.0, 1.0])
    >>> partition_energy(indptr, indices, data, np.ones(2), np.array([0, 0]), 1)
    (1.0, 1.0)
    """
    indptr, indices, data, strength = _check_csr(indptr, indices, data, strength)
    labels, K = _check_labels(labels, strength.shape[0], K)
    if not strength.sum() > 0:
        raise ValueError("the total strength 2m must be positive.")
    return _energy(indptr, indices, data, strength, labels, K)


def knn_vote(nbr, labels, K, weights=None):
    """Soft cluster assignment by (weighted) votes of neighbours; rows sum to one.

    Parameters
    ----------
    nbr : array-like of shape (m, k), int
        Neighbours (indices into ``labels``).
    labels : array-like of shape (n,), int
        Cluster label of each reference row.
    K : int
        Number of clusters.
    weights : array-like of shape (m, k), default=None
        Positive vote weights (None: uniform).

    Returns
    -------
    S : ndarray of shape (m, K)
        Soft assignments.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import knn_vote
    >>> knn_vote(np.array([[0, 1]]), np.array([0, 1]), 2).tolist()
    [[0.5, 0.5]]
    """
    nbr = np.ascontiguousarray(nbr, dtype=np.int64)
    labels = int_1d(labels, "labels")
    labels, K = _check_labels(labels, labels.shape[0], K)
    if nbr.ndim != 2 or nbr.shape[1] < 1 or (nbr.size and (nbr.min() < 0 or nbr.max() >= labels.shape[0])):
        raise ValueError("nbr must be 2-D with k >= 1 columns of indices into labels.")
    weights = np.ones(nbr.shape) if weights is None else float_2d(weights, "weights")
    if weights.shape != nbr.shape or not np.all(weights > 0):
        raise ValueError("weights must be positive and shaped like nbr.")
    return _vote(nbr, labels, K, weights)


def cluster_entropy(labels, K):
    """Compute the Shannon entropy (nats) of the cluster-size distribution.

    Parameters
    ----------
    labels : array-like of shape (n,), int
        Cluster label of each row, in ``range(K)``.
    K : int
        Number of clusters.

    Returns
    -------
    entropy : float
        The entropy in nats.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import cluster_entropy
    >>> round(cluster_entropy(np.array([0, 0, 1, 1]), 2), 6)
    0.693147
    """
    labels = int_1d(labels, "labels")
    labels, K = _check_labels(labels, labels.shape[0], K)
    if labels.shape[0] == 0:
        raise ValueError("labels must not be empty.")
    return _entropy(labels, K)


def louvain(indptr, indices, data, strength, gamma, seed=0, max_levels=32, n_iterations=8):
    """Louvain partition maximising generalised modularity ``a - gamma * b`` (seeded, deterministic).

    Local moving in a seeded random node order (to the best neighbouring community, or to an empty
    one when every gain is negative) until no node moves, then aggregation, for at most
    ``max_levels`` levels; up to ``n_iterations`` such passes are chained, each starting from the
    previous partition, until it no longer changes. The numba twin and the pure-Python reference
    return identical labels.

    Parameters
    ----------
    indptr, indices, data : array-like
        Symmetric CSR adjacency.
    strength : array-like of shape (n,)
        Null-model degrees (``W.sum(axis=1)`` for modularity).
    gamma : float
        Resolution (> 0).
    seed : int, default=0
        Seed of the random node order.
    max_levels : int, default=32
        Maximum number of aggregation levels per pass.
    n_iterations : int, default=8
        Maximum number of chained passes.

    Returns
    -------
    labels : ndarray of shape (n,), int64
        Ids 0..K-1 by first occurrence.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import louvain
    >>> # two triangles joined by one edge
    >>> edges = [(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5), (2, 3)]
    >>> import scipy.sparse as sp
    >>> r, c = np.array(edges).T
    >>> W = sp.csr_matrix((np.ones(14), (np.r_[r, c], np.r_[c, r])), shape=(6, 6))
    >>> louvain(W.indptr, W.indices, W.data, np.asarray(W.sum(axis=1)).ravel(), 1.0).tolist()
    [0, 0, 0, 1, 1, 1]
    """
    indptr, indices, data, strength = _check_csr(indptr, indices, data, strength)
    gamma = float(gamma)
    if not (np.isfinite(gamma) and gamma > 0):
        raise ValueError(f"gamma must be a positive finite float, got {gamma}.")
    seed, max_levels, n_iterations = int(seed), int(max_levels), int(n_iterations)
    if seed < 0 or max_levels < 1 or n_iterations < 1:
        raise ValueError("seed must be >= 0, max_levels >= 1 and n_iterations >= 1.")
    return _louvain(indptr, indices, data, strength, gamma, seed, max_levels, n_iterations)


def upper_envelope(a, b, gamma_min, gamma_max):
    """Exact upper envelope of the lines ``Q_P(gamma) = a_P - gamma * b_P`` on ``[gamma_min, gamma_max]``.

    The CHAMP construction (Weir et al. 2017): sort by ``b`` descending (ties: larger ``a``), keep
    the upper hull (convex-hull trick), breakpoints ``(a_P - a_P') / (b_P - b_P')``, clip to the
    range. O(C log C).

    Parameters
    ----------
    a, b : array-like of shape (C,)
        Intercepts and slopes of the candidate lines.
    gamma_min, gamma_max : float
        Range of the resolution parameter.

    Returns
    -------
    winners : ndarray of shape (M,), int64
        Indices of the lines on the envelope, by increasing resolution.
    intervals : ndarray of shape (M, 2)
        ``[gamma_lo, gamma_hi]`` of each winner (contiguous, covering the range).

    Examples
    --------
    >>> from sklearn_frontier.kernels import upper_envelope
    >>> w, iv = upper_envelope([1.0, 0.8, 0.55, 0.3], [1.0, 0.5, 0.2, 0.19], 0.01, 10.0)
    >>> w.tolist(), iv.round(4).tolist()
    ([0, 1, 2], [[0.01, 0.4], [0.4, 0.8333], [0.8333, 10.0]])
    """
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    if a.shape != b.shape or a.size == 0:
        raise ValueError("a and b must be non-empty and of one length.")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("a and b must be finite.")
    if not gamma_min < gamma_max:
        raise ValueError("gamma_min must be below gamma_max.")
    order = np.lexsort((np.arange(a.size), -a, -b))  # b descending, then a descending, then index
    hull = []  # indices; breaks[t] = gamma where hull[t] starts winning
    breaks = []
    for i in order:
        if hull and b[hull[-1]] == b[i]:
            continue  # same slope, smaller (or equal) intercept: never strictly on top
        while hull:
            j = hull[-1]
            x = (a[j] - a[i]) / (b[j] - b[i])  # where i overtakes j
            if x <= breaks[-1]:
                hull.pop()
                breaks.pop()
            else:
                break
        breaks.append(-np.inf if not hull else (a[hull[-1]] - a[i]) / (b[hull[-1]] - b[i]))
        hull.append(i)
    starts = np.asarray(breaks)
    ends = np.r_[starts[1:], np.inf]
    lo = np.maximum(starts, gamma_min)
    hi = np.minimum(ends, gamma_max)
    keep = hi > lo
    winners = np.asarray(hull, dtype=np.int64)[keep]
    return winners, np.column_stack([lo[keep], hi[keep]])
