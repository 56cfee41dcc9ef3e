"""Public wrappers and registrations of the annotation kernels (the package re-exports them)."""


from .._dispatch import register_kernel

__all__ = ["betainc_half", "splitmix64_keys", "refresh_rows", "apply_labels", "homophily_tallies", "heap_update",
           "select_top", "select_diverse"]

_REF = "sklearn_frontier.kernels.annotation._reference:"
_NUMBA = "sklearn_frontier.kernels.annotation._numba:"


betainc_half = register_kernel("betainc_half", reference=_REF + "betainc_half", numba=_NUMBA + "betainc_half")
splitmix64_keys = register_kernel("splitmix64_keys", reference=_REF + "splitmix64_keys",
                                  numba=_NUMBA + "splitmix64_keys")
refresh_rows = register_kernel("refresh_rows", reference=_REF + "refresh_rows", numba=_NUMBA + "refresh_rows")
apply_labels = register_kernel("apply_labels", reference=_REF + "apply_labels", numba=_NUMBA + "apply_labels")
homophily_tallies = register_kernel("homophily_tallies", reference=_REF + "homophily_tallies",
                                    numba=_NUMBA + "homophily_tallies")
heap_update = register_kernel("heap_update", reference=_REF + "heap_update", numba=_NUMBA + "heap_update")
select_top = register_kernel("select_top", reference=_REF + "select_top", numba=_NUMBA + "select_top")
select_diverse = register_kernel("select_diverse", reference=_REF + "select_diverse",
                                 numba=_NUMBA + "select_diverse")
