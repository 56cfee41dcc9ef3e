"""MA3S benchmark: active annotation strategies on simulated crowds (spec ``shared/design/ma3s.md`` §6).

``python -m benchmarks ma3s [--quick]`` writes ``benchmarks/results/ma3s.{json,md}``.

Pools (X standardized): breast_cancer, wine, iris, digits, make_classification(1000, 10 features, 5
informative, 2 clusters per class), make_moons(1000, noise=0.3); robustness: breast_cancer labels with X
replaced by N(0, I_d) noise (d = 10, 30). Crowd: m = 20 heterogeneous workers, accuracies U(0.55, 0.85),
a fresh identical crowd per strategy within a seed. Protocol: initial pass (one label each), then batches
of 10 up to 5n; accuracies are read at the first evaluation at or after 2n, 3n, 5n (within 9 labels).
Strategies: GRR (round robin), random, LU (``propagation="none"``), MA3S-U (``"uncertainty"``), MA3S-E
(``"evidence"``, lambda = 1) and MA3S-E-auto (``propagation_strength="auto"``), plus the model-retraining
baselines MU / LMU (bagged trees refit on the MV labels every batch, Sheng et al.) and ActiveLab (cleanlab,
5-fold LogisticRegression pred_probs per batch); those are run on the small pools only (cost).
Metrics: label accuracy under one aggregator for everybody: majority vote with random ties (primary);
at 3n also MV with graph-evidence ties (one shared graph, lambda = 1), one-coin and full Dawid–Skene; AULC
of the primary curve over n -> 5n; downstream LogisticRegression / KNN(10) accuracy on a stratified 30%
split when trained on the 3n MV labels of the other 70%; annotator wall time. Timing: make_classification
pools of 1e4 / 1e5 rows, budget 3n, batch 10, MA3S vs GRR, numba vs numpy reference.
"""

import argparse
import statistics
import time
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine, make_classification, make_moons
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_predict, train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import StandardScaler

from benchmarks._harness import write_results
from sklearn_frontier import config_context
from sklearn_frontier.annotation import (
    MA3SAnnotator,
    RandomAnnotator,
    RoundRobinAnnotator,
    SimulatedCrowd,
    dawid_skene,
    majority_vote,
    run_annotation_loop,
)


# -- model-retraining baselines (benchmark-only) ------------------------------------------------------
class _ModelScoredAnnotator(RoundRobinAnnotator):
    """Round-robin state with a model-based selection score, refit once per query (per batch)."""

    kind = "MU"

    def _current_mv(self):
        C = self.counts_
        cand = C >= C.max(axis=1, keepdims=True)
        keys = np.random.default_rng(self.random_seed_).random(C.shape)
        return np.argmax(np.where(cand, keys, -1.0), axis=1)

    def _selection_scores(self):
        Z = (self.X_pool_ - self.mean_) / self.scale_
        y = self._current_mv()
        if np.unique(y).size < 2:
            return self.uncertainty_
        return self._model_scores(Z, y)


class MUAnnotator(_ModelScoredAnnotator):
    """Sheng et al.'s model uncertainty: S_MU = (1 - (p1 - p2)) / 2 of bagged trees (in-sample); LMU
    = sqrt(S_LU * S_MU)."""

    def __init__(self, n_neighbors=10, *, lmu=False, batch_size=1, max_labels_per_sample=None,
                 aggregation="majority", classes=None, missing_label=np.nan, standardize=True, metric="euclidean",
                 n_jobs=None, random_state=None):
        super().__init__(n_neighbors, batch_size=batch_size, max_labels_per_sample=max_labels_per_sample,
                         aggregation=aggregation, classes=classes, missing_label=missing_label,
                         standardize=standardize, metric=metric, n_jobs=n_jobs, random_state=random_state)
        self.lmu = lmu

    _parameter_constraints = {**RoundRobinAnnotator._parameter_constraints, "lmu": ["boolean"]}

    def _model_scores(self, Z, y):
        from sklearn.ensemble import BaggingClassifier
        from sklearn.tree import DecisionTreeClassifier

        bag = BaggingClassifier(DecisionTreeClassifier(), n_estimators=10, random_state=self.random_seed_)
        proba = bag.fit(Z, y).predict_proba(Z)
        top = np.sort(proba, axis=1)
        s_mu = (1.0 - (top[:, -1] - (top[:, -2] if top.shape[1] > 1 else 0.0))) / 2.0
        return np.sqrt(self.uncertainty_ * s_mu) if self.lmu else s_mu


