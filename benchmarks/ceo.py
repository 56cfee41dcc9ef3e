"""CEO benchmarks: hypergraph SBM over seeds, a rank-2 ablation sweep, point clouds, smoothing,
timing/scaling (each scaling fit in its own subprocess: wall, CPU, peak RSS, tracemalloc peak), kernel T4.

``python -m benchmarks ceo [--quick]``. Every table carries the ``max_rank=1`` ablation and ``coupling=0``
beside the full operator; the notes state where any gain comes from.
"""

import argparse
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.cluster import SpectralClustering
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine, make_blobs, make_circles, make_moons
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score
from sklearn.preprocessing import StandardScaler

from benchmarks import _ceo_coupling_range as i20
from benchmarks._harness import headline_pair, write_results
from benchmarks._timing import timed
from sklearn_frontier.datasets import make_hypergraph_sbm
from sklearn_frontier.topology import (
    CEOSmoother,
    CEOSpectralClustering,
    HypergraphSpectralClustering,
    clique_complex,
    collapsed_operator,
)
from sklearn_frontier.topology._spectral import knn_adjacency


def _mean_sd(v):
    v = np.asarray(v, dtype=float)
    return float(v.mean()), float(v.std(ddof=1)) if len(v) > 1 else 0.0


# ------------------------------------------------------------------------------------------------- G1
DEFAULT = "CEO default (coupling=auto)"


def g1_methods(couplings, epss, normalizes):
    methods = {DEFAULT: (lambda s: CEOSpectralClustering(3, affinity="precomputed", random_state=s), True)}
    for c in couplings:
        for e in epss:
            for nz in normalizes:
                methods[f"CEO(c={c},eps={e:g},norm={nz})"] = (
                    lambda s, c=c, e=e, nz=nz: CEOSpectralClustering(3, affinity="precomputed", coupling=c, eps=e,
                                                                   normalize=nz, random_state=s), True)
    methods["CEO max_rank=1"] = (lambda s: CEOSpectralClustering(3, affinity="precomputed", max_rank=1,
                                                                 coupling=0.5, random_state=s), True)
    methods["CEO coupling=0"] = (lambda s: CEOSpectralClustering(3, affinity="precomputed", coupling=0.0,
                                                                 random_state=s), True)
    for lap in ("graph", "graph_plus_pairs", "clique_expansion", "zhou"):
        methods[f"Hypergraph[{lap}]"] = (lambda s, lap=lap: HypergraphSpectralClustering(
            3, laplacian=lap, affinity="precomputed", random_state=s), True)
    methods["sklearn SpectralClustering (graph)"] = (lambda s: SpectralClustering(
        3, affinity="precomputed", random_state=s), False)
    try:  # benchmark-only anchor (bench extra); its rows are skipped if XGI is absent
        import xgi  # noqa: F401

        methods["XGI spectral_clustering (Zhou, edges + cells)"] = (lambda s: _XGIAnchor(3, s), True)
    except ImportError:
        pass
    return methods


class _XGIAnchor:
    """XGI's ``spectral_clustering`` (Zhou et al. normalised hypergraph Laplacian + its own k-means) on the
    hypergraph of the pairwise edges and the cells."""

    def __init__(self, k, seed):
        self.k, self.seed = k, seed

    def fit(self, A, cells=None):
        import xgi

        n = A.shape[0]
        U = sp.triu(sp.csr_matrix(A), k=1).tocoo()
        H = xgi.Hypergraph()
        H.add_nodes_from(range(n))
        H.add_edges_from([[int(i), int(j)] for i, j in zip(U.row, U.col)] + [list(map(int, c)) for c in cells or []])
        try:
            with np.errstate(all="ignore"):
                clusters = xgi.spectral_clustering(H, k=self.k, seed=self.seed)
            self.labels_ = np.array([clusters.get(v, -1) for v in range(n)])
            self.failed_ = False
        except Exception:  # isolated nodes make XGI's normalised Laplacian singular: scored as one cluster
            self.labels_ = np.zeros(n, dtype=int)
            self.failed_ = True
        return self


