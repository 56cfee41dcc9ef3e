"""Worker quality in AnnotationSession: the online Dawid–Skene fold, declining, gold items, aggregation, batches."""

import sqlite3
import threading

import numpy as np
import pytest

from sklearn_frontier.annotation import AnnotationSession, MA3SAnnotator, RoundRobinAnnotator
from sklearn_frontier.annotation._aggregation import _dawid_skene_codes
from sklearn_frontier.annotation._quality import OnlineDawidSkene, default_confusion_prior


def _pool(n=240, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, (X[:, 0] > 0).astype(int)


def _fixed_labels(n=300, m=10, per_item=3, seed=0):
    """A fixed label set: three random clickers, four workers right 70 % of the time, three right 90 %."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 2, n)
    acc = np.r_[[0.5] * 3, [0.7] * 4, [0.9] * 3]
    codes = np.full((n, m), -1)
    for i in range(n):
        for j in rng.choice(m, per_item, replace=False):
            codes[i, j] = truth[i] if rng.random() < acc[j] else 1 - truth[i]
    rows, cols = np.nonzero(codes >= 0)
    order = rng.permutation(rows.size)
    return codes, truth, acc, list(zip(rows[order], cols[order], codes[rows, cols][order]))


def _answer(truth, item, accuracy, rng):
    return int(truth[item]) if rng.random() < accuracy else 1 - int(truth[item])


def test_online_and_batch_dawid_skene_agree_on_a_fixed_label_set():
    codes, truth, _, stream = _fixed_labels()
    online = OnlineDawidSkene(codes.shape[0], 2)
    for item, col, code in stream:
        online.add(item, col, code)
    prior = default_confusion_prior(2)
    T, params = _dawid_skene_codes(codes, 2, smoothing=1.0, confusion_prior=prior)
    batch_acc = np.einsum("k,jkk->j", params["prior"], params["confusion"])
    # the fold stops between two full EM runs: within the distance one EM run moves the estimates
    assert np.abs(online.accuracy(10) - batch_acc).max() < 0.05
    assert np.mean(online.T.argmax(1) == T.argmax(1)) > 0.95
    # run both to a tight convergence: the same fixed point (the same MAP objective and prior)
    online.converge(max_iter=5000, tol=1e-12)
    T, params = _dawid_skene_codes(codes, 2, smoothing=1.0, confusion_prior=prior, max_iter=5000, tol=1e-12)
    np.testing.assert_allclose(online.accuracy(10), np.einsum("k,jkk->j", params["prior"], params["confusion"]),
                               atol=1e-5)
    np.testing.assert_allclose(online.T, T, atol=1e-4)


def test_the_fold_does_not_depend_on_how_the_log_is_batched():
    codes, _, _, stream = _fixed_labels(n=120)
    one = OnlineDawidSkene(120, 2)
    for item, col, code in stream:
        one.add(item, col, code)
    two = OnlineDawidSkene(120, 2)
    for item, col, code in stream[:50] + stream[50:]:
        two.add(item, col, code)
    np.testing.assert_array_equal(one.T, two.T)
    np.testing.assert_array_equal(one.accuracy(10), two.accuracy(10))


def _serve_crowd(session, truth, accuracy, rounds, rng):
    """Every round, each worker (in a random order) asks for an item and answers it; -1 marks a random clicker."""
    names = list(accuracy)
    for _ in range(rounds):
        for k in rng.permutation(len(names)):
            name = names[k]
            item = session.next_item(name)
            if item is None:
                continue
            acc = accuracy[name]
            session.submit(item, name, int(rng.integers(2)) if acc < 0 else _answer(truth, item, acc, rng))


def test_a_spammers_estimated_accuracy_falls_toward_chance_and_survives_a_reopen(tmp_path):
    X, truth = _pool()
    rng = np.random.default_rng(1)
    accuracy = {"spammer": -1, "good-1": 0.9, "good-2": 0.9, "ok": 0.75, "ok-2": 0.75}
    path = tmp_path / "labels.sqlite"
    session = AnnotationSession(RoundRobinAnnotator(classes=[0, 1], random_state=0), X, store=path)
    history = []
    for _ in range(12):
        _serve_crowd(session, truth, accuracy, 12, rng)
        history.append(session.worker_quality()["spammer"])
    quality = session.worker_quality()
    assert history[-1] < 0.62 < min(quality["good-1"], quality["good-2"])
    assert history[-1] < history[0] - 0.05  # falls as labels arrive, from the prior's 3/4
    assert min(quality["good-1"], quality["good-2"]) > max(quality["ok"], quality["ok-2"]) > quality["spammer"]
    confusion = session.worker_confusion()
    assert confusion["spammer"].shape == (2, 2)
    np.testing.assert_allclose(confusion["good-1"].sum(axis=1), 1.0)
    session.close()
    again = AnnotationSession(RoundRobinAnnotator(classes=[0, 1]), X, store=path)
    assert again.worker_quality() == quality  # the same fold over the same log
    again.close()


def test_a_declined_worker_gets_none_and_costs_nothing(tmp_path):
    X, truth = _pool()
    rng = np.random.default_rng(2)
    accuracy = {"good-1": 0.95, "good-2": 0.9, "good-3": 0.85, "spammer": -1}
    session = AnnotationSession(RoundRobinAnnotator(classes=[0, 1], random_state=0), X,
                                store=tmp_path / "s.sqlite", min_worker_accuracy=0.6, min_worker_labels=15)
    for rounds in range(1, 200):
        _serve_crowd(session, truth, accuracy, 1, rng)
        if session.next_item("spammer") is None:
            break
        assert all(session.next_item(name) is not None for name in accuracy if name != "spammer")
    col = session._columns["s:spammer"]
    n_spam = int(np.sum(session.annotator.annotations_[:, col] >= 0))
    assert 15 <= n_spam < 150  # never declined before min_worker_labels; declined well before the end
    assert session.worker_quality()["spammer"] < 0.6
    assert session.next_item("spammer") is None and session.next_items("spammer", 3) == []
    assert int(np.sum(session.annotator.annotations_[:, col] >= 0)) == n_spam
    session.close()


def test_an_item_labelled_only_by_a_random_clicker_is_still_open(tmp_path):
    X, truth = _pool(1000)
    rng = np.random.default_rng(3)
    gold = {i: int(truth[i]) for i in range(30)}  # thin overlap on a large pool: gold items calibrate
    session = AnnotationSession(MA3SAnnotator(n_neighbors=5, propagation="none", classes=[0, 1], random_state=0),
                                X, store=tmp_path / "s.sqlite", gold=gold, gold_per_worker=30)
    _serve_crowd(session, truth, {"a": 0.95, "b": 0.9, "c": 0.9, "clicker": -1}, 100, rng)
    assert session.worker_quality()["clicker"] < 0.65
    session.next_item("a")  # a selection brings the weights up to date
    ann = session.annotator
    only_clicker = np.flatnonzero((ann.annotations_[:, session._columns["s:clicker"]] >= 0) & (ann.n_labels_ == 1))
    only_good = np.flatnonzero((ann.annotations_[:, session._columns["s:a"]] >= 0) & (ann.n_labels_ == 1))
    assert only_clicker.size and only_good.size
    # one label from a near-random worker leaves the item almost as open as an unlabelled one (1/2)
    assert ann.uncertainty_[only_clicker].min() > ann.uncertainty_[only_good].max()
    assert session.labels("majority").dtype.kind == "f"  # the plain vote counts the clicker like anyone
    session.close()


def test_gold_items_calibrate_first_and_bad_gold_is_a_clear_error(tmp_path):
    X, truth = _pool()
    gold = {i: int(truth[i]) for i in range(5)}
    path = tmp_path / "s.sqlite"
    session = AnnotationSession(MA3SAnnotator(n_neighbors=5, classes=[0, 1], random_state=0), X, store=path,
                                gold=gold, gold_per_worker=3)
    first = []
    for _ in range(4):
        item = session.next_item("new")
        first.append(item)
        session.submit(item, "new", 1 - int(truth[item]))  # always wrong
    assert set(first[:3]) <= set(gold) and first[3] not in gold
    wrong_on_gold = session.worker_quality()["new"]
    labels = session.labels("dawid_skene")
    np.testing.assert_array_equal(labels[:5], truth[:5])  # gold items keep their known label
    session.close()
    with pytest.raises(ValueError, match="gold items"):
        AnnotationSession(MA3SAnnotator(classes=[0, 1]), X, store=path, gold={0: 1 - int(truth[0])})
    reopened = AnnotationSession(MA3SAnnotator(classes=[0, 1]), X, store=path)  # the stored gold
    assert reopened._gold_codes == gold
    reopened.close()
    # without gold the same four wrong answers, on items nobody else labelled, look like a good worker's
    plain = AnnotationSession(MA3SAnnotator(n_neighbors=5, classes=[0, 1], random_state=0), X,
                              store=tmp_path / "plain.sqlite")
    for item in first:
        plain.submit(item, "new", 1 - int(truth[item]))
    assert wrong_on_gold < 0.6 < 0.7 < plain.worker_quality()["new"]  # not caught: near the prior's 3/4
    plain.close()
    with pytest.raises(ValueError, match="gold: the label of item 3"):
        AnnotationSession(MA3SAnnotator(classes=[0, 1]), X, store=tmp_path / "t.sqlite", gold={3: 7})
    with pytest.raises(ValueError, match="out of range"):
        AnnotationSession(MA3SAnnotator(classes=[0, 1]), X, store=tmp_path / "u.sqlite", gold={10_000: 0})


def test_dawid_skene_labels_weigh_workers_and_fill_from_the_graph(tmp_path):
    rng = np.random.default_rng(4)
    X = np.r_[rng.normal(0, 0.3, (40, 2)), rng.normal(4, 0.3, (40, 2))]
    truth = np.r_[np.zeros(40, int), np.ones(40, int)]
    session = AnnotationSession(MA3SAnnotator(n_neighbors=5, classes=[0, 1], aggregation="dawid_skene",
                                              random_state=0), X, store=tmp_path / "s.sqlite")
    for i in range(0, 80, 2):  # two good workers label every other item; a liar labels them too
        session.submit(i, "a", int(truth[i]))
        session.submit(i, "b", int(truth[i]) if i % 10 else 1 - int(truth[i]))
        session.submit(i, "liar", 1 - int(truth[i]))
    labels = session.labels()  # the annotator's aggregation: the session's posterior
    np.testing.assert_array_equal(labels, truth)  # odd items (unlabelled) take their neighbours' label
    assert session.worker_quality()["liar"] < 0.2
    majority = session.labels("majority", ties="missing")
    assert np.isnan(majority[1::2]).all()  # nobody labelled them
    session.close()


def test_majority_ties_are_broken_by_a_seed_or_reported_missing(tmp_path):
    X, _ = _pool(20)
    session = AnnotationSession(MA3SAnnotator(n_neighbors=3, classes=[0, 1], random_state=0), X,
                                store=tmp_path / "s.sqlite")
    session.submit(0, "a", 0)
    session.submit(0, "b", 1)  # a tie
    session.submit(1, "a", 1)
    broken = session.labels("majority")
    assert broken[0] in (0.0, 1.0) and broken[1] == 1.0
    assert np.array_equal(broken, session.labels("majority"), equal_nan=True)  # the same every time
    missing = session.labels("majority", ties="missing")
    assert np.isnan(missing[0]) and missing[1] == 1.0 and np.isnan(missing[2])
    with pytest.raises(ValueError, match="ties must be"):
        session.labels("majority", ties="random")
    with pytest.raises(ValueError, match="Unknown aggregation method 'vote'"):
        session.labels("vote")
    session.close()


def test_next_items_leases_distinct_items_without_double_lease_under_8_threads(tmp_path):
    X, truth = _pool(400)
    session = AnnotationSession(MA3SAnnotator(n_neighbors=5, max_labels_per_sample=1, classes=[0, 1],
                                              random_state=0), X, store=tmp_path / "s.sqlite")
    handed, lock, errors = [], threading.Lock(), []

    def person(name):
        try:
            for _ in range(5):
                items = session.next_items(name, 4, lease_seconds=60)
                assert len(items) == len(set(items)) == 4
                with lock:
                    handed.append((name, items, [(le.item, le.column) for le in _live_leases(session)]))
                for item in items:
                    session.submit(item, name, int(truth[item]))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=person, args=(f"w{k}",)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for name, items, leases in handed:  # 400 unleased items: no item is ever out to two workers
        col = session._columns["s:" + name]
        leased = [item for item, _ in leases]
        assert len(leased) == len(set(leased))
        assert {item for item, c in leases if c == col} >= set(items)
    items = [i for _, batch, _ in handed for i in batch]
    assert len(items) == len(set(items)) == 160  # one label per item: nothing handed twice
    session.close()


def _live_leases(session):
    import time

    with session.store.transaction(write=False):
        return session.store.leases(time.time())


def test_next_item_returns_the_held_item_and_next_items_starts_with_it(tmp_path):
    X, _ = _pool(50)
    session = AnnotationSession(MA3SAnnotator(n_neighbors=3, classes=[0, 1], random_state=0), X,
                                store=tmp_path / "s.sqlite")
    item = session.next_item("a")
    assert session.next_item("a") == item
    batch = session.next_items("a", 3)
    assert batch[0] == item and len(set(batch)) == 3
    assert session.next_items("a", 2) == batch[:2]  # asked again: the held ones
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="n must be a positive integer"):
            session.next_items("a", bad)
    assert not set(session.next_items("b", 5)) & set(batch)  # a's items are not handed to b
    session.close()


def test_bad_quality_parameters_are_clear_errors(tmp_path):
    X, _ = _pool(20)
    ann = MA3SAnnotator(classes=[0, 1])
    with pytest.raises(ValueError, match="min_worker_accuracy"):
        AnnotationSession(ann, X, store=tmp_path / "a.sqlite", min_worker_accuracy=1.5)
    with pytest.raises(ValueError, match="min_worker_labels"):
        AnnotationSession(ann, X, store=tmp_path / "b.sqlite", min_worker_labels=-1)
    with pytest.raises(TypeError, match="gold must be"):
        AnnotationSession(ann, X, store=tmp_path / "c.sqlite", gold=5)


def test_a_version_1_store_is_upgraded_to_several_leases_per_worker(tmp_path):
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE workers (col INTEGER PRIMARY KEY, worker TEXT NOT NULL UNIQUE);
        CREATE TABLE labels (item INTEGER NOT NULL, col INTEGER NOT NULL REFERENCES workers (col),
            label TEXT NOT NULL, seq INTEGER NOT NULL UNIQUE, time REAL NOT NULL,
            n_corrections INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (item, col)) WITHOUT ROWID;
        CREATE TABLE leases (col INTEGER PRIMARY KEY REFERENCES workers (col), item INTEGER NOT NULL,
            expires REAL NOT NULL);
        CREATE TABLE blobs (key TEXT PRIMARY KEY, value BLOB NOT NULL);
        PRAGMA user_version = 1;
    """)
    conn.close()
    X, _ = _pool(30)
    session = AnnotationSession(MA3SAnnotator(n_neighbors=3, classes=[0, 1], random_state=0), X, store=path)
    assert session.store.schema_version() == 2
    assert len(session.next_items("a", 3)) == 3
    session.close()


