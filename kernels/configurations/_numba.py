"""numba twins of the MixConfig kernels (eager signatures on read-only C-contiguous arrays).

``louvain`` mirrors ``_reference.louvain`` statement by statement (same random
order, same floating-point operations in the same order), so both give identical labels.
"""

import numpy as np
from numba import boolean, float64, int64, njit, types

_F2 = types.Array(float64, 2, "C", readonly=True)
_I2 = types.Array(int64, 2, "C", readonly=True)
_F1 = types.Array(float64, 1, "C", readonly=True)
_I1 = types.Array(int64, 1, "C", readonly=True)

_MINSTD_A = 48271
_MINSTD_M = 2147483647


@njit(types.Tuple((int64[:, ::1], float64[:, ::1]))(_F2, _F2, int64, boolean), cache=True, nogil=True)
def knn_bruteforce(Z, Q, k, exclude_self):
    m, p = Q.shape
    n = Z.shape[0]
    idx = np.empty((m, k), dtype=np.int64)
    dist = np.empty((m, k), dtype=np.float64)
    best_d = np.empty(k)
    best_i = np.empty(k, dtype=np.int64)
    for i in range(m):
        count = 0
        for j in range(n):
            if exclude_self and j == i:
                continue
            s = 0.0
            for f in range(p):
                t = Q[i, f] - Z[j, f]
                s += t * t
            if count < k:
                pos = count
                count += 1
            elif s < best_d[k - 1]:
                pos = k - 1
            else:
                continue
            while pos > 0 and best_d[pos - 1] > s:
                best_d[pos] = best_d[pos - 1]
                best_i[pos] = best_i[pos - 1]
                pos -= 1
            best_d[pos] = s
            best_i[pos] = j
        for q in range(k):
            idx[i, q] = best_i[q]
            dist[i, q] = np.sqrt(best_d[q])
    return idx, dist


@njit(types.Tuple((int64[::1], int64[::1], float64[::1]))(_I2, _F2, int64), cache=True, nogil=True)
def self_tuning_csr(idx, w, n):
    r, k = idx.shape
    tot = 2 * r * k
    keys = np.empty(tot, dtype=np.int64)
    vals = np.empty(tot)
    cnt = 0
    for i in range(r):
        for q in range(k):
            j = idx[i, q]
            v = w[i, q]
            if j == i or not v > 0.0:
                continue
            keys[cnt] = i * n + j
            vals[cnt] = v
            cnt += 1
            keys[cnt] = j * n + i
            vals[cnt] = v
            cnt += 1
    keys = keys[:cnt]
    vals = vals[:cnt]
    order = np.argsort(keys, kind="mergesort")
    indptr = np.zeros(n + 1, dtype=np.int64)
    indices = np.empty(cnt, dtype=np.int64)
    data = np.empty(cnt)
    nnz = 0
    prev = -1
    for t in range(cnt):
        key = keys[order[t]]
        v = vals[order[t]]
        if key == prev:
            if v > data[nnz - 1]:
                data[nnz - 1] = v
            continue
        prev = key
        row = key // n
        indices[nnz] = key % n
        data[nnz] = v
        indptr[row + 1] += 1
        nnz += 1
    for i in range(n):
        indptr[i + 1] += indptr[i]
    return indptr, indices[:nnz].copy(), data[:nnz].copy()


@njit(types.UniTuple(float64, 2)(_I1, _I1, _F1, _F1, _I1, int64), cache=True, nogil=True)
def partition_energy(indptr, indices, data, strength, labels, K):
    n = strength.shape[0]
    m2 = 0.0
    for i in range(n):
        m2 += strength[i]
    a = 0.0
    S = np.zeros(K)
    for i in range(n):
        li = labels[i]
        S[li] += strength[i]
        for e in range(indptr[i], indptr[i + 1]):
            if labels[indices[e]] == li:
                a += data[e]
    b = 0.0
    for c in range(K):
        t = S[c] / m2
        b += t * t
    return a / m2, b


@njit(float64[:, ::1](_I2, _I1, int64, _F2), cache=True, nogil=True)
def knn_vote(nbr, labels, K, weights):
    m, k = nbr.shape
    S = np.zeros((m, K))
    for i in range(m):
        tot = 0.0
        for q in range(k):
            S[i, labels[nbr[i, q]]] += weights[i, q]
            tot += weights[i, q]
        for c in range(K):
            S[i, c] /= tot
    return S


