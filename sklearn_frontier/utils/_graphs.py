"""kNN graphs and connectivity repair, written once for every graph-based method."""

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree
from sklearn.neighbors import NearestNeighbors

# From this many rows an "auto" Euclidean graph is approximate: an exact one costs O(n^2 d) (brute force) or
# degrades towards it above a few dimensions (trees), while NN-descent stays near O(n k^2 d) per round.
APPROXIMATE_MIN_SAMPLES = 20_000


def resolve_knn_algorithm(algorithm, n_samples, n_features, metric="euclidean"):
    """The neighbour search that ``algorithm`` means for this data: ``"approximate"`` or a ``NearestNeighbors`` one.

    ``"auto"`` is ``"approximate"`` for a Euclidean metric from :data:`APPROXIMATE_MIN_SAMPLES` rows, else
    ``"exact"``; ``"exact"`` is brute force for a Euclidean metric from 8 features (GEMM blocks beat the trees
    there) and scikit-learn's choice otherwise. ``"approximate"`` needs the Euclidean metric. Any other value
    (``"brute"``, ``"kd_tree"``, ``"ball_tree"``) is passed to ``NearestNeighbors`` as it is.
    """
    euclidean = metric == "euclidean"
    if algorithm == "approximate" and not euclidean:
        raise ValueError(f"The approximate kNN graph is Euclidean only, got metric={metric!r}.")
    if algorithm == "auto":
        algorithm = "approximate" if euclidean and n_samples >= APPROXIMATE_MIN_SAMPLES else "exact"
    if algorithm == "exact":
        algorithm = "brute" if euclidean and n_features >= 8 else "auto"
    return algorithm


def knn_neighbors(X, n_neighbors, *, metric="euclidean", n_jobs=None, algorithm="auto", random_state=0):
    """Each row's ``n_neighbors`` nearest other rows of ``X``, nearest first.

    Self is removed robustly: entry ``i`` is dropped from row ``i``; if exact duplicates displaced
    it from the list, the last entry is dropped instead. ``algorithm`` is passed to
    ``NearestNeighbors``; with ``"brute"`` and the Euclidean metric the (GEMM-based, less accurate)
    distances of the chosen neighbours are recomputed exactly and each row re-sorted by them.
    ``"approximate"`` builds the lists by NN-descent (the ``nn_descent`` kernel, seeded by
    ``random_state``); the few rows it leaves short of ``n_neighbors`` candidates get exact lists.
    ``"auto"`` is scikit-learn's exact choice at any size; a caller that wants the approximate search on large
    inputs resolves its setting first with :func:`resolve_knn_algorithm` (the annotation family does), so that
    no other caller's graph changes behind its back.

    Returns
    -------
    dist : ndarray of shape (n, k), float64
    idx : ndarray of shape (n, k), int64
    """
    X = np.asarray(X)
    n = X.shape[0]
    k = int(min(n_neighbors, n - 1))
    if k < 1:
        raise ValueError(f"A kNN graph needs at least 2 samples, got n_samples={n}.")
    if algorithm == "approximate":
        return _approximate_neighbors(X, k, metric, random_state)
    nn = NearestNeighbors(n_neighbors=k + 1, metric=metric, n_jobs=n_jobs, algorithm=algorithm).fit(X)
    dist, idx = nn.kneighbors(X)
    if algorithm == "brute" and metric == "euclidean":
        diff = X[idx] - X[:, None, :]
        dist = np.sqrt(np.einsum("nkd,nkd->nk", diff, diff))
        order = np.argsort(dist, axis=1, kind="stable")
        dist, idx = np.take_along_axis(dist, order, 1), np.take_along_axis(idx, order, 1)
    is_self = idx == np.arange(n)[:, None]
    # Keep k entries per row: drop self where present, else the farthest entry.
    drop = np.where(is_self.any(axis=1), is_self.argmax(axis=1), k)
    keep = np.ones_like(idx, dtype=bool)
    keep[np.arange(n), drop] = False
    return (np.ascontiguousarray(dist[keep].reshape(n, k), dtype=np.float64),
            np.ascontiguousarray(idx[keep].reshape(n, k), dtype=np.int64))


def _approximate_neighbors(X, k, metric, random_state):
    from sklearn_frontier.kernels import nn_descent

    if metric != "euclidean":
        raise ValueError(f"The approximate kNN graph is Euclidean only, got metric={metric!r}.")
    seed = 0 if random_state is None else int(random_state)
    dist, idx, _ = nn_descent(np.asarray(X, dtype=np.float64), k, seed=seed)
    short = np.flatnonzero((idx < 0).any(axis=1))
    if short.size:  # a vertex no leaf or round reached enough others: its exact list
        d, i = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X[short])
        is_self = i == short[:, None]
        drop = np.where(is_self.any(axis=1), is_self.argmax(axis=1), k)
        keep = np.ones_like(i, dtype=bool)
        keep[np.arange(short.size), drop] = False
        dist[short], idx[short] = d[keep].reshape(-1, k), i[keep].reshape(-1, k)
    return np.ascontiguousarray(dist), np.ascontiguousarray(idx)


