"""RMAVE: refined MAVE by alternating weighted least squares (Xia, Tong, Li & Zhu 2002)."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from sklearn_frontier.kernels.sdr import sdr_local_wls, sdr_rmave_normal_eqs
from sklearn_frontier.utils._compat import Interval, StrOptions, _fit_context
from sklearn_frontier.utils._manifolds import qr_retraction
from sklearn_frontier.utils._progress import progress_bar

from ._base import (
    _COMMON_CONSTRAINTS,
    DENSE_BLOCK,
    _BaseSDR,
    canonical_basis,
    default_n_neighbors,
    opg_init,
    projected_bandwidth,
    projected_local_fits,
)

GLOBAL_RIDGE = 1e-8


class RMAVE(_BaseSDR):
    """Refined MAVE: alternate local linear fits in the projected space and a global least-squares update of B.

    The classical MAVE estimator of the central mean subspace, started from OPG; its cost per iteration is
    quadratic in the number of rows with ``localization="kernel"`` (see :class:`SMAVE` for large data).

    Read more in the :ref:`User Guide <user_guide_sdr>`.

    Parameters
    ----------
    n_components : int, default=2
        Dimension d of the subspace.
    localization : {"kernel", "knn"}, default="kernel"
        "kernel": every point, Gaussian weights, bandwidth ``bandwidth`` or ``mean sd(Z B) n ** (-1 / (d + 4))``
        recomputed each iteration (O(n^2 p^2)); "knn": SMAVE's k nearest projected points and adaptive weights.
    n_neighbors : int, default=None
        Neighbours for "knn" (None: SMAVE's rule).
    bandwidth : float, default=None
        Fixed bandwidth for "kernel".
    max_iter : int, default=20
        Alternating iterations.
    tol : float, default=1e-4
        Stop when ``||B_new B_new^T - B B^T||_2 < tol``.
    init : "opg" or array-like of shape (n_components, n_features), default="opg"
        The kNN-OPG start, or given directions in original units.
    kernel : {"gaussian", "epanechnikov", "uniform"}, default="gaussian"
        Weight profile for "knn".
    standardize : bool, default=True
        Standardise the columns of X.
    ridge : float, default=1e-8
        Relative ridge on the local slopes.
    verbose : int, default=0
        Show a progress bar.
    random_state : int, RandomState instance or None, default=None
        The OPG init's anchor subsample (n > 1000).

    Attributes
    ----------
    components_, directions_ : ndarray of shape (n_components, n_features)
        Basis (standardised space) and unit directions (original units), canonical rotation and signs.
    eigenvalues_ : ndarray of shape (n_components,)
        Eigenvalues of the mean outer product of the final local slopes in the projected space (descending).
    n_components_ : int
        The selected dimension.
    n_iter_ : int
        Alternating iterations run.
    loss_curve_ : ndarray of shape (n_iter_,)
        Mean local weighted RSS at the start of each iteration.
    converged_ : bool
        Whether the subspace change fell below ``tol`` before ``max_iter`` iterations.
    mean_ : ndarray of shape (n_features,)
        Column means of X.
    scale_ : ndarray of shape (n_features,)
        Column standard deviations of X used for standardisation (ones when ``standardize=False``; a constant
        column keeps scale 1).
    y_mean_ : float
        Mean of y.
    y_scale_ : float
        Standard deviation of y (1 when y is constant).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined when X has string column names.

    See Also
    --------
    SMAVE : The stochastic, linear-cost version.
    OPG : Outer product of gradients.

    Notes
    -----
    Each iteration runs over all n anchors: local fits ``(a_j, b_j)`` at the current ``B`` (localised in the
    projected space), then ``B`` solves the weighted least-squares problem
    ``min_B sum_j sum_i w_ij (y_i - a_j - b_j^T B^T (z_i - z_j))^2`` (a (p d) x (p d) linear system), followed by
    a QR orthonormalisation. The final basis is rotated to the eigenbasis of the mean outer product of the local
    slopes and its signs fixed, so that runs can be compared.

    References
    ----------
    .. [1] Xia, Tong, Li & Zhu (2002), JRSSB 64:363-410.

    Examples
    --------
    >>> from sklearn_frontier.sdr import RMAVE
    >>> from sklearn_frontier.datasets import make_sdr_regression
    >>> X, y, B0 = make_sdr_regression("C", n_samples=150, n_features=4, random_state=0)
    >>> RMAVE(n_components=1, max_iter=3).fit(X, y).n_iter_ >= 1
    True
    """

    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "localization": [StrOptions({"knn", "kernel"})],
        "n_neighbors": [Interval(Integral, 1, None, closed="left"), None],
        "bandwidth": [Interval(Real, 0, None, closed="neither"), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "init": [StrOptions({"opg"}), "array-like"],
        "verbose": ["verbose"],
    }

    def __init__(self, n_components=2, *, localization="kernel", n_neighbors=None, bandwidth=None, max_iter=20,
                 tol=1e-4, init="opg", kernel="gaussian", standardize=True, ridge=1e-8, verbose=0,
                 random_state=None):
        self.n_components = n_components
        self.localization = localization
        self.n_neighbors = n_neighbors
        self.bandwidth = bandwidth
        self.max_iter = max_iter
        self.tol = tol
        self.init = init
        self.kernel = kernel
        self.standardize = standardize
        self.ridge = ridge
        self.verbose = verbose
        self.random_state = random_state

    def _local(self, Z, y, B, k, normal_eqs=True):
        """Local fits at every anchor, then the global normal equations; returns ``(A, c, theta, rss, ok)``."""
        n, p = Z.shape
        d = B.shape[1]
        anchors = np.arange(n)
        if self.localization == "knn":
            P, nbr, w, _, theta, rss, ok = projected_local_fits(Z, y, B, anchors, n_neighbors=k, kernel=self.kernel,
                                                                ridge=self.ridge)
            A, c = sdr_rmave_normal_eqs(Z, y, Z, nbr, w, theta) if normal_eqs else (None, None)
            return A, c, theta, rss, ok
        P = Z @ B
        h = self.bandwidth or projected_bandwidth(P)
        A, c = np.zeros((p * d, p * d)), np.zeros(p * d)
        thetas, rsss, oks = [], [], []
        for start in range(0, n, DENSE_BLOCK):
            idx = anchors[start:start + DENSE_BLOCK]
            nbr = np.broadcast_to(np.arange(n, dtype=np.int64), (len(idx), n))
            w, _, theta, rss, ok = sdr_local_wls(P, y, P[idx], nbr, 0, h, self.ridge)
            if normal_eqs:
                Ab, cb = sdr_rmave_normal_eqs(Z, y, Z[idx], nbr, w, theta)
                A += Ab
                c += cb
            thetas.append(theta), rsss.append(rss), oks.append(ok)
        return A, c, np.concatenate(thetas), np.concatenate(rsss), np.concatenate(oks)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Estimate the central mean subspace by refined MAVE.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.
        y : array-like of shape (n_samples,)
            Target values.

        Returns
        -------
        self : RMAVE
            The fitted estimator.
        """
        Z, yt, _ = self._prepare(X, y)
        n, p = Z.shape
        d = self.n_components
        k = min(self.n_neighbors or default_n_neighbors(n, d), n)
        if self.localization == "knn" and k < d + 2:
            raise ValueError(f"n_neighbors={k} (after clipping to n_samples) must be >= n_components + 2 = {d + 2}.")
        rng = check_random_state(self.random_state)
        if isinstance(self.init, str):
            B = opg_init(Z, yt, d, rng, self.kernel)
        else:
            B = self._check_init_array(self.init, p, d)
        loss_curve = []
        converged = False
        for _ in progress_bar(range(self.max_iter), desc="RMAVE", verbose=self.verbose, unit="iter"):
            A, c, _, rss, _ = self._local(Z, yt, B, k)
            loss_curve.append(float(np.mean(rss)))
            trace = np.trace(A)
            A[np.diag_indices_from(A)] += GLOBAL_RIDGE * (trace if trace > 0 else 1.0) / (p * d)
            try:
                vec = np.linalg.solve(A, c)
            except np.linalg.LinAlgError:
                vec = np.linalg.lstsq(A, c, rcond=None)[0]
            B_new = vec.reshape((p, d), order="F")
            if not np.all(np.isfinite(B_new)) or np.linalg.matrix_rank(B_new) < d:
                break  # degenerate update (e.g. constant y): keep the current basis
            B_new = qr_retraction(B_new)
            change = float(np.linalg.norm(B_new @ B_new.T - B @ B.T, 2))
            B = B_new
            if change < self.tol:
                converged = True
                break
        self.n_iter_ = max(len(loss_curve), 1)
        self.loss_curve_ = np.asarray(loss_curve)
        self.converged_ = converged
        _, _, theta, _, ok = self._local(Z, yt, B, k, normal_eqs=False)
        B, self.eigenvalues_ = canonical_basis(B, theta[:, 1:], ok)
        self._set_basis(B)
        return self
