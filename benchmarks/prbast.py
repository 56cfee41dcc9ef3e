"""PR-BAST vs BAST (and Euclidean baselines) on constrained domains: ``python -m benchmarks prbast [--quick]``.

Datasets: the mgcv horseshoe (Ramsay 2002; Wood et al. 2008; f = a b + d^2, noise 0.3) and BAMDT's rotated U
with jumps (noise 0.1). Metrics: RMSE of the posterior mean vs the noiseless truth (primary), 95% predictive
coverage of y and credible coverage of f with mean widths, fit time; mean ± sd over seeds, identical splits.
Also the time per sweep against n (M = 30) and its log-log slope, and a component/prior ablation.
"""

import argparse
import statistics
import sys
import time
import warnings

import numpy as np

from benchmarks._harness import headline_pair, write_results


def _data(name, seed, n_train):
    from sklearn_frontier.datasets._spanning_trees import horseshoe_boundary, make_horseshoe, make_rotated_u

    if name == "horseshoe":
        X, y, _ = make_horseshoe(n_train, noise=0.3, random_state=seed)
        Xt, yt, ft = make_horseshoe(1000, noise=0.3, random_state=10_000 + seed)
        return X, y, Xt, yt, ft, horseshoe_boundary(40), 0.3
    if name == "slit_annulus":
        from sklearn_frontier.datasets._spanning_trees import make_slit_annulus

        X, y, _, boundary = make_slit_annulus(n_train, noise=0.2, random_state=seed)
        Xt, yt, ft, _ = make_slit_annulus(1000, noise=0.2, random_state=10_000 + seed)
        return X, y, Xt, yt, ft, boundary, 0.2
    X, y, _, Xt, ft, boundary = make_rotated_u(n_train, 200, noise=0.1, random_state=seed)
    yt = ft + 0.1 * np.random.default_rng(seed).normal(size=ft.shape[0])
    return X, y, Xt, yt, ft, boundary, 0.1


def _estimators(boundary, seed, quick, which):
    from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel
    from sklearn.neighbors import KNeighborsRegressor

    from sklearn_frontier.spanning_trees import BASTRegressor, PRBASTRegressor, RoutedField

    f = 0.3 if quick else 1.0
    sweeps = dict(n_iter=int(1000 * f), n_burnin=int(300 * f))
    out = {
        "PRBAST": lambda: PRBASTRegressor(domain=boundary, random_state=seed, **sweeps),
        "BAST": lambda: BASTRegressor(domain=boundary, random_state=seed, n_iter=int(1500 * f), n_burnin=int(500 * f)),
        "BAST barycentric predict": lambda: BASTRegressor(domain=boundary, random_state=seed,
                                                          predict_weighting="barycentric",
                                                          n_iter=int(1500 * f), n_burnin=int(500 * f)),
        "PRBAST uniform predict": lambda: PRBASTRegressor(domain=boundary, random_state=seed,
                                                          predict_weighting="uniform", attachment="random",
                                                          **sweeps),
        "PRBAST routed tau2=0.5": lambda: PRBASTRegressor(component=RoutedField(), domain=boundary,
                                                          random_state=seed, **sweeps),
        "PRBAST M=10": lambda: PRBASTRegressor(n_trees=10, domain=boundary, random_state=seed, **sweeps),
        "PRBAST M=50": lambda: PRBASTRegressor(n_trees=50, domain=boundary, random_state=seed, **sweeps),
        "PRBAST random_mst": lambda: PRBASTRegressor(tree_prior="random_mst", domain=boundary, random_state=seed,
                                                     **sweeps),
        "PRBAST distance weights": lambda: PRBASTRegressor(predict_weighting="distance", domain=boundary,
                                                           random_state=seed, **sweeps),
        "GP Matern (Euclidean)": lambda: GaussianProcessRegressor(
            ConstantKernel() * Matern(nu=2.5) + WhiteKernel(), normalize_y=True, random_state=seed),
        "HistGB": lambda: HistGradientBoostingRegressor(random_state=seed),
        "RandomForest": lambda: RandomForestRegressor(500 if not quick else 200, min_samples_leaf=2,
                                                      random_state=seed, n_jobs=1),
        "kNN": lambda: KNeighborsRegressor(8, weights="distance"),
    }
    return {k: v for k, v in out.items() if k in which}


def _evaluate_fitted(est, Xt, yt, ft, fitted_row):
    return _evaluate(None, est, None, None, Xt, yt, ft, refit=False, times=(fitted_row["fit_s"],
                                                                              fitted_row["fit_cpu_s"]))


