"""SMAVE: stochastic Riemannian MAVE for the central mean subspace (linear cost in n per step)."""

import dataclasses
import math
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import available_if

from sklearn_frontier.utils._compat import Interval, StrOptions, _fit_context, validate_data
from sklearn_frontier.utils._manifolds import qr_retraction
from sklearn_frontier.utils._warnings import warn_user

from ._base import (
    _COMMON_CONSTRAINTS,
    MAX_EVAL_ANCHORS,
    _BaseSDR,
    canonical_basis,
    default_n_neighbors,
    opg_init,
    projected_local_fits,
)
from ._result import StreamState
from ._sgd import AVERAGE_GAMMA, StreamAverage, auto_batch_size, epoch_batches, random_batches, run_steps
from ._stream import Reservoir, RunningMoments, rescale_basis

# partial_fit anchors a quarter of each chunk (at least one batch): anchoring every row of large chunks cost
# several times the one-shot fit's time without a better subspace (the streaming rows of python -m benchmarks smave);
# every row of the chunk still serves as a neighbour, and the stream's running mean carries the earlier chunks.
STREAM_ANCHOR_FRACTION = 0.25
MAX_INIT_ROWS = 20000  # the OPG start is computed on a subsample of at most this many rows (bounded memory)



# Chunks smaller than this many rows warn. A chosen floor, not a measured threshold: in python -m benchmarks
# smave_stream every chunk size ends farther from the subspace than one fit on the same rows, and the smallest
# chunks do no worse there than this one; the warning names the cost, not a cliff.
MIN_USEFUL_CHUNK = 400

