"""SMAVERegressor: SMAVE followed by a regressor on the projection (local linear by default)."""

from numbers import Integral

import numpy as np
from sklearn.base import RegressorMixin, clone

from sklearn_frontier.kernels.sdr import KERNEL_CODES, sdr_local_wls
from sklearn_frontier.utils._compat import HasMethods, Interval, _fit_context, check_is_fitted

from ._base import projected_tree, query_neighbors
from ._smave import SMAVE

PREDICT_RIDGE = 1e-3


class SMAVERegressor(RegressorMixin, SMAVE):
    """Regression on the SMAVE projection: local linear fits in the learned subspace (or any regressor).

    Learns the central mean subspace with :class:`SMAVE`, then predicts y from the projection of X, by default
    with a local linear fit at each query point among its nearest training projections.

    Read more in the :ref:`User Guide <user_guide_sdr>`.

    Parameters
    ----------
    n_components : int, default=2
        Dimension d of the subspace.
    n_neighbors : int, default=None
        Neighbours per anchor in the projected space; None: ``min(n, clip(ceil(n ** (4 / (d + 4))), 10 (d + 1),
        200))``.
    kernel : {"gaussian", "epanechnikov", "uniform"}, default="gaussian"
        Weight profile on the adaptive radius (the distance to the k-th neighbour).
    solver : {"sgd", "trust-regions"}, default="sgd"
        The optimiser (see :class:`SMAVE`).
    batch_size : int or "auto", default="auto"
        Anchors per step; "auto": ``clip(ceil(n / 200), 64, 8192)``.
    max_iter : int, default=500
        Most SGD steps per restart.
    eta0 : float, default=0.5
        Initial step size (the data are standardised, so it is scale-free).
    learning_rate : {"invscaling", "sqrt", "constant"}, default="invscaling"
        Step-size schedule: ``eta0 / (1 + t / decay_steps)``, ``eta0 / sqrt(1 + t / decay_steps)`` or ``eta0``.
    decay_steps : float, default=100.0
        Time scale ``tau`` of the schedule.
    retraction : {"qr", "polar"}, default="qr"
        Retraction on the Stiefel manifold.
    refresh_neighbors : int, "auto" or "never", default="auto"
        When to rebuild the neighbour sets (see :class:`SMAVE`).
    refresh_tol : float, default=0.05
        Subspace movement that triggers a rebuild under "auto".
    init : {"opg", "random"} or array-like of shape (n_components, n_features), default="opg"
        Initial basis: kNN-OPG, a random orthonormal draw (not reliable) or given directions in original units.
    n_init : int, default=1
        Restarts; the one with the lowest exact evaluation loss is kept.
    tol : float, default=1e-3
        Windowed stopping rule (see :class:`SMAVE`); None runs ``max_iter`` steps.
    n_iter_no_change : int, default=20
        Window length of the stopping rule and of the averaging.
    average : bool, default=True
        Return the last window's averaged subspace rather than the last iterate.
    reservoir_size : int, default=20000
        Not used by the regressor (it has no ``partial_fit``); kept for parameter parity with :class:`SMAVE`.
    standardize : bool, default=True
        Standardise the columns of X (directions are reported in original units either way).
    ridge : float, default=1e-8
        Relative ridge on the local slopes.
    verbose : int, default=0
        Show a progress bar.
    random_state : int, RandomState instance or None, default=None
        Anchor draws, the OPG init's anchors and random inits.
    regressor : regressor, default=None
        Fitted on the projection; None: a local linear fit (slope ridge 1e-3) at each query point over its
        ``n_predict_neighbors`` nearest training projections.
    n_predict_neighbors : int, default=None
        Neighbours of the default predictor (None: ``n_neighbors_``).

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Orthonormal basis rows in the standardised space, canonically rotated and signed.
    directions_ : ndarray of shape (n_components, n_features)
        Unit-norm directions in the original feature units.
    eigenvalues_ : ndarray of shape (n_components,)
        Eigenvalues of the mean outer product of the final local slopes (descending).
    init_components_ : ndarray of shape (n_components, n_features)
        The initial basis (standardised space).
    n_components_ : int
        The selected dimension.
    n_neighbors_ : int
        Neighbours per anchor actually used (``n_neighbors`` or its default rule, clipped to n).
    batch_size_ : int
        Anchors per step actually used.
    mean_ : ndarray of shape (n_features,)
        Column means of X.
    scale_ : ndarray of shape (n_features,)
        Column standard deviations of X used for standardisation (ones when ``standardize=False``).
    y_mean_ : float
        Mean of y.
    y_scale_ : float
        Standard deviation of y (1 when y is constant).
    n_iter_ : int
        Steps run by the kept restart.
    t_ : int
        Steps taken in total (the step-size schedule's clock).
    loss_curve_ : ndarray of shape (n_iter_,)
        Mini-batch MAVE loss (mean local weighted RSS, standardised y) per step.
    objective_path_ : ndarray of shape (n_iter_,)
        Same as ``loss_curve_``.
    grad_norm_curve_ : ndarray of shape (n_iter_,)
        Frobenius norm of the stochastic Riemannian gradient per step.
    window_change_curve_ : ndarray
        Distance between consecutive windows' mean projections (what ``tol`` is compared with).
    grad_norm_ : float
        Final Riemannian gradient norm of the full-batch objective ("trust-regions"; NaN for "sgd").
    n_refresh_ : int
        Neighbour rebuilds in the kept run.
    loss_ : float
        Exact evaluation loss of the kept basis.
    converged_ : bool
        Whether the stopping rule stopped the kept restart.
    n_failed_solves_ : int
        Local solves that failed (degenerate neighbourhoods) during the kept restart.
    n_samples_seen_ : int
        Rows seen by ``fit``.
    train_projection_ : ndarray of shape (n_samples, n_components)
        Projected training data (default predictor only).
    y_train_ : ndarray of shape (n_samples,)
        Standardised training targets (default predictor only).
    regressor_ : regressor
        The fitted clone of ``regressor`` (when given).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined when X has string column names.

    See Also
    --------
    SMAVE : The transformer alone.

    Notes
    -----
    The subspace is fitted exactly as by :class:`SMAVE` (same parameters and attributes). The default predictor
    solves a kernel-weighted local linear least-squares problem in the d-dimensional projection at each query
    point, over its ``n_predict_neighbors`` nearest training projections (slope ridge 1e-3): one k-d tree query
    and one (d + 1)-parameter least-squares solve per query point.

    Examples
    --------
    >>> from sklearn_frontier.sdr import SMAVERegressor
    >>> from sklearn_frontier.datasets import make_sdr_regression
    >>> X, y, B0 = make_sdr_regression("C", n_samples=300, n_features=5, random_state=0)
    >>> reg = SMAVERegressor(n_components=1, max_iter=50, random_state=0).fit(X, y)
    >>> reg.score(X, y) > 0.9
    True
    """

    _parameter_constraints = {
        **SMAVE._parameter_constraints,
        "regressor": [HasMethods(["fit", "predict"]), None],
        "n_predict_neighbors": [Interval(Integral, 1, None, closed="left"), None],
    }

    _STREAMING = False

    def __init__(self, n_components=2, *, n_neighbors=None, kernel="gaussian", solver="sgd", batch_size="auto",
                 max_iter=500, eta0=0.5, learning_rate="invscaling", decay_steps=100.0, retraction="qr",
                 refresh_neighbors="auto", refresh_tol=0.05, init="opg", n_init=1, tol=1e-3, n_iter_no_change=20,
                 average=True, reservoir_size=20000, standardize=True, ridge=1e-8, verbose=0, random_state=None,
                 regressor=None, n_predict_neighbors=None):
        super().__init__(n_components, n_neighbors=n_neighbors, kernel=kernel, solver=solver, batch_size=batch_size,
                         max_iter=max_iter, eta0=eta0, learning_rate=learning_rate, decay_steps=decay_steps,
                         retraction=retraction, refresh_neighbors=refresh_neighbors, refresh_tol=refresh_tol,
                         init=init, n_init=n_init, tol=tol, n_iter_no_change=n_iter_no_change, average=average,
                         reservoir_size=reservoir_size, standardize=standardize, ridge=ridge, verbose=verbose,
                         random_state=random_state)
        self.regressor = regressor
        self.n_predict_neighbors = n_predict_neighbors

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Fit SMAVE, then the predictor on the projection.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.
        y : array-like of shape (n_samples,)
            Target values.

        Returns
        -------
        self : SMAVERegressor
            The fitted estimator.
        """
        Z, yt, y = self._fit_smave(X, y)
        projection = Z @ self.components_.T
        if self.regressor is None:
            self.train_projection_ = projection
            self.y_train_ = yt
        else:
            self.regressor_ = clone(self.regressor).fit(projection, y)
        return self

    def predict(self, X):
        """Predict ``y`` from the projection of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted targets.
        """
        check_is_fitted(self)
        Q = np.asarray(self.transform(X), dtype=np.float64)
        if self.regressor is not None:
            return self.regressor_.predict(Q)
        n = self.train_projection_.shape[0]
        k = min(self.n_predict_neighbors or self.n_neighbors_, n)
        nbr = query_neighbors(projected_tree(self.train_projection_), Q, k)
        theta = sdr_local_wls(self.train_projection_, self.y_train_, Q, nbr, KERNEL_CODES[self.kernel], 0.0,
                              PREDICT_RIDGE)[2]
        return self.y_mean_ + self.y_scale_ * theta[:, 0]
