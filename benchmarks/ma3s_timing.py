"""MA3S timing (target: a 1e5 pool, budget 3n, batch 10, < 60 s on 2 cores).

``python -m benchmarks ma3s_timing [--quick]`` writes ``benchmarks/results/ma3s_timing.{json,md}``.

Loop rows: ``make_classification(n, 10 features, 5 informative)``, a heterogeneous crowd of 20 workers,
initial pass + batches of 10 up to 3n labels (``run_annotation_loop``), MA3S (evidence, lambda = 1) and
round robin (GRR) in the same process, numba backend; the numpy reference backend at 1e4 only (it is the
oracle, not a product). ``loop_wall_s`` is the whole loop (crowd simulation and evaluation included),
``annotator_s`` the annotator's own calls (fit + query + update), ``fit_s`` the graph build, ``cpu_s`` the
process CPU time of the loop. Kernel rows: each annotation kernel at n = 1e5, numba vs numpy reference
(median of repeats, after a warm-up call). Full mode adds n = 1e5 loops (and the reference MA3S loop at 1e5);
``--quick`` keeps 1e4 and the
kernels (a few minutes on 2 shared cores).
"""

import argparse
import os
import statistics
import time

import numpy as np
from sklearn.datasets import make_classification

from benchmarks._harness import headline_pair, write_results
from sklearn_frontier import config_context
from sklearn_frontier.annotation import MA3SAnnotator, RoundRobinAnnotator, SimulatedCrowd, run_annotation_loop

STRATEGIES = {"GRR": lambda: RoundRobinAnnotator(random_state=0), "MA3S-E": lambda: MA3SAnnotator(random_state=0)}


