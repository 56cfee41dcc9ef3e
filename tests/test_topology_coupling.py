"""The clustering default on hard hypergraphs: the coupling is chosen from the data (modularity), so the default
is never worse than the plain graph-plus-pairs Laplacian (coupling 0) beyond noise, where a fixed 0.5 was."""

import warnings

import numpy as np
import pytest
from sklearn.cluster import SpectralClustering
from sklearn.metrics import adjusted_rand_score

from sklearn_frontier import CEOSpectralClustering as TopLevelCEO
from sklearn_frontier.datasets import make_hypergraph_sbm
from sklearn_frontier.topology import CEOSpectralClustering, HypergraphSpectralClustering

# planted hypergraph, half the hyperedges random, no pairwise edges: 300 vertices, 3 blocks, sizes 3-6
HARD = dict(n_samples=300, hyperedge_sizes=(3, 6), p_hyperedge_in=0.5, p_in=0.0, p_out=0.0, n_hyperedges=225)
SEEDS = range(20)


def _paired_aris(coupling):
    """ARI of CEO at ``coupling`` and at 0 on the same seeds (the user's loop)."""
    ours, zero = [], []
    for seed in SEEDS:
        adjacency, cells, blocks = make_hypergraph_sbm(random_state=seed, **HARD)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # isolated vertices: the graph is not connected
            kw = {} if coupling is None else {"coupling": coupling}
            est = CEOSpectralClustering(3, affinity="precomputed", random_state=seed, **kw).fit(adjacency, cells=cells)
            base = CEOSpectralClustering(3, affinity="precomputed", coupling=0.0, random_state=seed).fit(
                adjacency, cells=cells)
        ours.append(adjusted_rand_score(blocks, est.labels_))
        zero.append(adjusted_rand_score(blocks, base.labels_))
    return np.array(ours), np.array(zero)


def test_default_is_not_worse_than_coupling_zero_on_hard_hypergraphs():
    ours, zero = _paired_aris(None)
    d = ours - zero
    assert d.mean() >= -2 * d.std(ddof=1) / np.sqrt(len(d))


def test_a_fixed_half_coupling_is_worse_there():
    """The neighbour that motivated the default: coupling=0.5 loses to coupling=0 beyond noise on these seeds."""
    ours, zero = _paired_aris(0.5)
    d = ours - zero
    assert d.mean() < -2 * d.std(ddof=1) / np.sqrt(len(d))


def test_auto_keeps_the_fit_of_the_coupling_it_chose():
    adjacency, cells, blocks = make_hypergraph_sbm(n_samples=120, random_state=3)
    auto = TopLevelCEO(3, affinity="precomputed", random_state=0).fit(adjacency, cells=cells)
    assert auto.coupling == "auto" and auto.coupling_ in (0.0, 0.25, 0.5)
    assert auto.coupling_scores_.shape == (3,)
    best = int(np.argmax(np.round(auto.coupling_scores_, 12)))  # first maximum: ties go to the smaller coupling
    assert auto.coupling_ == (0.0, 0.25, 0.5)[best]
    fixed = CEOSpectralClustering(3, affinity="precomputed", coupling=auto.coupling_, random_state=0).fit(
        adjacency, cells=cells)
    np.testing.assert_array_equal(auto.labels_, fixed.labels_)
    np.testing.assert_array_equal(auto.embedding_, fixed.embedding_)
    np.testing.assert_array_equal(auto.gammas_, fixed.gammas_)
    np.testing.assert_array_equal(auto.predict(adjacency.toarray()), fixed.predict(adjacency.toarray()))
    # the reported score is the modularity of the kept partition on the rank-1 graph (edges ∪ in-cell pairs)
    networkx = pytest.importorskip("networkx")
    B1 = abs(auto.boundaries_[0])
    W = (B1 @ B1.T).tolil()
    W.setdiag(0)
    G = networkx.from_scipy_sparse_array(W.tocsr())
    parts = [set(np.flatnonzero(auto.labels_ == k).tolist()) for k in range(3)]
    assert auto.coupling_scores_[best] == pytest.approx(networkx.community.modularity(G, parts), abs=1e-12)


def test_auto_on_point_clouds_and_identical_partitions_keep_zero():
    """Well-separated blobs: every candidate gives the same partition, so auto reports coupling 0 and equals
    scikit-learn's SpectralClustering on the same 0/1 kNN graph."""
    from sklearn.datasets import make_blobs

    from sklearn_frontier.topology._spectral import knn_adjacency

    X, y = make_blobs(90, centers=3, cluster_std=0.5, random_state=0)
    auto = CEOSpectralClustering(3, n_neighbors=8, random_state=0).fit(X)
    assert auto.coupling_ == 0.0 and np.ptp(auto.coupling_scores_) == 0.0
    sk = SpectralClustering(3, affinity="precomputed", random_state=0).fit(knn_adjacency(X, 8).toarray())
    assert adjusted_rand_score(sk.labels_, auto.labels_) == 1.0


def test_auto_with_explicit_gammas_fits_once_and_in_a_pipeline_and_grid_search():
    from sklearn.model_selection import GridSearchCV, KFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    adjacency, cells, blocks = make_hypergraph_sbm(n_samples=90, random_state=1)
    est = CEOSpectralClustering(3, affinity="precomputed", gammas=[0.01, 0.0], random_state=0).fit(
        adjacency, cells=cells)
    assert np.isnan(est.coupling_) and est.coupling_scores_.shape == (1,)
    rng = np.random.default_rng(0)
    X = np.repeat(np.eye(3) * 8, 30, axis=0) + rng.normal(size=(90, 3))
    pipe = make_pipeline(StandardScaler(), CEOSpectralClustering(3, n_neighbors=8, random_state=0))
    assert adjusted_rand_score(np.repeat(np.arange(3), 30), pipe.fit_predict(X)) == 1.0

    def ari(estimator, X, y):
        return adjusted_rand_score(y, estimator.fit_predict(X))

    grid = GridSearchCV(CEOSpectralClustering(3, n_neighbors=8, random_state=0),
                        {"coupling": ["auto", 0.0, 0.5]}, scoring=ari,
                        cv=KFold(3, shuffle=True, random_state=0)).fit(X, np.repeat(np.arange(3), 30))
    assert grid.best_score_ > 0.9 and np.isfinite(grid.cv_results_["mean_test_score"]).all()
    with pytest.raises(ValueError, match="coupling"):
        CEOSpectralClustering(coupling="best").fit(X)


def test_baseline_equals_coupling_zero_on_the_hard_regime():
    """coupling=0 is graph-plus-pairs, the comparison the default is held to."""
    adjacency, cells, blocks = make_hypergraph_sbm(random_state=0, **HARD)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        zero = CEOSpectralClustering(3, affinity="precomputed", coupling=0.0, random_state=0).fit(adjacency,
                                                                                                  cells=cells)
        gpp = HypergraphSpectralClustering(3, affinity="precomputed", random_state=0).fit(adjacency, cells=cells)
    np.testing.assert_array_equal(zero.labels_, gpp.labels_)