def _evaluate(label, est, X, y, Xt, yt, ft, refit=True, times=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start, cpu = time.perf_counter(), time.process_time()
        if refit:
            est.fit(X, y)
        fit_time, fit_cpu = time.perf_counter() - start, time.process_time() - cpu
        if times is not None:
            fit_time, fit_cpu = times
        pred = est.predict(Xt)
        row = {"rmse": float(np.sqrt(np.mean((pred - ft) ** 2))), "mspe": float(np.mean((pred - yt) ** 2)),
               "fit_s": fit_time, "fit_cpu_s": fit_cpu}
        if hasattr(est, "predict_interval"):
            lo, hi = est.predict_interval(Xt, kind="prediction").T
            row.update(cover_y=float(np.mean((yt >= lo) & (yt <= hi))), width_y=float(np.mean(hi - lo)))
            lo, hi = est.predict_interval(Xt, kind="credible").T
            row.update(cover_f=float(np.mean((ft >= lo) & (ft <= hi))), width_f=float(np.mean(hi - lo)))
            row["sigma"] = float(est.sigma_)
        elif hasattr(est, "kernel_"):
            mu, sd = est.predict(Xt, return_std=True)
            row.update(cover_y=float(np.mean(np.abs(yt - mu) <= 1.96 * sd)), width_y=float(np.mean(2 * 1.96 * sd)))
    return row


def _summary(rows, keys=("rmse", "mspe", "cover_y", "width_y", "cover_f", "width_f", "fit_s", "fit_cpu_s")):
    out = []
    groups = {}
    for r in rows:
        groups.setdefault((r["case"], r["estimator"]), []).append(r)
    for (case, est), rs in groups.items():
        s = {"case": case, "estimator": est, "n_seeds": len(rs)}
        for k in keys:
            vals = [r[k] for r in rs if k in r]
            if vals:
                s[k] = f"{statistics.mean(vals):.4g} ± {statistics.stdev(vals) if len(vals) > 1 else 0.0:.2g}"
        out.append(s)
    return out


def sweep_timing(ns, n_trees=30, n_sweeps=20):
    """Seconds per sweep of PR-BAST (M = n_trees) on uniform points in the unit square (no domain)."""
    from sklearn_frontier.spanning_trees import PRBASTRegressor

    rows = []
    PRBASTRegressor(n_trees=2, n_iter=3, n_burnin=1, thin=1, random_state=0).fit(np.random.rand(20, 2),
                                                                                 np.random.rand(20))
    for n in ns:
        rng = np.random.default_rng(n)
        X = rng.random((n, 2))
        y = np.sin(4 * X[:, 0]) + 0.1 * rng.normal(size=n)
        est = PRBASTRegressor(n_trees=n_trees, n_iter=n_sweeps + 1, n_burnin=n_sweeps, thin=1, random_state=0)
        start = time.process_time()  # CPU seconds: the build machines are shared
        est.fit(X, y)
        total = time.process_time() - start
        # graph time measured separately so the per-sweep figure is the MCMC alone
        from sklearn_frontier.spanning_trees import build_domain_graph

        start = time.process_time()
        build_domain_graph(X)
        graph_s = time.process_time() - start
        rows.append({"n": n, "sweep_s": (total - graph_s) / (n_sweeps + 1), "graph_s": graph_s})
    ln = np.log([r["n"] for r in rows])
    lt = np.log([r["sweep_s"] for r in rows])
    slope = float(np.polyfit(ln, lt, 1)[0]) if len(rows) > 1 else float("nan")
    return rows, slope


def _ratio_notes(rows):
    notes = []
    for case in sorted({r["case"] for r in rows}):
        bast = {r["seed"]: r["rmse"] for r in rows if r["case"] == case and r["estimator"] == "BAST"}
        labels = sorted({r["estimator"] for r in rows if r["case"] == case} - {"BAST"})
        for label in labels:
            ratios = [r["rmse"] / bast[r["seed"]] for r in rows
                      if r["case"] == case and r["estimator"] == label and r["seed"] in bast]
            if ratios:
                notes.append(f"- {case}: RMSE({label}) / RMSE(BAST) = {statistics.mean(ratios):.3f} (per seed "
                             f"{', '.join(f'{x:.3f}' for x in ratios)}; below 1 on {sum(x < 1 for x in ratios)}"
                             f"/{len(ratios)})")
    return notes


def _write_partial(name, rows):
    """Per-seed rows so far (a long run stopped early still leaves complete seeds behind)."""
    import json

    from benchmarks._harness import RESULTS

    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.partial.json").write_text(json.dumps({"per_seed": rows}, indent=2, default=float))


def _merge(names, out_name):
    import json

    from benchmarks._harness import RESULTS

    rows, timing, notes, slope = [], [], [], float("nan")
    for name in names:
        path = RESULTS / f"{name}.json"
        if not path.exists():
            path = RESULTS / f"{name}.partial.json"
            print(f"{name}: using the partial per-seed results", file=sys.stderr)
        payload = json.loads(path.read_text())
        payload.setdefault("rows", [])
        rows += payload.get("per_seed", [])
        timing += [r for r in payload["rows"] if r.get("case") in ("timing", "curve")]
        notes += [line for line in payload.get("notes", "").splitlines() if line]
        per = payload.get("per_seed", [])
        for case in sorted({r["case"] for r in per}):
            bast = {r["seed"]: r["rmse"] for r in per if r["case"] == case and r["estimator"] == "BAST"}
            if not payload.get("notes"):
                for label in sorted({r["estimator"] for r in per if r["case"] == case} - {"BAST"}):
                    ratios = [r["rmse"] / bast[r["seed"]] for r in per
                              if r["case"] == case and r["estimator"] == label and r["seed"] in bast]
                    if ratios:
                        notes.append(f"- {case}: RMSE({label}) / RMSE(BAST) = {statistics.mean(ratios):.3f} "
                                     f"(per seed {', '.join(f'{x:.3f}' for x in ratios)}; below 1 on "
                                     f"{sum(x < 1 for x in ratios)}/{len(ratios)})")
        if np.isfinite(payload.get("sweep_slope", float("nan"))):
            slope = payload["sweep_slope"]
    seen, unique = set(), []
    for r in rows:  # a seed run twice (split runs) counts once
        key = (r["case"], r["estimator"], r["seed"])
        if key not in seen:
            seen.add(key)
            unique.append(r)
    rows = unique
    notes = _ratio_notes(rows) + [line for line in notes if "time per sweep" in line]
    text = write_results(out_name, _summary(rows) + timing, command="python -m benchmarks prbast (merged: "
                         + ", ".join(names) + ")", notes="\n".join(notes),
                         headline=headline_pair(_summary(rows), key="estimator", ours=["PRBAST", "PRBAST *"],
                                                cost="fit_s", seeds="n_seeds", metric="rmse", case="horseshoe"),
                         columns=["case", "estimator", "n_seeds", "rmse", "mspe", "cover_y", "width_y", "cover_f",
                                  "width_f", "fit_s", "fit_cpu_s", "n", "sweep_s", "n_iter"])
    payload = json.loads((RESULTS / f"{out_name}.json").read_text())
    payload["per_seed"] = rows
    payload["sweep_slope"] = slope
    (RESULTS / f"{out_name}.json").write_text(json.dumps(payload, indent=2, default=float))
    print(text)
    return 0


def _curves(args):

    from sklearn_frontier.spanning_trees import BASTRegressor, PRBASTRegressor

    rows, notes = [], []
    n_seeds = args.seeds or 3
    for n_iter in (250, 500, 1000, 2000):
        for label in ("PRBAST", "BAST"):
            rmse, cpu = [], []
            for seed in range(n_seeds):
                X, y, Xt, yt, ft, boundary, _ = _data("horseshoe", seed, 500)
                Est = PRBASTRegressor if label == "PRBAST" else BASTRegressor
                est = Est(domain=boundary, n_iter=n_iter, n_burnin=n_iter // 3, random_state=seed)
                r = _evaluate(label, est, X, y, Xt, yt, ft)
                rmse.append(r["rmse"])
                cpu.append(r["fit_cpu_s"])
                print(label, n_iter, seed, r["rmse"], r["fit_cpu_s"], flush=True)
            rows.append({"case": "curve", "estimator": label, "n_iter": n_iter, "n_seeds": n_seeds,
                         "rmse": f"{statistics.mean(rmse):.4g} ± {statistics.stdev(rmse):.2g}",
                         "fit_cpu_s": f"{statistics.mean(cpu):.3g}"})
    notes.append("- curve: horseshoe n = 500, n_burnin = n_iter // 3, both at their default n_trees = 30; "
                 "fit_cpu_s is CPU seconds (shared machine)")
    text = write_results(args.name, rows, command="python -m benchmarks prbast --curves", notes="\n".join(notes),
                         columns=["case", "estimator", "n_iter", "n_seeds", "rmse", "fit_cpu_s"])
    print(text)
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks prbast")
    parser.add_argument("--quick", action="store_true", help="0.3x sweeps, 3 seeds, fewer baselines")
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument("--seed-start", type=int, default=0)
    parser.add_argument("--cases", default="horseshoe,rotated_u,slit_annulus")
    parser.add_argument("--estimators", default=None, help="comma-separated labels")
    parser.add_argument("--ablation", action="store_true", help="add the PR-BAST variants")
    parser.add_argument("--timing", default="500,1000,2000,5000,10000,20000,50000")
    parser.add_argument("--name", default="prbast")
    parser.add_argument("--merge", default=None, help="comma-separated result names to merge into --name")
    parser.add_argument("--curves", action="store_true", help="RMSE vs sweeps (n_iter 250..2000), horseshoe")
    args = parser.parse_args(argv)
    if args.merge:
        return _merge(args.merge.split(","), args.name)
    if args.curves:
        return _curves(args)
    n_seeds = args.seeds or (3 if args.quick else 5)
    which = ["PRBAST", "BAST", "BAST barycentric predict", "PRBAST uniform predict", "GP Matern (Euclidean)",
             "HistGB", "RandomForest", "kNN"]
    if args.ablation:
        which += ["PRBAST routed tau2=0.5", "PRBAST M=10", "PRBAST M=50", "PRBAST random_mst",
                  "PRBAST distance weights"]
    if args.estimators:
        which = args.estimators.split(",")
    rows = []
    cases = [c for c in args.cases.split(",") if c]
    for case in cases:
        for seed in range(args.seed_start, args.seed_start + n_seeds):
            X, y, Xt, yt, ft, boundary, _ = _data(case, seed, 500)
            for label, make in _estimators(boundary, seed, args.quick, which).items():
                if label in ("PRBAST uniform predict", "BAST barycentric predict"):
                    continue  # evaluated on the PRBAST / BAST chains below
                est = make()
                row = {"case": case, "estimator": label, "seed": seed, **_evaluate(label, est, X, y, Xt, yt, ft)}
                rows.append(row)
                print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()}, flush=True)
                # prediction-rule ablation on the same chains (no refit): is the gain the model or the rule?
                variants = {"PRBAST": ("PRBAST uniform predict",
                                       dict(predict_weighting="uniform", attachment="random")),
                            "BAST": ("BAST barycentric predict", dict(predict_weighting="barycentric"))}
                if label in variants and variants[label][0] in which:
                    name, params = variants[label]
                    est.set_params(**params)
                    row = {"case": case, "estimator": name, "seed": seed,
                           **_evaluate_fitted(est, Xt, yt, ft, rows[-1])}
                    rows.append(row)
                    print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()}, flush=True)
            _write_partial(args.name, rows)
    summary = _summary(rows) if rows else []
    # ratios vs BAST per seed
    notes = []
    for case in cases:
        bast = {r["seed"]: r["rmse"] for r in rows if r["case"] == case and r["estimator"] == "BAST"}
        for label in which:
            ratios = [r["rmse"] / bast[r["seed"]] for r in rows
                      if r["case"] == case and r["estimator"] == label and r["seed"] in bast]
            if ratios and label != "BAST":
                wins = sum(x < 1 for x in ratios)
                notes.append(f"- {case}: RMSE({label}) / RMSE(BAST) = {statistics.mean(ratios):.3f} "
                             f"(per seed {', '.join(f'{x:.3f}' for x in ratios)}; below 1 on {wins}/{len(ratios)})")
    timing_rows, slope = ([], float("nan"))
    if args.timing:
        ns = [int(x) for x in args.timing.split(",") if x]
        timing_rows, slope = sweep_timing(ns)
        notes.append(f"- time per sweep (M = 30), log-log slope {slope:.3f}: "
                     + ", ".join(f"n={r['n']}: {1e3 * r['sweep_s']:.1f} ms" for r in timing_rows))
    text = write_results(args.name, summary + [{"case": "timing", "estimator": "PRBAST", **r} for r in timing_rows],
                         command="python -m benchmarks prbast " + " ".join(argv or sys.argv[2:]),
                         notes="\n".join(notes),
                         columns=["case", "estimator", "n_seeds", "rmse", "mspe", "cover_y", "width_y", "cover_f",
                                  "width_f", "fit_s", "fit_cpu_s", "n", "sweep_s"],
                         headline=headline_pair(summary, key="estimator", ours=["PRBAST", "PRBAST *"], cost="fit_s",
                                                seeds="n_seeds", metric="rmse", case=cases[0]) if cases else None)
    import json

    from benchmarks._harness import RESULTS

    payload = json.loads((RESULTS / f"{args.name}.json").read_text())
    payload["per_seed"] = rows
    payload["sweep_slope"] = slope
    (RESULTS / f"{args.name}.json").write_text(json.dumps(payload, indent=2, default=float))
    print(text)
    return 0
