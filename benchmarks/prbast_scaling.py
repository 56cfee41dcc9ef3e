"""PR-BAST's fit time, per-sweep cost and peak memory against n beside stochtree BART's:
``python -m benchmarks prbast_scaling [--quick]``.

The mgcv horseshoe (a 2-D domain with a polygon boundary, noise 0.3), n in {1e3, 1e4, 1e5} (quick: {1e3, 3e3}).
Each fit runs in a fresh process (``--worker``) after a small warm-up fit, so JIT compilation and cache loading stay
outside the timed region and the peak resident memory (VmHWM, reset before the fit) is the fit's own. Per sweep:
PR-BAST's fit CPU seconds less its domain-graph build (timed separately in the same process) over its sweeps;
BART's fit CPU seconds over its MCMC sweeps (classic schedule, no grow-from-root); also per tree and observation
(ns), and the least-squares log-log slope of the per-sweep time in n. Above ``--full-schedule-max-n`` the
default schedules would take too long on a shared machine: those rows run a shortened schedule (stated in the row's
sweeps and the notes) and give the default schedule's projected CPU time from the measured per-sweep cost.
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
import warnings

import numpy as np

from benchmarks._bart import BART_DEFAULT, BART_WARM_START, StochtreeBART, bart_missing_note, stochtree_version
from benchmarks._harness import write_results
from benchmarks._timing import timed

SIZES = {"full": (1_000, 10_000, 100_000), "quick": (1_000, 3_000)}
N_TEST = 1000
COLUMNS = ["section", "case", "n", "estimator", "schedule", "sweeps", "fit_cpu_s", "fit_s", "graph_cpu_s",
           "sweep_cpu_ms", "ns_per_tree_obs", "default_fit_cpu_s", "rss_peak_mib", "rss_fit_extra_mib", "draws_mib",
           "rmse"]
SHORT = {"PRBAST": (100, 30), "BART": (50, 50)}  # (n_iter, n_burnin) / (num_burnin, num_mcmc) above the cutoff


def _rss_mib(field):
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def _reset_peak_rss():
    try:  # Linux: writing 5 resets VmHWM to the current RSS, so the next peak is the fit's own
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass


def _nbytes(obj):
    """Bytes of the arrays in ``obj`` (an array, a mapping or a record of arrays)."""
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, dict):
        return sum(_nbytes(v) for v in obj.values())
    if hasattr(obj, "__dict__"):
        return sum(_nbytes(v) for v in vars(obj).values())
    return 0


def _make(spec, boundary):
    from sklearn_frontier.spanning_trees import PRBASTRegressor

    if spec["estimator"] == "PRBAST":
        return PRBASTRegressor(domain=boundary, random_state=0, n_iter=spec["n_iter"], n_burnin=spec["n_burnin"])
    settings = BART_DEFAULT if spec["estimator"] == BART_DEFAULT.label else BART_WARM_START
    settings = type(settings)(settings.label, settings.num_trees, settings.num_gfr, spec["n_burnin"], spec["n_iter"])
    return StochtreeBART(settings, random_state=0)


def _worker(spec):
    """One fit in this (fresh) process; prints one ``RESULT {json}`` line."""
    from sklearn_frontier.datasets import horseshoe_boundary, make_horseshoe
    from sklearn_frontier.spanning_trees import build_domain_graph

    boundary = horseshoe_boundary(40)
    Xw, yw, _ = make_horseshoe(200, random_state=1)
    warm = _make({**spec, "n_iter": 6, "n_burnin": 2}, boundary)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warm.fit(Xw, yw)  # compiled code loaded outside the timed region
        X, y, _ = make_horseshoe(spec["n"], noise=0.3, random_state=0)
        Xt, _, ft = make_horseshoe(N_TEST, noise=0.3, random_state=10_000)
        graph_cpu = None
        if spec["estimator"] == "PRBAST":
            graph_cpu = timed(lambda: build_domain_graph(X, domain=boundary)).cpu_s
        est = _make(spec, boundary)
        _reset_peak_rss()
        before = _rss_mib("VmRSS")
        t = timed(lambda: est.fit(X, y))
        peak = _rss_mib("VmHWM")
        rmse = float(np.sqrt(np.mean((est.predict(Xt) - ft) ** 2)))
    draws_mib = _nbytes(est.draws_) / 2 ** 20 if hasattr(est, "draws_") else None
    out = {"fit_cpu_s": t.cpu_s, "fit_s": t.wall_s, "graph_cpu_s": graph_cpu, "rss_before": before, "rss_peak": peak,
           "draws_mib": draws_mib,
           "rmse": rmse, "n_trees": getattr(est, "n_trees", getattr(getattr(est, "settings", None), "num_trees", 0))}
    print("RESULT " + json.dumps(out), flush=True)


def _run_worker(spec, timeout=3000):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "NUMBA_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "prbast_scaling", "--worker", json.dumps(spec)],
                          capture_output=True, text=True, timeout=timeout, env=env)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"worker {spec} failed: {proc.stderr[-3000:]}")


def _specs(n, quick, full_max_n):
    """The fits at size n: estimator, its sweep counts, the schedule's name and its default number of sweeps."""
    from sklearn_frontier.spanning_trees import PRBASTRegressor

    f = 0.3 if quick else 1.0
    pr = PRBASTRegressor()
    short = n > full_max_n
    pr_iter, pr_burn = SHORT["PRBAST"] if short else (int(pr.n_iter * f), int(pr.n_burnin * f))
    b_burn, b_mcmc = SHORT["BART"] if short else (int(BART_DEFAULT.num_burnin * f), int(BART_DEFAULT.num_mcmc * f))
    out = [{"estimator": "PRBAST", "n_iter": pr_iter, "n_burnin": pr_burn, "sweeps": pr_iter,
            "default_sweeps": pr.n_iter,
            "schedule": "shortened" if short else ("default" if f == 1 else "quick (0.3x)")}]
    if bart_missing_note() is None:
        out += [{"estimator": BART_DEFAULT.label, "n_iter": b_mcmc, "n_burnin": b_burn, "sweeps": b_burn + b_mcmc,
                 "default_sweeps": BART_DEFAULT.num_burnin + BART_DEFAULT.num_mcmc,
                 "schedule": "shortened" if short else ("default" if f == 1 else "quick (0.3x)")},
                {"estimator": BART_WARM_START.label, "n_iter": BART_WARM_START.num_mcmc,
                 "n_burnin": BART_WARM_START.num_burnin, "default_sweeps": None, "schedule": "default",
                 "sweeps": f"{BART_WARM_START.num_gfr} GFR + {BART_WARM_START.num_burnin + BART_WARM_START.num_mcmc}"}]
    return [{**s, "n": n} for s in out]


