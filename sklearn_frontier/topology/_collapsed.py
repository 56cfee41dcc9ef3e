"""CollapsedLaplacian: spectral embedding / heat-kernel features of the collapsed operator S_ε."""

import warnings
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.neighbors import NearestNeighbors

from sklearn_frontier.utils._compat import Interval, _fit_context, check_is_fitted, validate_data

from ._base import _CEO_ATTRIBUTES_DOC, SPECTRAL_CONSTRAINTS, _CEOMixin
from ._spectral import heat_kernel_signature, shepard_extension


class CollapsedLaplacian(_CEOMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    __doc__ = """Spectral embedding (or heat-kernel signatures) of the collapsed effective operator S_ε of a complex.

    Same complex and operator as :class:`CEOSpectralClustering`; ``fit_transform`` returns the embedding and
    ``transform`` extends it to new rows.

    Read more in the :ref:`User Guide <user_guide_topology>`.

    Parameters
    ----------
    n_components : int, default=2
        Embedding dimension (features="eigvecs").
    affinity, n_neighbors, max_rank, incidence, coupling, coupling_bound, gammas, betas, eps, normalize, \
features, hks_times : see CEOSpectralClustering
        As in :class:`CEOSpectralClustering`.
    n_eigenvectors : int, default=None
        Eigenpairs behind the HKS, min(n, 32) when None.
    drop_first : bool, default=True
        Drop the trivial (constant-direction) eigenvector.
    solver, fast_path, rtol, eigen_tol, max_cells, random_state : see CEOSpectralClustering
        As in :class:`CEOSpectralClustering`.

    Attributes
    ----------
    embedding_ : ndarray of shape (n_samples, n_features_out)
        The embedding of the training rows: D^{-1/2}Ψ of the smallest eigenvectors Ψ with canonical signs
        (features="eigvecs", the trivial one dropped with ``drop_first``), or heat-kernel signatures
        (features="hks").
    eigenvalues_ : ndarray
        Smallest eigenvalues of the normalised operator, ascending.
    hks_times_ : ndarray
        Heat-kernel times of the signatures (features="hks" only).
""" + _CEO_ATTRIBUTES_DOC + """    normalization_ : str
        The normalisation applied, "diag", "degree" or "none" (``normalize`` resolved).
    n_eigen_iter_ : int
        LOBPCG iterations of the matrix-free eigensolver; 0 on the dense route.
    nn_ : NearestNeighbors
        Fitted on the training rows, for :meth:`transform` (nearest_neighbors affinity only).
    n_features_in_ : int
        Number of features seen during ``fit`` (n_samples with ``affinity="precomputed"``).
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during ``fit``. Defined only when X has feature names that are all
        strings.

    See Also
    --------
    CEOSpectralClustering : Spectral clustering with the same collapsed operator.
    sklearn.manifold.SpectralEmbedding : Spectral embedding of the graph Laplacian.

    Notes
    -----
    The embedding is computed as in :class:`CEOSpectralClustering` (smallest eigenpairs of the normalised S_ε).
    ``transform`` extends it to new rows by the inverse-distance-weighted mean over their ``n_neighbors``
    nearest training rows, which is exact on the training rows. Heat-kernel signatures
    h(v, t) = Σ_i exp(−t μ_i) ψ_{vi}² at log-spaced times t (:func:`heat_kernel_signature`) describe each vertex
    at several scales.

    References
    ----------
    .. [1] Krahn et al., "Collapsed Effective Operators for Higher-order Structures", ICML 2026.
    .. [2] Sun, Ovsjanikov, Guibas, "A concise and provably informative multi-scale signature based on heat
       diffusion", SGP 2009.

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> from sklearn_frontier.topology import CollapsedLaplacian
    >>> X, _ = make_blobs(40, random_state=0)
    >>> CollapsedLaplacian(n_components=2, n_neighbors=5).fit_transform(X).shape
    (40, 2)
    """

    _sparse_chain = True  # solver="auto": the chain fast path above 1000 vertices avoids the dense inverse

    _parameter_constraints = {
        **SPECTRAL_CONSTRAINTS,
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "n_eigenvectors": [Interval(Integral, 1, None, closed="left"), None],
        "drop_first": ["boolean"],
    }

    def __init__(self, n_components=2, *, affinity="nearest_neighbors", n_neighbors=10, max_rank=2,
                 incidence="signed", coupling=0.5, coupling_bound="graded", gammas=None, betas=None, eps=1e-3,
                 normalize=True, features="eigvecs", hks_times=16, n_eigenvectors=None, drop_first=True, solver="auto",
                 fast_path=True, rtol=1e-10, eigen_tol=1e-6, max_cells=2_000_000, random_state=None):
        self.n_components = n_components
        self.affinity = affinity
        self.n_neighbors = n_neighbors
        self.max_rank = max_rank
        self.incidence = incidence
        self.coupling = coupling
        self.coupling_bound = coupling_bound
        self.gammas = gammas
        self.betas = betas
        self.eps = eps
        self.normalize = normalize
        self.features = features
        self.hks_times = hks_times
        self.n_eigenvectors = n_eigenvectors
        self.drop_first = drop_first
        self.solver = solver
        self.fast_path = fast_path
        self.rtol = rtol
        self.eigen_tol = eigen_tol
        self.max_cells = max_cells
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, cells=None, n_vertices=None):
        """Fit the embedding; see :meth:`fit_transform`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples), or None
            Training rows, or the precomputed adjacency when ``affinity="precomputed"``, or None for a
            hypergraph given by ``cells`` alone.
        y : None
            Ignored.
        cells : sequence of sequences of int, default=None
            Hyperedges for :func:`hypergraph_complex`.
        n_vertices : int, default=None
            Number of vertices of a hypergraph given as ``cells`` alone (X None): vertices in no hyperedge are
            kept as isolated vertices (rows of every result). Default: the largest vertex index in ``cells`` + 1. With
            X given it must equal the number of vertices of X.

        Returns
        -------
        self : object
            The fitted transformer.
        """
        self._fit(X, cells, n_vertices)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y=None, cells=None, n_vertices=None):
        """Fit and return ``embedding_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples), or None
            Training rows, or the precomputed adjacency when ``affinity="precomputed"``, or None for a
            hypergraph given by ``cells`` alone.
        y : None
            Ignored.
        cells : sequence of sequences of int, default=None
            Hyperedges for :func:`hypergraph_complex`.
        n_vertices : int, default=None
            Number of vertices of a hypergraph given as ``cells`` alone (X None): vertices in no hyperedge are
            kept as isolated vertices (rows of every result). Default: the largest vertex index in ``cells`` + 1. With
            X given it must equal the number of vertices of X.

        Returns
        -------
        embedding : ndarray of shape (n_samples, n_features_out)
            The fitted embedding ``embedding_``.
        """
        return self._fit(X, cells, n_vertices).embedding_

    def _fit(self, X, cells, n_vertices=None):
        def n_eigenpairs(n):
            m = (self.n_eigenvectors or min(n, 32)) if self.features == "hks" else \
                self.n_components + int(self.drop_first)
            if m > n:
                raise ValueError(f"n_components={self.n_components} (+ drop_first) needs {m} eigenvectors but "
                                 f"there are only n_samples={n}.")
            return m

        X, _, Psi, emb = self._fit_spectral(X, cells, n_eigenpairs, n_vertices)
        n = self.n_vertices_
        if self.features != "hks" and self.drop_first:
            emb = emb[:, 1:]
        self._eigvecs = Psi
        self.embedding_ = np.ascontiguousarray(emb, dtype=np.float64)
        self._n_features_out = self.embedding_.shape[1]
        if self.affinity == "nearest_neighbors":
            self.nn_ = NearestNeighbors(n_neighbors=min(self.n_neighbors, n)).fit(X)
        return self

    def heat_kernel_signature(self, times=None):
        """Compute the heat-kernel signature of the fitted eigenpairs.

        Parameters
        ----------
        times : array-like of shape (T,), default=None
            Diffusion times; ``hks_times_`` (or ``hks_times``) when None.

        Returns
        -------
        hks : ndarray of shape (n_samples, T)
            The signature of each training vertex at each time.
        """
        check_is_fitted(self, "eigenvalues_")
        return heat_kernel_signature(self.eigenvalues_, self._eigvecs, self.hks_times if times is None else times)

    def transform(self, X):
        """Out-of-sample extension of the embedding.

        Parameters
        ----------
        X : array-like of shape (n_new, n_features)
            New rows; with ``affinity="precomputed"``, (n_new, n_train) affinities to the training vertices.

        Returns
        -------
        embedding : ndarray of shape (n_new, n_features_out)
            The extended embedding of the new rows.
        """
        check_is_fitted(self, "embedding_")
        if self.affinity == "precomputed":
            X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
            W = sp.csr_matrix(X, dtype=np.float64)
            if W.nnz and np.any(W.data < 0):
                raise ValueError("precomputed affinities must be non-negative.")
            s = np.asarray(W.sum(axis=1)).ravel()
            if np.any(s == 0):
                warnings.warn(f"{int((s == 0).sum())} rows have no affinity to the training vertices; they are "
                              "mapped to zeros.", UserWarning, stacklevel=2)
            s[s == 0] = 1.0
            return np.asarray(sp.diags(1.0 / s) @ W @ self.embedding_)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        D, I = self.nn_.kneighbors(X)
        return shepard_extension(D, I, self.embedding_)

    def score(self, X, y=None):
        """Negative local variance of the embedding around the rows of X, relative to its total variance.

        ``−mean_i Σ_j w_ij ‖e_j − T(x_i)‖² / mean_j ‖e_j − ē‖²`` over each row's Shepard neighbours j (weights
        w_ij): higher is smoother. A tuning criterion for unsupervised searches (not from the paper).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to score (affinities to the training vertices with ``affinity="precomputed"``).
        y : None
            Ignored.

        Returns
        -------
        score : float
            Negative relative local variance (higher is smoother).
        """
        check_is_fitted(self, "embedding_")
        if self.affinity == "precomputed":
            T = self.transform(X)
            return float(-np.mean((T - T.mean(axis=0)) ** 2))
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        D, I = self.nn_.kneighbors(X)
        T = shepard_extension(D, I, self.embedding_)
        zero = D <= 1e-12 * max(1.0, float(D.max()))
        W = np.where(zero, 1.0, 0.0)
        W[~zero.any(axis=1)] = 1.0 / D[~zero.any(axis=1)]
        W /= W.sum(axis=1, keepdims=True)
        local = np.einsum("ij,ij->i", W, ((self.embedding_[I] - T[:, None, :]) ** 2).sum(axis=2)).mean()
        total = ((self.embedding_ - self.embedding_.mean(axis=0)) ** 2).sum(axis=1).mean()
        return float(-local / total) if total > 0 else 0.0
