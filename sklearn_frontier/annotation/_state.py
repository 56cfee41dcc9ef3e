"""The annotation state shared by MA3S and its baselines, and its atomic update.

All three share one state: a fixed pool ``X_pool_``, its local-scaling kNN graph, the annotation
matrix as integer codes (-1 = missing) and the vote counts. They differ only in the selection score.
"""

import numbers
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.metrics import accuracy_score
from sklearn.neighbors import NearestNeighbors
from sklearn.utils import check_random_state

from sklearn_frontier.utils._compat import (
    Interval,
    StrOptions,
    _fit_context,
    validate_data,
)
from sklearn_frontier.utils._graphs import local_scales, local_scaling_knn_graph, resolve_knn_algorithm

from ._keys import _kernels, _tie_keys
from ._persistence import load_state, save_state
from ._selection import _argmax_with_ties, _SelectionMixin
from ._validation import (
    _as_index_array,
    _check_fitted,
    as_annotation_matrix,
    count_votes,
    encode_annotation_matrix,
    encode_labels,
    missing_mask,
)


class _BaseAnnotator(_SelectionMixin, ClassifierMixin, BaseEstimator):
    """Shared state, validation, update, prediction and persistence of the annotators (query: the mixin).

    A new strategy subclasses this and overrides only these points (MA3S and the baselines do):

    - ``_validate_extra_params()``: checks of its own parameters beyond ``_parameter_constraints``; called first
      by ``fit``.
    - ``_init_scores()``: compute every item's score from ``counts_`` (and any state of its own) after ``fit``,
      ``partial_fit`` or a correction (default: each item's own margin uncertainty into ``uncertainty_``).
    - ``_selection_scores()``: the scores the query ranks, higher first (default: ``uncertainty_``).
    - ``_scores_at(rows)``: the same scores for some rows only. Override it with ``_selection_scores`` so that
      queries use the incremental heap; a subclass that overrides only ``_selection_scores`` (a model-based
      score, say) is ranked from scratch at every query.
    - ``_query_tie_keys()``: the keys that break ties between equal scores (default: the seeded hash keys).
    - ``_apply_counts(rows, codes)``: record new votes in ``counts_`` and rescore; return the rows whose score
      changed, or None when every score may have changed (default: the labelled rows).
    - ``_affected_rows(rows)``: the items whose scores those labels change (default: ``rows``; MA3S adds their
      graph neighbours), which is what an update snapshots so that it can be rolled back atomically.
    - ``_may_refresh_all()``: whether an update may rewrite every score (then the snapshot keeps them all).
    - ``_extra_snapshot(affected)`` / ``_extra_restore(snap)``: any further state to roll back with an update.

    The query machinery (eligibility, the heap, batches) is :class:`_SelectionMixin`'s.
    """

    _parameter_constraints = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "max_labels_per_sample": [Interval(Integral, 1, None, closed="left"), None],
        "aggregation": [StrOptions({"majority", "dawid_skene", "one_coin"})],
        "classes": ["array-like", None],
        "missing_label": "no_validation",
        "standardize": ["boolean"],
        "metric": [str, callable],
        "neighbor_algorithm": [StrOptions({"auto", "exact", "approximate"})],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
    }

    # -- fitting -----------------------------------------------------------------------------
    def _validate_extra_params(self):
        pass

    @property
    def _neighbor_algorithm(self):
        # subclasses written before the parameter existed (their own __init__) build exact graphs
        return getattr(self, "neighbor_algorithm", "exact")

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Build the pool graph and record the annotation matrix ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The pool.
        y : array-like of shape (n_samples,) or (n_samples, n_annotators)
            Annotation matrix: ``y[i, j]`` is annotator ``j``'s label of sample ``i`` or
            ``missing_label``. A 1-D ``y`` is one annotator.

        Returns
        -------
        self : object
            The fitted annotator.
        """
        return self._fit(X, y, self.classes)

    def _fit(self, X, y, classes):
        self._validate_extra_params()
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None.")
        X = validate_data(self, X, reset=True, dtype=np.float64, ensure_min_samples=2)
        codes, classes = encode_annotation_matrix(y, classes=classes, missing_label=self.missing_label,
                                                  n_samples=X.shape[0])
        self.classes_ = classes
        self.n_annotators_ = codes.shape[1]
        rng = check_random_state(self.random_state)
        self.random_seed_ = int(rng.randint(0, np.iinfo(np.int32).max))
        self.n_labels_seen_ = 0
        self._log = np.zeros((0, 3), dtype=np.int64)
        self._set_pool(X, codes)
        return self

    def _set_pool(self, X, codes):
        """Everything that follows from the pool and its codes: graph, tie keys, counts, scores."""
        self.annotations_ = codes
        self._build_pool(X)
        self._tie_keys_ = _tie_keys(self.random_seed_, X.shape[0])
        self.counts_ = count_votes(codes, self.classes_.size)
        self._vote_weights = None
        self.n_labels_ = self.counts_.sum(axis=1).astype(np.int64)
        self._init_scores()
        self._rebuild_index()

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None):
        """Append pool rows and their annotations; every earlier annotation is kept.

        The first call is :meth:`fit` (with ``classes`` as the label set if given). A later call
        appends ``X`` to the pool with its annotation rows ``y`` (same annotator columns; labels in
        ``classes_``; all-missing rows allowed), then rebuilds the graph, counts and scores: the state
        equals :meth:`fit` on the concatenated pool and annotation matrix (labels recorded through
        :meth:`update` included), with the same ``random_seed_``. Labels of existing rows arrive
        only through :meth:`update`.

        Parameters
        ----------
        X : array-like of shape (n_new, n_features)
            New pool rows (the same features as the first call).
        y : array-like of shape (n_new,) or (n_new, n_annotators)
            Their annotation rows (``missing_label`` for empty cells).
        classes : array-like, default=None
            The label set. On the first call it overrides ``classes``; later it must equal
            ``classes_``.

        Returns
        -------
        self : object
            The updated annotator.
        """
        if "counts_" not in self.__dict__:
            return self._fit(X, y, self.classes if classes is None else classes)
        if classes is not None:
            given = np.asarray(classes)
            if given.shape != self.classes_.shape or not np.all(given == self.classes_):
                raise ValueError(f"classes={given.tolist()!r} differs from classes_={self.classes_.tolist()!r} "
                                 "set by the first call to partial_fit.")
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None.")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        codes, _ = encode_annotation_matrix(y, classes=self.classes_, missing_label=self.missing_label,
                                            n_samples=X.shape[0], warn_column=self.n_annotators_ != 1)
        if codes.shape[1] != self.n_annotators_:
            raise ValueError(f"y has {codes.shape[1]} annotator columns, but the annotator was fitted with "
                             f"{self.n_annotators_}.")
        dtype = np.promote_types(self.annotations_.dtype, codes.dtype)
        self._set_pool(np.vstack([self.X_pool_, X]),
                       np.vstack([self.annotations_.astype(dtype), codes.astype(dtype)]))
        return self

    def _build_pool(self, X):
        n = X.shape[0]
        self.X_pool_ = X.copy()
        if self.standardize:
            self.mean_ = X.mean(axis=0)
            scale = X.std(axis=0)
            scale[scale == 0] = 1.0
            self.scale_ = scale
        else:
            self.mean_ = np.zeros(X.shape[1])
            self.scale_ = np.ones(X.shape[1])
        Z = (X - self.mean_) / self.scale_
        self.n_neighbors_ = int(min(self.n_neighbors, n - 1))
        self.neighbor_algorithm_ = resolve_knn_algorithm(self._neighbor_algorithm, n, X.shape[1], self.metric)
        W, dist, _ = local_scaling_knn_graph(Z, self.n_neighbors_, metric=self.metric, n_jobs=self.n_jobs,
                                             return_neighbors=True, algorithm=self.neighbor_algorithm_)
        self.graph_ = W
        self.sigma_ = local_scales(dist)
        self._nn_ = NearestNeighbors(n_neighbors=min(self.n_neighbors, n), metric=self.metric,
                                     n_jobs=self.n_jobs).fit(Z)

    # -- scores: the override points (see the class docstring) -----------------------------------
    def _own_uncertainty(self, rows=None):
        k = _kernels()
        rows = np.arange(self.counts_.shape[0]) if rows is None else rows
        return k.refresh_rows(self.counts_, self.counts_, 0.0, rows, 1.0, 1.0)

    def _init_scores(self):
        self.uncertainty_ = self._own_uncertainty()

    def _selection_scores(self):
        return self.uncertainty_

    def _query_tie_keys(self):
        return self._tie_keys_

    def _affected_rows(self, rows):
        return np.unique(rows)

    def _may_refresh_all(self):
        return False

    # -- properties ----------------------------------------------------------------------------

    @property
    def log_(self):
        """Append-only log of the labels received by :meth:`update`: (k, 3) rows (sample, annotator, code)."""
        _check_fitted(self)
        return self._log[: self.n_labels_seen_]

    @property
    def annotated_(self):
        """Boolean (n_samples, n_annotators) mask of filled cells."""
        _check_fitted(self)
        return self.annotations_ >= 0

    @property
    def evidence_(self):
        """Scored evidence per sample and class (the vote counts for this strategy)."""
        _check_fitted(self)
        return self.counts_

    @property
    def expected_errors_(self):
        """Sum of the uncertainties: a diagnostic of how many pool labels may still be wrong."""
        _check_fitted(self)
        return float(np.sum(self.uncertainty_))

    @property
    def labels_(self):
        """Aggregated label of every pool sample (``aggregation``; see :meth:`aggregate`)."""
        _check_fitted(self)
        return self.aggregate()

    def _aggregation_methods(self):
        return ("majority", "dawid_skene", "one_coin")

    def aggregate(self, method=None, return_proba=False):
        """Aggregate the pool's annotation matrix.

        Parameters
        ----------
        method : {"majority", "dawid_skene", "one_coin", "propagated", "majority_propagated"}, default=None
            Defaults to ``aggregation``.

            - "majority": the majority vote of the labels received; ties go to a seeded hash key (no graph).
            - "dawid_skene", "one_coin": Dawid–Skene posteriors (full confusion matrices, or one accuracy per
              worker).
            - "propagated" (MA3S only): the argmax of ``evidence_``, the sample's own votes plus ``lambda`` times
              its graph neighbours' votes.
            - "majority_propagated" (MA3S only): the majority vote where it decides; ties and unlabelled samples
              take the argmax of ``evidence_``.

            Samples nobody labelled get ``missing_label`` (NaN by default; uniform soft labels), except under
            the two propagated methods, which fill them from the graph.
        return_proba : bool, default=False
            Also return the (n_samples, n_classes) soft labels.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Aggregated label of every pool sample; float with NaN (or object with ``missing_label``) when some
            sample has no label and the method does not fill it.
        proba : ndarray of shape (n_samples, n_classes)
            Soft labels, returned only if ``return_proba``.
        """
        _check_fitted(self)
        method = self.aggregation if method is None else method
        if method not in self._aggregation_methods():
            raise ValueError(f"Unknown aggregation method {method!r} for {type(self).__name__}; choose one of "
                             f"{list(self._aggregation_methods())}.")
        K = self.classes_.size
        if method in ("dawid_skene", "one_coin"):
            from ._aggregation import _dawid_skene_codes

            proba, _ = _dawid_skene_codes(self.annotations_, K,
                                          model="full" if method == "dawid_skene" else "one_coin")
            codes = np.argmax(proba, axis=1)
        else:
            E = self.evidence_
            if method == "majority":
                primary, secondary = self._plain_counts(), np.zeros_like(self.counts_)
            elif method == "propagated":
                primary, secondary = E, E
            else:
                primary, secondary = self._plain_counts(), E
            codes = _argmax_with_ties(primary, secondary, self._tie_keys_)
            proba = (primary + 1.0 / K) / (primary.sum(axis=1, keepdims=True) + 1.0)
        labels = self._labels_of(codes, fill=method in ("propagated", "majority_propagated"))
        if return_proba:
            if not method.endswith("propagated"):
                proba = np.where((self.n_labels_ > 0)[:, None], proba, 1.0 / K)
            return labels, proba
        return labels

    def _labels_of(self, codes, fill):
        """``classes_[codes]``, with ``missing_label`` for unlabelled samples unless ``fill``."""
        labelled = self.n_labels_ > 0
        if fill or labelled.all():
            return self.classes_[codes]
        out = self._missing_array(codes.shape)
        out[labelled] = self.classes_[codes[labelled]]
        return out

    def _missing_array(self, shape):
        if self.classes_.dtype.kind in "iufb" and (self.missing_label is None or
                                                   isinstance(self.missing_label, numbers.Real)):
            return np.full(shape, np.nan if self.missing_label is None else self.missing_label, dtype=float)
        return np.full(shape, self.missing_label, dtype=object)

    def soft_labels(self):
        """Normalized evidence plus the uniform prior, for noisy-label training.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Soft label of every pool sample; each row sums to one.
        """
        _check_fitted(self)
        E = self.evidence_
        K = self.classes_.size
        return (E + 1.0 / K) / (E.sum(axis=1, keepdims=True) + 1.0)

    def get_annotation_matrix(self):
        """Return the annotation matrix with labels and ``missing_label`` for empty cells.

        Returns
        -------
        Y : ndarray of shape (n_samples, n_annotators)
            Labels (object or numeric dtype); empty cells hold ``missing_label``.
        """
        _check_fitted(self)
        codes = self.annotations_
        mask = codes >= 0
        out = self._missing_array(codes.shape)
        out[mask] = self.classes_[codes[mask]]
        return out

    def to_long(self, as_frame=None):
        """Return the annotations in long (task, worker, label) format.

        Parameters
        ----------
        as_frame : bool, default=None
            Return a pandas DataFrame; passed on to :func:`to_long_format`.

        Returns
        -------
        long : ndarray or DataFrame
            One row per filled cell: (task, worker, label), as :func:`to_long_format` returns.
        """
        from ._formats import to_long_format

        return to_long_format(self.get_annotation_matrix(), missing_label=self.missing_label, as_frame=as_frame)

    # -- update ----------------------------------------------------------------------------------
    def update(self, indices, labels, annotators=None):
        """Record new labels, atomically: any invalid entry raises ValueError and changes nothing.

        Parameters
        ----------
        indices : array-like of int, shape (k,)
            Pool samples.
        labels : array-like of shape (k,)
            Their labels (in ``classes_``).
        annotators : array-like of int, shape (k,), default=None
            Annotator (column) of each label; None fills the lowest free cell of each sample.

        Returns
        -------
        self : object
            The updated annotator.
        """
        _check_fitted(self)
        codes_matrix = self.annotations_
        n, m = codes_matrix.shape
        rows = _as_index_array(indices, n, "indices")
        labels = np.asarray(labels, dtype=object if np.asarray(labels).dtype.kind == "O" else None)
        if labels.ndim == 0:
            labels = labels.reshape(1)
        if labels.ndim != 1 or labels.shape[0] != rows.shape[0]:
            raise ValueError(f"labels must be 1-D with one label per index, got {labels.shape} for "
                             f"{rows.shape[0]} indices.")
        if rows.size == 0:
            return self
        if missing_mask(labels, self.missing_label).any():
            raise ValueError("update received a missing label; only real labels can be recorded.")
        codes = encode_labels(labels, self.classes_)
        if annotators is None:
            cols = np.empty(rows.size, dtype=np.int64)
            claimed = {}
            for t, i in enumerate(rows):
                taken = claimed.setdefault(int(i), set())
                free = [j for j in np.flatnonzero(codes_matrix[i] < 0) if j not in taken]
                if not free:
                    raise ValueError(f"sample {int(i)} has no free annotator cell left.")
                cols[t] = free[0]
                taken.add(int(free[0]))
        else:
            cols = _as_index_array(annotators, m, "annotators")
            if cols.shape != rows.shape:
                raise ValueError("annotators must have one entry per index.")
            if np.any(codes_matrix[rows, cols] >= 0):
                raise ValueError("update would overwrite an existing label (cell already filled).")
            pairs = rows * m + cols
            if np.unique(pairs).size != pairs.size:
                raise ValueError("update received the same (sample, annotator) cell twice.")
        # Phase 2: snapshot what can change, write, restore on any exception (KeyboardInterrupt too).
        snapshot = self._snapshot(rows)
        try:
            self._write_labels(rows, cols, codes)
        except BaseException:
            self._restore(snapshot, rows, cols)
            raise
        return self

    def _snapshot(self, rows):
        affected = self._affected_rows(rows)
        return {
            "affected": affected,
            "counts": self.counts_[affected].copy(),
            "uncertainty": (self.uncertainty_.copy() if self._may_refresh_all()
                            else self.uncertainty_[affected].copy()),
            "n_labels": self.n_labels_[np.unique(rows)].copy(),
            "n_labels_seen": self.n_labels_seen_,
            **self._extra_snapshot(affected),
        }

    def _extra_snapshot(self, affected):
        return {}

    def _restore(self, snap, rows, cols):
        self.annotations_[rows, cols] = -1
        self.counts_[snap["affected"]] = snap["counts"]
        if snap["uncertainty"].shape == self.uncertainty_.shape and self._may_refresh_all():
            self.uncertainty_ = snap["uncertainty"]
        else:
            self.uncertainty_[snap["affected"]] = snap["uncertainty"]
        self.n_labels_[np.unique(rows)] = snap["n_labels"]
        self.n_labels_seen_ = snap["n_labels_seen"]  # the log buffer beyond it is ignored
        self._extra_restore(snap)
        self._rebuild_index()

    def _extra_restore(self, snap):
        pass

    def _write_labels(self, rows, cols, codes):
        self.annotations_[rows, cols] = codes
        np.add.at(self.n_labels_, rows, 1)
        touched = self._apply_counts(rows, codes)
        self._index_touch(touched)
        self._append_log(rows, cols, codes)

    def _append_log(self, rows, cols, codes):
        start, stop = self.n_labels_seen_, self.n_labels_seen_ + int(rows.size)
        if stop > self._log.shape[0]:  # amortized O(1) appends
            grown = np.zeros((max(2 * self._log.shape[0], stop, 64), 3), dtype=np.int64)
            grown[:start] = self._log[:start]
            self._log = grown
        self._log[start:stop] = np.stack([rows, cols, codes], axis=1)
        self.n_labels_seen_ = stop

    # -- hooks of AnnotationSession: workers who join, corrections, a shared seed ---------------------
    def _add_annotators(self, n_new):
        """Append ``n_new`` empty annotator columns (workers who joined after fit)."""
        m = self.n_annotators_
        grown = np.full((self.annotations_.shape[0], m + int(n_new)), -1, dtype=self.annotations_.dtype)
        grown[:, :m] = self.annotations_
        self.annotations_ = grown
        self.n_annotators_ = m + int(n_new)
        self._index_touch(np.flatnonzero(self.n_labels_ >= m))  # the rows that were full may be eligible now

    def _replace_labels(self, rows, cols, codes):
        """Overwrite filled cells (corrections), then recount the votes and rescore every item.

        A correction takes a vote away, which the online update cannot; corrections are rare, so every score
        is recomputed from the codes, as ``fit`` would.
        """
        rows, cols, codes = (np.asarray(a, dtype=np.int64) for a in (rows, cols, codes))
        if np.any(self.annotations_[rows, cols] < 0):
            raise ValueError("a correction needs a label to replace.")
        self.annotations_[rows, cols] = codes
        self.counts_ = count_votes(self.annotations_, self.classes_.size)
        self._vote_weights = None
        self.n_labels_ = self.counts_.sum(axis=1).astype(np.int64)
        self._init_scores()
        self._rebuild_index()
        self._append_log(rows, cols, codes)

    def _set_vote_weights(self, weights):
        """Count each annotator column's votes with a weight (the session's worker reliability), then rescore.

        The plain vote (``aggregate("majority")``) still counts every label once; labels received later count
        once until the next call.
        """
        w = np.asarray(weights, dtype=float)
        codes = self.annotations_
        rows, cols = np.nonzero(codes >= 0)
        C = np.zeros_like(self.counts_)
        np.add.at(C, (rows, codes[rows, cols]), w[cols])
        self.counts_ = C
        self._vote_weights = w
        self._init_scores()
        self._rebuild_index()

    def _weigh_new_votes(self, rows, cols, codes):
        """Give labels just recorded at weight 1 their column's weight (columns beyond the weights keep 1)."""
        w = getattr(self, "_vote_weights", None)
        if w is None:
            return
        rows, cols, codes = (np.asarray(a, dtype=np.int64) for a in (rows, cols, codes))
        weight = np.ones(cols.size)
        known = cols < w.size
        weight[known] = w[cols[known]]
        keep = weight != 1.0
        if keep.any():
            self._index_touch(self._shift_votes(rows[keep], codes[keep], weight[keep] - 1.0))

    def _shift_votes(self, rows, codes, delta):
        """Add ``delta`` to some vote counts and rescore; return the rows whose score changed (None: all)."""
        np.add.at(self.counts_, (rows, codes), delta)
        touched = np.unique(rows)
        self.uncertainty_[touched] = self._own_uncertainty(touched)
        return touched

    def _plain_counts(self):
        """One vote per label, whatever weights the session gave the counts."""
        if getattr(self, "_vote_weights", None) is None:
            return self.counts_
        return count_votes(self.annotations_, self.classes_.size)

    def _reseed(self, seed):
        """Use ``seed`` as ``random_seed_`` (every process serving one store ranks ties alike)."""
        self.random_seed_ = int(seed)
        self._tie_keys_ = _tie_keys(self.random_seed_, self.annotations_.shape[0])
        self._rebuild_index()

    def _apply_counts(self, rows, codes):
        """Record the votes and rescore; return the rows whose score changed (None: all)."""
        np.add.at(self.counts_, (rows, codes), 1.0)
        touched = np.unique(rows)
        self.uncertainty_[touched] = self._own_uncertainty(touched)
        return touched

    # -- prediction -------------------------------------------------------------------------------
    def predict_proba(self, X):
        """Class probabilities of new rows from their nearest pool samples' votes (inductive).

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            New rows.

        Returns
        -------
        proba : ndarray of shape (n_queries, n_classes)
            Class probabilities of each row.
        """
        _check_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        Z = (X - self.mean_) / self.scale_
        dist, idx = self._nn_.kneighbors(Z)
        floor = np.min(self.sigma_)
        sigma_x = np.maximum(dist[:, -1], floor)
        w = np.exp(-(dist**2) / (sigma_x[:, None] * self.sigma_[idx]))
        sums = w.sum(axis=1, keepdims=True)
        under = sums[:, 0] <= 0
        w[under] = 1.0
        sums[under] = w.shape[1]
        w /= sums
        s = np.einsum("qk,qkc->qc", w, self.counts_[idx])
        K = self.classes_.size
        return (s + 1.0 / K) / (s.sum(axis=1, keepdims=True) + 1.0)

    def predict(self, X):
        """Most probable class of each row (ties to the lowest class code).

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            New rows.

        Returns
        -------
        y : ndarray of shape (n_queries,)
            Predicted class of each row.
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def score(self, X, y, sample_weight=None):
        """Accuracy of ``predict(X)``; a 2-D ``y`` is scored against its majority vote (seeded ties).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Test rows.
        y : array-like of shape (n_samples,) or (n_samples, n_annotators)
            True labels, or an annotation matrix.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights.

        Returns
        -------
        score : float
            Mean accuracy.
        """
        from ._aggregation import majority_vote

        Y = as_annotation_matrix(y, warn_column=False)
        pred = self.predict(X)
        mask = missing_mask(Y, self.missing_label)
        if Y.shape[1] == 1 and not mask.any():
            return accuracy_score(Y[:, 0], pred, sample_weight=sample_weight)
        truth = majority_vote(Y, classes=self.classes_, missing_label=self.missing_label, tie_break="random",
                              empty="missing", random_state=0)
        keep = (~mask).any(axis=1)
        weights = None if sample_weight is None else np.asarray(sample_weight)[keep]
        return accuracy_score(self.classes_[encode_labels(truth[keep], self.classes_)], pred[keep],
                              sample_weight=weights)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags

    # -- persistence ------------------------------------------------------------------------------
    def save_state(self, path):
        """Write the full state to a pickle-free ``.npz`` file (atomically); see :func:`load_annotator`.

        Parameters
        ----------
        path : str or path-like
            Destination file.

        Returns
        -------
        path : str or path-like
            The ``path`` written.
        """
        save_state(self, path)
        return path

    @classmethod
    def load_state(cls, path):
        """Rebuild a fitted annotator from :meth:`save_state`'s file (bit-exact continuation).

        Parameters
        ----------
        path : str or path-like
            File written by :meth:`save_state`.

        Returns
        -------
        annotator : object
            The restored fitted annotator.
        """
        return load_state(path, expected_class=cls)
