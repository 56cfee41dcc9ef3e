"""A labelling service on one SQLite label store: threads and processes serving a crowd through AnnotationSession.

``python -m benchmarks annotation_service [--quick]`` writes ``benchmarks/results/annotation_service.{json,md}``.

Pool: ``make_classification(n_items, 10 features)``, MA3S (``MA3SAnnotator(classes=[0, 1])``). Eight workers,
each answering right with its own probability in [0.55, 0.85] after a short think time while holding the lease.
Two layouts on a fresh store each: 8 threads sharing one session in one process, and 4 processes (2 worker
threads each, one session per process) on the same file. Every worker loops ``next_item`` then ``submit`` until
the layout has made its submits. A monitor samples the live leases of the store (read-only) throughout.

Columns: ``throughput_per_s`` is submits per second of wall time (sessions already open); ``*_p50_ms`` and
``*_p99_ms`` the latencies of ``next_item`` and ``submit`` as the caller sees them (waits for the store's lock
included); ``mean_leased`` the live leases per sample and ``distinct_leased`` the fraction of them on distinct
items (1.0: no item out to two workers); ``double_handouts`` the items a worker was handed while another worker
held them (from the callers' own timestamps); ``duplicate_labels`` the (item, worker) pairs stored twice;
``lost_labels`` the submits that returned but are not in the store; ``errors`` exceptions raised by the service
(a "database is locked" would count here).
"""

import argparse
import multiprocessing
import os
import sqlite3
import tempfile
import threading
import time

import numpy as np
from sklearn.datasets import make_classification

from benchmarks._annotation_backends import run_backends
from benchmarks._annotation_quality import QUALITY_NOTES, quality_checks, quality_rows, submit_latency_rows
from benchmarks._harness import headline_pair, write_results

N_WORKERS = 8
THINK_S = 0.002


def _pool(n_items):
    X, y = make_classification(n_samples=n_items, n_features=10, n_informative=5, n_redundant=0, random_state=0)
    return X, y


def _serve(session, name, n_submits, truth, accuracy, seed, out):
    """One person: ask, think, answer; record latencies and the span the lease was surely held."""
    rng = np.random.default_rng(seed)
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
        except Exception as exc:  # noqa: BLE001 - counted, the benchmark reports every failure
            out["errors"].append(f"{name}: {exc!r}")
            continue
        out["next_item_s"].append(t1 - t0)
        out["submit_s"].append(t3 - t2)
        out["events"].append((int(item), name, got, done))


def _new_out():
    return {"next_item_s": [], "submit_s": [], "events": [], "errors": []}


def _session(path, n_items):
    from sklearn_frontier.annotation import AnnotationSession, MA3SAnnotator

    X, _ = _pool(n_items)
    return AnnotationSession(MA3SAnnotator(classes=[0, 1], random_state=0), X, store=path)


