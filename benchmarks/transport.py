"""LOT active experimentation: which measurement times make the best Wasserstein-path surrogate.

``python -m benchmarks transport [--quick]`` writes ``benchmarks/results/transport.{json,md}``. Protocol:
paths ``bifurcation`` (split at a time drawn per seed from U[0.25, 0.75], width 0.08), ``drift`` (constant speed)
and ``gaussian`` (rotating, stretching ellipse); both endpoints measured first, then the strategy queries one time
at a time from a pool of 51 equispaced candidates until the budget B (total snapshots) is spent; snapshots of 128
fresh particles; LOT reference of 64 atoms (barycenter of the two initial snapshots, then fixed). Error = mean
over 50 held-out times (the pool's midpoints) of the exact W2^2 (``ot.emd2``) between the predicted measure and a
fresh 512-particle sample of the truth. Methods share the surrogate (``WassersteinPathRegressor``, warp chosen by
marginal likelihood) unless marked: ``IV`` (integrated variance, the method), ``IV (stationary GP)``
(``warp="identity"``), ``max variance`` (the paper's code), ``uniform`` (grid ``linspace(0, 1, B)`` snapped to the
pool), ``random``; anchors on the uniform schedule: piecewise McCann interpolation between the bracketing
snapshots and a GP on the snapshot means (the nearest snapshot recentred at the predicted mean). ``floor`` is a
64-particle sample of the truth itself (the error of a perfect model at the surrogate's resolution).
"""

import argparse
import statistics
import warnings

import numpy as np

from benchmarks._harness import headline_pair, markdown_table, per_seed_columns, write_results
from benchmarks._timing import Stopwatch, timed

PATHS = ("bifurcation", "drift", "gaussian")
METHODS = ("IV", "IV (stationary GP)", "max variance", "uniform", "random", "McCann (uniform times)",
           "GP on means (uniform times)", "floor")
N_POINTS, N_SUPPORT, N_CANDIDATES, N_EVAL = 128, 64, 51, 512


def _path(kind, seed):
    from sklearn_frontier.datasets import make_measure_path

    if kind == "bifurcation":
        t_split = float(np.random.default_rng(1000 + seed).uniform(0.25, 0.75))
        return make_measure_path("bifurcation", t_split=t_split, width=0.08)
    return make_measure_path(kind)


