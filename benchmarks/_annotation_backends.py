"""The labelling service on SQLite and on PostgreSQL, side by side; and a throw-away local PostgreSQL server.

:func:`local_postgres` starts a real server from the binaries the ``pgserver`` wheel ships (the test extra
installs it), in a temporary folder, listening on 127.0.0.1 with password logins; the tests of
:class:`~sklearn_frontier.annotation.PostgreSQLLabelStore` and this benchmark use it. PostgreSQL refuses to run
as root, so under root the server runs as an unprivileged system user (``pgserver``, the user the wheel's own
launcher creates, added with ``useradd`` if absent).

:func:`backend_rows` runs one workload on both stores: 3 processes x 8 worker threads (one session per
process), MA3S on a ``make_classification`` pool, each worker asking ``next_item``, thinking a few milliseconds
while it holds the lease, then calling ``submit``, until the submits are made.
"""

import importlib.util
import multiprocessing
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

PG_USER = "pgserver"  # the unprivileged user pgserver's launcher also uses when started as root
PASSWORD = "s3cret-Pg-pass"  # a throw-away server's superuser password


def postgres_bin():
    """The folder of the PostgreSQL binaries the pgserver wheel ships, or None (with the reason)."""
    spec = importlib.util.find_spec("pgserver")  # found without importing it: its import warns
    if spec is None or spec.origin is None:
        return None, "the pgserver wheel is not installed (pip install 'sklearn-frontier[test]')"
    folder = Path(spec.origin).parent / "pginstall" / "bin"
    if not (folder / "postgres").exists():
        return None, f"the pgserver wheel ships no PostgreSQL binaries for this platform ({folder})"
    return folder, None


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LocalPostgres:
    """A running throw-away server: its folder, port, and how to restart or stop it."""

    folder: Path
    bin: Path
    port: int
    user: str | None  # the system user the server runs as (None: the current one)

    def dsn(self, dbname="postgres", password=PASSWORD):
        return f"postgresql://postgres:{password}@127.0.0.1:{self.port}/{dbname}"

    def _ctl(self, *args, timeout=60):
        subprocess.run([str(self.bin / "pg_ctl"), "-D", str(self.folder / "data"), "-w", "-t", str(timeout), *args],
                       check=True, capture_output=True, timeout=timeout + 10, user=self.user, cwd=self.folder)

    def start(self):
        self._ctl("-l", str(self.folder / "server.log"), "-o",
                  f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.folder / 'socket'}", "start")

    def stop(self, mode="fast"):
        self._ctl("-m", mode, "stop")

    def restart(self):
        """Stop the server, closing every client's connection, and start it again on the same port."""
        self.stop()
        self.start()

    def create_database(self, name):
        import psycopg

        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.dsn(name)


def _runs_as(binaries, user):
    try:
        subprocess.run([str(binaries / "postgres"), "--version"], check=True, capture_output=True, timeout=60,
                       user=user, cwd="/")
    except (OSError, subprocess.SubprocessError):
        return False
    return True


@contextmanager
def local_postgres():
    """Start a throw-away PostgreSQL server in a temporary folder; stop it and delete the folder afterwards."""
    binaries, reason = postgres_bin()
    if binaries is None:
        raise RuntimeError(reason)
    user = None
    if os.geteuid() == 0:
        if shutil.which("useradd") is None:
            raise RuntimeError("running as root, and PostgreSQL refuses root, but there is no useradd to create "
                               f"the {PG_USER!r} user")
        import pwd

        try:
            pwd.getpwnam(PG_USER)
        except KeyError:
            subprocess.run(["useradd", "-M", "-s", "/bin/false", PG_USER], check=True, capture_output=True)
        user = PG_USER
    folder = Path(tempfile.mkdtemp(prefix="pg-"))
    try:
        folder.chmod(0o755)
        if user is not None and not _runs_as(binaries, user):
            # the checkout sits where that user cannot reach (under /root, say): a copy of the install (~30 MB),
            # laid out as in site-packages, since the binaries find their libraries in ../../../pgserver.libs
            site, copy = binaries.parents[2], folder / "install"
            for part in ("pgserver/pginstall/bin", "pgserver/pginstall/lib", "pgserver/pginstall/share",
                         "pgserver.libs"):
                if (site / part).exists():
                    shutil.copytree(site / part, copy / part, symlinks=True)
            binaries = copy / "pgserver" / "pginstall" / "bin"
        (folder / "socket").mkdir()
        (folder / "pw").write_text(PASSWORD + "\n")
        if user is not None:
            for path in (folder, folder / "socket", folder / "pw"):
                shutil.chown(path, user)
        subprocess.run([str(binaries / "initdb"), "-D", str(folder / "data"), "-U", "postgres", "-E", "UTF8",
                        "--auth-local=trust", "--auth-host=scram-sha-256", f"--pwfile={folder / 'pw'}", "--no-sync",
                        "--no-instructions"], check=True, capture_output=True, timeout=120, user=user, cwd=folder)
        server = LocalPostgres(folder, binaries, _free_port(), user)
        server.start()
        try:
            yield server
        finally:
            try:
                server.stop("immediate")
            except subprocess.SubprocessError:
                pass
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# -- the benchmark: one workload on both stores ---------------------------------------------------------------------
N_PROCESSES, N_THREADS, THINK_S = 3, 8, 0.002


