"""MA3SAnnotator and its baselines: known answers for the uncertainty, propagation, selection,
atomic updates, online = batch, persistence and backends."""

import os
import pickle

import numpy as np
import pytest
from scipy import stats
from scipy.special import betainc
from sklearn.exceptions import NotFittedError

from sklearn_frontier import config_context
from sklearn_frontier.annotation import MA3SAnnotator, RandomAnnotator, RoundRobinAnnotator, replay_journal


def two_blobs(seed=0, size=10):
    rng = np.random.default_rng(seed)
    X = np.r_[rng.normal(0, 0.05, (size, 2)), rng.normal(20, 0.05, (size, 2))]
    return X


def _state(est):
    keys = ["annotations_", "counts_", "uncertainty_", "n_labels_", "log_"]
    out = {k: getattr(est, k).copy() for k in keys}
    out["n_labels_seen_"] = est.n_labels_seen_
    if hasattr(est, "propagated_evidence_"):
        out["N"] = est.propagated_evidence_.copy()
        out["tallies"] = est._tallies.copy()
        out["lambda"] = est._lambda_steps
    return out


def _assert_state_equal(a, b):
    assert a.keys() == b.keys()
    for k in a:
        if isinstance(a[k], np.ndarray):
            assert a[k].dtype == b[k].dtype and a[k].tobytes() == b[k].tobytes(), k
        else:
            assert a[k] == b[k], k


# -- uncertainty --------------------------------------------------------------------------------------
def test_uncertainty_is_betainc_of_top_two_counts():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    Y = rng.integers(0, 3, (30, 6)).astype(float)
    Y[rng.random((30, 6)) < 0.4] = np.nan
    est = MA3SAnnotator(propagation="none", prior=(1.0, 2.0), n_neighbors=4, random_state=0).fit(X, Y)
    C = np.stack([(Y == k).sum(axis=1) for k in range(3)], axis=1).astype(float)
    srt = np.sort(C, axis=1)
    np.testing.assert_allclose(est.uncertainty_, betainc(srt[:, 2] + 1, srt[:, 1] + 2, 0.5), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(est.counts_, C)


def test_unlabelled_sample_has_maximum_uncertainty_and_binary_is_lu():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20, 2))
    Y = rng.integers(0, 2, (20, 4)).astype(float)
    Y[rng.random((20, 4)) < 0.5] = np.nan
    Y[3] = np.nan
    est = MA3SAnnotator(propagation="none", n_neighbors=3, random_state=0).fit(X, Y)
    assert est.uncertainty_[3] == 0.5 == est.uncertainty_.max()
    pos, neg = np.nansum(Y == 1, axis=1), np.nansum(Y == 0, axis=1)
    tail = betainc(pos + 1, neg + 1, 0.5)
    np.testing.assert_allclose(est.uncertainty_, np.minimum(tail, 1 - tail), rtol=0, atol=1e-12)


def test_confident_label_lowers_neighbours_uncertainty():
    X = two_blobs()
    Y = np.full((20, 3), np.nan)
    est = MA3SAnnotator(n_neighbors=9, classes=[0, 1], random_state=0).fit(X, Y)
    before = est.uncertainty_.copy()
    assert np.all(before == 0.5)
    est.update([0, 0, 0], [1, 1, 1])
    neighbours = est.graph_[0].indices
    assert set(neighbours) <= set(range(10))
    assert np.all(est.uncertainty_[neighbours] < before[neighbours])
    assert np.all(est.uncertainty_[10:] == 0.5)  # the far blob is untouched
    # no propagation: only the labelled row moves
    lu = MA3SAnnotator(n_neighbors=9, classes=[0, 1], propagation="none", random_state=0).fit(X, Y)
    lu.update([0, 0, 0], [1, 1, 1])
    assert np.all(lu.uncertainty_[1:] == 0.5) and lu.uncertainty_[0] == 1 / 16


