"""Pickle-free persistence of annotators (``.npz``), atomic writes, and the label journal."""

import hashlib
import json
import os

import numpy as np
import scipy.sparse as sp

from sklearn_frontier.exceptions import StateFileError
from sklearn_frontier.utils._atomic_files import atomic_savez, read_state_file

from ._keys import _tie_keys
from ._validation import count_votes

_TAG = "sklearn_frontier.annotator"
# 2: every file carries a ``state_sha256`` member (member list + SHA-256 of every other member). Version 1
# files (no such member) still load; their members are only checked by the zip CRCs and codes_sha256.
_VERSION = 2
_READABLE_VERSIONS = (1, 2)


# Annotator classes by name, filled by ``register_state_class``: this module knows the state format, the classes
# register themselves, so persistence never imports the estimators.
_STATE_CLASSES = {}


def register_state_class(cls):
    """Class decorator: make ``cls`` loadable by name from a state file."""
    _STATE_CLASSES[cls.__name__] = cls
    return cls


def _json_params(est):
    params = est.get_params(deep=False)
    out = {}
    for key, value in params.items():
        if key == "classes":
            continue
        if key == "random_state" and not (value is None or isinstance(value, (int, np.integer))):
            value = None  # a RandomState cannot be stored; random_seed_ keeps the fitted keys exact
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, tuple):
            value = list(value)
        if callable(value):
            raise TypeError(f"Cannot save a callable parameter {key}={value!r} in a pickle-free state.")
        out[key] = value
    return json.dumps(out, allow_nan=True)


def _sha256(a):
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


def state_arrays(est, prefix=""):
    """The fitted state of ``est`` as a dict of plain numpy arrays (no objects)."""
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(est)
    classes = est.classes_
    if classes.dtype.kind == "O":
        if not all(isinstance(c, str) for c in classes):
            raise TypeError("save_state supports numeric or string classes only (got mixed objects).")
        classes = classes.astype(str)
    user_classes = est.classes
    W = est.graph_.tocsr()
    arrays = {
        "tag": np.array(_TAG), "version": np.array(_VERSION), "class_name": np.array(type(est).__name__),
        "params": np.array(_json_params(est)),
        "has_user_classes": np.array(user_classes is not None),
        "user_classes": (np.asarray(user_classes).astype(classes.dtype) if user_classes is not None
                         else classes[:0]),
        "X_pool": est.X_pool_, "mean": est.mean_, "scale": est.scale_, "sigma": est.sigma_,
        "graph_indptr": W.indptr.astype(np.int64), "graph_indices": W.indices.astype(np.int64),
        "graph_data": W.data, "n_neighbors": np.array(est.n_neighbors_),
        "neighbor_algorithm": np.array(est.neighbor_algorithm_),
        "feature_names": (np.asarray(est.feature_names_in_).astype(str) if hasattr(est, "feature_names_in_")
                          else np.zeros(0, dtype=str)),
        "classes": classes, "codes": est.annotations_, "codes_sha256": np.array(_sha256(est.annotations_)),
        "counts": est._plain_counts(), "uncertainty": est.uncertainty_, "log": est.log_,
        "random_seed": np.array(est.random_seed_), "n_labels_seen": np.array(est.n_labels_seen_),
    }
    if hasattr(est, "propagated_evidence_"):
        arrays.update({
            "N": est.propagated_evidence_, "H": est._h, "tallies": est._tallies,
            "lambda_steps": np.array(-1 if est._lambda_steps is None else est._lambda_steps),
            "pt_indptr": est._pt[0], "pt_indices": est._pt[1], "pt_data": est._pt[2],
            "wt_indptr": est._wt[0], "wt_indices": est._wt[1], "wt_data": est._wt[2],
            "separate_h": np.array(est._separate_h),
        })
    return {prefix + k: v for k, v in arrays.items()}


