import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import connected_components

from sklearn_frontier.utils._graphs import knn_neighbors, local_scaling_knn_graph, repair_connectivity
from sklearn_frontier.utils._manifolds import (
    canonical_signs,
    cayley_retraction,
    polar_retraction,
    projection_distance,
    qr_retraction,
    retract,
    stiefel_project,
)


@settings(max_examples=25, deadline=None)
@given(p=st.integers(2, 8), d=st.integers(1, 3), seed=st.integers(0, 10_000),
       method=st.sampled_from(["qr", "polar", "cayley"]))
def test_retractions_stay_on_stiefel(p, d, seed, method):
    d = min(d, p)
    rng = np.random.default_rng(seed)
    V = qr_retraction(rng.normal(size=(p, d)))
    xi = stiefel_project(V, 0.3 * rng.normal(size=(p, d)))
    np.testing.assert_allclose(V.T @ xi + xi.T @ V, 0, atol=1e-12)  # tangent: V^T xi skew
    W = retract(V, xi, method)
    np.testing.assert_allclose(W.T @ W, np.eye(d), atol=1e-10)


def test_retractions_first_order_agree():
    rng = np.random.default_rng(0)
    V = qr_retraction(rng.normal(size=(6, 2)))
    xi = stiefel_project(V, rng.normal(size=(6, 2)))
    t = 1e-5
    for f in (qr_retraction, polar_retraction, cayley_retraction):
        np.testing.assert_allclose((f(V, t * xi) - V) / t, xi, atol=1e-4)


def test_qr_retraction_torch_matches_numpy():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(1).normal(size=(5, 3))
    np.testing.assert_allclose(qr_retraction(torch.from_numpy(a)).numpy(), qr_retraction(a), atol=1e-12)


def test_canonical_signs_and_distance():
    B = np.array([[0.6, -0.8], [-0.8, -0.6]])
    C = canonical_signs(B)
    assert C[1, 0] > 0 and C[0, 1] > 0
    assert projection_distance(B, C) == pytest.approx(0.0, abs=1e-12)
    e1, e2 = np.eye(3)[:, :1], np.eye(3)[:, 1:2]
    assert projection_distance(e1, e2) == pytest.approx(np.sqrt(2))
    assert projection_distance(e1, e2, "spectral") == pytest.approx(1.0)
    assert projection_distance(e1, e1, "trace") == pytest.approx(1.0)
    with pytest.raises(ValueError, match="metric"):
        projection_distance(e1, e2, "bogus")


def test_knn_drops_self_even_with_duplicates():
    X = np.array([[0.0], [0.0], [0.0], [5.0]])
    dist, idx = knn_neighbors(X, 2)
    assert idx.shape == (4, 2)
    assert all(i not in row for i, row in enumerate(idx[:3]))


def test_local_scaling_graph_rows_sum_to_one():
    X = np.random.default_rng(0).normal(size=(30, 3))
    W = local_scaling_knn_graph(X, 5)
    np.testing.assert_allclose(np.asarray(W.sum(axis=1)).ravel(), 1.0)
    assert W.nnz == 30 * 5
    S = local_scaling_knn_graph(X, 5, row_normalize=False, symmetrize="max")
    assert abs(S - S.T).max() == 0
    assert S.diagonal().sum() == 0


def test_repair_connectivity_joins_two_clusters():
    X = np.vstack([np.random.default_rng(0).normal(size=(10, 2)), 100 + np.random.default_rng(1).normal(size=(10, 2))])
    W = local_scaling_knn_graph(X, 3, row_normalize=False, symmetrize="max")
    assert connected_components(W, directed=False)[0] >= 2
    A, added = repair_connectivity(W, X)
    assert connected_components(A, directed=False)[0] == 1
    assert len(added) >= 1
