"""numba twins of the topology kernels (thread-count independent: fixed 256-vertex blocks, in-order sums).

T5 ``selinv_diag``: up-looking sparse Cholesky (elimination tree, row subtrees) and the Takahashi recurrence for
the diagonal of the inverse on the factor's pattern (sequential, exact up to rounding)."""

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


_ROWS = 1024  # fixed row blocks of the PCG sweeps: partial dot products are summed block by block, in order


@njit(cache=True, nogil=True, parallel=True)
def _spmm_dot(indptr, indices, data, P, shift, Q, part):
    """Q = (C + shift I) P over the active columns, and the per-block partial sums of P∘Q."""
    N, na = P.shape
    nb = part.shape[0]
    for b in prange(nb):
        for c in range(na):
            part[b, c] = 0.0
        for i in range(b * _ROWS, min(N, (b + 1) * _ROWS)):
            for c in range(na):
                Q[i, c] = shift * P[i, c]
            for p in range(indptr[i], indptr[i + 1]):
                a = data[p]
                k = indices[p]
                for c in range(na):
                    Q[i, c] += a * P[k, c]
            for c in range(na):
                part[b, c] += P[i, c] * Q[i, c]


@njit(cache=True, nogil=True, parallel=True)
def _update(inv_diag, alpha, P, Q, Zw, R, part_r, part_t):
    """Z += αP, R −= αQ, with per-block partial sums of R∘R and R∘(D⁻¹R) (one fused sweep)."""
    N, na = P.shape
    nb = part_r.shape[0]
    for b in prange(nb):
        for c in range(na):
            part_r[b, c] = 0.0
            part_t[b, c] = 0.0
        for i in range(b * _ROWS, min(N, (b + 1) * _ROWS)):
            di = inv_diag[i]
            for c in range(na):
                Zw[i, c] += alpha[c] * P[i, c]
                rr = R[i, c] - alpha[c] * Q[i, c]
                R[i, c] = rr
                part_r[b, c] += rr * rr
                part_t[b, c] += rr * rr * di


@njit(cache=True, nogil=True, parallel=True)
def _direction(inv_diag, beta, R, P):
    N, na = P.shape
    nb = (N + _ROWS - 1) // _ROWS
    for b in prange(nb):
        for i in range(b * _ROWS, min(N, (b + 1) * _ROWS)):
            di = inv_diag[i]
            for c in range(na):
                P[i, c] = di * R[i, c] + beta[c] * P[i, c]


@njit(cache=True, nogil=True)
def _block_sum(part, out):
    nb, na = part.shape
    for c in range(na):
        out[c] = 0.0
    for b in range(nb):
        for c in range(na):
            out[c] += part[b, c]


@njit(types.Tuple((float64[:, ::1], int64[::1], boolean[::1]))(_I1, _I1, _F1, _F1, float64, _F2, float64, int64),
      cache=True, nogil=True)