def loop_row(n, name, backend):
    X, y = make_classification(n_samples=n, n_features=10, n_informative=5, n_redundant=0, random_state=0)
    crowd = SimulatedCrowd(y, n_workers=20, accuracy=(0.55, 0.85), random_state=0)
    with config_context(backend=backend):
        cpu, start = time.process_time(), time.perf_counter()
        hist = run_annotation_loop(STRATEGIES[name](), X, crowd, 3 * n, batch_size=10, y_true=y, eval_every=n // 2)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    fit_s = float(hist["wall_time"][0])  # the first evaluation comes right after fit
    annotator_s = float(hist["wall_time"][-1])
    return {"kind": "loop", "n": n, "backend": backend, "strategy": name, "loop_wall_s": wall, "cpu_s": cpu,
            "annotator_s": annotator_s, "fit_s": fit_s, "query_update_s": annotator_s - fit_s,
            "us_per_label": 1e6 * (annotator_s - fit_s) / (2 * n), "acc_3n": float(hist["label_accuracy"][-1])}


def _median_time(func, repeats):
    func()  # warm-up (numba compilation, caches)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def kernel_rows(n, repeats):
    from sklearn_frontier.kernels import get_implementation

    est = MA3SAnnotator(random_state=0)
    X, y = make_classification(n_samples=n, n_features=10, n_informative=5, n_redundant=0, random_state=0)
    rng = np.random.default_rng(0)
    Y = np.where(rng.random((n, 20)) < 0.1, y[:, None], np.nan)
    est.fit(X, Y)
    index = est._ensure_index()
    C, N = est.counts_, est.propagated_evidence_
    pi, px, pd = est._pt
    wi, wx, wd = est._wt
    rows = rng.integers(0, n, 10)
    codes = rng.integers(0, 2, 10)
    touched = np.unique(np.r_[rows, px[np.concatenate([np.arange(pi[i], pi[i + 1]) for i in rows])]])
    r = est._tie_keys_
    calls = {
        "refresh_rows (all n rows)": lambda f: f(C, N, 1.0, np.arange(n), 1.0, 1.0),
        "refresh_rows (one batch's touched rows)": lambda f: f(C, N, 1.0, touched, 1.0, 1.0),
        "apply_labels (one batch of 10)": lambda f: f(C, N, est._h, est._tallies, rows, codes, pi, px, pd, wi, wx,
                                                      wd, False, False, inplace=True),
        "heap_update (one batch's touched rows)": lambda f: f(index["heap"], index["pos"], index["size"], index["q"],
                                                              r, touched, index["q"][touched],
                                                              index["eligible"][touched], inplace=True),
        "select_top (b = 10)": lambda f: f(index["q"], r, index["eligible"], index["heap"], index["pos"],
                                           index["size"], 10),
        "select_diverse (b = 10)": lambda f: f(index["q"], r, index["eligible"], index["heap"], index["pos"],
                                               index["size"], C, N, pi, px, pd, 1.0, 1.0, 1.0, 1.0, 10, -1.0),
        "betainc_half (n values)": lambda f: f(C[:, 0] + 1.0 + rng.random(n), C[:, 1] + 1.0),
    }
    kernel_of = {label: label.split(" ")[0] for label in calls}
    out = []
    for label, call in calls.items():
        times = {}
        for backend in ("numba", "reference"):
            _, func = get_implementation(kernel_of[label], backend)
            times[backend] = _median_time(lambda: call(func), repeats)
        out.append({"kind": "kernel", "n": n, "kernel": label, "numba_s": times["numba"],
                    "reference_s": times["reference"], "speedup": times["reference"] / times["numba"]})
        print(out[-1], flush=True)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks ma3s_timing")
    parser.add_argument("--quick", action="store_true", help="loops at n = 1e4 only; kernels at 1e5")
    args = parser.parse_args(argv)
    rows = kernel_rows(100_000, 5 if args.quick else 20)
    loops = [(10_000, "numba", list(STRATEGIES)), (10_000, "reference", list(STRATEGIES))]
    if not args.quick:  # the spec's numba/numpy per-label ratio at 1e5: MA3S only (the reference is slow)
        loops += [(100_000, "numba", list(STRATEGIES)), (100_000, "reference", ["MA3S-E"])]
    for n, backend, names in loops:
        for name in names:
            rows.append(loop_row(n, name, backend))
            print(rows[-1], flush=True)
    loop_rows = [r for r in rows if r["kind"] == "loop"]
    big = [r for r in loop_rows if r["n"] == max(x["n"] for x in loop_rows) and r["backend"] == "numba"]
    ma3s = next(r for r in big if r["strategy"] == "MA3S-E")
    grr = next(r for r in big if r["strategy"] == "GRR")
    lines = [f"n={ma3s['n']}, 3n budget, batch 10: MA3S loop {ma3s['loop_wall_s']:.1f} s wall "
             f"({ma3s['cpu_s']:.1f} s CPU; annotator {ma3s['annotator_s']:.1f} s of which graph build "
             f"{ma3s['fit_s']:.1f} s) vs GRR {grr['loop_wall_s']:.1f} s wall (annotator {grr['annotator_s']:.1f} s); "
             f"MA3S/GRR annotator time {ma3s['annotator_s'] / grr['annotator_s']:.2f} (target <= 3); "
             + ("target < 60 s" if ma3s["n"] >= 100_000 else "(1e5 rows: full mode)")]
    ref = {(r["n"], r["strategy"]): r for r in loop_rows if r["backend"] == "reference"}
    for r in loop_rows:
        if r["backend"] == "numba" and (r["n"], r["strategy"]) in ref:
            lines.append(f"n={r['n']} {r['strategy']}: numba {r['us_per_label']:.0f} us/label after fit vs reference "
                         f"{ref[(r['n'], r['strategy'])]['us_per_label']:.0f} us/label "
                         f"({ref[(r['n'], r['strategy'])]['us_per_label'] / r['us_per_label']:.1f}x)")
    threads = os.environ.get("OMP_NUM_THREADS", "unset")
    notes = ("Checks:\n\n" + "\n".join(f"- {x}" for x in lines)
             + f"\n\nOMP_NUM_THREADS={threads} (the exact brute-force kNN of the graph build is the only threaded "
             "step). Wall times are inflated when other jobs share the cores; CPU seconds are the steadier number.")
    headline = headline_pair(rows, key="strategy", ours="MA3S-E", metric="loop_wall_s", kind="loop",
                             n=ma3s["n"], backend="numba")
    cols = ["kind", "n", "backend", "strategy", "loop_wall_s", "cpu_s", "annotator_s", "fit_s", "query_update_s",
            "us_per_label", "acc_3n", "kernel", "numba_s", "reference_s", "speedup"]
    print(write_results("ma3s_timing", rows, notes=notes, columns=cols, headline=headline))
    return 0
