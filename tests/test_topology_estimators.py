"""CEO estimators: equivalences with sklearn, planted clusters, HKS, smoother, cg route, bad inputs."""

import warnings

import numpy as np
import pytest
import scipy.linalg as la
import scipy.sparse as sp
from sklearn.cluster import SpectralClustering
from sklearn.datasets import make_blobs
from sklearn.manifold import spectral_embedding
from sklearn.metrics import adjusted_rand_score as ari

from sklearn_frontier.datasets import make_hypergraph_sbm
from sklearn_frontier.topology import (
    CEOSmoother,
    CEOSpectralClustering,
    CollapsedLaplacian,
    HypergraphSpectralClustering,
    heat_kernel_signature,
)
from sklearn_frontier.topology._spectral import knn_adjacency


def _subspace_distance(U, V):
    Qu, _ = np.linalg.qr(U)
    Qv, _ = np.linalg.qr(V)
    return np.abs(Qu @ Qu.T - Qv @ Qv.T).max()


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(90, centers=3, cluster_std=0.5, random_state=0)
    return X, y, knn_adjacency(X, 8)


def test_coupling_zero_equals_sklearn_spectral_clustering(blobs):
    X, y, A = blobs
    ceo = CEOSpectralClustering(3, affinity="precomputed", coupling=0.0, random_state=0).fit(A)
    sk = SpectralClustering(3, affinity="precomputed", assign_labels="kmeans", random_state=0).fit(A.toarray())
    assert ari(ceo.labels_, sk.labels_) == 1.0 and ari(ceo.labels_, y) > 0.9
    emb = spectral_embedding(A, n_components=3, drop_first=False, eigen_solver="arpack", random_state=0)
    assert _subspace_distance(ceo.embedding_, emb) < 1e-8


def test_chain_lemma_at_estimator_level(blobs):
    X, y, A = blobs
    kw = dict(n_clusters=3, n_neighbors=8, random_state=0)
    r2 = CEOSpectralClustering(max_rank=2, **kw).fit(X)
    r1 = CEOSpectralClustering(max_rank=1, **kw).fit(X)
    assert r2.n_cells_[2] > 0 and r2.degeneracy_ == 0.0 and r2.fast_path_
    np.testing.assert_array_equal(r2.labels_, r1.labels_)
    np.testing.assert_array_equal(r2.embedding_, r1.embedding_)


def _planted_toy():
    n, blocks = 30, 3
    cells = [tuple(range(10 * b + i, 10 * b + i + 4)) for b in range(blocks) for i in range(7)]
    A = np.zeros((n, n))
    for u, v in [(9, 10), (8, 11), (19, 20), (18, 21)]:
        A[u, v] = A[v, u] = 1
    return A, cells, np.repeat(np.arange(3), 10)


@pytest.mark.parametrize("est", [
    CEOSpectralClustering(3, affinity="precomputed", random_state=0),
    CEOSpectralClustering(3, affinity="precomputed", max_rank=1, random_state=0),
    CEOSpectralClustering(3, affinity="precomputed", coupling=1.0, random_state=0),
    HypergraphSpectralClustering(3, laplacian="graph_plus_pairs", affinity="precomputed", random_state=0),
    HypergraphSpectralClustering(3, laplacian="clique_expansion", affinity="precomputed", random_state=0),
    HypergraphSpectralClustering(3, laplacian="zhou", affinity="precomputed", random_state=0),
], ids=["ceo", "ceo_rank1", "ceo_coupling1", "graph_plus_pairs", "clique_expansion", "zhou"])
def test_planted_toy_cells_recover_blocks(est):
    A, cells, y = _planted_toy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        est.fit(A, cells=cells)
    assert ari(y, est.labels_) == 1.0


def test_planted_toy_graph_only_fails():
    A, cells, y = _planted_toy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        g = HypergraphSpectralClustering(3, laplacian="graph", affinity="precomputed", random_state=0).fit(A)
        ceo = CEOSpectralClustering(3, affinity="precomputed", random_state=0).fit(A)  # no cells: graph only
    assert ari(y, g.labels_) < 0.5 and ari(y, ceo.labels_) < 0.5


