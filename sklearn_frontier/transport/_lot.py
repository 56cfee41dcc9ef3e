"""Linearized optimal transport: point clouds -> tangent vectors at a fixed reference measure (and back)."""

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_array, check_random_state

from sklearn_frontier.utils._compat import (
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
    validate_data,
)

__all__ = ["LOTEmbedding", "as_clouds"]


class CloudCollection:
    """Validated snapshots: float64 clouds (n_i, d), normalised weights, and how they were given."""

    __slots__ = ("clouds", "weights", "dirac", "y_ndim")

    def __init__(self, clouds, weights, dirac, y_ndim):
        self.clouds, self.weights, self.dirac, self.y_ndim = clouds, weights, dirac, y_ndim

    def __len__(self):
        return len(self.clouds)

    @property
    def n_features(self):
        return self.clouds[0].shape[1]


def _check_weights(weights, clouds, name):
    if weights is None:
        return [np.full(len(c), 1.0 / len(c)) for c in clouds]
    if sp.issparse(weights) or isinstance(weights, (str, bytes)):
        raise TypeError(f"{name} must be a list of 1-D arrays, got {type(weights).__name__}.")
    if len(weights) != len(clouds):
        raise ValueError(f"{name} has {len(weights)} entries but there are {len(clouds)} clouds.")
    out = []
    for i, (w, c) in enumerate(zip(weights, clouds)):
        w = np.asarray(w, dtype=np.float64).reshape(-1)
        if w.shape[0] != c.shape[0]:
            raise ValueError(f"{name}[{i}] has {w.shape[0]} weights for a cloud of {c.shape[0]} points.")
        if not np.all(np.isfinite(w)):
            raise ValueError(f"{name}[{i}] contains non-finite weights.")
        if np.any(w < 0) or w.sum() <= 0:
            raise ValueError(f"{name}[{i}] must be non-negative with a positive sum.")
        out.append(w / w.sum())
    return out


def as_clouds(data, weights=None, *, name="clouds", n_features=None):
    """Validate a collection of point clouds (see the package docstring for the accepted forms).

    A list/tuple of 2-D arrays (clouds of any sizes), a 3-D array (N, n, d), or a numeric 1-D/2-D array read as
    N Dirac measures (one point per row; a 1-D array gives points in R^1). Returns a :class:`CloudCollection`.
    """
    if data is None:
        raise ValueError(f"{name} is None; pass a list of (n_points, n_features) arrays.")
    if sp.issparse(data) or (isinstance(data, (list, tuple)) and any(sp.issparse(c) for c in data)):
        raise TypeError(f"sparse input not supported for {name}; pass dense point clouds.")
    if isinstance(data, (list, tuple)):
        if len(data) == 0:
            raise ValueError(f"{name} is empty: at least one cloud is needed.")
        if any(isinstance(c, np.ndarray) and c.ndim == 1 for c in data):
            raise ValueError(f"each cloud in {name} must be 2-D (n_points, n_features); reshape 1-D clouds "
                             "with x.reshape(-1, 1).")
        ndims = [np.ndim(c) for c in data]
        if all(k == 2 for k in ndims):
            clouds = [check_array(c, dtype=np.float64, ensure_min_samples=1, input_name=f"{name}[{i}]")
                      for i, c in enumerate(data)]
            dirac, y_ndim = False, None
        elif all(k <= 1 for k in ndims):
            clouds, dirac, y_ndim = None, True, None
        else:
            raise ValueError(f"{name} mixes clouds of different ranks {sorted(set(ndims))}; each cloud must be "
                             "a 2-D (n_points, n_features) array.")
    else:
        clouds, dirac, y_ndim = None, None, None
    if clouds is None:
        arr = check_array(data, dtype=np.float64, ensure_2d=False, allow_nd=True, input_name=name)
        if arr.ndim == 0 or arr.size == 0:
            raise ValueError(f"{name} is empty: at least one cloud is needed.")
        if arr.ndim == 3:
            clouds, dirac = [np.ascontiguousarray(c) for c in arr], False
        elif arr.ndim in (1, 2):
            y_ndim = arr.ndim
            pts = arr.reshape(arr.shape[0], -1)
            clouds, dirac = [pts[i: i + 1].copy() for i in range(pts.shape[0])], True
        else:
            raise ValueError(f"{name} must be a list of 2-D clouds or a 1-D, 2-D or 3-D array; got {arr.ndim}-D.")
    dims = {c.shape[1] for c in clouds}
    if len(dims) > 1:
        raise ValueError(f"all clouds in {name} must have the same dimension; got dimensions {sorted(dims)}.")
    if n_features is not None and clouds[0].shape[1] != n_features:
        raise ValueError(f"{name} have {clouds[0].shape[1]} features (dimension) but the estimator was fitted on "
                         f"{n_features} features.")
    return CloudCollection(clouds, _check_weights(weights, clouds, f"weights of {name}"), dirac, y_ndim)


