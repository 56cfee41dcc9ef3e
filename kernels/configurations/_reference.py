"""numpy / pure-Python references of the MixConfig kernels (the oracles).

``louvain`` is written as plain Python loops on purpose: the numba twin in
``_numba.py`` is the same algorithm statement by statement, so for the same seed
both return identical labels (same random node order, same floating-point operations in the same
order).
"""

import numpy as np

_BLOCK = 64
_MINSTD_A = 48271
_MINSTD_M = 2147483647


def knn_bruteforce(Z, Q, k, exclude_self):
    """Exact Euclidean k nearest rows of ``Z`` for every row of ``Q`` (ties: smaller index first).

    Parameters
    ----------
    Z : ndarray of shape (n, p), float64
    Q : ndarray of shape (m, p), float64
    k : int
        ``1 <= k <= n`` (``n - 1`` when ``exclude_self``).
    exclude_self : bool
        Row ``i`` of ``Q`` is row ``i`` of ``Z``: never return ``i`` as its own neighbour.

    Returns
    -------
    idx : ndarray of shape (m, k), int64
    dist : ndarray of shape (m, k), float64
    """
    m, n = Q.shape[0], Z.shape[0]
    idx = np.empty((m, k), dtype=np.int64)
    dist = np.empty((m, k), dtype=np.float64)
    for start in range(0, m, _BLOCK):
        stop = min(start + _BLOCK, m)
        diff = Q[start:stop, None, :] - Z[None, :, :]
        d2 = np.zeros((stop - start, n))
        for f in range(Z.shape[1]):  # fixed summation order over features (matches the twin)
            d2 += diff[:, :, f] * diff[:, :, f]
        if exclude_self:
            rows = np.arange(start, stop)
            inside = rows < n
            d2[np.flatnonzero(inside), rows[inside]] = np.inf
        order = np.argsort(d2, axis=1, kind="stable")[:, :k]
        idx[start:stop] = order
        dist[start:stop] = np.sqrt(np.take_along_axis(d2, order, axis=1))
    return idx, dist


def self_tuning_csr(idx, w, n):
    """Symmetric-max CSR of a kNN weight list: ``W = max(W, W.T)``, no self loops, no zero weights.

    Parameters
    ----------
    idx : ndarray of shape (r, k), int64
        Neighbours of rows ``0..r-1`` (``r <= n``).
    w : ndarray of shape (r, k), float64
        Their weights (e.g. from ``local_scaling_weights``).
    n : int
        Number of vertices.

    Returns
    -------
    indptr : ndarray of shape (n + 1,), int64
    indices : ndarray of shape (nnz,), int64
        Sorted within each row.
    data : ndarray of shape (nnz,), float64
    """
    r, k = idx.shape
    rows = np.repeat(np.arange(r, dtype=np.int64), k)
    cols = idx.ravel()
    vals = w.ravel()
    rr = np.concatenate([rows, cols])
    cc = np.concatenate([cols, rows])
    vv = np.concatenate([vals, vals])
    keep = (rr != cc) & (vv > 0)
    rr, cc, vv = rr[keep], cc[keep], vv[keep]
    keys = rr * n + cc
    order = np.argsort(keys, kind="stable")
    keys, vv = keys[order], vv[order]
    if keys.size:
        first = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
        data = np.maximum.reduceat(vv, first)
        ukeys = keys[first]
    else:
        data = np.zeros(0)
        ukeys = np.zeros(0, dtype=np.int64)
    urows = ukeys // n
    indices = (ukeys % n).astype(np.int64)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(urows, minlength=n), out=indptr[1:])
    return indptr, indices, data.astype(np.float64)


def partition_energy(indptr, indices, data, strength, labels, K):
    """Attraction and repulsion of a partition: ``Q(gamma) = a - gamma * b`` (generalised modularity).

    ``a = (1/2m) sum_ij W_ij [c_i = c_j]``, ``b = sum_c (S_c / 2m)**2`` with ``S_c`` the strength of
    community ``c`` and ``2m = sum_i strength_i``.

    Returns
    -------
    a, b : float
    """
    n = strength.shape[0]
    m2 = strength.sum()
    rows = np.repeat(np.arange(n), np.diff(indptr))
    same = labels[rows] == labels[indices]
    a = data[same].sum() / m2
    S = np.bincount(labels, weights=strength, minlength=K)
    b = ((S / m2) ** 2).sum()
    return float(a), float(b)


