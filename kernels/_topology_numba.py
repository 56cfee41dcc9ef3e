"""numba twins of the topology kernels (thread-count independent: fixed 256-vertex blocks, in-order sums)."""

import numpy as np
from numba import boolean, float64, int64, njit, prange, types

_I1 = types.Array(int64, 1, "C", readonly=True)
_I2 = types.Array(int64, 2, "C", readonly=True)
_F1 = types.Array(float64, 1, "C", readonly=True)
_F2 = types.Array(float64, 2, "C", readonly=True)

_BLOCK = 256


@njit(int64(_I1, _I1, int64, int64, int64, int64[:, ::1], int64, boolean), cache=True, nogil=True)
def _walk_range(indptr, indices, k, v_start, v_stop, out, offset, write):
    """Count (and, if ``write``, store from row ``offset``) the (k+1)-cliques whose smallest vertex is in range."""
    maxdeg = 0
    for v in range(v_start, v_stop):
        d = indptr[v + 1] - indptr[v]
        if d > maxdeg:
            maxdeg = d
    cand = np.empty((k + 1, maxdeg + 1), dtype=np.int64)
    ncand = np.zeros(k + 1, dtype=np.int64)
    pos = np.zeros(k + 1, dtype=np.int64)
    prefix = np.empty(k + 1, dtype=np.int64)
    count = 0
    for v0 in range(v_start, v_stop):
        prefix[0] = v0
        nc = indptr[v0 + 1] - indptr[v0]
        for t in range(nc):
            cand[1, t] = indices[indptr[v0] + t]
        ncand[1] = nc
        pos[1] = 0
        depth = 1
        while depth >= 1:
            if pos[depth] >= ncand[depth]:
                depth -= 1
                continue
            v = cand[depth, pos[depth]]
            pos[depth] += 1
            prefix[depth] = v
            if depth == k:
                if write:
                    for t in range(k + 1):
                        out[offset + count, t] = prefix[t]
                count += 1
                continue
            # candidates of the next depth: cand[depth] after position pos (all > v) intersected with N+(v)
            a = pos[depth]
            b = indptr[v]
            b_end = indptr[v + 1]
            m = 0
            while a < ncand[depth] and b < b_end:
                x = cand[depth, a]
                y = indices[b]
                if x == y:
                    cand[depth + 1, m] = x
                    m += 1
                    a += 1
                    b += 1
                elif x < y:
                    a += 1
                else:
                    b += 1
            if m >= k - depth:
                ncand[depth + 1] = m
                pos[depth + 1] = 0
                depth += 1
    return count


@njit(int64[::1](_I1, _I1, int64), cache=True, nogil=True, parallel=True)
def _block_counts(indptr, indices, k):
    n = indptr.shape[0] - 1
    n_blocks = (n + _BLOCK - 1) // _BLOCK
    counts = np.zeros(n_blocks, dtype=np.int64)
    dummy = np.empty((0, k + 1), dtype=np.int64)
    for b in prange(n_blocks):
        counts[b] = _walk_range(indptr, indices, k, b * _BLOCK, min(n, (b + 1) * _BLOCK), dummy, 0, False)
    return counts


@njit(int64(_I1, _I1, int64), cache=True, nogil=True)
def clique_count(indptr, indices, k):
    n = indptr.shape[0] - 1
    if k == 0:
        return n
    if k == 1:
        return indices.shape[0]
    return _block_counts(indptr, indices, k).sum()


@njit(int64[:, ::1](_I1, _I1, int64, int64), cache=True, nogil=True, parallel=True)
def clique_enumerate(indptr, indices, k, count):
    n = indptr.shape[0] - 1
    out = np.empty((count, k + 1), dtype=np.int64)
    if k == 0:
        for i in range(n):
            out[i, 0] = i
        return out
    if k == 1:
        for i in range(n):
            for p in range(indptr[i], indptr[i + 1]):
                out[p, 0] = i
                out[p, 1] = indices[p]
        return out
    counts = _block_counts(indptr, indices, k)
    if counts.sum() != count:
        raise ValueError("count does not match the number of cliques found.")
    n_blocks = counts.shape[0]
    offsets = np.zeros(n_blocks + 1, dtype=np.int64)
    for b in range(n_blocks):
        offsets[b + 1] = offsets[b] + counts[b]
    for b in prange(n_blocks):
        _walk_range(indptr, indices, k, b * _BLOCK, min(n, (b + 1) * _BLOCK), out, offsets[b], True)
    return out


@njit(int64(_I2, _I1, int64), cache=True, nogil=True)
def _lex_search(faces, key, k):
    lo = 0
    hi = faces.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        cmp = 0
        for t in range(k):
            if faces[mid, t] < key[t]:
                cmp = -1
                break
            if faces[mid, t] > key[t]:
                cmp = 1
                break
        if cmp == 0:
            return mid
        if cmp < 0:
            lo = mid + 1
        else:
            hi = mid
    return -1


