"""MA3S active annotation and its baselines (round robin, random, label uncertainty).

All three share one state: a fixed pool ``X_pool_``, its local-scaling kNN graph, the annotation
matrix as integer codes (-1 = missing) and the vote counts. They differ only in the selection score.
"""

import numbers
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.metrics import accuracy_score
from sklearn.neighbors import NearestNeighbors
from sklearn.utils import check_random_state

from sklearn_frontier.utils._compat import (
    InvalidParameterError,
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
    validate_data,
)
from sklearn_frontier.utils._graphs import local_scales, local_scaling_knn_graph

from ._validation import as_annotation_matrix, count_votes, encode_annotation_matrix, encode_labels, missing_mask

_KEY_SCALE = 1e9
_LAMBDA_MAX = 1.0
_LAMBDA_GRID = 20


def _kernels():
    from sklearn_frontier.kernels import annotation

    return annotation


def _tie_keys(seed, n):
    k = _kernels()
    base = k.splitmix64_keys(np.array([seed], dtype=np.uint64))[0]
    return k.splitmix64_keys(base ^ np.arange(n, dtype=np.uint64))


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


class _BaseAnnotator(ClassifierMixin, BaseEstimator):
    """Shared state, validation, query, update, prediction and persistence of the annotators."""

    _parameter_constraints = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "max_labels_per_sample": [Interval(Integral, 1, None, closed="left"), None],
        "aggregation": [StrOptions({"majority", "dawid_skene", "one_coin"})],
        "classes": ["array-like", None],
        "missing_label": "no_validation",
        "standardize": ["boolean"],
        "metric": [str, callable],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
    }

    # -- fitting -----------------------------------------------------------------------------
    def _validate_extra_params(self):
        pass

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
        # Exact brute force (GEMM blocks) beats the trees from about 8 features (3x at d = 10, n = 1e5).
        algorithm = "brute" if X.shape[1] >= 8 and self.metric == "euclidean" else "auto"
        W, dist, _ = local_scaling_knn_graph(Z, self.n_neighbors_, metric=self.metric, n_jobs=self.n_jobs,
                                             return_neighbors=True, algorithm=algorithm)
        self.graph_ = W
        self.sigma_ = local_scales(dist)
        self._nn_ = NearestNeighbors(n_neighbors=min(self.n_neighbors, n), metric=self.metric,
                                     n_jobs=self.n_jobs).fit(Z)

    # -- scores (overridden) -------------------------------------------------------------------
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

    def _refresh_after_labels(self, rows, codes):
        touched = np.unique(rows)
        self.counts_[rows, codes] += 0  # counts already written by _write_labels
        self.uncertainty_[touched] = self._own_uncertainty(touched)

    def _affected_rows(self, rows):
        return np.unique(rows)

    # -- properties ----------------------------------------------------------------------------
    def _may_refresh_all(self):
        return False

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
        """Aggregated label of every pool sample (``aggregation``)."""
        _check_fitted(self)
        return self.aggregate()

    def aggregate(self, method=None, return_proba=False):
        """Aggregate the pool's annotation matrix.

        Parameters
        ----------
        method : {"majority", "propagated", "dawid_skene", "one_coin"}, default=None
            Defaults to ``aggregation``. "propagated" (MA3S only) takes the argmax of ``evidence_``.
        return_proba : bool, default=False
            Also return the (n_samples, n_classes) soft labels.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Aggregated label of every pool sample.
        proba : ndarray of shape (n_samples, n_classes)
            Soft labels, returned only if ``return_proba``.
        """
        _check_fitted(self)
        method = self.aggregation if method is None else method
        K = self.classes_.size
        if method in ("majority", "propagated"):
            E = self.evidence_
            primary = self.counts_ if method == "majority" else E
            codes = _argmax_with_ties(primary, E, self._tie_keys_)
            if return_proba:
                proba = (primary + 1.0 / K) / (primary.sum(axis=1, keepdims=True) + 1.0)
                return self.classes_[codes], proba
            return self.classes_[codes]
        if method in ("dawid_skene", "one_coin"):
            from ._aggregation import _dawid_skene_codes

            T, _ = _dawid_skene_codes(self.annotations_, K, model="full" if method == "dawid_skene" else "one_coin")
            codes = np.argmax(T, axis=1)
            return (self.classes_[codes], T) if return_proba else self.classes_[codes]
        raise ValueError(f"Unknown aggregation method {method!r}.")

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
        if self.classes_.dtype.kind in "iufb" and (self.missing_label is None or
                                                   isinstance(self.missing_label, numbers.Real)):
            out = np.full(codes.shape, np.nan if self.missing_label is None else self.missing_label, dtype=float)
        else:
            out = np.full(codes.shape, self.missing_label, dtype=object)
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

    # -- query -----------------------------------------------------------------------------------
    def _eligible(self, candidates, annotators):
        n = self.annotations_.shape[0]
        cand = _as_selection_mask(candidates, n, "candidates")
        cols = _as_selection_mask(annotators, self.n_annotators_, "annotators")
        if annotators is None:  # a row's filled cells are its labels
            free = self.n_labels_ < self.n_annotators_
        else:
            free = (self.annotations_[:, cols] < 0).any(axis=1)
        eligible = cand & free
        cap = self.max_labels_per_sample
        if cap is not None:
            eligible &= self.n_labels_ < cap
        return eligible, cols

    def _stop_mask(self):
        return None

    def query(self, batch_size=None, *, candidates=None, annotators=None, return_utilities=False):
        """Pool indices that should get their next label, best first.

        Parameters
        ----------
        batch_size : int, default=None
            How many distinct samples (default ``self.batch_size``).
        candidates : array-like of int or bool mask, default=None
            Restrict the choice to these samples.
        annotators : array-like of int or bool mask, default=None
            Only samples with a free cell among these annotators are eligible.
        return_utilities : bool, default=False
            Also return (batch_size, n_samples) utilities (NaN = not choosable).

        Returns
        -------
        indices : ndarray of int64, shape (b,)
            Chosen samples, ``b <= batch_size`` (empty when nothing is eligible).
        utilities : ndarray of shape (b, n_samples)
            Utilities of each pick (NaN = not choosable), returned only if ``return_utilities``.
        """
        _check_fitted(self)
        b = self.batch_size if batch_size is None else batch_size
        if not isinstance(b, numbers.Integral) or isinstance(b, bool) or b < 1:
            raise ValueError(f"batch_size must be an integer >= 1, got {b!r}.")
        if candidates is None and annotators is None and not return_utilities and self._incremental_keys():
            return np.asarray(self._select_indexed(self._ensure_index(), int(b)), dtype=np.int64)
        eligible, _ = self._eligible(candidates, annotators)
        stop = self._stop_mask()
        if stop is not None:
            eligible &= stop
        scores = np.asarray(self._selection_scores(), dtype=np.float64)
        q = np.rint(scores * _KEY_SCALE).astype(np.int64)
        r = self._query_tie_keys()
        picks, utilities = self._select(q, r, eligible, int(b), scores, return_utilities)
        picks = np.asarray(picks, dtype=np.int64)
        if return_utilities:
            return picks, utilities
        return picks

    # -- selection index: keys, eligibility and a heap, kept up to date on the touched rows --------------
    def _incremental_keys(self):
        """Whether an update changes the selection keys of the touched rows only (GRR, LU, MA3S-E).

        A subclass with its own ``_selection_scores`` (e.g. a model-based score) falls back to ranking
        every row at each query unless it also says how to rescore rows (``_scores_at``).
        """
        def owner(name):
            return next(k for k in type(self).__mro__ if name in k.__dict__)

        return issubclass(owner("_scores_at"), owner("_selection_scores"))

    def _stop_rows(self, rows):
        return None

    def _eligible_rows(self, rows):
        ok = self.n_labels_[rows] < self.n_annotators_
        if self.max_labels_per_sample is not None:
            ok &= self.n_labels_[rows] < self.max_labels_per_sample
        stop = self._stop_rows(rows)
        return ok if stop is None else ok & stop

    def _scores_at(self, rows):
        return np.asarray(self._selection_scores(), dtype=np.float64)[rows]

    def _index_params(self):
        return (self.max_labels_per_sample, getattr(self, "stop_threshold", None))

    def _rebuild_index(self):
        self._index = None
        if self._incremental_keys():
            self._ensure_index()

    def _ensure_index(self):
        """The selection index, built in O(n log n) at fit (again only if set_params made it stale)."""
        index = self.__dict__.get("_index")
        if index is not None and index["params"] == self._index_params():
            return index
        n = self.n_labels_.shape[0]
        rows = np.arange(n)
        q = np.rint(self._scores_at(rows) * _KEY_SCALE).astype(np.int64)
        eligible = self._eligible_rows(rows)
        members = np.flatnonzero(eligible)
        heap, pos, q, size = _kernels().heap_update(np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64),
                                                    0, q, self._tie_keys_, members, q[members],
                                                    np.ones(members.size, dtype=bool), inplace=True)
        index = {"q": q, "eligible": eligible, "heap": heap, "pos": pos, "size": size,
                 "slot": np.full(n, -1, dtype=np.int64), "params": self._index_params()}
        self._index = index
        return index

    def _index_touch(self, rows):
        """Re-key the rows whose score or eligibility an update changed (None: all of them)."""
        index = self.__dict__.get("_index")
        if index is None or not self._incremental_keys():
            return
        if rows is None:
            self._rebuild_index()
            return
        rows = np.unique(rows)
        eligible = self._eligible_rows(rows)
        q = np.rint(self._scores_at(rows) * _KEY_SCALE).astype(np.int64)
        index["eligible"][rows] = eligible
        *_, index["size"] = _kernels().heap_update(index["heap"], index["pos"], index["size"], index["q"],
                                                   self._tie_keys_, rows, q, eligible, inplace=True)

    def _select_indexed(self, index, b):
        return _kernels().select_top(index["q"], self._tie_keys_, index["eligible"], index["heap"], index["pos"],
                                     index["size"], b)

    def _select(self, q, r, eligible, b, scores, return_utilities):
        picks = _top_sorted(q, r, eligible, b)
        utilities = None
        if return_utilities:
            utilities = np.full((picks.size, eligible.size), np.nan)
            avail = eligible.copy()
            for t, i in enumerate(picks):
                utilities[t, avail] = scores[avail]
                avail[i] = False
        return picks, utilities

    def query_pairs(self, batch_size=None, *, candidates=None, annotators=None):
        """Return (sample, free annotator) pairs to ask next; the annotator is hash-uniform.

        Parameters
        ----------
        batch_size : int, default=None
            How many distinct samples (default ``self.batch_size``).
        candidates : array-like of int or bool mask, default=None
            Restrict the choice to these samples.
        annotators : array-like of int or bool mask, default=None
            Only these annotators are asked.

        Returns
        -------
        pairs : ndarray of int64, shape (b, 2)
            Rows (sample, annotator) to label next, best sample first.
        """
        picks = self.query(batch_size, candidates=candidates, annotators=annotators)
        _, cols = self._eligible(None, annotators)
        k = _kernels()
        salt = k.splitmix64_keys(self._tie_keys_[picks] ^ np.uint64(self.n_labels_seen_ + 0x5bd1e995))
        out = np.empty((picks.size, 2), dtype=np.int64)
        for t, i in enumerate(picks):
            free = np.flatnonzero((self.annotations_[i] < 0) & cols)
            out[t] = i, free[int(salt[t] % np.uint64(free.size))]
        return out

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
        start, stop = self.n_labels_seen_, self.n_labels_seen_ + int(rows.size)
        if stop > self._log.shape[0]:  # amortized O(1) appends
            grown = np.zeros((max(2 * self._log.shape[0], stop, 64), 3), dtype=np.int64)
            grown[:start] = self._log[:start]
            self._log = grown
        self._log[start:stop] = np.stack([rows, cols, codes], axis=1)
        self.n_labels_seen_ = stop

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
        from ._persistence import save_state

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
        from ._persistence import load_state

        return load_state(path, expected_class=cls)


