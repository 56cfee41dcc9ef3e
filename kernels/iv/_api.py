"""Public wrappers and registrations of the iv kernels (the package re-exports them)."""

import numpy as np

from .._dispatch import register_kernel

__all__ = ["demean", "hsic_gaussian", "median_bandwidth"]


_hsic_gaussian = register_kernel(
    "hsic_gaussian",
    reference="sklearn_frontier.kernels.iv._reference:hsic_gaussian")


def _check_pair(a, b):
    import torch

    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
        raise TypeError("hsic_gaussian takes torch tensors (use kernels.iv._reference.hsic_gaussian_numpy for numpy).")
    if a.ndim != 2 or b.ndim != 2 or a.shape[0] != b.shape[0]:
        raise ValueError(f"a and b must be 2-D with the same number of rows, got {tuple(a.shape)} and "
                         f"{tuple(b.shape)}.")
    if a.shape[0] < 2:
        raise ValueError("hsic_gaussian needs at least 2 rows.")


def hsic_gaussian(a, b, bandwidth_a=None, bandwidth_b=None):
    """Compute the biased HSIC ``tr(K H L H) / (m - 1)²`` with Gaussian kernels (differentiable).

    Parameters
    ----------
    a : torch.Tensor of shape (m, d_a)
        First sample (rows paired with ``b``).
    b : torch.Tensor of shape (m, d_b)
        Second sample.
    bandwidth_a, bandwidth_b : float, default=None
        Kernel widths σ in ``exp(-d² / (2σ²))``; None uses the median pairwise distance (detached).

    Returns
    -------
    hsic : torch.Tensor
        Scalar, non-negative; near 0 for independent samples.

    Examples
    --------
    >>> import torch
    >>> from sklearn_frontier.kernels.iv import hsic_gaussian
    >>> a = torch.arange(6.0, dtype=torch.float64).reshape(3, 2)
    >>> bool(hsic_gaussian(a, a) > 0)
    True
    """
    _check_pair(a, b)
    return _hsic_gaussian(a, b, bandwidth_a, bandwidth_b)


def median_bandwidth(a):
    """Compute the median pairwise Euclidean distance of the rows of ``a`` (detached; 1.0 if it is 0).

    Parameters
    ----------
    a : torch.Tensor of shape (m, d)
        Sample.

    Returns
    -------
    bandwidth : torch.Tensor
        Scalar bandwidth for :func:`hsic_gaussian`.

    Examples
    --------
    >>> import torch
    >>> from sklearn_frontier.kernels.iv import median_bandwidth
    >>> float(median_bandwidth(torch.tensor([[0.0], [3.0]], dtype=torch.float64)))
    3.0
    """
    from ._reference import median_bandwidth as _median

    return _median(a)


hsic_gaussian.kernel_spec = _hsic_gaussian.kernel_spec


_demean = register_kernel(
    "demean",
    reference="sklearn_frontier.kernels.iv._reference:demean",
    numba="sklearn_frontier.kernels.iv._numba:demean")


def demean(A, codes, w=None, *, tol=1e-10, maxiter=10_000):
    """Partial fixed effects out of the columns of ``A`` by weighted alternating projections.

    Each sweep subtracts, fixed effect after fixed effect, the weighted mean of every level; sweeps repeat until
    the largest mean subtracted is at most ``tol`` times the column's largest absolute value. The result is the
    residual of the weighted least-squares regression of each column on the fixed-effect dummies, which are never
    built. Cost O(n · n_fixed_effects) per sweep and column; one sweep for a single fixed effect.

    Parameters
    ----------
    A : array-like of shape (n, m)
        Columns to demean.
    codes : array-like of int of shape (n, n_fixed_effects)
        Level ``0..G_f - 1`` of every row in each fixed effect.
    w : array-like of shape (n,), default=None
        Non-negative weights (None: ones).
    tol : float, default=1e-10
        Relative convergence tolerance.
    maxiter : int, default=10_000
        Most sweeps per column.

    Returns
    -------
    demeaned : ndarray of shape (n, m)
        ``A`` minus its projection on the fixed effects.
    n_sweeps : int
        Most sweeps any column needed.
    converged : bool
        Whether every column met ``tol`` within ``maxiter`` sweeps.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels.iv import demean
    >>> out, _, _ = demean(np.array([[1.0], [3.0], [10.0]]), np.array([[0], [0], [1]]))
    >>> out.ravel().tolist()
    [-1.0, 1.0, 0.0]
    """
    A = np.ascontiguousarray(A, dtype=np.float64)
    codes = np.ascontiguousarray(codes, dtype=np.intp)
    if A.ndim != 2 or codes.ndim != 2 or codes.shape[0] != A.shape[0]:
        raise ValueError(f"A and codes must be 2-D with the same number of rows, got {A.shape} and {codes.shape}.")
    if codes.size and codes.min() < 0:
        raise ValueError("codes must be non-negative level indices.")
    w = np.ones(A.shape[0]) if w is None else np.ascontiguousarray(w, dtype=np.float64)
    if w.shape != (A.shape[0],):
        raise ValueError(f"w must have shape ({A.shape[0]},), got {w.shape}.")
    return _demean(A, codes, w, float(tol), int(maxiter))


demean.kernel_spec = _demean.kernel_spec
