"""numba twin of the fixed-effect demeaning kernel (see ``_reference.demean`` for the algorithm).

Columns are independent, so they run in parallel (``prange``); each column's sweeps add the weighted sums of
its levels in row order, exactly as the reference's ``bincount`` does, so the twins agree to rounding.
"""

import numpy as np
from numba import njit, prange


@njit(cache=True, nogil=True)
def _demean_column(x, codes_t, w, inv, offsets, tol, maxiter, sums):
    n_fe, n = codes_t.shape
    scale = 0.0
    for i in range(n):
        a = abs(x[i])
        if a > scale:
            scale = a
    if n_fe == 0 or scale == 0.0:
        return 0, True
    sweeps = 0
    while sweeps < maxiter:
        delta = 0.0
        for f in range(n_fe):
            lo, hi = offsets[f], offsets[f + 1]
            for g in range(lo, hi):
                sums[g] = 0.0
            for i in range(n):
                sums[lo + codes_t[f, i]] += w[i] * x[i]
            for g in range(lo, hi):
                sums[g] *= inv[g]
                a = abs(sums[g])
                if a > delta:
                    delta = a
            for i in range(n):
                x[i] -= sums[lo + codes_t[f, i]]
        sweeps += 1
        if n_fe == 1 or delta <= tol * scale:
            return sweeps, True
    return sweeps, False


@njit(cache=True, nogil=True, parallel=True)
def _demean(A_t, codes_t, w, tol, maxiter):
    n_fe, n = codes_t.shape
    m = A_t.shape[0]
    offsets = np.zeros(n_fe + 1, dtype=np.int64)
    for f in range(n_fe):
        top = 0
        for i in range(n):
            if codes_t[f, i] > top:
                top = codes_t[f, i]
        offsets[f + 1] = offsets[f] + top + 1
    wsum = np.zeros(offsets[n_fe])
    for f in range(n_fe):
        for i in range(n):
            wsum[offsets[f] + codes_t[f, i]] += w[i]
    inv = np.zeros_like(wsum)
    for g in range(wsum.shape[0]):
        if wsum[g] > 0:
            inv[g] = 1.0 / wsum[g]
    sweeps = np.zeros(m, dtype=np.int64)
    ok = np.ones(m, dtype=np.bool_)
    for j in prange(m):
        sums = np.empty(offsets[n_fe])
        s, c = _demean_column(A_t[j], codes_t, w, inv, offsets, tol, maxiter, sums)
        sweeps[j] = s
        ok[j] = c
    return sweeps, ok


def demean(A, codes, w, tol, maxiter):
    """numba twin of :func:`sklearn_frontier.kernels.iv._reference.demean` (same arguments and returns)."""
    A_t = np.array(np.asarray(A, dtype=np.float64).T, order="C", copy=True)
    codes_t = np.ascontiguousarray(np.asarray(codes).T, dtype=np.int64)
    w = np.ascontiguousarray(w, dtype=np.float64)
    sweeps, ok = _demean(A_t, codes_t, w, float(tol), int(maxiter))
    most = int(sweeps.max()) if sweeps.size else 0
    return np.ascontiguousarray(A_t.T), most, bool(ok.all())