def _top_sorted(q, r, eligible, b):
    """The first ``b`` eligible rows ranked by (q desc, r desc, index asc), in rank order; O(n)."""
    from sklearn_frontier.kernels._annotation_reference import select_top

    return select_top(q, r, eligible, None, None, 0, b)


def _argmax_with_ties(primary, secondary, tie_keys):
    """Row-wise argmax of ``primary``; ties to the larger ``secondary``, then the hashed key."""
    n, K = primary.shape
    best = primary.max(axis=1, keepdims=True)
    cand = primary >= best
    if K > 1 and np.any(cand.sum(axis=1) > 1):
        sec = np.where(cand, secondary, -np.inf)
        cand &= sec >= sec.max(axis=1, keepdims=True)
        multi = cand.sum(axis=1) > 1
        if np.any(multi):
            k = _kernels()
            rows = np.flatnonzero(multi)
            h = k.splitmix64_keys(tie_keys[rows][:, None] ^ np.arange(K, dtype=np.uint64)[None, :])
            h = np.where(cand[rows], h, np.uint64(0))
            sub = cand[rows] & (h >= h.max(axis=1, keepdims=True))
            cand[rows] = sub
    return np.argmax(cand, axis=1)


_BASE_PARAMS_DOC = """
    n_neighbors : int, default=10
        Neighbours of the pool's kNN graph (clipped to n_samples - 1) and of inductive prediction.
    batch_size : int, default=1
        Default number of samples returned by :meth:`query`.
    max_labels_per_sample : int, default=None
        Samples with this many labels are no longer queried.
    aggregation : {"majority", "dawid_skene", "one_coin"}, default="majority"
        How ``labels_`` aggregates the annotation matrix.
    classes : array-like, default=None
        The label set (default: the observed labels).
    missing_label : scalar, default=np.nan
        Marker of a missing label (None, NaN, pandas NA are missing in object arrays too).
    standardize : bool, default=True
        Standardize X by the pool mean and std before building the graph.
    metric : str or callable, default="euclidean"
        Distance of the kNN graph.
    n_jobs : int, default=None
        Parallel neighbour search.
    random_state : int, RandomState instance or None, default=None
        Seeds the hashed tie-breaking keys (drawn once per fit).
"""


