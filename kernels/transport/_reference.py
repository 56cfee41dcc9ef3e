"""numpy references of the transport kernels (the oracles of the numba twins in ``_numba.py``).

POT does every optimal-transport solve; these kernels are the numerics around it: the squared Euclidean cost,
the barycentric projection of a plan onto a tangent vector, McCann's displacement interpolation and the cell means
of a 1-D quantile function (the exact 1-D LOT embedding).
"""

import numpy as np


def sqeuclidean_cost(X, Y):
    """Squared Euclidean cost matrix ``C[i, j] = ||X[i] - Y[j]||^2`` (shape (m, n)).

    Summed coordinate by coordinate from the differences (no ``|x|^2 + |y|^2 - 2 x.y`` cancellation), so
    coincident points cost exactly 0.

    Parameters
    ----------
    X : ndarray of shape (m, d)
        First point set.
    Y : ndarray of shape (n, d)
        Second point set.

    Returns
    -------
    C : ndarray of shape (m, n)
        Squared distances.

    Examples
    --------
    >>> sqeuclidean_cost(np.array([[0.0, 0.0]]), np.array([[3.0, 4.0], [0.0, 0.0]]))
    array([[25.,  0.]])
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    C = np.zeros((X.shape[0], Y.shape[0]))
    for k in range(X.shape[1]):
        diff = X[:, k, None] - Y[None, :, k]
        C += diff * diff
    return C


def barycentric_projection(P, Y, a, X):
    """Tangent vector of a transport plan: ``((T(x_i) - x_i) * sqrt(a_i))_i`` flattened to shape (m * d,).

    ``T(x_i) = sum_j P[i, j] Y[j] / sum_j P[i, j]`` is the barycentric map of plan ``P`` (m, n) from reference atoms
    ``X`` (m, d) with weights ``a`` (m,) to target points ``Y`` (n, d). Rows without mass map to themselves (a zero
    displacement).

    Parameters
    ----------
    P : ndarray of shape (m, n)
        Transport plan.
    Y : ndarray of shape (n, d)
        Target points.
    a : ndarray of shape (m,)
        Reference weights.
    X : ndarray of shape (m, d)
        Reference atoms.

    Returns
    -------
    V : ndarray of shape (m * d,)
        The tangent vector, row-major over atoms.

    Examples
    --------
    >>> P = np.array([[0.5, 0.0], [0.0, 0.5]])
    >>> barycentric_projection(P, np.array([[1.0], [3.0]]), np.array([0.25, 0.25]), np.array([[0.0], [1.0]]))
    array([0.5, 1. ])
    """
    P = np.asarray(P, dtype=np.float64)
    X = np.asarray(X, dtype=np.float64)
    mass = P.sum(axis=1)
    T = P @ np.asarray(Y, dtype=np.float64)
    has_mass = mass > 0
    T[has_mass] /= mass[has_mass, None]
    T[~has_mass] = X[~has_mass]
    return ((T - X) * np.sqrt(np.asarray(a, dtype=np.float64))[:, None]).ravel()


def mccann_interpolate(X, T, lam):
    """Displacement (McCann) interpolation ``(1 - lam_l) X + lam_l T`` for a batch of ``lam``.

    Parameters
    ----------
    X : ndarray of shape (m, d)
        Start points.
    T : ndarray of shape (m, d)
        Their images under the transport map.
    lam : ndarray of shape (L,)
        Interpolation times in [0, 1].

    Returns
    -------
    clouds : ndarray of shape (L, m, d)
        One interpolated cloud per ``lam``.

    Examples
    --------
    >>> mccann_interpolate(np.zeros((1, 1)), np.ones((1, 1)), np.array([0.25]))
    array([[[0.25]]])
    """
    X = np.asarray(X, dtype=np.float64)
    T = np.asarray(T, dtype=np.float64)
    lam = np.asarray(lam, dtype=np.float64)
    return X[None] + lam[:, None, None] * (T - X)[None]


def quantile_cell_means(x_sorted, b_sorted, edges):
    """Mean of the quantile function of ``sum_k b_k delta_{x_k}`` over each cell ``[edges[j], edges[j + 1]]``.

    ``x_sorted`` ascending with positive weights ``b_sorted`` summing to 1; ``edges`` ascending from 0 to 1
    (m + 1 values). The result (m,) is the barycentric image of the sorted reference atoms under the 1-D optimal
    plan, so the 1-D LOT embedding built on it is exact on quantile functions constant on the cells.

    Parameters
    ----------
    x_sorted : ndarray of shape (n,)
        Support points, ascending.
    b_sorted : ndarray of shape (n,)
        Their positive weights, summing to 1.
    edges : ndarray of shape (m + 1,)
        Cell edges, ascending from 0 to 1.

    Returns
    -------
    means : ndarray of shape (m,)
        Mean of the quantile function on each cell.

    Examples
    --------
    >>> quantile_cell_means(np.array([0.0, 1.0]), np.array([0.5, 0.5]), np.array([0.0, 0.25, 0.75, 1.0]))
    array([0. , 0.5, 1. ])
    """
    x = np.asarray(x_sorted, dtype=np.float64)
    b = np.asarray(b_sorted, dtype=np.float64)
    edges = np.asarray(edges, dtype=np.float64)
    knots = np.concatenate([[0.0], np.cumsum(b)])
    integral = np.concatenate([[0.0], np.cumsum(b * x)])  # G(q) = int_0^q F^-1, piecewise linear in q
    knots[-1] = max(knots[-1], edges[-1])
    G = np.interp(edges, knots, integral)
    return np.diff(G) / np.diff(edges)
