"""MAVEDimensionCV: choose the dimension of the central mean subspace by cross-validated smoothing error."""

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, MetaEstimatorMixin, TransformerMixin, clone
from sklearn.model_selection import check_cv
from sklearn.utils import check_random_state

from sklearn_frontier.kernels.sdr import sdr_nw_cv_mae
from sklearn_frontier.utils._compat import HasMethods, Interval, _fit_context, check_is_fitted, validate_data
from sklearn_frontier.utils._parallel import Parallel, delayed


def _smoother_bandwidth(Zp, n):
    """R MAVE's ``mave.dim`` bandwidth ``mean sd(Z_d) n ** (-1 / (d + 3))``."""
    h = float(np.mean(np.std(Zp, axis=0)))
    return (h if h > 0 else 1.0) * n ** (-1.0 / (Zp.shape[1] + 3))


def _score_repeated_splits(estimator, d, X, y, yt, train, test, projection=None):
    """R-style score of dimension ``d``: one fit on all rows, then the smoother over every random split."""
    fitted = None
    if projection is None:
        fitted = clone(estimator).set_params(n_components=d).fit(X, y)
        projection = np.asarray(fitted.transform(X), dtype=np.float64)
    h = _smoother_bandwidth(projection, X.shape[0])
    return sdr_nw_cv_mae(projection, yt, train, test, h), fitted


def _score_folds(estimator, d, X, y, yt, folds):
    """Honest score of dimension ``d``: refit on each training fold, smooth on that fold's projection."""
    errors = []
    for train, test in folds:
        fitted = clone(estimator).set_params(n_components=d).fit(X[train], y[train])
        projection = np.asarray(fitted.transform(X), dtype=np.float64)
        h = _smoother_bandwidth(projection[train], len(train))
        errors.append(sdr_nw_cv_mae(projection, yt, np.asarray(train)[None], np.asarray(test)[None], h)[0])
    return np.asarray(errors), None


