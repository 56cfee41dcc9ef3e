"""PRBASTRegressor and BASTRegressor: the public estimators on the shared spanning-tree engine."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator

from sklearn_frontier.utils._compat import Interval, StrOptions

from ._base import _COMMON_CONSTRAINTS, _BaseSpanningTreeEnsemble
from ._components import FAMILIES, HardPartition, resolve_component

__all__ = ["PRBASTRegressor", "BASTRegressor"]


class PRBASTRegressor(_BaseSpanningTreeEnsemble):
    """Probabilistically-routed Bayesian additive spanning trees (PR-BAST) on constrained domains.

    ``y = sum_m g_m(x) + noise``, where each component ``g_m`` lives on a random spanning tree of a domain
    graph (Delaunay edges that stay inside ``domain``, or a kNN graph) and, given its tree, is a Gaussian
    field with tree-structured precision (``RoutedField``: each vertex copies its parent with probability
    ``exp(-length / length_scale)``). Trees, length scales, fields and the noise are sampled by backfitting
    MCMC; each field draw and collapsed likelihood costs O(n) (``tree_precision_solve``).

    The default component (``component=None``) is ``RoutedField(learn_tau2=True)``: the routed field
    with its total prior variance learned; predictions attach new points with barycentric weights in
    their Delaunay triangle (``python -m benchmarks prbast`` measures both; its tables are on the benchmark
    page).

    Read more in the :ref:`User Guide <user_guide_spanning_trees>`.

    Parameters
    ----------
    n_trees : int, default=20
        Number of additive components M. Chosen with ``tree_update_prob`` by measurement on held-out data
        (``benchmarks/results/prbast_defaults.md``): as accurate as 30 components at a lower cost.
    component : None, {"routed"} or a component instance, default=None
        Component family (cloned into ``component_``).
    domain : None, (k, 2) array, list of rings, object with ``__geo_interface__`` or callable, default=None
        The domain; graph edges that leave it are removed.
    graph : {"auto", "chain", "delaunay", "knn"} or callable, default="auto"
        Domain graph; see :func:`build_domain_graph`.
    n_neighbors : int, default=8
        Neighbours of the kNN graph.
    metric : str, default="euclidean"
        Metric of the kNN graph and of the edge lengths.
    domain_tolerance : float, default=1e-3
        Tolerance (fraction of the diameter) of the boundary tests.
    tree_prior : {"length_mst", "random_mst", "uniform"}, default="length_mst"
        Prior (and proposal) of the spanning trees.
    tree_jitter : float, default=0.3
        Log-normal jitter of the edge lengths in ``"length_mst"``.
    tree_update_prob : float, default=0.05
        Probability per component and sweep of proposing a new tree from the prior.
    nu, q : float, default=3.0, 0.9
        BART calibration of the inverse-gamma noise prior.
    noise_variance : float, default=None
        Fix the noise variance (y units) instead of sampling it.
    n_iter, n_burnin, thin : int, default=1000, 300, 2
        Sweeps, burn-in sweeps and thinning.
    n_chains : int, default=1
        Number of independent MCMC chains.
    n_jobs : int, default=None
        Chains run on joblib threads.
    predict_neighbors : {"triangle", "knn"}, default="triangle"
        Candidate attachment vertices of a new point: its Delaunay triangle or its nearest vertices.
    n_predict_neighbors : int, default=5
        Number of candidate vertices with ``predict_neighbors="knn"`` (and the fallback).
    predict_weighting : {"barycentric", "uniform", "distance"}, default="barycentric"
        Attachment probabilities of a new point over its candidate vertices: barycentric coordinates in
        the containing (visible) Delaunay triangle, else inverse distance; ``"uniform"`` is BAST's rule.
    attachment : {"mean", "random"}, default="mean"
        How a new point's leaf enters intervals and posterior samples (the posterior mean is the same):
        ``"random"`` attaches it to one random candidate vertex per tree and draw (BAST's soft prediction);
        ``"mean"`` uses the candidate-weighted mean of the attached values plus the leaf variance (one
        interval from the mixture rather than one random candidate per draw).
    warm_start : bool, default=False
        Continue the saved chains on the same data.
    checkpoint : str, path-like or None, default=None
        Name of the MCMC checkpoint files (``.npz``, no pickle), written atomically every
        ``checkpoint_every`` sweeps and when SIGINT interrupts the fit (at the end of the current sweep;
        ``KeyboardInterrupt`` is then raised, naming the file). Each fit writes its own file, the name with
        a key of its data, parameters, built domain graph and start state before the suffix (``ck.npz`` ->
        ``ck.<key>.npz``, see ``checkpoint_path_``), so clones that share the parameter, as in
        ``cross_validate`` folds and ``GridSearchCV`` candidates, never meet each other's files. Fitting the
        same data with the same parameters again finds its file and resumes from it: a fit killed by SIGKILL
        or interrupted by SIGINT gives bit-for-bit the uninterrupted result. A callable ``domain``, ``graph``
        or ``metric`` is known by the graph it builds, so after its body is edited the fit starts afresh in
        a file of its own. A file whose content belongs to another fit is refused (``StateFileError``, a
        ``ValueError``). Files are kept after the fit; delete them to start afresh.
    checkpoint_every : int, default=100
        Sweeps between checkpoints.
    verbose : int, default=0
        Verbosity level.
    random_state : int, RandomState instance or None, default=None
        Seed of the MCMC chains and of the predictive draws.

    Attributes
    ----------
    graph_ : DomainGraph
        The domain graph on the distinct training locations (its vertices), in the units of ``X``.
    component_ : component instance
        The fitted component family (a clone of ``component``).
    y_mean_, y_scale_ : float
        Weighted mean and standard deviation used to standardise ``y``.
    draws_ : dict of arrays
        The kept MCMC draws, one row per chain and kept sweep: ``fit`` (n_chains, n_kept, n_vertices) float32,
        the sum of the components at the vertices (standardised units); ``length_scale`` (n_chains, n_kept,
        n_trees); ``tau2``, ``sigma`` (y units) and ``log_likelihood`` (n_chains, n_kept); ``edge_boundary``
        and ``tree_edge`` (n_chains, n_edge_draws, n_edges) from at most about 20 kept draws per chain. With
        ``attachment="random"`` also ``vertex_values`` (n_chains, n_kept, n_trees, n_vertices) float32, each
        component's field, which random attachment needs.
    sigma_ : float
        Posterior mean of the noise standard deviation, in y units.
    chain_states_ : list of dict
        The state of each chain after the last sweep (components, noise variance, generator), from which
        ``warm_start=True`` continues.
    trees_ : ndarray of shape (n_chains, n_trees, n_vertices - 1)
        Edge ids (rows of ``graph_.edges``) of each component's spanning tree after the last sweep.
    acceptance_rates_ : dict
        Acceptance rate of each Metropolis move (``"length_scale"``, ``"tree"``) over all chains and sweeps.
    edge_boundary_score_ : ndarray of shape (n_edges,)
        1 - mean prior correlation of the field at the two ends of each graph edge.
    tree_edge_frequency_ : ndarray of shape (n_edges,)
        Fraction of the components' trees (over the recorded draws) that contain each graph edge.
    feature_importances_ : ndarray of shape (n_features,)
        Mean squared gradient of the posterior-mean fit along each coordinate (scaled by its spread),
        normalised to sum to 1.
    checkpoint_path_ : str or None
        The checkpoint file this fit wrote (``checkpoint`` with the fit's key), None without ``checkpoint``.
    convergence_ : dict
        R-hat and bulk ESS of sigma, the log-likelihood and the fit at 20 vertices.
    n_iter_ : int
        Sweeps run per chain so far (all fits of a warm-started chain together).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit; only defined when ``X`` has string column names.

    See Also
    --------
    BASTRegressor : The hard-cut (piecewise-constant) parent method.

    Notes
    -----
    Sampler. The ensemble is fitted by backfitting: each sweep visits the components in turn with the
    partial residuals of the others. For a routed component on its rooted tree the field is a Gaussian
    Markov tree (precision non-zero only on tree edges), so leaves-first elimination of the posterior
    precision has no fill-in: one O(n) pass gives the exact collapsed likelihood (field integrated out) and
    one root-first pass an exact draw. Per component and sweep: a reflected random-walk Metropolis step on
    the log length scale (two eliminations; the coefficients of the current state are kept from the
    previous sweep, so only the proposal costs an exponential per vertex); with probability
    ``tree_update_prob`` an independence Metropolis step to a tree (and root) drawn from the tree prior,
    accepted with the likelihood ratio (a Kruskal minimum spanning tree of jittered edge lengths, sorted by
    a stable bucket sort in expected linear time); the exact field draw. Then ``tau2`` (when learned) and
    the noise variance are drawn by Gibbs steps. A whole sweep runs in one compiled call
    (``sklearn_frontier.kernels.spanning_trees.routed_sweep``, with a numpy reference twin); the random
    numbers are drawn beforehand from the chain's generator, so both backends and any ``n_jobs`` give the
    same chain. Chains run in parallel through joblib (``n_jobs``); each sweep costs O(n_trees n) plus an
    O(E) Kruskal per tree proposal.

    Prediction. A new point is a new leaf of every tree, attached to a visible vertex of its Delaunay
    triangle (or a nearby vertex) with probabilities ``predict_weighting``. The leaf takes the value of its
    attachment vertex plus a Gaussian with the routed field's conditional variance across an edge of the
    point's distance; so the predictive mean per draw is the weighted mean of the fit at the candidates,
    and only the fit (the sum of the components) and the length scales are kept per draw, not every
    component's field (with ``attachment="random"`` the fields are kept too).

    References
    ----------
    Chakraborty, Mandal & Chakraborty, "Probabilistically-routed Bayesian Additive Spanning Trees for
    Learning on Constrained Domains", ICML 2026. Luo, Sang & Mallick, "BAST: Bayesian Additive Regression
    Spanning Trees for Complex Constrained Domain", NeurIPS 2021.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.spanning_trees import PRBASTRegressor
    >>> X = np.linspace(0, 1, 30)[:, None]
    >>> y = np.sin(6 * X[:, 0])
    >>> est = PRBASTRegressor(n_trees=3, n_iter=60, n_burnin=20, random_state=0).fit(X, y)
    >>> bool(est.score(X, y) > 0.9)
    True
    """

    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "component": [None, StrOptions(set(FAMILIES)), BaseEstimator],
        "tree_prior": [StrOptions({"length_mst", "random_mst", "uniform"})],
        "tree_jitter": [Interval(Real, 0, None, closed="left")],
        "tree_update_prob": [Interval(Real, 0, 1, closed="both")],
    }

    def __init__(self, n_trees=20, component=None, *, domain=None, graph="auto", n_neighbors=8, metric="euclidean",
                 domain_tolerance=1e-3, tree_prior="length_mst", tree_jitter=0.3, tree_update_prob=0.05, nu=3.0,
                 q=0.9, noise_variance=None, n_iter=1000, n_burnin=300, thin=2, n_chains=1, n_jobs=None,
                 predict_neighbors="triangle", n_predict_neighbors=5, predict_weighting="barycentric",
                 attachment="mean", warm_start=False, checkpoint=None, checkpoint_every=100, verbose=0,
                 random_state=None):
        self.n_trees = n_trees
        self.component = component
        self.domain = domain
        self.graph = graph
        self.n_neighbors = n_neighbors
        self.metric = metric
        self.domain_tolerance = domain_tolerance
        self.tree_prior = tree_prior
        self.tree_jitter = tree_jitter
        self.tree_update_prob = tree_update_prob
        self.nu = nu
        self.q = q
        self.noise_variance = noise_variance
        self.n_iter = n_iter
        self.n_burnin = n_burnin
        self.thin = thin
        self.n_chains = n_chains
        self.n_jobs = n_jobs
        self.predict_neighbors = predict_neighbors
        self.n_predict_neighbors = n_predict_neighbors
        self.predict_weighting = predict_weighting
        self.attachment = attachment
        self.warm_start = warm_start
        self.checkpoint = checkpoint
        self.checkpoint_every = checkpoint_every
        self.verbose = verbose
        self.random_state = random_state

    def _make_family(self):
        if self.warm_start and hasattr(self, "component_"):
            return self.component_
        family = resolve_component(self.component)
        family._validate()
        self.component_ = family
        return family

    def _validate_extra_params(self):
        family = resolve_component(self.component)
        family._validate()

    def _standardize(self, y, w):
        mean = float(np.average(y, weights=w))
        sd = float(np.sqrt(np.average((y - mean) ** 2, weights=w)))
        return mean, (sd if sd > 0 else 1.0)

    def _tree_settings(self):
        return self.tree_prior, float(self.tree_jitter), float(self.tree_update_prob)

    def _attach_fn(self):
        return type(self.component_).attach_variance


class BASTRegressor(_BaseSpanningTreeEnsemble):
    """Bayesian additive regression spanning trees (BAST, Luo, Sang & Mallick 2021).

    A port of the official R code's model: each of ``n_trees`` components is a random spanning tree of the
    domain graph cut into ``k`` pieces (``k`` truncated Poisson), one Gaussian constant per piece;
    birth / death / change moves with the piece means integrated out, a "hyper" move redrawing the tree
    within the partition, Gibbs updates of the means and the noise. Predictions attach each new point to a
    random visible training vertex nearby (BAST's soft prediction).

    Read more in the :ref:`User Guide <user_guide_spanning_trees>`.

    Parameters
    ----------
    n_trees : int, default=30
        Number of additive components (spanning trees).
    k_max : int, default=5
        Maximum number of pieces per tree.
    lambda_k : float, default=4.0
        Poisson mean of the number of pieces.
    sigma_mu : float, default=None
        Prior sd of the piece means on the ±0.5 response scale; default ``0.5 / (2 sqrt(n_trees))``.
    domain, graph, n_neighbors, metric, domain_tolerance, nu, q, noise_variance : see PRBASTRegressor
        As in :class:`PRBASTRegressor`.
    n_iter, n_burnin, thin : int, default=1500, 500, 2
        Sweeps, burn-in sweeps and thinning.
    n_chains, n_jobs, predict_neighbors, n_predict_neighbors, predict_weighting : see PRBASTRegressor
        As in :class:`PRBASTRegressor`.
    attachment : {"random", "mean"}, default="random"
        See PRBASTRegressor; BAST's code attaches at random.
    warm_start, checkpoint, checkpoint_every, verbose, random_state : see PRBASTRegressor
        As in :class:`PRBASTRegressor`.

    Attributes
    ----------
    graph_ : DomainGraph
        The domain graph on the distinct training locations (its vertices), in the units of ``X``.
    y_mean_, y_scale_ : float
        Weighted mean and twice the largest absolute deviation, used to scale ``y`` to [-0.5, 0.5].
    draws_ : dict of arrays
        The kept MCMC draws: ``fit`` (n_chains, n_kept, n_vertices) float32, the sum of the components at
        the vertices (scaled units); ``vertex_values`` (n_chains, n_kept, n_trees, n_vertices) float32 with
        ``attachment="random"``; ``n_clusters`` (n_chains, n_kept, n_trees); ``sigma`` (y units) and
        ``log_likelihood`` (n_chains, n_kept); ``edge_boundary`` and ``tree_edge`` from at most about 20
        kept draws per chain.
    sigma_ : float
        Posterior mean of the noise standard deviation, in y units.
    chain_states_ : list of dict
        The state of each chain after the last sweep, from which ``warm_start=True`` continues.
    trees_ : ndarray of shape (n_chains, n_trees, n_vertices - 1)
        Edge ids (rows of ``graph_.edges``) of each component's spanning tree after the last sweep.
    acceptance_rates_ : dict
        Acceptance rate of each move (``"birth"``, ``"death"``, ``"change"``, ``"hyper"``).
    tree_edge_frequency_ : ndarray of shape (n_edges,)
        Fraction of the components' trees (over the recorded draws) that contain each graph edge.
    feature_importances_ : ndarray of shape (n_features,)
        Mean squared gradient of the posterior-mean fit along each coordinate (scaled by its spread),
        normalised to sum to 1.
    checkpoint_path_ : str or None
        The checkpoint file this fit wrote (``checkpoint`` with the fit's key), None without ``checkpoint``.
    convergence_ : dict
        R-hat and bulk ESS of sigma, the log-likelihood and the fit at 20 vertices.
    n_iter_ : int
        Sweeps run per chain so far (all fits of a warm-started chain together).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit; only defined when ``X`` has string column names.
    edge_boundary_score_ : ndarray of shape (n_edges,)
        Posterior probability that the two ends of each graph edge lie in different pieces (mean over trees).

    See Also
    --------
    PRBASTRegressor : The smooth, probabilistically routed successor.

    References
    ----------
    Luo, Sang & Mallick (2021), "BAST: Bayesian Additive Regression Spanning Trees for Complex Constrained
    Domain", NeurIPS; code https://github.com/ztluostat/BAST.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.spanning_trees import BASTRegressor
    >>> X = np.linspace(0, 1, 40)[:, None]
    >>> y = np.where(X[:, 0] > 0.5, 1.0, -1.0)
    >>> est = BASTRegressor(n_trees=5, n_iter=100, n_burnin=50, random_state=0).fit(X, y)
    >>> bool(est.score(X, y) > 0.9)
    True
    """

    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "k_max": [Interval(Integral, 1, None, closed="left")],
        "lambda_k": [Interval(Real, 0, None, closed="neither")],
        "sigma_mu": [Interval(Real, 0, None, closed="neither"), None],
    }
    _bast_init = True

    def __init__(self, n_trees=30, *, k_max=5, lambda_k=4.0, sigma_mu=None, domain=None, graph="auto",
                 n_neighbors=8, metric="euclidean", domain_tolerance=1e-3, nu=3.0, q=0.9, noise_variance=None,
                 n_iter=1500, n_burnin=500, thin=2, n_chains=1, n_jobs=None, predict_neighbors="triangle",
                 n_predict_neighbors=5, predict_weighting="uniform", attachment="random", warm_start=False,
                 checkpoint=None, checkpoint_every=100, verbose=0, random_state=None):
        self.n_trees = n_trees
        self.k_max = k_max
        self.lambda_k = lambda_k
        self.sigma_mu = sigma_mu
        self.domain = domain
        self.graph = graph
        self.n_neighbors = n_neighbors
        self.metric = metric
        self.domain_tolerance = domain_tolerance
        self.nu = nu
        self.q = q
        self.noise_variance = noise_variance
        self.n_iter = n_iter
        self.n_burnin = n_burnin
        self.thin = thin
        self.n_chains = n_chains
        self.n_jobs = n_jobs
        self.predict_neighbors = predict_neighbors
        self.n_predict_neighbors = n_predict_neighbors
        self.predict_weighting = predict_weighting
        self.attachment = attachment
        self.warm_start = warm_start
        self.checkpoint = checkpoint
        self.checkpoint_every = checkpoint_every
        self.verbose = verbose
        self.random_state = random_state

    def _make_family(self):
        sigma_mu = self.sigma_mu if self.sigma_mu is not None else 0.5 / (2.0 * np.sqrt(self.n_trees))
        return HardPartition(k_max=int(self.k_max), lambda_k=float(self.lambda_k), sigma_mu=float(sigma_mu))

    def _standardize(self, y, w):
        mean = float(np.average(y, weights=w))
        scale = 2.0 * float(np.max(np.abs(y - mean)))
        return mean, (scale if scale > 0 else 1.0)

    def _tree_settings(self):
        return "random_mst", 0.0, 0.0

    def _attach_fn(self):
        return HardPartition.attach_variance
