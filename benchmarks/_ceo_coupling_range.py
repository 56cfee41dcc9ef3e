"""CEO coupling-range benchmarks (imported by ``benchmarks/ceo.py``): the whole admissible coupling range, cases where
pairs cannot stand in for cells, a real two-view hypergraph from bundled digits, positional encodings as node
features. Every comparison is paired over seeds (mean difference ± standard error)."""

import warnings

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, adjusted_rand_score
from sklearn.model_selection import train_test_split

from sklearn_frontier.datasets import make_hypergraph_sbm
from sklearn_frontier.datasets._topology import load_digits_hypergraph
from sklearn_frontier.topology import (
    CEOPositionalEncoding,
    CEOSmoother,
    CEOSpectralClustering,
    HypergraphSpectralClustering,
    canonical_eigenbasis,
)
from sklearn_frontier.topology._baselines import hypergraph_laplacian


def paired(a, b):
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(len(d))) if len(d) > 1 else 0.0


def _fit(est, A, cells):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(A, cells=cells)


# ------------------------------------------------------------------------------------ the admissible range
def run_range_clustering(seeds, rhos, epss):
    """G1 hypergraph SBM: ARI across coupling ρ (relative to the "schur" bound, the whole admissible range) × ε;
    full complex vs max_rank=1 (paired) and vs ρ = 0 (paired); ‖A − S_ε‖₂."""
    data = [make_hypergraph_sbm(random_state=s) for s in seeds]
    base = [adjusted_rand_score(y, _fit(CEOSpectralClustering(3, affinity="precomputed", coupling=0.0,
                                                              random_state=s), A, c).labels_)
            for s, (A, c, y) in zip(seeds, data)]
    rows = []
    for eps in epss:
        for rho in rhos:
            out = {"full": [], "rank1": [], "gap": [], "gap_rel": []}
            for s, (A, c, y) in zip(seeds, data):
                for kind, mr in (("full", 2), ("rank1", 1)):
                    est = _fit(CEOSpectralClustering(3, affinity="precomputed", coupling=rho, coupling_bound="schur",
                                                     eps=eps, max_rank=mr, random_state=s), A, c)
                    out[kind].append(adjusted_rand_score(y, est.labels_))
                    if kind == "full":
                        L0 = (est.boundaries_[0] @ est.boundaries_[0].T).toarray()
                        out["gap"].append(est.sandwich_gap_)
                        out["gap_rel"].append(est.sandwich_gap_ / np.linalg.eigvalsh(L0)[-1])
            d1, s1 = paired(out["full"], out["rank1"])
            d0, s0 = paired(out["full"], base)
            rows.append({"case": "range: G1 hypergraph SBM n=120 (ARI)", "method": f"CEO schur rho={rho:g} eps={eps:g}",
                         "ARI": float(np.mean(out["full"])), "ARI_rank1": float(np.mean(out["rank1"])),
                         "diff_vs_rank1": d1, "diff_vs_rank1_se": s1, "diff_vs_coupling0": d0,
                         "diff_vs_coupling0_se": s0, "norm_A_minus_S": float(np.mean(out["gap"])),
                         "rel_norm_A_minus_S": float(np.mean(out["gap_rel"])),
                         "seeds": len(seeds)})
    return rows


