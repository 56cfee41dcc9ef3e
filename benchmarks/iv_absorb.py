"""Absorbed fixed effects: fit time of ``TwoStageLeastSquares(absorb=...)`` against pyfixest's ``feols``.

``python -m benchmarks iv_absorb [--quick]`` writes ``benchmarks/results/iv_absorb.{json,md}``. One endogenous
treatment, two instruments, one control, CRV1 errors clustered on a third grouping; one fixed effect with G levels,
or two (G levels and 100 more). n ∈ {1e5, 1e6}, G ∈ {1e3, 1e4} (quick: n ∈ {1e4, 3e4}, G ∈ {1e2, 1e3}). Both
sides fit the same DataFrame from scratch (ours: arrays and validation; feols: its formula, with
``fixef_rm="none"`` so that both keep every row) after one warm-up fit each, so numba compilation and pyfixest's
first-call costs stay outside the timed region. Every cell is timed ``REPEATS`` times per side, interleaved; the rows
carry the mean, its standard deviation and the per-repeat seconds, and the ratio ours / feols of the means is
measured in the same run. Each row also records the agreement of the two fits (largest relative difference of the
coefficients and of the CRV1 standard errors).
"""

import argparse
import sys
import time
import warnings

import numpy as np
import pandas as pd

from benchmarks._harness import headline_pair, per_seed_columns, write_results
from sklearn_frontier.iv import TwoStageLeastSquares

SIZES = {"full": ((100_000, 1_000), (100_000, 10_000), (1_000_000, 1_000), (1_000_000, 10_000)),
         "quick": ((10_000, 100), (10_000, 1_000), (30_000, 1_000))}
REPEATS = 3
SEED = 0
OURS = "TwoStageLeastSquares(absorb)"
THEIRS = "pyfixest.feols"
COLUMNS = ["n", "levels", "n_fe", "method", "fit_s", "fit_s_sd", "ratio_to_feols", "coef_max_rel_diff",
           "se_max_rel_diff", "fit_s_per_seed"]


def make_panel(n, levels, seed=SEED):
    """A panel with fixed effects ``fe`` (``levels`` levels) and ``fe2`` (100), 500 clusters ``cl``."""
    rng = np.random.default_rng(seed)
    fe, fe2, cl = rng.integers(0, levels, n), rng.integers(0, 100, n), rng.integers(0, 500, n)
    a = rng.normal(size=levels)[fe] + rng.normal(size=100)[fe2]
    z, z2, w, h = rng.normal(size=n) + 0.3 * a, rng.normal(size=n), rng.normal(size=n) + a, rng.normal(size=n)
    x = z + 0.5 * z2 + 0.5 * w + h + a + rng.normal(size=n)
    y = 1.5 * x + 0.3 * w + 2 * h + 3 * a + rng.normal(size=n)
    return pd.DataFrame({"y": y, "x": x, "z": z, "z2": z2, "w": w, "fe": fe, "fe2": fe2, "cl": cl})


def fit_ours(df, absorb):
    est = TwoStageLeastSquares(cov_type="cluster").fit(df[["x"]], df["y"], Z=df[["z", "z2"]], W=df[["w"]],
                                                       groups=df["cl"], absorb=df[absorb])
    return np.r_[est.controls_coef_, est.coef_], np.sqrt(np.diag(est.params_cov_))


def fit_feols(df, absorb):
    import pyfixest

    fit = pyfixest.feols(f"y ~ w | {' + '.join(absorb)} | x ~ z + z2", data=df, vcov={"CRV1": "cl"},
                         fixef_rm="none")
    return fit.coef().to_numpy(), fit.se().to_numpy()


def _timed(func, *args):
    start = time.perf_counter()
    out = func(*args)
    return time.perf_counter() - start, out


def run(quick=False):
    try:
        import pyfixest
    except ImportError:
        pyfixest = None
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pyfixest's pandas deprecation warnings
        warm = make_panel(5_000, 50)
        for absorb in (["fe"], ["fe", "fe2"]):
            fit_ours(warm, absorb)
            if pyfixest is not None:
                fit_feols(warm, absorb)
        for n, levels in SIZES["quick" if quick else "full"]:
            df = make_panel(n, levels)
            for absorb in (["fe"], ["fe", "fe2"]):
                ours_t, theirs_t = [], []
                for _ in range(REPEATS):  # interleaved, so that machine load falls on both sides alike
                    t, (coef, se) = _timed(fit_ours, df, absorb)
                    ours_t.append(t)
                    if pyfixest is not None:
                        t, (coef_f, se_f) = _timed(fit_feols, df, absorb)
                        theirs_t.append(t)
                case = {"n": n, "levels": levels, "n_fe": len(absorb)}
                agree = {}
                if pyfixest is not None:
                    agree = {"coef_max_rel_diff": float(np.max(np.abs(coef / coef_f - 1))),
                             "se_max_rel_diff": float(np.max(np.abs(se / se_f - 1)))}
                ratio = float(np.mean(ours_t) / np.mean(theirs_t)) if theirs_t else float("nan")
                rows.append({**case, "method": OURS, **per_seed_columns("fit_s", ours_t), "ratio_to_feols": ratio,
                             **agree})
                if theirs_t:
                    rows.append({**case, "method": THEIRS, **per_seed_columns("fit_s", theirs_t),
                                 "ratio_to_feols": 1.0, **agree})
                print(f"n={n} levels={levels} n_fe={len(absorb)}: ours {np.mean(ours_t):.3f}s, feols "
                      f"{np.mean(theirs_t) if theirs_t else float('nan'):.3f}s, ratio {ratio:.2f}", flush=True)
    big_n = max(r["n"] for r in rows)
    big_levels = max(r["levels"] for r in rows if r["n"] == big_n)
    headline = headline_pair(rows, key="method", ours=OURS, metric="fit_s", lower_is_better=True,
                             n=big_n, levels=big_levels, n_fe=1)
    notes = ("Fit seconds per call (mean of the repeats, `fit_s_sd` their standard deviation, `fit_s_per_seed` the "
             "per-repeat values); `ratio_to_feols` is ours over feols, both measured in this run on the machine the "
             "stamp names, with the thread counts it records. Both fits use CRV1 errors clustered on `cl`, "
             "pyfixest's degrees-of-freedom defaults, and every row (feols with `fixef_rm='none'`). Demeaning "
             "tolerances are each library's default (ours: relative 1e-10; feols: its own); one fixed effect is "
             "exact in one sweep for both.")
    if pyfixest is None:
        notes += " pyfixest is not installed: only our rows were measured (pip install pyfixest)."
    print(write_results("iv_absorb", rows, columns=COLUMNS, headline=headline, notes=notes, quick=quick))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks iv_absorb", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, results in benchmarks/results/quick/")
    args = parser.parse_args(argv)
    run(quick=args.quick)


if __name__ == "__main__":
    main(sys.argv[1:])
