"""CEOPositionalEncoding: the first k eigenvectors of the collapsed operator S_ε as node features."""

import numpy as np

from ..utils._manifolds import canonical_signs
from ._base import _CEO_ATTRIBUTES_DOC
from ._collapsed import CollapsedLaplacian


def _first_max(values, rtol=1e-8):
    """Index of the first entry within ``rtol`` of the maximum (ties broken by the lowest index, robustly)."""
    top = float(values.max())
    return int(np.flatnonzero(values >= top - rtol * max(top, 1e-300))[0])


def _tolerant_signs(basis, rtol=1e-8):
    """:func:`canonical_signs` with ties in |value| up to ``rtol`` going to the lowest row index."""
    scale = np.abs(basis).max(axis=0, keepdims=True)
    scale[scale == 0] = 1.0
    snapped = np.round(basis / scale, int(-np.log10(rtol)))  # equal magnitudes become exactly equal
    ref = canonical_signs(snapped)
    signs = np.where(snapped == 0, 1.0, np.sign(ref) * np.sign(snapped))
    rows = np.argmax(np.abs(snapped), axis=0)
    return basis * signs[rows, np.arange(basis.shape[1])]


def canonical_eigenbasis(eigenvalues, eigenvectors, *, rtol=1e-6):
    """A basis-independent orthonormal basis of each (near-)degenerate eigenspace, then canonical signs.

    Eigenvalues closer than ``rtol · max(1, |μ|_max)`` to their neighbour form one eigenspace U. Its projector
    P = UUᵀ does not depend on the basis the solver returned: a greedy pivoted Gram–Schmidt on the rows of U
    (largest residual norm first, ties to the lowest row) picks rows by quantities of P alone, and the columns of
    P at those rows, orthonormalised in that order, are the new basis. Each column then gets the sign of
    :func:`~sklearn_frontier.utils._manifolds.canonical_signs` (largest-|value| entry positive, ties to the
    lowest row, up to a relative 1e-8).

    Parameters
    ----------
    eigenvalues : ndarray of shape (m,)
        Ascending eigenvalues.
    eigenvectors : ndarray of shape (n, m)
        Orthonormal eigenvectors (columns).
    rtol : float, default=1e-6
        Relative gap below which neighbouring eigenvalues are treated as one eigenspace.

    Returns
    -------
    basis : ndarray of shape (n, m)
        The canonical orthonormal basis.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.topology import canonical_eigenbasis
    >>> V = np.array([[0.6, 0.8], [-0.8, 0.6]])  # any rotation of the 2-d eigenspace of the identity
    >>> (canonical_eigenbasis([1.0, 1.0], V).round(12) + 0.0).tolist()  # + 0.0: no negative zeros
    [[1.0, 0.0], [0.0, 1.0]]
    """
    mu = np.asarray(eigenvalues, dtype=np.float64).ravel()
    U = np.asarray(eigenvectors, dtype=np.float64)
    tol = rtol * max(1.0, float(np.abs(mu).max()) if mu.size else 1.0)
    out = U.copy()
    start = 0
    for j in range(1, len(mu) + 1):
        if j == len(mu) or mu[j] - mu[j - 1] > tol:
            m = j - start
            if m > 1:
                block = U[:, start:j]
                R = block.copy()  # residual rows, r_i ∈ ℝ^m
                piv = []
                for _ in range(m):
                    i = _first_max(np.einsum("ij,ij->i", R, R))
                    piv.append(i)
                    q = R[i] / np.linalg.norm(R[i])
                    R -= np.outer(R @ q, q)
                Q, T = np.linalg.qr(block @ block[piv].T)  # columns of P = UUᵀ at the pivots, in order
                out[:, start:j] = Q * np.sign(np.where(np.diag(T) == 0, 1.0, np.diag(T)))
            start = j
    return _tolerant_signs(out)


class CEOPositionalEncoding(CollapsedLaplacian):
    __doc__ = """Positional encodings from the collapsed operator: its first k non-trivial eigenvectors, canonicalised.

    Node features for a downstream model that do not depend on the eigensolver's choice of basis or signs.
    ``fit_transform`` returns them for the fitted vertices; ``transform`` extends them to new rows like
    :class:`CollapsedLaplacian`.

    Read more in the :ref:`User Guide <user_guide_topology>`.

    Parameters
    ----------
    n_components : int, default=8
        Number k of eigenvectors (the trivial one excluded).
    affinity, n_neighbors, max_rank, incidence, coupling, coupling_bound, gammas, betas, eps, normalize : \
see CEOSpectralClustering
        As in :class:`CEOSpectralClustering`.
    solver, fast_path, rtol, eigen_tol, max_cells, random_state : see CEOSpectralClustering
        As in :class:`CEOSpectralClustering`.

    Attributes
    ----------
    embedding_ : ndarray of shape (n_samples, n_components)
        D^{-1/2}Ψ of the canonical eigenbasis Ψ.
    eigenvalues_ : ndarray of shape (n_components + 1,)
        Smallest eigenvalues of the normalised operator (the trivial one first).
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
    CollapsedLaplacian : The same eigenvectors without basis canonicalisation, or heat-kernel signatures.

    Notes
    -----
    The smallest eigenpairs of the normalised S_ε (as in :class:`CollapsedLaplacian`), the trivial one dropped;
    each (near-)degenerate eigenspace gets a basis-independent orthonormal basis and every column a canonical
    sign (largest-|value| entry positive), so the features are a function of the operator, not of the
    eigensolver. As node features they carry the same information as the eigenvectors of the graph + in-cell
    pairs Laplacian (``HypergraphSpectralClustering(laplacian="graph_plus_pairs")``'s operator): the rank-2
    cells add none (the comparison is on the benchmark page).

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> from sklearn_frontier.topology import CEOPositionalEncoding
    >>> X, _ = make_blobs(40, random_state=0)
    >>> pe = CEOPositionalEncoding(n_components=3, n_neighbors=5).fit_transform(X)
    >>> pe.shape, bool((pe[abs(pe).argmax(axis=0), range(3)] > 0).all())
    ((40, 3), True)
    """

    _parameter_constraints = {k: v for k, v in CollapsedLaplacian._parameter_constraints.items()
                              if k not in ("features", "hks_times", "n_eigenvectors", "drop_first")}

    def __init__(self, n_components=8, *, affinity="nearest_neighbors", n_neighbors=10, max_rank=2,
                 incidence="signed", coupling=0.5, coupling_bound="graded", gammas=None, betas=None, eps=1e-3,
                 normalize=True, solver="auto", fast_path=True, rtol=1e-10, eigen_tol=1e-6, max_cells=2_000_000,
                 random_state=None):
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
        self.solver = solver
        self.fast_path = fast_path
        self.rtol = rtol
        self.eigen_tol = eigen_tol
        self.max_cells = max_cells
        self.random_state = random_state

    # fixed choices of the parent's options (read by CollapsedLaplacian._fit)
    features = "eigvecs"
    hks_times = 16
    n_eigenvectors = None
    drop_first = True

    def _fit(self, X, cells, n_vertices=None):
        super()._fit(X, cells, n_vertices)
        Psi = canonical_eigenbasis(self.eigenvalues_[1:], self._eigvecs[:, 1:])
        self.embedding_ = np.ascontiguousarray(_tolerant_signs(Psi / np.sqrt(self._degrees)[:, None]))
        return self
