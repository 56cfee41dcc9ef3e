"""numba twins of the sufficient-dimension-reduction kernels (see ``_reference.py`` for the maths).

Per-anchor loops with (d+1)^2 Cholesky solves in place. Reductions over anchors (K2, K4) are summed in fixed
16-anchor blocks, then over blocks in block order, so results do not depend on the thread count; ``prange`` over
blocks is used only when the work exceeds ``PARALLEL_WORK`` (a 64-anchor SGD step runs serially).
"""

import numpy as np
from numba import boolean, float64, int64, njit, prange, types

_F2 = types.Array(float64, 2, "C", readonly=True)
_I2 = types.Array(int64, 2, "C", readonly=True)
_F1 = types.Array(float64, 1, "C", readonly=True)
_W2 = float64[:, ::1]
_W1 = float64[::1]
_B1 = boolean[::1]

BLOCK = 16
PARALLEL_WORK = 2e6
TRACE_FLOOR = 1e-24
PIVOT_RTOL = 1e-12


@njit(cache=True, nogil=True)
def _weights_row(P, C, nbr, j, kernel, bandwidth, w):
    k = nbr.shape[1]
    d = P.shape[1]
    r2 = 0.0
    for i in range(k):
        s = 0.0
        for a in range(d):
            u = P[nbr[j, i], a] - C[j, a]
            s += u * u
        w[j, i] = s
        if s > r2:
            r2 = s
    radius_ok = True
    if bandwidth > 0:
        for i in range(k):
            w[j, i] = np.exp(-w[j, i] / (2.0 * bandwidth * bandwidth))
    elif r2 > 0:
        for i in range(k):
            t2 = w[j, i] / r2
            if kernel == 0:
                w[j, i] = np.exp(-2.0 * t2)
            elif kernel == 1:
                w[j, i] = max(1.0 - t2, 0.0)
            else:
                w[j, i] = 1.0
    else:
        radius_ok = False
        for i in range(k):
            w[j, i] = 1.0
    tot = 0.0
    for i in range(k):
        tot += w[j, i]
    if tot <= 0:
        radius_ok = False
        for i in range(k):
            w[j, i] = 1.0
        tot = float(k)
    for i in range(k):
        w[j, i] = w[j, i] / tot
    return radius_ok


@njit(cache=True, nogil=True)
def _wls_row(P, y, C, nbr, j, w, ridge, radius_ok, e, theta, S, r, L, z):
    """Fit anchor j with weights w[j]; writes e[j], theta[j]; returns (rss, ok)."""
    k = nbr.shape[1]
    d = P.shape[1]
    q = d + 1
    for a in range(q):
        r[a] = 0.0
        for b in range(q):
            S[a, b] = 0.0
    for i in range(k):
        wi = w[j, i]
        yi = y[nbr[j, i]]
        z[0] = 1.0
        for a in range(d):
            z[a + 1] = P[nbr[j, i], a] - C[j, a]
        for a in range(q):
            wa = wi * z[a]
            r[a] += wa * yi
            for b in range(a + 1):
                S[a, b] += wa * z[b]
    trace = 0.0
    for a in range(1, q):
        trace += S[a, a]
    lam = ridge * trace / max(d, 1)
    for a in range(1, q):
        S[a, a] += lam
    maxdiag = 0.0
    for a in range(q):
        if S[a, a] > maxdiag:
            maxdiag = S[a, a]
    ok = radius_ok and trace > TRACE_FLOOR
    # Cholesky S = L L^T (lower triangle of S holds the data), column by column as the reference.
    for i in range(q):
        s = S[i, i]
        for t in range(i):
            s -= L[i, t] * L[i, t]
        if not (s > PIVOT_RTOL * maxdiag):
            ok = False
        lii = np.sqrt(max(s, 1e-300))
        L[i, i] = lii
        for jj in range(i + 1, q):
            v = S[jj, i]
            for t in range(i):
                v -= L[jj, t] * L[i, t]
            L[jj, i] = v / lii
    if ok:
        for i in range(q):
            v = r[i]
            for t in range(i):
                v -= L[i, t] * z[t]
            z[i] = v / L[i, i]
        for i in range(q - 1, -1, -1):
            v = z[i]
            for t in range(i + 1, q):
                v -= L[t, i] * theta[j, t]
            theta[j, i] = v / L[i, i]
    else:
        a0 = 0.0
        for i in range(k):
            a0 += w[j, i] * y[nbr[j, i]]
        theta[j, 0] = a0
        for a in range(1, q):
            theta[j, a] = 0.0
    rss = 0.0
    for i in range(k):
        fit = theta[j, 0]
        for a in range(d):
            fit += theta[j, a + 1] * (P[nbr[j, i], a] - C[j, a])
        ei = y[nbr[j, i]] - fit
        e[j, i] = ei
        rss += w[j, i] * ei * ei
    return rss, ok


