"""AnnotationSession on its SQLite label store: leases, workers who join late, corrections, durability, resume."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from sklearn_frontier.annotation import (
    AnnotationSession,
    LabelStore,
    MA3SAnnotator,
    RoundRobinAnnotator,
    SimulatedCrowd,
    SQLiteLabelStore,
    run_annotation_loop,
)
from sklearn_frontier.exceptions import StateFileError

ROOT = Path(__file__).resolve().parents[1]


def _pool(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, (X[:, 0] > 0).astype(int)


def _stored_pairs(path):
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT l.item, w.worker, l.label FROM labels l JOIN workers w ON w.col = l.col").fetchall()


def _run_child(code, *args, timeout=120):
    """Run ``code`` in a fresh interpreter (the repository on its path); return its stdout lines."""
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *map(str, args)], cwd=ROOT, timeout=timeout,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


# A process of the service: opens its own session on the shared store, serves its workers one label at a time and
# prints, for each label, the item, the worker, when the lease was surely held (after next_item returned) and when
# it was surely still held (before submit was called).
_SERVICE_PROCESS = """
import json, sys, time
import numpy as np
from sklearn_frontier.annotation import AnnotationSession, MA3SAnnotator
path, names, per_worker = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3])
rng = np.random.default_rng(0)
X = rng.normal(size=(300, 3)); truth = (X[:, 0] > 0).astype(int)
session = AnnotationSession(MA3SAnnotator(n_neighbors=5, classes=[0, 1], random_state=0), X, store=path)
for _ in range(per_worker):
    for name in names:
        item = session.next_item(name, lease_seconds=600)
        got = time.time()
        time.sleep(0.002)  # the person at work
        done = time.time()
        session.submit(item, name, int(truth[item]))
        print(json.dumps([item, name, got, done]), flush=True)
session.close()
"""


def _assert_no_double_handout(events):
    """No item held by two workers at once, no (item, worker) pair twice."""
    pairs = [(item, worker) for item, worker, _, _ in events]
    assert len(set(pairs)) == len(pairs)
    by_item = {}
    for item, worker, start, stop in events:
        by_item.setdefault(item, []).append((start, stop, worker))
    for spans in by_item.values():
        spans.sort()
        for (_, stop, _), (start, _, _) in zip(spans, spans[1:]):
            assert start >= stop, "an item was handed to a second worker while leased"


def test_threads_share_a_session_without_double_handout(tmp_path):
    X, truth = _pool()
    session = AnnotationSession(MA3SAnnotator(n_neighbors=5, classes=[0, 1], random_state=0), X,
                                store=tmp_path / "labels.sqlite")
    events, lock = [], threading.Lock()

    def person(name):
        for _ in range(15):
            item = session.next_item(name)
            got = time.time()
            time.sleep(0.001)
            done = time.time()
            session.submit(item, name, int(truth[item]))
            with lock:
                events.append((item, name, got, done))

    people = [threading.Thread(target=person, args=(f"worker-{k}",)) for k in range(8)]
    for p in people:
        p.start()
    for p in people:
        p.join()
    assert len(events) == 120
    _assert_no_double_handout(events)
    stored = _stored_pairs(tmp_path / "labels.sqlite")
    assert len(stored) == 120 and int(session.annotator.n_labels_.sum()) == 120
    assert sorted(session.workers) == sorted(f"worker-{k}" for k in range(8))
    session.close()


def test_processes_share_a_store_without_double_handout_or_lost_label(tmp_path):
    path = tmp_path / "labels.sqlite"
    children = [subprocess.Popen([sys.executable, "-c", _SERVICE_PROCESS, str(path), f"p{p}a,p{p}b", "10"],
                                 cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for p in range(3)]
    events = []
    for child in children:
        out, err = child.communicate(timeout=180)
        assert child.returncode == 0, err
        assert "locked" not in err
        events += [tuple(json.loads(line)) for line in out.splitlines()]
    assert len(events) == 3 * 2 * 10
    _assert_no_double_handout(events)
    stored = {(item, worker[2:]) for item, worker, _ in _stored_pairs(path)}
    assert stored == {(item, worker) for item, worker, _, _ in events}  # every returned submit is there


_KILLED_PROCESS = """
import sys
import numpy as np
from sklearn_frontier.annotation import AnnotationSession, RoundRobinAnnotator
rng = np.random.default_rng(0)
X = rng.normal(size=(300, 3)); truth = (X[:, 0] > 0).astype(int)
session = AnnotationSession(RoundRobinAnnotator(classes=[0, 1], random_state=0), X, store=sys.argv[1])
k = 0
while True:
    name = "w%d" % (k % 3)
    item = session.next_item(name)
    session.submit(item, name, int(truth[item]))
    print(item, name, flush=True)  # the submit has returned
    k += 1
