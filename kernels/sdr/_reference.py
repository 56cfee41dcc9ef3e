"""numpy references (the oracles) of the sufficient-dimension-reduction kernels (SMAVE, OPG, RMAVE).

Vectorised over anchors; the numba twins in ``_numba.py`` follow the same arithmetic anchor by anchor.
Kernel codes: 0 = gaussian, 1 = epanechnikov, 2 = uniform.
"""

import numpy as np

TRACE_FLOOR = 1e-24
PIVOT_RTOL = 1e-12


def local_weights(P, C, nbr, kernel, bandwidth):
    """Normalised local weights of the neighbours ``nbr`` of the centres ``C`` in the projected space ``P``.

    Adaptive radius ``r_j = max_i delta_ij`` when ``bandwidth <= 0`` (``r_j = 0`` gives uniform weights), else a
    fixed Gaussian ``exp(-delta**2 / (2 h**2))``. Returns ``(w (m, k), radius_ok (m,))``.
    """
    m, k = nbr.shape
    U = P[nbr] - C[:, None, :]
    delta2 = np.einsum("mkd,mkd->mk", U, U)
    ok = np.ones(m, dtype=bool)
    if bandwidth > 0:
        w = np.exp(-delta2 / (2.0 * bandwidth * bandwidth))
    else:
        r2 = delta2.max(axis=1) if k else np.zeros(m)
        ok = r2 > 0
        t2 = np.where(ok[:, None], delta2 / np.where(ok, r2, 1.0)[:, None], 0.0)
        if kernel == 0:
            w = np.exp(-2.0 * t2)
        elif kernel == 1:
            w = np.maximum(1.0 - t2, 0.0)
        else:
            w = np.ones((m, k))
        w[~ok] = 1.0
    s = w.sum(axis=1)
    zero = s <= 0
    w[zero] = 1.0
    s[zero] = k
    ok &= ~zero
    return w / s[:, None], ok


def _batched_cholesky_solve(S, r):
    """Cholesky of each (q, q) ``S`` column by column (as the twin does); returns ``(theta, min pivot ratio)``."""
    m, q, _ = S.shape
    L = np.zeros_like(S)
    piv = np.empty((m, q))
    for i in range(q):
        s = S[:, i, i] - np.einsum("mj,mj->m", L[:, i, :i], L[:, i, :i])
        piv[:, i] = s
        lii = np.sqrt(np.maximum(s, 1e-300))
        L[:, i, i] = lii
        for j in range(i + 1, q):
            L[:, j, i] = (S[:, j, i] - np.einsum("mt,mt->m", L[:, j, :i], L[:, i, :i])) / lii
    z = np.empty((m, q))
    for i in range(q):
        z[:, i] = (r[:, i] - np.einsum("mt,mt->m", L[:, i, :i], z[:, :i])) / L[:, i, i]
    theta = np.empty((m, q))
    for i in range(q - 1, -1, -1):
        theta[:, i] = (z[:, i] - np.einsum("mt,mt->m", L[:, i + 1:, i], theta[:, i + 1:])) / L[:, i, i]
    return theta, piv


def local_wls_weighted(P, y, C, nbr, w, ridge):
    """Local weighted linear fits with given weights ``w`` (m, k); see :func:`sdr_local_wls`."""
    m, k = nbr.shape
    d = P.shape[1]
    q = d + 1
    U = P[nbr] - C[:, None, :]
    D = np.concatenate([np.ones((m, k, 1)), U], axis=2)
    yn = y[nbr]
    S = np.einsum("mki,mk,mkj->mij", D, w, D)
    r = np.einsum("mki,mk->mi", D, w * yn)
    trace = np.einsum("mii->m", S[:, 1:, 1:]) if d else np.zeros(m)
    lam = ridge * trace / max(d, 1)
    idx = np.arange(1, q)
    S[:, idx, idx] += lam[:, None]
    theta, piv = _batched_cholesky_solve(S, r)
    maxdiag = np.max(np.einsum("mii->mi", S), axis=1)
    ok = (trace > TRACE_FLOOR) & np.all(piv > PIVOT_RTOL * maxdiag[:, None], axis=1)
    fallback = np.zeros((m, q))
    fallback[:, 0] = np.einsum("mk,mk->m", w, yn)
    theta = np.where(ok[:, None], theta, fallback)
    e = yn - np.einsum("mki,mi->mk", D, theta)
    rss = np.einsum("mk,mk->m", w, e * e)
    return e, theta, rss, ok


