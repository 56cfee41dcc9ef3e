"""Shared parameters, validation and fitting steps of the CEO estimators."""

from numbers import Integral, Real

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp

from sklearn_frontier.utils._compat import Interval, StrOptions, validate_data
from sklearn_frontier.utils._warnings import warn_user

from ._operators import chain_operator, graded_laplacian
from ._spectral import fit_operator, knn_adjacency, precomputed_adjacency

OPERATOR_CONSTRAINTS = {
    "affinity": [StrOptions({"nearest_neighbors", "precomputed"})],
    "n_neighbors": [Interval(Integral, 1, None, closed="left")],
    "max_rank": [Interval(Integral, 1, None, closed="left")],
    "incidence": [StrOptions({"signed", "mixed"})],
    "coupling": [Interval(Real, 0, 1, closed="both")],
    "coupling_bound": [StrOptions({"graded", "schur"})],
    "gammas": ["array-like", None],
    "betas": ["array-like", None],
    "eps": [Interval(Real, 0, None, closed="neither")],
    "solver": [StrOptions({"auto", "dense", "cg"})],
    "fast_path": ["boolean"],
    "rtol": [Interval(Real, 0, None, closed="neither")],
    "max_cells": [Interval(Integral, 1, None, closed="left")],
}
SPECTRAL_CONSTRAINTS = {
    **OPERATOR_CONSTRAINTS,
    "normalize": ["boolean", StrOptions({"diag", "degree"})],
    "features": [StrOptions({"eigvecs", "hks"})],
    "hks_times": [Interval(Integral, 1, None, closed="left"), "array-like"],
    "eigen_tol": [Interval(Real, 0, None, closed="neither")],
    "random_state": ["random_state"],
}


# Numpydoc "Attributes" entries of everything _CEOMixin sets in fit, shared by the docstrings of the estimators
# built on it (written once, like the code that sets them).
_CEO_ATTRIBUTES_DOC = """    operator_ : ndarray or CollapsedOperator
        The unnormalised collapsed operator S_ε: dense on the dense routes, matrix-free (a
        :class:`CollapsedOperator` or the chain operator with its exact diagonal) otherwise.
    affinity_matrix_ : scipy.sparse.csr_matrix of shape (n_vertices_, n_vertices_)
        The 0/1 graph of the vertices: the union-symmetrised kNN graph of X, or the pattern of the
        precomputed adjacency.
    boundaries_ : list of scipy.sparse.csr_matrix
        Boundary matrices B_1, ..., B_K of the complex (B_k maps rank-k cells to rank-(k - 1) cells).
    n_cells_ : ndarray of shape (K + 1,)
        Number of cells of each rank, vertices first.
    betas_ : ndarray of shape (K,)
        Boundary weights β_1, ..., β_K used (``betas``, or ones).
    gammas_ : ndarray of shape (K,)
        Couplings γ_0, ..., γ_{K-1} used (``gammas``, or ``coupling`` times ``coupling_bounds_``); NaN
        where a bound was not computed because its coupling cannot change S_ε (chain complexes).
    coupling_bounds_ : ndarray of shape (K,)
        Upper bound of each coupling under ``coupling_bound`` (NaN where not computed, as in
        ``gammas_``).
    chain_defect_ : float
        ‖B_1B_2‖_max (0 ⇒ the chain lemma applies).
    fast_path_ : bool
        Whether S_ε was computed directly as f_ε(L_0) (see ``fast_path``).
    solver_ : str
        The solver used, "dense" or "cg" (``solver="auto"`` resolved).
    route_ : str
        How S_ε was computed: "chain", "chain-selinv", "cellwise", "schur" or "splu" on the dense
        solver, "cg", "cg-chain" or "cg-cellwise" matrix-free.
    degeneracy_ : float in [0, 1]
        λ_max(S_ε − f_ε(L_0)) / λ_max(A − f_ε(L_0)); 0 ⇔ higher cells have no effect.
    sandwich_gap_ : float
        ‖A − S_ε‖₂ (NaN where it is not computed, on matrix-free routes).
    sandwich_bound_ : float
        γ_0²/β_1, the bound of ``sandwich_gap_``.
    n_cg_iter_ : int
        Inner PCG iterations (summed over columns) of the matrix-free operator during fit; 0 on dense routes.
    n_vertices_ : int
        Number of vertices (rows of X, or the vertices of a hypergraph given by ``cells`` alone).
"""


