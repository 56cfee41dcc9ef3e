"""HSIC independence penalties (Gaussian kernels) for the instrument-regularised autoencoder.

The reference is torch (differentiable, used inside the training loss); a numpy oracle lives beside it
for tests. There is no numba twin by design: the loss needs autograd. A Triton twin is future work.
"""

from ._api import (
    hsic_gaussian,
    median_bandwidth,
)

__all__ = ["hsic_gaussian", "median_bandwidth"]
