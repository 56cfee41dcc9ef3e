"""sklearn_frontier: scikit-learn compatible estimators for eight new machine-learning methods.

Public names are imported lazily (PEP 562), so ``import sklearn_frontier`` stays cheap: torch,
numba and POT load only when an estimator that needs them is used.
"""

import ast
import importlib.util

from ._config import config_context, get_config, set_config
from ._registry import METHOD_MODULES, all_estimators

__version__ = "0.1.0"

# The method packages whose public names the top level re-exports, plus the shared data generators and warnings.
_PACKAGES = (*METHOD_MODULES, "sklearn_frontier.datasets", "sklearn_frontier.exceptions")


def _static_all(module):
    """A module's ``__all__``, read from its source without importing it (importing would load torch, numba, POT).

    Each package's ``__all__`` is the one list of its public names: a literal list (extended with ``+=`` beside
    the definitions it lists), or ``sorted(_LAZY)`` over a literal ``_EXPORTS`` mapping of private module to
    names for a lazily importing package.
    """
    spec = importlib.util.find_spec(module)
    with open(spec.origin, encoding="utf-8") as file:
        tree = ast.parse(file.read(), filename=spec.origin)
    assigned, names = {}, []
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            assigned[node.targets[0].id] = node.value
            if node.targets[0].id == "__all__":
                try:
                    names = list(ast.literal_eval(node.value))
                except ValueError:  # ``sorted(_LAZY)`` built from ``_EXPORTS``
                    exports = ast.literal_eval(assigned["_EXPORTS"])
                    names = sorted(name for group in exports.values() for name in group)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == "__all__":
            names += list(ast.literal_eval(node.value))
    return names


# package -> its public names, and name -> the package that defines it (the first package wins on a shared name).
_EXPORTS = {module: _static_all(module) for module in _PACKAGES}
_LAZY = {}
for _module, _names in _EXPORTS.items():
    for _name in _names:
        _LAZY.setdefault(_name, _module)

__all__ = ["config_context", "get_config", "set_config", "all_estimators", "__version__", *_LAZY]


def __getattr__(name):
    try:
        module = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