@njit(types.Tuple((_W2, _W2, _W2, _W1, _B1))(_F2, _F1, _F2, _I2, int64, float64, float64),
      cache=True, nogil=True)
def _local_wls_serial(P, y, C, nbr, kernel, bandwidth, ridge):
    m, k = nbr.shape
    q = P.shape[1] + 1
    w = np.empty((m, k))
    e = np.empty((m, k))
    theta = np.zeros((m, q))
    rss = np.empty(m)
    ok = np.empty(m, dtype=np.bool_)
    S = np.empty((q, q))
    L = np.zeros((q, q))
    r = np.empty(q)
    z = np.empty(q)
    for j in range(m):
        rok = _weights_row(P, C, nbr, j, kernel, bandwidth, w)
        rss[j], ok[j] = _wls_row(P, y, C, nbr, j, w, ridge, rok, e, theta, S, r, L, z)
    return w, e, theta, rss, ok


@njit(cache=True, nogil=True, parallel=True)  # compiled lazily: only large dense localisations use it
def _local_wls_parallel(P, y, C, nbr, kernel, bandwidth, ridge):
    m, k = nbr.shape
    q = P.shape[1] + 1
    w = np.empty((m, k))
    e = np.empty((m, k))
    theta = np.zeros((m, q))
    rss = np.empty(m)
    ok = np.empty(m, dtype=np.bool_)
    nb = (m + BLOCK - 1) // BLOCK
    for blk in prange(nb):
        S = np.empty((q, q))
        L = np.zeros((q, q))
        r = np.empty(q)
        z = np.empty(q)
        for j in range(blk * BLOCK, min(m, (blk + 1) * BLOCK)):
            rok = _weights_row(P, C, nbr, j, kernel, bandwidth, w)
            rss[j], ok[j] = _wls_row(P, y, C, nbr, j, w, ridge, rok, e, theta, S, r, L, z)
    return w, e, theta, rss, ok


@njit(types.Tuple((_W2, _W2, _W1, _B1))(_F2, _F1, _F2, _I2, _F2, float64), cache=True, nogil=True)
def _local_wls_weighted_serial(P, y, C, nbr, w, ridge):
    m, k = nbr.shape
    q = P.shape[1] + 1
    e = np.empty((m, k))
    theta = np.zeros((m, q))
    rss = np.empty(m)
    ok = np.empty(m, dtype=np.bool_)
    S = np.empty((q, q))
    L = np.zeros((q, q))
    r = np.empty(q)
    z = np.empty(q)
    for j in range(m):
        rss[j], ok[j] = _wls_row(P, y, C, nbr, j, w, ridge, True, e, theta, S, r, L, z)
    return e, theta, rss, ok


def _use_parallel(work):
    """prange only for large work and more than one numba thread (results are identical either way)."""
    if work <= PARALLEL_WORK:
        return False
    import numba

    return numba.get_num_threads() > 1


def _contiguous(*arrays):
    return tuple(np.ascontiguousarray(a) for a in arrays)


