"""MA3S: model-agnostic active annotation by graph-propagated margin-Beta uncertainty."""

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from sklearn_frontier.utils._compat import (
    Interval,
    InvalidParameterError,
    StrOptions,
)

from ._graph_stats import _csr_parts, _homophily_stats
from ._keys import _kernels
from ._persistence import register_state_class
from ._state import _BaseAnnotator
from ._validation import _check_fitted

_LAMBDA_MAX = 1.0


_LAMBDA_GRID = 20


@register_state_class
class MA3SAnnotator(_BaseAnnotator):
    """Model-agnostic active annotation: graph-propagated margin-Beta uncertainty (MA3S).

    Each sample's uncertainty is ``I_{1/2}(a + alpha0, b + beta0)``, the posterior probability that
    the leading class of its evidence would lose a fresh head-to-head vote against the runner-up
    (``a``, ``b``: top two entries of the evidence). Under ``propagation="evidence"`` the evidence is
    the sample's own votes plus ``lambda`` times its graph neighbours' votes, so a confidently labelled
    sample makes its near-duplicates certain too and they are not annotated over and over. No model
    is trained in the loop. ``propagation="none"`` is Sheng et al.'s label uncertainty (LU).

    Read more in the :ref:`User Guide <user_guide_annotation>`.

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
    aggregation : {"majority", "propagated", "majority_propagated", "dawid_skene", "one_coin"}, \
            default="majority"
        How ``labels_`` aggregates (see :meth:`aggregate`). "majority" is the majority vote of the labels
        received, missing where nobody labelled; "propagated" is the argmax of ``evidence_`` (own votes plus
        ``lambda`` times the neighbours'), which labels every sample; "majority_propagated" is the majority vote
        with its ties and unlabelled samples settled by ``evidence_``.
    classes : array-like, default=None
        The label set (default: the observed labels).
    missing_label : scalar, default=np.nan
        Marker of a missing label.
    standardize : bool, default=True
        Standardize X before building the graph.
    metric : str or callable, default="euclidean"
        Distance of the kNN graph.
    neighbor_algorithm : {"auto", "exact", "approximate"}, default="auto"
        How the kNN graph is searched: "exact" (brute force from 8 features, else scikit-learn's trees),
        "approximate" (NN-descent, Euclidean only) or "auto" (approximate from 20 000 samples).
    n_jobs : int, default=None
        Parallel neighbour search.
    random_state : int, RandomState instance or None, default=None
        Seeds the hashed tie-breaking keys.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The label set: ``classes`` if given, else the sorted labels observed at fit.
    n_annotators_ : int
        Annotator columns of the annotation matrix.
    annotations_ : ndarray of shape (n_samples, n_annotators)
        Integer codes into ``classes_``, -1 for missing.
    annotated_ : ndarray of bool, shape (n_samples, n_annotators)
        True where a cell holds a label (``annotations_ >= 0``) (property).
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
    expected_errors_ : float
        Sum of the uncertainties, a diagnostic of how many pool labels may still be wrong (property).
    labels_ : ndarray of shape (n_samples,)
        Aggregated label of every sample by ``aggregation`` (property).
    log_ : ndarray of shape (n_labels_seen_, 3)
        The labels received by :meth:`update`, in order: (sample, annotator, class code) (property).
    n_labels_ : ndarray of shape (n_samples,)
        Labels received per sample.
    n_labels_seen_ : int
        Labels received through :meth:`update` since fit.
    random_seed_ : int
        Seed of the hashed tie-breaking keys, drawn once per fit from ``random_state``.
    X_pool_ : ndarray of shape (n_samples, n_features)
        The pool.
    mean_ : ndarray of shape (n_features,)
        Mean used to standardize the pool (zeros without ``standardize``).
    scale_ : ndarray of shape (n_features,)
        Standard deviation used to standardize the pool (ones without ``standardize``).
    n_neighbors_ : int
        Neighbours per sample in ``graph_``: ``min(n_neighbors, n_samples - 1)``.
    neighbor_algorithm_ : str
        The neighbour search used for ``graph_``: "approximate", or the ``NearestNeighbors`` algorithm.
    graph_ : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        Row-normalized local-scaling kNN graph.
    sigma_ : ndarray of shape (n_samples,)
        Local scales.
    n_features_in_ : int
        Number of features seen during fit.
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
        "aggregation": [StrOptions({"majority", "propagated", "majority_propagated", "dawid_skene", "one_coin"})],
    }

    def __init__(self, n_neighbors=10, *, propagation="evidence", propagation_strength=1.0,
                 n_propagation_steps=None, propagation_decay=0.5, smoothing=0.5, prior=(1.0, 1.0), batch_size=1,
                 batch_diversity=True, diversity_weight=1.0, stop_threshold=None, max_labels_per_sample=None,
                 aggregation="majority", classes=None, missing_label=np.nan, standardize=True, metric="euclidean",
                 neighbor_algorithm="auto", n_jobs=None, random_state=None):
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
        self.neighbor_algorithm = neighbor_algorithm
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

    def _aggregation_methods(self):
        return ("majority", "propagated", "majority_propagated", "dawid_skene", "one_coin")

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

    def _shift_votes(self, rows, codes, delta):
        if self.propagation != "evidence" or self._auto:
            np.add.at(self.counts_, (rows, codes), delta)
            if self._auto:
                self._init_scores()  # the homophily tallies are integer votes: recount them
            else:
                self._refresh_all()
            return None
        indptr, indices, data = self._pt  # rows of P transposed: item i's votes reach the rows j with P_ji > 0
        touched = [rows]
        for i, k, d in zip(rows.tolist(), codes.tolist(), delta.tolist()):
            self.counts_[i, k] += d
            reached = indices[indptr[i]:indptr[i + 1]]
            self.propagated_evidence_[reached, k] += d * data[indptr[i]:indptr[i + 1]]
            touched.append(reached)
        touched = np.unique(np.concatenate(touched))
        a0, b0 = self._prior
        self.uncertainty_[touched] = _kernels().refresh_rows(self.counts_, self.propagated_evidence_,
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
        from sklearn_frontier.kernels.annotation._reference import (
            select_diverse_with_utilities,
        )

        _, refresh = get_implementation("refresh_rows")  # resolved once per query, not per pick
        return select_diverse_with_utilities(q, r, eligible, *args, scores=scores, refresh=refresh)


def _snap(lam_hat):
    return int(np.rint(lam_hat / _LAMBDA_MAX * _LAMBDA_GRID))
