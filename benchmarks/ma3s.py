"""MA3S benchmark: active annotation strategies on simulated crowds.

``python -m benchmarks ma3s [--quick]`` writes ``benchmarks/results/ma3s.{json,md}``.

Pools (X standardized): breast_cancer, wine, iris, digits, make_classification(1000, 10 features, 5
informative, 2 clusters per class), make_moons(1000, noise=0.3); robustness: breast_cancer labels with X
replaced by N(0, I_d) noise (d = 10, 30). Crowd: m = 20 heterogeneous workers, accuracies U(0.55, 0.85),
a fresh identical crowd per strategy within a seed. Protocol: initial pass (one label each), then batches
of 10 up to 5n; accuracies are read at the first evaluation at or after 2n, 3n, 5n (within 9 labels).
Strategies: GRR (round robin), random, LU (``propagation="none"``), MA3S-U (``"uncertainty"``), MA3S-E
(``"evidence"``, lambda = 1) and MA3S-E-auto (``propagation_strength="auto"``), plus the anchors MU / LMU
(bagged trees refit on the MV labels every batch, Sheng et al.), ActiveLab (cleanlab, 5-fold
LogisticRegression pred_probs per batch) and IEThresh (scikit-activeml, see ``run_iethresh``); those are
run on the small pools only (cost).
Metrics: label accuracy under one aggregator for everybody: majority vote with random ties (primary);
at 3n also MV with graph-evidence ties (one shared graph, lambda = 1), one-coin and full Dawid–Skene; AULC
of the primary curve over n -> 5n; downstream LogisticRegression / KNN(10) accuracy on a stratified 30%
split when trained on the 3n MV labels of the other 70%; annotator wall time. Timing (1e4 / 1e5 pools)
lives in ``benchmarks/ma3s_timing.py``.
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine, make_classification, make_moons
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_predict, train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import StandardScaler

from benchmarks._harness import headline_pair, per_seed_columns, write_results
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

    def _incremental_keys(self):
        return False  # the model rescores every sample after each batch

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
    "IEThresh": "IEThresh",  # drives the crowd itself (run_iethresh)
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


def run_iethresh(X, y, crowd, budget, seed, snap_at):
    """scikit-activeml's IEThresh driving the crowd itself: it asks exactly the (sample, annotator) pairs
    it returns (adaptive batch: every annotator whose upper accuracy bound is >= 0.9 x the best).

    IEThresh only selects samples that no annotator has labelled yet (skactiveml keeps a sample as a
    candidate only if all its annotator cells are free), so there is no initial pass and the run ends when
    every sample has been labelled once by its annotator batch; the curve stays flat from there.
    Evaluation: the loop's primary aggregator (majority vote, random ties from the same keys).
    """
    from skactiveml.classifier.multiannotator import AnnotatorLogisticRegression
    from skactiveml.pool.multiannotator import IntervalEstimationThreshold

    from sklearn_frontier.annotation._loop import _aulc

    n, m = len(y), crowd.n_workers
    classes = np.unique(y)
    K = classes.size
    truth = np.searchsorted(classes, y)
    keys = np.random.default_rng(0).random((n, K))  # the loop's eval_random_state=0 ties
    Y = np.full((n, m), np.nan)
    strategy = IntervalEstimationThreshold(random_state=seed)
    clf = AnnotatorLogisticRegression(classes=classes, random_state=seed)
    hist = {"n_labels": [], "label_accuracy": []}
    Y3 = None

    def evaluate(spent):
        C = np.zeros((n, K))
        rows, cols = np.nonzero(~np.isnan(Y))
        np.add.at(C, (rows, np.searchsorted(classes, Y[rows, cols])), 1.0)
        pred = np.argmax(np.where(C >= C.max(axis=1, keepdims=True), keys, -1.0), axis=1)
        hist["n_labels"].append(spent)
        hist["label_accuracy"].append(float(np.mean(pred == truth)))

    spent, wall = 0, 0.0
    next_eval = 0
    while spent < budget:
        if spent >= next_eval:
            evaluate(spent)
            next_eval = spent + 10
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                pairs = strategy.query(X, Y, clf, batch_size="adaptive")
            except ValueError:  # no sample with every annotator free is left
                pairs = np.zeros((0, 2), dtype=int)
        wall += time.perf_counter() - start
        if len(pairs) == 0:
            break
        for i, j in np.asarray(pairs, dtype=int)[: budget - spent]:
            out = crowd.label(int(i), annotator=int(j))
            if out is not None:
                Y[i, out[1]] = out[0]
                spent += 1
                if Y3 is None and spent >= snap_at:
                    Y3 = Y.copy()
    evaluate(spent)
    hist = {k: np.asarray(v) for k, v in hist.items()}
    keep = hist["n_labels"] >= n  # the AULC span of the other strategies: n -> budget
    aulc = (_aulc(hist["n_labels"][keep], hist["label_accuracy"][keep], budget) if keep.any()
            else float(hist["label_accuracy"][-1]))
    return {**hist, "aulc": aulc, "wall_time": np.array([wall]), "annotation_matrix": Y,
            "propagation_strength": np.zeros(1), "snap": Y if Y3 is None else Y3}


def run_one(name, make, X, y, seed, budgets):
    n = len(y)
    crowd = SimulatedCrowd(y, n_workers=20, accuracy=(0.55, 0.85), random_state=seed)
    snap = {}

    def capture(annotator, info):
        if info["n_labels"] >= budgets[1] * n and "Y" not in snap:
            snap["Y"] = annotator.get_annotation_matrix()
        return False

    start = time.perf_counter()
    if make == "IEThresh":
        hist = run_iethresh(X, y, crowd, budgets[-1] * n, seed, budgets[1] * n)
        snap["Y"] = hist["snap"]
    else:
        hist = run_annotation_loop(make(seed), X, crowd, budgets[-1] * n, batch_size=10, y_true=y, eval_every=10,
                                   callback=capture)
    elapsed = time.perf_counter() - start
    row = {"strategy": name, "seed": seed, "wall_s": elapsed, "annotator_s": float(hist["wall_time"][-1]),
           "aulc": hist["aulc"], "labels_spent": int(hist["n_labels"][-1])}
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
        row["acc_3n_ds_graph"] = _ds_graph_accuracy(Y3, shared, y)
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


def _ds_graph_accuracy(Y, fitted, y):
    """Dawid-Skene with the kNN graph as each item's prior (the labelling session's ``labels("dawid_skene")``)."""
    from sklearn_frontier.annotation._quality import fit_offline, graph_posterior

    classes = np.unique(y)
    codes = np.full(Y.shape, -1)
    seen = ~np.isnan(Y)
    codes[seen] = np.searchsorted(classes, Y[seen])
    model = fit_offline(codes, classes.size, graph=fitted.graph_)
    return float(np.mean(classes[np.argmax(graph_posterior(model, codes, fitted.graph_), axis=1)] == y))


AGGREGATIONS = {"acc_3n": "majority vote (random ties)", "acc_3n_mv_graph_ties": "majority vote, graph ties",
                "acc_3n_one_coin": "one-coin Dawid-Skene", "acc_3n_ds": "Dawid-Skene",
                "acc_3n_ds_graph": "Dawid-Skene with the graph prior"}


def summarize(rows, dataset, budgets):
    out = []
    by = {}
    for r in rows:
        by.setdefault(r["strategy"], []).append(r)
    metrics = [f"acc_{b}n" for b in budgets] + ["acc_3n_mv_graph_ties", "acc_3n_one_coin", "acc_3n_ds",
                                                "acc_3n_ds_graph", "aulc", "downstream_lr", "downstream_knn",
                                                "annotator_s", "mean_lambda", "labels_spent"]
    base = {r["seed"]: r for r in by.get("GRR", [])}
    for name, rs in by.items():
        s = {"dataset": dataset, "strategy": name, "n_seeds": len(rs)}
        rs = sorted(rs, key=lambda r: r["seed"])
        for m in metrics:
            vals = [r[m] for r in rs]
            s[m] = float(np.nanmean(vals))
            s[m + "_sd"] = float(np.nanstd(vals, ddof=1)) if len(vals) > 1 else None
        for m in AGGREGATIONS:  # the per-seed convention, for every aggregation a user would apply
            s.update(per_seed_columns(m, [r[m] for r in rs], [r["seed"] for r in rs]))
        if base:
            for m in ("acc_3n", "aulc", "downstream_lr"):
                paired = [(r[m], base[r["seed"]][m]) for r in rs if r["seed"] in base]
                s[f"{m}_vs_GRR"] = float(np.mean([a for a, _ in paired]) / np.mean([b for _, b in paired]))
                s[f"{m}_wins_vs_GRR"] = f"{sum(a > b for a, b in paired)}/{len(paired)}"
            s["time_vs_GRR"] = s["annotator_s"] / np.mean([b["annotator_s"] for b in base.values()])
        out.append(s)
    return out


AGGREGATION_NOTE = ("Aggregations at 3n, every one a user would apply, each with its per-seed columns: "
                    + "; ".join(f"{k} = {v}" for k, v in {
                        "acc_3n": "majority vote with random ties (the headline: what the guide recommends for "
                                  "labels MA3S collected)",
                        "acc_3n_mv_graph_ties": "majority vote, ties from the graph",
                        "acc_3n_one_coin": "one-coin Dawid-Skene", "acc_3n_ds": "full Dawid-Skene",
                        "acc_3n_ds_graph": "Dawid-Skene with the kNN graph as each item's prior (the labelling "
                                           "session's labels('dawid_skene'))"}.items()) + ".")

NOTES = """IEThresh (scikit-activeml 1.0 `IntervalEstimationThreshold` + `AnnotatorLogisticRegression`) asks exactly
the (sample, annotator) pairs it returns, with its adaptive annotator batch. skactiveml only treats a sample as a
candidate while all of its annotator cells are free, so IEThresh has no initial pass and labels each chosen
sample once, with every annotator whose upper accuracy bound is >= 0.9 x the best (11-20 of the 20 workers early
on); the 5n budget then covers only a third of the pool, whose other samples get a random label. That is the
method as shipped, not a tuned variant. ActiveLab: cleanlab `get_active_learning_scores` with 5-fold
LogisticRegression pred_probs on the MV labels, per batch. MU / LMU: bagged trees (Sheng et al.), per batch.

