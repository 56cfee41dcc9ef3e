"""Input coercion shared by the kernel wrappers: contiguous arrays of the kernels' dtypes, errors naming the input."""

import numpy as np


def float_2d(a, name):
    """``a`` as a C-contiguous float64 2-D array."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {a.shape}.")
    return a


def float_1d(a, name, n=None):
    """``a`` as a C-contiguous float64 1-D array (of length ``n`` when given)."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    if a.ndim != 1 or (n is not None and a.shape[0] != n):
        raise ValueError(f"{name} must be 1-D of length {n}, got shape {a.shape}.")
    return a


def index_2d(a, n, name):
    """``a`` as a C-contiguous int64 2-D array of indices in ``[0, n)``."""
    a = np.ascontiguousarray(a, dtype=np.int64)
    if a.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {a.shape}.")
    if a.size and (a.min() < 0 or a.max() >= n):
        raise ValueError(f"{name} holds indices outside [0, {n}).")
    return a


def int_1d(a, name):
    """``a`` as a C-contiguous int64 1-D array; refuses non-integer input."""
    a = np.asarray(a)
    if a.ndim != 1 or (a.size and not np.issubdtype(a.dtype, np.integer)):
        raise ValueError(f"{name} must be a 1-D integer array, got shape {a.shape} and dtype {a.dtype}.")
    return np.ascontiguousarray(a, dtype=np.int64)