def knn_vote(nbr, labels, K, weights):
    """Soft assignment by neighbour votes.

    ``S[i, c] = sum_j weights[i, j] [labels[nbr[i, j]] = c] / sum_j weights[i, j]``.

    Returns
    -------
    S : ndarray of shape (m, K), float64
    """
    m, k = nbr.shape
    S = np.zeros((m, K))
    np.add.at(S, (np.repeat(np.arange(m), k), labels[nbr].ravel()), weights.ravel())
    return S / weights.sum(axis=1, keepdims=True)


def cluster_entropy(labels, K):
    """Shannon entropy (nats) of the cluster sizes, ``-sum_c pi_c ln pi_c``."""
    counts = np.bincount(labels, minlength=K).astype(np.float64)
    pi = counts[counts > 0] / labels.shape[0]
    return float(-(pi * np.log(pi)).sum())


# ----------------------------------------------------------------------------------------------
# Louvain local moving + aggregation for generalised modularity (pure Python, the oracle)
# ----------------------------------------------------------------------------------------------

def _one_level(indptr, indices, data, strength, gamma, m2, order, init, K0):
    """Local moving on one level from ``init`` (ids 0..K0-1); returns the community of every node."""
    nn = len(strength)
    comm = list(init)
    tot = [0.0] * nn
    size = [0] * nn
    for i in range(nn):
        tot[comm[i]] += strength[i]
        size[comm[i]] += 1
    acc = [0.0] * nn
    pos = [-1] * nn
    nb = [0] * nn
    empty = [0] * nn
    n_empty = 0
    for c in range(nn - 1, K0 - 1, -1):
        empty[n_empty] = c
        n_empty += 1
    for _ in range(100):
        n_moves = 0
        for t in range(nn):
            i = order[t]
            ci = comm[i]
            ki = strength[i]
            n_nb = 0
            for e in range(indptr[i], indptr[i + 1]):
                j = indices[e]
                if j == i:
                    continue
                c = comm[j]
                if pos[c] < 0:
                    pos[c] = n_nb
                    nb[n_nb] = c
                    n_nb += 1
                acc[c] += data[e]
            tot[ci] -= ki
            size[ci] -= 1
            if size[ci] == 0:
                tot[ci] = 0.0
            tol = 1e-10 * ki
            k_own = acc[ci] if pos[ci] >= 0 else 0.0
            best_c = ci
            best_gain = k_own - gamma * ki * tot[ci] / m2
            for q in range(n_nb):
                c = nb[q]
                if c == ci:
                    continue
                gain = acc[c] - gamma * ki * tot[c] / m2
                if gain > best_gain + tol:
                    best_gain = gain
                    best_c = c
            if size[ci] > 0 and 0.0 > best_gain + tol and n_empty > 0:
                n_empty -= 1
                best_c = empty[n_empty]
            comm[i] = best_c
            tot[best_c] += ki
            size[best_c] += 1
            if best_c != ci:
                n_moves += 1
                if size[ci] == 0:
                    tot[ci] = 0.0
                    empty[n_empty] = ci
                    n_empty += 1
            for q in range(n_nb):
                c = nb[q]
                acc[c] = 0.0
                pos[c] = -1
        if n_moves == 0:
            break
    return comm


def _renumber(comm):
    nn = len(comm)
    new = [-1] * nn
    out = [0] * nn
    K = 0
    for i in range(nn):
        c = comm[i]
        if new[c] < 0:
            new[c] = K
            K += 1
        out[i] = new[c]
    return out, K


