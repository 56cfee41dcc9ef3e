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
