"""Regression data with a planted central mean subspace (models A, B and C of the SMAVE spec)."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from sklearn_frontier.utils._compat import Interval, StrOptions, validate_params

__all__ = ["make_sdr_regression"]

_MIN_FEATURES = {"A": 2, "B": 8, "C": 3}


@validate_params(
    {
        "model": [StrOptions({"A", "B", "C"})],
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "rho": [Interval(Real, -1, 1, closed="neither")],
        "noise": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_sdr_regression(model="A", n_samples=1000, n_features=10, *, rho=0.0, noise=0.2, random_state=None):
    """Regression data whose mean depends on ``x`` only through a planted subspace ``B0``.

    ``x ~ N(0, Sigma)`` with ``Sigma_ij = rho ** |i - j|``, ``y = m(B0^T x) + noise * eps``:

    * "A" (Li 1991, d = 2): ``B0 = [e1, e2]``, ``m = x1 / (0.5 + (x2 + 1.5) ** 2)``.
    * "B" (hard for SIR, d = 2, p >= 8): ``b1 = (1, 1, 1, 1, 0, ...) / 2``, ``b2 = (0, 0, 0, 0, 1, -1, 1, -1, 0, ...)
      / 2``, ``m = u1 ** 2 + 2 sin(pi u2 / 2)``.
    * "C" (single index, d = 1): ``b = (1, 1, 1, 0, ...) / sqrt(3)``, ``m = sin(2 u) + u ** 2 / 2``.

    Parameters
    ----------
    model : {"A", "B", "C"}, default="A"
        Which model.
    n_samples : int, default=1000
        Number of samples.
    n_features : int, default=10
        At least 2 (A), 8 (B) or 3 (C).
    rho : float, default=0.0
        AR(1) correlation of the features.
    noise : float, default=0.2
        Standard deviation of the additive Gaussian noise.
    random_state : int, RandomState instance or None, default=None
        X is drawn before the noise.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Input data.
    y : ndarray of shape (n_samples,)
        Target values.
    B0 : ndarray of shape (n_features, d)
        Orthonormal basis of the planted subspace.

    Examples
    --------
    >>> from sklearn_frontier.datasets import make_sdr_regression
    >>> X, y, B0 = make_sdr_regression("B", n_samples=50, n_features=10, random_state=0)
    >>> X.shape, y.shape, B0.shape
    ((50, 10), (50,), (10, 2))
    """
    p = n_features
    if p < _MIN_FEATURES[model]:
        raise ValueError(f"model {model!r} needs n_features >= {_MIN_FEATURES[model]}, got n_features={p}.")
    rng = check_random_state(random_state)
    idx = np.arange(p)
    cov = rho ** np.abs(idx[:, None] - idx[None, :]) if rho != 0 else np.eye(p)
    X = rng.standard_normal((n_samples, p)) @ np.linalg.cholesky(cov).T
    B0 = np.zeros((p, 2 if model in "AB" else 1))
    if model == "A":
        B0[0, 0] = B0[1, 1] = 1.0
    elif model == "B":
        B0[:4, 0] = 0.5
        B0[4:8, 1] = [0.5, -0.5, 0.5, -0.5]
    else:
        B0[:3, 0] = 1.0 / np.sqrt(3.0)
    U = X @ B0
    if model == "A":
        m = U[:, 0] / (0.5 + (U[:, 1] + 1.5) ** 2)
    elif model == "B":
        m = U[:, 0] ** 2 + 2.0 * np.sin(np.pi * U[:, 1] / 2.0)
    else:
        m = np.sin(2.0 * U[:, 0]) + 0.5 * U[:, 0] ** 2
    y = m + noise * rng.standard_normal(n_samples)
    return X, y, B0