def _pool(n_items):
    from sklearn.datasets import make_classification

    return make_classification(n_samples=n_items, n_features=10, n_informative=5, n_redundant=0, random_state=0)


def _session(store, n_items):
    from sklearn_frontier.annotation import AnnotationSession, MA3SAnnotator

    X, _ = _pool(n_items)
    return AnnotationSession(MA3SAnnotator(classes=[0, 1], random_state=0), X, store=store)


def _serve(session, name, n_submits, truth, accuracy, seed, out, lock):
    """One person: ask, think while holding the lease, answer; latencies and when the lease was surely held."""
    rng = np.random.default_rng(seed)
    mine = {"next_item_s": [], "submit_s": [], "events": [], "errors": []}
    for _ in range(n_submits):
        try:
            t0 = time.perf_counter()
            item = session.next_item(name, lease_seconds=600)
            t1 = time.perf_counter()
            if item is None:
                break
            got = time.time()
            time.sleep(THINK_S)
            label = int(truth[item]) if rng.random() < accuracy else 1 - int(truth[item])
            done = time.time()
            t2 = time.perf_counter()
            session.submit(item, name, label)
            t3 = time.perf_counter()
        except Exception as exc:  # noqa: BLE001 - counted: the table reports every failure
            mine["errors"].append(f"{name}: {exc!r}")
            continue
        mine["next_item_s"].append(t1 - t0)
        mine["submit_s"].append(t3 - t2)
        mine["events"].append((int(item), name, got, done))
    with lock:
        for key, values in mine.items():
            out[key] += values


def _process_main(store, n_items, first, n_threads, n_workers, n_submits, ready, go, queue):
    _, truth = _pool(n_items)
    session = _session(store, n_items)
    out, lock = {"next_item_s": [], "submit_s": [], "events": [], "errors": []}, threading.Lock()
    # worker k makes its share of the submits, the first ones one more
    threads = [threading.Thread(target=_serve, args=(session, f"worker-{k}", n_submits // n_workers
                                                     + (k < n_submits % n_workers), truth,
                                                     0.55 + 0.3 * (k % 8) / 7, k, out, lock))
               for k in range(first, first + n_threads)]
    ready.set()
    go.wait()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    session.close()
    queue.put(out)


class _Monitor(threading.Thread):
    """Samples the live leases through a store of its own (read-only transactions) every 20 ms."""

    def __init__(self, store):
        super().__init__(daemon=True)
        self.store, self.stop, self.samples = store, threading.Event(), []

    def run(self):
        while not self.stop.is_set():
            with self.store.transaction(write=False):
                items = [lease.item for lease in self.store.leases(time.time())]
            if items:
                self.samples.append((len(items), len(set(items))))
            time.sleep(0.02)  # 50 samples a second: enough, and light on a shared server


def _double_handouts(events):
    by_item, count = {}, 0
    for item, worker, start, stop in events:
        by_item.setdefault(item, []).append((start, stop, worker))
    for spans in by_item.values():
        spans.sort()
        for k, (_, stop, worker) in enumerate(spans):
            count += sum(1 for start, _, other in spans[k + 1:] if start < stop and other != worker)
    return count


