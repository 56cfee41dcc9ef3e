"""PR-BAST against BART, BAST and Euclidean baselines on constrained domains: ``python -m benchmarks prbast [--quick]``.

Domains: the mgcv horseshoe (Ramsay 2002; Wood et al. 2008; f = a b + d^2, noise 0.3), BAMDT's rotated U with
jumps (noise 0.1), an annulus with a slit (truth = angle, noise 0.2) and a spiral band whose gaps between turns
follow no axis (noise 0.2); n_train in {1000, 4000} (quick: {300, 800}) and 1000 fresh test points per seed.
Metrics: RMSE of the posterior mean against the noiseless truth (primary), MSPE on noisy y, 95% prediction-interval
coverage of new y and credible coverage of f with mean widths, fit CPU and wall seconds (``benchmarks._timing``);
mean ± sd over seeds, identical data for every method. BART is stochtree's ``BARTModel`` at two schedules
(``benchmarks._bart``); its rows are skipped, with a note, when stochtree is not installed. A ``targets`` section
gives, per case, PR-BAST's per-seed ratios to each BART row in the same run. The per-sweep cost and the time and
memory against n are ``python -m benchmarks prbast_scaling``.
"""

import argparse
import json
import shlex
import statistics
import sys
import warnings
from dataclasses import dataclass

import numpy as np

from benchmarks._bart import BART_DEFAULT, BART_WARM_START, StochtreeBART, bart_missing_note, stochtree_version
from benchmarks._harness import headline_pair, per_seed_columns, results_dir, write_results
from benchmarks._timing import timed

CASES = ("horseshoe", "rotated_u", "slit_annulus", "spiral_band")
SIZES = {"full": (1000, 4000), "quick": (300, 800)}
N_TEST = 1000
GP_MAX_N = 2000  # above this size the Euclidean GP's hyperparameters are searched on a subsample
GP_SUBSAMPLE = 1000
BART_LABELS = (BART_DEFAULT.label, BART_WARM_START.label)
COLUMNS = ["section", "case", "n", "estimator", "n_seeds", "rmse", "rmse_sd", "mspe", "cover_y", "width_y", "cover_f",
           "width_f", "fit_cpu_s", "fit_s", "n_iter"]
TARGET_COLUMNS = ["section", "case", "n", "estimator", "n_seeds", "rmse_ratio", "rmse_ratio_max", "cpu_ratio",
                  "prbast_cover_y", "rmse_target", "rmse_met", "cpu_target", "cpu_met", "cover_met"]


@dataclass(frozen=True)
class Case:
    """One seed's data: training sample, fresh test points with their truth, and the domain polygon."""

    X: np.ndarray
    y: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    f_test: np.ndarray
    boundary: np.ndarray


def make_case(name, seed, n_train, n_test=N_TEST):
    """The data of domain ``name`` for one seed (test points drawn independently of the training ones)."""
    from sklearn_frontier import datasets as ds

    if name == "horseshoe":
        X, y, _ = ds.make_horseshoe(n_train, noise=0.3, random_state=seed)
        Xt, yt, ft = ds.make_horseshoe(n_test, noise=0.3, random_state=10_000 + seed)
        return Case(X, y, Xt, yt, ft, ds.horseshoe_boundary(40))
    if name in ("slit_annulus", "spiral_band"):
        make = ds.make_slit_annulus if name == "slit_annulus" else ds.make_spiral_band
        X, y, _, boundary = make(n_train, noise=0.2, random_state=seed)
        Xt, yt, ft, _ = make(n_test, noise=0.2, random_state=10_000 + seed)
        return Case(X, y, Xt, yt, ft, boundary)
    if name == "rotated_u":  # one GP draw over train and test together: the truth is drawn per seed
        X, y, _, Xt, ft, boundary = ds.make_rotated_u(n_train, n_test, noise=0.1, random_state=seed)
        yt = ft + 0.1 * np.random.default_rng(seed).normal(size=ft.shape[0])
        return Case(X, y, Xt, yt, ft, boundary)
    raise ValueError(f"unknown case {name!r}; expected one of {CASES}")


