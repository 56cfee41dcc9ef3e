"""Headline pairs of the benchmark results: ours beside the strongest baseline of the same case, from the rows."""

import json

from benchmarks import _layout
from benchmarks._harness import (
    headline_pair,
)

# benchmark result name prefix -> method family (package), for the per-method headline
METHOD_OF = {"smave": "sdr", "sdr": "sdr", "prbast": "spanning_trees", "bast": "spanning_trees",
             "spanning": "spanning_trees", "mixconfig": "configurations", "configurations": "configurations",
             "iv": "iv", "ceo": "topology", "topology": "topology", "ma3s": "annotation", "annotation": "annotation",
             "twinquant": "quantization", "wush": "quantization", "quantization": "quantization",
             "transport": "transport", "lot": "transport",
             "minilm": "quantization", "skorch": "(ecosystem)",
             "scaleout": "(ecosystem)", "kernels": "(kernels)"}



def _load_results(source):
    results = []
    for path in sorted(source.glob("*.json")):
        if path.name.endswith(".partial.json") or path.name.startswith("_") or path == _layout.CLAIMS_FILE:
            continue  # checkpoints, run records, the README claims' sources
        try:
            payload = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            print(f"skipping unreadable {path.name}: {exc}")
            continue
        if not isinstance(payload, dict):
            continue
        md = path.with_suffix(".md")
        results.append({"name": path.stem, "payload": payload, "mtime": path.stat().st_mtime, "dir": source,
                        "markdown": md.read_text() if md.exists() else ""})
    return results


def _method_of(name):
    for prefix in sorted(METHOD_OF, key=len, reverse=True):
        if name.startswith(prefix):
            return METHOD_OF[prefix]
    return "?"


def _headline_row(payload):
    """The row a benchmark marks as its headline (``payload["headline"]``: index or dict), else its first."""
    rows = payload.get("rows") or []
    headline = payload.get("headline")
    if isinstance(headline, dict):
        return headline
    if isinstance(headline, int) and 0 <= headline < len(rows):
        return rows[headline]
    return rows[0] if rows else {}


# Headline declarations for results written before the benchmarks stored theirs (``payload["headline"]["spec"]``);
# the same as the benchmark modules' ``headline_pair`` calls. ``ours``: our headline label, then our own variants
# (ablations, tuning-grid points: never baselines); ``not_baselines``: oracles and rows of another regime. The
# baseline is never named: it is the strongest remaining row of the case.
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
                  "dataset": "digits", "label_frac": 0.05, "downstream": "linear"},
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


def _spec_args(spec):
    """``headline_pair`` keyword arguments from a stored ``spec``."""
    args = {k: v for k, v in spec.items() if k not in ("where", "reference")}
    if spec.get("reference") is not None:
        args["baseline"] = spec["reference"]
    return {**args, "where": dict(spec.get("where") or {})}


def _where_of(args):
    """The case selection of a declaration (its ``where`` dict and its column keywords)."""
    known = {"key", "ours", "metric", "lower_is_better", "not_baselines", "baselines", "cost", "seeds", "wins",
             "context", "baseline", "where"}
    return {**(args.get("where") or {}), **{k: v for k, v in args.items() if k not in known}}


def headline_args(result):
    """The headline declaration of a result: the one it stored, else :data:`DECLARED`'s, else None."""
    stored = result["payload"].get("headline")
    if isinstance(stored, dict) and isinstance(stored.get("spec"), dict):
        return _spec_args(stored["spec"])
    return DECLARED.get(result["name"])


def _rows(result):
    return [r for r in result["payload"].get("rows") or [] if isinstance(r, dict)]


def headline_of(result):
    """The result's headline recomputed from its rows (strongest baseline), a legacy stored dict, or None."""
    args = headline_args(result)
    if args is not None:
        return headline_pair(_rows(result), **args)
    stored = result["payload"].get("headline")
    if isinstance(stored, dict) and "ours" in stored and "baseline" in stored:
        return {**stored, "legacy": True}
    return None


def _fmt(value):
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _compact(row, limit=8):
    items = [f"{k}={_fmt(v)}" for k, v in row.items() if not isinstance(v, (dict, list))][:limit]
    return "; ".join(items).replace("|", "/")


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _numeric_columns(rows):
    keys = list(dict.fromkeys(k for r in rows for k in r))
    keys = [k for k in keys if any(_is_number(r.get(k)) for r in rows)
            and all(r.get(k) is None or _is_number(r.get(k)) for r in rows)]
    priority = ("speedup", "ratio", "score", "accuracy", "rmse", "mse", "error", "M1", "median", "_s")

    def rank(key):
        return next((i for i, word in enumerate(priority) if word in key), len(priority))

    return sorted(keys, key=rank)[:2]  # the most telling quality number first, then a ratio or a time


def _label(row):
    parts = [str(v)[:40] for k, v in row.items() if isinstance(v, str) and k not in ("metric", "baseline")][:2]
    return " | ".join(parts) or "?"



def _verdict(head):
    if head.get("legacy"):
        return "baseline named in code (strongest not checked)"
    return {"ours better": "yes", "tie": "tie (equal)", "baseline better": "no"}[head["verdict"]]


def _headline_cells(result):
    head = headline_of(result)
    if head is None:
        return {"case": _compact(_headline_row(result["payload"]), limit=5)}
    skip = {"metric", "ours", "ours_value", "baseline", "baseline_value", "ratio_ours_over_baseline", "verdict",
            "baselines_compared", "not_baselines_here", "spec", "legacy", "baseline_ties", "reference_value",
            "ours_index", "baseline_index", "wins"}
    skip |= {k for k in head if k.startswith(("ours_", "baseline_"))}
    cells = {"case": "; ".join(f"{k}={_fmt(v)}" for k, v in head.items() if k not in skip),
             "metric": head["metric"], "ours": f"{head['ours']}: {_fmt(head['ours_value'])}",
             "strongest baseline": f"{head['baseline']}: {_fmt(head['baseline_value'])}",
             "ours / baseline": _fmt(head["ratio_ours_over_baseline"]), "ours better?": _verdict(head)}
    cost = (head.get("spec") or {}).get("cost")
    if cost and "ours_cost" in head:
        cells["cost"] = f"{cost}: {_fmt(head['ours_cost'])} vs {_fmt(head['baseline_cost'])}"
    if "ours_seeds" in head:
        cells["seeds"] = f"{_fmt(head['ours_seeds'])} vs {_fmt(head['baseline_seeds'])}"
    return cells


def _relative(path):
    return path.relative_to(_layout.RESULTS).as_posix()