def run_backend(backend, store, open_store, n_items, n_submits, n_processes=N_PROCESSES, n_threads=N_THREADS):
    """The workload on one store (``store``: what the sessions open; ``open_store()``: one for the monitor)."""
    _session(store, n_items).close()  # create the store once, so the processes open the same one
    ctx = multiprocessing.get_context("spawn")
    queue, go = ctx.Queue(), ctx.Event()
    procs, readies = [], []
    for p in range(n_processes):
        readies.append(ctx.Event())
        procs.append(ctx.Process(target=_process_main, args=(store, n_items, p * n_threads, n_threads,
                                                             n_processes * n_threads, n_submits, readies[-1], go,
                                                             queue)))
        procs[-1].start()
    for ready in readies:
        ready.wait()
    monitor = _Monitor(open_store())
    monitor.start()
    start = time.perf_counter()
    go.set()
    parts = [queue.get() for _ in procs]
    wall = time.perf_counter() - start
    for proc in procs:
        proc.join()
    monitor.stop.set()
    monitor.join()
    with monitor.store.transaction(write=False):
        workers, records = monitor.store.workers(), monitor.store.labels_since(0)
    monitor.store.close()
    out = {key: sum((part[key] for part in parts), []) for key in parts[0]}
    stored = [(r.item, workers[r.column].removeprefix("s:")) for r in records]
    submitted = {(item, worker) for item, worker, _, _ in out["events"]}
    leased = np.array([s[0] for s in monitor.samples] or [0])
    distinct = np.array([s[1] for s in monitor.samples] or [0])
    ms = lambda a, q: 1e3 * float(np.percentile(a, q))  # noqa: E731
    if out["errors"]:
        print("errors:", out["errors"][:5], flush=True)
    layout = (f"{backend}: {n_processes} processes x {n_threads} threads" if n_processes * n_threads > 1 else
              f"{backend}: 1 worker alone")
    return {"section": "backends", "layout": layout, "n_items": n_items, "n_workers": n_processes * n_threads,
            "submits": len(out["events"]), "wall_s": wall,
            "throughput_per_s": len(out["events"]) / wall,
            "next_item_p50_ms": ms(out["next_item_s"], 50), "next_item_p99_ms": ms(out["next_item_s"], 99),
            "submit_p50_ms": ms(out["submit_s"], 50), "submit_p99_ms": ms(out["submit_s"], 99),
            "mean_leased": float(leased.mean()), "distinct_leased": float(distinct.sum() / max(leased.sum(), 1)),
            "double_handouts": _double_handouts(out["events"]), "duplicate_labels": len(stored) - len(set(stored)),
            "lost_labels": len(submitted - set(stored)), "errors": len(out["errors"])}


def _LAYOUTS(n_submits):  # noqa: N802 - a table
    """(processes, threads, submits): the crowd, and one worker alone (the store's own cost, nobody to wait for)."""
    return [(N_PROCESSES, N_THREADS, n_submits), (1, 1, max(n_submits // 20, 100))]


def run_backends(n_items, n_submits):
    """The same workload on SQLite and on PostgreSQL (a local throw-away server): ``(rows, notes)``."""
    from sklearn_frontier.annotation import PostgreSQLLabelStore, SQLiteLabelStore

    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for k, (n_processes, n_threads, n) in enumerate(_LAYOUTS(n_submits)):
            path = os.path.join(folder, f"labels{k}.sqlite")
            rows.append(run_backend("SQLite", path, lambda path=path: SQLiteLabelStore(path), n_items, n,
                                    n_processes, n_threads))
            print(rows[-1], flush=True)
    try:
        server = local_postgres()
        running = server.__enter__()
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        skipped = f"The PostgreSQL row is missing: no local server could start ({exc})."
    else:
        skipped = ""
        try:
            for k, (n_processes, n_threads, n) in enumerate(_LAYOUTS(n_submits)):
                dsn = running.create_database(f"labels{k}")
                rows.append(run_backend("PostgreSQL", dsn, lambda dsn=dsn: PostgreSQLLabelStore(dsn), n_items, n,
                                        n_processes, n_threads))
                print(rows[-1], flush=True)
        finally:
            server.__exit__(None, None, None)
    notes = (f"Backends: the same workload on each store, {N_PROCESSES} processes x {N_THREADS} worker threads "
             f"(one session per process), {n_submits} submits on a {n_items}-item pool, {1e3 * THINK_S:.0f} ms "
             "think time per lease; then one worker alone. SQLite: one file on the local disk (WAL, fsynced "
             "commits). PostgreSQL: a throw-away server on the same machine (the pgserver wheel's PostgreSQL, "
             "default settings, fsync and synchronous_commit on), reached over TCP on 127.0.0.1 with a password "
             "login; writers take turns on a transaction-scoped advisory lock. Latencies include every wait (the "
             "store's lock, the session's lock, the GIL); the row of one worker alone shows each store's own cost "
             "with nobody to wait for. Goal for PostgreSQL: p99 submit under 20 ms at this size. The machine (2 "
             "cores) was shared with other jobs while it ran, so throughputs and tails differ from run to run. "
             + skipped).strip()
    return rows, notes