class SMAVE(_BaseSDR):
    """Stochastic Riemannian MAVE: the central mean subspace by Riemannian SGA on the Stiefel manifold.

    Finds an orthonormal ``B`` (p, d) such that ``E[y | x]`` depends on ``x`` only through ``B^T x``, at a cost
    per step linear in the number of rows; ``partial_fit`` streams data that do not fit in memory.

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
        "sgd": the stochastic method (linear in n). "trust-regions": pymanopt's Riemannian trust-region solver on
        the full-batch objective with Gaussian weights over all points (bandwidth as RMAVE's kernel rule at the
        OPG start), warm-started from OPG; O(n^2) per iteration, for n up to a few thousand.
    batch_size : int or "auto", default="auto"
        Anchors per step (clipped to n); "auto": ``clip(ceil(n / 200), 64, 8192)``, so that one pass over the
        data takes about 200 steps at large n.
    max_iter : int, default=500
        Most SGD steps per restart (trust-regions: most outer iterations).
    eta0 : float, default=0.5
        Initial step size (the data are standardised, so it is scale-free).
    learning_rate : {"invscaling", "sqrt", "constant"}, default="invscaling"
        Step-size schedule: ``eta0 / (1 + t / decay_steps)``, ``eta0 / sqrt(1 + t / decay_steps)`` or ``eta0``.
    decay_steps : float, default=100.0
        Time scale ``tau`` of the schedule.
    retraction : {"qr", "polar"}, default="qr"
        Retraction on the Stiefel manifold.
    refresh_neighbors : int, "auto" or "never", default="auto"
        When to rebuild the projected k-d tree and the neighbour sets: "auto" when the subspace has moved by more
        than ``refresh_tol`` since the last rebuild, an int every this many steps, "never" freezes neighbour
        sets and weights at the initial basis (the "simplified" fixed finite-sum objective).
    refresh_tol : float, default=0.05
        Movement ``||B B^T - B_ref B_ref^T||_F`` that triggers a rebuild under "auto".
    init : {"opg", "random"} or array-like of shape (n_components, n_features), default="opg"
        Initial basis: kNN-OPG (on at most 20000 rows), a random orthonormal draw (not reliable) or given
        directions in original units.
    n_init : int, default=1
        Restarts; the one with the lowest exact evaluation loss is kept.
    tol : float, default=1e-3
        Stopping rule: after every ``n_iter_no_change`` steps, stop when the mean projection ``mean B B^T`` of
        the window's iterates differs from the previous window's (Frobenius) by less than
        ``max(tol, 0.15 sqrt(d (p - d) / n), spread / 2)``: ``tol``, a fraction of the subspace's sampling
        resolution at n rows (so small data sets stop at their own precision), or half the RMS scatter of the
        window's iterates about their mean. None runs ``max_iter`` steps and never warns. Not used by
        ``partial_fit`` (a fixed share of each chunk per call).
    n_iter_no_change : int, default=20
        Window length of the stopping rule and of the averaging.
    average : bool, default=True
        Return the leading eigenvectors of the last full window's mean projection (iterate averaging) rather
        than the last iterate; under ``partial_fit``, of the running mean projection of every iterate of the
        stream, step ``t`` weighted by its anchors times ``t + 1``.
    reservoir_size : int, default=20000
        Rows kept from earlier chunks by ``partial_fit`` (a uniform sample of the stream); each call localises
        its anchors among these rows and the new chunk.
    standardize : bool, default=True
        Standardise the columns of X (directions are reported in original units either way).
    ridge : float, default=1e-8
        Relative ridge on the local slopes.
    verbose : int, default=0
        Show a progress bar.
    random_state : int, RandomState instance or None, default=None
        Anchor draws, the OPG init's anchors and random inits.

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
    mean_, scale_ : ndarray of shape (n_features,)
        Standardisation of X (running values under ``partial_fit``).
    y_mean_, y_scale_ : float
        Standardisation of y.
    n_iter_ : int
        Steps run by the kept restart (by the last call under ``partial_fit``).
    t_ : int
        Steps taken in total, across ``fit`` and ``partial_fit`` calls (the step-size schedule's clock).
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
        Rows seen (by ``fit``, or summed over ``partial_fit`` calls).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined when X has string column names.

    See Also
    --------
    OPG : Outer product of gradients (the initialiser).
    RMAVE : Refined MAVE by alternating weighted least squares (quadratic cost).
    MAVEDimensionCV : Choose ``n_components`` by cross-validation.

    Notes
    -----
    SMAVE maximises the explained local weighted sum of squares of local linear fits (MAVE's objective) by
    Riemannian stochastic gradient ascent on the Stiefel manifold, with a closed-form gradient over
    mini-batches of anchors. Anchors are localised by a k-d tree in the d-dimensional projected space; neighbour
    sets are reused across steps and recomputed only when the subspace has moved by more than ``refresh_tol``,
    and the run stops when the window-averaged subspace stops moving (``tol``). One step costs
    O(n p d + m k (p + d^2)) for m anchors of k neighbours; memory is O(n p) for the data plus O(n d + m k).
    ``partial_fit`` streams chunks through a bounded reservoir of earlier rows.

    ``solver="trust-regions"`` instead solves the full-batch (kernel-weighted) MAVE objective on the Grassmann
    manifold with pymanopt's trust-region method and PyTorch autodiff, to a certified stationary point
    (``grad_norm_``), at quadratic cost in n.

    References
    ----------
    .. [1] "Riemannian Stochastic Optimization for Sufficient Dimension Reduction", ICML 2026,
       https://arxiv.org/abs/2606.00413
    .. [2] Xia, Tong, Li & Zhu (2002), "An adaptive estimation of dimension reduction space", JRSSB 64:363-410.

    Examples
    --------
    >>> from sklearn_frontier.sdr import SMAVE
    >>> from sklearn_frontier.datasets import make_sdr_regression
    >>> X, y, B0 = make_sdr_regression("C", n_samples=300, n_features=5, random_state=0)
    >>> smave = SMAVE(n_components=1, max_iter=50, random_state=0).fit(X, y)
    >>> smave.transform(X).shape
    (300, 1)
    >>> stream = SMAVE(n_components=1, random_state=0)
    >>> for start in range(0, 300, 100):
    ...     stream = stream.partial_fit(X[start:start + 100], y[start:start + 100])
    >>> stream.n_samples_seen_
    300
    """

    _STREAMING = True
    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "n_neighbors": [Interval(Integral, 1, None, closed="left"), None],
        "solver": [StrOptions({"sgd", "trust-regions"})],
        "batch_size": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "eta0": [Interval(Real, 0, None, closed="neither")],
        "learning_rate": [StrOptions({"invscaling", "sqrt", "constant"})],
        "decay_steps": [Interval(Real, 0, None, closed="neither")],
        "retraction": [StrOptions({"qr", "polar"})],
        "refresh_neighbors": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto", "never"})],
        "refresh_tol": [Interval(Real, 0, None, closed="left")],
        "init": [StrOptions({"opg", "random"}), "array-like"],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "average": ["boolean"],
        "reservoir_size": [Interval(Integral, 1, None, closed="left")],
        "verbose": ["verbose"],
    }

    def __init__(self, n_components=2, *, n_neighbors=None, kernel="gaussian", solver="sgd", batch_size="auto",
                 max_iter=500, eta0=0.5, learning_rate="invscaling", decay_steps=100.0, retraction="qr",
                 refresh_neighbors="auto", refresh_tol=0.05, init="opg", n_init=1, tol=1e-3, n_iter_no_change=20,
                 average=True, reservoir_size=20000, standardize=True, ridge=1e-8, verbose=0, random_state=None):
        self.n_components = n_components
        self.n_neighbors = n_neighbors
        self.kernel = kernel
        self.solver = solver
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.eta0 = eta0
        self.learning_rate = learning_rate
        self.decay_steps = decay_steps
        self.retraction = retraction
        self.refresh_neighbors = refresh_neighbors
        self.refresh_tol = refresh_tol
        self.init = init
        self.n_init = n_init
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.average = average
        self.reservoir_size = reservoir_size
        self.standardize = standardize
        self.ridge = ridge
        self.verbose = verbose
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Learn the central mean subspace of ``y`` given ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.
        y : array-like of shape (n_samples,)
            Target values.

        Returns
        -------
        self : SMAVE
            The fitted estimator.
        """
        self._fit_smave(X, y)
        return self

    # ------------------------------------------------------------------ shared pieces

    def _k_and_batch(self, n, d):
        k = min(self.n_neighbors if self.n_neighbors is not None else default_n_neighbors(n, d), n)
        if k < d + 2:
            raise ValueError(f"n_neighbors={k} (after clipping to n_samples) must be >= n_components + 2 = {d + 2}.")
        m = auto_batch_size(n) if self.batch_size == "auto" else min(self.batch_size, n)
        return k, m

    def _initial_basis(self, Z, y, rng):
        n, p = Z.shape
        d = self.n_components
        if isinstance(self.init, str) and self.init == "opg":
            if n > MAX_INIT_ROWS:
                rows = np.sort(rng.choice(n, MAX_INIT_ROWS, replace=False))
                return opg_init(Z[rows], y[rows], d, rng, self.kernel)
            return opg_init(Z, y, d, rng, self.kernel)
        if isinstance(self.init, str):
            return qr_retraction(rng.standard_normal((p, d)))
        return self._check_init_array(self.init, p, d)

    def _steps(self, Z, y, B, k, m, batches, t0, tol, total=None, stream_average=None):
        return run_steps(Z, y, B, k=k, kernel=self.kernel, ridge=self.ridge, eta0=self.eta0,
                         learning_rate=self.learning_rate, decay_steps=self.decay_steps, retraction=self.retraction,
                         batches=batches, t0=t0, refresh=self.refresh_neighbors, refresh_tol=self.refresh_tol,
                         tol=tol, window=self.n_iter_no_change, average=self.average, verbose=self.verbose,
                         total=total, stream_average=stream_average)

    def _evaluate(self, Z, y, B, k, rng):
        n = Z.shape[0]
        evals = np.arange(n) if n <= MAX_EVAL_ANCHORS else np.sort(rng.choice(n, MAX_EVAL_ANCHORS, replace=False))
        _, _, _, _, theta, rss, ok = projected_local_fits(Z, y, B, evals, n_neighbors=k, kernel=self.kernel,
                                                          ridge=self.ridge)
        return float(np.mean(rss)), theta, ok

    def _store(self, run, theta, ok, loss):
        B, eigenvalues = canonical_basis(run.B, theta[:, 1:], ok)
        self._set_basis(B)
        self.eigenvalues_ = eigenvalues
        self.loss_ = loss
        self.n_iter_ = run.n_iter
        self.t_ = run.t
        self.loss_curve_ = run.loss_curve
        self.objective_path_ = run.loss_curve.copy()
        self.grad_norm_curve_ = run.grad_norm_curve
        self.window_change_curve_ = run.window_curve
        self.grad_norm_ = float(run.grad_norm)
        self.converged_ = run.converged
        self.n_failed_solves_ = run.n_failed
        self.n_refresh_ = run.n_refresh

    # ------------------------------------------------------------------ fit

    def _fit_smave(self, X, y):
        Z, yt, y = self._prepare(X, y)
        n, p = Z.shape
        d = self.n_components
        k, m = self._k_and_batch(n, d)
        self.n_neighbors_, self.batch_size_ = k, m
        rng = check_random_state(self.random_state)
        B0 = self._initial_basis(Z, yt, rng)
        self.init_components_ = B0.T.copy()
        best = None
        if self.solver == "trust-regions":
            from ._exact import solve_trust_regions

            run = solve_trust_regions(Z, yt, B0, max_iter=self.max_iter, rng=rng, verbose=self.verbose)
            loss, theta, ok = self._evaluate(Z, yt, run.B, k, rng)
            best = (run, loss, theta, ok)
        for restart in range(self.n_init if best is None else 0):
            start = B0
            if restart > 0 and isinstance(self.init, str) and self.init == "random":
                start = qr_retraction(rng.standard_normal((p, d)))
            run = self._steps(Z, yt, start, k, m, random_batches(rng, n, m, self.max_iter), 0, self.tol,
                             total=self.max_iter)
            loss, theta, ok = self._evaluate(Z, yt, run.B, k, rng)
            if best is None or loss < best[1]:
                best = (run, loss, theta, ok)
        run, loss, theta, ok = best
        self._store(run, theta, ok, loss)
        testable = self.max_iter >= 2 * self.n_iter_no_change  # the rule compares two full windows
        if self.solver == "sgd" and self.tol is not None and testable and not self.converged_:
            warnings.warn(f"SMAVE did not reach tol={self.tol} in max_iter={self.max_iter} steps; increase max_iter "
                          "or tol.", ConvergenceWarning, stacklevel=3)
        self._start_stream(Z, y, rng)
        return Z, yt, y

    # ------------------------------------------------------------------ streaming

    def _start_stream(self, Z, y, rng):
        """Streaming state after ``fit``: moments of all rows and a uniform reservoir drawn from them."""
        n = Z.shape[0]
        self.n_samples_seen_ = n
        rows = np.arange(n) if n <= self.reservoir_size else np.sort(rng.choice(n, self.reservoir_size, False))
        self._stream = StreamState(
            reservoir_X=Z[rows] * self.scale_ + self.mean_, reservoir_y=y[rows].copy(), x_mean=self.mean_.copy(),
            x_m2=np.einsum("ij,ij->j", Z, Z) * self.scale_ ** 2, y_mean=self.y_mean_, y_m2=float(np.var(y) * n),
            seed=int(rng.randint(np.iinfo(np.int32).max)), calls=0,
            # the fitted basis starts both the iterate and the stream's running mean, the latter weighted as the
            # last window of the fit (see StreamAverage)
            iterate=self.components_.T.copy(), mean_B=self.components_.T.copy(),
            mean_weight=self.n_iter_no_change * self.batch_size_ * (self.t_ + 1.0) ** AVERAGE_GAMMA)

    def _streaming(self):
        return type(self)._STREAMING

    @available_if(_streaming)
    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y):
        """Run one pass of SMAVE's steps over the chunk ``(X, y)``, continuing from the current state.

        The first call (on an unfitted estimator) standardises by the chunk and starts from ``init``; later calls
        (and calls after :meth:`fit`) continue from the current iterate, running mean and step-size clock
        ``t_``. Standardisation uses the running moments of every row seen (the bases are re-expressed so that
        their original-unit directions are unchanged). Each call draws a quarter of the chunk's rows (at least
        one batch) as anchors, in batches, and localises them among the whole chunk and a uniform reservoir of
        at most ``reservoir_size`` earlier rows, so memory stays bounded however long the stream. Each iterate
        is folded into the stream's running mean projection (see ``average``): one chunk's neighbourhoods only
        resolve the subspace to that working set's precision, the mean over chunks to the stream's. The steps
        are always the stochastic ones (``solver`` applies to :meth:`fit` only); ``tol`` and ``max_iter`` are
        not used.

        Chunk size matters: each chunk's neighbourhoods are what its steps see, so a stream of chunks ends
        farther from the subspace than one fit on the same rows (``python -m benchmarks smave_stream`` measures
        it by chunk size); chunks below ``MIN_USEFUL_CHUNK`` rows warn (a chosen floor, not a measured one).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            A chunk of input data.
        y : array-like of shape (n_samples,)
            Its target values.

        Returns
        -------
        self : SMAVE
            The updated estimator.
        """
        first = not hasattr(self, "_stream")
        X, y = validate_data(self, X, y, reset=first, y_numeric=True, dtype=[np.float64, np.float32],
                             ensure_min_samples=2)
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        n_chunk, p = X.shape
        if n_chunk < MIN_USEFUL_CHUNK:
            warn_user(f"partial_fit got a chunk of {n_chunk} rows (fewer than {MIN_USEFUL_CHUNK}): each step sees "
                      "only its chunk's neighbourhoods, and a stream of chunks ends farther from the subspace than "
                      "one fit on the same rows (python -m benchmarks smave_stream measures it by chunk size). Pass "
                      "larger chunks where you can, or fit on the whole data.")
        d = self.n_components
        if d > p:
            raise ValueError(f"n_components={d} must be <= n_features={p}.")
        if not first and d != self.n_components_:
            # The stream's iterate and running mean have n_components_ columns: continuing with another d would
            # silently keep the old subspace's size.
            raise ValueError(f"n_components has changed from {self.n_components_} to {d} between calls to "
                             "partial_fit; keep it fixed for a stream, or call fit to start afresh.")
        if first:
            self._stream = StreamState(reservoir_X=np.empty((0, p)), reservoir_y=np.empty(0), x_mean=np.zeros(p),
                                       x_m2=np.zeros(p), y_mean=0.0, y_m2=0.0,
                                       seed=int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max)))
            self.n_samples_seen_ = 0
        st = self._stream
        rng = np.random.RandomState([st.seed, st.calls])
        mx, my = RunningMoments(p), RunningMoments(1)
        mx.count = my.count = self.n_samples_seen_
        mx.mean, mx.m2 = st.x_mean, st.x_m2
        my.mean, my.m2 = np.array([st.y_mean]), np.array([st.y_m2])
        mx.update(X)
        my.update(y[:, None])
        scale = mx.std if self.standardize else np.ones(p)
        scale[~(scale > 0)] = 1.0
        y_scale = float(my.std[0]) if my.std[0] > 0 else 1.0
        reservoir = Reservoir(self.reservoir_size, p)
        reservoir.X, reservoir.y, reservoir.count = st.reservoir_X, st.reservoir_y, self.n_samples_seen_
        W = np.vstack([reservoir.X, X])
        yw = np.concatenate([reservoir.y, y])
        n_work = W.shape[0]
        if n_work < d + 2:
            raise ValueError(f"n_samples={n_work} must be >= n_components + 2 = {d + 2} for the local linear fits.")
        old_scale = None if first else self.scale_
        self.mean_, self.scale_ = mx.mean.copy(), scale
        self.y_mean_, self.y_scale_ = float(my.mean[0]), y_scale
        self.n_components_ = d
        Z = (W - self.mean_) / self.scale_
        yt = (yw - self.y_mean_) / self.y_scale_
        k, m = self._k_and_batch(n_work, d)
        rows = np.arange(n_work - n_chunk, n_work)
        n_anchor = min(n_chunk, max(math.ceil(STREAM_ANCHOR_FRACTION * n_chunk), m))
        if n_anchor < n_chunk:
            rows = np.sort(rng.choice(rows, n_anchor, replace=False))
        self.n_neighbors_, self.batch_size_ = k, min(m, n_anchor)
        if first:
            B = self._initial_basis(Z, yt, rng)
            self.init_components_ = B.T.copy()
            t0, mean = 0, StreamAverage(gamma=AVERAGE_GAMMA)
        else:
            B = rescale_basis(st.iterate, old_scale, self.scale_)
            t0 = self.t_
            mean = StreamAverage(rescale_basis(st.mean_B, old_scale, self.scale_), st.mean_weight,
                                 AVERAGE_GAMMA)
        run = self._steps(Z, yt, B, k, m, epoch_batches(rng, rows, self.batch_size_), t0, None,
                          stream_average=mean)
        loss, theta, ok = self._evaluate(Z, yt, run.B, k, rng)
        self._store(run, theta, ok, loss)
        reservoir.add(X, y, rng)
        self.n_samples_seen_ += n_chunk
        self._stream = dataclasses.replace(
            st, reservoir_X=reservoir.X, reservoir_y=reservoir.y, x_mean=mx.mean, x_m2=mx.m2,
            y_mean=float(my.mean[0]), y_m2=float(my.m2[0]), calls=st.calls + 1, iterate=run.B_last,
            mean_B=mean.B if mean.B is not None else run.B_last, mean_weight=mean.weight)
        return self
