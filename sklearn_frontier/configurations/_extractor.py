"""ConfigurationExtractor: stable partitions of a kNN graph over the resolution axis."""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from sklearn_frontier.exceptions import ConfigurationFallbackWarning
from sklearn_frontier.utils._compat import (
    Interval,
    InvalidParameterError,
    StrOptions,
    _fit_context,
    check_is_fitted,
    validate_data,
)

from ._graph import configurations_from_graph, knn_graph, knn_lists

GRAPH_STATS = ["entropy", "attraction", "repulsion", "log_width"]
GEOMETRIC_STATS = ["intra_dist", "inter_dist_mean", "inter_dist_max", "separation"]


def _valid_range(value):
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        return False
    return bool(np.isfinite(lo) and np.isfinite(hi) and 0 < lo < hi)


def check_resolution_range(value):
    """Raise InvalidParameterError unless ``value`` is a pair ``0 < gamma_min < gamma_max``."""
    if not (len(value) == 2 and _valid_range(value)):
        raise InvalidParameterError(f"The 'resolution_range' parameter must be a pair (gamma_min, gamma_max) with "
                                    f"0 < gamma_min < gamma_max, got {value!r}.")


def _check_features(self, input_features):
    n = self.n_features_in_
    names = getattr(self, "feature_names_in_", None)
    if input_features is None:
        return np.asarray(names if names is not None else [f"x{i}" for i in range(n)], dtype=object)
    input_features = np.asarray(input_features, dtype=object)
    if len(input_features) != n:
        raise ValueError(f"input_features should have length equal to number of features ({n}), "
                         f"got {len(input_features)}")
    if names is not None and not np.array_equal(input_features, names):
        raise ValueError("input_features is not equal to feature_names_in_")
    return input_features


