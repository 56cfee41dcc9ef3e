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
import platform
import sys
import time
from pathlib import Path

import numpy as np

# Full runs write here, quick runs into its quick/ folder (results_dir); SKLEARN_FRONTIER_BENCH_RESULTS points a
# run elsewhere (a scratch folder, say).
RESULTS = Path(os.environ.get("SKLEARN_FRONTIER_BENCH_RESULTS") or Path(__file__).parent / "results")


def machine_info():
    import sklearn
    import threadpoolctl

    info = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "numpy": np.__version__,
        "scikit-learn": sklearn.__version__,
        "blas": [
            {k: d.get(k) for k in ("internal_api", "num_threads", "architecture")}
            for d in threadpoolctl.threadpool_info()
        ],
    }
    return info


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
        if isinstance(wanted, str) and "*" in wanted:
            if not (isinstance(value, str) and fnmatch.fnmatchcase(value, wanted)):
                return False
        elif value != wanted:
            return False
    return True


def _is_plain_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _as_list(value):
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


TIE_RTOL = 1e-9  # ours and a baseline within this relative distance are a tie (same estimator up to rounding)


def headline_pair(rows, *, key, ours, metric, lower_is_better=True, not_baselines=(), baselines=None, cost=None,
                  seeds=None, wins=None, context=(), baseline=None, where=None, **columns):
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
    against it (``"33/36"``), ``context`` further columns shown for both rows. Values within a relative
    :data:`TIE_RTOL` of each other are a tie (``verdict``: ``"ours better"``, ``"tie"`` or ``"baseline better"``).

    Returns None when ours or every baseline is missing (a partial run), so that the report falls back to the
    first row rather than showing a half-filled comparison. The returned dict carries its own ``spec`` so that
    the report can recompute it from the rows.
    """
    ours_labels = _as_list(ours)
    where = {**(where or {}), **columns}
    spec = {"key": key, "ours": ours_labels, "metric": metric, "lower_is_better": bool(lower_is_better),
            "not_baselines": _as_list(not_baselines), "baselines": None if baselines is None else _as_list(baselines),
            "cost": cost, "seeds": seeds, "wins": wins, "context": _as_list(context), "reference": baseline,
            "where": dict(where)}
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
    if math.isclose(a, b, rel_tol=TIE_RTOL):
        verdict = "tie"
    else:
        verdict = "ours better" if (a < b) == bool(lower_is_better) else "baseline better"
    better = "lower" if lower_is_better else "higher"
    out = {**{k: (ours_row.get(k) if v == "@max" or (isinstance(v, str) and "*" in v) else v)
              for k, v in where.items()},
           "metric": f"{metric} ({better} is better)", "ours": ours_labels[0], "ours_value": a,
           "baseline": str(best.get(key)), "baseline_value": b,
           "ratio_ours_over_baseline": a / b if b else float("nan"), "verdict": verdict,
           "baselines_compared": [str(r.get(key)) for r in candidates], "not_baselines_here": excluded,
           "ours_index": _index(rows, ours_row), "baseline_index": _index(rows, best), "spec": spec}
    if tied:
        out["baseline_ties"] = tied
    if spec["reference"] is not None:
        ref = next((r for r in candidates if r.get(key) == spec["reference"]), None)
        out["reference_value"] = value(ref) if ref is not None else None
    for name, column in (("cost", cost), ("seeds", seeds)):
        if column is not None:
            out[f"ours_{name}"], out[f"baseline_{name}"] = ours_row.get(column), best.get(column)
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
    payload = {"name": name, "command": command, "machine": machine_info(),
               "date": time.strftime("%Y-%m-%d %H:%M:%S"), "rows": rows, "notes": notes}
    if headline is not None:
        payload["headline"] = headline if isinstance(headline, dict) else int(headline)
    (folder / f"{name}.json").write_text(json.dumps(payload, indent=2, default=float))
    columns = columns or list(rows[0])
    text = f"# {name}\n\nReproduce: `{command}`\n\n{markdown_table(rows, columns)}\n"
    if notes:
        text += f"\n{notes}\n"
    (folder / f"{name}.md").write_text(text)
    return text
