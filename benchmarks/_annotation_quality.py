"""A crowd of unequal workers: the labelling service with worker quality against the plain vote and offline
Dawid–Skene (the ``quality`` sections of ``python -m benchmarks annotation_service``).

Pool: breast_cancer (569 items, standardized). Crowd: 12 workers; a fraction answers at random (the
"spammers"), the others are right 70 % or 90 % of the time (half each). Every worker's answer to every item is
drawn once per seed, so every strategy meets the same crowd on the same seed. Budget: 1, 2 or 3 labels per item.

Strategies:

- ``session, majority``: ``AnnotationSession`` over MA3S without worker quality (``weigh_by_quality=False``),
  scored by ``labels("majority")`` (the service as it was before worker quality).
- ``session, quality-aware``: the session with worker quality in the selection and ``min_worker_accuracy=0.6``
  (after 20 labels), scored by ``labels("dawid_skene")`` (the online model's posterior with the graph prior).
- ``session, quality-aware, no declining``: the same without ``min_worker_accuracy``.
- ``round robin`` (every item gets the same number of labels from distinct random workers) and ``random`` (a
  random item and a random worker per label), aggregated offline.

Workers ask in a random order (seeded); a declined worker stops asking. Every session's final label matrix is
also aggregated by every other rule (majority, our batch Dawid–Skene, the graph-prior posterior, crowd-kit's
Dawid–Skene, GLAD and MACE where run), so each row is one (strategy, aggregation). Accuracy counts unlabelled items
as wrong.
"""

import os
import tempfile
import time
import warnings

import numpy as np
from scipy.stats import spearmanr
from sklearn.datasets import load_breast_cancer
from sklearn.preprocessing import StandardScaler

from benchmarks._harness import per_seed_columns

N_WORKERS = 12
SPAM_FRACTIONS = (0.0, 0.2, 1 / 3, 0.4)


def breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    return StandardScaler().fit_transform(X), y.astype(int)