def local_scales(dist, *, floor=None):
    """``sigma_i`` = distance to the k-th (last) neighbour, floored.

    ``floor=None`` floors at ``1e-10 * median(positive sigma)`` (1e-12 if none is positive).
    """
    sigma = np.array(dist[:, -1], dtype=np.float64)
    if floor is None:
        positive = sigma[sigma > 0]
        floor = 1e-10 * np.median(positive) if positive.size else 1e-12
    return np.maximum(sigma, floor)


def local_scaling_knn_graph(X, n_neighbors, *, metric="euclidean", row_normalize=True, symmetrize=None,
                            floor=None, n_jobs=None, return_neighbors=False, algorithm="auto", random_state=0):
    """Sparse kNN graph with Zelnik-Manor–Perona weights ``exp(-d_ij**2 / (sigma_i sigma_j))``.

    Parameters
    ----------
    X : ndarray of shape (n, p)
    n_neighbors : int
        Clipped to ``n - 1``.
    row_normalize : bool, default=True
        Rows sum to one; a fully underflowed row becomes uniform over its neighbours.
    symmetrize : {None, "max"}, default=None
        ``"max"`` returns ``max(W, W^T)`` (applied before row normalisation is skipped: the two are
        exclusive; pass ``row_normalize=False``).
    floor : float, default=None
        Floor of the local scale, see :func:`local_scales`.
    return_neighbors : bool, default=False
        Also return ``(dist, idx)``.
    algorithm : str, default="auto"
        Neighbour search of :func:`knn_neighbors` (``"approximate"``: NN-descent).
    random_state : int, default=0
        Seed of the approximate search.

    Returns
    -------
    W : scipy.sparse.csr_matrix of shape (n, n)
    """
    from sklearn_frontier.kernels import local_scaling_weights

    dist, idx = knn_neighbors(X, n_neighbors, metric=metric, n_jobs=n_jobs, algorithm=algorithm,
                              random_state=random_state)
    n, k = idx.shape
    sigma = local_scales(dist, floor=floor)
    w = local_scaling_weights(dist, idx, sigma)
    if row_normalize:
        if symmetrize is not None:
            raise ValueError("row_normalize and symmetrize are exclusive.")
        sums = w.sum(axis=1, keepdims=True)
        underflow = sums[:, 0] <= 0
        w[underflow] = 1.0 / k
        sums[underflow] = 1.0
        w = w / sums
    W = sp.csr_matrix((w.ravel(), idx.ravel(), np.arange(0, n * k + 1, k)), shape=(n, n))
    W.sort_indices()
    if symmetrize == "max":
        W = W.maximum(W.T).tocsr()
        W.setdiag(0)
        W.eliminate_zeros()
    elif symmetrize is not None:
        raise ValueError(f"symmetrize must be None or 'max', got {symmetrize!r}.")
    if return_neighbors:
        return W, dist, idx
    return W


def repair_connectivity(adjacency, X):
    """Add shortest edges until the undirected graph ``adjacency`` is connected.

    While there is more than one component, the shortest Euclidean edge between the component of
    vertex 0 and the rest is added (a KD-tree query); deterministic.

    Returns
    -------
    adjacency : scipy.sparse.csr_matrix
        Symmetric, with added edges weighted by their length.
    added : ndarray of shape (n_added, 2), int64
    """
    A = sp.csr_matrix(adjacency, dtype=np.float64)
    A = A.maximum(A.T).tocsr()
    X = np.asarray(X, dtype=np.float64)
    added = []
    while True:
        n_comp, labels = connected_components(A, directed=False)
        if n_comp <= 1:
            break
        inside = np.flatnonzero(labels == labels[0])
        outside = np.flatnonzero(labels != labels[0])
        tree = cKDTree(X[outside])
        d, j = tree.query(X[inside], k=1)
        best = int(np.argmin(d))
        u, v = int(inside[best]), int(outside[j[best]])
        length = max(float(d[best]), 1e-12)
        A = A + sp.csr_matrix(([length, length], ([u, v], [v, u])), shape=A.shape)
        added.append((min(u, v), max(u, v)))
    return A.tocsr(), np.asarray(added, dtype=np.int64).reshape(-1, 2)
