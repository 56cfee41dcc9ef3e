"""SMAVE: stochastic Riemannian MAVE for the central mean subspace (linear cost in n per step)."""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from sklearn_frontier.kernels.sdr import KERNEL_CODES, sdr_grad, sdr_local_wls, sdr_local_wls_weighted
from sklearn_frontier.utils._compat import Interval, StrOptions, _fit_context
from sklearn_frontier.utils._manifolds import qr_retraction, retract
from sklearn_frontier.utils._progress import progress_bar

from ._base import (
    _COMMON_CONSTRAINTS,
    MAX_EVAL_ANCHORS,
    _BaseSDR,
    canonical_basis,
    default_n_neighbors,
    opg_init,
    projected_local_fits,
    projected_tree,
    query_neighbors,
    subspace_change,
)


def step_size(t, eta0, schedule, decay_steps):
    """The step size at step ``t``: "invscaling" ``eta0 / (1 + t / tau)``, "sqrt" ``eta0 / sqrt(1 + t / tau)``."""
    if schedule == "invscaling":
        return eta0 / (1.0 + t / decay_steps)
    if schedule == "sqrt":
        return eta0 / np.sqrt(1.0 + t / decay_steps)
    return eta0


class SMAVE(_BaseSDR):
    """Stochastic Riemannian MAVE: the central mean subspace by Riemannian SGA on the Stiefel manifold.

    Finds an orthonormal ``B`` (p, d) such that ``E[y | x]`` depends on ``x`` only through ``B^T x``, by
    maximising the explained local weighted sum of squares of local linear fits (MAVE's objective) with a
    closed-form Riemannian gradient over mini-batches of anchors; anchors are localised by a k-d tree in the
    d-dimensional projected space, so one step costs O(n p d + n log n + m k (p + d^2)).

    Parameters
    ----------
    n_components : int, default=2
        Dimension d of the subspace.
    n_neighbors : int, default=None
        Neighbours per anchor in the projected space; None: ``min(n, clip(ceil(n ** (4 / (d + 4))), 10 (d + 1),
        200))``.
    kernel : {"gaussian", "epanechnikov", "uniform"}, default="gaussian"
        Weight profile on the adaptive radius (the distance to the k-th neighbour).
    batch_size : int, default=64
        Anchors per step (clipped to n).
    max_iter : int, default=300
        SGD steps per restart.
    eta0 : float, default=0.5
        Initial step size (the data are standardised, so it is scale-free).
    learning_rate : {"invscaling", "sqrt", "constant"}, default="invscaling"
        Step-size schedule: ``eta0 / (1 + t / decay_steps)``, ``eta0 / sqrt(1 + t / decay_steps)`` or ``eta0``.
    decay_steps : float, default=100.0
        Time scale ``tau`` of the schedule.
    retraction : {"qr", "polar"}, default="qr"
        Retraction on the Stiefel manifold.
    refresh_neighbors : int or "never", default=1
        Rebuild the projected k-d tree every this many steps; "never" freezes neighbour sets and weights at the
        initial basis (the "simplified" fixed finite-sum objective).
    init : {"opg", "random"} or array-like of shape (n_components, n_features), default="opg"
        Initial basis: kNN-OPG, a random orthonormal draw (not reliable) or given directions in original units.
    n_init : int, default=1
        Restarts; the one with the lowest exact evaluation loss is kept.
    tol : float, default=None
        Stop when the mean subspace change over the last ``n_iter_no_change`` steps is below ``tol``; None runs
        ``max_iter`` steps and never warns.
    n_iter_no_change : int, default=10
        Window of the stopping rule.
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
    mean_, scale_ : ndarray of shape (n_features,)
        Standardisation of X.
    y_mean_, y_scale_ : float
        Standardisation of y.
    n_iter_ : int
        Steps run by the kept restart.
    loss_curve_ : ndarray of shape (n_iter_,)
        Mini-batch MAVE loss (mean local weighted RSS, standardised y) per step.
    objective_path_ : ndarray of shape (n_iter_,)
        Same as ``loss_curve_``.
    grad_norm_curve_ : ndarray of shape (n_iter_,)
        Frobenius norm of the stochastic Riemannian gradient per step.
    loss_ : float
        Exact evaluation loss of the kept basis.
    converged_ : bool
        Whether the ``tol`` rule stopped the kept restart.
    n_failed_solves_ : int
        Local solves that failed (degenerate neighbourhoods) during the kept restart.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined when X has string column names.

    See Also
    --------
    OPG : Outer product of gradients (the initialiser).
    RMAVE : Refined MAVE by alternating weighted least squares (quadratic cost).
    MAVEDimensionCV : Choose ``n_components`` by cross-validation.

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
    """

    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "n_neighbors": [Interval(Integral, 1, None, closed="left"), None],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "eta0": [Interval(Real, 0, None, closed="neither")],
        "learning_rate": [StrOptions({"invscaling", "sqrt", "constant"})],
        "decay_steps": [Interval(Real, 0, None, closed="neither")],
        "retraction": [StrOptions({"qr", "polar"})],
        "refresh_neighbors": [Interval(Integral, 1, None, closed="left"), StrOptions({"never"})],
        "init": [StrOptions({"opg", "random"}), "array-like"],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "verbose": ["verbose"],
    }

    def __init__(self, n_components=2, *, n_neighbors=None, kernel="gaussian", batch_size=64, max_iter=300,
                 eta0=0.5, learning_rate="invscaling", decay_steps=100.0, retraction="qr", refresh_neighbors=1,
                 init="opg", n_init=1, tol=None, n_iter_no_change=10, standardize=True, ridge=1e-8, verbose=0,
                 random_state=None):
        self.n_components = n_components
        self.n_neighbors = n_neighbors
        self.kernel = kernel
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.eta0 = eta0
        self.learning_rate = learning_rate
        self.decay_steps = decay_steps
        self.retraction = retraction
        self.refresh_neighbors = refresh_neighbors
        self.init = init
        self.n_init = n_init
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
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

    def _fit_smave(self, X, y):
        Z, yt, y = self._prepare(X, y)
        n, p = Z.shape
        d = self.n_components
        k = min(self.n_neighbors if self.n_neighbors is not None else default_n_neighbors(n, d), n)
        if k < d + 2:
            raise ValueError(f"n_neighbors={k} (after clipping to n_samples) must be >= n_components + 2 = {d + 2}.")
        self.n_neighbors_ = k
        m = min(self.batch_size, n)
        rng = check_random_state(self.random_state)
        if isinstance(self.init, str) and self.init == "opg":
            B0 = opg_init(Z, yt, d, rng, self.kernel)
        elif isinstance(self.init, str):
            B0 = qr_retraction(rng.standard_normal((p, d)))
        else:
            B0 = self._check_init_array(self.init, p, d)
        self.init_components_ = B0.T.copy()
        evals = np.arange(n) if n <= MAX_EVAL_ANCHORS else np.sort(rng.choice(n, MAX_EVAL_ANCHORS, replace=False))
        best = None
        for restart in range(self.n_init):
            start = B0
            if restart > 0 and isinstance(self.init, str) and self.init == "random":
                start = qr_retraction(rng.standard_normal((p, d)))
            run = self._sgd(Z, yt, start, k, m, rng)
            _, _, _, _, theta, rss, ok = projected_local_fits(Z, yt, run["B"], evals, n_neighbors=k,
                                                              kernel=self.kernel, ridge=self.ridge)
            loss = float(np.mean(rss))
            if best is None or loss < best["loss"]:
                best = {**run, "loss": loss, "theta": theta, "ok": ok}
        B, eigenvalues = canonical_basis(best["B"], best["theta"][:, 1:], best["ok"])
        self._set_basis(B)
        self.eigenvalues_ = eigenvalues
        self.loss_ = best["loss"]
        self.n_iter_ = best["n_iter"]
        self.loss_curve_ = best["loss_curve"]
        self.objective_path_ = best["loss_curve"].copy()
        self.grad_norm_curve_ = best["grad_norm_curve"]
        self.converged_ = best["converged"]
        self.n_failed_solves_ = best["n_failed"]
        if self.tol is not None and not self.converged_:
            warnings.warn(f"SMAVE did not reach tol={self.tol} in max_iter={self.max_iter} steps; increase max_iter "
                          "or tol.", ConvergenceWarning, stacklevel=3)
        return Z, yt, y

    def _sgd(self, Z, y, B, k, m, rng):
        """Riemannian stochastic gradient ascent from ``B``; returns the final basis and the curves."""
        n = Z.shape[0]
        code = KERNEL_CODES[self.kernel]
        frozen = self.refresh_neighbors == "never"
        if frozen:  # neighbour sets and weights fixed at the initial basis, for all n anchors
            P0 = Z @ B
            nbr_all = query_neighbors(projected_tree(P0), P0, k)
            w_all = sdr_local_wls(P0, y, P0, nbr_all, code, 0.0, self.ridge)[0]
        loss_curve, grad_curve, changes = [], [], []
        n_failed = 0
        converged = False
        tree = Pt = None
        bar = progress_bar(range(self.max_iter), desc="SMAVE", verbose=self.verbose, unit="step")
        t = 0
        for t in bar:
            P = Z @ B
            anchors = rng.choice(n, m, replace=False)
            if frozen:
                nbr, w = nbr_all[anchors], w_all[anchors]
                e, theta, rss, ok = sdr_local_wls_weighted(P, y, P[anchors], nbr, w, self.ridge)
            else:
                if t % self.refresh_neighbors == 0:
                    Pt = P
                    tree = projected_tree(Pt)
                nbr = query_neighbors(tree, Pt[anchors], k)
                w, e, theta, rss, ok = sdr_local_wls(P, y, P[anchors], nbr, code, 0.0, self.ridge)
            loss_curve.append(float(np.mean(rss)))
            n_failed += int(np.sum(~ok))
            G = sdr_grad(Z, Z[anchors], nbr, w, e, theta)
            G -= B @ (B.T @ G)  # horizontal part (a no-op at ridge 0; removes the ridge's symmetric B^T G)
            grad_curve.append(float(np.linalg.norm(G)))
            B_new = retract(B, step_size(t, self.eta0, self.learning_rate, self.decay_steps) * G, self.retraction)
            changes.append(subspace_change(B, B_new))
            B = B_new
            if self.tol is not None and len(changes) >= self.n_iter_no_change:
                if np.mean(changes[-self.n_iter_no_change:]) < self.tol:
                    converged = True
                    break
        return {"B": B, "n_iter": len(loss_curve), "loss_curve": np.asarray(loss_curve),
                "grad_norm_curve": np.asarray(grad_curve), "converged": converged, "n_failed": n_failed}