def run_range_smoothing(shortcut_counts, rhos, epss, n_seeds=3):
    """G5 RGG smoothing (signed clique complex, so S_ε = f_ε(L_0)): MSE ratio vs L_0 Tikhonov across the range,
    τ tuned on a separate seed over a fine grid; the biharmonic filter (I + τL_0²)⁻¹ as a baseline."""
    from benchmarks.ceo import _rgg

    taus = np.geomspace(1e-3, 1e4, 71)

    def mse_curve(S, yn, f):
        lam, V = np.linalg.eigh(S)
        c = V.T @ yn
        return np.array([np.mean((V @ (c / (1 + t * np.maximum(lam, 0))) - f) ** 2) for t in taus])

    def operator(A, rho, eps):
        sm = CEOSmoother(affinity="precomputed", coupling=rho, coupling_bound="schur", eps=eps)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sm.fit(A)
        return sm.operator_

    rows = []
    for m in shortcut_counts:
        A, f, yn = _rgg(500, 0.08, m, seed=100)
        L0 = np.diag(np.asarray(A.sum(1)).ravel()) - A.toarray()
        configs = {"L_0 Tikhonov (coupling=0)": lambda A: np.diag(np.asarray(A.sum(1)).ravel()) - A.toarray(),
                   "biharmonic (I + tau L_0^2)^-1 (baseline)": lambda A: np.linalg.matrix_power(
                       np.diag(np.asarray(A.sum(1)).ravel()) - A.toarray(), 2)}
        for eps in epss:
            for rho in rhos:
                if rho > 0:
                    configs[f"S_eps schur rho={rho:g} eps={eps:g}"] = lambda A, r=rho, e=eps: operator(A, r, e)
        best_tau = {name: taus[int(np.argmin(mse_curve(make(A), yn, f)))] for name, make in configs.items()}
        mses = {name: [] for name in configs}
        gaps = {name: [] for name in configs}
        for seed in range(n_seeds):
            A, f, yn = _rgg(500, 0.08, m, seed=seed)
            L0 = np.diag(np.asarray(A.sum(1)).ravel()) - A.toarray()
            lmax = np.linalg.eigvalsh(L0)[-1]
            for name, make in configs.items():
                S = make(A)
                lam, V = np.linalg.eigh(S)
                c = V.T @ yn
                mses[name].append(float(np.mean((V @ (c / (1 + best_tau[name] * np.maximum(lam, 0))) - f) ** 2)))
                if name.startswith("S_eps"):
                    gaps[name].append(float(np.abs(np.linalg.eigvalsh(L0 - S)).max() / lmax))
        ref = mses["L_0 Tikhonov (coupling=0)"]
        bih = mses["biharmonic (I + tau L_0^2)^-1 (baseline)"]
        for name in configs:
            d, s = paired(mses[name], bih)
            rows.append({"case": f"range: G5 RGG n=500 shortcuts={m} (smoothing MSE)", "method": name,
                         "tau": float(best_tau[name]), "MSE": float(np.mean(mses[name])),
                         "MSE_ratio_vs_L0": float(np.mean(mses[name]) / np.mean(ref)),
                         "diff_vs_biharmonic": d, "diff_vs_biharmonic_se": s,
                         "rel_norm_A_minus_S": float(np.mean(gaps[name])) if gaps[name] else np.nan, "seeds": n_seeds})
    return rows


# ------------------------------------------------------------------------ cases where cells are not pairs
def _clustering_methods(k, tuned):
    m = {"CEO default (coupling=auto, eps=1e-3)": lambda s: CEOSpectralClustering(k, affinity="precomputed",
                                                                                random_state=s),
         f"CEO schur rho={tuned[0]:g} eps={tuned[1]:g}": lambda s: CEOSpectralClustering(
             k, affinity="precomputed", coupling=tuned[0], coupling_bound="schur", eps=tuned[1], random_state=s),
         "CEO max_rank=1 (ablation)": lambda s: CEOSpectralClustering(k, affinity="precomputed", max_rank=1,
                                                                      random_state=s)}
    for lap in ("graph_plus_pairs", "clique_expansion", "zhou", "graph"):
        m[f"baseline {lap}"] = lambda s, lap=lap: HypergraphSpectralClustering(k, laplacian=lap, affinity="precomputed",
                                                                               random_state=s)
    return m


