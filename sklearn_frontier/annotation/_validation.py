"""Annotation-matrix validation and encoding (shared by the annotators, aggregators and formats)."""

import numbers
import warnings

import numpy as np
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.multiclass import check_classification_targets

from sklearn_frontier.utils._compat import check_is_fitted

_COLUMN_VECTOR_MESSAGE = ("A column-vector y was passed when a 1d array was expected. Please change the shape of y "
                          "to (n_samples, ), for example using ravel().")


def is_nan_scalar(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and value != value


def _is_missing_object(value, missing_label):
    if value is None:
        return True
    try:
        if value != value:  # NaN, NaT
            return True
    except TypeError:  # pandas.NA: its comparisons are ambiguous
        return True
    if missing_label is None or is_nan_scalar(missing_label):
        return False
    try:
        return bool(value == missing_label)
    except (TypeError, ValueError):
        return False


def missing_mask(Y, missing_label=np.nan):
    """Boolean mask of missing cells (NaN or ``missing_label``; also None/NA/NaT in object arrays)."""
    Y = np.asarray(Y)
    kind = Y.dtype.kind
    if kind == "O":
        flat = [_is_missing_object(v, missing_label) for v in Y.ravel()]
        return np.asarray(flat, dtype=bool).reshape(Y.shape)
    if kind in "fc":
        if missing_label is None or is_nan_scalar(missing_label):
            return np.isnan(Y)
        if isinstance(missing_label, numbers.Number):
            return Y == missing_label
        return np.zeros(Y.shape, dtype=bool)
    if kind in "iub":
        if isinstance(missing_label, numbers.Number) and not is_nan_scalar(missing_label):
            return Y == missing_label
        return np.zeros(Y.shape, dtype=bool)
    if kind in "US":
        if isinstance(missing_label, str):
            return Y == missing_label
        return np.zeros(Y.shape, dtype=bool)
    raise TypeError(f"Unsupported label dtype {Y.dtype}.")


def as_annotation_matrix(Y, n_samples=None, *, warn_column=True):
    """``Y`` as a 2-D array (a 1-D y is one annotator); checks ndim and length."""
    if Y is None:
        raise ValueError("requires y to be passed, but the target y is None.")
    if hasattr(Y, "to_numpy"):
        Y = Y.to_numpy()
    Y = np.asarray(Y)
    if Y.ndim == 0 or Y.ndim > 2:
        raise ValueError(f"y must be 1-D or an (n_samples, n_annotators) matrix, got ndim={Y.ndim}.")
    if Y.ndim == 1:
        Y = Y[:, None]
    elif Y.shape[1] == 1 and warn_column:
        warnings.warn(_COLUMN_VECTOR_MESSAGE, DataConversionWarning, stacklevel=3)
    if n_samples is not None and Y.shape[0] != n_samples:
        raise ValueError(f"y has {Y.shape[0]} rows but X has {n_samples} samples.")
    return Y


def check_classes(classes, missing_label=np.nan):
    """Validate a user ``classes`` array: 1-D, non-empty, no missing value, no duplicates."""
    classes = np.asarray(classes)
    if classes.dtype.kind == "O" and all(isinstance(c, str) for c in classes.ravel()):
        classes = classes.astype(str)
    if classes.ndim != 1 or classes.size == 0:
        raise ValueError(f"classes must be a non-empty 1-D array, got shape {classes.shape}.")
    if missing_mask(classes, missing_label).any():
        raise ValueError("classes must not contain the missing label.")
    if classes.dtype.kind == "f" and not np.all(np.isfinite(classes)):
        raise ValueError("classes must be finite.")
    if np.unique(classes).size != classes.size:
        raise ValueError("classes must not contain duplicates.")
    return classes


_MINUS_ONE_HINT = ("scikit-learn's semi-supervised estimators mark an unlabelled sample by -1, but here the missing "
                   "label is missing_label={missing!r}, so -1 is read as a label. Pass missing_label=-1 if -1 "
                   "means 'no label'")


def _has_minus_one(observed):
    if observed.dtype.kind in "iuf":
        return bool(np.any(observed == -1))
    if observed.dtype.kind == "O":
        return any(isinstance(v, numbers.Real) and not isinstance(v, bool) and v == -1 for v in observed)
    return False


def infer_classes(Y, mask, classes=None, missing_label=np.nan):
    """The label set: ``classes`` (validated) or ``np.unique`` of the observed labels.

    A -1 among the labels while ``missing_label`` is NaN or None is scikit-learn's "unlabelled" marker read as
    a class: a ValueError when ``classes`` leaves -1 out, a warning when the classes are inferred.
    """
    observed = Y[~mask]
    if observed.size:
        if observed.dtype.kind == "O" and all(isinstance(v, str) for v in observed):
            observed = observed.astype(str)
        check_classification_targets(observed)
    minus_one = (missing_label is None or is_nan_scalar(missing_label)) and _has_minus_one(observed)
    if classes is not None:
        classes = check_classes(classes, missing_label)
        if minus_one and not _has_minus_one(np.asarray(classes).ravel()):
            raise ValueError("y contains -1, which is not in classes. " + _MINUS_ONE_HINT.format(
                missing=missing_label) + ".")
        if observed.size:
            encode_labels(observed, classes)  # raises on unknown labels
        return classes
    if minus_one:
        from sklearn_frontier.utils._warnings import warn_user

        warn_user("y contains -1, which becomes a class. " + _MINUS_ONE_HINT.format(missing=missing_label)
                  + "; pass classes including -1 (e.g. classes=[-1, 1]) if it is a class, to silence this warning.")
    if observed.size == 0:
        raise ValueError("y contains no label and `classes=None`: pass `classes` to declare the label set.")
    return np.unique(observed)


def encode_labels(values, classes):
    """Integer codes of ``values`` in ``classes``; ValueError naming an unknown label."""
    values = np.asarray(values)
    if values.size == 0:
        return np.zeros(values.shape, dtype=np.int64)
    if values.dtype.kind == "O" and all(isinstance(v, str) for v in values.ravel()):
        values = values.astype(str)
    sorter = np.argsort(classes, kind="stable")
    try:
        pos = np.searchsorted(classes, values, sorter=sorter)
    except TypeError as exc:
        raise ValueError(f"labels of type {values.dtype} do not match classes of type {classes.dtype}.") from exc
    pos = np.clip(pos, 0, classes.size - 1)
    codes = sorter[pos]
    try:
        found = np.asarray(classes[codes] == values, dtype=bool)
    except (TypeError, ValueError):
        found = np.zeros(values.shape, dtype=bool)
    if found.shape != values.shape or not found.all():
        bad = values[~found] if found.shape == values.shape else values
        raise ValueError(f"Unknown label(s) {np.unique(bad.astype(object))[:5].tolist()}; classes are "
                         f"{classes.tolist()}.")
    return codes.astype(np.int64)


def encode_annotation_matrix(Y, *, classes=None, missing_label=np.nan, n_samples=None, warn_column=True):
    """``(codes, classes)``: codes (n, m) int16/int32 with -1 for missing."""
    Y = as_annotation_matrix(Y, n_samples, warn_column=warn_column)
    mask = missing_mask(Y, missing_label)
    classes = infer_classes(Y, mask, classes, missing_label)
    dtype = np.int16 if classes.size <= np.iinfo(np.int16).max else np.int32
    codes = np.full(Y.shape, -1, dtype=dtype)
    if (~mask).any():
        codes[~mask] = encode_labels(Y[~mask], classes)
    return codes, classes


def count_votes(codes, n_classes):
    """Vote counts (n, K) float64 of an int code matrix (-1 = missing)."""
    n = codes.shape[0]
    rows, cols = np.nonzero(codes >= 0)
    flat = rows * n_classes + codes[rows, cols].astype(np.int64)
    return np.bincount(flat, minlength=n * n_classes).reshape(n, n_classes).astype(np.float64)


def _check_fitted(est):
    # Hot path (every query/update): a dict lookup, sklearn's check only to raise its NotFittedError.
    if "counts_" not in est.__dict__:
        check_is_fitted(est)


def _as_index_array(indices, n, what="indices"):
    arr = np.asarray(indices)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise ValueError(f"{what} must be 1-D, got shape {arr.shape}.")
    if arr.size and (arr.dtype.kind not in "iu" or arr.dtype == bool):
        raise ValueError(f"{what} must be integers, got dtype {arr.dtype}.")
    arr = arr.astype(np.int64)
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        raise ValueError(f"{what} out of range [0, {n}).")
    return arr


def _as_selection_mask(selection, n, what):
    """An index array or boolean mask as a boolean mask of length n (None: all)."""
    if selection is None:
        return np.ones(n, dtype=bool)
    arr = np.asarray(selection)
    if arr.dtype == bool:
        if arr.shape != (n,):
            raise ValueError(f"A boolean {what} mask must have shape ({n},), got {arr.shape}.")
        return arr.copy()
    mask = np.zeros(n, dtype=bool)
    mask[_as_index_array(arr, n, what)] = True
    return mask
