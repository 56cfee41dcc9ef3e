"""Scale-out: a 48-candidate GridSearchCV sequential vs ``n_jobs=2`` (loky) vs a 2-worker dask LocalCluster.

``python -m benchmarks scaleout [--quick] [--estimator NAME]``. Two workloads:

* ``reference``: scikit-learn's ``SVC`` over 8 ``C`` x 6 ``gamma`` values (stable across suite changes);
* ``suite``: a registered estimator (``--estimator``, else the first non-baseline supervised one whose
  single fit takes 20 ms - 1 s here) over its ``search_grid`` x 24 ``random_state`` values.

Each search uses 3-fold CV (144 fits + the refit). Wall times are medians over repeats after one warm-up
search per mode (loky's worker start and dask's first task shipping are reported apart as the cold time);
the cluster's own start-up is outside every timing. Speed-ups are sequential / mode: on 2 cores expect
about 2x at best. Every mode's ``cv_results_`` must equal the sequential run's exactly.
"""

import argparse
import statistics

import numpy as np

from benchmarks._harness import headline_pair, per_seed_columns, write_results
from benchmarks._timing import Stopwatch, timed

N_CANDIDATES = 48


def _reference_case(quick):
    from sklearn.datasets import make_classification
    from sklearn.svm import SVC

    X, y = make_classification(n_samples=300 if quick else 2000, n_features=20, n_informative=6,
                               random_state=0)
    grid = {"C": list(np.logspace(-2, 3, 8)), "gamma": list(np.logspace(-4, 0, 6))}
    return "reference: SVC (sklearn)", SVC(), grid, X, y


def _fit_time(est, X, y):
    return timed(lambda: est.fit(X) if y is None else est.fit(X, y)).wall_s


def _suite_case(quick, name=None):
    from sklearn.base import clone, is_clusterer

    from estimator_checks.data import make_task_data
    from sklearn_frontier import all_estimators

    entries = all_estimators()
    if name is not None:
        entries = [e for e in entries if e.name == name]
        if not entries:
            raise SystemExit(f"unknown estimator {name!r}; registered: {[e.name for e in all_estimators()]}")
    for entry in entries:
        est = entry.instance()
        if name is None and (entry.baseline or is_clusterer(est) or entry.task == "unsupervised_transform"
                             or not hasattr(est, "score") or "random_state" not in est.get_params()):
            continue
        X, y = make_task_data(entry.task, n_samples=100 if quick else 400, n_features=6)
        try:
            _fit_time(clone(est), X, y)  # warm-up (JIT compilation)
            seconds = _fit_time(clone(est), X, y)
        except Exception as exc:  # a broken estimator is the registry's problem, not this benchmark's
            print(f"skipping {entry.name}: {type(exc).__name__}: {exc}")
            continue
        if name is None and not 0.02 <= seconds <= 1.0:
            continue
        (param, values), = entry.search_grid.items()
        grid = {param: list(values)}
        if "random_state" in est.get_params():
            grid["random_state"] = list(range(N_CANDIDATES // len(values)))
        return f"suite: {entry.name}", est, grid, X, y
    return None


def _search(est, grid, n_jobs):
    from sklearn.model_selection import GridSearchCV, KFold

    return GridSearchCV(est, grid, cv=KFold(3, shuffle=True, random_state=0), n_jobs=n_jobs, error_score="raise")


def _time_mode(est, grid, X, y, n_jobs, backend, repeats):
    import joblib

    def once():
        search = _search(est, grid, n_jobs)
        with joblib.parallel_config(backend=backend) if backend else _nullcontext(), Stopwatch() as sw:
            search.fit(X) if y is None else search.fit(X, y)
        return sw.wall_s, search

    cold, search = once()
    times = [once()[0] for _ in range(repeats)]
    return cold, times, search


class _nullcontext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _run_case(label, est, grid, X, y, repeats, client):
    n_candidates = int(np.prod([len(v) for v in grid.values()]))
    modes = [("sequential", None, None), ("n_jobs=2 (loky)", 2, None)]
    if client is not None:
        modes.append(("dask LocalCluster 2x1", -1, "dask"))
    rows, reference = [], None
    for mode, n_jobs, backend in modes:
        cold, times, search = _time_mode(est, grid, X, y, n_jobs, backend, repeats)
        median = statistics.median(times)
        scores = search.cv_results_["mean_test_score"]
        if reference is None:
            reference = (median, scores)
        rows.append({
            "case": label, "mode": mode, "n_candidates": n_candidates, "n_fits": 3 * n_candidates + 1,
            "n_samples": X.shape[0], "wall_cold_s": cold, "wall_median_s": median,
            # per-repeat times (the per-seed convention's columns for a timing; no seeds)
            **{k: v for k, v in per_seed_columns("wall_median_s", times).items() if k != "wall_median_s"},
            "speedup_vs_sequential": reference[0] / median,
            "identical_cv_results": bool(np.array_equal(scores, reference[1], equal_nan=True)),
        })
        print(f"{label:40s} {mode:24s} cold {cold:7.2f} s  median {median:7.2f} s  "
              f"speed-up {reference[0] / median:5.2f}x")
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks scaleout", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller data, one timed repeat")
    parser.add_argument("--estimator", default=None, help="registered estimator for the suite workload")
    parser.add_argument("--no-dask", action="store_true", help="skip the LocalCluster (dask not installed)")
    args = parser.parse_args(argv)
    repeats = 1 if args.quick else 3

    import threadpoolctl

    threadpoolctl.threadpool_limits(1)  # every mode runs 1 BLAS thread per worker, as the workers do

    client = cluster = None
    if not args.no_dask:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            print("dask[distributed] is not installed: the LocalCluster mode is skipped")
        else:
            cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
            client = Client(cluster)
    try:
        cases = [_reference_case(args.quick)]
        suite = _suite_case(args.quick, args.estimator)
        if suite is not None:
            cases.append(suite)
        else:
            print("no registered estimator fits the suite workload (20 ms - 1 s per fit); reference only")
        rows = [row for case in cases for row in _run_case(*case, repeats=repeats, client=client)]
    finally:
        if client is not None:
            client.close()
            cluster.close()
    import os

    notes = (f"{N_CANDIDATES}-candidate GridSearchCV, 3-fold CV, on {os.cpu_count()} cores; wall times are "
             f"medians of {repeats} search(es) after one warm-up search per mode (the cold column), the "
             "cluster start-up excluded. speedup_vs_sequential = sequential / mode; on 2 cores expect about "
             "2x at best. identical_cv_results: mean_test_score equal to the sequential run's, bit for bit.")
    text = write_results("scaleout", rows, notes=notes, columns=[
        "case", "mode", "n_candidates", "n_fits", "n_samples", "wall_cold_s", "wall_median_s",
        "speedup_vs_sequential", "identical_cv_results"],
        headline=headline_pair(rows, key="mode", ours=["n_jobs=2 (loky)", "dask*"], metric="wall_median_s",
                               case=rows[-1]["case"]))
    print(text)
    return 0 if all(r["identical_cv_results"] for r in rows) else 1