class RoundRobinAnnotator(_BaseAnnotator):
    __doc__ = """Generalized round robin (GRR): the sample with the fewest labels gets the next one.

    Ties are broken by seeded hash keys, so a run is reproducible. Same API as :class:`MA3SAnnotator`.

    Parameters
    ----------""" + _BASE_PARAMS_DOC + """
    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    annotations_ : ndarray of shape (n_samples, n_annotators)
        Integer codes into ``classes_``, -1 for missing.
    counts_ : ndarray of shape (n_samples, n_classes)
        Vote counts.
    n_labels_ : ndarray of shape (n_samples,)
    uncertainty_ : ndarray of shape (n_samples,)
        Own-count label uncertainty (diagnostic; not used for selection).
    n_labels_seen_ : int
        Labels received through :meth:`update` since fit.
    random_seed_ : int
    graph_ : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when X has string column names.

    See Also
    --------
    MA3SAnnotator : Graph-propagated margin-Beta uncertainty.
    RandomAnnotator : Uniformly random selection.

    References
    ----------
    Sheng, Provost & Ipeirotis, "Get another label?", KDD 2008.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.annotation import RoundRobinAnnotator
    >>> X = np.arange(12.0).reshape(6, 2)
    >>> Y = np.array([[0, 1], [0, np.nan], [1, np.nan], [np.nan] * 2, [1, 1], [0, 0]])
    >>> ann = RoundRobinAnnotator(n_neighbors=2, random_state=0).fit(X, Y)
    >>> int(ann.query()[0])
    3
    """

    def __init__(self, n_neighbors=10, *, batch_size=1, max_labels_per_sample=None, aggregation="majority",
                 classes=None, missing_label=np.nan, standardize=True, metric="euclidean", n_jobs=None,
                 random_state=None):
        self.n_neighbors = n_neighbors
        self.batch_size = batch_size
        self.max_labels_per_sample = max_labels_per_sample
        self.aggregation = aggregation
        self.classes = classes
        self.missing_label = missing_label
        self.standardize = standardize
        self.metric = metric
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _selection_scores(self):
        return -self.n_labels_.astype(np.float64)

    def _scores_at(self, rows):
        return -self.n_labels_[rows].astype(np.float64)


