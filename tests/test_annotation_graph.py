"""The annotation family's large-pool graph (approximate kNN) and the words of its aggregation."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn_frontier.kernels import nn_descent

from sklearn_frontier.annotation import MA3SAnnotator, RoundRobinAnnotator, SimulatedCrowd, run_annotation_loop
from sklearn_frontier.utils._graphs import APPROXIMATE_MIN_SAMPLES, knn_neighbors, resolve_knn_algorithm


def _recall(idx, exact):
    return np.mean([len(set(a) & set(b)) for a, b in zip(idx, exact)]) / exact.shape[1]


def test_approximate_graph_recalls_the_exact_neighbours():
    X, _ = make_classification(n_samples=3000, n_features=10, n_informative=5, n_redundant=0, random_state=0)
    dist, idx = knn_neighbors(X, 10, algorithm="approximate")
    exact_dist, exact = knn_neighbors(X, 10, algorithm="brute")
    assert _recall(idx, exact) >= 0.9
    assert not np.any(idx == np.arange(3000)[:, None]) and np.all(idx >= 0)
    assert np.all(np.diff(dist, axis=1) >= 0)
    # the distances it reports are the true ones (a list entry is right, if not always the nearest)
    np.testing.assert_allclose(dist, np.linalg.norm(X[idx] - X[:, None, :], axis=2), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(nn_descent(X, 10, seed=3)[1], nn_descent(X, 10, seed=3)[1])  # seeded


def test_auto_switches_to_the_approximate_graph_above_the_threshold():
    assert resolve_knn_algorithm("auto", APPROXIMATE_MIN_SAMPLES, 10) == "approximate"
    assert resolve_knn_algorithm("auto", APPROXIMATE_MIN_SAMPLES - 1, 10) == "brute"
    assert resolve_knn_algorithm("auto", APPROXIMATE_MIN_SAMPLES, 3, metric="manhattan") == "auto"
    with pytest.raises(ValueError, match="Euclidean only"):
        resolve_knn_algorithm("approximate", 100, 3, metric="manhattan")


def test_approximate_graph_labels_as_well_as_the_exact_one():
    X, y = make_classification(n_samples=1500, n_features=10, n_informative=5, n_redundant=0, random_state=1)
    accuracy = {}
    for algorithm in ("exact", "approximate"):
        crowd = SimulatedCrowd(y, n_workers=20, accuracy=(0.55, 0.85), random_state=0)
        est = MA3SAnnotator(neighbor_algorithm=algorithm, random_state=0)
        hist = run_annotation_loop(est, X, crowd, 3 * 1500, batch_size=10, y_true=y)
        accuracy[algorithm] = hist["label_accuracy"][-1]
        assert est.neighbor_algorithm_ == ("approximate" if algorithm == "approximate" else "brute")
    assert accuracy["approximate"] >= accuracy["exact"] - 0.02


def test_majority_means_the_vote_and_leaves_unlabelled_samples_missing():
    X = np.r_[np.zeros((5, 1)), np.ones((5, 1)) * 10] + np.arange(10)[:, None] * 0.01
    Y = np.full((10, 3), np.nan)
    Y[0] = [1, 1, 0]
    Y[5] = [0, 0, np.nan]
    est = MA3SAnnotator(n_neighbors=4, random_state=0).fit(X, Y)
    labels = est.labels_
    assert labels[0] == 1 and labels[5] == 0 and np.isnan(np.delete(labels, [0, 5])).all()
    propagated = est.aggregate("majority_propagated")
    np.testing.assert_array_equal(propagated, [1] * 5 + [0] * 5)  # each blob takes its labelled member's class
    assert not np.isnan(est.aggregate("propagated")).any()
    _, proba = est.aggregate("majority", return_proba=True)
    np.testing.assert_allclose(proba[1], [0.5, 0.5])
    with pytest.raises(ValueError, match="Unknown aggregation method 'propagated'"):
        RoundRobinAnnotator().fit(X, Y).aggregate("propagated")


def test_minus_one_as_unlabelled_is_flagged():
    X = np.arange(8.0)[:, None]
    y = np.array([0, 1, -1, -1, 0, 1, -1, 1])
    with pytest.warns(UserWarning, match="missing_label=-1"):
        MA3SAnnotator(n_neighbors=2).fit(X, y)
    with pytest.raises(ValueError, match="not in classes"):
        MA3SAnnotator(n_neighbors=2, classes=[0, 1]).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = MA3SAnnotator(n_neighbors=2, missing_label=-1).fit(X, y)
        MA3SAnnotator(n_neighbors=2, classes=[-1, 0, 1]).fit(X, y)  # -1 declared a class: no warning
    assert est.classes_.tolist() == [0, 1] and est.n_labels_.tolist() == [1, 1, 0, 0, 1, 1, 0, 1]


def test_a_saved_annotator_keeps_its_approximate_graph(tmp_path):
    from sklearn_frontier.annotation import load_annotator

    X, y = make_classification(n_samples=400, n_features=5, random_state=0)
    Y = np.where(np.arange(1200).reshape(400, 3) % 4 == 0, y[:, None], np.nan)  # three workers
    est = MA3SAnnotator(neighbor_algorithm="approximate", random_state=0).fit(X, Y)
    est.save_state(tmp_path / "state.npz")
    loaded = load_annotator(tmp_path / "state.npz")
    assert loaded.neighbor_algorithm_ == "approximate"
    assert (loaded.graph_ != est.graph_).nnz == 0
    np.testing.assert_array_equal(loaded.query(batch_size=5), est.query(batch_size=5))
