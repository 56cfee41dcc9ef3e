"""Partly labelled targets: which rows are unlabelled (the marker rule) and what task ``y`` describes."""

from dataclasses import dataclass
from numbers import Number

import numpy as np
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_array, check_consistent_length, column_or_1d

from sklearn_frontier.utils._warnings import warn_user

# Integer-valued targets with at most this many distinct labelled values are read as classes by task="auto".
MAX_AUTO_CLASSES = 20
# The value of ``unlabelled_marker`` (and of the fitted ``unlabelled_marker_``) meaning: missing values only.
MISSING = "missing"


@dataclass(frozen=True)
class PartialTarget:
    """A checked target: the task, the labels (unlabelled rows hold a placeholder), which rows are labelled and
    the marker in force (``"missing"`` or the marker value)."""

    task: str
    y: np.ndarray
    mask: np.ndarray
    marker: object


def target_array(y):
    """y as a numpy array; pandas' nullable and categorical targets keep their missing values as NaN/None."""
    dtype = getattr(y, "dtype", None)
    if dtype is not None and hasattr(y, "to_numpy") and not isinstance(dtype, np.dtype):
        kind = getattr(dtype, "kind", "O")
        if kind in "iuf":  # nullable Int64/Float64: pd.NA becomes NaN
            return y.to_numpy(dtype=np.float64, na_value=np.nan)
        return y.to_numpy(dtype=object, na_value=None)
    return np.asarray(y)


def _missing_value(v):
    # pd.NA and pd.NaT are recognised by type name so that pandas is not imported for plain arrays
    return v is None or (isinstance(v, float) and v != v) or type(v).__name__ in ("NAType", "NaTType")


def is_missing(y):
    """Rows of ``y`` holding a missing value (NaN, None, ``pd.NA``)."""
    if y.dtype.kind == "f":
        return np.isnan(y)
    if y.dtype.kind == "O":
        return np.array([_missing_value(v) for v in y], dtype=bool)
    return np.zeros(y.shape[0], dtype=bool)


def _same(v, value):
    if _missing_value(v) or isinstance(v, bool):
        return False
    if isinstance(value, str):
        return isinstance(v, str) and v == value
    return isinstance(v, Number) and v == value


def _equals(y, value):
    """Rows of ``y`` equal to ``value``, comparing numbers with numbers and strings with strings."""
    is_number = isinstance(value, Number) and not isinstance(value, bool)
    if y.dtype.kind in "iuf":
        return y == value if is_number else np.zeros(y.shape[0], dtype=bool)
    if y.dtype.kind in "US":
        return y == value if isinstance(value, str) else np.zeros(y.shape[0], dtype=bool)
    if y.dtype.kind == "O":
        return np.array([_same(v, value) for v in y], dtype=bool)
    return np.zeros(y.shape[0], dtype=bool)


def resolve_marker(y, marker):
    """The marker in force for ``y`` under the ``unlabelled_marker`` rule.

    ``"auto"``: missing values when ``y`` holds any (then ``-1`` is an ordinary class); otherwise ``-1``, the
    number for numeric labels, the string ``"-1"`` for string labels (the number when an object array holds it).
    Any other value is returned as given.
    """
    if marker != "auto":
        return marker
    if is_missing(y).any():
        return MISSING
    if y.dtype.kind in "US":
        return "-1"
    if y.dtype.kind == "O" and not _equals(y, -1).any():
        return "-1"
    return -1


def unlabelled_rows(y, marker):
    """Rows of ``y`` that the resolved ``marker`` says are unlabelled (missing values always are)."""
    rows = is_missing(y)
    if marker != MISSING:
        rows |= _equals(y, marker)
    return rows


def _numeric_object(labels):
    """Object labels that are all numbers (as in ``[0, 1, None]``) as a float array, else None."""
    if labels.dtype.kind == "O" and all(isinstance(v, Number) and not isinstance(v, bool) for v in labels):
        return labels.astype(np.float64)
    return None


