"""PR-BAST defaults by measurement on held-out data: ``python -m benchmarks prbast_defaults [--quick]``.

Candidate settings of ``PRBASTRegressor`` (number of trees, sweeps, tree-proposal probability, prediction
attachment) on data kept apart from the cases that score the PR-BAST headline: the horseshoe and the slit
annulus at seeds 500 and up (the headline benchmark uses small seeds), n in {1000, 4000}. Metrics: RMSE of the
posterior mean against the noiseless truth on fresh points, 95% prediction-interval coverage of new y, fit
CPU seconds (one process, one thread), all in one run.
"""

import argparse
import statistics
import time
import warnings

import numpy as np

from benchmarks._harness import write_results

SEED0 = 500  # held-out seeds: the headline cases use small ones

CANDIDATES = {  # explicit settings; the first is the reference of the ratios (the defaults before this study)
    "n_trees=30, tree_update_prob=0.2": {"n_trees": 30, "tree_update_prob": 0.2},
    "n_trees=30, tree_update_prob=0.05": {"n_trees": 30, "tree_update_prob": 0.05},
    "n_trees=20, tree_update_prob=0.2": {"n_trees": 20, "tree_update_prob": 0.2},
    "n_trees=20, tree_update_prob=0.05": {"n_trees": 20, "tree_update_prob": 0.05},
    "n_trees=10, tree_update_prob=0.05": {"n_trees": 10, "tree_update_prob": 0.05},
    "n_trees=20, tree_update_prob=0.05, n_iter=500": {"n_trees": 20, "tree_update_prob": 0.05, "n_iter": 500,
                                                      "n_burnin": 150},
}

CHOSEN = "n_trees=20, tree_update_prob=0.05"  # the shipped defaults
FEWER_SWEEPS = "n_trees=20, tree_update_prob=0.05, n_iter=500"


def _defaults_note(rows):
    """The defaults against the previous ones and against half the sweeps, in words, from this run's rows."""
    def ranged(values, scale=100.0):
        lo, hi = min(values) * scale, max(values) * scale
        return f"{lo:+.1f}% to {hi:+.1f}%"

    cases = list(dict.fromkeys((r["case"], r["n"]) for r in rows))
    by = {(r["case"], r["n"], r["setting"]): r for r in rows}
    chosen = [by[c + (CHOSEN,)] for c in cases if c + (CHOSEN,) in by]
    fewer = [(by[c + (FEWER_SWEEPS,)], by[c + (CHOSEN,)]) for c in cases
             if c + (FEWER_SWEEPS,) in by and c + (CHOSEN,) in by]
    if not chosen:
        return ""
    text = (f"- {CHOSEN} (the defaults) against the previous defaults, this run: RMSE "
            f"{ranged([r['rmse_vs_first'] - 1 for r in chosen])}, CPU time "
            f"{ranged([r['cpu_vs_first'] - 1 for r in chosen])} over the {len(chosen)} cases.")
    if fewer:
        text += (f" Half the sweeps (n_iter=500) change the RMSE by "
                 f"{ranged([a['rmse'] / b['rmse'] - 1 for a, b in fewer])} against the defaults, so the sweep "
                 "count stays.")
    return text


def _case(name, seed, n):
    from sklearn_frontier import datasets as ds

    if name == "horseshoe":
        X, y, _ = ds.make_horseshoe(n, noise=0.3, random_state=seed)
        Xt, yt, ft = ds.make_horseshoe(1000, noise=0.3, random_state=10_000 + seed)
        return X, y, Xt, yt, ft, ds.horseshoe_boundary(40)
    X, y, _, boundary = ds.make_slit_annulus(n, noise=0.2, random_state=seed)
    Xt, yt, ft, _ = ds.make_slit_annulus(1000, noise=0.2, random_state=10_000 + seed)
    return X, y, Xt, yt, ft, boundary


def _fit_row(params, X, y, Xt, yt, ft, boundary, seed):
    from sklearn_frontier.spanning_trees import PRBASTRegressor

    est = PRBASTRegressor(domain=boundary, random_state=seed, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cpu = time.process_time()
        est.fit(X, y)
        fit_cpu = time.process_time() - cpu
        pred = est.predict(Xt)
        lo, hi = est.predict_interval(Xt).T
    return {"rmse": float(np.sqrt(np.mean((pred - ft) ** 2))), "cover_y": float(np.mean((yt >= lo) & (yt <= hi))),
            "fit_cpu_s": fit_cpu, "tree_acceptance": float(est.acceptance_rates_["tree"])}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks prbast_defaults")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    ns = [1000] if args.quick else [1000, 4000]
    seeds = [SEED0] if args.quick else [SEED0, SEED0 + 1]
    X, y, Xt, yt, ft, boundary = _case("horseshoe", 0, 60)
    _fit_row({"n_trees": 2, "n_iter": 6, "n_burnin": 2}, X, y, Xt, yt, ft, boundary, 0)  # JIT warm-up
    rows = []
    for case in ("horseshoe", "slit_annulus"):
        for n in ns:
            per = {label: [] for label in CANDIDATES}
            for seed in seeds:
                data = _case(case, seed, n)
                for label, params in CANDIDATES.items():
                    per[label].append(_fit_row(params, *data, seed))
                    print(case, n, seed, label, per[label][-1], flush=True)
            base = per[next(iter(CANDIDATES))]
            for label, rs in per.items():
                rows.append({"section": "defaults", "case": case, "n": n, "setting": label, "n_seeds": len(rs),
                             **{k: statistics.mean(r[k] for r in rs) for k in rs[0]},
                             "rmse_vs_first": statistics.mean(r["rmse"] / b["rmse"] for r, b in zip(rs, base)),
                             "cpu_vs_first": statistics.mean(r["fit_cpu_s"] / b["fit_cpu_s"]
                                                                for r, b in zip(rs, base))})
    notes = ("- Held-out data (seeds from 500; the headline cases use small seeds); every other setting at the "
             "estimator's default (n_iter=1000, n_burnin=300). Ratios are per seed against the first setting (the "
             "defaults before this study), then averaged.\n" + _defaults_note(rows))
    print(write_results("prbast_defaults", rows, notes=notes, quick=args.quick,
                        columns=["section", "case", "n", "setting", "n_seeds", "rmse", "rmse_vs_first", "cover_y",
                                 "fit_cpu_s", "cpu_vs_first", "tree_acceptance"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