def run_cells_cases(seeds, tuned=(0.9, 1.0)):
    """(a) large cells (5–20) on a sparse graph, most member pairs absent; (c) the two-view digits hypergraph."""
    cases = {
        "(a) large cells 5-20, sparse graph (hypergraph SBM n=120, 24 cells)": (
            lambda s: make_hypergraph_sbm(120, p_in=0.02, p_out=0.01, n_hyperedges=24, hyperedge_sizes=(5, 20),
                                          random_state=s), 3),
        "(a') large cells 5-20, no pairwise edges (n=120, 24 cells)": (
            lambda s: make_hypergraph_sbm(120, p_in=0.0, p_out=0.0, n_hyperedges=24, hyperedge_sizes=(5, 20),
                                          random_state=s), 3),
        "(c) two-view digits hypergraph n=600 (left-half kNN graph, right-half cells of 8)": (
            lambda s: load_digits_hypergraph(600, random_state=s), 10),
    }
    rows = []
    for case, (make, k) in cases.items():
        methods = _clustering_methods(k, tuned)
        scores = {name: [] for name in methods}
        absent = []
        for s in seeds:
            A, cells, y = make(s)
            A = A.tocsr()
            absent.append(np.mean([A[a, b] == 0 for c in cells for i, a in enumerate(c) for b in c[i + 1:]]))
            for name, est in methods.items():
                scores[name].append(adjusted_rand_score(y, _fit(est(s), A, cells).labels_))
        gpp = scores["baseline graph_plus_pairs"]
        best = max((n for n in methods if n.startswith("baseline")), key=lambda n: np.mean(scores[n]))
        for name in methods:
            d, se = paired(scores[name], gpp)
            db, sb = paired(scores[name], scores[best])
            rows.append({"case": case, "method": name, "ARI": float(np.mean(scores[name])),
                         "ARI_sd": float(np.std(scores[name], ddof=1)), "diff_vs_graph_plus_pairs": d,
                         "diff_vs_graph_plus_pairs_se": se, "strongest_baseline": best, "diff_vs_strongest": db,
                         "diff_vs_strongest_se": sb, "pairs_absent_from_graph": float(np.mean(absent)),
                         "seeds": len(seeds)})
    return rows


# ---------------------------------------------------------------------------------- positional encodings
def _baseline_pe(A, cells, lap, k):
    L, d = hypergraph_laplacian(A, cells, lap)
    mu, Psi = np.linalg.eigh(L.toarray())
    return canonical_eigenbasis(mu[1:k + 1], Psi[:, 1:k + 1]) / np.sqrt(d)[:, None]


def run_positional_encodings(seeds, k=16, tuned=(0.9, 1.0), n_samples=600):
    """Node classification on the two-view digits hypergraph: logistic regression on k positional-encoding
    features only (no pixels), 50 % of the nodes labelled (stratified), accuracy on the rest; each seed redraws
    the digits, the cells and the split. Encodings are unsupervised and transductive (fitted on every node)."""
    methods = {
        "CEO PE default (graded rho=0.5, eps=1e-3)": lambda A, c, s: CEOPositionalEncoding(
            k, affinity="precomputed", random_state=s).fit_transform(A, cells=c),
        f"CEO PE schur rho={tuned[0]:g} eps={tuned[1]:g}": lambda A, c, s: CEOPositionalEncoding(
            k, affinity="precomputed", coupling=tuned[0], coupling_bound="schur", eps=tuned[1],
            random_state=s).fit_transform(A, cells=c),
        "CEO PE max_rank=1 (ablation)": lambda A, c, s: CEOPositionalEncoding(
            k, affinity="precomputed", max_rank=1, random_state=s).fit_transform(A, cells=c),
        "Laplacian eigvecs: graph+pairs": lambda A, c, s: _baseline_pe(A, c, "graph_plus_pairs", k),
        "Laplacian eigvecs: clique expansion": lambda A, c, s: _baseline_pe(A, c, "clique_expansion", k),
        "Laplacian eigvecs: Zhou": lambda A, c, s: _baseline_pe(A, c, "zhou", k),
        "Laplacian eigvecs: graph only": lambda A, c, s: _baseline_pe(A, None, "graph", k),
    }
    acc = {name: [] for name in methods}
    for s in seeds:
        A, cells, y = load_digits_hypergraph(n_samples, random_state=s)
        tr, te = train_test_split(np.arange(len(y)), train_size=0.5, stratify=y, random_state=s)
        for name, make in methods.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                Z = make(A, cells, s)
            Z = Z / (np.linalg.norm(Z, axis=0, keepdims=True) / np.sqrt(len(y)))  # unit-RMS columns
            clf = LogisticRegression(max_iter=2000).fit(Z[tr], y[tr])
            acc[name].append(accuracy_score(y[te], clf.predict(Z[te])))
    gpp = acc["Laplacian eigvecs: graph+pairs"]
    best = max((n for n in methods if n.startswith("Laplacian")), key=lambda n: np.mean(acc[n]))
    rows = []
    for name in methods:
        d, se = paired(acc[name], gpp)
        db, sb = paired(acc[name], acc[best])
        rows.append({"case": f"PE node classification: two-view digits n={n_samples}, k={k}, 50% labelled",
                     "method": name, "accuracy": float(np.mean(acc[name])),
                     "accuracy_sd": float(np.std(acc[name], ddof=1)),
                     "diff_vs_graph_plus_pairs": d, "diff_vs_graph_plus_pairs_se": se, "strongest_baseline": best,
                     "diff_vs_strongest": db, "diff_vs_strongest_se": sb, "seeds": len(seeds)})
    return rows