def infer_task(y, labelled):
    """The ``task="auto"`` rules: strings, booleans and categories are classes; integer values (also as floats
    with NaN for missing, pandas' nullable integers, numbers in an object array) are classes up to
    ``MAX_AUTO_CLASSES`` distinct labelled values, else a regression, with a warning since either reading is
    plausible; other numbers are a regression.
    """
    values = y[labelled]
    numeric = _numeric_object(values)
    if numeric is not None:
        values = numeric
    elif y.dtype.kind in "OUSb":
        return "classification"
    values = values.astype(np.float64)
    if not np.all(values == np.round(values)):
        return "regression"
    n_distinct = np.unique(values).shape[0]
    if n_distinct <= MAX_AUTO_CLASSES:
        return "classification"
    warn_user(f"y holds {n_distinct} distinct integer values (more than {MAX_AUTO_CLASSES}): MixConfigAugmenter "
              "treats it as a regression target. Pass task='classification' if these are class labels.")
    return "regression"


def check_partial_target(y, n, task, marker, *, name="MixConfigAugmenter"):
    """Check a partly labelled target of ``n`` rows: a :class:`PartialTarget`.

    ``task`` is ``"auto"``, ``"classification"`` or ``"regression"``; ``marker`` the ``unlabelled_marker``
    parameter (``"auto"`` is resolved here) or a fitted, resolved marker.
    """
    y = target_array(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = column_or_1d(y, warn=True)
    elif y.ndim != 1:
        raise ValueError(f"{name} supports one target column (no multi-output), got y of shape {y.shape}.")
    check_consistent_length(np.empty((n, 0)), y)
    if y.dtype.kind == "f" and np.isinf(y).any():
        raise ValueError("Input y contains infinity; mark unlabelled rows with NaN (regression) or -1 "
                         "(classification).")
    resolved = resolve_marker(y, marker)
    if task == "auto":
        task = infer_task(y, ~unlabelled_rows(y, resolved))
    if task == "regression":
        if marker == "auto":  # -1 is an ordinary value of a regression target
            resolved = MISSING
        mask = ~unlabelled_rows(y, resolved)
        values = _numeric_object(y)
        y = values if values is not None else check_array(y, ensure_2d=False, dtype=np.float64,
                                                          ensure_all_finite="allow-nan")
        if not mask.any():
            raise ValueError(f"{name} needs at least one labelled row; every row of y is marked unlabelled by "
                             f"{describe_marker(resolved)}.")
        return PartialTarget(task, y, mask, resolved)
    mask = ~unlabelled_rows(y, resolved)
    if not mask.any():
        raise ValueError(f"{name} needs at least one labelled row; every row of y is marked unlabelled by "
                         f"{describe_marker(resolved)}.")
    labels = y[mask]
    numeric = _numeric_object(labels)
    if numeric is not None:
        labels = numeric
    if labels.dtype.kind == "f" and np.all(labels == np.round(labels)):
        labels = labels.astype(np.int64)  # integer classes read with NaN (or None) for missing
    if labels.dtype.kind in "iuf" or numeric is not None:
        y = np.zeros(y.shape[0], dtype=labels.dtype)
        y[mask] = labels
    kind = type_of_target(labels, raise_unknown=True)
    if kind not in ("binary", "multiclass"):
        raise ValueError(f"Classification needs a binary or multiclass target, got {kind!r}.")
    return PartialTarget(task, y, mask, resolved)


def describe_marker(marker):
    """How the unlabelled rows are marked, for messages."""
    return "a missing value (NaN, None, pd.NA)" if marker == MISSING else f"{marker!r} or a missing value"


def labelled_part(y, marker):
    """Indices of the labelled rows of ``y`` under the resolved ``marker``, and their labels (numbers held in an
    object array, as in ``[0, 1, None]``, become numbers; whole floats, as in ``[0, 1, nan]``, integers)."""
    rows = np.flatnonzero(~unlabelled_rows(y, marker))
    labels = y[rows]
    numeric = _numeric_object(labels)
    if numeric is not None:
        labels = numeric
    if labels.dtype.kind == "f" and np.all((labels == np.round(labels)) & (np.abs(labels) < 2.0**53)):
        labels = labels.astype(np.int64)
    return rows, labels