def sdr_local_wls(P, y, C, nbr, kernel, bandwidth, ridge):
    P, y, C, nbr = _contiguous(P, y, C, nbr)
    m, k = nbr.shape
    q = P.shape[1] + 1
    fn = _local_wls_parallel if _use_parallel(m * k * q * q) else _local_wls_serial
    return fn(P, y, C, nbr, int(kernel), float(bandwidth), float(ridge))


def local_wls_weighted(P, y, C, nbr, w, ridge):
    P, y, C, nbr, w = _contiguous(P, y, C, nbr, w)
    return _local_wls_weighted_serial(P, y, C, nbr, w, float(ridge))


@njit(cache=True, nogil=True)
def _grad_block(X, Xc, nbr, w, e, theta, blk, out, v):
    m, k = nbr.shape
    p = X.shape[1]
    d = theta.shape[1] - 1
    for j in range(blk * BLOCK, min(m, (blk + 1) * BLOCK)):
        for c in range(p):
            v[c] = 0.0
        swe = 0.0
        for i in range(k):
            we = w[j, i] * e[j, i]
            swe += we
            row = nbr[j, i]
            for c in range(p):
                v[c] += we * X[row, c]
        for c in range(p):
            vc = v[c] - swe * Xc[j, c]
            for a in range(d):
                out[blk, c, a] += vc * theta[j, a + 1]


@njit(cache=True, nogil=True)
def _grad_sum(partial, m):
    nb, p, d = partial.shape
    G = np.zeros((p, d))
    for blk in range(nb):
        for c in range(p):
            for a in range(d):
                G[c, a] += partial[blk, c, a]
    if m > 0:
        scale = 2.0 / m
        for c in range(p):
            for a in range(d):
                G[c, a] *= scale
    return G


@njit(float64[:, ::1](_F2, _F2, _I2, _F2, _F2, _F2), cache=True, nogil=True)
def _grad_serial(X, Xc, nbr, w, e, theta):
    m = nbr.shape[0]
    p = X.shape[1]
    nb = (m + BLOCK - 1) // BLOCK
    partial = np.zeros((nb, p, theta.shape[1] - 1))
    v = np.empty(p)
    for blk in range(nb):
        _grad_block(X, Xc, nbr, w, e, theta, blk, partial, v)
    return _grad_sum(partial, m)


@njit(cache=True, nogil=True, parallel=True)  # lazily compiled; same blocks and block-order sum as the serial one
def _grad_parallel(X, Xc, nbr, w, e, theta):
    m = nbr.shape[0]
    p = X.shape[1]
    nb = (m + BLOCK - 1) // BLOCK
    partial = np.zeros((nb, p, theta.shape[1] - 1))
    for blk in prange(nb):
        v = np.empty(p)
        _grad_block(X, Xc, nbr, w, e, theta, blk, partial, v)
    return _grad_sum(partial, m)


def sdr_grad(X, Xc, nbr, w, e, theta):
    X, Xc, nbr, w, e, theta = _contiguous(X, Xc, nbr, w, e, theta)
    m, k = nbr.shape
    fn = _grad_parallel if _use_parallel(m * k * X.shape[1]) else _grad_serial
    return fn(X, Xc, nbr, w, e, theta)


@njit(cache=True, nogil=True)
def _rmave_block(X, y, Xc, nbr, w, theta, blk, A, c, Cj, sj, u):
    m, k = nbr.shape
    p = X.shape[1]
    d = theta.shape[1] - 1
    for j in range(blk * BLOCK, min(m, (blk + 1) * BLOCK)):
        for r in range(p):
            sj[r] = 0.0
            for s in range(p):
                Cj[r, s] = 0.0
        a_j = theta[j, 0]
        for i in range(k):
            row = nbr[j, i]
            wi = w[j, i]
            if wi == 0.0:
                continue
            for r in range(p):
                u[r] = X[row, r] - Xc[j, r]
            res = wi * (y[row] - a_j)
            for r in range(p):
                wr = wi * u[r]
                sj[r] += res * u[r]
                for s in range(r + 1):
                    Cj[r, s] += wr * u[s]
        for r in range(p):
            for s in range(r):
                Cj[s, r] = Cj[r, s]
        for a in range(d):
            ba = theta[j, a + 1]
            for r in range(p):
                c[blk, a * p + r] += ba * sj[r]
            for b in range(d):
                bab = ba * theta[j, b + 1]
                for r in range(p):
                    for s in range(p):
                        A[blk, a * p + r, b * p + s] += bab * Cj[r, s]