def _aggregate(indptr, indices, data, strength, comm, K):
    nn = len(strength)
    # members of each community, ascending node index (counting sort)
    start = [0] * (K + 1)
    for i in range(nn):
        start[comm[i] + 1] += 1
    for c in range(K):
        start[c + 1] += start[c]
    fill = list(start[:K])
    members = [0] * nn
    for i in range(nn):
        members[fill[comm[i]]] = i
        fill[comm[i]] += 1
    acc = [0.0] * K
    pos = [-1] * K
    touched = [0] * K
    new_indptr = [0] * (K + 1)
    new_indices = []
    new_data = []
    new_strength = [0.0] * K
    for C in range(K):
        n_t = 0
        s = 0.0
        for t in range(start[C], start[C + 1]):
            i = members[t]
            s += strength[i]
            for e in range(indptr[i], indptr[i + 1]):
                c = comm[indices[e]]
                if pos[c] < 0:
                    pos[c] = n_t
                    touched[n_t] = c
                    n_t += 1
                acc[c] += data[e]
        new_strength[C] = s
        cols = sorted(touched[:n_t])
        for c in cols:
            new_indices.append(c)
            new_data.append(acc[c])
            acc[c] = 0.0
            pos[c] = -1
        new_indptr[C + 1] = new_indptr[C] + n_t
    return new_indptr, new_indices, new_data, new_strength


def louvain(indptr, indices, data, strength, gamma, seed, max_levels, n_iterations):
    """Louvain partition maximising ``Q(gamma) = a - gamma * b`` (generalised modularity).

    Local moving of nodes in a seeded random order (MINSTD Lehmer generator, Fisher–Yates shuffle,
    one order per level) to the neighbouring community of largest gain — or to an empty
    community when every gain is negative — until no node moves, then aggregation of communities
    into nodes, for at most ``max_levels`` levels. Up to ``n_iterations`` such passes are chained,
    each starting from the previous partition (as leidenalg's ``n_iterations``), until the
    partition no longer changes.

    Parameters
    ----------
    indptr, indices, data : ndarray
        Symmetric CSR adjacency (int64, int64, float64), no self loops needed.
    strength : ndarray of shape (n,), float64
        Vertex strengths ``s_i = sum_j W_ij`` (the null model's degrees).
    gamma : float
        Resolution.
    seed : int
        Seed of the node orders.
    max_levels : int
        Maximum number of aggregation levels.
    n_iterations : int
        Maximum number of chained passes.

    Returns
    -------
    labels : ndarray of shape (n,), int64
        Ids 0..K-1 by first occurrence.
    """
    n = int(strength.shape[0])
    m2 = 0.0
    for i in range(n):
        m2 += float(strength[i])
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if not m2 > 0.0:
        return np.zeros(n, dtype=np.int64)
    state = int(seed) % (_MINSTD_M - 1) + 1
    gamma = float(gamma)
    b_indptr = [int(v) for v in indptr]
    b_indices = [int(v) for v in indices]
    b_data = [float(v) for v in data]
    b_str = [float(v) for v in strength]
    glob = list(range(n))
    K_glob = n
    for it in range(n_iterations):
        g_indptr, g_indices, g_data, g_str = b_indptr, b_indices, b_data, b_str
        prev = list(glob)
        init = list(glob) if it > 0 else list(range(n))
        K0 = K_glob if it > 0 else n
        for _level in range(max_levels):
            nn = len(g_str)
            order = list(range(nn))
            for i in range(nn - 1, 0, -1):
                state = (state * _MINSTD_A) % _MINSTD_M
                j = state % (i + 1)
                order[i], order[j] = order[j], order[i]
            comm = _one_level(g_indptr, g_indices, g_data, g_str, gamma, m2, order, init, K0)
            comm, K = _renumber(comm)
            if _level == 0:
                glob = list(comm)
            else:
                for v in range(n):
                    glob[v] = comm[glob[v]]
            if K == nn or K == 1:
                break
            g_indptr, g_indices, g_data, g_str = _aggregate(g_indptr, g_indices, g_data, g_str, comm, K)
            init = list(range(K))
            K0 = K
        glob, K_glob = _renumber(glob)
        if glob == prev:
            break
    return np.asarray(glob, dtype=np.int64)