class _SubsampleGP:
    """A GP whose O(n^3)-per-step hyperparameter search runs on ``max_n`` random points; the fitted kernel is then
    conditioned on all n points with one Cholesky factorisation (``optimizer=None``)."""

    def __init__(self, make, max_n, random_state):
        self.make, self.max_n, self.random_state = make, max_n, random_state

    def fit(self, X, y):
        idx = np.random.default_rng(self.random_state).choice(X.shape[0], self.max_n, replace=False)
        kernel = self.make().fit(X[idx], y[idx]).kernel_
        self.gp_ = self.make().set_params(kernel=kernel, optimizer=None).fit(X, y)
        self.kernel_ = self.gp_.kernel_
        return self

    def predict(self, X, return_std=False):
        return self.gp_.predict(X, return_std=return_std)


def _sweep_factor(quick):
    return 0.3 if quick else 1.0


def _estimators(boundary, seed, quick, which, n_train):
    from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel
    from sklearn.neighbors import KNeighborsRegressor

    from sklearn_frontier.spanning_trees import BASTRegressor, PRBASTRegressor, RoutedField

    def gp():
        return GaussianProcessRegressor(ConstantKernel() * Matern(nu=2.5) + WhiteKernel(), normalize_y=True,
                                        random_state=seed)

    f = _sweep_factor(quick)
    pr = PRBASTRegressor()
    sweeps = dict(n_iter=int(pr.n_iter * f), n_burnin=int(pr.n_burnin * f))
    out = {
        "PRBAST": lambda: PRBASTRegressor(domain=boundary, random_state=seed, **sweeps),
        BART_DEFAULT.label: lambda: StochtreeBART(BART_DEFAULT.scaled(f), random_state=seed),
        BART_WARM_START.label: lambda: StochtreeBART(BART_WARM_START, random_state=seed),
        "BAST": lambda: BASTRegressor(domain=boundary, random_state=seed, n_iter=int(1500 * f), n_burnin=int(500 * f)),
        "PRBAST routed tau2=0.5": lambda: PRBASTRegressor(component=RoutedField(), domain=boundary,
                                                          random_state=seed, **sweeps),
        "PRBAST M=10": lambda: PRBASTRegressor(n_trees=10, domain=boundary, random_state=seed, **sweeps),
        "PRBAST M=50": lambda: PRBASTRegressor(n_trees=50, domain=boundary, random_state=seed, **sweeps),
        "PRBAST random_mst": lambda: PRBASTRegressor(tree_prior="random_mst", domain=boundary, random_state=seed,
                                                     **sweeps),
        "GP Matern (Euclidean)": lambda: gp() if n_train <= GP_MAX_N else _SubsampleGP(gp, GP_SUBSAMPLE, seed),
        "HistGB": lambda: HistGradientBoostingRegressor(random_state=seed),
        "RandomForest": lambda: RandomForestRegressor(500 if not quick else 200, min_samples_leaf=2,
                                                      random_state=seed, n_jobs=1),
        "kNN": lambda: KNeighborsRegressor(8, weights="distance"),
    }
    if bart_missing_note() is not None:
        for label in BART_LABELS:
            out.pop(label)
    return {k: v for k, v in out.items() if k in which}