"""


def test_sigkill_mid_submits_then_reopen_loses_nothing_and_asks_nothing_again(tmp_path):
    path = tmp_path / "labels.sqlite"
    child = subprocess.Popen([sys.executable, "-c", _KILLED_PROCESS, str(path)], cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
    acknowledged = []
    for line in child.stdout:
        item, name = line.split()
        acknowledged.append((int(item), name))
        if len(acknowledged) == 200:
            break
    child.send_signal(signal.SIGKILL)  # somewhere in the next submits
    child.wait()
    X, truth = _pool()
    session = AnnotationSession(RoundRobinAnnotator(classes=[0, 1], random_state=0), X, store=path)
    stored = {(item, worker) for item, worker, _ in _stored_pairs(path)}
    assert {(item, "s:" + name) for item, name in acknowledged} <= stored
    labelled = {name: {item for item, w in stored if w == "s:" + name} for name in ("w0", "w1", "w2")}
    assert int(session.annotator.n_labels_.sum()) == len(stored)
    for _ in range(150):  # the same workers carry on: none of them is handed an item they labelled
        for name in ("w0", "w1", "w2"):
            item = session.next_item(name)
            assert item not in labelled[name]
            labelled[name].add(item)
            session.submit(item, name, int(truth[item]))
    session.close()


def test_reopening_in_a_fresh_process_resumes_exactly(tmp_path):
    path = tmp_path / "labels.sqlite"
    X, truth = _pool()

    def serve(session, n):
        picks = []
        for k in range(n):
            name = f"w{k % 4}"
            item = session.next_item(name)
            session.submit(item, name, int(truth[item]) if k % 5 else 1 - int(truth[item]))
            picks.append(item)
        return picks

    make = lambda: MA3SAnnotator(n_neighbors=5, classes=[0, 1], random_state=3)  # noqa: E731
    whole = AnnotationSession(make(), X, store=tmp_path / "whole.sqlite")
    expected = serve(whole, 80)
    half = AnnotationSession(make(), X, store=path)
    assert serve(half, 40) == expected[:40]
    half.close()
    rest = _run_child("""
        import sys, json
        import numpy as np
        from sklearn_frontier.annotation import AnnotationSession, MA3SAnnotator
        rng = np.random.default_rng(0)
        X = rng.normal(size=(300, 3)); truth = (X[:, 0] > 0).astype(int)
        s = AnnotationSession(MA3SAnnotator(n_neighbors=5, classes=[0, 1]), X, store=sys.argv[1])
        picks = []
        for k in range(40, 80):
            name = "w%d" % (k % 4)
            item = s.next_item(name)
            s.submit(item, name, int(truth[item]) if k % 5 else 1 - int(truth[item]))
            picks.append(item)
        print(json.dumps(picks))
        """, path)
    assert json.loads(rest[-1]) == expected[40:]
    again = AnnotationSession(make(), X, store=path)
    np.testing.assert_array_equal(again.annotator.annotations_, whole.annotator.annotations_)
    # the next selection weighs every stored label by its worker's quality, alike in both
    assert again.next_item("w9") == whole.next_item("w9")
    np.testing.assert_allclose(again.annotator.uncertainty_, whole.annotator.uncertainty_, rtol=0, atol=1e-12)
    assert again.worker_quality() == whole.worker_quality()
    np.testing.assert_array_equal(again.labels(), whole.labels())
    whole.close()
    again.close()


def test_lease_expiry_returns_the_item_to_the_pool(tmp_path):
    X = np.array([[0.0], [1.0]])
    session = AnnotationSession(RoundRobinAnnotator(classes=[0, 1], random_state=0), X, store=tmp_path / "s.db")
    first = session.next_item("a", lease_seconds=0.3)
    second = session.next_item("b")
    assert {first, second} == {0, 1}  # the leased item is not handed out again
    assert session.next_item("a", lease_seconds=0.3) == first  # asking again renews one's lease
    session.submit(second, "b", 0)
    # first has no label (ranked first) but is out on lease: c gets the unleased item
    assert session.next_item("c") == second
    assert session.release(second, "c") and not session.release(second, "c")
    time.sleep(0.35)
    assert session.next_item("c") == first  # the lease expired
    with pytest.raises(ValueError, match="lease_seconds"):
        session.next_item("c", lease_seconds=0)
    session.close()


def test_a_worker_joining_late_and_one_who_labelled_everything(tmp_path):
    X, truth = _pool(n=6)
    session = AnnotationSession(MA3SAnnotator(n_neighbors=2, classes=[0, 1], random_state=0), X,
                                store=tmp_path / "s.db")
    for _ in range(6):
        item = session.next_item("early")
        session.submit(item, "early", int(truth[item]))
    assert session.next_item("early") is None  # never an item one already labelled
    assert session.annotator.n_annotators_ == 1
    seen = set()
    for _ in range(6):  # a newcomer, with an id of another type, joins the running session
        item = session.next_item(("team", 7))
        assert item not in seen
        seen.add(item)
        session.submit(item, ("team", 7), int(truth[item]))
    assert session.workers == ["early", ("team", 7)]
    assert session.annotator.n_annotators_ == 2 and np.all(session.annotator.n_labels_ == 2)
    with pytest.raises(TypeError, match="worker"):
        session.next_item(["not", "hashable"])
    session.close()


def test_corrections_replace_a_label_everywhere(tmp_path):
    X, truth = _pool(n=20)
    path = tmp_path / "s.db"
    session = AnnotationSession(MA3SAnnotator(n_neighbors=3, classes=["cat", "dog"], random_state=0), X,
                                store=path)
    other = AnnotationSession(MA3SAnnotator(n_neighbors=3, classes=["cat", "dog"], random_state=0), X, store=path)
    session.submit(4, "ann", "cat")
    session.submit(4, "ann", "cat")  # a retry of the same answer is a no-op
    with pytest.raises(ValueError, match="correct"):
        session.submit(4, "ann", "dog")
    with pytest.raises(ValueError, match="nothing to correct"):
        session.correct(5, "ann", "dog")
    with pytest.raises(ValueError, match="classes"):
        session.submit(5, "ann", "bird")
    assert other.labels()[4] == "cat"
    session.correct(4, "ann", "dog")
    assert session.labels()[4] == "dog" and other.labels()[4] == "dog"  # the other session reads the correction
    assert session.annotator.n_labels_[4] == 1
    assert _stored_pairs(path) == [(4, "s:ann", '"dog"')]
    session.close()
    other.close()
    again = AnnotationSession(MA3SAnnotator(n_neighbors=3, classes=["cat", "dog"]), X, store=path)
    assert again.labels()[4] == "dog" and again.labels()[0] is np.nan
    again.close()


def test_labels_majority_is_the_vote_and_propagation_is_asked_by_name(tmp_path):
    X, _ = _pool(n=30)
    session = AnnotationSession(MA3SAnnotator(n_neighbors=3, classes=[0, 1], random_state=0), X,
                                store=tmp_path / "s.db")
    for worker, label in (("a", 1), ("b", 1), ("c", 0)):
        session.submit(0, worker, label)
    labels = session.labels()
    assert labels[0] == 1 and np.isnan(labels[1:]).all()
    filled = session.labels("majority_propagated")
    assert filled[0] == 1 and not np.isnan(filled).any()
    session.close()


def test_store_with_a_newer_schema_is_refused(tmp_path):
    path = tmp_path / "s.db"
    X, _ = _pool(n=10)
    AnnotationSession(RoundRobinAnnotator(classes=[0, 1]), X, store=path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(StateFileError, match="version 99") as err:
        AnnotationSession(RoundRobinAnnotator(classes=[0, 1]), X, store=path)
    assert str(path) in str(err.value) and err.value.check == "version"


def test_damaged_database_file_is_a_clear_error_naming_it(tmp_path):
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database" * 200)
    with pytest.raises(StateFileError, match="junk.sqlite"):
        SQLiteLabelStore(junk)
    path = tmp_path / "damaged.sqlite"
    X, truth = _pool()
    session = AnnotationSession(RoundRobinAnnotator(classes=[0, 1]), X, store=path)
    for k in range(300):
        session.submit(k, "w", int(truth[k]))
    session.close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(path.read_bytes())
    assert len(data) > 3 * 4096
    data[4096 + 8: 3 * 4096] = os.urandom(2 * 4096 - 8)  # overwrite pages past the header
    path.write_bytes(bytes(data))
    with pytest.raises(StateFileError, match="damaged.sqlite"):
        AnnotationSession(RoundRobinAnnotator(classes=[0, 1]), X, store=path)


def test_store_remembers_its_pool_and_label_set(tmp_path):
    X, _ = _pool(n=10)
    path = tmp_path / "s.db"
    AnnotationSession(RoundRobinAnnotator(classes=[0, 1]), X, store=path).close()
    with pytest.raises(ValueError, match="another pool"):
        AnnotationSession(RoundRobinAnnotator(classes=[0, 1]), X + 1, store=path)
    with pytest.raises(ValueError, match="another label set"):
        AnnotationSession(RoundRobinAnnotator(classes=[0, 1, 2]), X, store=path)
    with pytest.raises(ValueError, match="classes"):
        AnnotationSession(RoundRobinAnnotator(), X, store=path)
    store = SQLiteLabelStore(path)
    assert isinstance(store, LabelStore)
    with AnnotationSession(RoundRobinAnnotator(classes=[0, 1]), X, store=store) as session:
        with pytest.raises(ValueError, match="out of range"):
            session.submit(10, "w", 0)


_KILLED_LOOP = """
import sys, time
import numpy as np
from sklearn_frontier.annotation import MA3SAnnotator, SimulatedCrowd, run_annotation_loop
rng = np.random.default_rng(0)
X = rng.normal(size=(300, 3)); y = (X[:, 0] > 0).astype(int)
crowd = SimulatedCrowd(y, n_workers=5, random_state=0)

