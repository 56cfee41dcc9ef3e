"""Numeric backends of sklearn_frontier: one name per kernel, a reference and a fast twin.

One sub-package per method family (``sdr``, ``spanning_trees``, ``configurations``, ``iv``, ``topology``,
``annotation``, ``quantization``, ...) plus ``graphs``, the graph kernels that several families share. Each holds
``_api.py`` (the public wrappers and their registrations; ``__init__.py`` re-exports them), ``_reference.py`` (the
plain numpy/torch oracle), ``_numba.py`` and, where there is one, ``_triton.py``. ``_validation.py`` holds the
input coercion the wrappers share. Each public kernel function dispatches, through
:func:`sklearn_frontier.get_config` ``["backend"]``, to one of them; ``_dispatch.py`` is the one dispatch point.
Families are imported lazily: ``from sklearn_frontier.kernels import tree_precision_solve`` imports only the
family that defines it.
"""

import importlib
import pkgutil

from ._dispatch import (
    available_backends,
    get_implementation,
    register_kernel,
    registered_kernels,
)

# Kernel families: every non-underscore sub-package of this package.
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
