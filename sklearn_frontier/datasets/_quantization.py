"""Synthetic weights and activations with outlier channels (known-answer data for the quantizers)."""

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["make_outlier_weights", "make_outlier_activations"]


def _haar_orthonormal(rng, n, k):
    q, r = np.linalg.qr(rng.standard_normal((n, k)))
    return q * np.sign(np.diag(r))


def make_outlier_weights(m=256, n=512, *, rank=4, n_outliers=4, outlier_scale=10.0, singular_values=None,
                         random_state=None):
    """Draw a weight ``W = Z D + U_k diag(sigma) V_k^T`` with heavy tails, outlier channels and a low rank.

    ``Z_ij ~ t_4 / sqrt(2)`` (unit variance), ``D = diag(d)`` with ``d_j = outlier_scale`` on ``n_outliers``
    random input channels (1 elsewhere), ``U_k``, ``V_k`` random orthonormal and
    ``sigma = (20, 15, 10, 5) sqrt(m)`` (for ``rank=4``; otherwise linearly spaced from 20 to 5).

    Parameters
    ----------
    m, n : int, default=256, 512
        Number of output features and of input features.
    rank : int, default=4
        Rank of the planted low-rank component.
    n_outliers : int, default=4
        Number of outlier input channels.
    outlier_scale : float, default=10.0
        Scale of the outlier input channels.
    singular_values : array-like of shape (rank,), default=None
        Overrides sigma.
    random_state : int, RandomState instance or None, default=None
        Seed or generator for reproducible draws.

    Returns
    -------
    W : ndarray of shape (m, n)
        The weight matrix.
    info : dict
        ``outlier_channels``, ``U``, ``V``, ``sigma``.

    Examples
    --------
    >>> from sklearn_frontier.datasets import make_outlier_weights
    >>> W, info = make_outlier_weights(8, 16, rank=2, n_outliers=1, random_state=0)
    >>> W.shape, info["V"].shape
    ((8, 16), (16, 2))
    """
    rng = check_random_state(random_state)
    Z = rng.standard_t(4, size=(m, n)) / np.sqrt(2.0)
    d = np.ones(n)
    outliers = np.sort(rng.choice(n, size=min(n_outliers, n), replace=False))
    d[outliers] = outlier_scale
    k = min(rank, m, n)
    if singular_values is None:
        sigma = (np.array([20.0, 15.0, 10.0, 5.0]) if k == 4 else np.linspace(20.0, 5.0, k)) * np.sqrt(m)
    else:
        sigma = np.asarray(singular_values, dtype=float)
    U, V = _haar_orthonormal(rng, m, k), _haar_orthonormal(rng, n, k)
    W = Z * d[None, :] + (U * sigma) @ V.T
    return W, {"outlier_channels": outliers, "U": U, "V": V, "sigma": sigma}


def make_outlier_activations(n_samples=2048, n_features=512, *, n_outliers=2, outlier_scale=50.0,
                             random_state=None):
    """Draw activations ``X = G Lambda^(1/2) Q^T`` (``lambda_j = 1/j``, Q Haar) with a few outlier columns.

    Parameters
    ----------
    n_samples, n_features : int, default=2048, 512
        Number of tokens and of features.
    n_outliers : int, default=2
        Columns multiplied by ``outlier_scale``.
    outlier_scale : float, default=50.0
        Scale of the outlier columns.
    random_state : int, RandomState instance or None, default=None
        The same seed gives the same covariance; draw calibration and test tokens with
        ``make_outlier_activations(..., random_state=s)`` twice via the returned ``sample`` function.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        The activations.
    info : dict
        ``outlier_channels``, ``Q``, ``eigenvalues`` and ``sample(n, random_state)`` drawing fresh tokens
        from the same distribution.

    Examples
    --------
    >>> from sklearn_frontier.datasets import make_outlier_activations
    >>> X, info = make_outlier_activations(100, 16, random_state=0)
    >>> X.shape, info["sample"](5, 1).shape
    ((100, 16), (5, 16))
    """
    rng = check_random_state(random_state)
    lam = 1.0 / np.arange(1, n_features + 1)
    Q = _haar_orthonormal(rng, n_features, n_features)
    outliers = np.sort(rng.choice(n_features, size=min(n_outliers, n_features), replace=False))
    scale = np.ones(n_features)
    scale[outliers] = outlier_scale

    def sample(n, seed):
        g = check_random_state(seed).standard_normal((n, n_features))
        return (g * np.sqrt(lam)) @ Q.T * scale[None, :]

    X = sample(n_samples, rng)
    return X, {"outlier_channels": outliers, "Q": Q, "eigenvalues": lam, "sample": sample}