@njit(float64(_I1, int64), cache=True, nogil=True)
def cluster_entropy(labels, K):
    n = labels.shape[0]
    counts = np.zeros(K)
    for i in range(n):
        counts[labels[i]] += 1.0
    h = 0.0
    for c in range(K):
        if counts[c] > 0:
            pi = counts[c] / n
            h -= pi * np.log(pi)
    return h


# ----------------------------------------------------------------------------------------------
# Louvain (twin of the pure-Python reference)
# ----------------------------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def _one_level(indptr, indices, data, strength, gamma, m2, order, init, K0):
    nn = strength.shape[0]
    comm = init.copy()
    tot = np.zeros(nn)
    size = np.zeros(nn, dtype=np.int64)
    for i in range(nn):
        tot[comm[i]] += strength[i]
        size[comm[i]] += 1
    acc = np.zeros(nn)
    pos = -np.ones(nn, dtype=np.int64)
    nb = np.zeros(nn, dtype=np.int64)
    empty = np.zeros(nn, dtype=np.int64)
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


@njit(cache=True, nogil=True)
def _renumber(comm):
    nn = comm.shape[0]
    new = -np.ones(nn, dtype=np.int64)
    out = np.zeros(nn, dtype=np.int64)
    K = 0
    for i in range(nn):
        c = comm[i]
        if new[c] < 0:
            new[c] = K
            K += 1
        out[i] = new[c]
    return out, K


@njit(cache=True, nogil=True)
def _aggregate(indptr, indices, data, strength, comm, K):
    nn = strength.shape[0]
    start = np.zeros(K + 1, dtype=np.int64)
    for i in range(nn):
        start[comm[i] + 1] += 1
    for c in range(K):
        start[c + 1] += start[c]
    fill = start[:K].copy()
    members = np.zeros(nn, dtype=np.int64)
    for i in range(nn):
        members[fill[comm[i]]] = i
        fill[comm[i]] += 1
    acc = np.zeros(K)
    pos = -np.ones(K, dtype=np.int64)
    touched = np.zeros(K, dtype=np.int64)
    new_indptr = np.zeros(K + 1, dtype=np.int64)
    new_indices = np.empty(indices.shape[0], dtype=np.int64)
    new_data = np.empty(indices.shape[0])
    new_strength = np.zeros(K)
    nnz = 0
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
        cols = np.sort(touched[:n_t])
        for q in range(n_t):
            c = cols[q]
            new_indices[nnz] = c
            new_data[nnz] = acc[c]
            nnz += 1
            acc[c] = 0.0
            pos[c] = -1
        new_indptr[C + 1] = new_indptr[C] + n_t
    return new_indptr, new_indices[:nnz].copy(), new_data[:nnz].copy(), new_strength


@njit(int64[::1](_I1, _I1, _F1, _F1, float64, int64, int64, int64), cache=True, nogil=True)
def louvain(indptr, indices, data, strength, gamma, seed, max_levels, n_iterations):
    n = strength.shape[0]
    m2 = 0.0
    for i in range(n):
        m2 += strength[i]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if not m2 > 0.0:
        return np.zeros(n, dtype=np.int64)
    state = seed % (_MINSTD_M - 1) + 1
    b_indptr = indptr.copy()
    b_indices = indices.copy()
    b_data = data.copy()
    b_str = strength.copy()
    glob = np.arange(n)
    K_glob = n
    for it in range(n_iterations):
        g_indptr, g_indices, g_data, g_str = b_indptr, b_indices, b_data, b_str
        prev = glob.copy()
        if it > 0:
            init = glob.copy()
            K0 = K_glob
        else:
            init = np.arange(n)
            K0 = n
        for _level in range(max_levels):
            nn = g_str.shape[0]
            order = np.arange(nn)
            for i in range(nn - 1, 0, -1):
                state = (state * _MINSTD_A) % _MINSTD_M
                j = state % (i + 1)
                tmp = order[i]
                order[i] = order[j]
                order[j] = tmp
            comm = _one_level(g_indptr, g_indices, g_data, g_str, gamma, m2, order, init, K0)
            comm, K = _renumber(comm)
            if _level == 0:
                glob = comm.copy()
            else:
                for v in range(n):
                    glob[v] = comm[glob[v]]
            if K == nn or K == 1:
                break
            g_indptr, g_indices, g_data, g_str = _aggregate(g_indptr, g_indices, g_data, g_str, comm, K)
            init = np.arange(K)
            K0 = K
        glob, K_glob = _renumber(glob)
        same = True
        for v in range(n):
            if glob[v] != prev[v]:
                same = False
                break
        if same:
            break
    return glob
