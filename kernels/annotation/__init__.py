"""Annotation kernels of MA3S: margin-Beta uncertainty, online label application, tie keys.

Each kernel has a numpy/scipy reference (``_reference.py``) and a numba twin
(``_numba.py``); there is no Triton twin by design (sequential, tiny steps), so
``backend="triton"`` runs the numba twin.
"""

from ._api import (
    apply_labels,
    betainc_half,
    heap_update,
    homophily_tallies,
    refresh_rows,
    select_diverse,
    select_top,
    splitmix64_keys,
)

__all__ = ["betainc_half", "splitmix64_keys", "refresh_rows", "apply_labels", "homophily_tallies", "heap_update",
           "select_top", "select_diverse"]