def test_gold_of_one_class_does_not_pull_every_item_to_it(tmp_path):
    # sparse labels (about one per item) and gold items of one class: the class frequencies must not run away
    X, truth = _pool(400)
    gold = {int(i): 0 for i in np.flatnonzero(truth == 0)[:8]}
    rng = np.random.default_rng(5)
    session = AnnotationSession(MA3SAnnotator(n_neighbors=5, classes=[0, 1], aggregation="dawid_skene",
                                              random_state=0), X, store=tmp_path / "s.sqlite", gold=gold)
    _serve_crowd(session, truth, {"careful": 0.95, "hurried": 0.8, "clicker": -1}, 100, rng)
    quality = session.worker_quality()
    assert quality["careful"] > quality["hurried"] > quality["clicker"]
    assert quality["careful"] - quality["clicker"] > 0.15
    labels = session.labels()
    assert 0.3 < np.mean(labels == 1) < 0.7 and np.mean(labels == truth) > 0.85
    session.close()


def test_the_graph_fold_and_its_full_em_agree():
    codes, truth, _, stream = _fixed_labels(n=200, per_item=2, seed=3)
    X = np.c_[truth + np.random.default_rng(0).normal(0, 0.3, 200), np.zeros(200)]
    graph = MA3SAnnotator(n_neighbors=5, classes=[0, 1]).fit(X, np.full((200, 2), np.nan)).graph_
    online = OnlineDawidSkene(200, 2, graph=graph)
    for item, col, code in stream:
        online.add(item, col, code)
    before = online.accuracy(10).copy()
    online.converge(max_iter=2000, tol=1e-10)
    assert np.abs(online.accuracy(10) - before).max() < 0.05  # the fold tracks its own fixed point
    T, _ = _dawid_skene_codes(codes, 2, smoothing=1.0, confusion_prior=default_confusion_prior(2))
    # features that separate the classes: the graph prior helps where two labels disagree
    assert np.mean(online.T.argmax(1) == truth) > np.mean(T.argmax(1) == truth)


