"""OPG: outer product of gradients (Xia, Tong, Li & Zhu 2002; Xia 2007), SMAVE's initialiser and baseline."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from sklearn_frontier.utils._compat import Interval, StrOptions, _fit_context
from sklearn_frontier.utils._manifolds import canonical_signs

from ._base import (
    _COMMON_CONSTRAINTS,
    _BaseSDR,
    ambient_n_neighbors,
    opg_bandwidth,
    opg_outer_product,
    top_eigenvectors,
)


class OPG(_BaseSDR):
    """Outer product of gradients: top eigenvectors of the mean outer product of local slopes.

    A one-shot estimate of the central mean subspace, without iterations; it is the starting point of
    :class:`SMAVE` and :class:`RMAVE`. Directions are nested in ``n_components``.

    Read more in the :ref:`User Guide <user_guide_sdr>`.

    Parameters
    ----------
    n_components : int, default=2
        Dimension d of the subspace.
    localization : {"knn", "kernel"}, default="knn"
        "knn": the k nearest points, adaptive weights (k = ``n_neighbors`` or ``min(n, max(4 p, 100))``);
        "kernel": every point, Gaussian weights of bandwidth ``bandwidth`` or ``2.34 n ** (-1 / (max(p, 3) + 6))``
        (Xia 2007), O(n^2 p^2).
    n_neighbors : int, default=None
        Neighbours for ``localization="knn"``.
    bandwidth : float, default=None
        Bandwidth for ``localization="kernel"`` (standardised units).
    max_anchors : int, default=None
        Use this many anchors drawn with ``random_state`` (None: every sample).
    kernel : {"gaussian", "epanechnikov", "uniform"}, default="gaussian"
        Weight profile for ``localization="knn"``.
    standardize : bool, default=True
        Standardise the columns of X.
    ridge : float, default=1e-6
        Relative ridge on the local slopes.
    random_state : int, RandomState instance or None, default=None
        Anchor subsample (only with ``max_anchors``).

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Orthonormal rows (standardised space), sign-canonical.
    directions_ : ndarray of shape (n_components, n_features)
        Unit-norm directions in original units.
    eigenvalues_ : ndarray of shape (n_features,)
        All eigenvalues of ``M`` (descending).
    gradient_outer_product_ : ndarray of shape (n_features, n_features)
        ``M``.
    n_components_ : int
        The selected dimension.
    mean_ : ndarray of shape (n_features,)
        Column means of X.
    scale_ : ndarray of shape (n_features,)
        Column standard deviations of X used for standardisation (ones when ``standardize=False``; a constant
        column keeps scale 1).
    y_mean_ : float
        Mean of y.
    y_scale_ : float
        Standard deviation of y (1 when y is constant).
    n_failed_solves_ : int
        Anchors whose local linear fit could not be solved (degenerate neighbourhoods).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined when X has string column names.

    See Also
    --------
    SMAVE : Stochastic Riemannian MAVE started from OPG.
    RMAVE : Refined MAVE.

    Notes
    -----
    Local linear fits of ``y`` in the ambient (standardised) space at each anchor give gradient estimates
    ``b_j``; the central mean subspace is spanned by the top ``n_components`` eigenvectors of
    ``M = mean_j b_j b_j^T``. With ``localization="kernel"`` every point weighs in every local fit, at
    O(n^2 p^2) cost.

    References
    ----------
    .. [1] Xia, Tong, Li & Zhu (2002), JRSSB 64:363-410.
    .. [2] Xia (2007), "A constructive approach to the estimation of dimension reduction directions",
       Ann. Statist. 35:2654-2690.

    Examples
    --------
    >>> from sklearn_frontier.sdr import OPG
    >>> from sklearn_frontier.datasets import make_sdr_regression
    >>> X, y, B0 = make_sdr_regression("C", n_samples=200, n_features=4, random_state=0)
    >>> OPG(n_components=1).fit(X, y).directions_.shape
    (1, 4)
    """

    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "localization": [StrOptions({"knn", "kernel"})],
        "n_neighbors": [Interval(Integral, 1, None, closed="left"), None],
        "bandwidth": [Interval(Real, 0, None, closed="neither"), None],
        "max_anchors": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(self, n_components=2, *, localization="knn", n_neighbors=None, bandwidth=None, max_anchors=None,
                 kernel="gaussian", standardize=True, ridge=1e-6, random_state=None):
        self.n_components = n_components
        self.localization = localization
        self.n_neighbors = n_neighbors
        self.bandwidth = bandwidth
        self.max_anchors = max_anchors
        self.kernel = kernel
        self.standardize = standardize
        self.ridge = ridge
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Estimate the central mean subspace by OPG.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.
        y : array-like of shape (n_samples,)
            Target values.

        Returns
        -------
        self : OPG
            The fitted estimator.
        """
        Z, yt, _ = self._prepare(X, y)
        n, p = Z.shape
        if self.max_anchors is not None and self.max_anchors < n:
            anchors = np.sort(check_random_state(self.random_state).choice(n, self.max_anchors, replace=False))
        else:
            anchors = np.arange(n)
        k = min(self.n_neighbors or ambient_n_neighbors(n, p), n)
        M, n_failed = opg_outer_product(Z, yt, anchors, localization=self.localization, n_neighbors=k,
                                        bandwidth=self.bandwidth or opg_bandwidth(n, p), kernel=self.kernel,
                                        ridge=self.ridge)
        vals, vecs = top_eigenvectors(M, None)
        self.gradient_outer_product_ = M
        self.eigenvalues_ = vals
        self.n_failed_solves_ = n_failed
        self._set_basis(canonical_signs(vecs[:, : self.n_components]))
        return self
