"""Headline pairs: ours beside the strongest baseline of the same case, recomputed from a result's rows.

A benchmark stores its declaration (``payload["headline"]["spec"]``, from :func:`benchmarks._harness.headline_pair`);
results written before that carry none and take it from :data:`DECLARED`. The baseline is never named: it is the
strongest remaining row of the case.
"""

import re

from benchmarks._harness import headline_pair
from benchmarks._results import candidates, family_of

_method_of = family_of  # the name docs/conf.py imports

# Declarations for results that do not store theirs; the same as the benchmark modules' ``headline_pair`` calls.
# ``ours``: our headline label, then our own variants (ablations, tuning-grid points: never baselines);
# ``not_baselines``: oracles and rows of another regime.
DECLARED = {
    "ceo": {"key": "method", "ours": ["CEO(c=0.5,eps=0.001,norm=True)", "CEO*"], "metric": "ARI",
            "lower_is_better": False, "cost": "fit_s", "seeds": "seeds", "case": "G1 hypergraph SBM*"},
    "smave": {"key": "method", "ours": ["SMAVE", "SMAVE(*", "MAVEDimensionCV(SMAVE)"], "metric": "mean",
              "cost": "fit_cpu_s", "seeds": "n_seeds", "section": "synthetic", "case": "B, p=30, n=4000"},
    "iv": {"key": "method", "ours": ["instrument_guided", "instrument_guided *"], "metric": "M1_median",
           "not_baselines": ["oracle"], "cost": "fit_median_s", "seeds": "seeds",
           "cell": "G1 default (n=4000,p=80,k=3,α=50)"},
    "ma3s": {"key": "strategy", "ours": ["MA3S-E", "MA3S-*"], "metric": "acc_3n", "lower_is_better": False,
             "cost": "annotator_s", "seeds": "n_seeds", "dataset": "breast_cancer"},
    "ma3s_timing": {"key": "strategy", "ours": ["MA3S-E"], "metric": "loop_wall_s", "kind": "loop",
                    "backend": "numba", "n": "@max"},
    "mixconfig": {"key": "method", "ours": ["learned", "single", "uniform", "concat"], "metric": "mean",
                  "lower_is_better": False, "cost": "fit_s", "seeds": "n_seeds", "section": "downstream",
                  "dataset": "digits", "label_frac": 0.05, "downstream": ["linear", "-"]},
    "prbast": {"key": "estimator", "ours": ["PRBAST", "PRBAST *"], "metric": "rmse", "cost": "fit_s",
               "seeds": "n_seeds", "case": "horseshoe"},
    "quantization": {"key": "method", "ours": ["TwinQuant r8", "TwinQuant*"], "metric": "mean_rel_err",
                     "not_baselines": ["* W4A4"], "cost": "fit_cpu_s", "wins": "tq_wins",
                     "context": ["bits_per_weight", "mean_cos_vs_fp32"]},
    "twinquant": {"key": "method", "ours": ["TwinQuant r8", "TwinQuant*"], "metric": "mean_rel_err",
                  "not_baselines": ["* W4A4"], "cost": "quant_time_s", "wins": "tq_wins",
                  "context": ["bits_per_weight"]},
    "scaleout": {"key": "mode", "ours": ["n_jobs=2 (loky)", "dask*"], "metric": "wall_median_s", "case": "suite: *"},
}

# The benchmark whose headline speaks for each family (the README's headline table has one row per family).
PRIMARY = {"sdr": "smave", "spanning_trees": "prbast", "configurations": "mixconfig", "iv": "iv",
           "topology": "ceo", "annotation": "ma3s", "quantization": "quantization", "transport": "transport",
           "ecosystem": "scaleout"}

# Further README headline rows, after the family's primary one: a second question the family answers for users
# (quantized models are judged on speed as well as on error).
SECONDARY = {"quantization": ("twinquant_kernel",)}


def headline_benchmarks(family):
    """The benchmarks whose headlines the README shows for ``family``, primary first."""
    return (PRIMARY[family], *SECONDARY.get(family, ()))


HEAD_KEYS = ("key", "ours", "metric", "lower_is_better", "not_baselines", "baselines", "cost", "seeds", "wins",
             "context", "deterministic")


