"""What every benchmark module shares: the machine record, result tables, and headline pairs.

A module times its cases with :mod:`benchmarks._timing` (``timed``, ``Stopwatch``), writes
``benchmarks/results/NAME.json`` plus ``NAME.md`` with the command that reproduces them (:func:`write_results`;
quick runs go to ``results/quick/``), and declares its headline pair: ours beside the strongest baseline of the
same case (:func:`headline_pair`).
"""

import fnmatch
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks._results import family_of
from benchmarks._stamp import machine_stamp, run_stamp, stamp_line
from sklearn_frontier.utils._verdict import TIE_RTOL, Spread, compare

run_stamp()  # the commit and the uncommitted source files when the run starts (this module loads with it)

# Full runs write here, quick runs into its quick/ folder (results_dir); SKLEARN_FRONTIER_BENCH_RESULTS points a
# run elsewhere (a scratch folder, say).
RESULTS = Path(os.environ.get("SKLEARN_FRONTIER_BENCH_RESULTS") or Path(__file__).parent / "results")


def machine_info():
    """The machine a results file was measured on: :func:`benchmarks._stamp.machine_stamp` (CPU model, SIMD level,
    thread counts, library versions) plus the short keys older reports read."""
    info = machine_stamp()
    versions = info["versions"]
    return {**info, "numpy": versions.get("numpy") or np.__version__, "scikit-learn": versions.get("scikit-learn"),
            "blas": info["threads"]["blas"]}


def markdown_table(rows, columns):
    def fmt(v):
        return f"{v:.4g}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(fmt(r.get(c, "")) for c in columns) + " |" for r in rows]
    return "\n".join(lines)


