"""Baseline annotators: round robin (fewest labels first) and uniformly random order."""


import numpy as np

from ._keys import _kernels
from ._persistence import register_state_class
from ._state import _BaseAnnotator

# The parameters every annotator shares, spliced into the baselines' docstrings.
_BASE_PARAMS_DOC = """
    n_neighbors : int, default=10
        Neighbours of the pool's kNN graph (clipped to n_samples - 1) and of inductive prediction.
    batch_size : int, default=1
        Default number of samples returned by :meth:`query`.
    max_labels_per_sample : int, default=None
        Samples with this many labels are no longer queried.
    aggregation : {"majority", "dawid_skene", "one_coin"}, default="majority"
        How ``labels_`` aggregates the annotation matrix: the majority vote of the labels received (ties by a
        seeded hash) or Dawid–Skene; samples nobody labelled are missing.
    classes : array-like, default=None
        The label set (default: the observed labels).
    missing_label : scalar, default=np.nan
        Marker of a missing label (None, NaN, pandas NA are missing in object arrays too).
    standardize : bool, default=True
        Standardize X by the pool mean and std before building the graph.
    metric : str or callable, default="euclidean"
        Distance of the kNN graph.
    neighbor_algorithm : {"auto", "exact", "approximate"}, default="auto"
        How the kNN graph is searched: "exact" (brute force from 8 features, else scikit-learn's trees),
        "approximate" (NN-descent, Euclidean only) or "auto" (approximate from 20 000 samples).
    n_jobs : int, default=None
        Parallel neighbour search.
    random_state : int, RandomState instance or None, default=None
        Seeds the hashed tie-breaking keys (drawn once per fit).
"""


# The fitted attributes every annotator shares, spliced into the baselines' docstrings.
_BASE_ATTRIBUTES_DOC = """
    classes_ : ndarray of shape (n_classes,)
        The label set: ``classes`` if given, else the sorted labels observed at fit.
    n_annotators_ : int
        Annotator columns of the annotation matrix.
    annotations_ : ndarray of shape (n_samples, n_annotators)
        Integer codes into ``classes_``, -1 for missing.
    annotated_ : ndarray of bool, shape (n_samples, n_annotators)
        True where a cell holds a label (``annotations_ >= 0``) (property).
    counts_ : ndarray of shape (n_samples, n_classes)
        Vote counts.
    evidence_ : ndarray of shape (n_samples, n_classes)
        The vote counts again (the baselines propagate nothing) (property).
    n_labels_ : ndarray of shape (n_samples,)
        Labels received per sample.
    uncertainty_ : ndarray of shape (n_samples,)
        Own-count label uncertainty (diagnostic; not used for selection).
    expected_errors_ : float
        Sum of ``uncertainty_`` (property).
    labels_ : ndarray of shape (n_samples,)
        Aggregated label of every sample by ``aggregation`` (property).
    log_ : ndarray of shape (n_labels_seen_, 3)
        The labels received by :meth:`update`, in order: (sample, annotator, class code) (property).
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
        Row-normalized local-scaling kNN graph (used by inductive prediction).
    sigma_ : ndarray of shape (n_samples,)
        Local scales of the graph.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when X has string column names.
"""


@register_state_class
class RoundRobinAnnotator(_BaseAnnotator):
    __doc__ = """Generalized round robin (GRR): the sample with the fewest labels gets the next one.

    Ties are broken by seeded hash keys, so a run is reproducible. Same API as :class:`MA3SAnnotator`.

    Read more in the :ref:`User Guide <user_guide_annotation>`.

    Parameters
    ----------""" + _BASE_PARAMS_DOC + """
    Attributes
    ----------""" + _BASE_ATTRIBUTES_DOC + """
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
                 classes=None, missing_label=np.nan, standardize=True, metric="euclidean", neighbor_algorithm="auto",
                 n_jobs=None, random_state=None):
        self.n_neighbors = n_neighbors
        self.batch_size = batch_size
        self.max_labels_per_sample = max_labels_per_sample
        self.aggregation = aggregation
        self.classes = classes
        self.missing_label = missing_label
        self.standardize = standardize
        self.metric = metric
        self.neighbor_algorithm = neighbor_algorithm
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _selection_scores(self):
        return -self.n_labels_.astype(np.float64)

    def _scores_at(self, rows):
        return -self.n_labels_[rows].astype(np.float64)


@register_state_class
class RandomAnnotator(RoundRobinAnnotator):
    __doc__ = """Uniformly random selection among eligible samples (a seeded hash per query).

    Read more in the :ref:`User Guide <user_guide_annotation>`.

    Parameters
    ----------""" + _BASE_PARAMS_DOC + """
    Attributes
    ----------""" + _BASE_ATTRIBUTES_DOC + """
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