def test_two_blob_toy_evidence_moves_to_the_other_blob():
    X = two_blobs()
    Y = np.full((20, 3), np.nan)
    Y[0] = 0
    for seed in range(5):
        ma3s = MA3SAnnotator(n_neighbors=9, batch_diversity=False, random_state=seed).fit(X, Y)
        picks = ma3s.query(batch_size=10)
        assert np.all(picks >= 10), picks
        lu = MA3SAnnotator(n_neighbors=9, propagation="none", random_state=seed).fit(X, Y)
        picks = lu.query(batch_size=10)
        assert 0 not in picks and np.sum(picks < 10) >= 1  # LU spreads over both blobs
    # error detection: in a blob labelled 3 x 0, the one point labelled 1 gets the top uncertainty
    Y = np.full((20, 3), np.nan)
    Y[:10] = 0
    Y[4] = [1, np.nan, np.nan]
    Y[10:, 0] = 1
    Y[10:, 1] = 1
    est = MA3SAnnotator(n_neighbors=9, random_state=0).fit(X, Y)
    assert np.argmax(est.uncertainty_) == 4
    assert est.query()[0] == 4


def test_batch_diversity_spreads_a_batch_over_blobs():
    X = two_blobs()
    Y = np.full((20, 2), np.nan)
    same_without = 0
    n_seeds = 300
    for seed in range(n_seeds):
        est = MA3SAnnotator(n_neighbors=9, classes=[0, 1], random_state=seed).fit(X, Y)
        a, b = est.query(batch_size=2)
        assert (a < 10) != (b < 10), seed
        est.set_params(batch_diversity=False)
        a, b = est.query(batch_size=2)
        same_without += (a < 10) == (b < 10)
    # without diversity the two picks are hash-random: same blob with probability 9/19
    assert stats.binomtest(same_without, n_seeds, 9 / 19).pvalue > 1e-3


# -- selection -------------------------------------------------------------------------------------------
def test_query_is_deterministic_and_does_not_mutate():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 3))
    Y = rng.integers(0, 2, (40, 3)).astype(float)
    Y[rng.random((40, 3)) < 0.6] = np.nan
    Y[0, 0] = 1
    for cls in (MA3SAnnotator, RoundRobinAnnotator, RandomAnnotator):
        a = cls(n_neighbors=5, random_state=3).fit(X, Y)
        b = cls(n_neighbors=5, random_state=3).fit(X, Y)
        before = pickle.dumps(a.__dict__)
        qa = a.query(batch_size=7)
        assert pickle.dumps(a.__dict__) == before
        np.testing.assert_array_equal(qa, b.query(batch_size=7))
        assert qa.dtype == np.int64 and np.unique(qa).size == qa.size


def test_cold_start_first_pick_is_uniform():
    X = np.random.default_rng(0).normal(size=(10, 2))
    Y = np.full((10, 2), np.nan)
    firsts = [MA3SAnnotator(n_neighbors=3, classes=[0, 1], random_state=s).fit(X, Y).query()[0]
              for s in range(300)]
    assert stats.chisquare(np.bincount(firsts, minlength=10)).pvalue > 1e-3


def test_stopping_caps_candidates_and_annotators():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 2))
    Y = np.full((30, 3), np.nan)
    Y[:10] = 1
    Y[10:20, :2] = 0
    est = MA3SAnnotator(n_neighbors=4, propagation="none", stop_threshold=0.2, random_state=0).fit(X, Y)
    picks = est.query(batch_size=30)
    assert np.all(est.uncertainty_[picks] >= 0.2) and not np.any(picks < 10)  # full rows are never returned
    capped = MA3SAnnotator(n_neighbors=4, max_labels_per_sample=2, random_state=0).fit(X, Y)
    assert set(capped.query(batch_size=30)) == set(range(20, 30))
    only = capped.query(batch_size=30, candidates=[25, 26, 3])
    assert set(only) == {25, 26}
    mask = np.zeros(30, dtype=bool)
    mask[[21, 22]] = True
    assert set(capped.query(batch_size=5, candidates=mask)) == {21, 22}
    free2 = MA3SAnnotator(n_neighbors=4, random_state=0).fit(X, Y).query(batch_size=30, annotators=[0, 1])
    assert set(free2) == set(range(20, 30))
    pairs = MA3SAnnotator(n_neighbors=4, random_state=0).fit(X, Y).query_pairs(batch_size=30, annotators=[2])
    assert np.all(pairs[:, 1] == 2) and set(pairs[:, 0]) == set(range(10, 30))
    done = MA3SAnnotator(n_neighbors=4, propagation="none", stop_threshold=0.49, random_state=0).fit(X, Y)
    done.update(np.arange(20, 30), np.ones(10))
    assert done.query(batch_size=5).size == 0
    picks, util = est.query(batch_size=3, return_utilities=True)
    assert util.shape == (3, 30) and np.all(np.isnan(util[:, :10]))


