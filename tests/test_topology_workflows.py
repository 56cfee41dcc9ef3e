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