class MAVEDimensionCV(MetaEstimatorMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Choose ``n_components`` of an SDR estimator by the cross-validated error of a local smoother.

    Fits the wrapped estimator at each candidate dimension, keeps the dimension whose projection predicts y
    best, and refits it on all rows; ``transform`` then projects on the selected subspace.

    Read more in the :ref:`User Guide <user_guide_sdr>`.

    Parameters
    ----------
    estimator : estimator with ``n_components``, default=None
        The SDR transformer (None: ``SMAVE()``). Its own ``random_state`` is never overridden; when it is None,
        one seed drawn from ``random_state`` is used for every candidate, so the search is reproducible.
    max_components : int, default=10
        Largest candidate dimension.
    cv : None, int, cross-validation generator or iterable, default=None
        None: R MAVE's ``mave.dim`` scheme (one fit per d on all rows, ``n_repeats`` random 2/3 - 1/3 splits of
        the smoother; optimistic, the directions saw the test rows). Otherwise the honest variant: refit on each
        training fold (as :func:`sklearn.model_selection.check_cv`).
    n_repeats : int, default=100
        Random splits for ``cv=None``.
    max_samples : int, default=4000
        Score on a random subsample of this many rows when n is larger.
    n_jobs : int, default=None
        Candidates scored in parallel (``sklearn.utils.parallel.Parallel``).
    random_state : int, RandomState instance or None, default=None
        Subsample and random splits.

    Attributes
    ----------
    n_components_ : int
        The selected dimension (smallest on ties).
    cv_results_ : dict
        ``{"n_components", "mean_test_mae", "std_test_mae"}`` arrays (errors in y's units).
    best_estimator_ : estimator
        A clone with ``n_components=n_components_`` fitted on all data; ``transform`` delegates to it.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined when X has string column names.

    See Also
    --------
    SMAVE : The default estimator.
    OPG : Nested directions, scored from one fit.
    RMAVE : Refined MAVE.

    Notes
    -----
    For each candidate ``d = 1 .. min(max_components, n_features, n_samples - 2)`` the projection on the
    estimated d-dimensional subspace is scored by the mean absolute error of R MAVE's ``CVfast`` smoother
    (an adaptive Epanechnikov-type Nadaraya-Watson estimate with a 2nd-nearest-neighbour bandwidth floor).
    With an :class:`OPG` estimator and ``cv=None`` the directions are nested, so one fit at the largest
    candidate serves every ``d``.

    References
    ----------
    .. [1] R package MAVE, ``mave.dim`` and ``CVfast``, https://github.com/cran/MAVE

    Examples
    --------
    >>> from sklearn_frontier.sdr import MAVEDimensionCV, OPG
    >>> from sklearn_frontier.datasets import make_sdr_regression
    >>> X, y, B0 = make_sdr_regression("C", n_samples=200, n_features=4, random_state=0)
    >>> cv = MAVEDimensionCV(OPG(), max_components=3, n_repeats=10, random_state=0).fit(X, y)
    >>> cv.cv_results_["n_components"].tolist()
    [1, 2, 3]
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "transform"]), None],
        "max_components": [Interval(Integral, 1, None, closed="left")],
        "cv": ["cv_object"],
        "n_repeats": [Interval(Integral, 1, None, closed="left")],
        "max_samples": [Interval(Integral, 3, None, closed="left")],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
    }

    def __init__(self, estimator=None, *, max_components=10, cv=None, n_repeats=100, max_samples=4000, n_jobs=None,
                 random_state=None):
        self.estimator = estimator
        self.max_components = max_components
        self.cv = cv
        self.n_repeats = n_repeats
        self.max_samples = max_samples
        self.n_jobs = n_jobs
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    def _base_estimator(self):
        if self.estimator is None:
            from ._smave import SMAVE

            return SMAVE()
        return self.estimator

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Score every candidate dimension, then refit the best on all data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.
        y : array-like of shape (n_samples,)
            Target values.

        Returns
        -------
        self : MAVEDimensionCV
            The fitted estimator.
        """
        from ._opg import OPG

        X, y = validate_data(self, X, y, y_numeric=True, dtype=[np.float64, np.float32], ensure_min_samples=2)
        n, p = X.shape
        n_max = min(self.max_components, p, n - 2)
        if n_max < 1:
            raise ValueError(f"n_samples={n} must be >= 3 to choose n_components.")
        estimator = self._base_estimator()
        rng = check_random_state(self.random_state)
        seed = rng.randint(np.iinfo(np.int32).max)
        if "random_state" in estimator.get_params() and estimator.get_params()["random_state"] is None:
            # An unseeded estimator takes one seed from this meta-estimator (the same for every d); an explicit
            # seed of the estimator is never overridden.
            estimator = clone(estimator).set_params(random_state=seed)
        rows = np.arange(n) if n <= self.max_samples else np.sort(rng.choice(n, self.max_samples, replace=False))
        Xs, ys = X[rows], np.asarray(y, dtype=np.float64)[rows]
        ns = len(rows)
        y_scale = float(ys.std()) or 1.0
        yt = (ys - ys.mean()) / y_scale
        candidates = list(range(1, n_max + 1))
        fitted = [None] * len(candidates)
        if self.cv is None:
            n_tr = (2 * ns) // 3
            perms = np.stack([rng.permutation(ns) for _ in range(self.n_repeats)]).astype(np.int64)
            train, test = perms[:, :n_tr].copy(), perms[:, n_tr:].copy()
            if isinstance(estimator, OPG):  # nested directions: one fit at the largest d, then slice
                top = clone(estimator).set_params(n_components=n_max).fit(Xs, ys)
                projection = np.asarray(top.transform(Xs), dtype=np.float64)
                out = [_score_repeated_splits(estimator, d, Xs, ys, yt, train, test, projection[:, :d])
                       for d in candidates]
            else:
                out = Parallel(n_jobs=self.n_jobs)(
                    delayed(_score_repeated_splits)(estimator, d, Xs, ys, yt, train, test) for d in candidates)
            if ns == n:
                fitted = [f for _, f in out]
        else:
            folds = list(check_cv(self.cv).split(Xs, ys))
            out = Parallel(n_jobs=self.n_jobs)(
                delayed(_score_folds)(estimator, d, Xs, ys, yt, folds) for d in candidates)
        errors = [y_scale * np.asarray(e) for e, _ in out]
        mean = np.array([e.mean() for e in errors])
        self.cv_results_ = {"n_components": np.array(candidates), "mean_test_mae": mean,
                            "std_test_mae": np.array([e.std() for e in errors])}
        best = int(np.argmin(mean))
        self.n_components_ = candidates[best]
        self.best_estimator_ = fitted[best]
        if self.best_estimator_ is None:
            self.best_estimator_ = clone(estimator).set_params(n_components=self.n_components_).fit(X, y)
        return self

    def transform(self, X):
        """Project ``X`` with the best estimator.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components_)
            The projected data.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        # A plain array: the inner estimator may itself be configured for pandas output (set_output), and the
        # wrapper of this meta-estimator builds the container with the caller's index.
        return np.asarray(self.best_estimator_.transform(X))

    def score(self, X, y):
        """The best estimator's score (leave-one-out local-linear R^2 on its projection).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.
        y : array-like of shape (n_samples,)
            Target values.

        Returns
        -------
        score : float
            The score (higher is better).
        """
        check_is_fitted(self)
        X, y = validate_data(self, X, y, reset=False, y_numeric=True, dtype=[np.float64, np.float32])
        return self.best_estimator_.score(X, y)

    @property
    def _n_features_out(self):
        return self.n_components_