class ActiveLabAnnotator(_ModelScoredAnnotator):
    """cleanlab's ActiveLab: lowest active-learning score first; pred_probs from a 5-fold
    cross-validated LogisticRegression on the MV labels."""

    def _model_scores(self, Z, y):
        from cleanlab.multiannotator import get_active_learning_scores

        K = self.classes_.size
        n_min = np.bincount(y, minlength=K)
        if np.any(n_min[n_min > 0] < 2) or np.count_nonzero(n_min) < K:
            return self.uncertainty_
        cv = StratifiedKFold(min(5, int(n_min.min())), shuffle=True, random_state=0)
        proba = cross_val_predict(LogisticRegression(max_iter=1000), Z, y, cv=cv, method="predict_proba")
        Y = np.where(self.annotations_ >= 0, self.annotations_, np.nan).astype(float)
        Y = Y[:, (self.annotations_ >= 0).any(axis=0)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scores, _ = get_active_learning_scores(Y, proba)
        return -np.asarray(scores, dtype=float)


STRATEGIES = {
    "GRR": lambda s: RoundRobinAnnotator(random_state=s),
    "random": lambda s: RandomAnnotator(random_state=s),
    "LU": lambda s: MA3SAnnotator(propagation="none", random_state=s),
    "MA3S-U": lambda s: MA3SAnnotator(propagation="uncertainty", random_state=s),
    "MA3S-E": lambda s: MA3SAnnotator(random_state=s),
    "MA3S-E-auto": lambda s: MA3SAnnotator(propagation_strength="auto", random_state=s),
}
MODEL_STRATEGIES = {
    "MU": lambda s: MUAnnotator(random_state=s),
    "LMU": lambda s: MUAnnotator(lmu=True, random_state=s),
    "ActiveLab": lambda s: ActiveLabAnnotator(random_state=s),
}


def datasets(quick):
    out = {}
    X, y = load_breast_cancer(return_X_y=True)
    out["breast_cancer"] = (X, y)
    out["wine"] = load_wine(return_X_y=True)
    out["iris"] = load_iris(return_X_y=True)
    out["digits"] = load_digits(return_X_y=True)
    out["classification"] = make_classification(n_samples=1000, n_features=10, n_informative=5, n_redundant=0,
                                                n_clusters_per_class=2, random_state=0)
    out["moons"] = make_moons(1000, noise=0.3, random_state=0)
    rng = np.random.default_rng(0)
    out["noise_d10"] = (rng.normal(size=(len(y), 10)), y)
    out["noise_d30"] = (rng.normal(size=(len(y), 30)), y)
    return {k: (StandardScaler().fit_transform(X), np.asarray(y)) for k, (X, y) in out.items()}


def _first_at_least(hist, budget):
    n_labels = hist["n_labels"]
    i = int(np.searchsorted(n_labels, budget))
    return float(hist["label_accuracy"][min(i, len(n_labels) - 1)])


def run_one(name, make, X, y, seed, budgets):
    n = len(y)
    crowd = SimulatedCrowd(y, n_workers=20, accuracy=(0.55, 0.85), random_state=seed)
    snap = {}

    def capture(annotator, info):
        if info["n_labels"] >= budgets[1] * n and "Y" not in snap:
            snap["Y"] = annotator.get_annotation_matrix()
        return False

    start = time.perf_counter()
    hist = run_annotation_loop(make(seed), X, crowd, budgets[-1] * n, batch_size=10, y_true=y, eval_every=10,
                               callback=capture)
    elapsed = time.perf_counter() - start
    row = {"strategy": name, "seed": seed, "wall_s": elapsed, "annotator_s": float(hist["wall_time"][-1]),
           "aulc": hist["aulc"]}
    for b in budgets:
        row[f"acc_{b}n"] = _first_at_least(hist, b * n)
    Y3 = snap.get("Y", hist["annotation_matrix"])
    shared = MA3SAnnotator(classes=np.unique(y), random_state=0).fit(X, Y3)
    row["acc_3n_mv_graph_ties"] = float(np.mean(majority_vote(Y3, classes=np.unique(y), tie_break="evidence",
                                                              evidence=shared.evidence_, random_state=seed) == y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        row["acc_3n_one_coin"] = float(np.mean(dawid_skene(Y3, model="one_coin", classes=np.unique(y)) == y))
        row["acc_3n_ds"] = float(np.mean(dawid_skene(Y3, classes=np.unique(y)) == y))
    mv = majority_vote(Y3, classes=np.unique(y), random_state=seed)
    idx_tr, idx_te = train_test_split(np.arange(n), test_size=0.3, stratify=y, random_state=seed)
    for label, model in (("downstream_lr", LogisticRegression(max_iter=1000)),
                         ("downstream_knn", KNeighborsClassifier(10))):
        if np.unique(mv[idx_tr]).size < 2:
            row[label] = np.nan
            continue
        row[label] = float(model.fit(X[idx_tr], mv[idx_tr]).score(X[idx_te], y[idx_te]))
    lam = hist["propagation_strength"]
    row["mean_lambda"] = float(np.mean(lam))
    return row


def summarize(rows, dataset, budgets):
    out = []
    by = {}
    for r in rows:
        by.setdefault(r["strategy"], []).append(r)
    metrics = [f"acc_{b}n" for b in budgets] + ["acc_3n_mv_graph_ties", "acc_3n_one_coin", "acc_3n_ds", "aulc",
                                                "downstream_lr", "downstream_knn", "annotator_s", "mean_lambda"]
    base = {r["seed"]: r for r in by.get("GRR", [])}
    for name, rs in by.items():
        s = {"dataset": dataset, "strategy": name, "n_seeds": len(rs)}
        for m in metrics:
            vals = [r[m] for r in rs]
            s[m] = float(np.nanmean(vals))
            s[m + "_sd"] = float(np.nanstd(vals)) if len(vals) > 1 else 0.0
        if base:
            for m in ("acc_3n", "aulc", "downstream_lr"):
                paired = [(r[m], base[r["seed"]][m]) for r in rs if r["seed"] in base]
                s[f"{m}_vs_GRR"] = float(np.mean([a for a, _ in paired]) / np.mean([b for _, b in paired]))
                s[f"{m}_wins_vs_GRR"] = f"{sum(a > b for a, b in paired)}/{len(paired)}"
            s["time_vs_GRR"] = s["annotator_s"] / np.mean([b["annotator_s"] for b in base.values()])
        out.append(s)
    return out


def timing(sizes, quick):
    rows = []
    for n in sizes:
        X, y = make_classification(n_samples=n, n_features=10, n_informative=5, n_redundant=0, random_state=0)
        backends = ("numba", "reference") if n <= 10_000 else ("numba",)
        for backend in backends:
            for name in ("GRR", "MA3S-E"):
                make = STRATEGIES[name]
                crowd = SimulatedCrowd(y, n_workers=20, accuracy=(0.55, 0.85), random_state=0)
                with config_context(backend=backend):
                    start = time.perf_counter()
                    hist = run_annotation_loop(make(0), X, crowd, 3 * n, batch_size=10, y_true=y,
                                               eval_every=n // 2)
                    wall = time.perf_counter() - start
                fit_s = float(hist["wall_time"][0])  # the first evaluation comes right after fit
                rows.append({"n": n, "backend": backend, "strategy": name, "loop_wall_s": wall,
                             "annotator_s": float(hist["wall_time"][-1]), "fit_s": fit_s,
                             "us_per_label": 1e6 * (float(hist["wall_time"][-1]) - fit_s) / (2 * n),
                             "acc_3n": float(hist["label_accuracy"][-1])})
                print(rows[-1], flush=True)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks ma3s")
    parser.add_argument("--quick", action="store_true", help="3 seeds, model baselines on the small pools only")
    parser.add_argument("--no-timing", action="store_true", help="skip the 1e4/1e5 timing runs")
    parser.add_argument("--timing-only", action="store_true", help="only the timing runs (ma3s_timing.*)")
    parser.add_argument("--datasets", nargs="*", default=None, help="subset of the pools")
    parser.add_argument("--name", default="ma3s", help="results file name (benchmarks/results/NAME.*)")
    args = parser.parse_args(argv)
    if args.timing_only:
        rows = timing([10_000] if args.quick else [10_000, 100_000], args.quick)
        print(write_results("ma3s_timing", rows, columns=list(rows[0])))
        return 0
    seeds = [0, 1, 2] if args.quick else list(range(10))
    budgets = (2, 3, 5)
    data = datasets(args.quick)
    if args.datasets:
        data = {k: v for k, v in data.items() if k in args.datasets}
    small = {"wine", "iris"} if args.quick else {"breast_cancer", "wine", "iris"}
    summary, raw = [], []
    for dname, (X, y) in data.items():
        rows = []
        for name, make in STRATEGIES.items():
            for seed in seeds:
                rows.append(run_one(name, make, X, y, seed, budgets))
                print(f"  {dname} {name} seed {seed}: acc@3n {rows[-1]['acc_3n']:.3f}", flush=True)
        if dname in small:
            model_seeds = seeds[:1] if args.quick else seeds[:3]
            print(f"{dname}: model-retraining baselines on seeds {model_seeds}", flush=True)
            for name, make in MODEL_STRATEGIES.items():
                for seed in model_seeds:
                    rows.append(run_one(name, make, X, y, seed, budgets))
        for r in rows:
            r["dataset"] = dname
        raw += rows
        s = summarize(rows, dname, budgets)
        summary += s
        for r in s:
            print(f"{dname:14s} {r['strategy']:12s} acc@2n {r['acc_2n']:.3f} @3n {r['acc_3n']:.3f} "
                  f"@5n {r['acc_5n']:.3f}  3n/GRR {r.get('acc_3n_vs_GRR', float('nan')):.3f} "
                  f"wins {r.get('acc_3n_wins_vs_GRR', '')}  t {r['annotator_s']:.2f}s", flush=True)
    timing_rows = [] if (args.no_timing or args.quick) else timing([10_000, 100_000], args.quick)
    checks = []
    for dname in data:
        grr = next(r for r in summary if r["dataset"] == dname and r["strategy"] == "GRR")
        for strat in ("MA3S-E", "MA3S-E-auto"):
            r = next(x for x in summary if x["dataset"] == dname and x["strategy"] == strat)
            if dname.startswith("noise"):
                checks.append(f"{dname}: {strat}/GRR at 3n = {r['acc_3n'] / grr['acc_3n']:.3f} (target >= 1.0)")
            else:
                checks.append(f"{dname}: {strat} - GRR at 3n = {r['acc_3n'] - grr['acc_3n']:+.3f} "
                              f"(target >= +0.05), wins {r['acc_3n_wins_vs_GRR']}")
    for t in timing_rows:
        if t["n"] == 100_000 and t["strategy"] == "MA3S-E":
            checks.append(f"n=1e5, 3n budget, batch 10: MA3S-E loop {t['loop_wall_s']:.1f} s "
                          f"(annotator {t['annotator_s']:.1f} s; target < 60 s)")
    notes = ("Checks:\n\n" + "\n".join(f"- {c}" for c in checks) + "\n\nTiming (make_classification, 3n, batch 10):\n\n"
             + "\n".join(f"- n={t['n']} {t['backend']} {t['strategy']}: loop {t['loop_wall_s']:.2f} s, annotator "
                         f"{t['annotator_s']:.2f} s (fit {t['fit_s']:.2f} s), {t['us_per_label']:.1f} us/label "
                         f"after fit, acc {t['acc_3n']:.3f}"
                         for t in timing_rows)
             + "\n\nIEThresh (scikit-activeml) is not run (see the notes file). Seeds: "
             + f"{seeds}; model baselines (MU, LMU, ActiveLab) on {sorted(small)} only, first "
             + f"{1 if args.quick else 3} seed(s). Timing rows: benchmarks/results/ma3s_timing.md "
             + "(python -m benchmarks ma3s --timing-only).")
    cols = ["dataset", "strategy", "n_seeds", "acc_2n", "acc_3n", "acc_3n_sd", "acc_5n", "acc_3n_vs_GRR",
            "acc_3n_wins_vs_GRR", "acc_3n_mv_graph_ties", "acc_3n_one_coin", "acc_3n_ds", "aulc", "aulc_vs_GRR",
            "downstream_lr", "downstream_lr_vs_GRR", "downstream_knn", "annotator_s", "time_vs_GRR", "mean_lambda"]
    text = write_results(args.name, summary, notes=notes, columns=cols)
    print(text)
    import json

    from benchmarks._harness import RESULTS

    payload = json.loads((RESULTS / f"{args.name}.json").read_text())
    payload["raw"] = raw
    payload["timing"] = timing_rows
    (RESULTS / f"{args.name}.json").write_text(json.dumps(payload, indent=2, default=float))
    return 0