@pytest.mark.parametrize("propagation", ["evidence", "none", "uncertainty"])
def test_new_votes_weighed_as_they_arrive_equal_a_full_reweigh(propagation):
    X, truth = _pool(120)
    rng = np.random.default_rng(6)
    Y = np.full((120, 4), np.nan)
    for i in range(0, 120, 3):
        Y[i, rng.integers(4)] = truth[i]
    weights = np.array([0.0, 0.5, 1.0, 2.5])
    live = MA3SAnnotator(n_neighbors=5, propagation=propagation, classes=[0, 1], random_state=0).fit(X, Y)
    live._set_vote_weights(weights)
    rows = np.arange(1, 120, 3)
    cols = rng.integers(0, 4, rows.size)
    live.update(rows, truth[rows], annotators=cols)
    live._weigh_new_votes(rows, cols, truth[rows])
    Y[rows, cols] = truth[rows]
    whole = MA3SAnnotator(n_neighbors=5, propagation=propagation, classes=[0, 1], random_state=0).fit(X, Y)
    whole._set_vote_weights(weights)
    np.testing.assert_allclose(live.counts_, whole.counts_, atol=1e-12)
    np.testing.assert_allclose(live.uncertainty_, whole.uncertainty_, atol=1e-9)
    np.testing.assert_array_equal(live.query(batch_size=5), whole.query(batch_size=5))
