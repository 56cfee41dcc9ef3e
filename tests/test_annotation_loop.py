"""Crowd, loop, aggregators and formats of the annotation family: known answers."""

import numpy as np
import pytest
from scipy import stats

from sklearn_frontier.annotation import (
    MA3SAnnotator,
    RoundRobinAnnotator,
    SimulatedCrowd,
    dawid_skene,
    majority_vote,
    run_annotation_loop,
    to_annotation_matrix,
    to_long_format,
)


def _ds_crowd(n=4000, m=10, K=3, per_item=5, seed=0):
    """A planted Dawid–Skene crowd: known confusion matrices, 5 labels per item."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, K, n)
    conf = np.empty((m, K, K))
    for j in range(m):
        diag = rng.uniform(0.45, 0.9, K)
        for k in range(K):
            rest = rng.dirichlet(np.ones(K - 1)) * (1 - diag[k])
            conf[j, k] = np.insert(rest, k, diag[k])
    Y = np.full((n, m), np.nan)
    for i in range(n):
        for j in rng.choice(m, per_item, replace=False):
            Y[i, j] = np.searchsorted(np.cumsum(conf[j, truth[i]]), rng.random(), side="right")
    return Y, truth, conf


def test_dawid_skene_recovers_planted_confusions_and_beats_majority():
    Y, truth, conf = _ds_crowd()
    labels, params = dawid_skene(Y, return_params=True)
    assert np.max(np.abs(params["confusion"] - conf)) <= 0.08
    mv = majority_vote(Y, random_state=0)
    assert np.mean(labels == truth) > np.mean(mv == truth)
    # worker-permutation invariance
    perm = np.random.default_rng(1).permutation(Y.shape[1])
    labels_p, params_p = dawid_skene(Y[:, perm], return_params=True)
    np.testing.assert_array_equal(labels, labels_p)
    np.testing.assert_allclose(params_p["confusion"], params["confusion"][perm], atol=1e-10)


def test_one_coin_recovers_planted_worker_accuracies():
    rng = np.random.default_rng(2)
    n, m, K = 4000, 10, 3
    truth = rng.integers(0, K, n)
    acc = rng.uniform(0.4, 0.9, m)
    Y = np.full((n, m), np.nan)
    for i in range(n):
        for j in rng.choice(m, 5, replace=False):
            if rng.random() < acc[j]:
                Y[i, j] = truth[i]
            else:
                w = rng.integers(K - 1)
                Y[i, j] = w + (w >= truth[i])
    _, params = dawid_skene(Y, model="one_coin", return_params=True)
    assert np.max(np.abs(params["accuracy"] - acc)) <= 0.04


def test_dawid_skene_objective_is_monotone():
    Y, _, _ = _ds_crowd(n=500, seed=3)
    objectives = []
    for it in range(2, 12):
        with pytest.warns(Warning):
            _, p = dawid_skene(Y, max_iter=it, tol=0.0, return_params=True)
        objectives.append(p["objective"])
    assert np.all(np.diff(objectives) >= -1e-9)


def test_majority_vote_ties_are_seeded_and_fair():
    Y = np.tile([[0.0, 1.0]], (10000, 1))
    labels = majority_vote(Y, random_state=0)
    assert stats.binomtest(int(labels.sum()), 10000, 0.5).pvalue > 1e-3
    np.testing.assert_array_equal(labels, majority_vote(Y, random_state=0))
    assert np.all(majority_vote(Y, tie_break="lowest") == 0)
    ev = np.tile([[0.2, 0.7]], (10000, 1))
    assert np.all(majority_vote(Y, tie_break="evidence", evidence=ev) == 1)
    out = majority_vote(np.array([[np.nan, np.nan], [1.0, 1.0]]), empty="missing")
    assert np.isnan(out[0]) and out[1] == 1


def test_long_format_round_trip_with_empty_columns_and_string_ids():
    Y = np.array([[0, np.nan, np.nan], [1, 1, np.nan], [np.nan, 0, np.nan]])
    tasks, workers = np.array(["t0", "t1", "t2"]), np.array(["w0", "w1", "w_idle"])
    long = to_long_format(Y, tasks, workers)
    back, t, w = to_annotation_matrix(long, tasks=tasks, workers=workers)
    np.testing.assert_array_equal(back, Y)
    np.testing.assert_array_equal(t, tasks)
    np.testing.assert_array_equal(w, workers)
    records = to_long_format(np.array([["a", None], [None, "b"]], dtype=object), as_frame=False)
    back, _, _ = to_annotation_matrix(records)
    assert back.tolist() == [["a", back[0, 1]], [back[1, 0], "b"]] and back.dtype == object
    with pytest.raises(ValueError, match="duplicate"):
        to_annotation_matrix({"task": [0, 0], "worker": [1, 1], "label": [0, 1]})
    with pytest.raises(ValueError, match="not in the given"):
        to_annotation_matrix({"task": [0, 5], "worker": [1, 1], "label": [0, 1]}, tasks=[0, 1])
    with pytest.raises(ValueError, match="no key"):
        to_annotation_matrix({"task": [0], "worker": [1]})


def test_simulated_crowd_accuracy_and_exhaustion():
    n, m = 3000, 3
    y = np.random.default_rng(0).integers(0, 2, n)
    crowd = SimulatedCrowd(y, n_workers=m, model="uniform", accuracy=0.7, random_state=0)
    correct = 0
    for i in range(n):
        label, worker = crowd.label(i)
        correct += label == y[i]
    lo, hi = stats.binom.interval(0.999, n, 0.7)
    assert lo <= correct <= hi
    for i in range(5):
        workers = {crowd.label(i)[1] for _ in range(m - 1)}
        assert len(workers) == m - 1  # no repeat worker per instance
        assert crowd.label(i) is None  # exhausted
    with pytest.raises(ValueError):
        SimulatedCrowd(y, accuracy=(0.9, 0.5))
    with pytest.raises(ValueError):
        SimulatedCrowd(y, model="difficulty")
    with pytest.raises(ValueError):
        SimulatedCrowd(y, model="nope")
    spam = SimulatedCrowd(y, n_workers=10, model="spammer", spammer_fraction=0.4, random_state=0)
    assert spam.is_spammer_.sum() == 4


def _blobs(seed=0, n=200):
    rng = np.random.default_rng(seed)
    centers = rng.normal(0, 4, (4, 5))
    cls = rng.integers(0, 4, n)
    X = centers[cls] + rng.normal(0, 1, (n, 5))
    return X, cls % 2


def test_loop_is_deterministic_and_spends_the_budget():
    X, y = _blobs()
    runs = [run_annotation_loop(MA3SAnnotator(n_neighbors=8, random_state=0), X,
                                SimulatedCrowd(y, n_workers=10, random_state=1), 600, batch_size=10, y_true=y)
            for _ in range(2)]
    assert runs[0]["n_labels"][-1] == 600 and runs[0]["stop_reason"] == "budget"
    for key in ("n_labels", "label_accuracy", "mean_uncertainty", "expected_errors"):
        np.testing.assert_array_equal(runs[0][key], runs[1][key])
    np.testing.assert_array_equal(runs[0]["annotation_matrix"], runs[1]["annotation_matrix"])
    assert 0 < runs[0]["aulc"] <= 1


def test_ma3s_needs_fewer_labels_than_round_robin():
    """Known answer: on clustered data with a noisy crowd, MA3S reaches 90% label accuracy with
    fewer labels than round robin on every seed (the graph tells it where labels are still needed)."""
    for seed in range(3):
        X, y = _blobs(seed, n=300)
        needed = {}
        for name, est in (("ma3s", MA3SAnnotator(random_state=seed)), ("grr", RoundRobinAnnotator(random_state=seed))):
            hist = run_annotation_loop(est, X, SimulatedCrowd(y, accuracy=(0.55, 0.75), random_state=seed),
                                       5 * len(y), batch_size=10, y_true=y, eval_every=30)
            reached = np.flatnonzero(hist["label_accuracy"] >= 0.9)
            needed[name] = hist["n_labels"][reached[0]] if reached.size else np.inf
        assert needed["ma3s"] < needed["grr"], (seed, needed)


def test_interrupted_loop_resumes_identically(tmp_path):
    X, y = _blobs(4)
    kw = dict(batch_size=7, y_true=y, eval_every=25)
    full = run_annotation_loop(MA3SAnnotator(n_neighbors=6, propagation_strength="auto", random_state=0), X,
                               SimulatedCrowd(y, n_workers=8, random_state=2), 700, **kw)
    ckpt = tmp_path / "loop.npz"

    def interrupt(annotator, info):
        if info["n_labels"] >= 420:
            raise KeyboardInterrupt
        return False

    with pytest.raises(KeyboardInterrupt):
        run_annotation_loop(MA3SAnnotator(n_neighbors=6, propagation_strength="auto", random_state=0), X,
                            SimulatedCrowd(y, n_workers=8, random_state=2), 700, checkpoint=ckpt,
                            checkpoint_every=5, callback=interrupt, **kw)
    resumed = run_annotation_loop(MA3SAnnotator(n_neighbors=6, propagation_strength="auto", random_state=0), X,
                                  SimulatedCrowd(y, n_workers=8, random_state=2), 700, checkpoint=ckpt,
                                  resume=True, **kw)
    for key in ("n_labels", "label_accuracy", "mean_uncertainty", "propagation_strength"):
        np.testing.assert_array_equal(full[key], resumed[key])
    np.testing.assert_array_equal(full["annotation_matrix"], resumed["annotation_matrix"])
    assert resumed["stop_reason"] == "budget"


def test_loop_journal_and_bad_arguments(tmp_path):
    from sklearn_frontier.annotation import replay_journal

    X, y = _blobs(5, n=40)
    journal = tmp_path / "j.tsv"
    with pytest.warns(FutureWarning, match="store="):
        hist = run_annotation_loop(MA3SAnnotator(n_neighbors=5, random_state=0), X,
                                   SimulatedCrowd(y, n_workers=4, random_state=0), 100, batch_size=5, journal=journal,
                                   verbose=1)
    fresh = MA3SAnnotator(n_neighbors=5, classes=[0, 1], random_state=0).fit(X, np.full((40, 4), np.nan))
    assert replay_journal(fresh, journal) == 100
    np.testing.assert_array_equal(fresh.annotations_, hist["annotator"].annotations_)
    with pytest.raises(ValueError, match="budget"):
        run_annotation_loop(MA3SAnnotator(), X, SimulatedCrowd(y), 10)
    with pytest.raises(ValueError, match="y_true"):
        run_annotation_loop(MA3SAnnotator(), X, SimulatedCrowd(y), 100, y_true=y[:-1])
    with pytest.raises(ValueError, match="not both"):
        run_annotation_loop(MA3SAnnotator(), X, SimulatedCrowd(y), 100, checkpoint=tmp_path / "c.npz",
                            store=tmp_path / "s.sqlite")


def test_example_runs(tmp_path, monkeypatch):
    import runpy
    from pathlib import Path

    script = Path(__file__).parents[1] / "examples" / "plot_active_annotation.py"
    monkeypatch.setenv("SKLEARN_FRONTIER_EXAMPLE_QUICK", "1")
    monkeypatch.setenv("SKLEARN_FRONTIER_EXAMPLE_DIR", str(tmp_path))
    runpy.run_path(str(script), run_name="__main__")
    assert (tmp_path / "plot_active_annotation.png").exists()


def test_loop_stops_on_threshold_and_exhaustion():
    X, y = _blobs(6, n=30)
    hist = run_annotation_loop(MA3SAnnotator(n_neighbors=5, propagation="none", stop_threshold=0.2, random_state=0),
                               X, SimulatedCrowd(y, n_workers=6, model="uniform", accuracy=1.0, random_state=0),
                               180, batch_size=5, y_true=y)
    assert hist["stop_reason"] == "threshold" and hist["n_labels"][-1] < 180
    assert np.all(hist["annotator"].uncertainty_ < 0.2)
    hist = run_annotation_loop(RoundRobinAnnotator(n_neighbors=5, random_state=0), X,
                               SimulatedCrowd(y, n_workers=2, random_state=0), 100, batch_size=5, y_true=y)
    assert hist["stop_reason"] == "exhausted" and hist["n_labels"][-1] == 60
