"""numpy references for the graph kernels (the oracles): local-scaling weights, and the approximate kNN graph (a
random-projection forest, then NN-descent rounds).

Written for clarity, in sets and Python loops; the numba twin (``_numba.py``) keeps bounded heaps
instead. Both give the same graph because every step is defined on sets: a round's result for a vertex is the
``k`` smallest ``(squared distance, index)`` pairs of its list at the start of the round and every candidate
pushed to it during the round, whatever the order of the pushes. Squared distances are summed coordinate by
coordinate in the same order in both, so they agree to the last bit.
"""

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


_MASK = (1 << 64) - 1


def mix64(z):
    """SplitMix64 finalizer of ``z + golden``, on Python ints modulo 2**64."""
    z = (z + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def sq_dist(X, p, q):
    s = 0.0
    for j in range(X.shape[1]):
        t = X[p, j] - X[q, j]
        s += t * t
    return s


def tree_key(seed, tree):
    return mix64(mix64(seed) ^ (tree + 1))


def rp_leaves(X, seed, tree, leaf_size):
    """The leaves of one random-projection tree, as lists of row indices.

    A node of ``m > leaf_size`` rows picks two of them by hashing its key (``a``, ``b``) and sends each row to the
    side of the pivot it is closer to (the hyperplane halfway between them); an exact tie goes by a hash bit, and a
    split that leaves one side empty cuts the node in half instead.
    """
    leaves = []
    stack = [(list(range(X.shape[0])), tree_key(seed, tree))]
    while stack:
        rows, key = stack.pop()
        m = len(rows)
        if m <= leaf_size:
            leaves.append(rows)
            continue
        h1 = mix64(key)
        h2 = mix64(h1)
        pa = h1 % m
        pb = h2 % (m - 1)
        if pb >= pa:
            pb += 1
        a, b = rows[pa], rows[pb]
        left, right = [], []
        for p in rows:
            da, db = sq_dist(X, p, a), sq_dist(X, p, b)
            if da < db or (da == db and (mix64(key ^ p) & 1) == 0):
                left.append(p)
            else:
                right.append(p)
        if not left or not right:
            left, right = rows[: m // 2], rows[m // 2:]
        stack.append((left, mix64(key ^ 1)))
        stack.append((right, mix64(key ^ 2)))
    return leaves


def _k_smallest(X, p, pool, k):
    return sorted((sq_dist(X, p, q), q) for q in pool)[:k]


def nn_descent(X, n_neighbors, seed, n_trees, leaf_size, max_iter, delta):
    """Approximate ``n_neighbors`` nearest other rows of every row of ``X`` (Euclidean).

    Parameters
    ----------
    X : ndarray of shape (n, d), float64
        The points.
    n_neighbors : int
        Neighbours per row, ``k < n``.
    seed : int
        Seeds the forest (a non-negative integer; the graph is a function of ``X`` and ``seed``).
    n_trees : int
        Random-projection trees whose leaves give the first candidates.
    leaf_size : int
        Largest leaf (at least 2).
    max_iter : int
        NN-descent rounds at most.
    delta : float
        Stop when a round changes at most ``delta * n * k`` list entries.

    Returns
    -------
    dist : ndarray of shape (n, k), float64
        Distances, each row ascending (ties by index); ``inf`` where fewer than ``k`` candidates were found.
    idx : ndarray of shape (n, k), int64
        Neighbour indices, ``-1`` where fewer than ``k`` candidates were found.
    n_rounds : int
        NN-descent rounds run.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    n, k = X.shape[0], int(n_neighbors)
    seed = int(seed)
    pool = [set() for _ in range(n)]
    for t in range(int(n_trees)):
        for leaf in rp_leaves(X, seed, t, int(leaf_size)):
            for p in leaf:
                pool[p].update(q for q in leaf if q != p)
    lists = [_k_smallest(X, p, pool[p], k) for p in range(n)]
    fresh = [{q for _, q in lists[p]} for p in range(n)]
    rounds = 0
    for _ in range(int(max_iter)):
        rounds += 1
        new_fwd = [[q for _, q in lists[p] if q in fresh[p]] for p in range(n)]
        old_fwd = [[q for _, q in lists[p] if q not in fresh[p]] for p in range(n)]
        new_rev = [[] for _ in range(n)]
        old_rev = [[] for _ in range(n)]
        for u in range(n):  # reverse lists, capped at k, filled in increasing u
            for v in new_fwd[u]:
                if len(new_rev[v]) < k:
                    new_rev[v].append(u)
            for v in old_fwd[u]:
                if len(old_rev[v]) < k:
                    old_rev[v].append(u)
        pushed = [set() for _ in range(n)]
        for v in range(n):
            new = set(new_fwd[v]) | set(new_rev[v])
            old = (set(old_fwd[v]) | set(old_rev[v])) - new
            for a in new:
                for b in new | old:
                    if a != b:
                        pushed[a].add(b)
                        pushed[b].add(a)
        changed = 0
        for p in range(n):
            current = {q for _, q in lists[p]}
            merged = _k_smallest(X, p, current | (pushed[p] - {p}), k)
            fresh[p] = {q for _, q in merged} - current
            changed += len(fresh[p])
            lists[p] = merged
        if changed <= delta * n * k:
            break
    dist = np.full((n, k), np.inf)
    idx = np.full((n, k), -1, dtype=np.int64)
    for p in range(n):
        for s, (d2, q) in enumerate(lists[p]):
            dist[p, s] = np.sqrt(d2)
            idx[p, s] = q
    return dist, idx, rounds