def test_hypergraph_sbm_ceo_beats_graph_spectral_clustering():
    A, cells, y = make_hypergraph_sbm(random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ceo = CEOSpectralClustering(3, affinity="precomputed", coupling=0.5, random_state=0).fit(A, cells=cells)
        default = CEOSpectralClustering(3, affinity="precomputed", random_state=0).fit(A, cells=cells)
        sk = SpectralClustering(3, affinity="precomputed", random_state=0).fit(A.toarray())
    assert min(ari(y, ceo.labels_), ari(y, default.labels_)) > 0.6 > 0.1 > ari(y, sk.labels_)
    assert ceo.route_ == "cellwise" and 0 < ceo.degeneracy_ < 1 and ceo.chain_defect_ > 0


def test_graph_plus_pairs_equals_ceo_coupling_zero():
    A, cells, y = make_hypergraph_sbm(random_state=1)
    ceo = CEOSpectralClustering(3, affinity="precomputed", coupling=0.0, random_state=0).fit(A, cells=cells)
    gpp = HypergraphSpectralClustering(3, affinity="precomputed", random_state=0).fit(A, cells=cells)
    np.testing.assert_allclose(ceo.eigenvalues_, gpp.eigenvalues_, atol=1e-10)
    assert _subspace_distance(ceo.embedding_, gpp.embedding_) < 1e-8
    assert ari(ceo.labels_, gpp.labels_) == 1.0


def test_zhou_matches_dense_formula():
    A, cells, _ = make_hypergraph_sbm(60, n_hyperedges=20, random_state=2)
    est = HypergraphSpectralClustering(3, laplacian="zhou", affinity="precomputed", random_state=0).fit(A, cells=cells)
    Ad = A.toarray()
    edges = [(i, j) for i in range(60) for j in range(i + 1, 60) if Ad[i, j]]
    hyper = edges + [tuple(c) for c in cells]
    H = np.zeros((60, len(hyper)))
    for e, members in enumerate(hyper):
        H[list(members), e] = 1
    dv = H.sum(axis=1)
    dv[dv == 0] = 1
    L = np.eye(60) - np.diag(dv ** -0.5) @ H @ np.diag(1 / H.sum(axis=0)) @ H.T @ np.diag(dv ** -0.5)
    np.testing.assert_allclose(est.eigenvalues_, np.maximum(la.eigvalsh(L)[:3], 0), atol=1e-10)


def test_hks_equals_heat_kernel_diagonal_and_is_constant_on_symmetric_graphs():
    rng = np.random.default_rng(0)
    W = np.triu(rng.random((12, 12)) < 0.4, 1).astype(float)
    W = W + W.T
    M = np.diag(W.sum(1)) - W
    mu, psi = la.eigh(M)
    t = np.array([0.3, 1.0, 4.0])
    h = heat_kernel_signature(mu, psi, t)
    for j, tj in enumerate(t):
        d = np.diag(la.expm(-tj * M))
        np.testing.assert_allclose(h[:, j], 12 * d / d.sum(), atol=1e-12)
    for A in (np.ones((6, 6)) - np.eye(6), np.roll(np.eye(9), 1, axis=1) + np.roll(np.eye(9), -1, axis=1)):
        mu, psi = la.eigh(np.diag(A.sum(1)) - A)
        np.testing.assert_allclose(heat_kernel_signature(mu, psi, 8), 1.0, atol=1e-12)


def test_collapsed_laplacian_transform_and_hks(blobs):
    X, y, A = blobs
    est = CollapsedLaplacian(n_components=2, n_neighbors=8, random_state=0)
    emb = est.fit_transform(X)
    np.testing.assert_allclose(est.transform(X), emb, atol=1e-12)
    assert emb.shape == (90, 2) and est.get_feature_names_out().tolist() == ["collapsedlaplacian0",
                                                                            "collapsedlaplacian1"]
    hks = CollapsedLaplacian(features="hks", hks_times=5, n_neighbors=8).fit_transform(X)
    assert hks.shape == (90, 5) and np.allclose(hks.mean(axis=0), 1.0)
    pre = CollapsedLaplacian(affinity="precomputed").fit(A)
    np.testing.assert_allclose(pre.transform(A.toarray()), (A / A.sum(1)) @ pre.embedding_)
    diag = est.diagnostics()
    assert diag["lambda_min_S_minus_f"] >= -1e-10 and diag["sandwich_gap"] <= diag["sandwich_bound"] + 1e-10


def test_cg_route_matches_dense_route():
    A, cells, y = make_hypergraph_sbm(90, random_state=3, n_hyperedges=40)
    kw = dict(n_clusters=3, affinity="precomputed", normalize="degree", random_state=0, eigen_tol=1e-8)
    dense = CEOSpectralClustering(solver="dense", **kw).fit(A, cells=cells)
    cg = CEOSpectralClustering(solver="cg", rtol=1e-12, **kw).fit(A, cells=cells)
    full = CEOSpectralClustering(solver="cg", rtol=1e-12, fast_path=False, **kw).fit(A, cells=cells)
    assert cg.route_ == "cg-cellwise" and full.route_ == "cg" and dense.route_ == "cellwise"
    for other in (cg, full):  # structured n_0-system and Algorithm 1 on the full C-system
        assert other.n_cg_iter_ > 0 and np.isnan(other.sandwich_gap_)
        np.testing.assert_allclose(other.eigenvalues_, dense.eigenvalues_, atol=1e-6)
        assert _subspace_distance(other.embedding_, dense.embedding_) < 1e-4
        assert abs(other.degeneracy_ - dense.degeneracy_) < 1e-2 * max(dense.degeneracy_, 1e-3)
    assert cg.n_cg_iter_ < full.n_cg_iter_  # no cycle-space ε-modes in the structured system


def test_smoother():
    rng = np.random.RandomState(0)
    X = rng.rand(50, 2)
    Y = np.sin(4 * X[:, 0]) + 0.3 * rng.randn(50)
    ident = CEOSmoother(tau=0.0, n_neighbors=6).fit(X)
    np.testing.assert_allclose(ident.smooth(Y), Y, atol=1e-12)
    dense = CEOSmoother(tau=2.0, n_neighbors=6, solver="dense").fit(X)
    cg = CEOSmoother(tau=2.0, n_neighbors=6, solver="cg", rtol=1e-12).fit(X)
    np.testing.assert_allclose(cg.smooth(Y), dense.smooth(Y), rtol=0, atol=1e-7)
    np.testing.assert_allclose(dense.smooth(np.full(50, 3.0)), 3.0, atol=1e-9)
    assert np.var(dense.smooth(Y)) < np.var(Y)
    np.testing.assert_allclose(dense.transform(X), dense.smooth(X))
    with pytest.raises(ValueError, match="n_vertices_"):
        dense.smooth(Y[:10])
    assert np.isfinite(dense.score(X))


@pytest.mark.parametrize("Est", [CEOSpectralClustering, CollapsedLaplacian, CEOSmoother])
def test_bad_inputs(Est):
    X = np.random.RandomState(0).rand(20, 3)
    kw = {"n_clusters": 2} if Est is CEOSpectralClustering else {}
    with pytest.raises(ValueError, match="1 sample"):
        Est().fit(X[:1])
    with pytest.raises(TypeError):
        Est().fit(sp.csr_matrix(X))
    with pytest.raises(ValueError):
        Est(affinity="precomputed").fit(np.ones((4, 5)))
    with pytest.raises(ValueError, match="negative"):
        Est(affinity="precomputed").fit(-np.ones((4, 4)))
    with pytest.warns(UserWarning, match="asymmetric"):
        Est(affinity="precomputed", **kw).fit(
            np.triu(np.ones((6, 6)), 1))
    with pytest.warns(UserWarning, match="binary"):
        Est(affinity="precomputed", **kw).fit(
            2 * (np.ones((6, 6)) - np.eye(6)))
    with pytest.raises(ValueError, match="cell 0"):
        Est(affinity="precomputed", **kw).fit(np.ones((6, 6)), cells=[[0, 1]])
    with pytest.raises(ValueError, match="length"):
        Est(gammas=[0.1, 0.1, 0.1]).fit(X)
    with pytest.raises(ValueError, match="PSD bound"):
        Est(gammas=[100.0, 0.0]).fit(X)
    with pytest.raises(ValueError):
        Est(coupling=2.0).fit(X)


def test_clusterer_specific_bad_inputs_and_edge_cases():
    X = np.random.RandomState(0).rand(20, 3)
    with pytest.raises(ValueError, match="n_clusters"):
        CEOSpectralClustering(n_clusters=25).fit(X)
    with pytest.raises(ValueError, match="kmeans"):
        CEOSpectralClustering(features="hks", assign_labels="discretize").fit(X)
    with pytest.raises(ValueError, match="n_components"):
        CollapsedLaplacian(n_components=20).fit(X)
    assert set(CEOSpectralClustering(n_clusters=1).fit(X).labels_) == {0}
    assert CollapsedLaplacian(n_components=1).fit_transform(X).shape == (20, 1)
    for assign in ("discretize", "cluster_qr"):
        labels = CEOSpectralClustering(3, assign_labels=assign, random_state=0).fit(X).labels_
        assert labels.dtype == np.int64 and labels.min() == 0
    with pytest.warns(UserWarning, match="no edges"):
        CEOSpectralClustering(2, affinity="precomputed").fit(np.zeros((5, 5)))
    est = CEOSpectralClustering(3, n_neighbors=50).fit(X)  # clipped to n − 1
    assert est.affinity_matrix_.sum(axis=1).min() == 19


def test_sparse_chain_route_equals_dense_route():
    # solver="auto", n > 1000, signed complex: S_ε matrix-free with the exact diagonal (selected inversion)
    X, y = make_blobs(1100, centers=4, n_features=3, cluster_std=1.0, random_state=0)
    kw = dict(n_clusters=4, n_neighbors=8, random_state=0)
    fast = CEOSpectralClustering(**kw).fit(X)
    dense = CEOSpectralClustering(solver="dense", **kw).fit(X)
    assert fast.route_ == "chain-selinv" and dense.route_ == "chain" and fast.normalization_ == "diag"
    np.testing.assert_allclose(fast.operator_.diagonal_, np.diag(dense.operator_), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fast.eigenvalues_, dense.eigenvalues_, rtol=0, atol=1e-8)
    assert _subspace_distance(fast.embedding_, dense.embedding_) < 1e-4
    assert ari(fast.labels_, dense.labels_) == 1.0
    assert fast.sandwich_gap_ == pytest.approx(dense.sandwich_gap_, rel=1e-12)
    np.testing.assert_allclose(fast.operator_.to_dense(), dense.operator_, rtol=0, atol=1e-9)
