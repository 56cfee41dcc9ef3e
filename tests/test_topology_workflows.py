"""CEO as users run it: an adjacency given with cells but without affinity="precomputed" is flagged."""

import warnings

import numpy as np
import pytest

from sklearn_frontier.datasets import make_hypergraph_sbm
from sklearn_frontier.topology import CEOSpectralClustering


def test_dense_adjacency_with_cells_but_feature_affinity_warns():
    adjacency, cells, labels = make_hypergraph_sbm(n_samples=60, random_state=0)[:3]
    dense = adjacency.toarray()
    with pytest.warns(UserWarning, match="affinity='precomputed'") as record:
        CEOSpectralClustering(n_clusters=3, random_state=0).fit(dense, cells=cells)
    assert record[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        CEOSpectralClustering(n_clusters=3, affinity="precomputed", random_state=0).fit(dense, cells=cells)
        X = np.random.default_rng(0).normal(size=(60, 4))  # genuine features: no warning
        CEOSpectralClustering(n_clusters=3, random_state=0).fit(X, cells=cells)


def test_smoother_tunes_the_smoothing_of_the_users_signal():
    """The graph comes from the coordinates, the signal from y: the grid search tunes the signal's smoothing."""
    from sklearn.model_selection import GridSearchCV, KFold

    from sklearn_frontier.topology import CEOSmoother

    rng = np.random.default_rng(0)
    X = rng.uniform(size=(400, 2))
    truth = np.sin(2 * np.pi * X[:, 0])  # smooth along the graph
    y = truth + rng.normal(scale=1.0, size=400)
    grid = {"tau": [0.1, 1.0, 10.0, 100.0, 1000.0]}
    on_signal = GridSearchCV(CEOSmoother(n_neighbors=8), grid, cv=KFold(2, shuffle=True, random_state=0)).fit(X, y)
    on_coordinates = GridSearchCV(CEOSmoother(n_neighbors=8), grid, cv=KFold(2, shuffle=True, random_state=0)).fit(X)
    assert on_signal.best_params_["tau"] != on_coordinates.best_params_["tau"]
    smoother = CEOSmoother(n_neighbors=8, tau=on_signal.best_params_["tau"]).fit(X)
    err_best = np.mean((smoother.smooth(y) - truth) ** 2)
    err_coord = np.mean((smoother.set_params(tau=on_coordinates.best_params_["tau"]).fit(X).smooth(y) - truth) ** 2)
    assert err_best < err_coord  # the signal's choice denoises the signal better


def test_a_hypergraph_given_as_its_hyperedges_alone():
    """``fit(None, cells=hyperedges)``: 2-vertex hyperedges are the graph, larger ones the cells; the result is the
    fit on the adjacency and cells built by hand."""
    import scipy.sparse as sp

    adjacency, cells, labels = make_hypergraph_sbm(n_samples=60, random_state=0)[:3]
    rows, cols = sp.triu(adjacency, k=1).nonzero()
    hyperedges = [tuple(e) for e in zip(rows.tolist(), cols.tolist())] + [tuple(c) for c in cells]
    by_hand = CEOSpectralClustering(n_clusters=3, affinity="precomputed", random_state=0).fit(adjacency, cells=cells)
    alone = CEOSpectralClustering(n_clusters=3, random_state=0).fit(None, cells=hyperedges)
    np.testing.assert_array_equal(alone.labels_, by_hand.labels_)
    with pytest.raises(ValueError, match="hypergraph as its list of hyperedges"):
        CEOSpectralClustering(n_clusters=3).fit(None)


# A hypergraph as its list of hyperedges, for the baselines too; vertices in no hyperedge are never dropped.
_HYPEREDGES = [(0, 1, 2), (1, 2, 3), (0, 3), (3, 4), (5, 6, 7), (6, 7, 8), (5, 8), (4, 5)]


def test_hypergraph_baseline_accepts_hyperedges_alone_as_the_ceo_estimators_do():
    import scipy.sparse as sp

    from sklearn_frontier.topology import HypergraphSpectralClustering

    adjacency, cells, labels = make_hypergraph_sbm(n_samples=60, random_state=0)[:3]
    rows, cols = sp.triu(adjacency, k=1).nonzero()
    hyperedges = [tuple(e) for e in zip(rows.tolist(), cols.tolist())] + [tuple(c) for c in cells]
    for laplacian in ("graph", "graph_plus_pairs", "clique_expansion", "zhou"):
        by_hand = HypergraphSpectralClustering(3, laplacian=laplacian, affinity="precomputed",
                                               random_state=0).fit(adjacency, cells=cells)
        alone = HypergraphSpectralClustering(3, laplacian=laplacian, random_state=0).fit(None, cells=hyperedges)
        np.testing.assert_array_equal(alone.labels_, by_hand.labels_)
    # the same operator as CEO at coupling 0 on the same hyperedges
    ceo = CEOSpectralClustering(3, coupling=0.0, random_state=0).fit(None, cells=hyperedges)
    gpp = HypergraphSpectralClustering(3, random_state=0).fit(None, cells=hyperedges)
    np.testing.assert_array_equal(gpp.labels_, ceo.labels_)
    with pytest.raises(ValueError, match="hypergraph as its list of hyperedges"):
        HypergraphSpectralClustering(3).fit(None)


@pytest.mark.parametrize("name", ["HypergraphSpectralClustering", "CEOSpectralClustering"])
def test_vertices_in_no_hyperedge_keep_their_labels(name):
    """Vertices 9 and 10 are in no hyperedge: ``n_vertices`` keeps them (with a warning), never drops them."""
    import sklearn_frontier.topology as topology

    est = getattr(topology, name)(2, random_state=0)
    with pytest.warns(UserWarning, match="2 of the 11 vertices are in no hyperedge"):
        est.fit(None, cells=_HYPEREDGES, n_vertices=11)
    assert est.labels_.shape == (11,)
    assert len(set(est.labels_[:4].tolist())) == 1 and len(set(est.labels_[5:9].tolist())) == 1
    assert est.labels_[0] != est.labels_[6]
    # an isolated vertex in the middle is kept without n_vertices (and named by the same warning)
    inner = [tuple(v + (v >= 4) for v in cell) for cell in _HYPEREDGES]  # vertex 4 left out
    with pytest.warns(UserWarning, match="1 of the 10 vertices are in no hyperedge"):
        assert getattr(topology, name)(2, random_state=0).fit(None, cells=inner).labels_.shape == (10,)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # every vertex covered: no warning
        assert getattr(topology, name)(2, random_state=0).fit(None, cells=_HYPEREDGES).labels_.shape == (9,)
    with pytest.raises(ValueError, match="n_vertices=5 must be an integer >= 9"):
        getattr(topology, name)(2).fit(None, cells=_HYPEREDGES, n_vertices=5)
    X = np.random.default_rng(0).normal(size=(12, 2))
    with pytest.raises(ValueError, match="does not match the 12 vertices of X"):
        getattr(topology, name)(2, n_neighbors=3).fit(X, n_vertices=11)


def test_other_ceo_estimators_take_the_vertex_count():
    from sklearn_frontier.topology import CEOPositionalEncoding, CEOSmoother, CollapsedLaplacian

    with pytest.warns(UserWarning, match="in no hyperedge"):
        emb = CollapsedLaplacian(n_components=2, random_state=0).fit_transform(None, cells=_HYPEREDGES, n_vertices=11)
    assert emb.shape == (11, 2)
    with pytest.warns(UserWarning, match="in no hyperedge"):
        assert CEOPositionalEncoding(n_components=2).fit(None, cells=_HYPEREDGES, n_vertices=11).embedding_.shape \
            == (11, 2)
    with pytest.warns(UserWarning, match="in no hyperedge"):
        smoother = CEOSmoother().fit(None, cells=_HYPEREDGES, n_vertices=11)
    assert smoother.smooth(np.arange(11.0)).shape == (11,)
