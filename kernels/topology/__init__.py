"""Topology kernels of the CEO family: clique enumeration, face lookup, batched Jacobi-PCG, selected inversion.

No Triton twin in v1 (irregular, launch-bound at these sizes): ``backend="triton"`` falls back to numba.
"""

from ._api import (
    clique_count,
    clique_enumerate,
    face_index,
    pcg_jacobi_batched,
    selinv_diag,
)

__all__ = ["clique_count", "clique_enumerate", "face_index", "pcg_jacobi_batched", "selinv_diag"]
