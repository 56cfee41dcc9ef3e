"""Active choice of measurement times for a measure-valued path (integrated variance reduction and baselines)."""

import warnings
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, RegressorMixin, clone
from sklearn.utils import check_random_state

from sklearn_frontier.utils._compat import (
    HasMethods,
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
)

from ._lot import as_clouds
from ._path import WassersteinPathRegressor

__all__ = ["LOTActiveExperimenter", "integrated_variance_scores"]

_TOL = 1e-12
STRATEGIES = ("integrated_variance", "max_variance", "uniform", "random")


def integrated_variance_scores(cov_cc, cov_gc, noise):
    """Integrated variance reduction of one new noisy measurement at each candidate (frozen GP).

    ``cov_cc`` (C,) are the candidates' latent posterior variances, ``cov_gc`` (G, C) the posterior covariances
    between the integration grid and the candidates, ``noise`` the observation noise variance. The reduction at
    grid point s from measuring t is ``Sigma(s, t)^2 / (Sigma(t, t) + noise)`` whatever value is then observed;
    the score is its mean over the grid.
    """
    return np.mean(cov_gc ** 2, axis=0) / (cov_cc + noise)


def _farthest(remaining, observed, n):
    """Greedy maximin: the remaining candidates farthest from the observed times (ties: smallest time)."""
    picks, anchors = [], list(observed)
    pool = list(remaining)
    for _ in range(min(n, len(pool))):
        if anchors:
            dist = np.min(np.abs(np.subtract.outer(pool, anchors)), axis=1)
        else:  # nothing observed: nearest the middle of the pool
            dist = -np.abs(np.asarray(pool) - (pool[0] + pool[-1]) / 2)
        j = int(np.argmax(dist))
        picks.append(pool.pop(j))
        anchors.append(picks[-1])
    return picks


