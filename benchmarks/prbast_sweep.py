"""PR-BAST sampler cost per sweep and at scale: ``python -m benchmarks prbast_sweep [--quick]``.

CPU nanoseconds per tree and observation of one backfitting sweep of ``PRBASTRegressor`` at its defaults on
the mgcv horseshoe (n training points, the domain polygon), for several n, and the log-log slope of the sweep
time in n. Only the sweeps are timed (the domain graph, the initial trees and the JIT warm-up are not), with
``time.process_time`` in this process: one chain, one thread. Full mode also fits the defaults at n = 1e5 on the
horseshoe (section "scale": fit CPU time, RMSE against the truth, peak memory of the process).
"""

import argparse
import math
import resource
import time
import warnings

import numpy as np

from benchmarks._harness import write_results


def _engine(n, seed=0, **params):
    """The fitted estimator's engine pieces for horseshoe data of ``n`` points: (ctx, family, data, chain, kwargs)."""
    from scipy.stats import chi2

    from sklearn_frontier.datasets import horseshoe_boundary, make_horseshoe
    from sklearn_frontier.spanning_trees import PRBASTRegressor, build_domain_graph
    from sklearn_frontier.spanning_trees._mcmc import ChainData, init_chain
    from sklearn_frontier.spanning_trees._trees import TreeContext

    X, y, _ = make_horseshoe(n, noise=0.3, random_state=seed)
    est = PRBASTRegressor(domain=horseshoe_boundary(40), random_state=seed, **params)
    graph = build_domain_graph(X, domain=est.domain)
    yt = (y - y.mean()) / y.std()
    W = np.bincount(graph.sample_vertex, minlength=graph.n_vertices).astype(float)
    S0 = np.bincount(graph.sample_vertex, weights=yt, minlength=graph.n_vertices)
    data = ChainData(W, S0, float(n), float(yt @ yt))
    family = est._make_family()
    ctx = TreeContext(graph)
    chain = init_chain(ctx, family, data, est.n_trees, np.random.default_rng(seed), tree_prior=est.tree_prior,
                       sigma2_init=1.0, bast_init=False)
    # burn-in sweeps: nothing is recorded, so only the sampler is timed
    kwargs = dict(n_burnin=10**9, thin=1, edge_stride=1, keep_components=False,
                  noise_prior=(est.nu, chi2.ppf(1 - est.q, est.nu) / est.nu), fixed_sigma2=None,
                  tree_prior=est.tree_prior, tree_jitter=est.tree_jitter, tree_update_prob=est.tree_update_prob)
    return ctx, family, data, chain, kwargs, est.n_trees


def sweep_cost(n, n_sweeps, repeats=3, **params):
    """Best-of-``repeats`` CPU seconds per sweep (after 5 untimed sweeps), and ns per tree and observation."""
    from sklearn_frontier.spanning_trees._mcmc import run_chain

    ctx, family, data, chain, kwargs, M = _engine(n, **params)
    run_chain(ctx, family, data, chain, 5, **kwargs)
    best = math.inf
    for _ in range(repeats):
        start = time.process_time()
        run_chain(ctx, family, data, chain, n_sweeps, **kwargs)
        best = min(best, (time.process_time() - start) / n_sweeps)
    return best, best / (M * n) * 1e9, M


def scale_fit(n, seed=1):
    """One default fit on ``n`` horseshoe points: fit CPU seconds, RMSE on 1000 fresh points, sizes."""
    from sklearn_frontier.datasets import horseshoe_boundary, make_horseshoe
    from sklearn_frontier.spanning_trees import PRBASTRegressor

    X, y, _ = make_horseshoe(n, noise=0.3, random_state=seed)
    Xt, _, ft = make_horseshoe(1000, noise=0.3, random_state=10_000 + seed)
    est = PRBASTRegressor(domain=horseshoe_boundary(40), random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start, cpu = time.perf_counter(), time.process_time()
        est.fit(X, y)
        fit_cpu, fit_wall = time.process_time() - cpu, time.perf_counter() - start
        rmse = float(np.sqrt(np.mean((est.predict(Xt) - ft) ** 2)))
    return {"section": "scale", "case": "horseshoe", "sampler": "defaults", "n": n, "n_trees": est.n_trees,
            "fit_cpu_s": fit_cpu, "fit_wall_s": fit_wall, "rmse": rmse,
            "draws_mib": sum(v.nbytes for v in est.draws_.values()) / 2**20,
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks prbast_sweep")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    ns = [1000, 4000, 16000]
    sweeps = 10 if args.quick else 40
    sweep_cost(300, 3)  # JIT warm-up
    rows = []
    for label, params in (("defaults", {}), ("no tree proposals", {"tree_update_prob": 0.0})):
        part = []
        for n in ns:
            sec, ns_per, M = sweep_cost(n, sweeps, repeats=2 if args.quick else 3, **params)
            part.append({"section": "sweep cost", "case": "horseshoe", "sampler": label, "n": n, "n_trees": M,
                         "sweep_ms": 1e3 * sec, "ns_per_tree_obs": ns_per})
            print(part[-1], flush=True)
        slope = float(np.polyfit(np.log(ns), np.log([r["sweep_ms"] for r in part]), 1)[0])
        for r in part:
            r["loglog_slope"] = slope
        rows += part
    slope = rows[0]["loglog_slope"]
    if not args.quick:
        rows.append(scale_fit(100_000))
        print(rows[-1], flush=True)
    notes = (f"- Sweep time in n: log-log slope {slope:.3f} (target <= 1.1). CPU time of one backfitting sweep of "
             "PRBASTRegressor at its defaults (routed components, length-scale step, tree proposals with the "
             "default probability, noise and tau2 Gibbs steps), best of repeated runs of "
             f"{sweeps} sweeps after 5 untimed ones; graph building and JIT compilation not included. The "
             "'no tree proposals' rows (tree_update_prob=0) separate the tree-prior draws (a Kruskal minimum "
             "spanning tree of jittered lengths per proposal) from the rest of the sweep.\n- scale: one fit at the "
             "defaults (all sweeps, graph, edge outputs) on 1e5 horseshoe points, one core; peak_rss_mib is the "
             "process's peak resident memory (it includes the smaller runs before it).")
    print(write_results("prbast_sweep", rows, notes=notes, quick=args.quick,
                        columns=["section", "case", "sampler", "n", "n_trees", "sweep_ms", "ns_per_tree_obs",
                                 "loglog_slope", "fit_cpu_s", "fit_wall_s", "rmse", "draws_mib", "peak_rss_mib"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