def slow(annotator, info):  # slow enough that the kill lands mid-run
    print(info["n_labels"], flush=True)
    time.sleep(0.02)
    return False

run_annotation_loop(MA3SAnnotator(n_neighbors=5, random_state=0), X, crowd, 900, batch_size=10, y_true=y,
                    store=sys.argv[1], callback=slow)
"""


class _RecordingCrowd:
    """A SimulatedCrowd that remembers every (item, worker) it was asked for."""

    def __init__(self, crowd):
        self.crowd, self.asked = crowd, []
        self.classes_ = crowd.classes_
        self.n_workers = crowd.n_workers

    def label(self, i, annotator=None):
        out = self.crowd.label(i, annotator)
        if out is not None:
            self.asked.append((int(i), int(out[1])))
        return out

    def get_state(self):
        return self.crowd.get_state()

    def set_state(self, state):
        self.crowd.set_state(state)


def test_loop_on_a_store_killed_then_resumed_never_asks_a_stored_label_again(tmp_path):
    path = tmp_path / "loop.sqlite"
    X, y = _pool()
    child = subprocess.Popen([sys.executable, "-c", _KILLED_LOOP, str(path)], cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
    for line in child.stdout:
        if int(line) >= 500:
            break
    child.send_signal(signal.SIGKILL)
    child.wait()
    stored = {(item, int(worker[2:])) for item, worker, _ in _stored_pairs(path)}
    assert 500 <= len(stored) < 900
    crowd = _RecordingCrowd(SimulatedCrowd(y, n_workers=5, random_state=0))
    hist = run_annotation_loop(MA3SAnnotator(n_neighbors=5, random_state=0), X, crowd, 900, batch_size=10, y_true=y,
                               store=path, resume=True)
    assert not set(crowd.asked) & stored
    assert len(crowd.asked) == 900 - len(stored)
    whole = run_annotation_loop(MA3SAnnotator(n_neighbors=5, random_state=0), X,
                                SimulatedCrowd(y, n_workers=5, random_state=0), 900, batch_size=10, y_true=y,
                                store=tmp_path / "whole.sqlite")
    np.testing.assert_array_equal(hist["annotation_matrix"], whole["annotation_matrix"])
    assert hist["n_labels"][-1] == 900
    with pytest.raises(ValueError, match="resume=True"):
        run_annotation_loop(MA3SAnnotator(n_neighbors=5), X, SimulatedCrowd(y, n_workers=5), 900, store=path)