def sdr_local_wls(P, y, C, nbr, kernel, bandwidth, ridge):
    """K1: weights, residuals, local coefficients, weighted RSS and success flags of the local linear fits.

    For anchor ``j`` with centre ``C[j]`` and neighbours ``nbr[j]`` of the projected points ``P``, fit
    ``y_i ~ a_j + b_j . (P_i - C_j)`` by weighted least squares (slope ridge ``ridge * tr(S_slope) / d``).
    Returns ``w (m, k), e (m, k), theta (m, d + 1), rss (m,), ok (m,)``.
    """
    w, radius_ok = local_weights(P, C, nbr, kernel, bandwidth)
    e, theta, rss, ok = local_wls_weighted(P, y, C, nbr, w, ridge)
    ok &= radius_ok
    failed = ~ok
    if failed.any():
        yn = y[nbr[failed]]
        theta[failed] = 0.0
        theta[failed, 0] = np.einsum("mk,mk->m", w[failed], yn)
        e[failed] = yn - theta[failed, :1]
        rss[failed] = np.einsum("mk,mk->m", w[failed], e[failed] ** 2)
    return w, e, theta, rss, ok


def sdr_grad(X, Xc, nbr, w, e, theta):
    """K2: ``G = (2/m) sum_j [sum_i w_ij e_ij (X[nbr_ij] - Xc_j)] theta_j[1:]^T`` of shape (p, d)."""
    m = nbr.shape[0]
    if m == 0:
        return np.zeros((X.shape[1], theta.shape[1] - 1))
    we = w * e
    v = np.einsum("mk,mkp->mp", we, X[nbr]) - we.sum(axis=1)[:, None] * Xc
    return (2.0 / m) * (v.T @ theta[:, 1:])


def sdr_rmave_normal_eqs(X, y, Xc, nbr, w, theta):
    """K4: RMAVE's global normal equations ``A vec(B) = c`` (vec column-major: ``B[r, a] <-> a p + r``).

    ``C_j = sum_i w_ij z_ij z_ij^T``, ``s_j = sum_i w_ij z_ij (y_i - a_j)``, ``A = sum_j (b_j b_j^T) kron C_j``,
    ``c = sum_j b_j kron s_j``; returns ``A (p d, p d), c (p d,)``.
    """
    m, k = nbr.shape
    p = X.shape[1]
    d = theta.shape[1] - 1
    U = X[nbr] - Xc[:, None, :]
    Cj = np.matmul(U.transpose(0, 2, 1) * w[:, None, :], U)
    sj = np.einsum("mkp,mk->mp", U, w * (y[nbr] - theta[:, :1]))
    b = theta[:, 1:]
    A = np.einsum("ma,mb,mrs->arbs", b, b, Cj).reshape(p * d, p * d)
    c = np.einsum("ma,mr->ar", b, sj).reshape(p * d)
    return A, c


def sdr_nw_cv_mae(Zp, y, train, test, h):
    """K5: R MAVE's ``CVfast`` smoother error for each split (rows of ``train``/``test``); returns (R,).

    Test point ``t``: ``H_t = max(2 h**2, delta2_(2),t)`` (its 2nd-smallest squared distance to the training
    points), ``K_it = (1 - delta2_it / H_t)_+``, ``yhat_t = sum K_it y_i / (sum K_it + 1e-6)``; the error is
    ``mean_t |y_t - yhat_t|``.
    """
    R = train.shape[0]
    out = np.empty(R)
    for s in range(R):
        Ztr, Zte = Zp[train[s]], Zp[test[s]]
        diff = Zte[:, None, :] - Ztr[None, :, :]
        d2 = np.einsum("tid,tid->ti", diff, diff)
        if d2.shape[1] >= 2:
            second = np.partition(d2, 1, axis=1)[:, 1]
        else:
            second = d2[:, 0]
        H = np.maximum(np.maximum(2.0 * h * h, second), 1e-300)
        K = np.maximum(1.0 - d2 / H[:, None], 0.0)
        yhat = (K @ y[train[s]]) / (K.sum(axis=1) + 1e-6)
        out[s] = np.mean(np.abs(y[test[s]] - yhat))
    return out