def make_crowd(y, fraction, seed):
    """Worker accuracies (NaN: at random) and every worker's answer to every item, drawn once per seed."""
    rng = np.random.default_rng(seed)
    n_spam = int(round(fraction * N_WORKERS))
    n_good = N_WORKERS - n_spam
    acc = np.r_[np.full(n_spam, np.nan), np.full(n_good - n_good // 2, 0.7), np.full(n_good // 2, 0.9)]
    acc = acc[rng.permutation(N_WORKERS)]
    n = y.size
    right = rng.random((n, N_WORKERS)) < np.where(np.isnan(acc), 0.0, acc)[None, :]
    answers = np.where(right, y[:, None], 1 - y[:, None])
    spam = np.isnan(acc)
    answers[:, spam] = rng.integers(0, 2, (n, int(spam.sum())))
    return np.where(np.isnan(acc), 0.5, acc), answers


def _store_dir():
    # a RAM disk where there is one: the study measures label accuracy, not fsync
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


SESSION_KINDS = {
    "session, majority": dict(weigh_by_quality=False),
    "session, quality-aware": dict(weigh_by_quality=True, min_worker_accuracy=0.6, min_worker_labels=20),
    "session, quality-aware, no declining": dict(weigh_by_quality=True),
}


def run_session(kind, X, answers, acc, per_item, seed, trace=False):
    """One session run; returns its label matrix (codes), its own labels and the rank-correlation trace."""
    from sklearn_frontier.annotation import AnnotationSession, MA3SAnnotator

    n = X.shape[0]
    budget = per_item * n
    marks = {int(budget * f) for f in (0.25, 0.5, 1.0)}
    rng = np.random.default_rng(10_000 + seed)
    traced = []
    with tempfile.TemporaryDirectory(dir=_store_dir()) as folder:
        session = AnnotationSession(MA3SAnnotator(classes=[0, 1], random_state=seed), X,
                                    store=os.path.join(folder, "labels.sqlite"), **SESSION_KINDS[kind])
        active, spent = list(range(N_WORKERS)), 0
        while spent < budget and active:
            j = int(active[rng.integers(len(active))])
            item = session.next_item(j)
            if item is None:
                active.remove(j)
                continue
            session.submit(item, j, int(answers[item, j]))
            spent += 1
            if trace and spent in marks:
                quality = session.worker_quality()
                est = np.array([quality.get(w, np.nan) for w in range(N_WORKERS)])
                ok = ~np.isnan(est)
                traced.append((spent / n, float(spearmanr(est[ok], acc[ok]).statistic)))
        codes = np.full((n, N_WORKERS), -1)
        cols = [session.workers.index(w) if w in session.workers else None for w in range(N_WORKERS)]
        for w, c in enumerate(cols):
            if c is not None:
                codes[:, w] = session.annotator.annotations_[:, c]
        own = session.labels("dawid_skene" if SESSION_KINDS[kind]["weigh_by_quality"] else "majority")
        session.close()
    return codes, own, traced


def offline_matrix(kind, n, answers, per_item, seed):
    """Round-robin or random assignment of ``per_item * n`` labels."""
    rng = np.random.default_rng(20_000 + seed)
    codes = np.full((n, N_WORKERS), -1)
    if kind == "round robin":
        for i in range(n):
            for j in rng.choice(N_WORKERS, per_item, replace=False):
                codes[i, j] = answers[i, j]
    else:
        spent = 0
        while spent < per_item * n:
            i, j = int(rng.integers(n)), int(rng.integers(N_WORKERS))
            if codes[i, j] < 0:
                codes[i, j] = answers[i, j]
                spent += 1
    return codes


_GRAPHS = {}


def aggregate(codes, X, rule):
    """Labels of a code matrix by one rule (-1 where a rule leaves an item unlabelled)."""
    from sklearn_frontier.annotation import MA3SAnnotator, dawid_skene, majority_vote
    from sklearn_frontier.annotation._quality import fit_offline, graph_posterior

    n = codes.shape[0]
    Y = np.where(codes >= 0, codes, np.nan).astype(float)
    labelled = (codes >= 0).any(axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if rule == "majority":
            out = majority_vote(Y, classes=[0, 1], random_state=0)
        elif rule == "dawid_skene":
            out = dawid_skene(Y, classes=[0, 1])
        elif rule == "dawid_skene + graph prior":
            key = (id(X), X.shape)
            if key not in _GRAPHS:  # the session's graph (MA3SAnnotator's defaults), built once per pool
                _GRAPHS[key] = MA3SAnnotator(classes=[0, 1]).fit(X, np.full((n, 2), np.nan)).graph_
            graph = _GRAPHS[key]
            return np.argmax(graph_posterior(fit_offline(codes, 2, graph=graph), codes, graph), axis=1)
        else:
            out = _crowdkit(codes, rule)
    out = np.asarray(out, dtype=float)
    return np.where(labelled, out, -1)


def _crowdkit(codes, rule):
    import pandas as pd
    from crowdkit.aggregation import GLAD, MACE, DawidSkene

    rows, cols = np.nonzero(codes >= 0)
    df = pd.DataFrame({"task": rows, "worker": cols, "label": codes[rows, cols]})
    model = {"crowd-kit DS": lambda: DawidSkene(n_iter=100), "crowd-kit GLAD": lambda: GLAD(n_iter=50),
             "crowd-kit MACE": lambda: MACE(n_restarts=1, n_iter=50, random_state=0)}[rule]()
    return model.fit_predict(df).reindex(range(codes.shape[0])).to_numpy(dtype=float, na_value=-1)


def crowdkit_available():
    try:
        import crowdkit.aggregation  # noqa: F401
    except ImportError:
        return False
    return True


def quality_rows(quick):
    """The accuracy table and the rank-correlation trace (rows in the per-seed convention)."""
    X, y = breast_cancer()
    n = y.size
    seeds = [0, 1] if quick else [0, 1, 2, 3, 4]
    # every spam fraction at 2 labels per item; 1 and 3 labels per item at a third of the crowd at chance
    cases = [(f, 2) for f in ((0.0, 1 / 3) if quick else SPAM_FRACTIONS)]
    if not quick:
        cases += [(1 / 3, 1), (1 / 3, 3)]
    ours_rules = ("majority", "dawid_skene", "dawid_skene + graph prior")
    kit = ("crowd-kit DS", "crowd-kit GLAD", "crowd-kit MACE") if crowdkit_available() else ()
    acc, corr = {}, {}
    for fraction, L in cases:
        for seed in seeds:
            true_acc, answers = make_crowd(y, fraction, seed)
            for kind in SESSION_KINDS:
                start = time.perf_counter()
                codes, own, traced = run_session(kind, X, answers, true_acc, L, seed,
                                                 trace=kind == "session, quality-aware")
                own_acc = float(np.mean(np.asarray(own, dtype=float) == y))
                acc.setdefault((fraction, L, kind, "its own labels()"), {})[seed] = own_acc
                for rule in ours_rules:
                    acc.setdefault((fraction, L, kind, rule), {})[seed] = float(np.mean(
                        aggregate(codes, X, rule) == y))
                for at, rho in traced:
                    corr.setdefault((fraction, L, round(at, 2)), {})[seed] = rho
                print(f"  spam {fraction:.2f} L={L} seed {seed} {kind}: {own_acc:.3f} "
                      f"({time.perf_counter() - start:.1f} s)", flush=True)
            for kind in ("round robin", "random"):
                codes = offline_matrix(kind, n, answers, L, seed)
                # crowd-kit (slow) at 2 labels per item: Dawid-Skene on both, GLAD and MACE on round robin
                # with a third of the crowd at chance (the goal's case)
                full_kit = kind == "round robin" and abs(fraction - 1 / 3) < 1e-9
                rules = ours_rules + ((kit if full_kit else kit[:1]) if L == 2 else ())
                for rule in rules:
                    acc.setdefault((fraction, L, kind, rule), {})[seed] = float(np.mean(
                        aggregate(codes, X, rule) == y))
    rows = []
    for (fraction, L, strategy, rule), by_seed in acc.items():
        ids = sorted(by_seed)
        rows.append({"section": "quality", "spam_fraction": round(fraction, 3), "labels_per_item": L,
                     "strategy": strategy, "aggregation": rule, "method": f"{strategy} / {rule}",
                     **per_seed_columns("accuracy", [by_seed[s] for s in ids], ids)})
    trace = []
    for (fraction, L, at), by_seed in corr.items():
        ids = sorted(by_seed)
        trace.append({"section": "quality trace", "spam_fraction": round(fraction, 3), "labels_per_item": L,
                      "labels_spent_per_item": at, "strategy": "session, quality-aware",
                      **per_seed_columns("spearman", [by_seed[s] for s in ids], ids)})
    return rows, trace


def submit_latency_rows(quick):
    """p99 of submit (and next_item) with the online worker-quality update, and with it switched off."""
    from sklearn.datasets import make_classification

    from sklearn_frontier.annotation import AnnotationSession, MA3SAnnotator

    n_items, n_submits = (2_000, 600) if quick else (10_000, 2_000)
    X, y = make_classification(n_samples=n_items, n_features=10, n_informative=5, n_redundant=0, random_state=0)
    rows = []
    for condition in ("without worker quality", "online worker quality"):
        with tempfile.TemporaryDirectory() as folder:
            session = AnnotationSession(MA3SAnnotator(classes=[0, 1], random_state=0), X,
                                        store=os.path.join(folder, "labels.sqlite"),
                                        weigh_by_quality=condition != "without worker quality")
            if condition == "without worker quality":
                session._fold = lambda records: None  # the code path before the online update
            rng = np.random.default_rng(0)
            t_next, t_submit = [], []
            for k in range(n_submits):
                worker = f"w{k % 8}"
                t0 = time.perf_counter()
                item = session.next_item(worker)
                t1 = time.perf_counter()
                label = int(y[item]) if rng.random() < 0.8 else 1 - int(y[item])
                session.submit(item, worker, label)
                t2 = time.perf_counter()
                t_next.append(t1 - t0)
                t_submit.append(t2 - t1)
            session.close()
        rows.append({"section": "submit latency", "condition": condition, "n_items": n_items,
                     "submits": n_submits, "submit_p50_ms": 1e3 * float(np.percentile(t_submit, 50)),
                     "submit_p99_ms": 1e3 * float(np.percentile(t_submit, 99)),
                     "next_item_p50_ms": 1e3 * float(np.percentile(t_next, 50)),
                     "next_item_p99_ms": 1e3 * float(np.percentile(t_next, 99))})
        print(rows[-1], flush=True)
    return rows


QUALITY_NOTES = """Worker quality (sections "quality", "quality trace", "submit latency"): breast_cancer, 12 workers of
whom a fraction answer at random and the others are right 70 % or 90 % of the time; every worker's answer to every
item drawn once per seed, the same for every strategy. Rows "STRATEGY / AGGREGATION": the label matrix a strategy
collected, aggregated by one rule; "its own labels()" is what the session itself returns (majority for the
majority session, the online model's graph-prior posterior for the quality-aware ones). Unlabelled items count
as wrong. crowd-kit (installed with --no-deps for the benchmark: its transformers dependency is only for text
aggregation) runs at 2 labels per item only (its cost): Dawid-Skene on round robin's and random's matrices,
GLAD and MACE on round robin's with a third of the crowd at chance. 1 and 3 labels per item: at a third of the
crowd at chance only. "quality trace": Spearman correlation of the quality-aware session's estimated worker accuracies
with the true ones, after 1/4, 1/2 and all of the budget. "submit latency": one worker at a time on a
make_classification pool, the session with the online update against the same session with the fold switched
off (the code path before it); next_item includes the weighting of MA3S's counts (an O(n) rescore when labels
arrived since the last selection). The store sits on a RAM disk where there is one (the study measures label
accuracy, not fsync) except in the latency rows, which use the temporary directory's disk."""


def _paired(rows, a, b, fraction, L):
    def find(method):
        return next((r for r in rows if r["method"] == method and r["spam_fraction"] == round(fraction, 3)
                     and r["labels_per_item"] == L), None)

    ra, rb = find(a), find(b)
    if ra is None or rb is None:
        return None
    pa = dict(zip(ra["seed_ids"], ra["accuracy_per_seed"]))
    pb = dict(zip(rb["seed_ids"], rb["accuracy_per_seed"]))
    d = np.array([pa[s] - pb[s] for s in pa if s in pb])
    se = float(np.std(d, ddof=1) / np.sqrt(d.size)) if d.size > 1 else float("nan")
    return float(d.mean()), se, d.size


def quality_checks(rows, latency):
    ours = "session, quality-aware / its own labels()"
    out = []
    fractions = sorted({r["spam_fraction"] for r in rows})
    offline = [r["method"] for r in rows if r["strategy"] in ("round robin", "random")
               and r["aggregation"] in ("crowd-kit DS", "dawid_skene")]
    for fraction in fractions:
        for target, goal in (("session, majority / its own labels()", 0.03), ("offline Dawid-Skene", 0.02)):
            if target == "offline Dawid-Skene":
                cands = [(m, _paired(rows, ours, m, fraction, 2)) for m in sorted(set(offline))]
                cands = [(m, p) for m, p in cands if p is not None]
                if not cands:
                    continue
                target, p = min(cands, key=lambda c: c[1][0])  # the strongest offline Dawid-Skene
            else:
                p = _paired(rows, ours, target, fraction, 2)
                if p is None:
                    continue
            diff, se, k = p
            met = "met" if diff >= goal and diff > 2 * se else "not met"
            out.append(f"spam {fraction:.2f}, 2 labels per item: quality-aware session - {target} = {diff:+.3f} "
                       f"(paired SE {se:.3f}, {k} seeds; goal >= +{goal:.2f}: {met})")
    if len(latency) == 2:
        base, new = latency
        out.append(f"p99 submit at {new['n_items']} items: {new['submit_p99_ms']:.2f} ms with the online update vs "
                   f"{base['submit_p99_ms']:.2f} ms without ({new['submit_p99_ms'] / base['submit_p99_ms']:.2f}x; "
                   "target <= 1.5x)")
    return out
