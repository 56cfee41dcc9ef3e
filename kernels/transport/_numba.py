"""numba twins of the transport kernels (see ``_reference.py`` for the maths).

Eager signatures on read-only C-contiguous float64 arrays (one compile serves writable and read-only inputs);
the dispatcher in ``__init__.py`` converts inputs first. The barycentric projection skips the zeros of a plan
(an exact plan has at most m + n - 1 nonzeros).
"""

import numpy as np
from numba import float64, njit, types

_F2 = types.Array(float64, 2, "C", readonly=True)
_F1 = types.Array(float64, 1, "C", readonly=True)


@njit(float64[:, ::1](_F2, _F2), cache=True, nogil=True)
def sqeuclidean_cost(X, Y):
    m, d = X.shape
    n = Y.shape[0]
    C = np.zeros((m, n))
    for k in range(d):  # same summation order as the reference
        for i in range(m):
            xi = X[i, k]
            for j in range(n):
                diff = xi - Y[j, k]
                C[i, j] += diff * diff
    return C


@njit(float64[::1](_F2, _F2, _F1, _F2), cache=True, nogil=True)
def barycentric_projection(P, Y, a, X):
    m, n = P.shape
    d = Y.shape[1]
    out = np.zeros(m * d)
    T = np.zeros(d)
    for i in range(m):
        mass = 0.0
        for k in range(d):
            T[k] = 0.0
        for j in range(n):
            p = P[i, j]
            if p != 0.0:
                mass += p
                for k in range(d):
                    T[k] += p * Y[j, k]
        scale = np.sqrt(a[i])
        for k in range(d):
            if mass > 0:
                out[i * d + k] = (T[k] / mass - X[i, k]) * scale
            else:
                out[i * d + k] = 0.0
    return out


@njit(float64[:, :, ::1](_F2, _F2, _F1), cache=True, nogil=True)
def mccann_interpolate(X, T, lam):
    m, d = X.shape
    L = lam.shape[0]
    out = np.empty((L, m, d))
    for s in range(L):
        for i in range(m):
            for k in range(d):
                out[s, i, k] = X[i, k] + lam[s] * (T[i, k] - X[i, k])
    return out


@njit(float64[::1](_F1, _F1, _F1), cache=True, nogil=True)
def quantile_cell_means(x_sorted, b_sorted, edges):
    n = x_sorted.shape[0]
    knots = np.zeros(n + 1)
    integral = np.zeros(n + 1)
    for k in range(n):
        knots[k + 1] = knots[k] + b_sorted[k]
        integral[k + 1] = integral[k] + b_sorted[k] * x_sorted[k]
    if edges[edges.shape[0] - 1] > knots[n]:
        knots[n] = edges[edges.shape[0] - 1]
    G = np.empty(edges.shape[0])
    seg = 0
    for e in range(edges.shape[0]):
        q = edges[e]
        while seg < n - 1 and knots[seg + 1] < q:
            seg += 1
        width = knots[seg + 1] - knots[seg]
        if q <= knots[0]:
            G[e] = integral[0]
        elif q >= knots[n]:
            G[e] = integral[n]
        elif width > 0:
            G[e] = integral[seg] + (q - knots[seg]) * (integral[seg + 1] - integral[seg]) / width
        else:
            G[e] = integral[seg]
    out = np.empty(edges.shape[0] - 1)
    for j in range(out.shape[0]):
        out[j] = (G[j + 1] - G[j]) / (edges[j + 1] - edges[j])
    return out