@njit(int64[:, ::1](_I2, _I2), cache=True, nogil=True, parallel=True)
def face_index(cells, faces):
    m, kp1 = cells.shape
    k = kp1 - 1
    out = np.empty((m, kp1), dtype=np.int64)
    for r in prange(m):
        key = np.empty(max(k, 1), dtype=np.int64)
        for i in range(kp1):
            t = 0
            for j in range(kp1):
                if j != i:
                    key[t] = cells[r, j]
                    t += 1
            out[r, i] = _lex_search(faces, key, k) if faces.shape[0] > 0 else -1
    return out


@njit(nogil=True, parallel=True, cache=True)
def _spmm_parallel(indptr, indices, data, P, cols, shift, Q):
    N = indptr.shape[0] - 1
    nc = cols.shape[0]
    for i in prange(N):
        # row-major sweep (contiguous in the columns); per (i, c) the sum runs over p in the same order
        for c in range(nc):
            Q[i, c] = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            a = data[p]
            k = indices[p]
            for c in range(nc):
                Q[i, c] += a * P[k, cols[c]]
        for c in range(nc):
            Q[i, c] += shift * P[i, cols[c]]


@njit(nogil=True, cache=True)
def _spmm_serial(indptr, indices, data, P, cols, shift, Q):
    N = indptr.shape[0] - 1
    nc = cols.shape[0]
    for i in range(N):
        # row-major sweep (contiguous in the columns); per (i, c) the sum runs over p in the same order
        for c in range(nc):
            Q[i, c] = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            a = data[p]
            k = indices[p]
            for c in range(nc):
                Q[i, c] += a * P[k, cols[c]]
        for c in range(nc):
            Q[i, c] += shift * P[i, cols[c]]


@njit(types.Tuple((float64[:, ::1], int64[::1], boolean[::1]))(_I1, _I1, _F1, _F1, float64, _F2, float64, int64),
      cache=True, nogil=True)
def pcg_jacobi_batched(indptr, indices, data, inv_diag, shift, rhs, rtol, maxiter):
    N, r = rhs.shape
    Z = np.zeros((N, r))
    R = rhs.copy()
    Zp = np.empty((N, r))
    P = np.empty((N, r))
    rz = np.zeros(r)
    target = np.zeros(r)
    iters = np.zeros(r, dtype=np.int64)
    converged = np.zeros(r, dtype=np.bool_)
    for j in range(r):
        s = 0.0
        for i in range(N):
            s += R[i, j] * R[i, j]
        target[j] = rtol * np.sqrt(s)
        converged[j] = np.sqrt(s) <= target[j]
        t = 0.0
        for i in range(N):
            zp = inv_diag[i] * R[i, j]
            Zp[i, j] = zp
            P[i, j] = zp
            t += R[i, j] * zp
        rz[j] = t
    parallel = indices.shape[0] * r > 2_000_000
    Q = np.empty((N, r))
    for _ in range(maxiter):
        n_active = 0
        for j in range(r):
            if not converged[j]:
                n_active += 1
        if n_active == 0:
            break
        cols = np.empty(n_active, dtype=np.int64)
        c = 0
        for j in range(r):
            if not converged[j]:
                cols[c] = j
                c += 1
        if parallel:
            _spmm_parallel(indptr, indices, data, P, cols, shift, Q)
        else:
            _spmm_serial(indptr, indices, data, P, cols, shift, Q)
        # row-major sweeps (contiguous in the columns); each per-column sum still runs over i in order
        pq = np.zeros(n_active)
        for i in range(N):
            for c in range(n_active):
                pq[c] += P[i, cols[c]] * Q[i, c]
        alpha = np.empty(n_active)
        for c in range(n_active):
            alpha[c] = rz[cols[c]] / pq[c]
        res = np.zeros(n_active)
        for i in range(N):
            for c in range(n_active):
                j = cols[c]
                Z[i, j] += alpha[c] * P[i, j]
                R[i, j] -= alpha[c] * Q[i, c]
                res[c] += R[i, j] * R[i, j]
        t = np.zeros(n_active)
        for i in range(N):
            for c in range(n_active):
                j = cols[c]
                zp = inv_diag[i] * R[i, j]
                Zp[i, j] = zp
                t[c] += R[i, j] * zp
        beta = np.empty(n_active)
        for c in range(n_active):
            j = cols[c]
            iters[j] += 1
            if np.sqrt(res[c]) <= target[j]:
                converged[j] = True
            beta[c] = t[c] / rz[j]
            rz[j] = t[c]
        for i in range(N):
            for c in range(n_active):
                j = cols[c]
                P[i, j] = Zp[i, j] + beta[c] * P[i, j]
    return Z, iters, converged