def _as_number(value):
    """A table cell as a float: numbers as they are, ``"0.107 ± 0.006"`` as its mean, else None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    try:
        return float(str(value).split()[0])
    except (ValueError, IndexError):
        return None


def _matches(label, patterns):
    """``label`` equals one of ``patterns`` or matches it as a glob (``"CEO*"``, ``"* W4A4"``)."""
    label = str(label)
    return any(label == p or fnmatch.fnmatchcase(label, p) for p in patterns)


def _where_matches(row, where, rows):
    for column, wanted in where.items():
        value = row.get(column)
        if wanted == "@max":  # the largest value of the column (e.g. the biggest n of a timing sweep)
            wanted = max((r.get(column) for r in rows if _is_plain_number(r.get(column))), default=None)
        # a list: any of its values (a case whose pool spans two values of a column)
        if not any(_value_matches(value, w) for w in (wanted if isinstance(wanted, list) else [wanted])):
            return False
    return True


def _value_matches(value, wanted):
    if isinstance(wanted, str) and "*" in wanted:
        return isinstance(value, str) and fnmatch.fnmatchcase(value, wanted)
    return value == wanted


def per_seed_columns(metric, values, seeds=None):
    """The per-seed convention's columns for ``metric``: its mean over ``values``, ``M_sd`` (ddof=1; None for one
    value), ``M_per_seed`` and, when the values are per seed rather than timing repeats, ``seed_ids``."""
    values = [float(v) for v in values]
    out = {metric: float(np.mean(values)) if values else float("nan"),
           f"{metric}_sd": float(np.std(values, ddof=1)) if len(values) > 1 else None,
           f"{metric}_per_seed": values}
    if seeds is not None:
        seeds = [int(s) if _is_plain_number(s) else s for s in seeds]
        if len(seeds) != len(values):
            raise ValueError(f"{len(values)} values for {len(seeds)} seeds")
        out["seed_ids"] = seeds
    return out


def _is_plain_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _as_list(value):
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _spread(row, metric, seeds_column=None):
    """The :class:`~sklearn_frontier.utils._verdict.Spread` of ``row``'s ``metric``: from the per-seed columns
    (``M_per_seed``, ``M_sd``, ``seed_ids``), else a legacy ``"0.107 ± 0.006"`` cell with the seed count in
    ``seeds_column``."""
    per_seed = row.get(f"{metric}_per_seed")
    per_seed = tuple(float(v) for v in per_seed) if isinstance(per_seed, (list, tuple)) and all(
        _is_plain_number(v) for v in per_seed) else None
    seed_ids = row.get("seed_ids")
    seed_ids = tuple(seed_ids) if isinstance(seed_ids, (list, tuple)) and per_seed is not None and len(
        seed_ids) == len(per_seed) else None
    sd = row.get(f"{metric}_sd")
    sd = float(sd) if _is_plain_number(sd) and not math.isnan(sd) else None
    if sd is None and per_seed is not None and len(per_seed) > 1:
        sd = float(np.std(per_seed, ddof=1))
    if sd is None and isinstance(row.get(metric), str) and "±" in row[metric]:
        sd = _as_number(row[metric].split("±", 1)[1].strip())
    n = len(per_seed) if per_seed is not None else None
    if n is None and seeds_column is not None and _is_plain_number(row.get(seeds_column)):
        n = int(row[seeds_column])
    return Spread(sd, n, per_seed, seed_ids)


def headline_pair(rows, *, key, ours, metric, lower_is_better=True, not_baselines=(), baselines=None, cost=None,
                  seeds=None, wins=None, context=(), baseline=None, where=None, deterministic=False, **columns):
    """The headline of a benchmark: ``ours`` beside the strongest baseline of the same case on ``metric``.

    ``key`` is the column naming the method (``"method"``, ``"estimator"``...) and the remaining keywords select
    the case (``case="horseshoe"``; a value with ``*`` is a glob, ``"@max"`` the column's largest value; ``where``
    takes the same as a dict, for columns whose names clash with a parameter, such as ``metric``). ``ours`` is our
    label, or a list whose first entry is the headline label and whose other entries (labels or globs such as
    ``"CEO*"``) are our own variants: ablations and tuning-grid points of ours, never baselines. ``not_baselines``
    names other rows that are no baseline (oracles, anchors from another regime). Every remaining row of the case
    with a number in ``metric`` is a baseline (``baselines``, if given, restricts them to those labels/globs), and
    the strongest of them by ``metric`` is the one reported; ``baseline`` (optional) only records the reference a
    benchmark used to name, it does not choose. ``cost`` is a column (fit seconds, ...) shown for both rows,
    ``seeds`` a column holding the seed count, ``wins`` a column of the baseline's row holding ours' win count
    against it (``"33/36"``), ``context`` further columns shown for both rows.

    The spread of each side comes from the per-seed columns (``M_sd``, ``M_per_seed``, ``seed_ids``) or a legacy
    ``"mean ± sd"`` cell with ``seeds``; :func:`compare` turns it into the ``verdict`` (``"ours better"``,
    ``"tie"`` or ``"baseline better"``): a difference within two standard errors is a tie, and so is one without
    spread, unless ``deterministic`` declares that the metric does not vary with the seed.

    Returns None when ours or every baseline is missing (a partial run), so that the report falls back to the
    first row rather than showing a half-filled comparison. The returned dict carries its own ``spec`` so that
    the report can recompute it from the rows.
    """
    ours_labels = _as_list(ours)
    where = {**(where or {}), **columns}
    spec = {"key": key, "ours": ours_labels, "metric": metric, "lower_is_better": bool(lower_is_better),
            "not_baselines": _as_list(not_baselines), "baselines": None if baselines is None else _as_list(baselines),
            "cost": cost, "seeds": seeds, "wins": wins, "context": _as_list(context), "reference": baseline,
            "deterministic": bool(deterministic), "where": dict(where)}
    case_rows = [r for r in rows if isinstance(r, dict) and _where_matches(r, where, rows)]

    def value(row):
        number = _as_number(row.get(metric))
        return None if number is None or math.isnan(number) else number  # NaN: no score

    ours_row = next((r for r in case_rows if r.get(key) == ours_labels[0] and value(r) is not None), None)
    candidates, excluded = [], []
    for row in case_rows:
        label = row.get(key)
        if label is None or value(row) is None:
            continue
        if _matches(label, ours_labels) or _matches(label, spec["not_baselines"]) or (
                spec["baselines"] is not None and not _matches(label, spec["baselines"])):
            excluded.append(str(label))
            continue
        if str(label) not in {str(c.get(key)) for c in candidates}:
            candidates.append(row)
    if ours_row is None or not candidates:
        return None
    pick = min if lower_is_better else max
    best = pick(candidates, key=value)
    a, b = value(ours_row), value(best)
    tied = [str(r.get(key)) for r in candidates if math.isclose(value(r), b, rel_tol=TIE_RTOL) and r is not best]
    ours_spread, base_spread = _spread(ours_row, metric, seeds), _spread(best, metric, seeds)
    verdict, basis = compare(a, b, ours_spread, base_spread, lower_is_better=lower_is_better,
                             deterministic=deterministic)
    better = "lower" if lower_is_better else "higher"
    out = {**{k: (ours_row.get(k) if v == "@max" or (isinstance(v, str) and "*" in v) else v)
              for k, v in where.items()},
           "metric": f"{metric} ({better} is better)", "ours": ours_labels[0], "ours_value": a,
           "ours_sd": ours_spread.sd, "ours_seeds": ours_spread.n,
           "baseline": str(best.get(key)), "baseline_value": b,
           "baseline_sd": base_spread.sd, "baseline_seeds": base_spread.n,
           "ratio_ours_over_baseline": a / b if b else float("nan"), "verdict": verdict, "verdict_basis": basis,
           "baselines_compared": [str(r.get(key)) for r in candidates], "not_baselines_here": excluded,
           "ours_index": _index(rows, ours_row), "baseline_index": _index(rows, best), "spec": spec}
    if tied:
        out["baseline_ties"] = tied
    if spec["reference"] is not None:
        ref = next((r for r in candidates if r.get(key) == spec["reference"]), None)
        out["reference_value"] = value(ref) if ref is not None else None
    if cost is not None:
        out["ours_cost"], out["baseline_cost"] = ours_row.get(cost), best.get(cost)
    if wins is not None:
        out["wins"] = best.get(wins)
    for column in spec["context"]:
        out[f"ours_{column}"], out[f"baseline_{column}"] = ours_row.get(column), best.get(column)
    return out


def _index(rows, row):
    return next(i for i, r in enumerate(rows) if r is row)


def case_pairs(rows, spec, over):
    """:func:`headline_pair` of ``spec`` (a headline's ``spec``) for every distinct value of the ``over`` columns
    among the rows that ``spec["where"]`` selects: one pair per case (cases without a pair are left out)."""
    base = {k: v for k, v in spec.items() if k not in ("where", "reference")}
    where = {k: v for k, v in (spec.get("where") or {}).items() if k not in over}
    selected = [r for r in rows if isinstance(r, dict) and _where_matches(r, where, rows)]
    cases = list(dict.fromkeys(tuple(r.get(c) for c in over) for r in selected
                               if all(r.get(c) is not None for c in over)))
    out = []
    for case in cases:
        pair = headline_pair(rows, **base, where={**where, **dict(zip(over, case))})
        if pair is not None:
            out.append(pair)
    return out


def results_dir(quick=None):
    """Where a run writes: ``results/`` for full runs, ``results/quick/`` for quick ones (``--quick`` on the command
    line when ``quick`` is None), so that a quick run never overwrites a committed full-mode table."""
    quick = "--quick" in sys.argv if quick is None else quick
    return RESULTS / "quick" if quick and RESULTS.name != "quick" else RESULTS


def write_results(name, rows, *, command=None, notes="", columns=None, headline=None, quick=None):
    """Write ``NAME.json`` and ``NAME.md`` into :func:`results_dir`; returns the Markdown text.

    ``headline`` is what the report and the README show for this benchmark: the index of a row in ``rows``
    or a dict (ours beside its strongest baseline, from :func:`headline_pair`); by default the first row.
    """
    folder = results_dir(quick)
    folder.mkdir(parents=True, exist_ok=True)
    command = command or "python -m benchmarks " + " ".join([name, *sys.argv[2:]])
    payload = {"name": name, "command": command, **run_stamp(), "machine": machine_info(),
               "date": time.strftime("%Y-%m-%d %H:%M:%S"), "rows": rows, "notes": notes}
    if headline is not None:
        payload["headline"] = headline if isinstance(headline, dict) else int(headline)
    (folder / f"{name}.json").write_text(json.dumps(payload, indent=2, default=float))
    columns = columns or list(rows[0])
    text = (f"# {name}\n\nReproduce: `{command}`\n\n{stamp_line(payload, family_of(name))}\n\n"
            f"{markdown_table(rows, columns)}\n")
    if notes:
        text += f"\n{notes}\n"
    (folder / f"{name}.md").write_text(text)
    return text