def _spec_args(spec):
    """``headline_pair`` keyword arguments from a stored ``spec``."""
    args = {k: v for k, v in spec.items() if k not in ("where", "reference")}
    if spec.get("reference") is not None:
        args["baseline"] = spec["reference"]
    return {**args, "where": dict(spec.get("where") or {})}


def headline_args(result):
    """The headline declaration of a result: the one it stored, else :data:`DECLARED`'s, else None."""
    stored = result.payload.get("headline")
    if isinstance(stored, dict) and isinstance(stored.get("spec"), dict):
        return _spec_args(stored["spec"])
    return DECLARED.get(result.base)


def spec_with(args, where=None):
    """The ``spec`` of a declaration, its case selection replaced by ``where`` when given."""
    spec = {k: args[k] for k in HEAD_KEYS if k in args}
    spec.setdefault("lower_is_better", True)
    spec["ours"] = [spec["ours"]] if isinstance(spec["ours"], str) else list(spec["ours"])
    spec["where"] = {**(args.get("where") or {})} if where is None else dict(where)
    return spec


def headline_of(result):
    """The result's headline recomputed from its rows (strongest baseline), a legacy stored dict, or None."""
    args = headline_args(result)
    if args is not None:
        return headline_pair(result.rows, **args)
    stored = result.payload.get("headline")
    if isinstance(stored, dict) and "ours" in stored and "baseline" in stored:
        return {**stored, "legacy": True}
    return None


def pick(base, results=None):
    """The result quoted for benchmark ``base``: a full-mode table that is not stale (its family's code has not
    changed since it was measured), else the newest quick table that is not stale, else the newest table of all
    (the report marks it stale). A table whose declared headline finds no pair (a partial run) gives way to the
    next."""
    from benchmarks import _layout

    results = candidates() if results is None else results
    mine = [r for r in results if r.base == base]
    by_date = sorted(mine, key=lambda r: r.date, reverse=True)
    full = [r for r in by_date if r.folder == _layout.RESULTS and r.name == base and r.mode == "full"]
    fresh_full = [r for r in full if not r.stale]
    fresh_quick = [r for r in by_date if r.mode == "quick" and not r.stale]
    ranked = []
    for r in [*fresh_full, *fresh_quick, *by_date]:
        if not any(r is x for x in ranked):
            ranked.append(r)
    return next((r for r in ranked if headline_args(r) is None or headline_of(r) is not None),
                ranked[0] if ranked else None)


def picked(results=None):
    """One result per benchmark (:func:`pick`), in family order, then by name."""
    from benchmarks._results import FAMILIES

    results = candidates() if results is None else results
    chosen = [pick(base, results) for base in dict.fromkeys(r.base for r in results)]
    merged = {name.strip() for r in chosen if r is not None for names in MERGED.findall(r.command)
              for name in names.split(",")}
    chosen = [r for r in chosen if r is not None and r.name not in merged]  # parts shown through their whole
    order = list(FAMILIES)
    return sorted(chosen,
                  key=lambda r: (order.index(r.family) if r.family in order else len(order), r.name))


MERGED = re.compile(r"\(merged: ([^)]*)\)")  # a result assembled from partial runs names them in its command

VERDICT_WORDS = {"ours better": "better", "tie": "tie", "baseline better": "worse"}


def verdict_counts(pairs):
    """``(better, tie, worse)``: how many case pairs ours wins, ties (within two standard errors) and loses."""
    words = [VERDICT_WORDS[p["verdict"]] for p in pairs]
    return words.count("better"), words.count("tie"), words.count("worse")


def verdict_word(pairs):
    """One word for a set of case pairs: ``mixed`` when ours wins some cases and loses others; ``better``
    (``worse``) when it only wins (loses) and those cases are at least as many as the ties; else ``tie``. The
    counts are always shown beside the word."""
    better, tie, worse = verdict_counts(pairs)
    if better and worse:
        return "mixed"
    if better:
        return "better" if better >= tie else "tie"
    if worse:
        return "worse" if worse >= tie else "tie"
    return "tie"


def fmt(value):
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)
