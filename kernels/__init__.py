"""Numeric backends of sklearn_frontier: one name per kernel, a reference and a fast twin.

Each public kernel function dispatches, through :func:`sklearn_frontier.get_config` ``["backend"]``,
to a plain numpy/torch reference (``_*_reference.py``), a numba twin (``_*_numba.py``) or a Triton
twin (``_*_triton.py``). Kernel modules are imported lazily: ``from sklearn_frontier.kernels import
tree_precision_solve`` imports only the module that defines it.
"""

import importlib
import pkgutil

from ._dispatch import (
    available_backends,
    get_implementation,
    register_kernel,
    registered_kernels,
)

# Public kernel modules: every non-underscore module of this package (one per kernel family).
# Every kernel they register is twin-tested by tests/test_kernels.py.
KERNEL_MODULES = tuple(sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")))


def _import_all_kernel_modules():
    for module in KERNEL_MODULES:
        importlib.import_module(f"{__name__}.{module}")


def __getattr__(name):
    # Lazy access to kernel functions: sklearn_frontier.kernels.<kernel name>.
    if name.startswith("_"):
        raise AttributeError(name)
    for module in KERNEL_MODULES:
        mod = importlib.import_module(f"{__name__}.{module}")
        if name in getattr(mod, "__all__", ()):
            return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["available_backends", "get_implementation", "register_kernel", "registered_kernels", "KERNEL_MODULES"]
