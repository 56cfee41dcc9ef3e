"""Conversion between the annotation matrix and the long (task, worker, label) format (crowd-kit names)."""

import numpy as np

from ._validation import missing_mask


def _columns(data, task, worker, label):
    if hasattr(data, "columns"):  # DataFrame
        missing = [c for c in (task, worker, label) if c not in data.columns]
        if missing:
            raise ValueError(f"data has no column(s) {missing}.")
        return (np.asarray(data[task].to_numpy()), np.asarray(data[worker].to_numpy()),
                np.asarray(data[label].to_numpy()))
    if isinstance(data, dict):
        missing = [c for c in (task, worker, label) if c not in data]
        if missing:
            raise ValueError(f"data has no key(s) {missing}.")
        return np.asarray(data[task]), np.asarray(data[worker]), np.asarray(data[label])
    arr = np.asarray(data, dtype=object)
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise ValueError(f"data must be a DataFrame, a mapping or an (N, 3) array, got shape {arr.shape}.")
    return arr[:, 0], arr[:, 1], arr[:, 2]


def _positions(values, order, what):
    order = np.asarray(order)
    lookup = {v: i for i, v in enumerate(order.tolist())}
    try:
        return np.array([lookup[v] for v in values.tolist()], dtype=np.int64)
    except KeyError as exc:
        raise ValueError(f"{what} id {exc.args[0]!r} is not in the given {what}s.") from None


def to_annotation_matrix(data, task="task", worker="worker", label="label", *, tasks=None, workers=None,
                         missing_label=np.nan, duplicates="error"):
    """Long (task, worker, label) records to an annotation matrix.

    Parameters
    ----------
    data : DataFrame, mapping of columns or array-like of shape (N, 3)
        The long records.
    task, worker, label : str, default="task", "worker", "label"
        Column names.
    tasks, workers : array-like, default=None
        Row and column order (ids absent from ``data`` give empty rows/columns; ids of ``data``
        not listed raise ValueError). Default: ``np.unique`` of the ids.
    missing_label : scalar, default=np.nan
        Marker of the empty cells.
    duplicates : {"error", "first", "last"}, default="error"
        What to do when one worker labels one task twice.

    Returns
    -------
    Y : ndarray of shape (n_tasks, n_workers)
        Float64 for numeric labels, else object.
    tasks, workers : ndarray
        Ids of the rows and of the columns.

    Examples
    --------
    >>> from sklearn_frontier.annotation import to_annotation_matrix
    >>> Y, tasks, workers = to_annotation_matrix({"task": ["a", "a", "b"], "worker": [1, 2, 1],
    ...                                           "label": [0, 1, 1]})
    >>> Y
    array([[ 0.,  1.],
           [ 1., nan]])
    """
    if duplicates not in ("error", "first", "last"):
        raise ValueError(f"duplicates must be 'error', 'first' or 'last', got {duplicates!r}.")
    t, w, lab = _columns(data, task, worker, label)
    tasks = np.unique(t) if tasks is None else np.asarray(tasks)
    workers = np.unique(w) if workers is None else np.asarray(workers)
    ti, wi = _positions(t, tasks, "task"), _positions(w, workers, "worker")
    cells = ti * len(workers) + wi
    if duplicates == "error" and np.unique(cells).size != cells.size:
        raise ValueError("data contains duplicate (task, worker) pairs; pass duplicates='first' or 'last'.")
    numeric = lab.dtype.kind in "iufb" or (lab.dtype.kind == "O" and all(
        isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in lab))
    if numeric and (missing_label is None or isinstance(missing_label, (int, float))):
        Y = np.full((len(tasks), len(workers)), np.nan if missing_label is None else missing_label, dtype=float)
        lab = lab.astype(float)
    else:
        Y = np.full((len(tasks), len(workers)), missing_label, dtype=object)
    order = np.arange(cells.size) if duplicates != "first" else np.arange(cells.size)[::-1]
    Y[ti[order], wi[order]] = lab[order]
    return Y, tasks, workers


def to_long_format(Y, tasks=None, workers=None, missing_label=np.nan, as_frame=None):
    """An annotation matrix to long (task, worker, label) records, row-major.

    Parameters
    ----------
    Y : array-like of shape (n_tasks, n_workers)
        Annotation matrix.
    tasks, workers : array-like, default=None
        Ids of the rows and columns (default: 0..n-1).
    missing_label : scalar, default=np.nan
        Marker of the empty cells (they give no record).
    as_frame : bool, default=None
        Return a pandas DataFrame; None: when pandas is installed.

    Returns
    -------
    records : DataFrame or dict
        Columns task, worker, label (a DataFrame, or a dict of three arrays).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.annotation import to_long_format
    >>> to_long_format(np.array([[0, np.nan], [1, 1]]), as_frame=False)["worker"]
    array([0, 0, 1])
    """
    Y = np.asarray(Y)
    if Y.ndim == 1:
        Y = Y[:, None]
    if Y.ndim != 2:
        raise ValueError(f"Y must be 2-D, got ndim={Y.ndim}.")
    tasks = np.arange(Y.shape[0]) if tasks is None else np.asarray(tasks)
    workers = np.arange(Y.shape[1]) if workers is None else np.asarray(workers)
    if tasks.shape[0] != Y.shape[0] or workers.shape[0] != Y.shape[1]:
        raise ValueError("tasks and workers must match the shape of Y.")
    mask = ~missing_mask(Y, missing_label)
    r, c = np.nonzero(mask)
    out = {"task": tasks[r], "worker": workers[c], "label": Y[r, c]}
    if as_frame is None:
        try:
            import pandas  # noqa: F401

            as_frame = True
        except ImportError:
            as_frame = False
    if as_frame:
        import pandas as pd

        return pd.DataFrame(out)
    return out
