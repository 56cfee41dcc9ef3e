"""Scale-out on dask: the same results on a real ``distributed.LocalCluster`` as in one process.

One cluster (2 worker processes x 1 thread) serves the whole module. For every registered estimator, a
``GridSearchCV`` over its ``search_grid`` with ``n_jobs=-1`` under ``joblib.parallel_config(backend="dask")``
must give exactly the sequential run's ``cv_results_`` scores and refitted predictions; estimators with an
internal parallel loop (an ``n_jobs`` parameter) must give the same fit on the cluster as in one process
and must really ship work to it.
"""

import ast
import re
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone, is_clusterer
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score, make_scorer
from sklearn.model_selection import GridSearchCV, KFold

distributed = pytest.importorskip("distributed", reason="dask[distributed] is not installed (extra 'distributed')")
joblib = pytest.importorskip("joblib")

from estimator_checks.data import make_task_data  # noqa: E402
from estimator_checks.instances import all_entries  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ENTRIES = all_entries()
IDS = [e.name for e in ENTRIES]
PARALLEL_ENTRIES = [e for e in ENTRIES if "n_jobs" in e.estimator().get_params()]
# A task that cannot be pickled for the workers makes joblib's dask backend wait forever rather than
# raise, so every cluster test has its own bound (pytest-timeout, in the test extra).
HANG_TIMEOUT = pytest.mark.timeout(300)
SCORE_KEY = re.compile(r"^(split\d+_test_score|mean_test_score|std_test_score|rank_test_score)$")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                       silence_logs=40)
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def _search_data(entry):
    if entry.task == "clustering":  # scored against the planted blobs
        return make_blobs(n_samples=60, n_features=4, centers=3, random_state=0)
    return make_task_data(entry.task)


def _search(entry, n_jobs):
    est = entry.instance()
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    scoring = make_scorer(adjusted_rand_score) if is_clusterer(est) else None
    return GridSearchCV(est, entry.search_grid, cv=KFold(3, shuffle=True, random_state=0), scoring=scoring,
                        n_jobs=n_jobs, error_score="raise")


def _fit(est, X, y):
    return est.fit(X) if y is None else est.fit(X, y)


def _outputs(est, X):
    out = {}
    for method in ("predict", "predict_proba", "decision_function", "transform"):
        if hasattr(est, method):
            out[method] = np.asarray(getattr(est, method)(X))
    if hasattr(est, "labels_"):
        out["labels_"] = np.asarray(est.labels_)
    return out


def _assert_same_outputs(a, b, X, name):
    expected, got = _outputs(a, X), _outputs(b, X)
    assert expected, f"{name} has no output to compare"
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        np.testing.assert_array_equal(got[key], value, err_msg=f"{name}.{key} differs on the cluster")


def _n_tasks_run(client, func):
    """Run ``func()`` and return how many tasks the dask scheduler ran meanwhile."""
    with distributed.get_task_stream(client) as stream:
        func()
    return len(stream.data)


@HANG_TIMEOUT
def test_dask_backend_reaches_the_cluster(client):
    """Sanity check of the machinery itself, with a scikit-learn estimator."""
    from sklearn.linear_model import Ridge

    X, y = make_task_data("regression")
    grid = {"alpha": [0.1, 1.0, 10.0]}
    sequential = GridSearchCV(Ridge(), grid, cv=3).fit(X, y)
    on_dask = GridSearchCV(Ridge(), grid, cv=3, n_jobs=-1)
    with joblib.parallel_config(backend="dask"):
        n_tasks = _n_tasks_run(client, lambda: on_dask.fit(X, y))
    assert n_tasks >= 9, "the search did not run on the dask cluster"
    np.testing.assert_array_equal(on_dask.cv_results_["mean_test_score"], sequential.cv_results_["mean_test_score"])


@HANG_TIMEOUT
@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_grid_search_on_dask_equals_sequential(client, entry):
    assert len(entry.search_grid) == 1
    X, y = _search_data(entry)
    sequential = _fit(_search(entry, n_jobs=None), X, y)
    on_dask = _search(entry, n_jobs=-1)
    with joblib.parallel_config(backend="dask"):
        n_tasks = _n_tasks_run(client, lambda: _fit(on_dask, X, y))
    n_candidates = len(next(iter(entry.search_grid.values())))
    assert n_tasks >= 3 * n_candidates, f"{entry.name}: the search did not run on the dask cluster"
    keys = sorted(k for k in sequential.cv_results_ if SCORE_KEY.match(k))
    assert keys and keys == sorted(k for k in on_dask.cv_results_ if SCORE_KEY.match(k))
    for key in keys:
        np.testing.assert_array_equal(on_dask.cv_results_[key], sequential.cv_results_[key],
                                      err_msg=f"{entry.name}: cv_results_[{key!r}] differs on the cluster")
    assert on_dask.cv_results_["params"] == sequential.cv_results_["params"]
    assert on_dask.best_params_ == sequential.best_params_
    _assert_same_outputs(sequential.best_estimator_, on_dask.best_estimator_, X, entry.name)