def run_g1(seeds, couplings, epss, normalizes):
    methods = g1_methods(couplings, epss, normalizes)
    scores = {m: {"ari": [], "nmi": [], "time": [], "deg": [], "failed": 0} for m in methods}
    for seed in seeds:
        A, cells, y = make_hypergraph_sbm(random_state=seed)
        for name, (make, takes_cells) in methods.items():
            est = make(seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = timed(lambda: est.fit(A, cells=cells) if takes_cells else est.fit(A.toarray())).wall_s
            scores[name]["ari"].append(adjusted_rand_score(y, est.labels_))
            scores[name]["nmi"].append(normalized_mutual_info_score(y, est.labels_))
            scores[name]["time"].append(t)
            scores[name]["deg"].append(getattr(est, "degeneracy_", np.nan))
            scores[name]["failed"] += int(getattr(est, "failed_", False))
    rows = []
    for name, s in scores.items():
        mn, sn = _mean_sd(s["nmi"])
        rows.append({"case": "G1 hypergraph SBM n=120", "method": name, **i20.per_seed(s["ari"], seeds), "NMI": mn,
                     "NMI_sd": sn, "fit_s": float(np.median(s["time"])), "degeneracy": float(np.nanmean(s["deg"]))
                     if not np.all(np.isnan(s["deg"])) else np.nan, "seeds": len(seeds)})
        if s["failed"]:
            rows[-1]["failed_seeds (scored as one cluster)"] = s["failed"]
    default = DEFAULT
    d = np.array(scores["CEO(c=0.5,eps=0.001,norm=True)"]["ari"]) - np.array(scores["CEO max_rank=1"]["ari"])
    summary = {
        "ari_ceo": _mean_sd(scores[default]["ari"])[0],
        "ratio_vs_zhou": _mean_sd(scores[default]["ari"])[0] / _mean_sd(scores["Hypergraph[zhou]"]["ari"])[0],
        "ratio_vs_gpp": _mean_sd(scores[default]["ari"])[0]
        / _mean_sd(scores["Hypergraph[graph_plus_pairs]"]["ari"])[0],
        "ratio_vs_sklearn": _mean_sd(scores[default]["ari"])[0]
        / max(_mean_sd(scores["sklearn SpectralClustering (graph)"]["ari"])[0], 1e-12),
        "paired_diff_vs_rank1": float(d.mean()),
        "paired_diff_se": float(d.std(ddof=1) / np.sqrt(len(d))) if len(d) > 1 else 0.0,
    }
    return rows, summary


# ----------------------------------------------------------------------------------- rank-2 ablation sweep
def run_rank2_sweep(seeds, epss=(1e-3, 1e-1, 1.0), beta2s=(1.0, 10.0)):
    """Where could rank-2 cells matter? Mixed incidences (B_1 signed, B_2 0/1), large ε and a heavy β_2, on the
    G1 SBM and on a pure hypergraph (no pairwise edges: rank 1 is only in-cell pairs). Full vs max_rank=1,
    paired over seeds."""
    datasets = {"G1 SBM": {}, "pure hypergraph (no pairwise edges, 120 cells)": dict(p_in=0.0, p_out=0.0,
                                                                                     n_hyperedges=120)}
    rows, notes = [], []
    for dname, kw in datasets.items():
        data = [make_hypergraph_sbm(random_state=s, **kw) for s in seeds]
        for eps in epss:
            base = []
            for seed, (A, cells, y) in zip(seeds, data):
                est = CEOSpectralClustering(3, affinity="precomputed", max_rank=1, eps=eps, random_state=seed)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    base.append(adjusted_rand_score(y, est.fit(A, cells=cells).labels_))
            rows.append({"case": f"rank-2 ablation: {dname}", "method": f"CEO eps={eps:g} max_rank=1",
                         "ARI": _mean_sd(base)[0], "ARI_sd": _mean_sd(base)[1], "degeneracy": 0.0,
                         "seeds": len(seeds)})
            for b2 in beta2s:
                ari, deg = [], []
                for seed, (A, cells, y) in zip(seeds, data):
                    est = CEOSpectralClustering(3, affinity="precomputed", eps=eps, betas=[1.0, b2],
                                                random_state=seed)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        ari.append(adjusted_rand_score(y, est.fit(A, cells=cells).labels_))
                    deg.append(est.degeneracy_)
                d = np.array(ari) - np.array(base)
                se = float(d.std(ddof=1) / np.sqrt(len(d))) if len(d) > 1 else 0.0
                rows.append({"case": f"rank-2 ablation: {dname}", "method": f"CEO eps={eps:g} beta_2={b2:g} (full)",
                             "ARI": _mean_sd(ari)[0], "ARI_sd": _mean_sd(ari)[1], "degeneracy": float(np.mean(deg)),
                             "paired_diff_vs_rank1": float(d.mean()), "paired_diff_se": se, "seeds": len(seeds)})
                if abs(d.mean()) > 2 * se and d.any():
                    notes.append(f"{dname}, eps={eps:g}, beta_2={b2:g}: full − max_rank=1 = {d.mean():+.4f} ± {se:.4f}")
    return rows, notes


# --------------------------------------------------------------------------------------------- G2–G4
def point_clouds(full):
    sets = {
        "moons": (lambda: make_moons(300, noise=0.08, random_state=0), 2),
        "circles": (lambda: make_circles(300, factor=0.5, noise=0.05, random_state=0), 2),
        "blobs": (lambda: make_blobs(300, centers=4, cluster_std=1.5, random_state=0), 4),
        "iris": (lambda: load_iris(return_X_y=True), 3),
        "wine": (lambda: load_wine(return_X_y=True), 3),
        "breast_cancer": (lambda: load_breast_cancer(return_X_y=True), 2),
    }
    if full:
        sets["digits"] = (lambda: load_digits(return_X_y=True), 10)
    return sets


def run_point_clouds(full):
    rows = []
    for name, (load, k) in point_clouds(full).items():
        X, y = load()
        X = StandardScaler().fit_transform(X)
        res = {}
        variants = {
            "CEO signed": dict(),
            "CEO signed max_rank=1": dict(max_rank=1),
            "CEO coupling=0": dict(coupling=0.0),
            "CEO mixed": dict(incidence="mixed"),
        }
        for label, kw in variants.items():
            if label == "CEO mixed" and len(y) > 1000:
                # measured: > 200 s — its triangles overlap in one piece of > 2000 pairs and > 4000 triangles, so
                # neither the cellwise nor the Woodbury route applies and the sparse LU of C + εI fills badly
                rows.append({"case": f"{name} (n={len(y)})", "method": label,
                             "note": "skipped (> 200 s: sparse-LU route of a giant overlapping-triangle piece)"})
                continue
            est = CEOSpectralClustering(k, n_neighbors=10, random_state=0, **kw)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = timed(lambda: est.fit(X)).wall_s
            res[label] = est
            rows.append({"case": f"{name} (n={len(y)})", "method": label, "ARI": adjusted_rand_score(y, est.labels_),
                         "NMI": normalized_mutual_info_score(y, est.labels_), "fit_s": t,
                         "degeneracy": est.degeneracy_, "n_triangles": int(est.n_cells_[2]) if len(est.n_cells_) > 2
                         else 0})
        sk = SpectralClustering(k, affinity="nearest_neighbors", n_neighbors=10, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = timed(lambda: sk.fit(X)).wall_s
        rows.append({"case": f"{name} (n={len(y)})", "method": "sklearn SpectralClustering(kNN)",
                     "ARI": adjusted_rand_score(y, sk.labels_), "NMI": normalized_mutual_info_score(y, sk.labels_),
                     "fit_s": t})
        rows[-5]["labels_identical_to_rank1"] = bool(np.array_equal(res["CEO signed"].labels_,
                                                                    res["CEO signed max_rank=1"].labels_))
    try:
        import networkx as nx

        G = nx.karate_club_graph()
        A = nx.to_scipy_sparse_array(G, format="csr")
        y = np.array([G.nodes[v]["club"] == "Officer" for v in G], dtype=int)
        for label, kw in {"CEO signed": {}, "CEO signed max_rank=1": {"max_rank": 1}, "CEO mixed":
                          {"incidence": "mixed"}, "CEO coupling=0": {"coupling": 0.0}}.items():
            est = CEOSpectralClustering(2, affinity="precomputed", random_state=0, **kw).fit(A)
            rows.append({"case": "karate club", "method": label, "ARI": adjusted_rand_score(y, est.labels_),
                         "NMI": normalized_mutual_info_score(y, est.labels_), "degeneracy": est.degeneracy_})
    except ImportError:
        pass
    return rows


# ------------------------------------------------------------------------------------------------ G5
def _rgg(n, r, shortcuts, seed):
    rng = np.random.default_rng(seed)
    U = rng.random((n, 2))
    from scipy.spatial import cKDTree

    pairs = cKDTree(U).query_pairs(r, output_type="ndarray")
    A = sp.csr_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    if shortcuts:
        i, j = rng.integers(0, n, shortcuts), rng.integers(0, n, shortcuts)
        keep = i != j
        A = A + sp.csr_matrix((np.ones(keep.sum()), (i[keep], j[keep])), shape=(n, n))
    A = ((A + A.T) > 0).astype(float)
    f = np.sin(2 * np.pi * U[:, 0]) + np.cos(2 * np.pi * U[:, 1])
    return A, f, f + 0.3 * rng.standard_normal(n)


def run_smoothing(shortcut_counts, taus):
    old = dict(coupling=0.5, coupling_bound="graded", eps=1e-3)
    methods = {"L_0 (coupling=0)": dict(coupling=0.0), "S_eps signed (defaults: schur rho=1, eps=100)": dict(),
               "S_eps signed max_rank=1 (defaults)": dict(max_rank=1),
               "S_eps mixed (defaults)": dict(incidence="mixed"),
               "S_eps signed, old defaults (graded rho=0.5, eps=1e-3)": old,
               "S_eps signed graded rho=1, eps=1e-3": dict(old, coupling=1.0)}
    rows = []
    for m in shortcut_counts:
        best = {}
        A, f, yn = _rgg(500, 0.08, m, seed=100)  # tuning seed
        for name, kw in methods.items():
            sm = CEOSmoother(tau=1.0, affinity="precomputed", **kw)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sm.fit(A)
            lam, V = np.linalg.eigh(sm.operator_)  # one operator, every tau: (I + τS)⁻¹y = V (1 + τλ)⁻¹ Vᵀy
            c = V.T @ yn
            errs = {tau: float(np.mean((V @ (c / (1 + tau * np.maximum(lam, 0.0))) - f) ** 2)) for tau in taus}
            best[name] = min(errs, key=errs.get)
        for seed in range(3):
            A, f, yn = _rgg(500, 0.08, m, seed=seed)
            for name, kw in methods.items():
                sm = CEOSmoother(tau=best[name], affinity="precomputed", **kw)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    sm.fit(A)
                rows.append({"shortcuts": m, "method": name, "tau": best[name], "seed": seed,
                             "mse": float(np.mean((sm.smooth(yn) - f) ** 2)), "degeneracy": sm.degeneracy_})
    out = []
    for m in shortcut_counts:
        base = np.mean([r["mse"] for r in rows if r["shortcuts"] == m and r["method"] == "L_0 (coupling=0)"])
        for name in methods:
            mse = np.mean([r["mse"] for r in rows if r["shortcuts"] == m and r["method"] == name])
            tau = next(r["tau"] for r in rows if r["shortcuts"] == m and r["method"] == name)
            deg = np.mean([r["degeneracy"] for r in rows if r["shortcuts"] == m and r["method"] == name])
            out.append({"case": f"G5 RGG n=500, shortcuts={m}", "method": name, "tau": tau, "MSE": float(mse),
                        "MSE_ratio_vs_L0": float(mse / base), "degeneracy": float(deg)})
    return out


# -------------------------------------------------------------------------------------- timing/scaling
def run_timing(n_fast, n_sbm_list, cg_check_n):
    rows = []
    X, _ = make_blobs(n_fast, centers=5, n_features=3, random_state=0)
    A = knn_adjacency(X, 10)
    Bs = clique_complex(A, 2)
    fast, gen = timed(lambda: collapsed_operator(Bs)), timed(lambda: collapsed_operator(Bs, fast_path=False))
    t_fast, S_fast, t_gen, S_gen = fast.wall_s, fast.result, gen.wall_s, gen.result
    rows.append({"case": f"signed clique complex kNN n_0={n_fast}, triangles={Bs[1].shape[1]}",
                 "method": "generic dense (splu) / fast path", "fast_s": t_fast, "generic_s": t_gen,
                 "ratio": t_gen / t_fast, "max_abs_diff": float(np.abs(S_fast - S_gen).max())})
    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    ceo = CEOSpectralClustering(10, n_neighbors=10, coupling=0.5, random_state=0)  # one fit of one operator
    auto = CEOSpectralClustering(10, n_neighbors=10, random_state=0)  # the default: three couplings fitted
    skl = SpectralClustering(10, affinity="nearest_neighbors", n_neighbors=10, eigen_solver="arpack", random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ceo.fit(X[:300])  # warm-up (JIT, imports)
        t_ceo, t_sk = timed(lambda: ceo.fit(X), repeats=3), timed(lambda: skl.fit(X), repeats=3)
        t_auto = timed(lambda: auto.fit(X), repeats=3)
    rows.append({"case": "digits n=1797 (fast path, coupling=0.5, median of 3)",
                 "method": "CEO / sklearn SpectralClustering(arpack)",
                 "fast_s": t_ceo.wall_s, "generic_s": t_sk.wall_s, "ratio": t_ceo.wall_s / t_sk.wall_s,
                 "cpu_ratio": t_ceo.cpu_s / t_sk.cpu_s,
                 "ARI_ceo": adjusted_rand_score(y, ceo.labels_), "ARI_sklearn": adjusted_rand_score(y, skl.labels_),
                 "route": ceo.route_})
    rows.append({"case": "digits (default coupling='auto', n=1797, median of 3)",
                 "method": "CEO default / sklearn SpectralClustering(arpack)", "fast_s": t_auto.wall_s,
                 "generic_s": t_sk.wall_s, "ratio": t_auto.wall_s / t_sk.wall_s, "cpu_ratio": t_auto.cpu_s / t_sk.cpu_s,
                 "ARI_ceo": adjusted_rand_score(y, auto.labels_), "route": auto.route_,
                 "note": f"coupling chosen: {auto.coupling_:g}"})
    rows += run_scaling(n_sbm_list, cg_check_n)
    return rows


def coupling_range_notes(range_rows, cells_rows, pe_rows, tuned):
    """Plain-words verdicts on the coupling range, computed from the rows (paired differences ± SE over seeds)."""
    out = ["", "## Where does the higher-order collapse pay? (paired differences ± SE over seeds)"]
    cl = [r for r in range_rows if "ARI" in r["case"]]
    if cl:
        sig = [r for r in cl if abs(r["diff_vs_rank1"]) > 2 * r["diff_vs_rank1_se"] and r["diff_vs_rank1"] != 0]
        best = max(cl, key=lambda r: r["ARI"])
        worst = min(cl, key=lambda r: r["ARI"])
        out.append(f"- Range, clustering (G1, coupling relative to the schur bound, {len(cl)} points): best ARI "
                   f"{best['ARI']:.3f} ({best['method']}; vs coupling 0: {best['diff_vs_coupling0']:+.4f} ± "
                   f"{best['diff_vs_coupling0_se']:.4f}), worst {worst['ARI']:.3f} ({worst['method']}). Cells vs "
                   f"max_rank=1 beyond 2 SE at {len(sig)} of {len(cl)} points"
                   + (": " + "; ".join(f"{r['method']} {r['diff_vs_rank1']:+.4f} ± {r['diff_vs_rank1_se']:.4f}"
                                       for r in sig) if sig else "") + ". ‖A − S_ε‖₂/λ_max(L_0) reaches "
                   f"{max(r['rel_norm_A_minus_S'] for r in cl):.2f}: the operator moves far from L_0, the labels "
                   "do not improve.")
    sm = [r for r in range_rows if "smoothing" in r["case"] and r["method"].startswith("S_eps")]
    if sm:
        for case in sorted({r["case"] for r in sm}):
            rs = [r for r in sm if r["case"] == case]
            b = min(rs, key=lambda r: r["MSE_ratio_vs_L0"])
            bih = next(r for r in range_rows if r["case"] == case and r["method"].startswith("biharmonic"))
            out.append(f"- Range, smoothing ({case}): best S_eps {b['method']} MSE ratio vs L_0 "
                       f"{b['MSE_ratio_vs_L0']:.3f} (‖A − S‖/λ_max = {b['rel_norm_A_minus_S']:.2f}); the biharmonic "
                       f"filter (I + tau L_0²)⁻¹ gets {bih['MSE_ratio_vs_L0']:.3f}; S_eps − biharmonic MSE = "
                       f"{b['diff_vs_biharmonic']:+.5f} ± {b['diff_vs_biharmonic_se']:.5f}.")
        out.append("  The dense long-range part matters only at the top of the admissible range with ε ≫ λ_max, "
                   "where S_ε ≈ (L_0² − λ_2 L_0)/ε — a biharmonic smoother; CEOSmoother's defaults now follow it "
                   "(coupling 1 of the schur bound, ε = 100).")
    for case in sorted({r["case"] for r in cells_rows}):
        rs = {r["method"]: r for r in cells_rows if r["case"] == case}
        ceo = [m for m in rs if m.startswith("CEO") and "ablation" not in m]
        b = max(ceo, key=lambda m: rs[m]["ARI"])
        r = rs[b]
        out.append(f"- {case}: {100 * r['pairs_absent_from_graph']:.0f}% of in-cell pairs absent from the graph; best "
                   f"CEO ({b}) ARI {r['ARI']:.3f}; − graph+pairs {r['diff_vs_graph_plus_pairs']:+.4f} ± "
                   f"{r['diff_vs_graph_plus_pairs_se']:.4f}; − strongest baseline ({r['strongest_baseline']}) "
                   f"{r['diff_vs_strongest']:+.4f} ± {r['diff_vs_strongest_se']:.4f}; − own max_rank=1 "
                   f"{rs[b]['ARI'] - rs['CEO max_rank=1 (ablation)']['ARI']:+.4f}.")
    if pe_rows:
        rs = {r["method"]: r for r in pe_rows}
        for m in [m for m in rs if m.startswith("CEO")]:
            r = rs[m]
            out.append(f"- {r['case']}: {m} accuracy {r['accuracy']:.3f}; − graph+pairs eigvecs "
                       f"{r['diff_vs_graph_plus_pairs']:+.4f} ± {r['diff_vs_graph_plus_pairs_se']:.4f}; − strongest "
                       f"({r['strongest_baseline']}) {r['diff_vs_strongest']:+.4f} ± {r['diff_vs_strongest_se']:.4f}.")
    out.append(f"- Tuned CEO point for the cells/PE cases: schur rho={tuned[0]:g}, eps={tuned[1]:g} (best G1 ARI of "
               "the range sweep, then fixed). (b) Oriented complexes: the operator supports signed (oriented) "
               "incidences, but for a chain complex S_ε = f_ε(L_0) exactly (chain lemma; degeneracy 0, labels "
               "identical to max_rank=1 on every point cloud below), so orientation cannot carry information into "
               "this vertex operator; edge flows are outside what a rank-0 collapse represents. No XGI dataset was "
               "used: XGI is not installed here and its loaders fetch over the network.")
    return out


def _sbm_scaled(n):
    """G1 scaled to n vertices: p·n and hyperedges/n held fixed."""
    return make_hypergraph_sbm(n, p_in=0.06 * 120 / n, p_out=0.03 * 120 / n, n_hyperedges=n // 2, random_state=0)


def _vm_hwm_mb():
    """Peak resident set of this process (VmHWM; unlike ru_maxrss it is not inherited across exec)."""
    import resource

    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1e3
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def scale_worker(n, solver, out_path):
    """One end-to-end CEOSpectralClustering fit in a fresh process: wall, CPU, peak RSS and tracemalloc peak."""
    import json

    A, cells, y = _sbm_scaled(n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, c, _ = _sbm_scaled(200)
        CEOSpectralClustering(3, affinity="precomputed", solver="cg", normalize="degree",
                              random_state=0).fit(a, cells=c)
    rss0 = _vm_hwm_mb()
    est = CEOSpectralClustering(3, affinity="precomputed", solver=solver, normalize="degree", coupling=0.5,
                                random_state=0)  # one fit of one operator: the scaling of the route itself
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = timed(lambda: est.fit(A, cells=cells), trace_memory=True)
    wall, cpu, peak = t.wall_s, t.cpu_s, t.peak_mb * 1e6
    rss = _vm_hwm_mb()
    np.save(out_path, est.embedding_)
    print(json.dumps({"case": f"hypergraph SBM n={n} (cells={len(cells)}, rank-1 pairs={int(est.n_cells_[1])})",
                      "method": f"CEO solver={solver} ({est.route_})", "fit_s": wall, "cpu_s": cpu,
                      "peak_RSS_MB": rss, "RSS_before_fit_MB": rss0, "tracemalloc_peak_MB": peak / 1e6,
                      "dense_nxn_MB": 8 * n * n / 1e6, "mem_fraction_of_nxn": peak / (8 * n * n),
                      "ARI": adjusted_rand_score(y, est.labels_), "n_cg_iter": int(est.n_cg_iter_),
                      "n_eigen_iter": int(getattr(est, "n_eigen_iter_", 0)), "degeneracy": float(est.degeneracy_)}))


def run_scaling(n_sbm_list, cg_check_n):
    """Scaling rows, each fit in its own single-threaded subprocess (clean peak RSS)."""
    import json
    import os
    import subprocess
    import sys
    import tempfile

    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               NUMBA_NUM_THREADS="1")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in n_sbm_list:
            embs = {}
            for solver in (("dense", "cg") if n <= cg_check_n else ("cg",)):
                path = os.path.join(tmp, f"{n}_{solver}.npy")
                out = subprocess.run([sys.executable, "-m", "benchmarks", "ceo", "--worker", str(n), solver, path],
                                     capture_output=True, text=True, env=env, timeout=1200)
                if out.returncode:
                    rows.append({"case": f"hypergraph SBM n={n}", "method": f"CEO solver={solver}",
                                 "error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed"})
                    continue
                row = json.loads(out.stdout.strip().splitlines()[-1])
                embs[solver] = np.load(path)
                if solver == "cg" and "dense" in embs:
                    U, V = np.linalg.qr(embs["dense"])[0], np.linalg.qr(embs["cg"])[0]
                    row["subspace_dist_vs_dense"] = float(np.linalg.norm(U @ U.T - V @ V.T, 2))
                rows.append(row)
    return rows


def run_kernel_t4(r=32):
    from sklearn_frontier.kernels import pcg_jacobi_batched

    from sklearn_frontier import config_context

    A, cells, _ = make_hypergraph_sbm(600, p_in=0.012, p_out=0.006, n_hyperedges=300, random_state=0)
    from sklearn_frontier.topology import graded_laplacian, hypergraph_complex

    Bs = hypergraph_complex(A, cells)
    L = graded_laplacian(Bs)
    C = L[600:, 600:].tocsr()
    inv = 1 / (C.diagonal() + 1e-3)
    rhs = np.random.default_rng(0).standard_normal((C.shape[0], r))
    out = {}
    for backend in ("numba", "reference"):
        with config_context(backend=backend):
            pcg_jacobi_batched(C, inv, 1e-3, rhs[:, :2], 1e-10)  # warm-up (JIT)
            t = timed(lambda: pcg_jacobi_batched(C, inv, 1e-3, rhs, 1e-10), repeats=3)
            out[backend], res = t.wall_s, t.result
    return [{"case": f"T4 pcg_jacobi_batched N={C.shape[0]}, nnz={C.nnz}, r={r}", "method": "numba / reference",
             "numba_s": out["numba"], "reference_s": out["reference"], "speedup": out["reference"] / out["numba"],
             "iters_mean": float(res[1].mean())}]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks ceo")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--parts", default="g1,hard,rule,range,cells,pe,rank2,clouds,smoothing,timing,t4",
                        help="comma-separated subset of g1,hard,rule,range,cells,pe,rank2,clouds,smoothing,timing,t4 "
                        "(g1 always runs)")
    parser.add_argument("--worker", nargs=3, metavar=("N", "SOLVER", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        scale_worker(int(args.worker[0]), args.worker[1], args.worker[2])
        return 0
    quick = args.quick
    parts = set(args.parts.split(","))
    seeds = list(range(10))
    if quick:
        couplings, epss, norms = (0.0, 0.5, 1.0), (1e-3,), (True,)
    else:
        couplings, epss, norms = (0, 0.1, 0.3, 0.5, 0.7, 0.9, 1), (1e-4, 1e-3, 1e-2), ("diag", "degree", False)
    if True not in norms:
        norms = (True, *norms)
    rows, summary = run_g1(seeds, couplings, epss, norms)  # always: the headline table
    hard_rows = i20.run_hard_case(list(range(20 if quick else 40))) if "hard" in parts else []
    rule_rows = i20.run_coupling_rule(list(range(10 if quick else 40))) if "rule" in parts else []
    rows += hard_rows + rule_rows

    if quick:
        rhos, r_epss, s_epss, shortcuts20 = (0.0, 0.5, 0.9, 1.0), (1e-3, 1.0, 100.0), (1e-3, 1.0, 100.0), (100,)
    else:
        rhos, r_epss = (0.0, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0), (1e-3, 1e-1, 1.0, 10.0, 100.0)
        s_epss, shortcuts20 = (1e-3, 1e-1, 1.0, 10.0, 100.0, 1000.0), (0, 100, 200)
    range_rows = i20.run_range_clustering(seeds, rhos, r_epss) if "range" in parts else []
    tuned = (0.9, 1.0)
    cands = [r for r in range_rows if "rho=0 " not in r["method"]]
    if cands:  # the range point with the best G1 ARI (selected on G1, then used unchanged on the other cases)
        top = max(cands, key=lambda r: r["ARI"])
        tuned = tuple(float(v.split("=")[1]) for v in top["method"].split()[2:4])
    range_rows += i20.run_range_smoothing(shortcuts20, [r for r in rhos if r > 0], s_epss) if "range" in parts else []
    cells_rows = i20.run_cells_cases(seeds, tuned) if "cells" in parts else []
    pe_rows = i20.run_positional_encodings(seeds, tuned=tuned) if "pe" in parts else []
    rows += range_rows + cells_rows + pe_rows
    rank2, rank2_notes = run_rank2_sweep(seeds) if "rank2" in parts else ([], [])
    rows += rank2
    rows += run_point_clouds(full=not quick) if "clouds" in parts else []
    smooth = run_smoothing((0, 100, 200) if quick else (0, 100, 150, 200), (0.1, 0.3, 1, 3, 10, 30, 100)) \
        if "smoothing" in parts else []
    timing = run_timing(800 if quick else 2000, (600, 3000, 30000), 3000) if "timing" in parts else []
    t4 = run_kernel_t4() if "t4" in parts else []
    all_rows = rows + smooth + timing + t4
    notes = [
        "## Summary (G1, 10 seeds, default CEO = coupling 'auto' (modularity over 0, 0.25, 0.5), eps 1e-3, "
        "normalize=True)",
        f"- ARI(CEO) = {summary['ari_ceo']:.3f}; ARI(CEO)/ARI(Zhou) = {summary['ratio_vs_zhou']:.3f} (target >= 1.1); "
        f"ARI(CEO)/ARI(graph_plus_pairs) = {summary['ratio_vs_gpp']:.3f} (target >= 0.95); "
        f"ARI(CEO)/ARI(sklearn graph-only) = {summary['ratio_vs_sklearn']:.1f}.",
        "- Paired difference CEO(coupling=0.5) − CEO(max_rank=1, coupling=0.5): "
        f"{summary['paired_diff_vs_rank1']:+.4f} ± "
        f"{summary['paired_diff_se']:.4f} (SE). Rank-2 cells get credit only if this exceeds 2 SE: "
        + ("they do." if summary["paired_diff_vs_rank1"] > 2 * summary["paired_diff_se"] else
           "they do NOT — the gain over the graph comes from the in-cell pairs placed in rank 1."),
        "- Rank-2 ablation sweep (mixed incidences, eps up to 1, beta_2 up to 10, also a pure hypergraph): "
        + ("; ".join(rank2_notes) if rank2_notes else "no setting moves ARI by more than 2 SE; the operator does "
           "change (degeneracy grows roughly in proportion to eps) but not the clustering."),
        "- Signed clique complexes (point clouds): labels identical to max_rank=1 (chain lemma, degeneracy 0).",
    ]
    for r in smooth:
        if r["method"] != "L_0 (coupling=0)" and r["MSE_ratio_vs_L0"] >= 1:
            notes.append(f"- FLAG (spec G5): {r['case']}, {r['method']}: MSE ratio {r['MSE_ratio_vs_L0']:.3f} >= 1.")
    if smooth:
        best = min((r for r in smooth if r["method"] != "L_0 (coupling=0)"), key=lambda r: r["MSE_ratio_vs_L0"])
        oldd = [r for r in smooth if "old defaults" in r["method"]]
        notes.append(f"- G5 smoothing (CEOSmoother, tau on a coarse grid): best MSE(S_eps)/MSE(L_0) = "
                     f"{best['MSE_ratio_vs_L0']:.3f} ({best['method']}, {best['case']}); the old defaults reached "
                     f"{min(r['MSE_ratio_vs_L0'] for r in oldd):.3f} at best. Signed rows equal their max_rank=1 "
                     "ablation (chain lemma): the gain is the spectral map of the top of the admissible range, not "
                     "the triangles.")
    notes += i20.coupling_rule_notes(rule_rows, hard_rows)
    notes += coupling_range_notes(range_rows, cells_rows, pe_rows, tuned)
    for r in timing:
        if r.get("method", "").startswith("CEO solver=") and "fit_s" in r:
            notes.append(f"- scale: {r['case']} {r['method']}: {r['fit_s']:.1f} s wall / {r['cpu_s']:.1f} s CPU, "
                         f"peak RSS {r['peak_RSS_MB']:.0f} MB (tracemalloc peak {r['tracemalloc_peak_MB']:.0f} MB = "
                         f"{100 * r['mem_fraction_of_nxn']:.2f}% of a dense n×n, {r['dense_nxn_MB']:.0f} MB), "
                         f"ARI {r['ARI']:.3f}" + (f", subspace distance to dense {r['subspace_dist_vs_dense']:.1e}"
                                                  if "subspace_dist_vs_dense" in r else "") + ".")
        elif r.get("case", "").startswith("digits (default"):
            notes.append(f"- digits, the default coupling='auto' (three fits, {r['note']}): CEO / sklearn "
                         f"SpectralClustering(arpack) = {r['ratio']:.2f}× wall, {r['cpu_ratio']:.2f}× CPU.")
        elif r.get("case", "").startswith("digits"):
            notes.append(f"- digits fast path: CEO / sklearn SpectralClustering(arpack) = {r['ratio']:.2f}× wall, "
                         f"{r['cpu_ratio']:.2f}× CPU (target <= 3; route {r.get('route', '?')}: S_eps matrix-free "
                         "with diag(S_eps) by sparse Cholesky + Takahashi selected inversion, no dense n³ inverse; "
                         "solver='dense' keeps the old route).")
    for r in t4:
        notes.append(f"- T4 pcg_jacobi_batched numba / reference speed-up at r=32: {r['speedup']:.2f}× (target >= 3).")
    default = DEFAULT
    g1 = {r["method"]: r for r in rows if r["case"].startswith("G1")}
    headline = headline_pair(rows, key="method", ours=[default, "CEO*"], metric="ARI", lower_is_better=False,
                             cost="fit_s", seeds="seeds", case="G1 hypergraph SBM*") if g1 else None
    text = write_results("ceo", all_rows, notes="\n".join(notes), headline=headline, columns=[
        "case", "method", "ARI", "ARI_sd", "NMI", "fit_s", "cpu_s", "degeneracy", "paired_diff_vs_rank1",
        "paired_diff_se", "labels_identical_to_rank1", "MSE", "MSE_ratio_vs_L0", "tau", "fast_s", "generic_s",
        "ratio", "cpu_ratio", "peak_RSS_MB", "tracemalloc_peak_MB", "dense_nxn_MB", "subspace_dist_vs_dense",
        "n_cg_iter", "numba_s", "reference_s", "speedup", "failed_seeds (scored as one cluster)", "ARI_rank1",
        "diff_vs_rank1", "diff_vs_rank1_se", "diff_vs_coupling0", "diff_vs_coupling0_se", "norm_A_minus_S",
        "rel_norm_A_minus_S", "diff_vs_biharmonic", "diff_vs_biharmonic_se", "accuracy", "accuracy_sd",
        "diff_vs_graph_plus_pairs", "diff_vs_graph_plus_pairs_se", "strongest_baseline", "diff_vs_strongest",
        "diff_vs_strongest_se", "pairs_absent_from_graph", "seeds", "note"])
    print(text)
    return 0
