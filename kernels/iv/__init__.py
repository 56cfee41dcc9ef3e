"""Kernels of the IV family: HSIC penalties for the instrument-regularised autoencoder, fixed-effect demeaning.

HSIC's reference is torch (differentiable, used inside the training loss); a numpy oracle lives beside it for
tests. It has no numba twin by design: the loss needs autograd. A Triton twin is future work. ``demean`` (the
absorbed fixed effects of the linear IV estimators) has a numpy reference and a numba twin.
"""

from ._api import (
    demean,
    hsic_gaussian,
    median_bandwidth,
)

__all__ = ["demean", "hsic_gaussian", "median_bandwidth"]
