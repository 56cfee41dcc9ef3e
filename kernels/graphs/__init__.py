"""Graph kernels shared by every kNN-graph method (MA3S, MixConfig, PR-BAST, CEO)."""

from ._api import (
    local_scaling_weights,
    nn_descent,
)

__all__ = ["local_scaling_weights", "nn_descent"]
