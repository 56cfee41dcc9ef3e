"""Public wrappers and registrations of the transport kernels (the package re-exports them)."""

import functools

import numpy as np
from sklearn_frontier.kernels._dispatch import register_kernel

__all__ = ["sqeuclidean_cost", "barycentric_projection", "mccann_interpolate", "quantile_cell_means"]

_REF = "sklearn_frontier.kernels.transport._reference:"
_NB = "sklearn_frontier.kernels.transport._numba:"


_sqeuclidean_cost = register_kernel("sqeuclidean_cost", reference=_REF + "sqeuclidean_cost",
                                    numba=_NB + "sqeuclidean_cost")
_barycentric_projection = register_kernel("barycentric_projection", reference=_REF + "barycentric_projection",
                                          numba=_NB + "barycentric_projection")
_mccann_interpolate = register_kernel("mccann_interpolate", reference=_REF + "mccann_interpolate",
                                      numba=_NB + "mccann_interpolate")
_quantile_cell_means = register_kernel("quantile_cell_means", reference=_REF + "quantile_cell_means",
                                       numba=_NB + "quantile_cell_means")


def _contiguous(dispatch):
    @functools.wraps(dispatch)
    def wrapper(*arrays):
        return dispatch(*(np.ascontiguousarray(a, dtype=np.float64) for a in arrays))

    wrapper.kernel_spec = dispatch.kernel_spec
    return wrapper


sqeuclidean_cost = _contiguous(_sqeuclidean_cost)
barycentric_projection = _contiguous(_barycentric_projection)
mccann_interpolate = _contiguous(_mccann_interpolate)
quantile_cell_means = _contiguous(_quantile_cell_means)