@njit(cache=True, nogil=True)
def _rmave_sum(Ap, cp):
    nb, pd, _ = Ap.shape
    A = np.zeros((pd, pd))
    c = np.zeros(pd)
    for blk in range(nb):
        for r in range(pd):
            c[r] += cp[blk, r]
            for s in range(pd):
                A[r, s] += Ap[blk, r, s]
    return A, c


@njit(types.Tuple((_W2, _W1))(_F2, _F1, _F2, _I2, _F2, _F2), cache=True, nogil=True)
def _rmave_serial(X, y, Xc, nbr, w, theta):
    m = nbr.shape[0]
    p = X.shape[1]
    pd = p * (theta.shape[1] - 1)
    nb = (m + BLOCK - 1) // BLOCK
    Ap = np.zeros((nb, pd, pd))
    cp = np.zeros((nb, pd))
    Cj = np.empty((p, p))
    sj = np.empty(p)
    u = np.empty(p)
    for blk in range(nb):
        _rmave_block(X, y, Xc, nbr, w, theta, blk, Ap, cp, Cj, sj, u)
    return _rmave_sum(Ap, cp)


@njit(cache=True, nogil=True, parallel=True)  # lazily compiled; same blocks and block-order sum as the serial one
def _rmave_parallel(X, y, Xc, nbr, w, theta):
    m = nbr.shape[0]
    p = X.shape[1]
    pd = p * (theta.shape[1] - 1)
    nb = (m + BLOCK - 1) // BLOCK
    Ap = np.zeros((nb, pd, pd))
    cp = np.zeros((nb, pd))
    for blk in prange(nb):
        Cj = np.empty((p, p))
        sj = np.empty(p)
        u = np.empty(p)
        _rmave_block(X, y, Xc, nbr, w, theta, blk, Ap, cp, Cj, sj, u)
    return _rmave_sum(Ap, cp)


def sdr_rmave_normal_eqs(X, y, Xc, nbr, w, theta):
    X, y, Xc, nbr, w, theta = _contiguous(X, y, Xc, nbr, w, theta)
    m, k = nbr.shape
    p = X.shape[1]
    fn = _rmave_parallel if _use_parallel(m * k * p) else _rmave_serial
    return fn(X, y, Xc, nbr, w, theta)


@njit(float64[::1](_F2, _F1, _I2, _I2, float64), cache=True, nogil=True)
def _nw_cv_mae(Zp, y, train, test, h):
    R, n_tr = train.shape
    n_te = test.shape[1]
    d = Zp.shape[1]
    out = np.empty(R)
    d2 = np.empty(n_tr)
    for s in range(R):
        err = 0.0
        for t in range(n_te):
            pt = test[s, t]
            min1 = np.inf
            min2 = np.inf
            for i in range(n_tr):
                pi = train[s, i]
                v = 0.0
                for a in range(d):
                    u = Zp[pt, a] - Zp[pi, a]
                    v += u * u
                d2[i] = v
                if v < min1:
                    min2 = min1
                    min1 = v
                elif v < min2:
                    min2 = v
            second = min2 if n_tr >= 2 else min1
            H = max(max(2.0 * h * h, second), 1e-300)
            num = 0.0
            den = 0.0
            for i in range(n_tr):
                kv = 1.0 - d2[i] / H
                if kv > 0:
                    num += kv * y[train[s, i]]
                    den += kv
            err += abs(y[pt] - num / (den + 1e-6))
        out[s] = err / n_te
    return out


def sdr_nw_cv_mae(Zp, y, train, test, h):
    Zp, y, train, test = _contiguous(Zp, y, train, test)
    return _nw_cv_mae(Zp, y, train, test, float(h))
