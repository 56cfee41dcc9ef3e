"""Twin-test inputs of every kernel, one module per family, keyed by kernel name (see :class:`TwinCase`)."""

import importlib
import pkgutil

from ._case import TwinCase

__all__ = ["TwinCase", "all_cases"]


def all_cases():
    """``{kernel name: TwinCase}`` over every family module of this package."""
    cases = {}
    for module in pkgutil.iter_modules(__path__):
        if not module.name.startswith("_"):
            cases.update(importlib.import_module(f"{__name__}.{module.name}").CASES)
    return cases
