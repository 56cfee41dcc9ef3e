"""Uncertainty-free anchors: piecewise displacement (McCann) interpolation between the bracketing snapshots."""

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from sklearn_frontier.utils._compat import (
    StrOptions,
    _fit_context,
    check_is_fitted,
    validate_data,
)

from ._lot import _solve_plan, as_clouds, wasserstein2_squared
from ._path import _is_vector

__all__ = ["DisplacementInterpolator"]


class DisplacementInterpolator(RegressorMixin, BaseEstimator):
    """Piecewise McCann interpolation of a probability path between the two snapshots that bracket each time.

    The usual uncertainty-free interpolation of snapshot data (Waddington-OT / moscot style): the W2 geodesic
    between consecutive snapshots; the baseline of :class:`WassersteinPathRegressor`.

    Read more in the :ref:`User Guide <user_guide_transport>`.

    Parameters
    ----------
    solver : {"exact", "sinkhorn"}, default="exact"
        POT solver of the plans between consecutive snapshots.

    Attributes
    ----------
    times_ : ndarray of shape (K,)
        Distinct observed times, sorted.
    clouds_ : list of ndarray of shape (n_i, d)
        The snapshot at each of ``times_`` (the first one given for a replicated time).
    weights_ : list of ndarray of shape (n_i,)
        Normalised point weights of each snapshot in ``clouds_``.
    maps_ : list of ndarray of shape (n_i, d)
        ``T(x)`` for the points of each snapshot but the last: the barycentric image of the optimal plan to the
        next snapshot.
    n_features_in_ : int
        1 (time).

    See Also
    --------
    WassersteinPathRegressor : The Gaussian-process surrogate, with uncertainty.

    Notes
    -----
    Between consecutive observed times ``t_i < t_{i+1}`` the prediction at ``t`` is the left snapshot pushed by
    ``x -> (1 - lam) x + lam T(x)``, ``lam = (t - t_i) / (t_{i+1} - t_i)``, with ``T`` the barycentric map of the
    optimal plan (an exact permutation map for equal-size uniform clouds). Outside the observed span the nearest
    snapshot is returned (``extrapolation="constant"``). Replicate times keep their first snapshot.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.transport import DisplacementInterpolator
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0]])
    >>> interp = DisplacementInterpolator().fit([0.0, 1.0], [X, X + [0.0, 2.0]])
    >>> interp.predict([0.25])[0]
    array([[0. , 0.5],
           [1. , 0.5]])
    """

    _parameter_constraints = {"solver": [StrOptions({"exact", "sinkhorn"})]}

    def __init__(self, *, solver="exact"):
        self.solver = solver

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Store the snapshots ``y`` at times ``X`` and the maps between consecutive ones.

        Parameters
        ----------
        X : array-like of shape (N,) or (N, 1)
            Times.
        y : list of array-like of shape (n_i, d)
            Snapshots.

        Returns
        -------
        self : DisplacementInterpolator
            The fitted interpolator.
        """
        from sklearn_frontier.kernels.transport import barycentric_projection

        X = validate_data(self, np.asarray(X).reshape(-1, 1) if _is_vector(X) else X, dtype=np.float64,
                          ensure_min_samples=2)
        if X.shape[1] != 1:
            raise ValueError(f"DisplacementInterpolator needs one time column, got {X.shape[1]} features.")
        coll = as_clouds(y, name="y")
        if len(coll) != len(X):
            raise ValueError(f"X has {len(X)} times but y has {len(coll)} clouds.")
        times, first = np.unique(X[:, 0], return_index=True)
        self.times_ = times
        self.clouds_ = [coll.clouds[i] for i in first]
        self.weights_ = [coll.weights[i] for i in first]
        self.maps_ = []
        for i in range(len(times) - 1):
            A, B = self.clouds_[i], self.clouds_[i + 1]
            a, b = self.weights_[i], self.weights_[i + 1]
            P = _solve_plan(a, b, A, B, self.solver, 1e-2, 1_000_000)
            self.maps_.append(A + barycentric_projection(P, B, np.ones(len(A)), A).reshape(A.shape))
        return self

    def predict(self, X):
        """Interpolate clouds at times ``X`` (weights: those of the left snapshot).

        Parameters
        ----------
        X : array-like of shape (T,) or (T, 1)
            Times.

        Returns
        -------
        clouds : list of ndarray
            One cloud per time.
        """
        from sklearn_frontier.kernels.transport import mccann_interpolate

        check_is_fitted(self)
        X = validate_data(self, np.asarray(X).reshape(-1, 1) if _is_vector(X) else X, dtype=np.float64,
                          reset=False)
        out = []
        for t in X[:, 0]:
            i, lam = self._bracket(t)
            out.append(self.clouds_[i].copy() if lam is None else
                       mccann_interpolate(self.clouds_[i], self.maps_[i], np.array([lam]))[0])
        return out

    def _bracket(self, t):
        """The snapshot whose points (and weights) the cloud at time ``t`` carries, and the fraction of the way to
        the next one (``None`` outside the observed times, where the nearest snapshot is returned as it is)."""
        if t <= self.times_[0] or len(self.times_) == 1:
            return 0, None
        if t >= self.times_[-1]:
            return len(self.times_) - 1, None
        i = int(np.searchsorted(self.times_, t, side="right") - 1)
        return i, (t - self.times_[i]) / (self.times_[i + 1] - self.times_[i])

    def score(self, X, y):
        """Return the negative mean W2^2 between the interpolated clouds and the snapshots ``y``.

        The same score as :meth:`WassersteinPathRegressor.score`, so that both rank alike in
        ``cross_val_score`` or ``GridSearchCV`` (the R^2 of ``RegressorMixin`` has no meaning for clouds).

        Parameters
        ----------
        X : array-like of shape (T,) or (T, 1)
            Times.
        y : list of array-like or ndarray of shape (T, n_points, n_dims)
            The true snapshots at those times.

        Returns
        -------
        score : float
            Higher is better.
        """
        pred = self.predict(X)
        truth = as_clouds(y, name="y")
        if len(truth.clouds) != len(pred):
            raise ValueError(f"y holds {len(truth.clouds)} snapshots but X has {len(pred)} times.")
        times = validate_data(self, np.asarray(X).reshape(-1, 1) if _is_vector(X) else X, dtype=np.float64,
                              reset=False)[:, 0]
        w2sq = [wasserstein2_squared([p], [c], weights_pred=self.weights_[self._bracket(t)[0]],
                                     weights_truth=[w])[0]
                for p, c, w, t in zip(pred, truth.clouds, truth.weights, times)]
        return -float(np.mean(w2sq))