def _gp_on_means(times, clouds, eval_times):
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel

    means = np.array([c.mean(axis=0) for c in clouds])
    kernel = ConstantKernel(1.0, (1e-2, 1e2)) * Matern(0.3, (0.02, 10.0), nu=2.5) + WhiteKernel(1e-4, (1e-8, 1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gp = GaussianProcessRegressor(kernel, normalize_y=True, random_state=0).fit(np.asarray(times)[:, None], means)
    pred = gp.predict(np.asarray(eval_times)[:, None])
    nearest = np.abs(np.subtract.outer(eval_times, times)).argmin(axis=1)
    return [clouds[j] - means[j] + p for j, p in zip(nearest, pred)]


def run_one(kind, budget, seed, eval_times):
    """Errors (mean W2^2) and seconds of every method on one (path, budget, seed)."""
    from sklearn_frontier.transport import DisplacementInterpolator, run_experiment, wasserstein2_squared

    path = _path(kind, seed)
    truth = [path(t, N_EVAL, random_state=10 ** 8 + seed * 1000 + i) for i, t in enumerate(eval_times)]
    out = {}
    settings = {"IV": ("integrated_variance", "auto"), "IV (stationary GP)": ("integrated_variance", "identity"),
                "max variance": ("max_variance", "auto"), "uniform": ("uniform", "auto"),
                "random": ("random", "auto")}
    for label, (strategy, warp) in settings.items():
        # run_experiment scores against the same fresh truth samples as `truth` below (same seeds)
        exp, err, seconds = run_experiment(path, strategy, budget, n_points=N_POINTS, n_candidates=N_CANDIDATES,
                                           seed=seed, warp=warp, n_support=N_SUPPORT, eval_times=eval_times,
                                           n_eval_points=N_EVAL)
        times = np.asarray(exp.times_)
        near = (float(np.mean(np.abs(times[2:] - path.params["t_split"]) <= 0.1))
                if kind == "bifurcation" else float("nan"))
        out[label] = {"error": err, "seconds": seconds, "alpha": exp.path_.warp_alpha_, "near_split": near}
        if label in ("IV", "uniform"):
            out[label]["calibration"] = _calibration(exp, eval_times, truth)
        if label == "uniform":
            uniform_times, uniform_clouds = list(exp.times_), list(exp.clouds_)
    mccann = timed(lambda: DisplacementInterpolator().fit(uniform_times, uniform_clouds).predict(eval_times))
    out["McCann (uniform times)"] = {"error": float(np.mean(wasserstein2_squared(mccann.result, truth))),
                                     "seconds": mccann.wall_s}
    gp = timed(lambda: _gp_on_means(uniform_times, uniform_clouds, eval_times))
    out["GP on means (uniform times)"] = {"error": float(np.mean(wasserstein2_squared(gp.result, truth))),
                                          "seconds": gp.wall_s}
    # the best the surrogate's resolution allows: an independent large truth sample projected on the same
    # 64-atom LOT reference (inverse_transform(transform(.))), scored like the methods
    emb = exp.path_.embedding_
    other = [path(t, N_EVAL, random_state=2 * 10 ** 8 + seed * 1000 + i) for i, t in enumerate(eval_times)]
    floor = emb.inverse_transform(emb.transform(other))
    out["floor"] = {"error": float(np.mean(wasserstein2_squared(floor, truth))), "seconds": 0.0}
    return out


def _calibration(exp, eval_times, truth):
    """Realised W2 error of the surrogate at the held-out times beside its two scales: the posterior std of the
    path (``return_std``) and ``expected_w2_error`` (std and the estimated resolution)."""
    from sklearn_frontier.transport import wasserstein2_squared

    pred, std = exp.predict(eval_times, return_std=True)
    w = exp.path_.embedding_.reference_weights_
    err = np.sqrt(wasserstein2_squared(pred, truth, weights_pred=w))
    return {"err": err, "std": std, "expected": exp.expected_w2_error(eval_times),
            "resolution": exp.path_.resolution_, "source": exp.path_.resolution_source_}


def _calibration_rows(kind, budget, runs):
    """One row per (method, scale): root-mean-square ratio of the realised error to the scale and the share of
    held-out times whose error lies within 1 and 2 of it, pooled over seeds (per-seed values alongside)."""
    out = []
    for method in ("IV", "uniform"):
        cal = [r[method]["calibration"] for r in runs]
        for scale in ("std", "expected"):
            ratio = [float(np.sqrt(np.mean(c["err"] ** 2) / np.mean(c[scale] ** 2))) for c in cal]
            within1 = [float(np.mean(c["err"] <= c[scale])) for c in cal]
            within2 = [float(np.mean(c["err"] <= 2 * c[scale])) for c in cal]
            out.append({"path": kind, "budget": budget, "method": method,
                        "scale": "return_std" if scale == "std" else "expected_w2_error",
                        "rms_err_over_scale": float(np.mean(ratio)), "rms_err_over_scale_per_seed": ratio,
                        "within_1": float(np.mean(within1)), "within_2": float(np.mean(within2)),
                        "within_2_per_seed": within2,
                        "resolution_source": "/".join(sorted({c["source"] for c in cal}))})
    return out


def _mean_se(values):
    values = [v for v in values if v == v]
    if not values:
        return float("nan"), float("nan")
    se = statistics.stdev(values) / np.sqrt(len(values)) if len(values) > 1 else 0.0
    return float(np.mean(values)), float(se)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks transport", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="budget 8 only, 2 seeds (about a minute)")
    args = parser.parse_args(argv)
    budgets = (8,) if args.quick else (6, 8, 12)
    seeds = range(2) if args.quick else range(5)
    cands = np.linspace(0.0, 1.0, N_CANDIDATES)
    eval_times = (cands[:-1] + cands[1:]) / 2
    warnings.simplefilter("ignore")
    clock = Stopwatch().start()
    rows, ratios, calibration = [], [], []
    for kind in PATHS:
        for budget in budgets:
            runs = [run_one(kind, budget, seed, eval_times) for seed in seeds]
            calibration += _calibration_rows(kind, budget, runs)
            errors = {m: [r[m]["error"] for r in runs] for m in METHODS}
            for method in METHODS:
                mean, se = _mean_se(errors[method])
                per_seed_ratio = [e / u for e, u in zip(errors[method], errors["uniform"])]
                row = {"path": kind, "budget": budget, "method": method, "mean_W2sq": mean,
                       **{k: v for k, v in per_seed_columns("mean_W2sq", errors[method], list(seeds)).items()
                          if k != "mean_W2sq"}, "se": se,
                       "ratio_vs_uniform": mean / np.mean(errors["uniform"]),
                       "ratio_vs_random": mean / np.mean(errors["random"]),
                       "wins_vs_uniform": f"{sum(r < 1 for r in per_seed_ratio)}/{len(per_seed_ratio)}",
                       "seconds": float(np.mean([r[method]["seconds"] for r in runs]))}
                if "alpha" in runs[0][method]:
                    row["mean_warp_alpha"] = float(np.mean([r[method]["alpha"] for r in runs]))
                    row["picks_near_split"] = _mean_se([r[method]["near_split"] for r in runs])[0]
                rows.append(row)
            floor = np.mean(errors["floor"])
            excess = {m: max(np.mean(errors[m]) - floor, 1e-12) for m in METHODS}
            for row in rows[-len(METHODS):]:
                row["excess_ratio_vs_uniform"] = excess[row["method"]] / excess["uniform"]
            iv = np.mean(errors["IV"])
            ratios.append({"path": kind, "budget": budget,
                           "IV / uniform": iv / np.mean(errors["uniform"]),
                           "IV / random": iv / np.mean(errors["random"]),
                           "IV (stationary) / uniform": np.mean(errors["IV (stationary GP)"]) /
                           np.mean(errors["uniform"]),
                           "IV / McCann": iv / np.mean(errors["McCann (uniform times)"]),
                           "IV / GP on means": iv / np.mean(errors["GP on means (uniform times)"]),
                           "max variance / uniform": np.mean(errors["max variance"]) / np.mean(errors["uniform"]),
                           "excess: IV / uniform": excess["IV"] / excess["uniform"],
                           "excess: IV / random": excess["IV"] / excess["random"],
                           "excess: IV (stationary) / uniform": excess["IV (stationary GP)"] / excess["uniform"]})
            print(markdown_table([ratios[-1]], list(ratios[-1])), flush=True)
    wall = clock.wall_s
    mode = "quick" if args.quick else "full"
    notes = (f"Mode: {mode} (budgets {list(budgets)}, {len(seeds)} seeds, one core, {wall:.0f} s wall). "
             "Errors are means over seeds (se = standard error); ratios are of those means, all in the same run; "
             "`wins_vs_uniform` counts seeds where the method's error is below the uniform grid's. "
             "`picks_near_split`: fraction of the queried times within 0.1 of the bifurcation; `mean_warp_alpha`: "
             "the warp blend chosen by marginal likelihood at the end (0 = stationary). No offline real "
             "time-course snapshot dataset ships inside an installed package, so none is included.\n\n"
             "## Ratios (mean error of IV over the named method's)\n\n" +
             markdown_table(ratios, list(ratios[0])) +
             "\n\n## Calibration of the surrogate's uncertainty at the held-out times\n\n"
             "Realised W2 error (the square root of the W2^2 above) against each scale of the same surrogate: "
             "`rms_err_over_scale` is root-mean-square error / root-mean-square scale (1 = calibrated in scale), "
             "`within_1`/`within_2` the share of held-out times whose error is at most 1 or 2 times the scale "
             "(means over seeds). `return_std` is the posterior std of the path only; `expected_w2_error` adds "
             "the resolution estimated by leave-one-snapshot-out (or the projection error, "
             "`resolution_source`).\n\n" +
             markdown_table(calibration, ["path", "budget", "method", "scale", "rms_err_over_scale", "within_1",
                                          "within_2", "resolution_source"]))
    headline = headline_pair(rows, key="method", ours=["IV", "IV (stationary GP)"], baseline="uniform",
                             metric="mean_W2sq", not_baselines=["floor"], path="bifurcation", budget=8)
    columns = ["path", "budget", "method", "mean_W2sq", "se", "ratio_vs_uniform", "ratio_vs_random",
               "excess_ratio_vs_uniform", "wins_vs_uniform", "mean_warp_alpha", "picks_near_split", "seconds"]
    text = write_results("transport", rows, command="python -m benchmarks transport" +
                         (" --quick" if args.quick else ""), notes=notes, columns=columns, headline=headline)
    print(text)
    return 0


if __name__ == "__main__":
    main()
