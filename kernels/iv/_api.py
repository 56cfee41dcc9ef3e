"""Public wrappers and registrations of the iv kernels (the package re-exports them)."""

from .._dispatch import register_kernel

__all__ = ["hsic_gaussian", "median_bandwidth"]


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
