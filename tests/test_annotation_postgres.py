"""AnnotationSession on PostgreSQLLabelStore, tested against a real PostgreSQL server started for the test session.

The server comes from the pgserver wheel's binaries (test extra), in a temporary folder, with password logins on
127.0.0.1; each test gets a database of its own. The tests skip, with the reason, only where those binaries cannot
run (no wheel for the platform; root without useradd).
"""

import json
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import numpy as np
import pytest

from sklearn_frontier.annotation import (
    AnnotationSession,
    LabelStore,
    MA3SAnnotator,
    PostgreSQLLabelStore,
    RoundRobinAnnotator,
)
from sklearn_frontier.exceptions import StateFileError

psycopg = pytest.importorskip("psycopg", reason="psycopg is in the test extra (pip install -e '.[test]')")

from benchmarks._annotation_backends import PASSWORD, local_postgres  # noqa: E402 - after the skip

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def server():
    try:
        context = local_postgres()
        running = context.__enter__()
    except (RuntimeError, OSError) as exc:
        pytest.skip(f"no local PostgreSQL server: {exc}")
    yield running
    context.__exit__(None, None, None)


def _fresh_schema(server):
    """A new, empty PostgreSQL schema on the shared server, and a URI whose connections work in it."""
    name = "t" + uuid.uuid4().hex[:12]
    with psycopg.connect(server.dsn(), autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{name}"')
    return name, f"{server.dsn()}?options=-csearch_path%3D{name}"


@pytest.fixture
def dsn(server):
    """A store of its own for each test: an empty schema (cheaper than a database) named in the URI."""
    return _fresh_schema(server)[1]


def _pool(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, (X[:, 0] > 0).astype(int)


def _stored_pairs(dsn):
    with psycopg.connect(dsn) as conn:
        return conn.execute("SELECT l.item, w.worker, l.label FROM labels l JOIN workers w ON w.col = l.col").fetchall()


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


_SERVICE_PROCESS = """
import json, sys, time
import numpy as np
from sklearn_frontier.annotation import AnnotationSession, MA3SAnnotator
dsn, names, per_worker = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3])
rng = np.random.default_rng(0)
X = rng.normal(size=(300, 3)); truth = (X[:, 0] > 0).astype(int)
session = AnnotationSession(MA3SAnnotator(n_neighbors=5, classes=[0, 1], random_state=0), X, store=dsn)
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


def test_a_uri_selects_the_store_and_threads_and_processes_share_it(dsn):
    X, truth = _pool()
    session = AnnotationSession(MA3SAnnotator(n_neighbors=5, classes=[0, 1], random_state=0), X, store=dsn)
    assert isinstance(session.store, PostgreSQLLabelStore) and isinstance(session.store, LabelStore)
    children = [subprocess.Popen([sys.executable, "-c", _SERVICE_PROCESS, dsn, f"p{p}a,p{p}b", "8"], cwd=ROOT,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for p in range(3)]
    events, lock = [], threading.Lock()

    def person(name):  # threads of this process, one session among them, while the processes run
        for _ in range(8):
            item = session.next_item(name)
            got = time.time()
            time.sleep(0.001)
            done = time.time()
            session.submit(item, name, int(truth[item]))
            with lock:
                events.append((item, name, got, done))

    people = [threading.Thread(target=person, args=(f"t{k}",)) for k in range(8)]
    for p in people:
        p.start()
    for p in people:
        p.join()
    for child in children:
        out, err = child.communicate(timeout=180)
        assert child.returncode == 0, err
        events += [tuple(json.loads(line)) for line in out.splitlines()]
    assert len(events) == 8 * 8 + 3 * 2 * 8
    _assert_no_double_handout(events)
    stored = {(item, worker[2:]) for item, worker, _ in _stored_pairs(dsn)}
    assert len(stored) == len(events) and stored == {(item, worker) for item, worker, _, _ in events}
    assert int(session.annotator.n_labels_.sum()) <= len(events)
    assert int(np.nansum(session.labels() >= 0)) > 0 and int(session.annotator.n_labels_.sum()) == len(events)
    session.close()


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


def test_sigkill_mid_submits_loses_nothing_acknowledged_and_asks_nothing_again(dsn):
    child = subprocess.Popen([sys.executable, "-c", _KILLED_PROCESS, dsn], cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
    acknowledged = []
    for line in child.stdout:
        item, name = line.split()
        acknowledged.append((int(item), name))
        if len(acknowledged) == 150:
            break
    child.send_signal(signal.SIGKILL)  # somewhere in the next submits
    child.wait()
    X, truth = _pool()
    session = AnnotationSession(RoundRobinAnnotator(classes=[0, 1], random_state=0), X, store=dsn)
    stored = {(item, worker) for item, worker, _ in _stored_pairs(dsn)}
    assert {(item, "s:" + name) for item, name in acknowledged} <= stored
    labelled = {name: {item for item, w in stored if w == "s:" + name} for name in ("w0", "w1", "w2")}
    assert int(session.annotator.n_labels_.sum()) == len(stored)
    for _ in range(60):  # the same workers carry on: none of them is handed an item they labelled
        for name in ("w0", "w1", "w2"):
            item = session.next_item(name)
            assert item not in labelled[name]
            labelled[name].add(item)
            session.submit(item, name, int(truth[item]))
    session.close()


def test_a_second_session_sees_a_label_as_soon_as_submit_returns(dsn):
    X, _ = _pool(n=40)
    make = lambda: AnnotationSession(MA3SAnnotator(n_neighbors=3, classes=["cat", "dog"], random_state=0), X,  # noqa: E731
                                     store=dsn)
    here, there = make(), make()  # two machines: two sessions, two connections
    for k in range(10):
        here.submit(k, "ann", "cat" if k % 2 else "dog")
        assert there.labels()[k] == ("cat" if k % 2 else "dog")
        with psycopg.connect(dsn) as conn:  # and any other client of the database
            assert conn.execute("SELECT count(*) FROM labels").fetchone()[0] == k + 1
    item = there.next_item("bob")
    assert here.next_item("eve") != item  # the lease taken by the other session holds here
    here.correct(3, "ann", "dog")
    assert there.labels()[3] == "dog" and there.annotator.n_labels_[3] == 1
    here.close()
    there.close()


def test_same_picks_and_state_as_the_sqlite_store(dsn, tmp_path):
    """The two stores are interchangeable: one scripted crowd gives the same items, labels and scores on both."""
    X, truth = _pool(n=120)

    def serve(store):
        session = AnnotationSession(MA3SAnnotator(n_neighbors=5, classes=[0, 1], random_state=3), X, store=store)
        picks = []
        for k in range(60):
            name = f"w{k % 4}"
            item = session.next_item(name)
            session.submit(item, name, int(truth[item]) if k % 5 else 1 - int(truth[item]))
            picks.append(item)
        session.correct(picks[0], "w0", int(truth[picks[0]]))
        return session, picks

    lite, lite_picks = serve(tmp_path / "s.sqlite")
    pg, pg_picks = serve(dsn)
    assert pg_picks == lite_picks
    np.testing.assert_array_equal(pg.annotator.annotations_, lite.annotator.annotations_)
    np.testing.assert_array_equal(pg.labels(), lite.labels())
    lite.close()
    pg.close()
    again = AnnotationSession(MA3SAnnotator(n_neighbors=5, classes=[0, 1]), X, store=dsn)  # exact resume
    np.testing.assert_allclose(again.annotator.uncertainty_, lite.annotator.uncertainty_, rtol=0, atol=1e-12)
    again.close()


def test_leases_expire_on_the_server_clock_whatever_the_machine_clock(dsn, monkeypatch):
    X = np.array([[0.0], [1.0], [2.0]])
    session = AnnotationSession(RoundRobinAnnotator(classes=[0, 1], random_state=0), X, store=dsn)
    other = AnnotationSession(RoundRobinAnnotator(classes=[0, 1], random_state=0), X, store=dsn)
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() - 1000.0)  # a machine whose clock is 1000 s behind
    first = session.next_item("slow-clock", lease_seconds=60)
    monkeypatch.setattr(time, "time", real)
    # on the lagging machine's own clock the lease ended 940 s ago; on the server's it has 60 s to go
    second = other.next_item("right-clock", lease_seconds=0.3)
    assert second != first
    (live,) = [lease for lease in _leases(other) if lease.item == first]
    assert 50 < live.expires - real() <= 60
    third = other.next_item("third")
    assert third not in (first, second)
    time.sleep(0.4)
    assert other.next_item("fourth") == second  # that lease did expire, on the same clock
    assert not other.release(first, "fourth")
    session.close()
    other.close()


def _leases(session):
    with session.store.transaction():
        return session.store.leases(time.time())


def test_store_remembers_its_pool_and_label_set_and_never_shows_the_password(dsn):
    X, _ = _pool(n=10)
    AnnotationSession(RoundRobinAnnotator(classes=[0, 1]), X, store=dsn).close()
    with pytest.raises(ValueError, match="another pool") as err:
        AnnotationSession(RoundRobinAnnotator(classes=[0, 1]), X + 1, store=dsn)
    assert "postgresql://postgres@127.0.0.1" in str(err.value) and PASSWORD not in str(err.value)
    with pytest.raises(ValueError, match="another label set"):
        AnnotationSession(RoundRobinAnnotator(classes=[0, 1, 2]), X, store=dsn)
    store = PostgreSQLLabelStore(dsn)
    assert PASSWORD not in repr(store) and PASSWORD not in store.path
    with AnnotationSession(RoundRobinAnnotator(classes=[0, 1]), X, store=store) as session:
        with pytest.raises(ValueError, match="out of range"):
            session.submit(10, "w", 0)


def _message(err):
    """The error as a user sees it: its text and everything chained to it."""
    texts, exc = [], err.value
    while exc is not None:
        texts.append(f"{type(exc).__name__}: {exc}")
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    return "\n".join(texts)


def test_refused_connection_and_wrong_password_are_clear_errors_without_the_password(server, dsn):
    X, _ = _pool(n=10)
    wrong = dsn.replace(PASSWORD, "Wr0ng-Pa55word")
    with pytest.raises(ConnectionError, match="password authentication failed") as err:
        AnnotationSession(RoundRobinAnnotator(classes=[0, 1]), X, store=wrong)
    assert f"127.0.0.1:{server.port}" in str(err.value) and "Wr0ng-Pa55word" not in _message(err)
    with socket_nobody_listens() as port:
        refused = dsn.replace(f":{server.port}/", f":{port}/")
        with pytest.raises(ConnectionError, match=f"label store postgresql://postgres@127.0.0.1:{port}/") as err:
            PostgreSQLLabelStore(refused, timeout=5)
    assert PASSWORD not in _message(err)
    with pytest.raises(ValueError, match="not a valid PostgreSQL connection string") as err:
        PostgreSQLLabelStore(f"postgresql://postgres:{PASSWORD}@@host:x:y/db?bad param")
    assert PASSWORD not in _message(err)


class socket_nobody_listens:  # noqa: N801 - a context manager read as a phrase
    """A local port bound by nobody listening (connections to it are refused)."""

    def __enter__(self):
        import socket

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))  # bound, not listening: nothing else takes the port meanwhile
        return self.sock.getsockname()[1]

    def __exit__(self, *exc):
        self.sock.close()


def test_a_store_of_another_layout_or_foreign_tables_is_refused(server, dsn):
    X, _ = _pool(n=10)
    AnnotationSession(RoundRobinAnnotator(classes=[0, 1]), X, store=dsn).close()
    with psycopg.connect(dsn) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'label_store_schema_version'")
    with pytest.raises(StateFileError, match="version 99") as err:
        AnnotationSession(RoundRobinAnnotator(classes=[0, 1]), X, store=dsn)
    assert err.value.check == "version" and "postgresql://postgres@" in str(err.value)
    assert PASSWORD not in _message(err)
    schema, foreign = _fresh_schema(server)
    with psycopg.connect(foreign) as conn:
        conn.execute("CREATE TABLE labels (id serial PRIMARY KEY, name text)")
    with pytest.raises(StateFileError, match="something other than a label store") as err:
        PostgreSQLLabelStore(foreign)
    assert err.value.check == "database"
    with psycopg.connect(foreign) as conn:  # nothing was added there
        tables = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,)).fetchall()
    assert tables == [("labels",)]
    team = "team_" + schema
    store = PostgreSQLLabelStore(foreign, schema=team)  # a schema of its own in the same database
    assert store.schema_version() >= 1 and f"schema {team}" in store.path
    store.close()


def test_server_restart_while_sessions_are_open_then_the_next_call_reconnects(server, dsn):
    X, truth = _pool(n=50)
    session = AnnotationSession(RoundRobinAnnotator(classes=[0, 1], random_state=0), X, store=dsn)
    other = AnnotationSession(RoundRobinAnnotator(classes=[0, 1], random_state=0), X, store=dsn)
    item = session.next_item("a")
    server.restart()  # every open connection is closed by the server
    session.submit(item, "a", int(truth[item]))  # reconnects
    assert other.labels()[item] == truth[item]  # so does the other session
    server.stop()
    with pytest.raises(ConnectionError, match="label store postgresql://postgres@") as err:
        session.next_item("b")
    assert PASSWORD not in _message(err)
    server.start()
    nxt = session.next_item("b")  # the call after succeeds
    assert nxt is not None and nxt != item
    session.submit(nxt, "b", int(truth[nxt]))
    assert sorted(r[0] for r in _stored_pairs(dsn)) == sorted([item, nxt])
    session.close()
    other.close()


def test_connection_lost_mid_transaction_writes_nothing_and_the_next_call_works(dsn):
    store = PostgreSQLLabelStore(dsn)
    pid = store._conn.info.backend_pid
    with pytest.raises(ConnectionError, match="rolled back: nothing of it was written") as err:
        with store.transaction():
            store.add_worker("s:half")
            with psycopg.connect(dsn, autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
            store.add_worker("s:other")
    assert "postgresql://postgres@" in str(err.value) and PASSWORD not in _message(err)
    with store.transaction():
        assert store.workers() == []  # nothing half-written
        assert store.add_worker("s:whole") == 0
    assert store.workers() == ["s:whole"]
    with pytest.raises(RuntimeError, match="do not nest"):
        with store.transaction():
            with store.transaction():
                pass
    with store.transaction():  # the outer one was rolled back, and the store works on
        assert store.add_worker("s:next") == 1
    store.close()
    with pytest.raises(ValueError, match="closed"):
        with store.transaction():
            pass


def test_missing_driver_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(ImportError, match=re.escape("sklearn-frontier[annotation-server]")):
        PostgreSQLLabelStore("postgresql://labeller@db.example.org/labels")


def _guide_snippet():
    text = (ROOT / "docs" / "guide" / "annotation.rst").read_text()
    section = text.split("A team on several machines: PostgreSQL\n", 1)[1]
    block = re.search(r"::\n\n((?:(?: {4}.*)?\n)+)", section).group(1)
    return "\n".join(line[4:] for line in block.splitlines())


def test_the_guide_example_runs_against_a_server(dsn):
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    snippet = _guide_snippet()
    assert 'store="postgresql://' in snippet
    snippet = re.sub(r'store="postgresql://[^"]+"', f"store={dsn!r}", snippet)
    X, y = load_breast_cancer(return_X_y=True)
    namespace = {"X": StandardScaler().fit_transform(X), "y": y, "AnnotationSession": AnnotationSession,
                 "MA3SAnnotator": MA3SAnnotator}
    exec(compile(snippet, "docs/guide/annotation.rst[PostgreSQL]", "exec"), namespace)  # noqa: S102
    assert len(_stored_pairs(dsn)) == 1


def test_a_writer_that_waited_for_the_lock_sees_what_the_one_before_committed(dsn):
    """The counts a transaction starts from are read after the lock is held, never from before the wait."""
    first, second = PostgreSQLLabelStore(dsn), PostgreSQLLabelStore(dsn)
    with first.transaction():  # a worker and a label the second store has not seen yet
        first.add_label(0, first.add_worker("s:a"), "1", when=0.0)
    with second.transaction():
        assert second.workers() == ["s:a"]
    seen, started = {}, threading.Event()

    def wait_then_read():
        started.set()
        with second.transaction():  # blocks on the lock while the first store writes
            seen["workers"], seen["labels"] = second.workers(), second.labels_since(1)
            seen["seq"] = second.add_label(1, 0, "0", when=0.0)

    with first.transaction():
        waiter = threading.Thread(target=wait_then_read)
        waiter.start()
        started.wait()
        time.sleep(0.3)  # the waiter is queued on the advisory lock by now
        column = first.add_worker("s:b")
        seq = first.add_label(5, column, "0", when=0.0)
    waiter.join()
    assert seen["workers"] == ["s:a", "s:b"]
    assert [(r.item, r.column, r.seq) for r in seen["labels"]] == [(5, 1, seq)]
    assert seen["seq"] == seq + 1  # numbered after the label committed while it waited
    with first.transaction(write=False):
        assert [r.seq for r in first.labels_since(0)] == [1, 2, 3]
    first.close()
    second.close()


def test_worker_quality_gold_and_batch_leases_live_in_the_store(dsn, tmp_path):
    """What the session keeps beyond labels is in the store too: two machines agree, a reopened session as well."""
    X, truth = _pool(n=60)
    gold = {i: int(truth[i]) for i in range(4)}
    make = lambda store, **kw: AnnotationSession(MA3SAnnotator(n_neighbors=5, classes=[0, 1], random_state=0),  # noqa: E731
                                                 X, store=store, **kw)

    def crowd(here, there):
        for k in range(40):
            session, name = (here, "good") if k % 2 else (there, "sloppy")
            item = session.next_item(name)
            answer = int(truth[item]) if name == "good" or k % 3 else 1 - int(truth[item])
            session.submit(item, name, answer)

    here, there = make(dsn, gold=gold, gold_per_worker=2), make(dsn)  # the second reads the stored gold
    crowd(here, there)
    quality = here.worker_quality()
    assert there.worker_quality() == quality and quality["good"] > quality["sloppy"]
    batch = there.next_items("good", 3)  # workers past their gold: a batch leased on one machine is not
    assert len(set(batch)) == 3 and not set(batch) & set(here.next_items("sloppy", 3))  # handed out on another
    here.close()
    there.close()
    again = make(dsn)  # replayed from the label log
    assert again.worker_quality() == quality and again._gold_codes == gold
    again.close()
    lite_here = make(tmp_path / "s.sqlite", gold=gold, gold_per_worker=2)
    lite_there = make(tmp_path / "s.sqlite")
    crowd(lite_here, lite_there)
    assert lite_here.worker_quality() == quality  # the same crowd on SQLite: the same estimates
    lite_here.close()
    lite_there.close()


def test_a_layout_1_store_is_upgraded_like_sqlite(dsn):
    X, _ = _pool(n=10)
    AnnotationSession(RoundRobinAnnotator(classes=[0, 1]), X, store=dsn).close()
    with psycopg.connect(dsn) as conn:  # back to layout 1: one lease per worker
        conn.execute("DROP TABLE leases")
        conn.execute("CREATE TABLE leases (col INTEGER PRIMARY KEY REFERENCES workers (col), item INTEGER NOT NULL, "
                     "expires DOUBLE PRECISION NOT NULL)")
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'label_store_schema_version'")
    session = AnnotationSession(RoundRobinAnnotator(classes=[0, 1]), X, store=dsn)
    assert session.store.schema_version() == 2
    assert len(set(session.next_items("w", 2))) == 2  # two leases of one worker: the (worker, item) key
    session.close()