# ------------------------------------------------------------- the clustering default on easy and hard regimes
# Planted hypergraphs, 3 blocks: the G1 model, and 300 vertices whose hyperedges (sizes 3-6) fall inside one block
# only half of the time, with and without pairwise edges. "hard" is the case users met: hyperedges only, few enough
# that some vertices have no in-cell pair at all.
HARD = dict(n_samples=300, hyperedge_sizes=(3, 6), p_hyperedge_in=0.5, p_in=0.0, p_out=0.0, n_hyperedges=225)
REGIMES = {
    "G1 n=120": {},
    "n=300, half random, pairwise edges": dict(HARD, p_in=0.06, p_out=0.03, n_hyperedges=150),
    "n=300, half random, sparse pairwise edges": dict(HARD, p_in=0.01, p_out=0.005, n_hyperedges=150),
    "n=300, half random, hyperedges only (hard)": HARD,
    "n=300, half random, hyperedges only, twice as many": dict(HARD, n_hyperedges=450),
}
RULE_COUPLINGS = (0.0, 0.25, 0.5, 0.75, 1.0)


def per_seed(values, seeds, metric="ARI"):
    """The per-seed columns of a headline row: mean, sd (ddof=1), the values and their seeds."""
    v = np.asarray(values, dtype=float)
    return {metric: float(v.mean()), f"{metric}_sd": float(v.std(ddof=1)) if len(v) > 1 else 0.0,
            f"{metric}_per_seed": [float(x) for x in v], "seed_ids": [int(s) for s in seeds]}


def _clique_graph(A, cells):
    """Edges ∪ every pair inside a hyperedge, 0/1 (what scikit-learn's SpectralClustering is given)."""
    W = A.toarray().astype(bool)
    for c in cells:
        idx = np.asarray(c)
        W[np.ix_(idx, idx)] = True
    np.fill_diagonal(W, False)
    return W.astype(np.float64)


def run_hard_case(seeds):
    """The hard regime as a table: the default, its fixed couplings, its ablation and every baseline, same seeds."""
    from sklearn.cluster import SpectralClustering

    def ceo(**kw):
        return lambda s: CEOSpectralClustering(3, affinity="precomputed", random_state=s, **kw)

    methods = {"CEO default (coupling=auto)": ceo(), "CEO coupling=0.5 (the former default)": ceo(coupling=0.5),
               "CEO coupling=0": ceo(coupling=0.0), "CEO max_rank=1 (ablation)": ceo(max_rank=1)}
    for lap in ("graph_plus_pairs", "clique_expansion", "zhou"):
        methods[f"Hypergraph[{lap}]"] = lambda s, lap=lap: HypergraphSpectralClustering(
            3, laplacian=lap, affinity="precomputed", random_state=s)
    methods["sklearn SpectralClustering (clique graph)"] = lambda s: SpectralClustering(
        3, affinity="precomputed", random_state=s)
    aris = {m: [] for m in methods}
    for s in seeds:
        A, cells, y = make_hypergraph_sbm(random_state=s, **HARD)
        for m, make in methods.items():
            est = make(s)
            if m.startswith("sklearn"):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est.fit(_clique_graph(A, cells))
            else:
                _fit(est, A, cells)
            aris[m].append(adjusted_rand_score(y, est.labels_))
    case = "hard hypergraph SBM n=300 (half the hyperedges random, no pairwise edges)"
    rows = []
    for m, v in aris.items():
        d0, s0 = paired(v, aris["CEO coupling=0"])
        rows.append({"case": case, "method": m, **per_seed(v, seeds), "diff_vs_coupling0": d0,
                     "diff_vs_coupling0_se": s0, "seeds": len(seeds)})
    return rows