class ConfigurationExtractor(TransformerMixin, BaseEstimator):
    """Configurations: the partitions that are optimal over an interval of the resolution.

    Finds the few partitions of a kNN graph of the rows that stay optimal over a wide range of the
    modularity resolution, from coarse to fine; ``transform`` returns soft assignments of any rows to the
    clusters of every configuration (neighbour votes).

    Read more in the :ref:`User Guide <user_guide_configurations>`.

    Parameters
    ----------
    n_neighbors : int, default=15
        Number of neighbours k of the kNN graph (clipped to ``n - 1``).
    metric : str, default="euclidean"
        Any scikit-learn metric (Euclidean uses the project's exact kernel).
    weighting : {"self_tuning", "binary"}, default="self_tuning"
        Edge weights ``exp(-d_ij**2 / (sigma_i sigma_j))`` or ones.
    connect_components : bool, default=False
        Add, per extra connected component, the shortest edge to the rest (modularity never merges
        disconnected components).
    objective : {"modularity", "cpm"}, default="modularity"
        Null model of the repulsion ``b`` (strengths, or constant Potts ``sum (n_c/n)**2``).
    resolution_range : tuple of float, default=(0.01, 30.0)
        ``(gamma_min, gamma_max)`` of the resolution scan.
    n_resolutions : int, default=48
        Log-spaced resolutions scanned.
    scan : {"grid"}, default="grid"
        Resolution scan strategy.
    n_restarts : int, default=2
        Louvain seeds per resolution.
    engine : {"native", "leidenalg"}, default="native"
        Partition engine: the project's numba Louvain (BSD), or leidenalg (GPL, optional extra
        ``pip install ".[leiden]"``; used as an anchor).
    max_configurations : int, default=8
        Maximum number of configurations kept (the widest bands).
    min_log_width : float, default=0.1
        Minimum width of a configuration's resolution band, in log10 scale.
    max_cluster_frac : float, default=0.5
        Maximum number of clusters of a configuration, as a fraction of n.
    assign : {"knn", "centroid"}, default="knn"
        Out-of-sample soft assignment: votes of the ``assign_neighbors`` nearest training rows, or a
        softmax over squared distances to the cluster centroids.
    assign_neighbors : int, default=10
        Number of training neighbours voting in the knn assignment.
    assign_weights : {"uniform", "distance"}, default="uniform"
        Weights of the neighbour votes.
    stability_features : {"graph", "geometric", "both"}, default="graph"
        Per-configuration statistics in ``stability_``.
    standardize : bool, default=True
        Standardise the features before building the graph.
    n_jobs : int, default=None
        Parallel Louvain runs of the scan (threads, through ``sklearn.utils.parallel``).
    verbose : int, default=0
        A progress bar over the resolution scan when > 0.
    random_state : int, RandomState instance or None, default=None
        Seed of the Louvain runs.

    Attributes
    ----------
    configurations_ : list of ndarray of shape (n_samples,)
        Labels of the training rows (ids 0..K_i-1) per configuration.
    resolutions_ : ndarray of shape (n_configurations_, 2)
        ``[gamma_lo, gamma_hi]`` band of each configuration.
    stability_ : ndarray of shape (n_configurations_, q)
        Statistics of each configuration, one column per name in ``stability_names_``: the entropy of its
        cluster sizes (nats), its attraction ``a_P`` and repulsion ``b_P`` and the log width of its band
        (``stability_features="graph"``); the mean intra-cluster distance to the centroid, the mean and largest
        distance between centroids and their separation (``"geometric"``); or both.
    stability_names_ : list of str
        Names of the columns of ``stability_``: ``"entropy"``, ``"attraction"``, ``"repulsion"``,
        ``"log_width"`` and/or ``"intra_dist"``, ``"inter_dist_mean"``, ``"inter_dist_max"``, ``"separation"``.
    n_clusters_ : ndarray of shape (n_configurations_,)
        Number of clusters K_i of each configuration.
    n_configurations_ : int
        Number of configurations kept.
    n_candidates_ : int
        Distinct partitions found by the scan.
    graph_ : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        Symmetric kNN affinity of the standardised training rows.
    resolution_profile_ : dict
        ``gamma`` grid, envelope ``winner`` per grid point (configuration index or -1), its number
        of clusters and quality, the candidates' ``a``/``b`` and the whole ``envelope``.
    fallback_ : bool
        True when no partition passed the filters.
    centroids_ : list of ndarray of shape (n_clusters_[i], n_features_in_)
        Cluster centroids of each configuration in the standardised space (``assign="centroid"``).
    assign_temperature_ : ndarray of shape (n_configurations_,)
        Softmax temperature of the centroid assignment of each configuration: the median squared distance of
        the training rows to their centroid.
    mean_ : ndarray of shape (n_features_in_,)
        Column means of X (zeros when ``standardize=False``).
    scale_ : ndarray of shape (n_features_in_,)
        Column standard deviations of X (ones when ``standardize=False``; a constant column keeps 1).
    X_fit_ : ndarray of shape (n_samples, n_features_in_)
        Standardised training rows (the assignment neighbours).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during ``fit``. Defined only when X has feature names that are all strings.

    See Also
    --------
    MixConfigAugmenter : Learned per-sample mixing of the configurations.

    Notes
    -----
    The extractor builds a kNN graph of the (standardised) rows, runs the project's Louvain engine for
    generalised modularity ``Q_P(gamma) = a_P - gamma b_P`` at log-spaced resolutions, keeps the exact upper
    envelope of the candidate lines (the CHAMP construction), and retains the envelope pieces with
    ``2 <= K <= max_cluster_frac * n`` clusters whose band ``[gamma_lo, gamma_hi]`` is at least
    ``min_log_width`` wide in log scale (the ``max_configurations`` widest, ordered by K). A partition that
    wins over a wide band of resolutions is a stable description of the data at that scale.

    References
    ----------
    .. [1] "Mixing Configurations for Downstream Prediction", ICML 2026, arXiv:2510.19248.
    .. [2] Weir, Emmons, Gibson, Taylor, Mucha, "Post-processing partitions to identify domains of
       modularity optimization", Algorithms 10 (2017), arXiv:1706.03675 (CHAMP).

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> from sklearn_frontier.configurations import ConfigurationExtractor
    >>> X, _ = make_blobs(n_samples=60, centers=3, random_state=0)
    >>> ext = ConfigurationExtractor(n_neighbors=8, n_resolutions=12, random_state=0).fit(X)
    >>> bool(ext.n_configurations_ >= 1), ext.transform(X).shape[0]
    (True, 60)
    """

    _parameter_constraints = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "metric": [str],
        "weighting": [StrOptions({"self_tuning", "binary"})],
        "connect_components": ["boolean"],
        "objective": [StrOptions({"modularity", "cpm"})],
        "resolution_range": [tuple, list],
        "n_resolutions": [Interval(Integral, 1, None, closed="left")],
        "scan": [StrOptions({"grid"})],
        "n_restarts": [Interval(Integral, 1, None, closed="left")],
        "engine": [StrOptions({"native", "leidenalg"})],
        "max_configurations": [Interval(Integral, 1, None, closed="left")],
        "min_log_width": [Interval(Real, 0, None, closed="left")],
        "max_cluster_frac": [Interval(Real, 0, 1, closed="right")],
        "assign": [StrOptions({"knn", "centroid"})],
        "assign_neighbors": [Interval(Integral, 1, None, closed="left")],
        "assign_weights": [StrOptions({"uniform", "distance"})],
        "stability_features": [StrOptions({"graph", "geometric", "both"})],
        "standardize": ["boolean"],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    def __init__(self, n_neighbors=15, *, metric="euclidean", weighting="self_tuning", connect_components=False,
                 objective="modularity", resolution_range=(0.01, 30.0), n_resolutions=48, scan="grid",
                 n_restarts=2, engine="native", max_configurations=8, min_log_width=0.1, max_cluster_frac=0.5,
                 assign="knn", assign_neighbors=10, assign_weights="uniform", stability_features="graph",
                 standardize=True, n_jobs=None, verbose=0, random_state=None):
        self.n_neighbors = n_neighbors
        self.metric = metric
        self.weighting = weighting
        self.connect_components = connect_components
        self.objective = objective
        self.resolution_range = resolution_range
        self.n_resolutions = n_resolutions
        self.scan = scan
        self.n_restarts = n_restarts
        self.engine = engine
        self.max_configurations = max_configurations
        self.min_log_width = min_log_width
        self.max_cluster_frac = max_cluster_frac
        self.assign = assign
        self.assign_neighbors = assign_neighbors
        self.assign_weights = assign_weights
        self.stability_features = stability_features
        self.standardize = standardize
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.random_state = random_state

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Extract the configurations of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows.
        y : None
            Ignored.

        Returns
        -------
        self : ConfigurationExtractor
            The fitted extractor.
        """
        check_resolution_range(self.resolution_range)
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        self._fit_array(X)
        return self

    def _fit_array(self, X):
        if self.engine == "leidenalg":
            _require_leidenalg()
        n = X.shape[0]
        if self.standardize:
            self.mean_ = X.mean(axis=0)
            scale = X.std(axis=0)
            self.scale_ = np.where(scale > 0, scale, 1.0)
        else:
            self.mean_ = np.zeros(X.shape[1])
            self.scale_ = np.ones(X.shape[1])
        Z = np.ascontiguousarray((X - self.mean_) / self.scale_)
        self.X_fit_ = Z
        self.graph_ = knn_graph(Z, self.n_neighbors, metric=self.metric, weighting=self.weighting,
                                connect_components=self.connect_components)
        lo, hi = (float(v) for v in self.resolution_range)
        if np.all(np.ptp(Z, axis=0) == 0):
            warnings.warn("All rows are identical: no cluster structure; using the trivial configuration.",
                          ConfigurationFallbackWarning, stacklevel=3)
            configs = [np.zeros(n, dtype=np.int64)]
            resolutions = np.array([[1.0, 1.0]])
            stats = np.array([[0.0, 1.0, 1.0, 0.0]])
            details = {"gamma": np.geomspace(lo, hi, self.n_resolutions), "fallback": True, "n_candidates": 1}
            details["winner"] = np.zeros(self.n_resolutions, dtype=np.int64)
        else:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ConfigurationFallbackWarning)
                configs, resolutions, stats, details = configurations_from_graph(
                    self.graph_, objective=self.objective, resolution_range=(lo, hi),
                    n_resolutions=self.n_resolutions, n_restarts=self.n_restarts,
                    max_configurations=self.max_configurations, min_log_width=self.min_log_width,
                    max_cluster_frac=self.max_cluster_frac, random_state=self.random_state, n_jobs=self.n_jobs,
                    return_details=True, engine=self.engine, verbose=self.verbose)
            for w in caught:
                warnings.warn(w.message, w.category, stacklevel=3)
        self.configurations_ = [np.asarray(c, dtype=np.int64) for c in configs]
        self.resolutions_ = np.asarray(resolutions, dtype=np.float64)
        self.n_clusters_ = np.array([int(c.max()) + 1 for c in self.configurations_], dtype=np.int64)
        self.n_configurations_ = len(self.configurations_)
        self.n_candidates_ = int(details["n_candidates"])
        self.fallback_ = bool(details["fallback"])
        self.resolution_profile_ = details
        self.centroids_ = [np.stack([Z[c == j].mean(axis=0) for j in range(K)])
                           for c, K in zip(self.configurations_, self.n_clusters_)]
        names = list(GRAPH_STATS)
        if self.stability_features in ("geometric", "both"):
            geo = np.array([self._geometric(Z, c, mu) for c, mu in zip(self.configurations_, self.centroids_)])
            stats = geo if self.stability_features == "geometric" else np.column_stack([stats, geo])
            names = GEOMETRIC_STATS if self.stability_features == "geometric" else names + GEOMETRIC_STATS
        self.stability_ = np.asarray(stats, dtype=np.float64)
        self.stability_names_ = list(names)
        d2 = [((Z - mu[c]) ** 2).sum(axis=1) for c, mu in zip(self.configurations_, self.centroids_)]
        self.assign_temperature_ = np.array([max(float(np.median(v)), 1e-12) for v in d2])
        self._n_features_out = int(self.n_clusters_.sum())
        return Z

    @staticmethod
    def _geometric(Z, labels, mu):
        intra = np.array([np.sqrt(((Z[labels == j] - mu[j]) ** 2).sum(axis=1)).mean() for j in range(mu.shape[0])])
        if mu.shape[0] > 1:
            D = np.sqrt(((mu[:, None, :] - mu[None, :, :]) ** 2).sum(axis=2))
            inter = D[np.triu_indices(mu.shape[0], 1)]
            mean_inter, max_inter = float(inter.mean()), float(inter.max())
        else:
            mean_inter = max_inter = 0.0
        return [float(intra.mean()), mean_inter, max_inter, max_inter - float(intra.min())]

    # ------------------------------------------------------------ inference
    def _standardize(self, X):
        return np.ascontiguousarray((X - self.mean_) / self.scale_)

    def _assign_Z(self, Z, exclude_self=False):
        from sklearn_frontier.kernels import knn_vote

        n = self.X_fit_.shape[0]
        if self.assign == "centroid":
            out = []
            for mu, tau in zip(self.centroids_, self.assign_temperature_):
                logits = -((Z[:, None, :] - mu[None, :, :]) ** 2).sum(axis=2) / tau
                logits -= logits.max(axis=1, keepdims=True)
                e = np.exp(logits)
                out.append(e / e.sum(axis=1, keepdims=True))
            return out
        k = int(min(self.assign_neighbors, n - 1)) if exclude_self else int(min(self.assign_neighbors, n))
        idx, dist = knn_lists(self.X_fit_, Z, k, exclude_self=exclude_self, metric=self.metric)
        weights = np.ones_like(dist) if self.assign_weights == "uniform" else 1.0 / (dist + 1e-12)
        return [knn_vote(idx, c, int(K), weights) for c, K in zip(self.configurations_, self.n_clusters_)]

    def soft_assignments(self, X, exclude_self=False):
        """Soft assignment of each row to the clusters of every configuration.

        Parameters
        ----------
        X : array-like of shape (n, n_features)
            Rows to assign.
        exclude_self : bool, default=False
            ``X`` is the training data: leave each row out of its own votes.

        Returns
        -------
        S : list of ndarray of shape (n, n_clusters_[i])
            Rows sum to one.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if exclude_self and X.shape[0] != self.X_fit_.shape[0]:
            raise ValueError("exclude_self=True needs the training rows.")
        return self._assign_Z(self._standardize(X), exclude_self=exclude_self)

    def transform(self, X):
        """Soft assignments to every configuration, stacked: shape (n, sum(n_clusters_)).

        Parameters
        ----------
        X : array-like of shape (n, n_features)
            Rows to assign.

        Returns
        -------
        S : ndarray of shape (n, sum(n_clusters_))
            Soft assignments, one block of columns per configuration.
        """
        return np.hstack(self.soft_assignments(X))

    def predict(self, X):
        """Predict hard labels (argmax of the soft assignment) for every configuration.

        Parameters
        ----------
        X : array-like of shape (n, n_features)
            Rows to label.

        Returns
        -------
        labels : ndarray of shape (n, n_configurations_), int64
            Label of each row in each configuration.
        """
        return np.column_stack([s.argmax(axis=1) for s in self.soft_assignments(X)]).astype(np.int64)

    def score(self, X, y=None):
        """Mean assignment confidence: the average over rows and configurations of the largest soft weight.

        Parameters
        ----------
        X : array-like of shape (n, n_features)
            Rows to score.
        y : None
            Ignored.

        Returns
        -------
        score : float
            Mean largest soft weight, in (0, 1].
        """
        return float(np.mean([s.max(axis=1).mean() for s in self.soft_assignments(X)]))

    def get_feature_names_out(self, input_features=None):
        """Get output feature names: ``config{i}_c{j}`` for cluster j of configuration i.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Checked against ``feature_names_in_``; not used otherwise.

        Returns
        -------
        feature_names_out : ndarray of str objects
            Output feature names.
        """
        check_is_fitted(self)
        _check_features(self, input_features)
        return np.asarray([f"config{i}_c{j}" for i, K in enumerate(self.n_clusters_) for j in range(K)],
                          dtype=object)

    def plot_resolution_profile(self, ax=None):
        """Plot the configurations as bands over the resolution axis (matplotlib imported lazily).

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure when None.

        Returns
        -------
        ax : matplotlib Axes
            The axes drawn on.
        """
        check_is_fitted(self)
        return plot_resolution_profile(self, ax=ax)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64"]
        tags.non_deterministic = False
        return tags