Dawid-Skene on MA3S's labels (breast_cancer seed 0, 3n, full DS 0.645 vs MV 0.968; GRR: DS 0.798 vs MV
0.791). Not a bug in `dawid_skene`: MA3S stops labelling a sample once its label agrees with its graph
neighbourhood (299 of 569 samples keep their single label; MV is right on 99.7 % of them) and relabels the
samples whose label contradicts it. DS models samples as independent, so the graph information that
selected the singletons is invisible to it, and the disputed samples make every worker look worse than he is
(one-coin estimate of the mean worker accuracy 0.567 vs the true 0.704; on GRR's labels 0.721). With
pessimistic workers the class
prior overturns single labels (DS: 60.5 % right on the singletons). With the true worker accuracies and
class prior the same one-coin posterior reaches 0.937, so the loss is the parameter estimate, not the
aggregation rule. Stronger Dirichlet smoothing only helps a little (smoothing 1: 0.698, 5: 0.721) and costs
GRR nothing either way (0.810 / 0.812), so the default stays 0.01. Use MV (or graph-evidence MV) on labels
an adaptive, graph-driven strategy collected, or a DS that uses the graph (neighbour evidence as a per-sample
class prior): acc_3n_ds_graph. These numbers: `python -m benchmarks ma3s --ds-diagnosis`."""


def ds_diagnosis(seed=0):
    """The numbers behind the Dawid-Skene note: breast_cancer, 3n, GRR vs MA3S-E (``--ds-diagnosis``)."""
    X, y = datasets(True)["breast_cancer"]
    n, classes = len(y), np.unique(y)
    for name in ("GRR", "MA3S-E"):
        crowd = SimulatedCrowd(y, n_workers=20, accuracy=(0.55, 0.85), random_state=seed)
        Y = run_annotation_loop(STRATEGIES[name](seed), X, crowd, 3 * n, batch_size=10)["annotation_matrix"]
        single = (~np.isnan(Y)).sum(axis=1) == 1
        mv = majority_vote(Y, classes=classes, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ds = {s: dawid_skene(Y, classes=classes, smoothing=s) for s in (0.01, 1.0, 5.0)}
            _, coin = dawid_skene(Y, model="one_coin", classes=classes, return_params=True)
        q_est = np.asarray(coin["accuracy"])
        # one-coin posterior with the true worker accuracies and class prior (the best DS could do)
        q, prior = crowd.accuracy_, np.bincount(y) / n
        rows, cols = np.nonzero(~np.isnan(Y))
        votes = Y[rows, cols].astype(int)
        log_t = np.tile(np.log(prior), (n, 1))
        for k in range(classes.size):
            np.add.at(log_t[:, k], rows, np.where(votes == k, np.log(q[cols]), np.log(1 - q[cols])))
        oracle = np.argmax(log_t, axis=1)
        print(f"{name}: singletons {int(single.sum())}/{n}; MV {np.mean(mv == y):.3f} (singletons "
              f"{np.mean(mv[single] == y[single]) if single.any() else float('nan'):.3f}); DS smoothing 0.01/1/5: "
              + "/".join(f"{np.mean(v == y):.3f}" for v in ds.values())
              + f" (singletons {np.mean(ds[0.01][single] == y[single]) if single.any() else float('nan'):.3f}); "
              f"one-coin mean worker accuracy {q_est.mean():.3f} vs true {q.mean():.3f}; oracle one-coin "
              f"{np.mean(oracle == y):.3f}")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks ma3s")
    parser.add_argument("--quick", action="store_true", help="3 seeds, model baselines on the small pools only")
    parser.add_argument("--datasets", nargs="*", default=None, help="subset of the pools")
    parser.add_argument("--name", default="ma3s", help="results file name (benchmarks/results/NAME.*)")
    parser.add_argument("--ds-diagnosis", action="store_true", help="print the Dawid-Skene note's numbers only")
    args = parser.parse_args(argv)
    if args.ds_diagnosis:
        ds_diagnosis()
        return 0
    seeds = [0, 1, 2] if args.quick else list(range(5))  # every strategy, the model baselines too
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
            print(f"{dname}: model-retraining baselines on seeds {seeds}", flush=True)
            for name, make in MODEL_STRATEGIES.items():
                for seed in seeds:
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
    notes = ("Checks:\n\n" + "\n".join(f"- {c}" for c in checks) + "\n\n" + NOTES
             + f"\n\nSeeds: {seeds} for every strategy; model baselines ({', '.join(MODEL_STRATEGIES)}) on "
             + f"{sorted(small)} only. " + AGGREGATION_NOTE + " Timing (1e4 / 1e5 pools, kernels numba vs numpy): "
             + "benchmarks/results/ma3s_timing.md (python -m benchmarks ma3s_timing).")
    cols = ["dataset", "strategy", "n_seeds", "labels_spent", "acc_2n", "acc_3n", "acc_3n_sd", "acc_5n",
            "acc_3n_vs_GRR",
            "acc_3n_wins_vs_GRR", "acc_3n_mv_graph_ties", "acc_3n_one_coin", "acc_3n_ds", "acc_3n_ds_graph", "aulc",
            "aulc_vs_GRR",
            "downstream_lr", "downstream_lr_vs_GRR", "downstream_knn", "annotator_s", "time_vs_GRR", "mean_lambda"]
    head = headline_pair(summary, key="strategy", ours=["MA3S-E", "MA3S-*"], metric="acc_3n", cost="annotator_s",
                         seeds="n_seeds", lower_is_better=False, dataset="breast_cancer")
    text = write_results(args.name, summary, notes=notes, columns=cols, headline=head)
    print(text)
    import json

    from benchmarks._harness import results_dir

    path = results_dir(args.quick) / f"{args.name}.json"  # the file write_results wrote (quick runs: quick/)
    payload = json.loads(path.read_text())
    payload["raw"] = raw
    path.write_text(json.dumps(payload, indent=2, default=float))
    return 0
