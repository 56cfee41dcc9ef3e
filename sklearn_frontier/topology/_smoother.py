"""CEOSmoother: Tikhonov smoothing of vertex signals with the collapsed operator, (I + τS_ε)⁻¹Y."""

from numbers import Real

import numpy as np
import scipy.linalg as la
from scipy.sparse.linalg import LinearOperator, cg
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.exceptions import ConvergenceWarning

from sklearn_frontier.utils._compat import Interval, _fit_context, check_is_fitted, validate_data

from ._base import _CEO_ATTRIBUTES_DOC, OPERATOR_CONSTRAINTS, _CEOMixin


class CEOSmoother(_CEOMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    __doc__ = """Graph/complex smoothing filter Ŷ = (I + τ S_ε)⁻¹ Y on the fitted vertices (transductive).

    ``fit(X)`` builds the kNN graph of X's rows (or takes a precomputed adjacency), its complex and S_ε: X
    places the vertices, it is not the signal. :meth:`smooth` filters signals on the fitted vertices, any number
    of columns; ``transform(X)`` smooths the columns of X itself (rows = the fitted vertices). To choose ``tau``
    for a signal ``y`` on the vertices, pass it as y: ``score(X, y)`` is the negative GCV of smoothing y on
    the graph of X, so ``GridSearchCV(CEOSmoother(), {"tau": [...]}).fit(X, y)`` tunes the smoothing of y,
    not of the coordinates.

    Read more in the :ref:`User Guide <user_guide_topology>`.

    Parameters
    ----------
    tau : float >= 0, default=1.0
        Filter strength (0 = identity).
    affinity, n_neighbors, max_rank, incidence : see CEOSpectralClustering
        As in :class:`CEOSpectralClustering`.
    coupling : float in [0, 1], default=1.0
        Relative coupling (see ``coupling_bound``).
    coupling_bound : {"graded", "schur"}, default="schur"
        As in :class:`CEOSpectralClustering`. The defaults (coupling 1 of the "schur" bound, ε = 100) are where
        S_ε smooths best in the coupling-range benchmark (see Notes). τ scales like ε: tune it (``score`` is a
        GCV criterion).
    gammas, betas : see CEOSpectralClustering
        As in :class:`CEOSpectralClustering`.
    eps : float > 0, default=100.0
        Regularisation ε of S_ε.
    solver, fast_path, rtol, max_cells : see CEOSpectralClustering
        As in :class:`CEOSpectralClustering`.

    Attributes
    ----------
    factor_ : tuple or None
        Cholesky factor of I + τS_ε (dense route), None matrix-free.
""" + _CEO_ATTRIBUTES_DOC + """    n_features_in_ : int
        Number of features seen during ``fit`` (n_samples with ``affinity="precomputed"``).
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during ``fit``. Defined only when X has feature names that are all
        strings.

    See Also
    --------
    CEOSpectralClustering : Spectral clustering with the same collapsed operator.
    CollapsedLaplacian : Spectral embedding with the same collapsed operator.

    Notes
    -----
    The filter solves (I + τ S_ε) Ŷ = Y: by a Cholesky factor computed once in ``fit`` on the dense route, by
    conjugate gradients on the matrix-free one. Since S_ε 1 = 0 for signed B_1, constants are kept. At the top
    of the admissible coupling range with a large ε, on chain complexes
    S_ε = L_0(L_0 − λ_2 I)(L_0 + εI)⁻¹ ≈ (L_0² − λ_2 L_0)/ε, so the smoother behaves like the biharmonic filter
    (I + τ'L_0²)⁻¹: the gain over graph-Laplacian Tikhonov smoothing comes from that spectral map, not from the
    higher cells.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.topology import CEOSmoother
    >>> X = np.random.RandomState(0).rand(30, 2)
    >>> sm = CEOSmoother(tau=1.0, n_neighbors=5).fit(X)
    >>> bool(np.allclose(sm.smooth(np.ones(30)), 1.0))
    True
    """

    _parameter_constraints = {
        **OPERATOR_CONSTRAINTS,
        "tau": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, tau=1.0, *, affinity="nearest_neighbors", n_neighbors=10, max_rank=2, incidence="signed",
                 coupling=1.0, coupling_bound="schur", gammas=None, betas=None, eps=100.0, solver="auto",
                 fast_path=True, rtol=1e-10,
                 max_cells=2_000_000):
        self.tau = tau
        self.affinity = affinity
        self.n_neighbors = n_neighbors
        self.max_rank = max_rank
        self.incidence = incidence
        self.coupling = coupling
        self.coupling_bound = coupling_bound
        self.gammas = gammas
        self.betas = betas
        self.eps = eps
        self.solver = solver
        self.fast_path = fast_path
        self.rtol = rtol
        self.max_cells = max_cells

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, cells=None, n_vertices=None):
        """Build S_ε on the rows of X (or the precomputed adjacency X) and factor I + τS_ε.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples), or None
            Vertex coordinates, or the precomputed adjacency when ``affinity="precomputed"``, or None for a
            hypergraph given by ``cells`` alone.
        y : array-like of shape (n_samples,) or (n_samples, n_signals), default=None
            Ignored by fit (the graph depends on X only); accepted so that model selection can pass the signal
            on to :meth:`score`.
        cells : sequence of sequences of int, default=None
            Hyperedges for :func:`hypergraph_complex`.
        n_vertices : int, default=None
            Number of vertices of a hypergraph given as ``cells`` alone (X None): vertices in no hyperedge are
            kept as isolated vertices (rows of every result). Default: the largest vertex index in ``cells`` + 1. With
            X given it must equal the number of vertices of X.

        Returns
        -------
        self : object
            The fitted smoother.
        """
        self._fit_operator(X, cells, n_vertices)
        if isinstance(self.operator_, np.ndarray):
            M = np.eye(self.n_vertices_) + self.tau * self.operator_
            self.factor_ = la.cho_factor(M)
        else:
            self.factor_ = None
        return self

    def smooth(self, Y):
        """Apply the filter (I + τS_ε)⁻¹ to Y, for any number of signal columns.

        Parameters
        ----------
        Y : array-like of shape (n_vertices_,) or (n_vertices_, m)
            Signals on the fitted vertices, one per column.

        Returns
        -------
        Y_smooth : ndarray of the shape of Y
            The smoothed signals.
        """
        check_is_fitted(self, "operator_")
        Y = np.asarray(Y, dtype=np.float64)
        if Y.ndim not in (1, 2) or Y.shape[0] != self.n_vertices_:
            raise ValueError(f"Y must have n_vertices_={self.n_vertices_} rows (the fitted vertices), got shape "
                             f"{Y.shape}.")
        if not np.all(np.isfinite(Y)):
            raise ValueError("Y contains NaN or infinity.")
        if self.factor_ is not None:
            return la.cho_solve(self.factor_, Y)
        n = self.n_vertices_
        op = LinearOperator((n, n), matvec=lambda v: v + self.tau * (self.operator_ @ v), dtype=np.float64)
        cols = Y.reshape(n, -1)
        out = np.empty_like(cols)
        for j in range(cols.shape[1]):
            out[:, j], info = cg(op, cols[:, j], rtol=1e-8, atol=0.0, maxiter=10 * n)
            if info > 0:
                import warnings

                warnings.warn("outer CG did not converge; results kept.", ConvergenceWarning, stacklevel=2)
        return out.reshape(Y.shape)

    def transform(self, X):
        """Smooth the columns of X, whose rows are the fitted vertices (shape as in fit).

        Parameters
        ----------
        X : array-like of shape (n_vertices_, n_features_in_)
            Signals whose rows are the fitted vertices.

        Returns
        -------
        X_smooth : ndarray of shape (n_vertices_, n_features_in_)
            The smoothed columns of X.
        """
        check_is_fitted(self, "operator_")
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False,
                          accept_sparse=self.affinity == "precomputed")
        if hasattr(X, "toarray"):
            X = X.toarray()
        if X.shape[0] != self.n_vertices_:
            raise ValueError(f"X has {X.shape[0]} rows but the smoother was fitted on n_vertices_="
                             f"{self.n_vertices_} vertices (a transductive filter: rows are the fitted vertices).")
        return self.smooth(X)

    def score(self, X, y=None):
        """Negative generalised cross-validation of the filter on the graph of X's rows (dense, n <= 3000).

        GCV(τ) = mean((Y − HY)²) / (1 − tr(H)/n)², H = (I + τS_ε)⁻¹ with S_ε built on the rows of X by this
        estimator's parameters — the classic criterion for choosing a smoothing strength without held-out
        signal values. The signal Y is ``y`` when given, else the columns of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The vertices of the graph to build (coordinates, or the adjacency with ``affinity="precomputed"``).
        y : array-like of shape (n_samples,) or (n_samples, n_signals), default=None
            The signal on those vertices; None scores the smoothing of X's own columns.

        Returns
        -------
        score : float
            Negative GCV criterion (higher is better).
        """
        from sklearn.base import clone

        check_is_fitted(self, "operator_")
        validate_data(self, X, dtype=[np.float64, np.float32], reset=False,
                      accept_sparse=self.affinity == "precomputed")
        other = clone(self).set_params(solver="dense").fit(X)
        n = other.n_vertices_
        if y is None:
            Y = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
        else:
            Y = np.asarray(y, dtype=np.float64)
            if Y.shape[0] != n:
                raise ValueError(f"y has {Y.shape[0]} rows but X has {n} vertices: y is the signal on X's rows.")
        lam = np.clip(la.eigvalsh(other.operator_), 0.0, None)
        trH = float(np.sum(1.0 / (1.0 + self.tau * lam)))
        resid = float(np.mean((Y - other.smooth(Y)) ** 2))
        denom = (1.0 - trH / n) ** 2
        return float(-resid / denom) if denom > 1e-12 else 0.0
