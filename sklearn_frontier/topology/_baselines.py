"""Graph and hypergraph spectral-clustering baselines shipped beside CEO."""

from numbers import Integral

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from scipy.sparse.linalg import eigsh
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils import check_random_state

from sklearn_frontier.utils._compat import Interval, StrOptions, _fit_context

from ..utils._manifolds import canonical_signs
from ._base import _GraphMixin, _VotePredictMixin
from ._complexes import _clean_cells
from ._spectral import assign_labels


def hypergraph_laplacian(adjacency, cells, laplacian):
    """(L_sym, d): the normalised Laplacian of one baseline and the degrees D that normalise it."""
    A = sp.csr_matrix(adjacency, dtype=np.float64)
    n = A.shape[0]
    clean = _clean_cells(cells, n) if cells is not None and len(cells) else []
    if laplacian in ("graph_plus_pairs", "clique_expansion") and clean:
        rows, cols, vals = [], [], []
        for c in clean:
            idx = np.asarray(c)
            r, s = np.meshgrid(idx, idx, indexing="ij")
            off = r != s
            rows.append(r[off])
            cols.append(s[off])
            vals.append(np.full(int(off.sum()), 1.0 / (len(c) - 1)))
        K = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n))
        W = ((A + K) > 0).astype(np.float64) if laplacian == "graph_plus_pairs" else A + K
    elif laplacian == "zhou":
        Au = sp.triu(A, k=1).tocoo()
        m = Au.nnz
        hr = [np.column_stack([Au.row, Au.col]).ravel()]
        hc = [np.repeat(np.arange(m), 2)]
        sizes = [np.full(m, 2.0)]
        for e, c in enumerate(clean):
            hr.append(np.asarray(c))
            hc.append(np.full(len(c), m + e))
            sizes.append(np.array([float(len(c))]))
        H = sp.csr_matrix((np.ones(sum(len(h) for h in hr)), (np.concatenate(hr), np.concatenate(hc))),
                          shape=(n, m + len(clean)))
        de = np.concatenate(sizes)
        W = (H @ sp.diags(1.0 / de) @ H.T).tocsr()
        d = np.asarray(H.sum(axis=1)).ravel()
        d[d == 0] = 1.0
        isq = 1.0 / np.sqrt(d)
        L = sp.eye(n) - sp.diags(isq) @ W @ sp.diags(isq)
        return L.tocsr(), d
    else:
        W = A
    W = sp.csr_matrix(W)
    d = np.asarray(W.sum(axis=1)).ravel()
    d[d == 0] = 1.0
    isq = 1.0 / np.sqrt(d)
    L = sp.eye(n) - sp.diags(isq) @ W @ sp.diags(isq)
    return L.tocsr(), d


