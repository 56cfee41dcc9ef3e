"""numpy references for the tree-precision kernels (the oracles).

A Gaussian field on a rooted tree: ``g(root) ~ N(0, 1/prec[root])`` and
``g(v) | g(parent v) ~ N(rho[v] g(parent v), 1/prec[v])`` (``prec[v] = inf``: hard link). Its precision
``Q = (I - B)^T diag(prec) (I - B)`` has non-zeros only on the diagonal and on tree edges, so with
Gaussian observations the posterior precision ``P = Q + diag(obs_weight) / sigma2`` is eliminated leaves
first with zero fill-in.
"""

import math

import numpy as np


def tree_eliminate(order, parent, rho, prec, obs_weight, obs_sum, sigma2):
    """Leaves-first elimination of ``P = Q + diag(W)/sigma2`` with ``h = S/sigma2``.

    Returns ``(d, h_tilde, log_det_ratio, quad)``: the pivots, the eliminated right-hand side,
    ``log|P| - log|Q|`` and ``h^T P^{-1} h``. The excess ``e_v`` (observation precision carried up from
    the eliminated subtree) is accumulated instead of subtracting ``o^2/d``, which stays exact when
    ``prec`` is huge and makes ``prec = inf`` (a hard link) exact.
    """
    n = order.shape[0]
    e = np.array(obs_weight, dtype=np.float64) / sigma2
    h = np.array(obs_sum, dtype=np.float64) / sigma2
    d = np.empty(n)
    ldr = 0.0
    quad = 0.0
    for k in range(n - 1, -1, -1):
        v = order[k]
        lam = prec[v]
        if math.isinf(lam):
            d[v] = math.inf
            t = 1.0
        else:
            d[v] = lam + e[v]
            ldr += math.log1p(e[v] / lam)
            quad += h[v] * h[v] / d[v]
            t = lam / d[v]
        p = parent[v]
        if p >= 0:
            e[p] += rho[v] * rho[v] * t * e[v]
            h[p] += rho[v] * t * h[v]
    return d, h, ldr, quad


def tree_back_substitute(order, parent, rho, prec, d, h_tilde, noise):
    """Root-first pass: ``noise = 0`` gives ``P^{-1} h``, ``noise ~ N(0, I)`` an exact draw from N(P^-1 h, P^-1)."""
    n = order.shape[0]
    g = np.empty(n)
    for k in range(n):
        v = order[k]
        p = parent[v]
        lam = prec[v]
        if math.isinf(lam):
            g[v] = rho[v] * g[p]
            continue
        m = h_tilde[v]
        if p >= 0:
            m += rho[v] * lam * g[p]
        g[v] = m / d[v] + noise[v] / math.sqrt(d[v])
    return g


def tree_precision_solve(order, parent, rho, prec, obs_weight, obs_sum, sigma2, noise):
    """Posterior mean (``noise`` all zero) or exact draw, plus ``log|P| - log|Q|`` and ``h^T P^{-1} h``.

    Parameters
    ----------
    order : ndarray of shape (n,), int64
        BFS order from the root (``order[0]`` is the root).
    parent : ndarray of shape (n,), int64
        Parent of each vertex, -1 at the root.
    rho : ndarray of shape (n,), float64
        Routing coefficient of each vertex on its parent (ignored at the root).
    prec : ndarray of shape (n,), float64
        Conditional precision (``inf`` = hard link; finite at the root).
    obs_weight, obs_sum : ndarray of shape (n,), float64
        Per-vertex observation weight ``W_v`` and weighted sum ``S_v``.
    sigma2 : float
        Noise variance.
    noise : ndarray of shape (n,), float64
        Standard normal draws (zeros for the posterior mean).

    Returns
    -------
    values : ndarray of shape (n,)
    log_det_ratio : float
    quad : float
    """
    d, h, ldr, quad = tree_eliminate(order, parent, rho, prec, obs_weight, obs_sum, sigma2)
    return tree_back_substitute(order, parent, rho, prec, d, h, noise), ldr, quad


def tree_collapsed_loglik(order, parent, rho, prec, obs_weight, obs_sum, sigma2, sum_sq, n_obs):
    """Exact log marginal likelihood of the observations with the tree field integrated out.

    ``-0.5 ldr + 0.5 quad - sum_sq/(2 sigma2) - (n_obs/2) log(2 pi sigma2)``.
    """
    _, _, ldr, quad = tree_eliminate(order, parent, rho, prec, obs_weight, obs_sum, sigma2)
    return -0.5 * ldr + 0.5 * quad - sum_sq / (2.0 * sigma2) - 0.5 * n_obs * math.log(2.0 * math.pi * sigma2)


def routed_coefficients(parent_length, length_scale, s2, root):
    """``(rho, prec)`` of the routed field: ``rho = exp(-l/lam)``, ``prec = 1/(s2 (1 - rho^2))``; root N(0, s2)."""
    x = parent_length / length_scale
    rho = np.exp(-x)
    with np.errstate(divide="ignore"):
        prec = 1.0 / (s2 * -np.expm1(-2.0 * x))
    rho[root] = 0.0
    prec[root] = 1.0 / s2
    return rho, prec
