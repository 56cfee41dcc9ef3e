"""Query machinery shared by every annotator: eligibility, the indexed max-heap, batch selection."""

import numbers

import numpy as np

from ._keys import _KEY_SCALE, _kernels
from ._validation import (
    _as_selection_mask,
    _check_fitted,
)


class _SelectionMixin:
    """Which pool rows get the next label: eligibility, scores, the indexed heap and batch selection.

    Mixed into :class:`_BaseAnnotator`; reads its state (``counts_``, ``annotations_``, ``_tie_keys_``).
    """

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

    def _ranked(self, b):
        """The first ``b`` eligible rows in plain rank order: what a one-item query would take first, then next.

        No batch diversity: the rows that AnnotationSession leases one at a time are ranked by their own scores.
        """
        if self._incremental_keys():
            index = self._ensure_index()
            picks = _kernels().select_top(index["q"], self._tie_keys_, index["eligible"], index["heap"],
                                          index["pos"], index["size"], int(b))
            return np.asarray(picks, dtype=np.int64)
        eligible, _ = self._eligible(None, None)
        stop = self._stop_mask()
        if stop is not None:
            eligible &= stop
        q = np.rint(np.asarray(self._selection_scores(), dtype=np.float64) * _KEY_SCALE).astype(np.int64)
        return np.asarray(_top_sorted(q, self._query_tie_keys(), eligible, int(b)), dtype=np.int64)

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


def _top_sorted(q, r, eligible, b):
    """The first ``b`` eligible rows ranked by (q desc, r desc, index asc), in rank order; O(n)."""
    from sklearn_frontier.kernels.annotation._reference import select_top

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