def test_round_robin_gives_everyone_two_labels():
    from sklearn_frontier.annotation import SimulatedCrowd, run_annotation_loop

    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(37, 2)), rng.integers(0, 2, 37)
    hist = run_annotation_loop(RoundRobinAnnotator(n_neighbors=5, random_state=0), X,
                               SimulatedCrowd(y, n_workers=4, random_state=0), 2 * 37, batch_size=10, y_true=y)
    np.testing.assert_array_equal(hist["annotator"].n_labels_, 2)


# -- update ------------------------------------------------------------------------------------------------
@pytest.fixture
def fitted():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(15, 2))
    Y = np.full((15, 2), np.nan).astype(object)
    Y[0] = ["a", "b"]
    Y[1, 0] = "a"
    Y[2, 1] = "c"
    return X, Y


@pytest.mark.parametrize("cls,kw", [(MA3SAnnotator, {}), (MA3SAnnotator, {"propagation_strength": "auto"}),
                                    (MA3SAnnotator, {"propagation": "uncertainty"}), (RoundRobinAnnotator, {})])
def test_bad_updates_are_atomic(fitted, cls, kw):
    X, Y = fitted
    est = cls(n_neighbors=4, random_state=0, **kw).fit(X, Y)
    est.update([3], ["a"], annotators=[1])
    before = _state(est)
    bad = [
        (([4], ["zzz"]), {}),                       # unknown label
        (([4], [None]), {}),                        # missing label
        (([4, 5], ["a", np.nan]), {}),              # missing label later in the batch
        (([15], ["a"]), {}),                        # out of range
        (([-1], ["a"]), {}),
        ((np.array([True]), ["a"]), {}),            # bool index
        ((np.array([1.0]), ["a"]), {}),             # float index
        (([4, 4], ["a", "b"]), {"annotators": [0, 0]}),  # duplicate cell
        (([0], ["a"]), {"annotators": [0]}),        # filled cell
        (([4], ["a"]), {"annotators": [2]}),        # bad annotator
        (([4, 5], ["a"]), {}),                      # length mismatch
        (([0], ["a"]), {}),                         # a full row, anonymous annotator
        (([5, 0], ["a", "b"]), {}),                 # ... after a valid one
    ]
    for args, kwargs in bad:
        with pytest.raises(ValueError):
            est.update(*args, **kwargs)
        _assert_state_equal(before, _state(est))


def test_keyboard_interrupt_in_phase_two_restores(fitted, monkeypatch):
    X, Y = fitted
    est = MA3SAnnotator(n_neighbors=4, propagation_strength="auto", random_state=0).fit(X, Y)
    before = _state(est)
    original = est._apply_counts

    def interrupted(rows, codes):
        original(rows, codes)
        raise KeyboardInterrupt

    monkeypatch.setattr(est, "_apply_counts", interrupted)
    with pytest.raises(KeyboardInterrupt):
        est.update([4, 5, 6], ["a", "b", "c"])
    _assert_state_equal(before, _state(est))
    monkeypatch.undo()
    est.update([4, 5, 6], ["a", "b", "c"])
    assert est.n_labels_seen_ == 3 and est.annotations_[4, 0] >= 0


