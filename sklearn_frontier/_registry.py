"""Registry of public estimators: what the compliance harness, the demo and the benchmarks iterate over.

Each method package registers its estimators at import time with :func:`register_estimator`, giving the
constructor arguments that make it fast on tiny data. :func:`all_estimators` imports every method
package first, so the list is complete whatever was imported before.
"""

import importlib
from dataclasses import dataclass, field

# One entry per method family; each package registers its estimators and its demo when imported.
METHOD_MODULES = (
    "sklearn_frontier.sdr",
    "sklearn_frontier.spanning_trees",
    "sklearn_frontier.configurations",
    "sklearn_frontier.iv",
    "sklearn_frontier.topology",
    "sklearn_frontier.annotation",
    "sklearn_frontier.quantization",
    "sklearn_frontier.transport",
)

_ESTIMATORS = {}
_DEMOS = {}


@dataclass(frozen=True)
class EstimatorEntry:
    """A registered estimator class and how to build a fast instance of it."""

    name: str
    estimator: type
    method: str
    fast_params: dict = field(default_factory=dict)
    baseline: bool = False
    # Which tiny data the contract checks feed it: "regression", "classification", "clustering",
    # "supervised_transform" (X, continuous y), "unsupervised_transform" (X only) or "annotation"
    # (X, an annotation matrix Y with NaN for missing labels).
    task: str = "regression"
    # One parameter and two values for the GridSearchCV contract check, e.g. {"n_components": [1, 2]}.
    search_grid: dict = field(default_factory=dict)

    def instance(self, **overrides):
        """A new instance with the fast parameters (and ``overrides``)."""
        return self.estimator(**{**self.fast_params, **overrides})


TASKS = ("regression", "classification", "clustering", "supervised_transform", "unsupervised_transform",
         "annotation")


def register_estimator(estimator, *, method, task, search_grid, fast_params=None, baseline=False):
    """Register a public estimator class and return it.

    Parameters
    ----------
    estimator : type
        The class.
    method : str
        Method family (the package name, e.g. ``"sdr"``).
    task : str
        One of :data:`TASKS`: which tiny data the contract checks feed it.
    search_grid : dict
        One parameter with two values, for the GridSearchCV contract check.
    fast_params : dict, default=None
        Constructor arguments that make it fast on tiny data.
    baseline : bool, default=False
        Whether it is a baseline shipped beside a method.
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}.")
    entry = EstimatorEntry(name=estimator.__name__, estimator=estimator, method=method,
                           fast_params=dict(fast_params or {}), baseline=baseline, task=task,
                           search_grid=dict(search_grid))
    _ESTIMATORS[entry.name] = entry
    return estimator


def register_demo(method, func):
    """Register ``func(random_state) -> list[dict]``, the demo rows of one method (see ``demo.py``)."""
    _DEMOS[method] = func
    return func


def _import_methods():
    for module in METHOD_MODULES:
        importlib.import_module(module)


def all_estimators(*, method=None, include_baselines=True):
    """Every public estimator of the suite, with fast constructor arguments for tiny data.

    Parameters
    ----------
    method : str, default=None
        Only the estimators of one method family (e.g. ``"sdr"``).
    include_baselines : bool, default=True
        Include the baselines shipped beside each method.

    Returns
    -------
    entries : list of EstimatorEntry
        Sorted by name; ``entry.instance()`` builds a fast instance.

    Examples
    --------
    >>> import sklearn_frontier
    >>> entries = sklearn_frontier.all_estimators()
    >>> all(hasattr(e.estimator, "fit") for e in entries)
    True
    """
    _import_methods()
    entries = sorted(_ESTIMATORS.values(), key=lambda e: e.name)
    if method is not None:
        entries = [e for e in entries if e.method == method]
    if not include_baselines:
        entries = [e for e in entries if not e.baseline]
    return entries


def all_demos():
    """Registered demo functions keyed by method, in the order of :data:`METHOD_MODULES`."""
    _import_methods()
    return dict(_DEMOS)