def from_state_arrays(data, prefix="", expected_class=None, source=None):
    """Rebuild a fitted annotator from :func:`state_arrays` output (checks tag, version, checksum).

    Every failed check raises :class:`~sklearn_frontier.exceptions.StateFileError` naming ``source``
    (the file) and the check.
    """
    from sklearn.neighbors import NearestNeighbors

    def get(key):
        if prefix + key not in data:
            raise StateFileError(source, "missing member", f"the member {prefix + key!r} is missing.")
        return data[prefix + key]

    if prefix + "tag" not in data:
        raise StateFileError(source, "tag", f"not an annotator state file (no {prefix + 'tag'!r} member).")
    tag, version, name = str(get("tag")), int(get("version")), str(get("class_name"))
    if tag != _TAG:
        raise StateFileError(source, "tag", f"not an annotator state file (tag {tag!r}, expected {_TAG!r}).")
    if version not in _READABLE_VERSIONS:
        raise StateFileError(source, "version", f"unsupported annotator state version {version} (this "
                             f"sklearn_frontier reads versions {', '.join(map(str, _READABLE_VERSIONS))}).")
    try:
        return _rebuild(data, get, prefix, expected_class, source, name, NearestNeighbors)
    except StateFileError:
        raise
    except (ValueError, TypeError, IndexError) as exc:  # a member of the wrong shape or type
        raise StateFileError(source, "consistency", f"the members do not form a valid state: {exc}") from exc


def _rebuild(data, get, prefix, expected_class, source, name, NearestNeighbors):
    classes_by_name = _STATE_CLASSES
    if name not in classes_by_name:
        raise StateFileError(source, "tag", f"unknown annotator class {name!r}.")
    cls = classes_by_name[name]
    if expected_class is not None and not issubclass(cls, expected_class):
        raise ValueError(f"{source or 'The state'} holds a {name}, not a {expected_class.__name__}; load it with "
                         "sklearn_frontier.annotation.load_annotator.")
    params = json.loads(str(get("params")))
    if "prior" in params:
        params["prior"] = tuple(params["prior"])
    if bool(get("has_user_classes")):
        params["classes"] = get("user_classes")
    est = cls(**params)
    codes = np.array(get("codes"))
    if str(get("codes_sha256")) != _sha256(codes):
        raise StateFileError(source, "checksum", "the annotation codes do not match their checksum.")
    classes = np.array(get("classes"))
    counts = np.array(get("counts"))
    if counts.shape != (codes.shape[0], classes.size) or not np.array_equal(count_votes(codes, classes.size),
                                                                            counts):
        raise StateFileError(source, "consistency", "the vote counts do not match the annotation codes.")
    est.classes_ = classes
    est.annotations_ = codes
    est.n_annotators_ = codes.shape[1]
    est.X_pool_ = np.array(get("X_pool"))
    est.n_features_in_ = est.X_pool_.shape[1]
    names = np.array(get("feature_names"))
    if names.size:
        est.feature_names_in_ = names.astype(object)
    est.mean_, est.scale_, est.sigma_ = np.array(get("mean")), np.array(get("scale")), np.array(get("sigma"))
    n = codes.shape[0]
    est.graph_ = sp.csr_matrix((np.array(get("graph_data")), np.array(get("graph_indices")),
                                np.array(get("graph_indptr"))), shape=(n, n))
    est.n_neighbors_ = int(get("n_neighbors"))
    if prefix + "neighbor_algorithm" in data:
        est.neighbor_algorithm_ = str(get("neighbor_algorithm"))
    else:  # written before the approximate graph: always the exact search
        from sklearn_frontier.utils._graphs import resolve_knn_algorithm

        est.neighbor_algorithm_ = resolve_knn_algorithm("exact", n, est.X_pool_.shape[1], est.metric)
    est._nn_ = NearestNeighbors(n_neighbors=min(est.n_neighbors, n), metric=est.metric,
                                n_jobs=est.n_jobs).fit((est.X_pool_ - est.mean_) / est.scale_)
    est.counts_ = counts
    est.n_labels_ = counts.sum(axis=1).astype(np.int64)
    est.uncertainty_ = np.array(get("uncertainty"))
    est._log = np.array(get("log")).reshape(-1, 3).astype(np.int64)
    est.random_seed_ = int(get("random_seed"))
    est._tie_keys_ = _tie_keys(est.random_seed_, n)
    est.n_labels_seen_ = int(get("n_labels_seen"))
    if est._log.shape[0] != est.n_labels_seen_:
        raise StateFileError(source, "consistency", "the label log does not match the label counter.")
    if prefix + "N" in data:
        est.propagated_evidence_ = np.array(get("N"))
        est._h = np.array(get("H"))
        est._tallies = np.array(get("tallies"))
        steps = int(get("lambda_steps"))
        est._lambda_steps = None if steps < 0 else steps
        est._pt = tuple(np.ascontiguousarray(get(k)) for k in ("pt_indptr", "pt_indices", "pt_data"))
        est._wt = tuple(np.ascontiguousarray(get(k)) for k in ("wt_indptr", "wt_indices", "wt_data"))
        est._separate_h = bool(get("separate_h"))
    est._rebuild_index()
    return est


