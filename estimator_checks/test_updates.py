"""Failed updates are transactions: for every registered estimator with ``update`` / ``partial_fit``, each bad
update of a matrix raises a clear ValueError/TypeError and leaves the whole ``__dict__`` (caches included)
exactly as it was.

The estimators and their methods are discovered from the registry, and the bad updates follow the method's
signature: ``(indices, labels, ...)`` gets the annotation-cell matrix, any method whose first two
parameters take data like ``fit``'s (``(X, y)``, ``(times, clouds)``, ...) gets the data matrix built from
the estimator's own fit data. Other signatures are skipped with their signature as the reason.
"""

import copy
import inspect
import pickle
import warnings

import numpy as np
import pytest

from estimator_checks.data import fit_on_task_data
from estimator_checks.instances import all_entries

UPDATE_METHODS = ("update", "partial_fit")
# on an instance: a method behind ``available_if`` exists only for some parameters
ENTRIES = [(e, m) for e in all_entries() for m in UPDATE_METHODS if hasattr(e.instance(), m)]

# (estimator, method, case) -> reason; checked strictly (a listed case that starts passing fails).
EXPECTED_FAILURES = {}

DATA_CASES = ("nan_in_X", "inf_in_X", "string_in_X", "wrong_n_features", "y_shorter_than_X", "nan_in_y",
              "inf_in_y", "unknown_label")
CELL_CASES = ("index_out_of_range", "negative_index_out_of_range", "fractional_index", "labels_length_mismatch",
              "label_not_in_classes", "missing_label", "annotator_out_of_range", "valid_then_invalid_index",
              "valid_then_invalid_label", "two_labels_for_one_cell", "overwrite_filled_cell")


def _positional(method):
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in inspect.signature(method).parameters.values() if p.kind in kinds]


def _matrix_kind(entry, method):
    names = _positional(getattr(entry.estimator, method))[1:]  # drop self
    if names[:2] == ["indices", "labels"]:
        return "cells"
    if len(names) >= 2:
        return "data"
    return None


def _cases():
    out = []
    for entry, method in ENTRIES:
        kind = _matrix_kind(entry, method)
        cases = CELL_CASES if kind == "cells" else DATA_CASES if kind == "data" else ("unsupported_signature",)
        for case in cases:
            if case == "unknown_label" and entry.task != "annotation":
                continue
            if case in ("nan_in_y",) and entry.task == "annotation":
                continue  # NaN marks a missing label in an annotation matrix: a valid update
            marks = []
            reason = EXPECTED_FAILURES.get((entry.name, method, case))
            if reason:
                marks.append(pytest.mark.xfail(reason=reason, strict=True))
            out.append(pytest.param(entry, method, case, id=f"{entry.name}-{method}-{case}", marks=marks))
    return out


def _data_case(case, X, y):
    X, y = X[:10].copy(), None if y is None else np.array(y[:10], copy=True)
    if case == "nan_in_X":
        X[2, 0] = np.nan
    elif case == "inf_in_X":
        X[2, 0] = np.inf
    elif case == "string_in_X":
        X = X.astype(object)
        X[2, 0] = "not a number"
    elif case == "wrong_n_features":
        X = X[:, :-1]
    elif case == "y_shorter_than_X":
        y = y[:-1]
    elif case == "nan_in_y":
        y = y.astype(float)
        y[2] = np.nan
    elif case == "inf_in_y":
        y = y.astype(float)
        y.flat[2] = np.inf
    elif case == "unknown_label":
        y = y.copy()
        y[2, 0] = 7.0
    return (X,) if y is None else (X, y)


def _cell_case(case, est):
    codes = est.annotations_
    free_rows, free_cols = np.nonzero(codes < 0)
    filled_rows, filled_cols = np.nonzero(codes >= 0)
    n, m = codes.shape
    i, j = int(free_rows[0]), int(free_cols[0])
    label = est.classes_[0]
    other = est.classes_[1]
    if case == "index_out_of_range":
        return ([n], [label]), {}
    if case == "negative_index_out_of_range":
        return ([-n - 1], [label]), {}
    if case == "fractional_index":
        return ([i + 0.5], [label]), {}
    if case == "labels_length_mismatch":
        return ([i], [label, label]), {}
    if case == "label_not_in_classes":
        return ([i], [7]), {"annotators": [j]}
    if case == "missing_label":
        return ([i], [np.nan]), {"annotators": [j]}
    if case == "annotator_out_of_range":
        return ([i], [label]), {"annotators": [m]}
    if case == "valid_then_invalid_index":
        return ([i, n + 3], [label, label]), {"annotators": [j, 0]}
    if case == "valid_then_invalid_label":
        return ([i, i], [label, 7]), {"annotators": [j, j]}
    if case == "two_labels_for_one_cell":
        return ([i, i], [label, other]), {"annotators": [j, j]}
    if case == "overwrite_filled_cell":
        r, c = int(filled_rows[0]), int(filled_cols[0])
        return ([r], [other if codes[r, c] == 0 else label]), {"annotators": [c]}
    raise AssertionError(case)


def _snapshot(est):
    """Every attribute as pickle bytes (arrays, caches, RNG states, nested estimators)."""
    out = {}
    for key, value in vars(est).items():
        try:
            out[key] = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001 - an unpicklable cache: fall back to its identity and repr
            out[key] = ("unpicklable", type(value).__name__, id(value), type(exc).__name__)
    return out


@pytest.mark.parametrize(("entry", "method", "case"), _cases())
def test_failed_update_leaves_the_whole_state_unchanged(entry, method, case):
    if case == "unsupported_signature":
        pytest.skip(f"{entry.name}.{method}{inspect.signature(getattr(entry.estimator, method))}: no bad-update "
                    "matrix for this signature")
    est, X, y = fit_on_task_data(entry)
    if not hasattr(est, method):
        pytest.skip(f"{entry.name}.{method} is not available once fitted with the registry's fast parameters")
    if _matrix_kind(entry, method) == "cells":
        args, kwargs = _cell_case(case, est)
    else:
        args, kwargs = _data_case(case, X, y), {}
    before = _snapshot(est)
    reference = copy.deepcopy(est)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises((ValueError, TypeError)) as info:
            getattr(est, method)(*args, **kwargs)
    assert str(info.value), "error without a message"
    assert "numba" not in type(info.value).__module__
    after = _snapshot(est)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert changed == [], f"a failed {method} ({case}) changed {changed}"
    # and it keeps working like the untouched copy
    for name in ("predict", "transform"):
        if hasattr(est, name):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                np.testing.assert_array_equal(np.asarray(getattr(est, name)(X), dtype=float),
                                              np.asarray(getattr(reference, name)(X), dtype=float))
            break