@pytest.mark.skipif(not PARALLEL_ENTRIES, reason="no registered estimator has an internal parallel loop "
                    "(an n_jobs parameter) yet")
@HANG_TIMEOUT
@pytest.mark.parametrize("entry", PARALLEL_ENTRIES, ids=[e.name for e in PARALLEL_ENTRIES])
def test_internal_parallel_loop_on_dask_equals_sequential(client, entry):
    X, y = _search_data(entry)
    params = {"random_state": 0} if "random_state" in entry.estimator().get_params() else {}
    sequential = _fit(entry.instance(**params, n_jobs=None), X, y)
    on_dask = entry.instance(**params, n_jobs=2)
    with joblib.parallel_config(backend="dask"):
        n_tasks = _n_tasks_run(client, lambda: _fit(on_dask, X, y))
    assert n_tasks >= 1, (f"{entry.name}(n_jobs=2) ran nothing on the dask cluster: its parallel loop does not go "
                          "through sklearn.utils.parallel.Parallel")
    _assert_same_outputs(sequential, on_dask, X, entry.name)
    _assert_same_outputs(sequential, _fit(clone(on_dask), X, y), X, entry.name)  # and again, outside dask


# Parallelism must go through joblib (sklearn.utils.parallel), so that a joblib backend (dask, ray) reaches it.
FORBIDDEN_IMPORTS = {"multiprocessing", "concurrent.futures", "concurrent"}
FORBIDDEN_FROM_JOBLIB = {"Parallel", "delayed"}  # use sklearn.utils.parallel's, which carry the sklearn config


def _source_files():
    for folder in ("sklearn_frontier", "kernels"):
        yield from sorted((ROOT / folder).rglob("*.py"))


def test_no_home_made_process_pools():
    offenders = []
    for path in _source_files():
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                bad = [a.name for a in node.names if a.name.split(".")[0] in FORBIDDEN_IMPORTS]
            elif isinstance(node, ast.ImportFrom) and node.module:
                if node.module.split(".")[0] in FORBIDDEN_IMPORTS:
                    bad = [node.module]
                elif node.module == "joblib":
                    bad = [f"joblib.{a.name}" for a in node.names if a.name in FORBIDDEN_FROM_JOBLIB]
                else:
                    bad = []
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                bad = ["joblib.Parallel"] if (node.value.id, node.attr) == ("joblib", "Parallel") else []
            else:
                bad = []
            offenders += [f"{path.relative_to(ROOT)}:{node.lineno}: {b}" for b in bad]
    assert offenders == [], "use sklearn.utils.parallel.Parallel/delayed instead of:\n" + "\n".join(offenders)


def _backend_in_worker():
    import sklearn_frontier

    return sklearn_frontier.get_config()["backend"]


@pytest.mark.parametrize("prefer", ["threads", "processes"])
def test_parallel_tasks_carry_the_frontier_config(prefer):
    import sklearn_frontier
    from sklearn_frontier.utils._parallel import Parallel, delayed

    with sklearn_frontier.config_context(backend="reference"):
        seen = Parallel(n_jobs=2, prefer=prefer)(delayed(_backend_in_worker)() for _ in range(4))
    assert seen == ["reference"] * 4


def test_internal_loops_use_the_config_carrying_delayed():
    """Every loop of the suite takes delayed from utils._parallel (sklearn's alone drops the kernel backend)."""
    offenders = []
    for path in _source_files():
        if path.name == "_parallel.py":
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        offenders += [f"{path.relative_to(ROOT)}:{node.lineno}" for node in ast.walk(tree)
                      if isinstance(node, ast.ImportFrom) and node.module == "sklearn.utils.parallel"
                      and any(a.name == "delayed" for a in node.names)]
    assert offenders == [], "import delayed from sklearn_frontier.utils._parallel:\n" + "\n".join(offenders)