class HypergraphSpectralClustering(_GraphMixin, _VotePredictMixin, ClusterMixin, BaseEstimator):
    """Normalised spectral clustering on a graph or hypergraph Laplacian (baselines for CEO).

    The strongest baseline of :class:`CEOSpectralClustering` on hypergraphs is ``laplacian="graph_plus_pairs"``:
    the graph with every pair of vertices that share a cell joined.

    Read more in the :ref:`User Guide <user_guide_topology>`.

    Parameters
    ----------
    n_clusters : int, default=8
        Number of clusters.
    laplacian : {"graph", "graph_plus_pairs", "clique_expansion", "zhou"}, default="graph_plus_pairs"
        ``"graph"``: pairwise edges only; ``"graph_plus_pairs"``: 0/1 union of edges and in-cell pairs (rank 1 of
        :func:`hypergraph_complex`); ``"clique_expansion"``: W = A + Σ_e K_e/(|e| − 1); ``"zhou"``: Zhou, Huang &
        Schölkopf (2006), I − D_v^{-1/2} H D_e^{-1} Hᵀ D_v^{-1/2}, edges as size-2 hyperedges, unit weights.
    affinity : {"nearest_neighbors", "precomputed"}, default="nearest_neighbors"
        ``"precomputed"``: X is the (n, n) adjacency (its pattern is used).
    n_neighbors : int, default=10
        Neighbours of the kNN graph (nearest_neighbors affinity).
    assign_labels : {"kmeans", "discretize", "cluster_qr"}, default="kmeans"
        How the embedding is turned into labels.
    n_init : int, default=10
        Number of k-means restarts (assign_labels="kmeans").
    random_state : int, RandomState instance or None, default=None
        Seed of the eigensolver start and of k-means.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,), int64
        Cluster label of each training row.
    embedding_ : ndarray of shape (n_samples, n_clusters)
        D^{-1/2}Ψ of the n_clusters smallest eigenvectors Ψ.
    eigenvalues_ : ndarray of shape (n_clusters,)
        Smallest eigenvalues of the normalised Laplacian, ascending.
    affinity_matrix_ : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        The 0/1 graph of the vertices: the union-symmetrised kNN graph of X, or the pattern of the
        precomputed adjacency.
    nn_ : NearestNeighbors
        Training rows, for :meth:`predict` (nearest_neighbors affinity only).
    n_features_in_ : int
        Number of features seen during ``fit`` (n_samples with ``affinity="precomputed"``).
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during ``fit``. Defined only when X has feature names that are all
        strings.

    See Also
    --------
    CEOSpectralClustering : Spectral clustering on the collapsed effective operator.

    Notes
    -----
    The ``n_clusters`` smallest eigenpairs of the chosen normalised Laplacian are computed densely up to 3000
    vertices, by Lanczos on ``2 I - L`` above; the embedding rows are then clustered as in
    :class:`sklearn.cluster.SpectralClustering`.

    References
    ----------
    .. [1] Zhou, Huang, Schölkopf, "Learning with hypergraphs: clustering, classification, and embedding",
       NeurIPS 2006.

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> from sklearn_frontier.topology import HypergraphSpectralClustering
    >>> X, _ = make_blobs(60, centers=3, random_state=0)
    >>> HypergraphSpectralClustering(3, n_neighbors=5, random_state=0).fit(X).labels_.shape
    (60,)
    """

    _parameter_constraints = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "laplacian": [StrOptions({"graph", "graph_plus_pairs", "clique_expansion", "zhou"})],
        "affinity": [StrOptions({"nearest_neighbors", "precomputed"})],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "assign_labels": [StrOptions({"kmeans", "discretize", "cluster_qr"})],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_clusters=8, *, laplacian="graph_plus_pairs", affinity="nearest_neighbors", n_neighbors=10,
                 assign_labels="kmeans", n_init=10, random_state=None):
        self.n_clusters = n_clusters
        self.laplacian = laplacian
        self.affinity = affinity
        self.n_neighbors = n_neighbors
        self.assign_labels = assign_labels
        self.n_init = n_init
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, cells=None, n_vertices=None):
        """Fit the clustering.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples), or None
            Data, or the adjacency with ``affinity="precomputed"``, or None for a hypergraph given by ``cells``
            alone (its 2-vertex hyperedges are the graph, the larger ones the cells), as in
            :class:`CEOSpectralClustering`.
        y : None
            Ignored.
        cells : sequence of sequences of int, default=None
            Hyperedges, each >= 3 vertex indices (any size >= 2 when X is None).
        n_vertices : int, default=None
            Number of vertices of a hypergraph given as ``cells`` alone (X None): vertices in no hyperedge are
            kept as isolated vertices (rows of every result). Default: the largest vertex index in ``cells`` + 1. With
            X given it must equal the number of vertices of X.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        X, graph, cells = self._graph_of(X, cells, n_vertices)
        n = graph.shape[0]
        if self.n_clusters > n:
            raise ValueError(f"n_clusters={self.n_clusters} must be <= n_samples={n}.")
        self.affinity_matrix_ = graph
        L, d = hypergraph_laplacian(graph, cells, self.laplacian)
        m = self.n_clusters
        if n <= 3000:
            mu, Psi = la.eigh(L.toarray(), subset_by_index=[0, m - 1])
        else:
            v0 = check_random_state(self.random_state).uniform(-1, 1, n)
            mu, Psi = eigsh(2 * sp.eye(n) - L, k=m, which="LA", v0=v0, tol=1e-8)
            mu, Psi = 2 - mu[::-1], Psi[:, ::-1]
        self.eigenvalues_ = np.maximum(mu, 0.0)
        self.embedding_ = canonical_signs(Psi / np.sqrt(d)[:, None])
        rng = check_random_state(self.random_state)
        self.labels_ = assign_labels(self.embedding_, m, self.assign_labels, self.n_init, rng)
        self._fit_predictor(X)
        return self