class RandomAnnotator(RoundRobinAnnotator):
    __doc__ = """Uniformly random selection among eligible samples (a seeded hash per query).

    Parameters
    ----------""" + _BASE_PARAMS_DOC + """
    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    annotations_ : ndarray of shape (n_samples, n_annotators)
    counts_ : ndarray of shape (n_samples, n_classes)
    uncertainty_ : ndarray of shape (n_samples,)
    n_labels_seen_ : int
    n_features_in_ : int

    See Also
    --------
    RoundRobinAnnotator : Fewest-labels-first selection.
    MA3SAnnotator : Graph-propagated margin-Beta uncertainty.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.annotation import RandomAnnotator
    >>> X = np.arange(12.0).reshape(6, 2)
    >>> ann = RandomAnnotator(n_neighbors=2, random_state=0).fit(X, [0, 1, 0, 1, 0, 1])
    >>> ann.query(batch_size=6).size  # every sample has its only cell filled
    0
    """

    def _selection_scores(self):
        return np.zeros(self.n_labels_.shape[0])

    def _query_tie_keys(self):
        return _kernels().splitmix64_keys(self._tie_keys_ ^ np.uint64(self.n_labels_seen_))

    def _incremental_keys(self):
        return False  # the tie keys are re-hashed at every query


class MA3SAnnotator(_BaseAnnotator):
    """Model-agnostic active annotation: graph-propagated margin-Beta uncertainty (MA3S).

    Each sample's uncertainty is ``I_{1/2}(a + alpha0, b + beta0)``, the posterior probability that
    the leading class of its evidence would lose a fresh head-to-head vote against the runner-up
    (``a``, ``b``: top two entries of the evidence). Under ``propagation="evidence"`` the evidence is
    the sample's own votes plus ``lambda`` times its graph neighbours' votes, so a confidently labelled
    sample makes its near-duplicates certain too and they are not annotated over and over. No model
    is trained in the loop. ``propagation="none"`` is Sheng et al.'s label uncertainty (LU).

    Parameters
    ----------
    n_neighbors : int, default=10
        Neighbours of the pool's kNN graph (clipped to n_samples - 1) and of inductive prediction.
    propagation : {"evidence", "uncertainty", "none"}, default="evidence"
        "evidence": neighbours' votes as pseudo-counts (online, exact); "uncertainty": smooth the
        uncertainties over the graph; "none": own votes only (LU).
    propagation_strength : float >= 0 or "auto", default=1.0
        ``lambda``. "auto" estimates it from a homophily z-test of the labels over the graph (0 when
        features carry no label signal, 1 otherwise), kept exact online.
    n_propagation_steps : int, default=None
        Powers of the graph: 1 for "evidence" (at most 3), 10 smoothing steps for "uncertainty".
    propagation_decay : float in (0, 1], default=0.5
        Weight ``gamma^(t-1)`` of the t-th power.
    smoothing : float in [0, 1), default=0.5
        Smoothing weight of "uncertainty".
    prior : tuple of two positive floats, default=(1.0, 1.0)
        Beta prior ``(alpha0, beta0)`` of the margin.
    batch_size : int, default=1
        Default number of samples per :meth:`query`.
    batch_diversity : bool, default=True
        Within a batch, add a virtual vote for each pick's leader before the next pick ("kriging
        believer"), so a batch does not land on one neighbourhood. "evidence" only.
    diversity_weight : float >= 0, default=1.0
        Weight of the virtual vote.
    stop_threshold : float in [0, 1], default=None
        Only samples with uncertainty >= threshold are returned; empty means done.
    max_labels_per_sample : int, default=None
        Samples with this many labels are no longer queried.
    aggregation : {"majority", "propagated", "dawid_skene", "one_coin"}, default="majority"
        How ``labels_`` aggregates.
    classes : array-like, default=None
        The label set (default: the observed labels).
    missing_label : scalar, default=np.nan
        Marker of a missing label.
    standardize : bool, default=True
        Standardize X before building the graph.
    metric : str or callable, default="euclidean"
        Distance of the kNN graph.
    n_jobs : int, default=None
        Parallel neighbour search.
    random_state : int, RandomState instance or None, default=None
        Seeds the hashed tie-breaking keys.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    annotations_ : ndarray of shape (n_samples, n_annotators)
        Integer codes into ``classes_``, -1 for missing.
    counts_ : ndarray of shape (n_samples, n_classes)
        Own vote counts ``C``.
    propagated_evidence_ : ndarray of shape (n_samples, n_classes)
        ``N = P C``, the neighbours' votes (zero unless ``propagation="evidence"``).
    evidence_ : ndarray of shape (n_samples, n_classes)
        ``C + lambda N`` (property).
    uncertainty_ : ndarray of shape (n_samples,)
        The selection score.
    propagation_strength_ : float
        ``lambda`` in effect.
    homophily_ : tuple
        ``(agreement, chance, z)`` of the homophily test (NaN when it is not defined).
    n_labels_ : ndarray of shape (n_samples,)
    n_labels_seen_ : int
    random_seed_ : int
    graph_ : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        Row-normalized local-scaling kNN graph.
    sigma_ : ndarray of shape (n_samples,)
        Local scales.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when X has string column names.

    See Also
    --------
    RoundRobinAnnotator : Fewest labels first.
    RandomAnnotator : Random selection.
    run_annotation_loop : Drive an annotator against a crowd.

    References
    ----------
    MA3S (ICML 2026), abstract; the formulas are this project's reconstruction from
    Sheng, Provost & Ipeirotis, "Get another label?", KDD 2008 / DMKD 2014.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.annotation import MA3SAnnotator
    >>> X = np.r_[np.zeros((5, 1)), np.ones((5, 1)) * 10] + np.arange(10)[:, None] * 0.01
    >>> Y = np.full((10, 3), np.nan)
    >>> Y[0] = [0, 0, 0]
    >>> ann = MA3SAnnotator(n_neighbors=4, random_state=0).fit(X, Y)
    >>> bool(ann.query(batch_size=1)[0] >= 5)  # the unlabelled blob goes first
    True
    >>> float(ann.uncertainty_[0])  # three votes, margin (3, 0): I_{1/2}(4, 1) = 1/16
    0.0625
    """

    _parameter_constraints = {
        **_BaseAnnotator._parameter_constraints,
        "propagation": [StrOptions({"evidence", "uncertainty", "none"})],
        "propagation_strength": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "n_propagation_steps": [Interval(Integral, 1, None, closed="left"), None],
        "propagation_decay": [Interval(Real, 0, 1, closed="right")],
        "smoothing": [Interval(Real, 0, 1, closed="left")],
        "prior": ["array-like"],
        "batch_diversity": ["boolean"],
        "diversity_weight": [Interval(Real, 0, None, closed="left")],
        "stop_threshold": [Interval(Real, 0, 1, closed="both"), None],
        "aggregation": [StrOptions({"majority", "propagated", "dawid_skene", "one_coin"})],
    }

    def __init__(self, n_neighbors=10, *, propagation="evidence", propagation_strength=1.0,
                 n_propagation_steps=None, propagation_decay=0.5, smoothing=0.5, prior=(1.0, 1.0), batch_size=1,
                 batch_diversity=True, diversity_weight=1.0, stop_threshold=None, max_labels_per_sample=None,
                 aggregation="majority", classes=None, missing_label=np.nan, standardize=True, metric="euclidean",
                 n_jobs=None, random_state=None):
        self.n_neighbors = n_neighbors
        self.propagation = propagation
        self.propagation_strength = propagation_strength
        self.n_propagation_steps = n_propagation_steps
        self.propagation_decay = propagation_decay
        self.smoothing = smoothing
        self.prior = prior
        self.batch_size = batch_size
        self.batch_diversity = batch_diversity
        self.diversity_weight = diversity_weight
        self.stop_threshold = stop_threshold
        self.max_labels_per_sample = max_labels_per_sample
        self.aggregation = aggregation
        self.classes = classes
        self.missing_label = missing_label
        self.standardize = standardize
        self.metric = metric
        self.n_jobs = n_jobs
        self.random_state = random_state

    # -- setup -------------------------------------------------------------------------------------
    def _validate_extra_params(self):
        prior = np.asarray(self.prior, dtype=float) if np.asarray(self.prior).dtype.kind in "iuf" else None
        if prior is None or prior.shape != (2,) or not np.all(np.isfinite(prior)) or np.any(prior <= 0):
            raise InvalidParameterError(f"The 'prior' parameter of {type(self).__name__} must be two positive "
                                        f"finite numbers (alpha0, beta0). Got {self.prior!r} instead.")
        if (self.propagation == "evidence" and self.n_propagation_steps is not None
                and self.n_propagation_steps > 3):
            raise InvalidParameterError("The 'n_propagation_steps' parameter of MA3SAnnotator must be at most 3 "
                                        f"with propagation='evidence'. Got {self.n_propagation_steps!r} instead.")

    @property
    def _prior(self):
        a, b = np.asarray(self.prior, dtype=float)
        return float(a), float(b)

    @property
    def _auto(self):
        return self.propagation == "evidence" and isinstance(self.propagation_strength, str)

    def _steps(self):
        if self.n_propagation_steps is not None:
            return int(self.n_propagation_steps)
        return 1 if self.propagation == "evidence" else 10

    def _init_scores(self):
        n, K = self.counts_.shape
        W = self.graph_
        self._wt = _csr_parts(W.T.tocsr())
        if self.propagation == "evidence":
            P, power = W.copy(), W
            for t in range(1, self._steps()):
                power = (power @ W).tocsr()
                P = (P + self.propagation_decay**t * power).tocsr()
            P.sort_indices()
            self._pt = _csr_parts(P.T.tocsr())
            # The one-hop H = W C of the homophily test is kept apart from N = P C only when it differs
            # (T > 1) and is needed ("auto").
            self._separate_h = self._steps() > 1 and self._auto
            self.propagated_evidence_ = np.ascontiguousarray(P @ self.counts_)
            self._h = np.ascontiguousarray(W @ self.counts_) if self._separate_h else np.zeros((0, K))
        else:
            self._pt = _csr_parts(sp.csr_matrix((n, n)))
            self._separate_h = False
            self.propagated_evidence_ = np.zeros((n, K))
            self._h = np.zeros((0, K))
        if self._auto:
            self._tallies = _kernels().homophily_tallies(self.counts_, self._h if self._separate_h
                                                         else self.propagated_evidence_)
            self._lambda_steps = _snap(self._lambda_hat())
        else:
            self._tallies = np.zeros(2 + 2 * K)
            self._lambda_steps = None
        self._refresh_all()

    @property
    def propagation_strength_(self):
        """``lambda`` in effect (0 unless ``propagation="evidence"``)."""
        _check_fitted(self)
        if self.propagation != "evidence":
            return 0.0
        if self._lambda_steps is not None:
            return self._lambda_steps * _LAMBDA_MAX / _LAMBDA_GRID
        return float(self.propagation_strength)

    @property
    def homophily_(self):
        """``(agreement A/r, chance pi, z)`` of the homophily test on the one-hop graph."""
        _check_fitted(self)
        return _homophily_stats(self._tallies, self.classes_.size)

    def _lambda_hat(self):
        agreement, chance, z = _homophily_stats(self._tallies, self.classes_.size)
        if not np.isfinite(z):
            return _LAMBDA_MAX
        return _LAMBDA_MAX * float(np.clip((z - 1.0) / 2.0, 0.0, 1.0))

    @property
    def evidence_(self):
        _check_fitted(self)
        return self.counts_ + self.propagation_strength_ * self.propagated_evidence_

    def _refresh_all(self):
        n = self.counts_.shape[0]
        a0, b0 = self._prior
        u = _kernels().refresh_rows(self.counts_, self.propagated_evidence_, self.propagation_strength_,
                                    np.arange(n), a0, b0)
        if self.propagation == "uncertainty":
            u = self._smooth(u)
        self.uncertainty_ = u

    def _smooth(self, u):
        alpha, W = self.smoothing, self.graph_
        out = u.copy()
        for _ in range(self._steps()):
            out = (1.0 - alpha) * u + alpha * (W @ out)
        return out

    def _may_refresh_all(self):
        return self._auto or self.propagation == "uncertainty"

    def _stop_mask(self):
        if self.stop_threshold is None:
            return None
        return self.uncertainty_ >= self.stop_threshold

    def _stop_rows(self, rows):
        if self.stop_threshold is None:
            return None
        return self.uncertainty_[rows] >= self.stop_threshold

    def _scores_at(self, rows):
        return self.uncertainty_[rows]

    def _incremental_keys(self):
        # smoothing rescores every row after each update
        return super()._incremental_keys() and self.propagation != "uncertainty"

    def _diverse(self, b):
        return b > 1 and self.batch_diversity and self.propagation == "evidence" and self.diversity_weight > 0

    def _select_indexed(self, index, b):
        if not self._diverse(b):
            return super()._select_indexed(index, b)
        pi, px, pd = self._pt
        a0, b0 = self._prior
        stop = -1.0 if self.stop_threshold is None else float(self.stop_threshold)
        return _kernels().select_diverse(index["q"], self._tie_keys_, index["eligible"], index["heap"],
                                         index["pos"], index["size"], self.counts_, self.propagated_evidence_,
                                         pi, px, pd, self.propagation_strength_, float(self.diversity_weight),
                                         a0, b0, b, stop, scratch=index["slot"])

    # -- update -------------------------------------------------------------------------------------
    def _affected_rows(self, rows):
        indptr, indices, _ = self._pt
        parts = [rows] + [indices[indptr[i]:indptr[i + 1]] for i in np.unique(rows)]
        return np.unique(np.concatenate(parts))

    def _extra_snapshot(self, affected):
        return {"N": self.propagated_evidence_[affected].copy(),
                "H": self._h[affected].copy() if self._h.shape[0] else None,
                "tallies": self._tallies.copy(), "lambda_steps": self._lambda_steps}

    def _extra_restore(self, snap):
        self.propagated_evidence_[snap["affected"]] = snap["N"]
        if snap["H"] is not None:
            self._h[snap["affected"]] = snap["H"]
        self._tallies = snap["tallies"]
        self._lambda_steps = snap["lambda_steps"]

    def _apply_counts(self, rows, codes):
        k = _kernels()
        if self.propagation != "evidence":
            np.add.at(self.counts_, (rows, codes), 1.0)
            if self.propagation == "uncertainty":
                self._refresh_all()
                return None
            touched = np.unique(rows)
            a0, b0 = self._prior
            self.uncertainty_[touched] = k.refresh_rows(self.counts_, self.counts_, 0.0, touched, a0, b0)
            return touched
        pi, px, pd = self._pt
        wi, wx, wd = self._wt
        *_, touched = k.apply_labels(self.counts_, self.propagated_evidence_, self._h, self._tallies, rows, codes,
                                     pi, px, pd, wi, wx, wd, self._auto, self._separate_h, inplace=True)
        if self._auto:
            lam_hat = self._lambda_hat()
            current = self._lambda_steps * _LAMBDA_MAX / _LAMBDA_GRID
            if abs(lam_hat - current) > _LAMBDA_MAX / _LAMBDA_GRID:
                self._lambda_steps = _snap(lam_hat)
                self._refresh_all()
                return None
        touched = np.unique(touched)
        a0, b0 = self._prior
        self.uncertainty_[touched] = k.refresh_rows(self.counts_, self.propagated_evidence_,
                                                    self.propagation_strength_, touched, a0, b0)
        return touched

    # -- batch diversity ------------------------------------------------------------------------------
    def _select(self, q, r, eligible, b, scores, return_utilities):
        """Greedy batch with virtual votes ("kriging believer"): the ``select_diverse`` kernel on any ranking.

        With ``return_utilities`` the reference loop also records the utility row of each pick.
        """
        if not self._diverse(b):
            return super()._select(q, r, eligible, b, scores, return_utilities)
        pi, px, pd = self._pt
        a0, b0 = self._prior
        lam, rho = self.propagation_strength_, float(self.diversity_weight)
        stop = -1.0 if self.stop_threshold is None else float(self.stop_threshold)
        args = (self.counts_, self.propagated_evidence_, pi, px, pd, lam, rho, a0, b0, b, stop)
        if not return_utilities:
            return _kernels().select_diverse(q, r, eligible, None, None, 0, *args), None
        from sklearn_frontier.kernels import get_implementation
        from sklearn_frontier.kernels._annotation_reference import select_diverse_with_utilities

        _, refresh = get_implementation("refresh_rows")  # resolved once per query, not per pick
        return select_diverse_with_utilities(q, r, eligible, *args, scores=scores, refresh=refresh)


def _snap(lam_hat):
    return int(np.rint(lam_hat / _LAMBDA_MAX * _LAMBDA_GRID))


def _homophily_stats(tallies, K):
    r, A = tallies[0], tallies[1]
    if r < 10:
        return (np.nan, np.nan, np.nan)
    h_own, h_nb = tallies[2:2 + K], tallies[2 + K:2 + 2 * K]
    chance = float(np.dot(h_own, h_nb) / (r * r))
    if chance <= 0 or chance >= 1:
        return (float(A / r), chance, np.nan)
    z = (A / r - chance) / np.sqrt(chance * (1 - chance) / r)
    return (float(A / r), chance, float(z))


def _csr_parts(M):
    M = sp.csr_matrix(M)
    M.sort_indices()
    return (np.ascontiguousarray(M.indptr, dtype=np.int64), np.ascontiguousarray(M.indices, dtype=np.int64),
            np.ascontiguousarray(M.data, dtype=np.float64))