def _solve_plan(a, b, X, Y, solver, reg, max_iter):
    """Optimal plan between (a, X) and (b, Y); POT does the solve, our kernel the cost."""
    import ot

    from sklearn_frontier.kernels.transport import sqeuclidean_cost

    C = sqeuclidean_cost(X, Y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if solver == "exact":
            P = ot.emd(a, b, C, numItermax=max_iter)
        else:
            scale = float(np.median(C)) or 1.0
            P = ot.sinkhorn(a, b, C, reg * scale, numItermax=max_iter)
    if any("numItermax" in str(w.message) or "did not converge" in str(w.message).lower() for w in caught):
        warnings.warn(f"the {solver} OT solver stopped at max_iter={max_iter} before optimality; increase "
                      "max_iter.", ConvergenceWarning, stacklevel=3)
    return P


class LOTEmbedding(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Linearized optimal transport (LOT) embedding of point clouds at a reference measure.

    Maps each point cloud (a sample of a probability measure) to a fixed-length vector, its tangent vector at
    a reference measure, so that Euclidean distances between the vectors approximate 2-Wasserstein distances
    between the clouds and linear methods apply to them.

    Read more in the :ref:`User Guide <user_guide_transport>`.

    Parameters
    ----------
    n_support : int, default=150
        Atoms of the reference, capped at the largest cloud's size (Dirac data: one atom).
    reference : {"barycenter", "first", "gaussian"} or array-like of shape (m, d), default="barycenter"
        The free-support W2 barycenter of the fitted clouds (POT), the first cloud, a seeded Gaussian sample
        with the pooled mean and covariance, or a fixed support.
    solver : {"exact", "sinkhorn"}, default="exact"
        ``ot.emd`` or ``ot.sinkhorn`` (regularisation ``reg`` times the median cost).
    reg : float, default=None
        Entropic regularisation of ``"sinkhorn"`` (None: 1e-2).
    barycenter_iter : int, default=10
        Iterations of the free-support barycenter.
    max_iter : int, default=100000
        Iteration cap of each OT solve (a ConvergenceWarning when hit).
    random_state : int, RandomState instance or None, default=None
        Seeds the barycenter's initial support and the ``"gaussian"`` reference.

    Attributes
    ----------
    reference_ : ndarray of shape (n_support_, n_features_in_)
        Reference atoms (sorted in 1-D).
    reference_weights_ : ndarray of shape (n_support_,)
        Reference weights (uniform).
    n_support_ : int
        Number of reference atoms m.
    n_features_in_ : int
        Dimension d of the clouds.
    n_iter_ : int
        Barycenter iterations run (1 when no iteration was needed).
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during ``fit``. Defined only when X is a 2-D array of N Dirac measures with
        feature names that are all strings.

    See Also
    --------
    WassersteinPathRegressor : A Gaussian process over time on these tangent vectors.

    Notes
    -----
    Each snapshot ``mu = sum_j b_j delta_{y_j}`` is solved against the reference ``sigma = sum_i a_i delta_{x_i}``
    (m atoms, uniform weights) with POT; the barycentric map ``T(x_i) = sum_j P_ij y_j / sum_j P_ij`` gives the
    tangent vector ``v = ((T(x_i) - x_i) sqrt(a_i))_i`` of length ``m * d``, so that ``||v_mu - v_nu||``
    approximates ``W2(mu, nu)`` (exact for translations and, in 1-D, on the reference's quantile cells).
    In 1-D the plan is the monotone one (sorted reference atoms against quantile cells), an exact isometry.

    References
    ----------
    W. Wang et al., "A linear optimal transportation framework for quantifying and visualizing variations in sets
    of images", IJCV 2013. C. Moosmueller and A. Cloninger, "Linear optimal transport embedding: provable
    Wasserstein classification for certain rigid transformations and perturbations", 2023.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.transport import LOTEmbedding
    >>> X = np.random.default_rng(0).normal(size=(20, 2))
    >>> emb = LOTEmbedding(reference="first").fit([X, X + 1.0])
    >>> V = emb.transform([X + 3.0])
    >>> bool(np.allclose(V.reshape(20, 2), 3.0 * np.sqrt(1 / 20)))
    True
    """

    _parameter_constraints = {
        "n_support": [Interval(Integral, 1, None, closed="left")],
        "reference": [StrOptions({"barycenter", "first", "gaussian"}), "array-like"],
        "solver": [StrOptions({"exact", "sinkhorn"})],
        "reg": [Interval(Real, 0, None, closed="neither"), None],
        "barycenter_iter": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_support=150, *, reference="barycenter", solver="exact", reg=None, barycenter_iter=10,
                 max_iter=100000, random_state=None):
        self.n_support = n_support
        self.reference = reference
        self.solver = solver
        self.reg = reg
        self.barycenter_iter = barycenter_iter
        self.max_iter = max_iter
        self.random_state = random_state

    # -- input handling ------------------------------------------------------------------------------------------
    def _collect(self, X, weights, reset):
        is_numeric_2d = not isinstance(X, (list, tuple)) and getattr(X, "ndim", 2) != 3
        if sp.issparse(X):
            raise TypeError("sparse input not supported: LOTEmbedding takes dense point clouds.")
        if is_numeric_2d:  # N Dirac measures, one per row: the sklearn-array case (feature names, n_features_in_)
            X = validate_data(self, X, reset=reset, dtype=np.float64, ensure_min_samples=2 if reset else 1)
            return as_clouds(X, weights, name="X")
        coll = as_clouds(X, weights, name="clouds", n_features=None if reset else self.n_features_in_)
        if reset:
            self.n_features_in_ = coll.n_features
            if hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
        return coll

    # -- fitting -------------------------------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, weights=None):
        """Fix the reference measure from the clouds ``X``.

        Parameters
        ----------
        X : list of array-like of shape (n_i, d), array of shape (N, n, d), or array of shape (N, d)
            The snapshots (a 2-D numeric array is read as N Dirac measures).
        y : None
            Ignored.
        weights : list of array-like of shape (n_i,), default=None
            Point weights per cloud (uniform by default; normalised).

        Returns
        -------
        self : LOTEmbedding
            The fitted embedding.
        """
        coll = self._collect(X, weights, reset=True)
        if len(coll) < 2:
            raise ValueError(f"LOTEmbedding needs at least 2 clouds to fit, got {len(coll)}.")
        rng = check_random_state(self.random_state)
        d = coll.n_features
        m = min(self.n_support, max(len(c) for c in coll.clouds))
        self.n_iter_ = 1
        if not isinstance(self.reference, str):
            ref = check_array(self.reference, dtype=np.float64, input_name="reference")
            if ref.shape[1] != d:
                raise ValueError(f"reference has dimension {ref.shape[1]} but the clouds have dimension {d}.")
        elif m == 1:  # one atom: the barycenter is the mean of the means (exact; the Dirac case)
            ref = np.mean([w @ c for c, w in zip(coll.clouds, coll.weights)], axis=0, keepdims=True)
        elif self.reference == "first":
            first = coll.clouds[0]
            keep = np.sort(rng.choice(len(first), size=m, replace=False)) if len(first) > m else slice(None)
            ref = first[keep].copy()
        elif self.reference == "gaussian":
            pooled = np.vstack(coll.clouds)
            cov = np.atleast_2d(np.cov(pooled, rowvar=False)) if len(pooled) > 1 else np.eye(d)
            ref = rng.multivariate_normal(pooled.mean(axis=0), cov, size=m)
        elif d == 1:  # 1-D W2 barycenter: average the quantile cell means
            edges = np.linspace(0.0, 1.0, m + 1)
            ref = np.mean([self._quantile_means(c, w, edges) for c, w in zip(coll.clouds, coll.weights)],
                          axis=0)[:, None]
        else:
            ref, self.n_iter_ = self._barycenter(coll, m, rng)
        if d == 1:
            ref = np.sort(ref, axis=0)
        self.reference_ = np.ascontiguousarray(ref)
        self.n_support_ = ref.shape[0]
        self.reference_weights_ = np.full(self.n_support_, 1.0 / self.n_support_)
        self._n_features_out = self.n_support_ * d
        return self

    def _barycenter(self, coll, m, rng):
        import ot

        pooled = np.vstack(coll.clouds)
        X_init = pooled[np.sort(rng.choice(len(pooled), size=m, replace=False))].copy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            ref, log = ot.lp.free_support_barycenter(coll.clouds, coll.weights, X_init,
                                                     numItermax=self.barycenter_iter, stopThr=1e-7, log=True)
        return np.asarray(ref, dtype=np.float64), max(1, len(log.get("displacement_square_norms", [1])))

    @staticmethod
    def _quantile_means(cloud, w, edges):
        from sklearn_frontier.kernels.transport import quantile_cell_means

        keep = w > 0
        x, w = cloud[keep, 0], w[keep]
        order = np.argsort(x, kind="stable")
        return quantile_cell_means(x[order], w[order] / w[order].sum(), edges)

    # -- embedding -----------------------------------------------------------------------------------------------
    def _tangent(self, cloud, w):
        ref, a = self.reference_, self.reference_weights_
        if self.n_support_ == 1:
            return (w @ cloud - ref[0]) * np.sqrt(a[0])
        if len(cloud) == 1:
            return ((cloud[0][None, :] - ref) * np.sqrt(a)[:, None]).ravel()
        if cloud.shape[1] == 1:
            edges = np.concatenate([[0.0], np.cumsum(a)])
            edges[-1] = 1.0
            return (self._quantile_means(cloud, w, edges) - ref[:, 0]) * np.sqrt(a)
        from sklearn_frontier.kernels.transport import barycentric_projection

        P = _solve_plan(a, w, ref, cloud, self.solver, 1e-2 if self.reg is None else self.reg, self.max_iter)
        return barycentric_projection(P, cloud, a, ref)

    def _embed(self, coll):
        return np.vstack([self._tangent(c, w) for c, w in zip(coll.clouds, coll.weights)])

    def transform(self, X, *, weights=None):
        """Tangent vectors of the clouds ``X`` at the reference.

        Parameters
        ----------
        X : list of array-like of shape (n_i, d), array of shape (N, n, d), or array of shape (N, d)
            Clouds of the fitted dimension (a 2-D numeric array is read as N Dirac measures).
        weights : list of array-like of shape (n_i,), default=None
            Point weights per cloud.

        Returns
        -------
        V : ndarray of shape (N, n_support_ * n_features_in_)
            One tangent vector per cloud.
        """
        check_is_fitted(self)
        return self._embed(self._collect(X, weights, reset=False))

    def fit_transform(self, X, y=None, *, weights=None):
        """Fit the reference on ``X`` and return their tangent vectors (see :meth:`transform`).

        Parameters
        ----------
        X : list of array-like of shape (n_i, d), array of shape (N, n, d), or array of shape (N, d)
            The snapshots.
        y : None
            Ignored.
        weights : list of array-like of shape (n_i,), default=None
            Point weights per cloud.

        Returns
        -------
        V : ndarray of shape (N, n_support_ * n_features_in_)
            One tangent vector per cloud.
        """
        return self.fit(X, weights=weights).transform(X, weights=weights)

    def inverse_transform(self, X):
        """Push the reference forward by tangent vectors: ``x_i + v_i / sqrt(a_i)``, weights ``reference_weights_``.

        Parameters
        ----------
        X : array-like of shape (N, n_support_ * n_features_in_)
            Tangent vectors.

        Returns
        -------
        clouds : list of ndarray of shape (n_support_, n_features_in_)
            One cloud per row; with a one-atom reference (Dirac data) an array of shape (N, n_features_in_).
        """
        check_is_fitted(self)
        V = check_array(X, dtype=np.float64, input_name="X")
        m, d = self.reference_.shape
        if V.shape[1] != m * d:
            raise ValueError(f"X has {V.shape[1]} features but the tangent space has n_support_ * n_features_in_ "
                             f"= {m * d} features.")
        clouds = self.reference_[None] + V.reshape(-1, m, d) / np.sqrt(self.reference_weights_)[None, :, None]
        if m == 1:
            return clouds[:, 0, :]
        return list(clouds)

    def lot_distances(self, X, Y=None):
        """Compute pairwise LOT distances ``||v_x - v_y||`` between the clouds of ``X`` and of ``Y``.

        Parameters
        ----------
        X : list of array-like of shape (n_i, d)
            Clouds.
        Y : list of array-like of shape (n_j, d), default=None
            Other clouds (default: ``X``).

        Returns
        -------
        D : ndarray of shape (len(X), len(Y))
            LOT distances.
        """
        from scipy.spatial.distance import cdist

        VX = self.transform(X)
        VY = VX if Y is None else self.transform(Y)
        return cdist(VX, VY)

    def score(self, X, y=None, *, weights=None):
        """Negative mean W2^2 between each cloud and its reconstruction ``inverse_transform(transform(X))``.

        0 when the embedding loses nothing (e.g. translations of the reference); a way to compare ``n_support``
        or ``reference`` choices in a search.

        Parameters
        ----------
        X : list of array-like of shape (n_i, d) or array
            Clouds.
        y : None
            Ignored.
        weights : list of array-like of shape (n_i,), default=None
            Point weights per cloud.

        Returns
        -------
        score : float
            Higher (closer to 0) is better.
        """
        check_is_fitted(self)
        coll = self._collect(X, weights, reset=False)
        V = self._embed(coll)
        m, d = self.reference_.shape
        recon = self.reference_[None] + V.reshape(-1, m, d) / np.sqrt(self.reference_weights_)[None, :, None]
        errors = []
        for cloud, w, rec in zip(coll.clouds, coll.weights, recon):
            if m == 1:  # W2^2 to a single atom: the weighted spread around it
                errors.append(float(w @ np.sum((cloud - rec[0]) ** 2, axis=1)))
                continue

            errors.append(float(wasserstein2_squared([rec], [cloud], weights_pred=self.reference_weights_,
                                                     weights_truth=[w])[0]))
        return -float(np.mean(errors))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags


def wasserstein2_squared(pred, truth, *, weights_pred=None, weights_truth=None):
    """Exact W2^2 (``ot.emd2``) between paired clouds (uniform weights unless given), one value per pair.

    Parameters
    ----------
    pred : list of array-like of shape (n_i, d)
        First clouds.
    truth : list of array-like of shape (k_i, d)
        Second clouds, paired with ``pred``.
    weights_pred : array-like of shape (n_i,), default=None
        Weights shared by every ``pred`` cloud (uniform by default).
    weights_truth : list of array-like, default=None
        Weights per ``truth`` cloud (uniform by default).

    Returns
    -------
    w2sq : ndarray of shape (len(pred),)
        Squared W2 per pair.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.transport import wasserstein2_squared
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0]])
    >>> wasserstein2_squared([X], [X + [0.0, 2.0]])
    array([4.])
    """
    import ot

    from sklearn_frontier.kernels.transport import sqeuclidean_cost

    out = []
    for i, (P, Q) in enumerate(zip(pred, truth)):
        P, Q = np.atleast_2d(np.asarray(P, float)), np.atleast_2d(np.asarray(Q, float))
        a = np.full(len(P), 1.0 / len(P)) if weights_pred is None else np.asarray(weights_pred, float)
        b = np.full(len(Q), 1.0 / len(Q)) if weights_truth is None else np.asarray(weights_truth[i], float)
        out.append(float(ot.emd2(a, b, sqeuclidean_cost(P, Q), numItermax=1_000_000)))
    return np.array(out)
