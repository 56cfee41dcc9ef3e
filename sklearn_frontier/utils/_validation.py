"""Shared input checks that scikit-learn's ``validate_data`` does not make.

Degenerate geometry (too few distinct locations) and extreme coordinate scales are checked here once, for
every estimator that builds a graph or a field over the rows of ``X``.
"""

import numpy as np

__all__ = ["check_distinct_rows", "coordinate_scale"]


def check_distinct_rows(X, min_distinct, *, estimator_name, requirement="distinct training locations"):
    """Raise a ``ValueError`` when ``X`` has fewer than ``min_distinct`` distinct rows.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Validated, finite input.
    min_distinct : int
        Smallest number of distinct rows the estimator can work with.
    estimator_name : str
        Name used in the message.
    requirement : str, default="distinct training locations"
        What the rows are, in the message.

    Returns
    -------
    n_distinct : int
        Number of distinct rows.
    """
    n_distinct = int(np.unique(X, axis=0).shape[0]) if X.shape[0] else 0
    if n_distinct < min_distinct:
        where = "all at one point" if n_distinct == 1 and X.shape[0] > 1 else f"{n_distinct} distinct"
        raise ValueError(f"{estimator_name} needs at least {min_distinct} {requirement} (rows of X); got "
                         f"{X.shape[0]} rows, {where}.")
    return n_distinct


def coordinate_scale(X):
    """A power of two close to the spread of ``X``: dividing by it standardises the coordinates exactly.

    Graph lengths, length scales (stored as float32) and distances squared underflow or overflow for
    coordinates of magnitude 1e-150 or 1e150; divided by this scale the spread is about 1. A power of two
    keeps the division exact, so results on ``c * X`` equal those on ``X`` for any power of two ``c``
    (and to rounding for other ``c``) and data already of spread about 1 is left bit-for-bit unchanged.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Validated, finite coordinates.

    Returns
    -------
    scale : float
        A positive power of two (1.0 when all rows coincide).
    """
    if X.size == 0:
        return 1.0
    with np.errstate(over="ignore", invalid="ignore"):
        span = float(np.max(np.max(X, axis=0) - np.min(X, axis=0)))
    if not np.isfinite(span):
        span = float(np.max(np.abs(X)))
    if not span > 0:
        return 1.0
    _, exponent = np.frexp(span)
    return float(np.ldexp(1.0, int(exponent) - 1))