def _run_threads(session, names, per_worker, truth, out):
    threads = [threading.Thread(target=_serve, args=(session, name, per_worker, truth, 0.55 + 0.3 * k / 7, k, out))
               for k, name in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def _process_main(path, n_items, names, per_worker, ready, go, queue):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    _, truth = _pool(n_items)
    session = _session(path, n_items)
    ready.set()
    go.wait()
    out = _new_out()
    _run_threads(session, names, per_worker, truth, out)
    session.close()
    queue.put(out)


class _Monitor(threading.Thread):
    """Samples the store's live leases every few milliseconds through its own read-only connection."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path, self.stop, self.samples = path, threading.Event(), []

    def run(self):
        conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=60)
        while not self.stop.is_set():
            items = [i for (i,) in conn.execute("SELECT item FROM leases WHERE expires > ?", (time.time(),))]
            if items:
                self.samples.append((len(items), len(set(items))))
            time.sleep(0.005)
        conn.close()


def _double_handouts(events):
    by_item, count = {}, 0
    for item, worker, start, stop in events:
        by_item.setdefault(item, []).append((start, stop, worker))
    for spans in by_item.values():
        spans.sort()
        for k, (_, stop, worker) in enumerate(spans):
            count += sum(1 for start, _, other in spans[k + 1:] if start < stop and other != worker)
    return count


def run_layout(layout, n_items, n_submits, folder):
    path = os.path.join(folder, f"{layout}.sqlite")
    _, truth = _pool(n_items)
    per_worker = n_submits // N_WORKERS
    names = [(k, f"worker-{k}") for k in range(N_WORKERS)]
    monitor = _Monitor(path)
    if layout == "8 threads, 1 process":
        session = _session(path, n_items)
        out = _new_out()
        monitor.start()
        start = time.perf_counter()
        _run_threads(session, names, per_worker, truth, out)
        wall = time.perf_counter() - start
        session.close()
    else:
        ctx = multiprocessing.get_context("spawn")
        queue, go = ctx.Queue(), ctx.Event()
        _session(path, n_items).close()  # create the store once, so the processes open the same one
        procs, readies = [], []
        for p in range(4):
            ready = ctx.Event()
            procs.append(ctx.Process(target=_process_main, args=(path, n_items, names[2 * p: 2 * p + 2], per_worker,
                                                                 ready, go, queue)))
            readies.append(ready)
            procs[-1].start()
        for ready in readies:
            ready.wait()
        monitor.start()
        start = time.perf_counter()
        go.set()
        parts = [queue.get() for _ in procs]
        wall = time.perf_counter() - start
        for proc in procs:
            proc.join()
        out = _new_out()
        for part in parts:
            for key in out:
                out[key] += part[key]
    monitor.stop.set()
    monitor.join()
    with sqlite3.connect(path) as conn:
        stored = conn.execute("SELECT l.item, w.worker FROM labels l JOIN workers w ON w.col = l.col").fetchall()
    stored_pairs = {(item, worker.removeprefix("s:")) for item, worker in stored}
    submitted = {(item, worker) for item, worker, _, _ in out["events"]}
    leased = np.array([s[0] for s in monitor.samples] or [0])
    distinct = np.array([s[1] for s in monitor.samples] or [0])
    ms = lambda a, q: 1e3 * float(np.percentile(a, q))  # noqa: E731
    row = {"section": "service", "layout": layout, "n_items": n_items, "n_workers": N_WORKERS,
           "submits": len(out["events"]), "wall_s": wall, "throughput_per_s": len(out["events"]) / wall,
           "next_item_p50_ms": ms(out["next_item_s"], 50), "next_item_p99_ms": ms(out["next_item_s"], 99),
           "submit_p50_ms": ms(out["submit_s"], 50), "submit_p99_ms": ms(out["submit_s"], 99),
           "mean_leased": float(leased.mean()), "distinct_leased": float(distinct.sum() / max(leased.sum(), 1)),
           "double_handouts": _double_handouts(out["events"]), "duplicate_labels": len(stored) - len(stored_pairs),
           "lost_labels": len(submitted - stored_pairs), "errors": len(out["errors"])}
    if out["errors"]:
        print("errors:", out["errors"][:5], flush=True)
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks annotation_service")
    parser.add_argument("--quick", action="store_true", help="2 000 submits on a 2 000-item pool; the worker-quality "
                        "study on 2 seeds, 0 and 1/3 spammers, 2 labels per item")
    args = parser.parse_args(argv)
    n_items, n_submits = (2_000, 2_000) if args.quick else (10_000, 10_000)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for layout in ("8 threads, 1 process", "4 processes x 2 threads"):
            rows.append(run_layout(layout, n_items, n_submits, folder))
            print(rows[-1], flush=True)
    backend_rows, backend_notes = run_backends(n_items, n_submits)  # the same workload on SQLite and PostgreSQL
    rows += backend_rows
    quality, trace = quality_rows(args.quick)
    latency = submit_latency_rows(args.quick)
    checks = [f"{r['layout']}: {r['submits']} submits in {r['wall_s']:.1f} s ({r['throughput_per_s']:.0f}/s); "
              f"p99 next_item {r['next_item_p99_ms']:.1f} ms, submit {r['submit_p99_ms']:.1f} ms; "
              f"{r['mean_leased']:.1f} leases live on average, {100 * r['distinct_leased']:.1f}% on distinct items; "
              f"double handouts {r['double_handouts']}, duplicate labels {r['duplicate_labels']}, lost labels "
              f"{r['lost_labels']}, errors {r['errors']}" for r in rows]
    notes = ("Checks:\n\n" + "\n".join(f"- {c}" for c in checks)
             + f"\n\nEach worker holds its lease for a {1e3 * THINK_S:.0f} ms think time. Every call is one store "
             "transaction (SQLite WAL, BEGIN IMMEDIATE, fsynced commit), and writers take turns on the store's lock "
             "in every layout. In one process the threads also take turns on the session (its lock is held through "
             "the commit and the annotator update) and on the GIL; with a session per process each process also "
             "applies the other processes' labels to its own annotator. Latencies include every wait. Timed on a "
             "2-core machine shared with other jobs, so the two layouts' throughputs differ from run to run.\n\n"
             + backend_notes)
    checks += quality_checks(quality, latency)
    notes = notes.replace("Checks:\n\n", "Checks:\n\n" + "\n".join(f"- {c}" for c in checks[len(rows):]) + "\n", 1)
    notes += "\n\n" + QUALITY_NOTES
    ours = ["session, quality-aware / its own labels()", "session, quality-aware / *",
            "session, quality-aware, no declining / *"]  # the headline, then variants of ours (no baselines)
    head = headline_pair(quality, key="method", ours=ours, metric="accuracy", lower_is_better=False,
                         spam_fraction=0.333, labels_per_item=2)
    print(write_results("annotation_service", rows + quality + trace + latency, notes=notes, headline=head))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