def save_state(est, path):
    atomic_savez(path, state_arrays(est))


def load_state(path, expected_class=None):
    return from_state_arrays(read_state_file(path), expected_class=expected_class, source=os.fspath(path))


def load_annotator(path):
    """Load any annotator saved by ``save_state`` (MA3S, round robin, random).

    Parameters
    ----------
    path : str or path-like
        File written by ``save_state``.

    Returns
    -------
    annotator : MA3SAnnotator, RoundRobinAnnotator or RandomAnnotator
        The fitted annotator, continuing bit-exactly.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from sklearn_frontier.annotation import RoundRobinAnnotator, load_annotator
    >>> X = np.arange(12.0).reshape(6, 2)
    >>> ann = RoundRobinAnnotator(n_neighbors=2, random_state=0).fit(X, [0, 1, 0, 1, 0, 1])
    >>> path = os.path.join(tempfile.mkdtemp(), "ann.npz")
    >>> _ = ann.save_state(path)
    >>> type(load_annotator(path)).__name__
    'RoundRobinAnnotator'
    """
    return load_state(path)


# -- journal -------------------------------------------------------------------------------------
def _label_json(label):
    if isinstance(label, np.generic):
        label = label.item()
    return json.dumps(label)


def journal_append(path, seq, tasks, annotators, labels):
    """Append ``seq task annotator label_json`` lines and fsync (before the labels are applied)."""
    with open(path, "a", encoding="utf-8") as fh:
        for t, (i, j, lab) in enumerate(zip(tasks, annotators, labels)):
            fh.write(f"{seq + t}\t{int(i)}\t{int(j)}\t{_label_json(lab)}\n")
        fh.flush()
        os.fsync(fh.fileno())


def replay_journal(annotator, path):
    """Apply a journal's labels to ``annotator``: fill empty cells, skip identical ones.

    A conflicting entry (a filled cell with another label) raises ValueError and applies nothing.

    Parameters
    ----------
    annotator : MA3SAnnotator, RoundRobinAnnotator or RandomAnnotator
        A fitted annotator; updated in place.
    path : str or path-like
        Journal file (``journal`` of :func:`run_annotation_loop`).

    Returns
    -------
    n_applied : int
        Number of labels newly recorded.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from sklearn_frontier.annotation import RoundRobinAnnotator, replay_journal
    >>> X = np.arange(12.0).reshape(6, 2)
    >>> ann = RoundRobinAnnotator(n_neighbors=2, classes=[0, 1], random_state=0).fit(X, np.full((6, 2), np.nan))
    >>> path = os.path.join(tempfile.mkdtemp(), "journal.tsv")
    >>> with open(path, "w") as fh:
    ...     _ = fh.write("0\\t0\\t0\\t1\\n1\\t3\\t1\\t0\\n")
    >>> replay_journal(ann, path)
    2
    """
    rows, cols, labels = [], [], []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.rstrip("\n")
            if not line:
                continue
            parts = line.split("\t")
            if len(parts) != 4:
                continue  # a torn last line: the label was never applied
            _, i, j, lab = parts
            rows.append(int(i))
            cols.append(int(j))
            labels.append(json.loads(lab))
    codes = annotator.annotations_
    new_rows, new_cols, new_labels = [], [], []
    from ._validation import encode_labels

    for i, j, lab in zip(rows, cols, labels):
        code = int(encode_labels(np.array([lab]), annotator.classes_)[0])
        if codes[i, j] >= 0:
            if codes[i, j] != code:
                raise ValueError(f"journal conflict at (sample {i}, annotator {j}): stored "
                                 f"{annotator.classes_[codes[i, j]]!r}, journal {lab!r}.")
            continue
        new_rows.append(i)
        new_cols.append(j)
        new_labels.append(lab)
    if new_rows:
        annotator.update(np.array(new_rows), np.array(new_labels, dtype=object if isinstance(new_labels[0], str)
                                                       else None), annotators=np.array(new_cols))
    return len(new_rows)