class _GraphMixin:
    """Tags and graph construction shared by every estimator of the family (CEO and the baselines).

    ``affinity="precomputed"``: X is the (n, n) adjacency (pairwise input, sparse accepted); otherwise the 0/1
    union-symmetrised kNN graph of X's rows. ``X=None`` with ``cells``: a hypergraph given as its hyperedges.
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.affinity == "precomputed"
        tags.input_tags.sparse = self.affinity == "precomputed"
        return tags

    def _graph(self, X, reset=True, precomputed=False):
        if self.affinity == "precomputed" or precomputed:
            X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], ensure_min_samples=2,
                              reset=reset)
            return X, precomputed_adjacency(X)
        X = validate_data(self, X, dtype=[np.float64, np.float32], ensure_min_samples=2, reset=reset)
        return X, knn_adjacency(X, self.n_neighbors)

    def _warn_if_adjacency(self, X, cells):
        """Warn when ``cells`` come with a square, symmetric 0/1 matrix read as features: almost surely an adjacency
        passed without ``affinity="precomputed"``, whose rows would then be joined by a kNN graph instead."""
        if cells is None or self.affinity == "precomputed" or sp.issparse(X):
            return
        A = np.asarray(X)
        if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] < 3 or not np.issubdtype(A.dtype, np.number):
            return
        if np.isin(A, (0, 1)).all() and np.array_equal(A, A.T) and not np.diagonal(A).any():
            warn_user(f"X is a square, symmetric 0/1 matrix with a zero diagonal, given with cells: it looks like an "
                      f"adjacency matrix, but affinity={self.affinity!r} reads its rows as features and builds a "
                      "kNN graph of them. Pass affinity='precomputed' to use it as the graph.")

    @staticmethod
    def _hypergraph_as_adjacency(cells, n_vertices=None):
        """A hypergraph given as its hyperedges alone: the 2-vertex ones are the graph, the larger ones the cells.

        The vertices are 0..n_vertices − 1 (default: the largest index + 1), so a vertex in no hyperedge is kept as
        an isolated vertex when ``n_vertices`` counts it."""
        if cells is None:
            raise ValueError("X is None: pass the data (or an adjacency with affinity='precomputed'), or a "
                             "hypergraph as its list of hyperedges, fit(None, cells=[(0, 1), (1, 2, 3), ...]).")
        cells = [tuple(int(v) for v in cell) for cell in cells]
        if not cells or any(len(cell) < 2 for cell in cells) or min(min(cell) for cell in cells) < 0:
            raise ValueError("cells must be hyperedges of at least 2 vertex indices >= 0.")
        n = 1 + max(max(cell) for cell in cells)
        if n_vertices is not None:
            if isinstance(n_vertices, bool) or not isinstance(n_vertices, Integral) or n_vertices < n:
                raise ValueError(f"n_vertices={n_vertices!r} must be an integer >= {n}, the largest vertex index in "
                                 "cells + 1.")
            n = int(n_vertices)
        pairs = np.array([cell for cell in cells if len(cell) == 2], dtype=np.int64).reshape(-1, 2)
        A = sp.coo_matrix((np.ones(2 * len(pairs)), (np.r_[pairs[:, 0], pairs[:, 1]], np.r_[pairs[:, 1], pairs[:, 0]])),
                          shape=(n, n)).tocsr()
        A.data[:] = 1.0
        return A, [cell for cell in cells if len(cell) > 2]

    def _graph_of(self, X, cells, n_vertices=None):
        """``(X, graph, cells)``: the graph of X (warning when X looks like a misread adjacency), or of a hypergraph
        given as ``cells`` alone (X None) on ``n_vertices`` vertices."""
        if X is None:
            given = cells
            X, cells = self._hypergraph_as_adjacency(cells, n_vertices)
            X, graph = self._graph(X, precomputed=True)
            covered = np.zeros(graph.shape[0], dtype=bool)
            covered[np.fromiter((v for cell in given for v in cell), dtype=np.int64)] = True
            if not covered.all():
                warn_user(f"{int((~covered).sum())} of the {graph.shape[0]} vertices are in no hyperedge: they are "
                          "kept as isolated vertices, whose labels and embedding rows carry no information.")
            return X, graph, cells
        self._warn_if_adjacency(X, cells)
        X, graph = self._graph(X)
        if n_vertices is not None and n_vertices != graph.shape[0]:
            raise ValueError(f"n_vertices={n_vertices!r} does not match the {graph.shape[0]} vertices of X (its rows); "
                             "n_vertices is for a hypergraph given as cells alone, fit(None, cells=..., "
                             "n_vertices=...).")
        return X, graph, cells


class _CEOMixin(_GraphMixin):
    """Graph construction, operator fitting and the spectral fit preamble shared by the CEO estimators."""

    def _fit_operator(self, X, cells, n_vertices=None):
        X, graph, cells = self._graph_of(X, cells, n_vertices)
        fit_operator(self, graph, cells)
        self.n_vertices_ = graph.shape[0]
        return X

    def _fit_spectral(self, X, cells, n_eigenpairs, n_vertices=None):
        X, graph, cells = self._graph_of(X, cells, n_vertices)
        return (X,) + self._spectral_of_graph(graph, cells, n_eigenpairs)

    def _spectral_of_graph(self, graph, cells, n_eigenpairs, coupling=None):
        """Graph → complex → S_ε → the smallest eigenpairs of the normalised S_ε → features.

        ``n_eigenpairs(n)`` returns how many eigenpairs to compute for n vertices (raising ValueError for bad
        sizes before anything is built). Sets the shared fitted attributes, ``eigenvalues_`` and (HKS)
        ``hks_times_``; ``_fit_spectral`` returns ``(X, rng, Psi, features)`` with ``features`` the HKS or
        Φ = D^{-1/2}Ψ with canonical signs, and ``rng`` the generator already used by the eigensolver (for the
        label step); ``_spectral_of_graph`` the same without X, on a built graph, ``coupling`` overriding
        ``self.coupling``.
        """
        from sklearn.utils import check_random_state

        from ..utils._manifolds import canonical_signs
        from ._spectral import heat_kernel_signature, hks_times, normalised_eigenpairs

        n = graph.shape[0]
        m = n_eigenpairs(n)
        fit_operator(self, graph, cells, coupling)
        self.n_vertices_ = n
        rng = check_random_state(self.random_state)
        mu, Psi, d = normalised_eigenpairs(self, m, rng)
        self._degrees = d
        self.n_cg_iter_ = int(getattr(self.operator_, "n_iter_", 0))  # diagnostics + eigensolver products
        self.eigenvalues_ = mu
        if self.features == "hks":
            self.hks_times_ = hks_times(mu, self.hks_times)
            features = heat_kernel_signature(mu, Psi, self.hks_times_)
        else:
            features = canonical_signs(Psi / np.sqrt(d)[:, None])
        return rng, Psi, features

    def diagnostics(self):
        """Spectral checks of the fitted operator (n_0 <= 3000): the PSD bound and the sandwich f_ε(L_0) ⪯ S_ε ⪯ A.

        Returns
        -------
        diag : dict
            ``lambda_min_graded`` (of L⋆), ``lambda_min_S``, ``lambda_min_A_minus_S``, ``lambda_min_S_minus_f``,
            ``sandwich_gap`` (‖A − S_ε‖₂), ``sandwich_bound`` (γ_0²/β_1), ``degeneracy``, ``chain_defect``.
        """
        from sklearn_frontier.utils._compat import check_is_fitted

        check_is_fitted(self, "operator_")
        n0 = self.boundaries_[0].shape[0]
        if n0 > 3000:
            raise ValueError(f"diagnostics() is dense and needs n_0 <= 3000, got {n0}.")
        S = self.operator_ if isinstance(self.operator_, np.ndarray) else self.operator_.to_dense()
        L0 = (self.boundaries_[0] @ self.boundaries_[0].T).toarray()
        b1, g0 = self.betas_[0], float(np.nan_to_num(self.gammas_[0]))
        A = b1 * L0
        f = chain_operator(L0, b1, g0, self.eps)
        gammas = np.nan_to_num(self.gammas_)
        Lstar = graded_laplacian(self.boundaries_, self.betas_, gammas).toarray()
        lmin = lambda M: float(la.eigvalsh((M + M.T) / 2)[0])  # noqa: E731
        return {
            "lambda_min_graded": lmin(Lstar),
            "lambda_min_S": lmin(S),
            "lambda_min_A_minus_S": lmin(A - S),
            "lambda_min_S_minus_f": lmin(S - f),
            "sandwich_gap": float(la.eigvalsh((A - S + (A - S).T) / 2)[-1]),
            "sandwich_bound": float(g0 ** 2 / b1),
            "degeneracy": float(self.degeneracy_),
            "chain_defect": float(self.chain_defect_),
        }


class _VotePredictMixin:
    """Out-of-sample ``predict``: Shepard-weighted vote of the labels of the nearest training rows.

    Rows at distance 0 vote alone (so ``predict(X_train) == labels_`` without duplicates); with
    ``affinity="precomputed"`` X holds (n_new, n_train) affinities, which are the vote weights.
    """

    def _fit_predictor(self, X):
        from sklearn.neighbors import NearestNeighbors

        if self.affinity == "nearest_neighbors":
            self.nn_ = NearestNeighbors(n_neighbors=min(self.n_neighbors, X.shape[0])).fit(X)

    def predict(self, X):
        """Predict labels of new rows by a vote of the training labels over the nearest training rows.

        Parameters
        ----------
        X : array-like of shape (n_new, n_features)
            With ``affinity="precomputed"``: (n_new, n_train) non-negative affinities to the training rows.

        Returns
        -------
        labels : ndarray of shape (n_new,), int64
            Predicted cluster label of each new row.
        """
        import warnings

        import scipy.sparse as sp

        from sklearn_frontier.utils._compat import check_is_fitted

        check_is_fitted(self, "labels_")
        k = int(self.labels_.max()) + 1
        if self.affinity == "precomputed":
            X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
            W = sp.csr_matrix(X, dtype=np.float64)
            if W.nnz and np.any(W.data < 0):
                raise ValueError("precomputed affinities must be non-negative.")
            votes = np.asarray(W @ np.eye(k)[self.labels_])
            if np.any(votes.sum(axis=1) == 0):
                warnings.warn("some rows have no affinity to the training vertices; they get label 0.",
                              UserWarning, stacklevel=2)
            return votes.argmax(axis=1).astype(np.int64)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        D, I = self.nn_.kneighbors(X)
        zero = D <= 1e-12 * max(1.0, float(D.max()) if D.size else 1.0)
        W = np.where(zero, 1.0, 0.0)
        far = ~zero.any(axis=1)
        W[far] = 1.0 / D[far]
        votes = np.zeros((X.shape[0], k))
        np.add.at(votes, (np.repeat(np.arange(X.shape[0]), I.shape[1]), self.labels_[I].ravel()), W.ravel())
        return votes.argmax(axis=1).astype(np.int64)