def _normalised_eigengap(est, k):
    """μ_{k+1} − μ_k of the fitted normalised operator M = D^{-1/2} S_ε D^{-1/2} (dense route; isolated vertices
    on the diagonal as the estimator sets them)."""
    import scipy.linalg as la

    isq = 1.0 / np.sqrt(est._degrees)
    M = est.operator_ * np.outer(isq, isq)
    iso = est._isolated
    M[iso, :] = 0.0
    M[:, iso] = 0.0
    M[iso, iso] = 1.0
    mu = la.eigvalsh(M, subset_by_index=[0, k])
    return float(mu[k] - mu[k - 1])


def run_coupling_rule(seeds):
    """Which data-driven rule picks the coupling? Fixed couplings, modularity ("auto") and the eigengap of the
    normalised operator, on every regime, paired with coupling 0 over the same seeds."""
    from sklearn_frontier.topology._clustering import AUTO_COUPLINGS

    rows = []
    for regime, kw in REGIMES.items():
        ari = {c: [] for c in RULE_COUPLINGS}
        gap = {c: [] for c in RULE_COUPLINGS}
        auto = []
        for s in seeds:
            A, cells, y = make_hypergraph_sbm(random_state=s, **kw)
            for c in RULE_COUPLINGS:
                est = _fit(CEOSpectralClustering(3, affinity="precomputed", coupling=c, random_state=s), A, cells)
                ari[c].append(adjusted_rand_score(y, est.labels_))
                gap[c].append(_normalised_eigengap(est, 3))
            est = _fit(CEOSpectralClustering(3, affinity="precomputed", random_state=s), A, cells)
            auto.append(adjusted_rand_score(y, est.labels_))
        by_gap = [ari[max(AUTO_COUPLINGS, key=lambda c: (round(gap[c][i], 12), -c))][i] for i in range(len(seeds))]
        cands = {**{f"coupling={c:g}": ari[c] for c in RULE_COUPLINGS}, "auto: modularity over 0, 0.25, 0.5 "
                 "(the default)": auto, "eigengap over 0, 0.25, 0.5": by_gap}
        for m, v in cands.items():
            d0, s0 = paired(v, ari[0.0])
            rows.append({"case": f"coupling rule: {regime}", "method": m, **per_seed(v, seeds),
                         "diff_vs_coupling0": d0, "diff_vs_coupling0_se": s0, "seeds": len(seeds)})
    return rows


def coupling_rule_notes(rule_rows, hard_rows):
    """Verdicts (a difference within 2 SE is a tie) of the default and the former default against coupling 0."""
    def verdict(r):
        d, se = r["diff_vs_coupling0"], r["diff_vs_coupling0_se"]
        return "tie" if abs(d) <= 2 * se else ("better" if d > 0 else "WORSE")

    out = ["", "## The clustering default against its own coupling=0 (paired over the same seeds; tie within 2 SE)"]
    for r in hard_rows:
        if r["method"].startswith("CEO") and r["method"] != "CEO coupling=0":
            out.append(f"- {r['case']}: {r['method']} ARI {r['ARI']:.3f} − coupling 0 {r['diff_vs_coupling0']:+.4f} "
                       f"± {r['diff_vs_coupling0_se']:.4f}: {verdict(r)}.")
    for case in dict.fromkeys(r["case"] for r in rule_rows):
        rs = {r["method"]: r for r in rule_rows if r["case"] == case}
        parts = [f"{m.split(':')[0]} {rs[m]['diff_vs_coupling0']:+.4f} ± {rs[m]['diff_vs_coupling0_se']:.4f} "
                 f"({verdict(rs[m])})" for m in rs if m != "coupling=0"]
        out.append(f"- {case} (coupling 0: ARI {rs['coupling=0']['ARI']:.3f}): " + "; ".join(parts) + ".")
    return out