def pcg_jacobi_batched(indptr, indices, data, inv_diag, shift, rhs, rtol, maxiter):
    # The active (not yet converged) columns live in contiguous (N, n_active) work arrays, compacted whenever a
    # column converges; each iteration is three fused row-block sweeps with no allocation.
    N, r = rhs.shape
    nb = max(1, (N + _ROWS - 1) // _ROWS)
    Z = np.zeros((N, r))
    iters = np.zeros(r, dtype=np.int64)
    converged = np.zeros(r, dtype=np.bool_)
    target = np.zeros(r)
    norm2 = np.zeros(r)
    for i in range(N):
        for j in range(r):
            norm2[j] += rhs[i, j] * rhs[i, j]
    na = 0
    for j in range(r):
        target[j] = rtol * np.sqrt(norm2[j])
        converged[j] = np.sqrt(norm2[j]) <= target[j]
        if not converged[j]:
            na += 1
    act = np.empty(na, dtype=np.int64)
    c = 0
    for j in range(r):
        if not converged[j]:
            act[c] = j
            c += 1
    R = np.empty((N, na))
    P = np.empty((N, na))
    rz = np.zeros(na)
    for i in range(N):
        di = inv_diag[i]
        for c in range(na):
            v = rhs[i, act[c]]
            R[i, c] = v
            P[i, c] = di * v
            rz[c] += v * di * v
    Zw = np.zeros((N, na))
    Q = np.empty((N, na))
    part = np.empty((nb, r))
    part_t = np.empty((nb, r))
    pq = np.empty(r)
    res = np.empty(r)
    t = np.empty(r)
    alpha = np.empty(r)
    beta = np.empty(r)
    for _ in range(maxiter):
        if na == 0:
            break
        _spmm_dot(indptr, indices, data, P, shift, Q, part[:, :na])
        _block_sum(part[:, :na], pq[:na])
        for c in range(na):
            alpha[c] = rz[c] / pq[c]
        _update(inv_diag, alpha[:na], P, Q, Zw, R, part[:, :na], part_t[:, :na])
        _block_sum(part[:, :na], res[:na])
        _block_sum(part_t[:, :na], t[:na])
        n_done = 0
        for c in range(na):
            j = act[c]
            iters[j] += 1
            beta[c] = t[c] / rz[c]
            rz[c] = t[c]
            if np.sqrt(res[c]) <= target[j]:
                converged[j] = True
                n_done += 1
        if n_done:
            keep = np.empty(na - n_done, dtype=np.int64)
            k = 0
            for c in range(na):
                j = act[c]
                if converged[j]:
                    for i in range(N):
                        Z[i, j] = Zw[i, c]
                else:
                    keep[k] = c
                    k += 1
            if k == 0:
                na = 0
                break
            R2 = np.empty((N, k))
            P2 = np.empty((N, k))
            Z2 = np.empty((N, k))
            for i in range(N):
                for c in range(k):
                    R2[i, c] = R[i, keep[c]]
                    P2[i, c] = P[i, keep[c]]
                    Z2[i, c] = Zw[i, keep[c]]
            rz2 = np.empty(k)
            beta2 = np.empty(r)
            act2 = np.empty(k, dtype=np.int64)
            for c in range(k):
                rz2[c] = rz[keep[c]]
                beta2[c] = beta[keep[c]]
                act2[c] = act[keep[c]]
            R, P, Zw, rz, beta, act, na = R2, P2, Z2, rz2, beta2, act2, k
            Q = np.empty((N, na))
        _direction(inv_diag, beta[:na], R, P)
    for c in range(na):
        j = act[c]
        for i in range(N):
            Z[i, j] = Zw[i, c]
    return Z, iters, converged


# ------------------------------------------------------------------ T5 selected inversion
@njit(cache=True, nogil=True)
def _sparse_cholesky(n, Ap, Ai, Ax):
    """Up-looking Cholesky A = L Lᵀ of an SPD matrix given by its full symmetric CSC (sorted) pattern.
    Returns Lp, Li, Lx (CSC, each column's diagonal first, rows ascending) or Lp[0] = -1 if not PD."""
    parent = np.full(n, -1, np.int64)
    ancestor = np.full(n, -1, np.int64)
    for k in range(n):
        for p in range(Ap[k], Ap[k + 1]):
            i = Ai[p]
            while i != -1 and i < k:
                inext = ancestor[i]
                ancestor[i] = k
                if inext == -1:
                    parent[i] = k
                i = inext
    # symbolic counts by row subtrees
    flag = np.full(n, -1, np.int64)
    cnt = np.ones(n, np.int64)
    for k in range(n):
        flag[k] = k
        for p in range(Ap[k], Ap[k + 1]):
            i = Ai[p]
            while i < k and flag[i] != k:
                cnt[i] += 1
                flag[i] = k
                i = parent[i]
    Lp = np.zeros(n + 1, np.int64)
    for j in range(n):
        Lp[j + 1] = Lp[j] + cnt[j]
    Li = np.empty(Lp[n], np.int64)
    Lx = np.empty(Lp[n], np.float64)
    c = Lp[:n].copy()
    x = np.zeros(n)
    s = np.empty(n, np.int64)
    flag[:] = -1
    for k in range(n):
        # ereach: pattern of row k of L, in topological order s[top:n]
        top = n
        flag[k] = k
        for p in range(Ap[k], Ap[k + 1]):
            i = Ai[p]
            if i > k:
                continue
            x[i] += Ax[p]
            length = 0
            while flag[i] != k:
                s[length] = i
                length += 1
                flag[i] = k
                i = parent[i]
            while length > 0:
                top -= 1
                length -= 1
                s[top] = s[length]
        d = x[k]
        x[k] = 0.0
        for t in range(top, n):
            i = s[t]
            lki = x[i] / Lx[Lp[i]]
            x[i] = 0.0
            for p in range(Lp[i] + 1, c[i]):
                x[Li[p]] -= Lx[p] * lki
            d -= lki * lki
            p = c[i]
            c[i] += 1
            Li[p] = k
            Lx[p] = lki
        if d <= 0.0:
            Lp[0] = -1
            return Lp, Li, Lx
        p = c[k]
        c[k] += 1
        Li[p] = k
        Lx[p] = np.sqrt(d)
    return Lp, Li, Lx


@njit(cache=True, nogil=True)
def _takahashi_diag(n, Lp, Li, Lx):
    """diag(A⁻¹) from A = L Lᵀ: the Takahashi recurrence on L's pattern (closed under elimination), computing the
    entries of Z = A⁻¹ on that pattern from the last column to the first."""
    Z = np.empty(Lp[n], np.float64)
    pos = np.full(n, -1, np.int64)
    acc = np.zeros(n, np.float64)
    for j in range(n - 1, -1, -1):
        p0, p1 = Lp[j], Lp[j + 1]
        ljj = Lx[p0]
        for b in range(p0 + 1, p1):
            pos[Li[b]] = b - p0 - 1
            acc[b - p0 - 1] = 0.0
        for b in range(p0 + 1, p1):
            k = Li[b]
            lk = Lx[b] / ljj
            ik = b - p0 - 1
            acc[ik] += lk * Z[Lp[k]]
            for q in range(Lp[k] + 1, Lp[k + 1]):
                ir = pos[Li[q]]
                if ir >= 0:  # r = Li[q] > k, both in the pattern of column j: Z_rk = Z[q]
                    acc[ir] += lk * Z[q]
                    acc[ik] += Lx[p0 + 1 + ir] / ljj * Z[q]
        diag = 1.0 / (ljj * ljj)
        for b in range(p0 + 1, p1):
            Z[b] = -acc[b - p0 - 1]
            diag -= Lx[b] / ljj * Z[b]
            pos[Li[b]] = -1
        Z[p0] = diag
    out = np.empty(n)
    for j in range(n):
        out[j] = Z[Lp[j]]
    return out


@njit(float64[::1](_I1, _I1, _F1), cache=True, nogil=True)
def selinv_diag(indptr, indices, data):
    n = indptr.shape[0] - 1
    Lp, Li, Lx = _sparse_cholesky(n, indptr, indices, data)
    if n and Lp[0] < 0:
        return np.full(n, np.nan)
    return _takahashi_diag(n, Lp, Li, Lx)