class LOTActiveExperimenter(MetaEstimatorMixin, RegressorMixin, BaseEstimator):
    """Choose the next measurement times of a probability path from the LOT Gaussian-process surrogate.

    ``fit`` takes the initial snapshots (at least two), ``query(n_times)`` proposes the next times from the
    candidate pool, ``update`` adds the measured snapshots and refits the surrogate (hyperparameters and warp
    re-learned; the LOT reference stays fixed so the tangent coordinates do not move, see
    :meth:`recompute_reference`).

    Read more in the :ref:`User Guide <user_guide_transport>`.

    Parameters
    ----------
    strategy : {"integrated_variance", "max_variance", "uniform", "random"}, default="integrated_variance"
        How :meth:`query` chooses the next times (see Notes).
    candidates : array-like of shape (n_candidates,), default=None
        Candidate times (default: 101 equispaced times on ``time_range``).
    time_range : tuple (lo, hi) or None, default=(0.0, 1.0)
        Times outside raise a ValueError. None: no bounds (candidates then default to 101 times on the span of
        the fitted times).
    path : WassersteinPathRegressor, default=None
        Surrogate template (cloned; default ``WassersteinPathRegressor(random_state=random_state)``).
    budget : int, default=None
        Total number of snapshots planned (used by ``"uniform"``).
    integration_times : array-like, default=None
        Grid of the integrated variance (default: 101 equispaced times on the candidate span).
    random_state : int, RandomState instance or None, default=None
        Seeds the surrogate and the ``"random"`` strategy (one stream per ``fit``).

    Attributes
    ----------
    path_ : WassersteinPathRegressor
        The fitted surrogate.
    times_ : ndarray of shape (N,)
        Observed times, in the order received.
    clouds_ : list of ndarray
        Observed snapshots.
    candidates_ : ndarray
        The candidate pool.
    remaining_candidates_ : ndarray
        Candidates not yet observed.
    integration_times_ : ndarray
        Grid over which ``"integrated_variance"`` integrates the posterior variance.
    history_ : list of float
        Times returned by :meth:`query`, in order.
    n_features_in_ : int
        Number of input columns (1 for time), as seen by the surrogate.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the input columns seen during ``fit``. Defined only when the times have feature names that
        are all strings.

    See Also
    --------
    WassersteinPathRegressor : The surrogate.

    Notes
    -----
    Strategies, all with the same surrogate:

    * ``"integrated_variance"`` (the method): the candidate whose measurement most reduces the posterior variance
      integrated over ``integration_times``; for a GP the reduction does not depend on the unobserved value, so a
      batch is chosen greedily and exactly (rank-one fantasy updates of the posterior covariance).
    * ``"max_variance"``: the largest pointwise posterior variance (the paper's official code), same greedy batch.
    * ``"uniform"``: a space-filling schedule: with ``budget`` the grid ``linspace(lo, hi, budget)`` snapped to the
      pool (farthest-from-observed first), otherwise greedy maximin over the pool.
    * ``"random"``: distinct uniform draws from the pool.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.transport import LOTActiveExperimenter, make_measure_path
    >>> path = make_measure_path("drift", random_state=0)
    >>> exp = LOTActiveExperimenter(candidates=np.linspace(0, 1, 11), random_state=0)
    >>> exp = exp.fit([0.0, 1.0], [path(0.0, 40, random_state=1), path(1.0, 40, random_state=2)])
    >>> exp.query(1)
    array([0.5])
    """

    # the fitted GP state is a project type that skops dumps hold (see sklearn_frontier.persistence)
    _skops_nested_types = ("sklearn_frontier.transport._path._GPState",)

    _parameter_constraints = {
        "strategy": [StrOptions(set(STRATEGIES))],
        "candidates": ["array-like", None],
        "time_range": ["array-like", None],
        "path": [HasMethods(["fit", "predict"]), None],
        "budget": [Interval(Integral, 1, None, closed="left"), None],
        "integration_times": ["array-like", None],
        "random_state": ["random_state"],
    }

    def __init__(self, strategy="integrated_variance", *, candidates=None, time_range=(0.0, 1.0), path=None,
                 budget=None, integration_times=None, random_state=None):
        self.strategy = strategy
        self.candidates = candidates
        self.time_range = time_range
        self.path = path
        self.budget = budget
        self.integration_times = integration_times
        self.random_state = random_state

    # -- validation ----------------------------------------------------------------------------------------------
    def _range(self):
        if self.time_range is None:
            return None
        lo, hi = (float(v) for v in np.asarray(self.time_range, dtype=float).reshape(-1))
        if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
            raise ValueError(f"time_range must be two finite numbers lo < hi, got {self.time_range!r}.")
        return lo, hi

    def _check_in_range(self, times, what):
        rng = self._range()
        if rng is not None and times.shape[1] == 1 and (np.any(times < rng[0]) or np.any(times > rng[1])):
            raise ValueError(f"{what} must lie in time_range={rng}; got values in [{times.min()}, {times.max()}].")

    @staticmethod
    def _grid(values, name):
        arr = np.asarray(values, dtype=float)
        if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must be a non-empty 1-D array of finite times.")
        return np.unique(arr)

    # -- fitting -------------------------------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Start the experiment with the initial snapshots ``y`` at times ``X`` (at least two).

        Parameters
        ----------
        X : array-like of shape (N,) or (N, 1)
            Times (several columns are accepted for the surrogate, but :meth:`query` needs one).
        y : list of array-like of shape (n_i, d) or numeric array
            Snapshots (see :class:`WassersteinPathRegressor`).

        Returns
        -------
        self : LOTActiveExperimenter
            The started experiment.
        """
        template = self.path if self.path is not None else WassersteinPathRegressor(random_state=self.random_state)
        self.path_ = clone(template).fit(X, y)
        self.n_features_in_ = self.path_.n_features_in_
        if hasattr(self.path_, "feature_names_in_"):
            self.feature_names_in_ = self.path_.feature_names_in_
        self._check_in_range(self.path_.times_, "times")
        coll = as_clouds(y, name="y")
        self.times_ = self.path_.times_[:, 0].copy() if self.n_features_in_ == 1 else self.path_.times_.copy()
        self.clouds_ = list(coll.clouds)
        self._weights = list(coll.weights)
        self._dirac, self._y_ndim = coll.dirac, coll.y_ndim
        self._rng = check_random_state(self.random_state)
        rng = self._range()
        if self.candidates is not None:
            self.candidates_ = self._grid(self.candidates, "candidates")
            if rng is not None and (self.candidates_[0] < rng[0] or self.candidates_[-1] > rng[1]):
                raise ValueError(f"candidates must lie in time_range={rng}.")
        elif rng is not None:
            self.candidates_ = np.linspace(rng[0], rng[1], 101)
        elif self.n_features_in_ == 1:
            self.candidates_ = np.linspace(self.times_.min(), self.times_.max(), 101)
        else:
            self.candidates_ = np.array([])
        self.integration_times_ = (self._grid(self.integration_times, "integration_times")
                                   if self.integration_times is not None else
                                   np.linspace(self.candidates_[0], self.candidates_[-1], 101)
                                   if self.candidates_.size else np.array([]))
        self.history_ = []
        self._refresh_remaining()
        return self

    def _refresh_remaining(self):
        if self.n_features_in_ != 1 or not self.candidates_.size:
            self.remaining_candidates_ = np.array([])
            return
        seen = np.abs(np.subtract.outer(self.candidates_, self.times_)).min(axis=1) <= _TOL
        self.remaining_candidates_ = self.candidates_[~seen]

    def update(self, times, clouds, *, weights=None):
        """Add measured snapshots and refit the surrogate (the LOT reference stays fixed).

        Parameters
        ----------
        times : array-like of shape (k,)
            Times of the new snapshots (inside ``time_range``).
        clouds : list of array-like of shape (n_i, d)
            The new snapshots.
        weights : list of array-like, default=None
            Point weights per new cloud (uniform by default).

        Returns
        -------
        self : LOTActiveExperimenter
            The updated experiment.
        """
        check_is_fitted(self)
        times = np.asarray(times, dtype=float).reshape(-1, 1) if np.ndim(times) <= 1 else np.asarray(times, float)
        if times.shape[1] != self.n_features_in_ or not np.all(np.isfinite(times)):
            raise ValueError(f"times must be finite with {self.n_features_in_} column(s).")
        self._check_in_range(times, "times")
        coll = as_clouds(clouds, weights, name="clouds", n_features=self.path_.output_dim_)
        if len(coll) != len(times):
            raise ValueError(f"times has {len(times)} entries but there are {len(coll)} clouds.")
        emb = self.path_.embedding_
        V_new = emb._embed(coll)
        all_times = np.concatenate([self.path_.times_, times])
        V = np.vstack([self.path_.tangents_, V_new])
        path = clone(self.path_)
        path.n_features_in_ = self.n_features_in_
        if hasattr(self.path_, "feature_names_in_"):
            path.feature_names_in_ = self.path_.feature_names_in_
        seed_rng = check_random_state(self.path_.random_state)
        self.path_ = path._fit_tangents(all_times, V, emb, self._dirac, self._y_ndim, seed_rng,
                                        warm_start=getattr(self.path_, "fitted_kernels_", None))
        self.times_ = np.concatenate([self.times_, times[:, 0]]) if self.n_features_in_ == 1 else all_times
        self.clouds_ += list(coll.clouds)
        self._weights += list(coll.weights)
        self.path_._calibrate(self.clouds_, self._weights)
        self._refresh_remaining()
        return self

    def recompute_reference(self):
        """Refit the whole surrogate, LOT reference included, on every snapshot observed so far.

        Returns
        -------
        self : LOTActiveExperimenter
            The experiment with a new reference.
        """
        check_is_fitted(self)
        self.path_ = clone(self.path_).fit(self.path_.times_, self.clouds_)
        return self

    # -- acquisition ---------------------------------------------------------------------------------------------
    def _posterior_blocks(self, cand):
        """Latent covariance over [candidates; grid] (standardised) and the noise variance, or None."""
        state = self.path_._state
        if state is None:
            return None
        S = np.concatenate([cand, self.integration_times_])[:, None]
        return state.cov(self.path_._inputs(S)), state.noise

    def acquisition_scores(self, times=None):
        """Score candidate times by the ``"integrated_variance"`` or ``"max_variance"`` criterion.

        Scaled to W2^2 units (times the summed output variances of the kept components).

        Parameters
        ----------
        times : array-like of shape (n_times,), default=None
            Times to score (default: the remaining candidates).

        Returns
        -------
        scores : ndarray of shape (n_times,)
            Higher is more informative.
        """
        check_is_fitted(self)
        if self.strategy not in ("integrated_variance", "max_variance"):
            raise ValueError(f"acquisition_scores needs strategy 'integrated_variance' or 'max_variance', "
                             f"not {self.strategy!r}.")
        cand = self.remaining_candidates_ if times is None else self._grid(times, "times")
        blocks = self._posterior_blocks(cand)
        if blocks is None:
            return np.zeros(len(cand))
        cov, noise = blocks
        scale = float(np.sum(self.path_.output_std_ ** 2))
        c = len(cand)
        if self.strategy == "max_variance":
            return np.diag(cov)[:c] * scale
        return integrated_variance_scores(np.diag(cov)[:c], cov[c:, :c], noise) * scale

    def query(self, n_times=1):
        """Propose the next ``n_times`` measurement times (fewer, with a warning, when the pool runs out).

        Parameters
        ----------
        n_times : int, default=1
            Batch size.

        Returns
        -------
        times : ndarray of shape (<= n_times,)
            Proposed times, in the order chosen.
        """
        check_is_fitted(self)
        if self.n_features_in_ != 1:
            raise ValueError("query needs one time column; the experimenter was fitted on "
                             f"{self.n_features_in_} input columns.")
        n_times = int(n_times)
        if n_times < 1:
            raise ValueError(f"n_times must be >= 1, got {n_times}.")
        pool = list(self.remaining_candidates_)
        if len(pool) < n_times:
            warnings.warn(f"only {len(pool)} candidate times remain; returning them.", UserWarning, stacklevel=2)
        n = min(n_times, len(pool))
        if n == 0:
            return np.array([])
        if self.strategy == "random":
            picks = list(self._rng.choice(pool, size=n, replace=False))
        elif self.strategy == "uniform":
            picks = self._uniform(pool, n)
        else:
            blocks = self._posterior_blocks(np.asarray(pool))
            picks = (_farthest(pool, self.times_, n) if blocks is None else
                     self._greedy(np.asarray(pool), *blocks, n))
        picks = np.asarray(picks, dtype=float)
        self.history_ += picks.tolist()
        return picks

    def _greedy(self, pool, cov, noise, n):
        """Greedy batch with exact rank-one fantasy updates (the GP variance does not depend on the values)."""
        c = len(pool)
        cov = cov.copy()
        available = np.ones(c, dtype=bool)
        picks = []
        for _ in range(n):
            diag = np.diag(cov)[:c]
            if self.strategy == "max_variance":
                scores = diag.copy()
            else:
                scores = integrated_variance_scores(diag, cov[c:, :c], noise)
            scores[~available] = -np.inf
            # Ties (a design symmetric about the pick) go to the smallest time (the pool is sorted); a relative
            # slack keeps rounding noise from breaking them differently in a batch and in one-at-a-time queries.
            best = scores.max()
            j = int(np.flatnonzero(scores >= best - 1e-9 * abs(best))[0])
            picks.append(float(pool[j]))
            available[j] = False
            col = cov[:, j].copy()
            cov -= np.outer(col, col) / (col[j] + noise)
        return picks

    def _uniform(self, pool, n):
        if self.budget is None:
            return _farthest(pool, self.times_, n)
        cands = self.candidates_
        grid = np.unique(cands[np.abs(np.subtract.outer(np.linspace(cands[0], cands[-1], self.budget),
                                                         cands)).argmin(axis=1)])
        pool_arr = np.asarray(pool)
        todo = [g for g in grid if np.min(np.abs(pool_arr - g)) <= _TOL]
        picks = _farthest(todo, self.times_, n)
        if len(picks) < n:  # schedule exhausted: keep filling space
            rest = [p for p in pool if p not in picks]
            picks += _farthest(rest, list(self.times_) + picks, n - len(picks))
        return picks

    def run(self, oracle, n_steps, *, batch_size=1):
        """Run ``n_steps`` rounds of ``query(batch_size)`` and ``update``.

        Parameters
        ----------
        oracle : callable
            ``oracle(t) -> cloud``: measures a snapshot at time ``t``.
        n_steps : int
            Number of rounds.
        batch_size : int, default=1
            Times per round.

        Returns
        -------
        self : LOTActiveExperimenter
            The updated experiment.
        """
        check_is_fitted(self)
        for _ in range(int(n_steps)):
            times = self.query(batch_size)
            if times.size == 0:
                break
            self.update(times, [oracle(float(t)) for t in times])
        return self

    # -- delegation ----------------------------------------------------------------------------------------------
    def predict(self, X, return_std=False):
        """Predict measures at ``X`` with the fitted surrogate (see :meth:`WassersteinPathRegressor.predict`).

        Parameters
        ----------
        X : array-like of shape (T,) or (T, n_features_in_)
            Times.
        return_std : bool, default=False
            Also return the posterior standard deviation of the path in W2 units (the uncertainty the acquisition
            reduces; the realised error is larger, see :meth:`expected_w2_error`).

        Returns
        -------
        clouds : list of ndarray or ndarray
            Predicted clouds (an array for numeric Dirac targets).
        std : ndarray of shape (T,)
            Only with ``return_std=True``.
        """
        check_is_fitted(self)
        return self.path_.predict(X, return_std=return_std)

    def expected_w2_error(self, X):
        """Root-mean-square W2 error expected of :meth:`predict` (as the surrogate's ``expected_w2_error``).

        Parameters
        ----------
        X : array-like of shape (T,) or (T, n_features_in_)
            Times.

        Returns
        -------
        error : ndarray of shape (T,)
            ``sqrt(std² + path_.resolution_²)`` at each time.
        """
        check_is_fitted(self)
        return self.path_.expected_w2_error(X)

    def score(self, X, y):
        """Return the surrogate's score (negative mean W2^2; R^2 for numeric Dirac targets).

        Parameters
        ----------
        X : array-like of shape (T,) or (T, n_features_in_)
            Times.
        y : list of array-like or ndarray
            The true snapshots at those times.

        Returns
        -------
        score : float
            Higher is better.
        """
        check_is_fitted(self)
        return self.path_.score(X, y)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags
