"""Persistence without pickle's trust: :mod:`skops.io` dump/load for every suite estimator.

A skops file is a zip of JSON and numpy arrays; loading it never runs arbitrary code, but it refuses
every type that skops does not know as safe unless the caller trusts it explicitly. The suite's own
classes are such types. :func:`trusted_types` lists exactly the project types that
:func:`skops.io.get_untrusted_types` reports for dumped fitted suite estimators, so a file written by
:func:`dump` loads with :func:`load` (or with ``skops.io.load(file, trusted=trusted_types())``)
without trusting anything from outside the project.

Fitted attributes are numpy arrays or plain Python; torch parts are kept as arrays or state dicts of
arrays, never as pickled modules, so no torch type appears in a dump.
"""

import inspect

PROJECT_PREFIX = "sklearn_frontier."

# Data containers from the project's own dependencies that fitted estimators hold (graph matrices,
# fitted neighbour trees for out-of-sample prediction) and that skops does not trust by default.
# Each was reviewed: skops rebuilds them from arrays and plain parameters, running no user code.
THIRD_PARTY_TYPES = (
    "scipy.sparse._csr.csr_matrix",
    "sklearn.metrics._dist_metrics.EuclideanDistance64",
    "sklearn.neighbors._kd_tree.KDTree",
    # the fitted Gaussian-process kernels of the LOT path surrogate: plain hyper-parameter holders
    "sklearn.gaussian_process.kernels.ConstantKernel",
    "sklearn.gaussian_process.kernels.Matern",
    "sklearn.gaussian_process.kernels.Product",
    "sklearn.gaussian_process.kernels.RBF",
    "sklearn.gaussian_process.kernels.Sum",
    "sklearn.gaussian_process.kernels.WhiteKernel",
)

# Project types that fitted estimators hold besides their own class (a private helper object stored
# as a fitted attribute), keyed by the registered estimator's name. An estimator class may declare the
# same with a class attribute ``_skops_nested_types`` (a tuple of fully qualified type names).
_NESTED_TYPES = {
    "BASTRegressor": ("sklearn_frontier.spanning_trees._domain.DomainGraph",),
    "PRBASTRegressor": ("sklearn_frontier.spanning_trees._domain.DomainGraph",
                        "sklearn_frontier.spanning_trees._components.RoutedField"),
    # the streaming state partial_fit continues from: arrays and numbers in a dataclass
    "SMAVE": ("sklearn_frontier.sdr._result.StreamState",),
    "SMAVERegressor": ("sklearn_frontier.sdr._result.StreamState",),
    "MAVEDimensionCV": ("sklearn_frontier.sdr._result.StreamState",),
}


def type_name(klass):
    """The fully qualified name skops uses for a class (``module.Name``).

    Parameters
    ----------
    klass : type
        A class.

    Returns
    -------
    name : str
        ``klass.__module__ + "." + klass.__name__``, as :func:`skops.io.get_untrusted_types` reports it.

    Examples
    --------
    >>> from sklearn_frontier.persistence import type_name
    >>> type_name(dict)
    'builtins.dict'
    """
    return f"{klass.__module__}.{klass.__name__}"


def trusted_types():
    """The types a skops dump of a fitted suite estimator contains beyond skops's own trusted set.

    Computed from the estimator registry: every registered estimator class, plus the project helper
    types those estimators declare they store (``_skops_nested_types``), plus the reviewed dependency
    data containers of :data:`THIRD_PARTY_TYPES` (sparse graph matrices, fitted k-d trees). Nothing
    else from outside the project is listed.

    Returns
    -------
    types : list of str
        Sorted fully qualified type names, the format :func:`skops.io.load` accepts as ``trusted``.

    See Also
    --------
    load : Load a skops file, trusting these types.
    skops.io.get_untrusted_types : The types of a dump that skops does not trust by default.

    Examples
    --------
    >>> from sklearn_frontier.persistence import trusted_types
    >>> from sklearn_frontier.persistence import THIRD_PARTY_TYPES
    >>> all(name.startswith("sklearn_frontier.") or name in THIRD_PARTY_TYPES for name in trusted_types())
    True
    """
    from ._registry import all_estimators

    names = set()
    for entry in all_estimators():
        names.add(type_name(entry.estimator))
        names.update(_NESTED_TYPES.get(entry.name, ()))
        for cls in inspect.getmro(entry.estimator):
            names.update(cls.__dict__.get("_skops_nested_types", ()))
    outside = sorted(n for n in names if not n.startswith(PROJECT_PREFIX))
    if outside:
        raise RuntimeError(f"trusted_types would trust types from outside the project: {outside}")
    return sorted(names | set(THIRD_PARTY_TYPES))


def dump(estimator, file):
    """Save a (fitted) estimator in the skops format.

    Parameters
    ----------
    estimator : object
        The estimator, usually fitted; a Pipeline or search around suite estimators works too.
    file : str, path or binary file object
        Where to write; ``.skops`` is the conventional extension.

    See Also
    --------
    load : The inverse.
    skops.io.dump : The function this calls (with zip compression).

    Examples
    --------
    >>> import io
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_frontier.persistence import dump, load
    >>> buffer = io.BytesIO()
    >>> dump(LinearRegression().fit([[0.0], [1.0]], [0.0, 1.0]), buffer)
    >>> _ = buffer.seek(0)
    >>> round(float(load(buffer).predict([[2.0]])[0]), 6)
    2.0
    """
    from zipfile import ZIP_DEFLATED

    import skops.io

    skops.io.dump(estimator, file, compression=ZIP_DEFLATED)


def load(file, *, trusted=None):
    """Load a skops file written by :func:`dump`, trusting only the project's own types.

    Parameters
    ----------
    file : str, path or binary file object
        The skops file.
    trusted : list of str or type, default=None
        Further types to trust, beyond :func:`trusted_types` and what skops trusts by default.
        Review them first: a trusted type may run code while loading.

    Returns
    -------
    estimator : object
        The loaded object.

    Raises
    ------
    skops.io.exceptions.UntrustedTypesFoundException
        If the file holds a type that is neither a project type nor in ``trusted``.

    See Also
    --------
    dump : The inverse.
    trusted_types : The project types trusted here.

    Examples
    --------
    >>> import io
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn_frontier.persistence import dump, load
    >>> buffer = io.BytesIO()
    >>> dump(StandardScaler().fit([[0.0], [2.0]]), buffer)
    >>> _ = buffer.seek(0)
    >>> load(buffer).mean_.tolist()
    [1.0]
    """
    import skops.io

    return skops.io.load(file, trusted=[*trusted_types(), *(trusted or [])])