def _require_leidenalg():
    try:
        import igraph  # noqa: F401
        import leidenalg  # noqa: F401
    except ImportError as exc:
        raise ImportError("engine='leidenalg' needs the optional packages igraph and leidenalg (GPL): "
                          'pip install ".[leiden]" (or pip install igraph leidenalg).') from exc


def plot_resolution_profile(extractor, ax=None):
    """Plot the bands ``[gamma_lo, gamma_hi]`` of every configuration and the envelope's K.

    The resolution axis is in log scale.

    Parameters
    ----------
    extractor : fitted ConfigurationExtractor
        The extractor whose configurations are drawn.
    ax : matplotlib Axes, default=None
        Axes to draw on; a new figure when None.

    Returns
    -------
    ax : matplotlib Axes
        The axes drawn on.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn.datasets import make_blobs
    >>> from sklearn_frontier.configurations import ConfigurationExtractor, plot_resolution_profile
    >>> X, _ = make_blobs(n_samples=60, centers=3, random_state=0)
    >>> ext = ConfigurationExtractor(n_neighbors=8, n_resolutions=12, random_state=0).fit(X)
    >>> ax = plot_resolution_profile(ext)
    >>> ax.get_xscale()
    'log'
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.5))
    prof = extractor.resolution_profile_
    if "winner_n_clusters" in prof:
        ax.step(prof["gamma"], prof["winner_n_clusters"], where="mid", color="0.4", lw=1,
                label="envelope winner K")
    cmap = plt.get_cmap("tab10")
    for i, ((lo, hi), K) in enumerate(zip(extractor.resolutions_, extractor.n_clusters_)):
        ax.axvspan(lo, max(hi, lo * 1.001), color=cmap(i % 10), alpha=0.3)
        ax.text(np.sqrt(lo * max(hi, lo * 1.001)), K, f"#{i}: K={K}", ha="center", va="bottom", fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("resolution γ")
    ax.set_ylabel("clusters K")
    ax.set_title(f"{extractor.n_configurations_} configurations of {extractor.n_candidates_} candidates")
    ax.legend(loc="upper left", fontsize=8)
    return ax