@pytest.mark.parametrize("steps", [1, 2])
@pytest.mark.parametrize("strength", [1.0, 0.5, "auto"])
def test_online_updates_equal_a_batch_fit(steps, strength):
    rng = np.random.default_rng(7)
    X = np.r_[rng.normal(0, 1, (40, 2)), rng.normal(4, 1, (40, 2))]
    truth = np.r_[np.zeros(40, int), np.ones(40, int)]
    m = 5
    kw = dict(n_neighbors=6, propagation_strength=strength, n_propagation_steps=steps, random_state=1)
    online = MA3SAnnotator(**kw).fit(X, _start(truth, m, rng))
    Y = online.get_annotation_matrix()
    for _ in range(25):
        picks = online.query(batch_size=int(rng.integers(1, 6)))
        labels = np.where(rng.random(picks.size) < 0.8, truth[picks], 1 - truth[picks])
        online.update(picks, labels)
    Y = online.get_annotation_matrix()
    batch = MA3SAnnotator(**kw).fit(X, Y)
    np.testing.assert_array_equal(online.counts_, batch.counts_)
    np.testing.assert_allclose(online.propagated_evidence_, batch.propagated_evidence_, rtol=0, atol=1e-12)
    if strength == "auto":
        np.testing.assert_array_equal(online._tallies, batch._tallies)
        assert abs(online.propagation_strength_ - batch.propagation_strength_) <= 0.05 + 1e-12
    else:
        np.testing.assert_allclose(online.uncertainty_, batch.uncertainty_, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(online.query(batch_size=8), batch.query(batch_size=8))


def _start(truth, m, rng):
    Y = np.full((truth.size, m), np.nan)
    Y[:, 0] = np.where(rng.random(truth.size) < 0.8, truth, 1 - truth)
    return Y


# -- persistence -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls,kw", [(MA3SAnnotator, {"propagation_strength": "auto", "n_propagation_steps": 2}),
                                    (MA3SAnnotator, {"propagation": "uncertainty"}), (RoundRobinAnnotator, {}),
                                    (RandomAnnotator, {})])
def test_save_load_continue_is_identical(tmp_path, cls, kw):
    rng = np.random.default_rng(8)
    X = rng.normal(size=(50, 3))
    truth = (X[:, 0] > 0).astype(int)
    Y = np.full((50, 4), np.nan)
    Y[:, 0] = truth
    a = cls(n_neighbors=5, random_state=2, **kw).fit(X, Y)
    for _ in range(5):
        picks = a.query(batch_size=4)
        a.update(picks, truth[picks])
    path = tmp_path / "state.npz"
    a.save_state(path)
    b = cls.load_state(path)
    _assert_state_equal(_state(a), _state(b))
    for _ in range(6):
        pa, pb = a.query(batch_size=3), b.query(batch_size=3)
        np.testing.assert_array_equal(pa, pb)
        labels = 1 - truth[pa]
        a.update(pa, labels)
        b.update(pb, labels)
    _assert_state_equal(_state(a), _state(b))
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    with np.load(path, allow_pickle=False) as data:
        assert str(data["tag"]) == "sklearn_frontier.annotator"


def test_load_state_rejects_tampering_and_failed_replace_keeps_old_file(tmp_path, monkeypatch):
    rng = np.random.default_rng(9)
    X = rng.normal(size=(20, 2))
    est = MA3SAnnotator(n_neighbors=3, random_state=0).fit(X, rng.integers(0, 2, 20))
    path = tmp_path / "s.npz"
    est.save_state(path)
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["codes"] = arrays["codes"].copy()
    arrays["codes"][0, 0] = 1 - arrays["codes"][0, 0]
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(ValueError, match=r"bad\.npz.*checksum check failed.*SHA-256"):
        MA3SAnnotator.load_state(tmp_path / "bad.npz")
    # a version-1 file (no state_sha256 member) still has its codes checksum checked
    legacy = {k: v for k, v in arrays.items() if k != "state_sha256"}
    legacy["version"] = np.array(1)
    np.savez(tmp_path / "legacy.npz", **legacy)
    with pytest.raises(ValueError, match=r"legacy\.npz.*checksum check failed.*annotation codes"):
        MA3SAnnotator.load_state(tmp_path / "legacy.npz")
    with pytest.raises(ValueError, match="not a RoundRobinAnnotator"):
        RoundRobinAnnotator.load_state(path)
    old = path.read_bytes()

    def failing_replace(*args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError):
        MA3SAnnotator(n_neighbors=3, random_state=5).fit(X, rng.integers(0, 2, 20)).save_state(path)
    assert path.read_bytes() == old
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp")] == []