def _row(spec, r):
    sweeps = spec["sweeps"]
    mcmc_cpu = r["fit_cpu_s"] - (r["graph_cpu_s"] or 0.0)
    row = {"section": "scaling", "case": "horseshoe", "n": spec["n"], "estimator": spec["estimator"],
           "schedule": spec["schedule"], "sweeps": sweeps, "fit_cpu_s": r["fit_cpu_s"], "fit_s": r["fit_s"],
           "rss_peak_mib": r["rss_peak"], "rss_fit_extra_mib": r["rss_peak"] - r["rss_before"], "rmse": r["rmse"]}
    for key in ("graph_cpu_s", "draws_mib"):
        if r.get(key) is not None:
            row[key] = r[key]
    if spec["default_sweeps"] is not None:  # grow-from-root sweeps cost differently: no per-sweep figure for those
        per = mcmc_cpu / sweeps
        row["sweep_cpu_ms"] = 1e3 * per
        row["ns_per_tree_obs"] = 1e9 * per / (r["n_trees"] * spec["n"])
        row["default_fit_cpu_s"] = (r["graph_cpu_s"] or 0.0) + per * spec["default_sweeps"]
    return row


def _slope(rows, label):
    pts = [(r["n"], r["sweep_cpu_ms"]) for r in rows if r["estimator"] == label and "sweep_cpu_ms" in r]
    if len(pts) < 2:
        return float("nan")
    return float(np.polyfit(np.log([p[0] for p in pts]), np.log([p[1] for p in pts]), 1)[0])


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks prbast_scaling")
    parser.add_argument("--quick", action="store_true", help="n in {1e3, 3e3}, 0.3x sweeps")
    parser.add_argument("--sizes", default=None, help="comma-separated n (default 1000,10000,100000)")
    parser.add_argument("--full-schedule-max-n", type=int, default=10_000,
                        help="larger n run the shortened schedules and report projected default fit times")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--notes", default="", help="a line added to the notes")
    args = parser.parse_args(argv)
    if args.worker:
        _worker(json.loads(args.worker))
        return 0
    sizes = [int(x) for x in args.sizes.split(",")] if args.sizes else list(SIZES["quick" if args.quick else "full"])
    rows = []
    for n in sizes:
        for spec in _specs(n, args.quick, args.full_schedule_max_n):
            start = time.perf_counter()
            rows.append(_row(spec, _run_worker(spec)))
            print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in rows[-1].items()},
                  f"({time.perf_counter() - start:.0f} s with start-up)", flush=True)
    slopes = {label: _slope(rows, label) for label in ("PRBAST", BART_DEFAULT.label)}
    short = [n for n in sizes if n > args.full_schedule_max_n]
    notes = [f"- one fit per row, each in a fresh single-threaded process; fit_cpu_s / fit_s: CPU / wall seconds "
             f"of the fit; rss_peak_mib: the process's peak resident memory during the fit (VmHWM reset before it), "
             f"rss_fit_extra_mib: that peak less the resident memory just before the fit (data and libraries "
             f"already loaded); draws_mib: the bytes of PR-BAST's kept draws (``draws_``); rmse against the noiseless "
             f"truth at {N_TEST} fresh points",
             "- sweep_cpu_ms: PR-BAST's fit CPU less its domain-graph build (graph_cpu_s, timed separately) over "
             "its sweeps (burn-in included); BART's fit CPU over its burn-in + MCMC sweeps. ns_per_tree_obs: that "
             "over n_trees x n (PR-BAST's trees and BART's 200). default_fit_cpu_s: graph + per-sweep cost x the "
             "default number of sweeps (a projection where the schedule was shortened)",
             f"- {BART_DEFAULT.label}: stochtree {stochtree_version()}, {BART_DEFAULT.describe()}; "
             f"{BART_WARM_START.label}: {BART_WARM_START.describe()} at every n (stochtree's default call)",
             "- log-log slope of the per-sweep CPU time in n: "
             + ", ".join(f"{k} {v:.3f}" for k, v in slopes.items())]
    if short:
        notes.append(f"- shortened schedule for n in {short}: PR-BAST n_iter = {SHORT['PRBAST'][0]} "
                     f"(n_burnin = {SHORT['PRBAST'][1]}), BART {SHORT['BART'][0]} burn-in + {SHORT['BART'][1]} "
                     "MCMC sweeps; peak memory then reflects fewer kept draws than the default schedule keeps")
    missing = bart_missing_note()
    if missing:
        notes.append(missing)
    if args.notes:
        notes.append(f"- {args.notes}")
    command = "python -m benchmarks prbast_scaling " + shlex.join(sys.argv[2:] if argv is None else argv)
    print(write_results("prbast_scaling", rows, command=command.strip(), notes="\n".join(notes), columns=COLUMNS))
    return 0
