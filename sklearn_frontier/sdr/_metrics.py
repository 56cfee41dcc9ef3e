"""Distances between subspaces (as orthoDr's ``distance()``)."""

import numpy as np

from sklearn_frontier.utils._compat import StrOptions, validate_params
from sklearn_frontier.utils._manifolds import projection_distance

__all__ = ["subspace_distance"]


@validate_params({"A": ["array-like"], "B": ["array-like"], "metric": [StrOptions({"frobenius", "spectral", "trace"})]},
                 prefer_skip_nested_validation=True)
def subspace_distance(A, B, metric="frobenius"):
    """Distance between the column spans of two (p, d) bases (orthonormalised first).

    Parameters
    ----------
    A, B : array-like of shape (n_features, d)
        Bases (need not be orthonormal), e.g. ``estimator.directions_.T`` and a planted ``B0``.
    metric : {"frobenius", "spectral", "trace"}, default="frobenius"
        ``||P_A - P_B||_F``, ``||P_A - P_B||_2``, or the similarity ``tr(P_A P_B) / d`` (1 for equal spans).

    Returns
    -------
    distance : float
        The distance (or similarity for "trace").

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.sdr import subspace_distance
    >>> round(subspace_distance(np.eye(3)[:, :1], np.array([[1.0], [1.0], [0.0]])), 4)
    1.0
    """
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    if A.ndim == 1:
        A = A[:, None]
    if B.ndim == 1:
        B = B[:, None]
    if A.ndim != 2 or A.shape != B.shape:
        raise ValueError(f"A and B must be (p, d) bases of one shape, got {A.shape} and {B.shape}.")
    return projection_distance(A, B, metric=metric)