def test_journal_replay_recovers_and_conflicts_apply_nothing(tmp_path):
    from sklearn_frontier.annotation._persistence import journal_append

    rng = np.random.default_rng(10)
    X = rng.normal(size=(12, 2))
    Y = np.full((12, 3), np.nan)
    Y[:, 0] = rng.integers(0, 2, 12)
    snapshot = MA3SAnnotator(n_neighbors=3, random_state=0).fit(X, Y)
    live = MA3SAnnotator(n_neighbors=3, random_state=0).fit(X, Y)
    journal = tmp_path / "labels.tsv"
    journal_append(journal, 0, [1, 2, 3], [1, 1, 2], [0, 1, 1])
    live.update([1, 2, 3], [0, 1, 1], annotators=[1, 1, 2])
    assert replay_journal(snapshot, journal) == 3
    _assert_state_equal(_state(snapshot), _state(live))
    assert replay_journal(snapshot, journal) == 0  # identical entries are skipped
    journal_append(journal, 3, [4, 1], [1, 1], [0, 1])  # the second conflicts with the stored label 0
    before = _state(snapshot)
    with pytest.raises(ValueError, match="conflict"):
        replay_journal(snapshot, journal)
    _assert_state_equal(before, _state(snapshot))


# -- backends, auto ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("strength", [1.0, "auto"])
def test_numpy_and_numba_backends_agree(strength):
    from sklearn_frontier.annotation import SimulatedCrowd, run_annotation_loop

    rng = np.random.default_rng(11)
    X = rng.normal(size=(500, 4))
    y = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)
    out = {}
    for backend in ("reference", "numba"):
        with config_context(backend=backend):
            hist = run_annotation_loop(MA3SAnnotator(n_neighbors=8, propagation_strength=strength, batch_size=10,
                                                     random_state=0), X,
                                       SimulatedCrowd(y, n_workers=6, random_state=0), 800, y_true=y)
        out[backend] = hist
    a, b = out["reference"]["annotator"], out["numba"]["annotator"]
    np.testing.assert_array_equal(a.annotations_, b.annotations_)  # identical queries all along
    np.testing.assert_allclose(a.uncertainty_, b.uncertainty_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.propagated_evidence_, b.propagated_evidence_, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(out["reference"]["label_accuracy"], out["numba"]["label_accuracy"])


def test_auto_strength_switches_off_on_noise_and_on_with_signal():
    from sklearn.datasets import load_breast_cancer

    from sklearn_frontier.annotation import SimulatedCrowd, run_annotation_loop

    X, y = load_breast_cancer(return_X_y=True)
    hist = run_annotation_loop(MA3SAnnotator(propagation_strength="auto", random_state=0), X,
                               SimulatedCrowd(y, random_state=0), 2 * len(y), batch_size=10, y_true=y)
    assert hist["annotator"].propagation_strength_ == 1.0
    lams = []
    for seed in range(10):
        rng = np.random.default_rng(seed)
        Xn = rng.normal(size=(300, 10))
        yn = rng.integers(0, 2, 300)
        hist = run_annotation_loop(MA3SAnnotator(propagation_strength="auto", random_state=seed), Xn,
                                   SimulatedCrowd(yn, random_state=seed), 600, batch_size=10, y_true=yn)
        lams.append(hist["propagation_strength"].mean())
    assert np.mean(lams) <= 0.3


# -- API -------------------------------------------------------------------------------------------------
def test_unfitted_and_bad_inputs():
    est = MA3SAnnotator()
    for call in (lambda: est.query(), lambda: est.update([0], [1]), lambda: est.predict(np.ones((2, 2))),
                 lambda: est.save_state("x.npz")):
        with pytest.raises(NotFittedError):
            call()
    X = np.random.default_rng(0).normal(size=(10, 2))
    with pytest.raises(ValueError, match="no label"):
        MA3SAnnotator().fit(X, np.full(10, np.nan))
    with pytest.raises(ValueError):
        MA3SAnnotator().fit(X, np.full((10, 2, 2), 1.0))
    with pytest.raises(ValueError, match="Unknown label"):
        MA3SAnnotator(classes=[0, 1]).fit(X, np.r_[np.zeros(9), 2])
    with pytest.raises(ValueError, match="duplicates"):
        MA3SAnnotator(classes=[0, 0, 1]).fit(X, np.zeros(10))
    with pytest.raises(ValueError):
        MA3SAnnotator(n_propagation_steps=4).fit(X, np.zeros(10))
    with pytest.raises(ValueError):
        MA3SAnnotator(prior=(0.0, 1.0)).fit(X, np.zeros(10))
    est = MA3SAnnotator(n_neighbors=3, random_state=0).fit(X, np.zeros(10))
    with pytest.raises(ValueError):
        est.query(batch_size=0)
    # declared classes with an all-missing matrix; strings with object NaN missing
    est = MA3SAnnotator(n_neighbors=3, classes=["x", "y"], random_state=0).fit(X, np.full((10, 2), None))
    assert est.predict(X[:2]).tolist() == ["x", "x"]
    Y = np.array([["x", np.nan]] * 5 + [[None, "y"]] * 5, dtype=object)
    est = MA3SAnnotator(n_neighbors=3, random_state=0).fit(X, Y)
    assert est.classes_.tolist() == ["x", "y"] and est.labels_.tolist() == ["x"] * 5 + ["y"] * 5
    assert est.soft_labels().shape == (10, 2)
    assert est.to_long(as_frame=False)["label"].tolist() == ["x"] * 5 + ["y"] * 5


def _pool_state(est):
    out = {k: np.asarray(getattr(est, k)).copy() for k in
           ("X_pool_", "annotations_", "counts_", "uncertainty_", "n_labels_", "sigma_", "_tie_keys_")}
    out["graph"] = est.graph_.toarray()
    if hasattr(est, "propagated_evidence_"):
        out["N"] = est.propagated_evidence_.copy()
        out["lambda"] = np.array(est.propagation_strength_)
    return out


@pytest.mark.parametrize("cls, kw", [(MA3SAnnotator, {}), (MA3SAnnotator, {"propagation_strength": "auto"}),
                                     (MA3SAnnotator, {"propagation": "uncertainty"}), (RoundRobinAnnotator, {})])
def test_partial_fit_equals_fit_on_the_concatenation(cls, kw):
    rng = np.random.default_rng(3)
    X = np.r_[rng.normal(0, 1, (30, 3)), rng.normal(4, 1, (30, 3))]
    Y = np.full((60, 4), np.nan)
    Y[rng.random((60, 4)) < 0.4] = 0
    Y[30:][rng.random((30, 4)) < 0.4] = 1
    Y[[5, 50], :] = np.nan  # all-missing rows in both parts
    params = dict(n_neighbors=5, random_state=7, classes=[0, 1], **kw)
    inc = cls(**params).partial_fit(X[:25], Y[:25])
    inc.update([1, 2, 3], [1, 0, 1])  # labels recorded between the calls are kept
    Y_all = Y.copy()
    for i, lab in zip([1, 2, 3], [1, 0, 1]):
        Y_all[i, np.flatnonzero(np.isnan(Y[i]))[0]] = lab
    inc.partial_fit(X[25:45], Y[25:45]).partial_fit(X[45:], Y[45:])
    full = cls(**params).fit(X, Y_all)
    a, b = _pool_state(inc), _pool_state(full)
    for k in a:
        np.testing.assert_allclose(a[k], b[k], rtol=0, atol=1e-12, err_msg=k)
    assert inc.random_seed_ == full.random_seed_
    assert inc.n_labels_seen_ == 3 and inc.log_.shape == (3, 3)  # the log of received labels is kept
    np.testing.assert_array_equal(inc.query(batch_size=7), full.query(batch_size=7))
    np.testing.assert_array_equal(inc.labels_, full.labels_)
    # and it keeps working online
    inc.update([59], [1])
    full.update([59], [1])
    np.testing.assert_allclose(inc.uncertainty_, full.uncertainty_, atol=1e-12)


def test_partial_fit_conventions():
    X = np.arange(20.0).reshape(10, 2)
    Y = np.array([[0, np.nan]] * 5 + [[1, np.nan]] * 5)
    first = MA3SAnnotator(n_neighbors=3, random_state=0).partial_fit(X, Y, classes=[0, 1, 2])
    np.testing.assert_array_equal(first.classes_, [0, 1, 2])  # the first call's classes declare the label set
    assert first.get_params()["classes"] is None  # and do not overwrite the parameter
    with pytest.raises(ValueError, match="n_features|features"):
        first.partial_fit(X[:, :1], Y)
    with pytest.raises(ValueError, match="differs from classes_"):
        first.partial_fit(X, Y, classes=[0, 1])
    with pytest.raises(ValueError, match="annotator columns"):
        first.partial_fit(X, Y[:, :1].ravel())
    with pytest.raises(ValueError, match="Unknown label"):
        first.partial_fit(X[:1], [[3, np.nan]])
    with pytest.raises(ValueError, match="target y is None"):
        first.partial_fit(X[:1], None)
    assert first.X_pool_.shape[0] == 10  # failed calls changed nothing
    first.partial_fit(X[:1] + 0.5, [[np.nan, np.nan]])  # one all-missing row is allowed
    assert first.X_pool_.shape[0] == 11 and first.n_labels_[10] == 0
    single = RoundRobinAnnotator(n_neighbors=2, random_state=0).partial_fit(X, np.r_[[0] * 5, [1] * 5])
    single.partial_fit(X[:2], [1, 0])  # a 1-D y is the single annotator's column, no warning
    assert single.n_annotators_ == 1 and single.counts_.sum() == 12


@pytest.mark.parametrize("backend", ["numba", "reference"])
@pytest.mark.parametrize("cls, kw", [(MA3SAnnotator, {}), (MA3SAnnotator, {"propagation_strength": "auto"}),
                                     (MA3SAnnotator, {"stop_threshold": 0.2, "max_labels_per_sample": 3}),
                                     (MA3SAnnotator, {"propagation": "none"}),
                                     (MA3SAnnotator, {"n_propagation_steps": 2, "diversity_weight": 0.5}),
                                     (RoundRobinAnnotator, {"max_labels_per_sample": 2})])
def test_indexed_query_equals_a_full_ranking(cls, kw, backend):
    # query() without candidates reads the incrementally kept heap; an all-True candidates mask
    # ranks every row afresh (O(n)). They must agree after any sequence of updates.
    rng = np.random.default_rng(11)
    X = np.r_[rng.normal(0, 1, (40, 2)), rng.normal(5, 1, (40, 2))]
    y = np.r_[np.zeros(40, int), np.ones(40, int)]
    everyone = np.ones(80, dtype=bool)
    with config_context(backend=backend):
        est = cls(n_neighbors=6, random_state=2, classes=[0, 1], **kw).fit(X, np.full((80, 5), np.nan))
        for step in range(25):
            for b in (1, 4, 9):
                np.testing.assert_array_equal(est.query(batch_size=b), est.query(batch_size=b, candidates=everyone))
            picks = est.query(batch_size=int(rng.integers(1, 6)))
            if picks.size == 0:
                break
            noisy = np.where(rng.random(picks.size) < 0.8, y[picks], 1 - y[picks])
            est.update(picks, noisy)
        if cls is MA3SAnnotator:
            est.set_params(stop_threshold=0.1)  # a stale index is rebuilt
            np.testing.assert_array_equal(est.query(batch_size=5), est.query(batch_size=5, candidates=everyone))


def test_diverse_batch_with_utilities_equals_the_kernel_batch():
    """query(return_utilities=True) goes through the reference loop, the plain query through the fast kernel."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 3))
    Y = np.full((60, 4), np.nan)
    Y[rng.choice(60, 25, replace=False), 0] = rng.integers(0, 2, 25)
    est = MA3SAnnotator(n_neighbors=5, random_state=0).fit(X, Y)
    plain = est.query(batch_size=6)
    picks, util = est.query(batch_size=6, return_utilities=True)
    np.testing.assert_array_equal(picks, plain)
    assert util.shape == (6, 60)
    for t, i in enumerate(picks):
        assert np.all(np.isnan(util[t, picks[:t]]))
        assert util[t, i] >= np.nanmax(util[t]) - 1e-9  # each pick is a best row of the utilities it saw
