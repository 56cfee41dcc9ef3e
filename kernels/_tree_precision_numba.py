"""numba twins of the tree-precision kernels (see ``_tree_precision_reference``)."""

import math

import numpy as np
from numba import float64, int64, njit, types

_F1 = types.Array(float64, 1, "C", readonly=True)
_I1 = types.Array(int64, 1, "C", readonly=True)


@njit(types.Tuple((float64[::1], float64[::1], float64, float64))(_I1, _I1, _F1, _F1, _F1, _F1, float64),
      cache=True, nogil=True)
def tree_eliminate(order, parent, rho, prec, obs_weight, obs_sum, sigma2):
    n = order.shape[0]
    e = np.empty(n)
    h = np.empty(n)
    for i in range(n):
        e[i] = obs_weight[i] / sigma2
        h[i] = obs_sum[i] / sigma2
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


@njit(float64[::1](_I1, _I1, _F1, _F1, _F1, _F1, _F1), cache=True, nogil=True)
def tree_back_substitute(order, parent, rho, prec, d, h_tilde, noise):
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


@njit(types.Tuple((float64[::1], float64, float64))(_I1, _I1, _F1, _F1, _F1, _F1, float64, _F1),
      cache=True, nogil=True)
def tree_precision_solve(order, parent, rho, prec, obs_weight, obs_sum, sigma2, noise):
    d, h, ldr, quad = tree_eliminate(order, parent, rho, prec, obs_weight, obs_sum, sigma2)
    return tree_back_substitute(order, parent, rho, prec, d, h, noise), ldr, quad


@njit(float64(_I1, _I1, _F1, _F1, _F1, _F1, float64, float64, float64), cache=True, nogil=True)
def tree_collapsed_loglik(order, parent, rho, prec, obs_weight, obs_sum, sigma2, sum_sq, n_obs):
    d, h, ldr, quad = tree_eliminate(order, parent, rho, prec, obs_weight, obs_sum, sigma2)
    return -0.5 * ldr + 0.5 * quad - sum_sq / (2.0 * sigma2) - 0.5 * n_obs * math.log(2.0 * math.pi * sigma2)


@njit(types.Tuple((float64[::1], float64[::1]))(_F1, float64, float64, int64), cache=True, nogil=True)
def routed_coefficients(parent_length, length_scale, s2, root):
    n = parent_length.shape[0]
    rho = np.empty(n)
    prec = np.empty(n)
    for i in range(n):
        x = parent_length[i] / length_scale
        rho[i] = math.exp(-x)
        den = s2 * -math.expm1(-2.0 * x)
        prec[i] = 1.0 / den if den > 0 else math.inf
    rho[root] = 0.0
    prec[root] = 1.0 / s2
    return rho, prec