def _evaluate(est, case):
    """Fit (timed) and score one estimator on one case."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = timed(lambda: est.fit(case.X, case.y))
        pred = np.asarray(est.predict(case.X_test), dtype=np.float64)
        row = {"rmse": float(np.sqrt(np.mean((pred - case.f_test) ** 2))),
               "mspe": float(np.mean((pred - case.y_test) ** 2)), "fit_s": t.wall_s, "fit_cpu_s": t.cpu_s}
        if hasattr(est, "predict_interval"):
            for kind, truth, key in (("prediction", case.y_test, "y"), ("credible", case.f_test, "f")):
                lo, hi = np.asarray(est.predict_interval(case.X_test, kind=kind)).T
                row[f"cover_{key}"] = float(np.mean((truth >= lo) & (truth <= hi)))
                row[f"width_{key}"] = float(np.mean(hi - lo))
            row["sigma"] = float(est.sigma_)
        elif hasattr(est, "kernel_"):
            mu, sd = est.predict(case.X_test, return_std=True)
            row["cover_y"] = float(np.mean(np.abs(case.y_test - mu) <= 1.96 * sd))
            row["width_y"] = float(np.mean(2 * 1.96 * sd))
        if hasattr(est, "component_"):
            row["component"] = type(est.component_).__name__
        if hasattr(est, "n_iter_") and not hasattr(est, "kernel_"):
            row["n_iter"] = int(np.max(est.n_iter_))
    return row


def _warm_up(quick):
    """One tiny fit of each compiled estimator, so JIT compilation / cache loading is outside the timed fits."""
    case = make_case("horseshoe", 0, 60, 20)
    which = ["PRBAST", "BAST", *BART_LABELS]
    for make in _estimators(case.boundary, 0, True, which, 60).values():
        est = make()
        if hasattr(est, "n_iter"):
            est.set_params(n_iter=6, n_burnin=2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(case.X, case.y)


def _mean_sd(values):
    return f"{statistics.mean(values):.4g} ± {statistics.stdev(values) if len(values) > 1 else 0.0:.2g}"


def summarise(rows, keys=("rmse", "mspe", "cover_y", "width_y", "cover_f", "width_f", "fit_cpu_s", "fit_s")):
    """Mean ± sd over seeds per (section, case, n, estimator), in first-seen order; the RMSE as its mean with
    ``rmse_sd``, ``rmse_per_seed`` and ``seed_ids``."""
    groups = {}
    for r in rows:
        groups.setdefault((r["section"], r["case"], r["n"], r["estimator"]), []).append(r)
    out = []
    for (section, case, n, est), rs in groups.items():
        s = {"section": section, "case": case, "n": n, "estimator": est, "n_seeds": len(rs)}
        for k in keys:
            vals = [r[k] for r in rs if k in r]
            if vals and k == "rmse":  # the headline metric: mean, sd and per-seed values (paired verdicts)
                s.update(per_seed_columns(k, vals, [r["seed"] for r in rs if k in r]))
            elif vals:
                s[k] = _mean_sd(vals)
        if any("n_iter" in r for r in rs):
            s["n_iter"] = max(r.get("n_iter", 0) for r in rs)
        out.append(s)
    return out


def target_rows(rows, n_large):
    """PR-BAST against each BART row of the same case and seeds: RMSE and CPU ratios (mean over seeds, and the
    worst seed's RMSE ratio), PR-BAST's coverage, and whether each target holds.

    Targets: RMSE ratio <= 1 on every case and <= 0.9 at the largest n; CPU ratio <= 0.5 at the largest n; 95%
    prediction-interval coverage of new y in [0.93, 0.97].
    """
    out = []
    keys = list(dict.fromkeys((r["case"], r["n"]) for r in rows))
    for case, n in keys:
        ours = {r["seed"]: r for r in rows if (r["case"], r["n"], r["estimator"]) == (case, n, "PRBAST")}
        for label in BART_LABELS:
            ref = {r["seed"]: r for r in rows if (r["case"], r["n"], r["estimator"]) == (case, n, label)}
            seeds = sorted(set(ours) & set(ref))
            if not seeds:
                continue
            rmse = [ours[s]["rmse"] / ref[s]["rmse"] for s in seeds]
            cpu = [ours[s]["fit_cpu_s"] / ref[s]["fit_cpu_s"] for s in seeds]
            cover = statistics.mean(ours[s]["cover_y"] for s in seeds)
            rmse_target = 0.9 if n == n_large else 1.0
            row = {"section": "targets", "case": case, "n": n, "estimator": f"PRBAST / {label}",
                   "n_seeds": len(seeds), "rmse_ratio": statistics.mean(rmse), "rmse_ratio_max": max(rmse),
                   "cpu_ratio": statistics.mean(cpu), "prbast_cover_y": cover, "rmse_target": f"<= {rmse_target}",
                   "rmse_met": "yes" if statistics.mean(rmse) <= rmse_target else "no",
                   "cover_met": "yes" if 0.93 <= cover <= 0.97 else "no"}
            if n == n_large:
                row["cpu_target"] = "<= 0.5"
                row["cpu_met"] = "yes" if statistics.mean(cpu) <= 0.5 else "no"
            out.append(row)
    return out


def _target_notes(targets):
    notes = []
    for t in targets:
        cpu = f"; CPU {t['cpu_ratio']:.2f}x" + (f" (target <= 0.5: {t['cpu_met']})" if "cpu_met" in t else "")
        notes.append(f"- {t['case']}, n = {t['n']}: RMSE {t['estimator']} = {t['rmse_ratio']:.3f} (worst seed "
                     f"{t['rmse_ratio_max']:.3f}; target {t['rmse_target']}: {t['rmse_met']}){cpu}; PR-BAST "
                     f"coverage of new y {t['prbast_cover_y']:.3f} (target [0.93, 0.97]: {t['cover_met']})")
    return notes


def _curves(args):
    """RMSE against sweeps (n_iter 250..2000) on the horseshoe, n = 500, PR-BAST and BAST at their n_trees."""
    from sklearn_frontier.spanning_trees import BASTRegressor, PRBASTRegressor

    rows = []
    n_seeds = args.seeds or 3
    _warm_up(True)
    for n_iter in (250, 500, 1000, 2000):
        for label, Est in (("PRBAST", PRBASTRegressor), ("BAST", BASTRegressor)):
            per = []
            for seed in range(n_seeds):
                case = make_case("horseshoe", seed, 500)
                per.append(_evaluate(Est(domain=case.boundary, n_iter=n_iter, n_burnin=n_iter // 3,
                                         random_state=seed), case))
                print(label, n_iter, seed, per[-1]["rmse"], per[-1]["fit_cpu_s"], flush=True)
            rows.append({"section": "curve", "case": "horseshoe", "n": 500, "estimator": label, "n_iter": n_iter,
                         "n_seeds": n_seeds, "rmse": _mean_sd([r["rmse"] for r in per]),
                         "fit_cpu_s": _mean_sd([r["fit_cpu_s"] for r in per])})
    notes = "- curve: horseshoe n = 500, n_burnin = n_iter // 3, both at their default n_trees"
    print(write_results(args.name, rows, command="python -m benchmarks prbast --curves", notes=notes,
                        columns=["section", "case", "n", "estimator", "n_iter", "n_seeds", "rmse", "fit_cpu_s"]))
    return 0


def _write_partial(name, rows, quick):
    """Per-seed rows so far (a long run stopped early still leaves complete seeds behind)."""
    folder = results_dir(quick)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.partial.json").write_text(json.dumps({"per_seed": rows}, indent=2, default=float))


def _write(name, rows, quick, extra_notes, command):
    """Summary, targets, notes and headline of the per-seed ``rows``; writes NAME.json (with the per-seed rows) and
    NAME.md, removes the partial checkpoint, returns the Markdown text."""
    from sklearn_frontier.spanning_trees import PRBASTRegressor

    sizes = sorted({r["n"] for r in rows})
    cases = list(dict.fromkeys(r["case"] for r in rows))
    summary = summarise(rows)
    targets = target_rows(rows, max(sizes))
    f = _sweep_factor(quick)
    pr = PRBASTRegressor()
    family = next((r["component"] for r in rows if r["estimator"] == "PRBAST" and "component" in r), "?")
    notes = [f"- PR-BAST at its defaults (n_trees = {pr.n_trees}, component family {family}) with "
             f"n_iter = {int(pr.n_iter * f)}, n_burnin = {int(pr.n_burnin * f)}; BAST n_iter = {int(1500 * f)}, "
             f"n_burnin = {int(500 * f)}; one chain each, single-threaded",
             f"- {BART_DEFAULT.label}: stochtree {stochtree_version()} BARTModel, {BART_DEFAULT.scaled(f).describe()} "
             f"(classic BART, no warm start); {BART_WARM_START.label}: {BART_WARM_START.describe()} (stochtree's "
             "default call: grow-from-root sweeps initialise the MCMC); num_threads = 1. BART's prediction "
             "interval: quantiles of the mixture of N(f_s(x), sigma_s^2) over the kept draws s",
             f"- the Euclidean GP (Matern 2.5 + white noise): for n > {GP_MAX_N} its hyperparameters are fitted on "
             f"{GP_SUBSAMPLE} random training points, then the fitted kernel is conditioned on all n",
             "- fit_cpu_s: process CPU seconds of the fit (robust to the shared machine's load); fit_s: wall seconds; "
             "BLAS and OpenMP pools limited to one thread for every method",
             "- targets (ratios per seed, same run): RMSE <= BART on every case and <= 0.9x at the largest n; CPU "
             "<= 0.5x BART at the largest n; coverage of new y in [0.93, 0.97]"]
    missing = bart_missing_note()
    if missing:
        notes.append(missing)
    notes += [f"- {line}" for line in extra_notes if line]
    notes += _target_notes(targets)
    headline_case = dict(section="accuracy", case="horseshoe" if "horseshoe" in cases else cases[0], n=max(sizes))
    headline = headline_pair(summary, key="estimator", ours=["PRBAST", "PRBAST *"], metric="rmse",
                             cost="fit_cpu_s", seeds="n_seeds", where=headline_case)
    text = write_results(name, summary + targets, command=command, notes="\n".join(notes),
                         columns=COLUMNS + [c for c in TARGET_COLUMNS if c not in COLUMNS], headline=headline,
                         quick=quick)
    path = results_dir(quick) / f"{name}.json"
    payload = json.loads(path.read_text())
    payload["per_seed"] = rows
    path.write_text(json.dumps(payload, indent=2, default=float))
    (results_dir(quick) / f"{name}.partial.json").unlink(missing_ok=True)
    return text


def _merge(names, args):
    """One table from the per-seed rows of runs written under ``names`` (e.g. cases run in parallel processes)."""
    rows, commands = [], []
    for name in names:
        path = results_dir(args.quick) / f"{name}.json"
        if not path.exists():  # a run stopped early: its complete seeds
            path = path.with_name(f"{name}.partial.json")
            print(f"{name}: using the partial per-seed results", file=sys.stderr)
        payload = json.loads(path.read_text())
        rows += payload["per_seed"]
        commands.append(payload.get("command", f"(partial run {name})"))
    seen, unique = set(), []
    for r in rows:  # a seed run twice counts once
        key = (r["case"], r["n"], r["estimator"], r["seed"])
        if key not in seen:
            seen.add(key)
            unique.append(r)
    quick = "--quick " if args.quick else ""
    command = "; ".join(commands) + f"; python -m benchmarks prbast {quick}--merge {','.join(names)} --name {args.name}"
    print(_write(args.name, unique, args.quick, [args.notes], command))
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks prbast")
    parser.add_argument("--quick", action="store_true", help="0.3x sweeps, n in {300, 800}")
    parser.add_argument("--seeds", type=int, default=None,
                        help="seeds per case (default 3, quick too: a paired standard error needs more than two)")
    parser.add_argument("--seed-start", type=int, default=0)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--sizes", default=None, help="comma-separated n_train (default 1000,4000; quick 300,800)")
    parser.add_argument("--estimators", default=None, help="comma-separated labels")
    parser.add_argument("--ablation", action="store_true", help="add PR-BAST variants")
    parser.add_argument("--name", default="prbast")
    parser.add_argument("--merge", default=None, help="comma-separated result names whose rows make --name")
    parser.add_argument("--curves", action="store_true", help="RMSE vs sweeps (n_iter 250..2000), horseshoe")
    parser.add_argument("--notes", default="", help="a line added to the notes (e.g. a reduced schedule)")
    args = parser.parse_args(argv)
    if args.curves:
        return _curves(args)
    if args.merge:
        return _merge(args.merge.split(","), args)
    n_seeds = args.seeds or 3
    sizes = [int(x) for x in args.sizes.split(",")] if args.sizes else list(SIZES["quick" if args.quick else "full"])
    which = ["PRBAST", *BART_LABELS, "BAST", "GP Matern (Euclidean)", "HistGB", "RandomForest", "kNN"]
    if args.ablation:
        which += ["PRBAST routed tau2=0.5", "PRBAST M=10", "PRBAST M=50", "PRBAST random_mst"]
    if args.estimators:
        which = args.estimators.split(",")
    cases = [c for c in args.cases.split(",") if c]
    import threadpoolctl

    threadpoolctl.threadpool_limits(1)  # every method on one core: CPU seconds compare like for like
    _warm_up(args.quick)
    rows = []
    for case_name in cases:
        for n in sizes:
            for seed in range(args.seed_start, args.seed_start + n_seeds):
                case = make_case(case_name, seed, n)
                for label, make in _estimators(case.boundary, seed, args.quick, which, n).items():
                    row = {"section": "accuracy", "case": case_name, "n": n, "estimator": label, "seed": seed,
                           **_evaluate(make(), case)}
                    rows.append(row)
                    print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()}, flush=True)
                _write_partial(args.name, rows, args.quick)
    command = "python -m benchmarks prbast " + shlex.join(sys.argv[2:] if argv is None else argv)
    print(_write(args.name, rows, args.quick, [args.notes], command.strip()))
    return 0
