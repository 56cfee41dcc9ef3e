"""Timing harness: candidate vs baseline in the same process, repeated, medians and ratios.

Every benchmark module builds a list of :class:`Case` objects and calls :func:`run_cases`, which
warms each candidate up once (numba compilation stays outside the timed region), times ``fit`` and
``predict``/``transform`` ``repeats`` times, scores quality, and writes
``benchmarks/results/NAME.json`` plus ``NAME.md`` with the command that reproduces them.
"""

import json
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

# ``python -m benchmarks all`` points this at ``results/quick/`` so that its quick runs never overwrite the
# full-mode tables committed in ``results/``.
RESULTS = Path(os.environ.get("SKLEARN_FRONTIER_BENCH_RESULTS") or Path(__file__).parent / "results")


@dataclass
class Case:
    """One dataset and the estimators to compare on it.

    ``make_estimators`` returns ``{label: estimator}``; ``baseline`` names the label ratios are taken
    against; ``score(estimator, X_test, y_test) -> float`` is the quality metric (``metric`` its name).
    """

    name: str
    data: tuple  # (X_train, y_train, X_test, y_test)
    make_estimators: object
    baseline: str
    score: object
    metric: str
    predict_method: str = "predict"
    extra: dict = field(default_factory=dict)


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


def _timed(func):
    start = time.perf_counter()
    out = func()
    return time.perf_counter() - start, out


def run_case(case, repeats=3):
    """Time and score every estimator of ``case``; returns one dict per estimator."""
    X_train, y_train, X_test, y_test = case.data
    rows = []
    for label, est in case.make_estimators().items():
        est.fit(X_train, y_train)  # warm-up: JIT compilation and caches outside the timed region
        fit_times, predict_times = [], []
        for _ in range(repeats):
            t_fit, _ = _timed(lambda: est.fit(X_train, y_train))
            t_pred, _ = _timed(lambda: getattr(est, case.predict_method)(X_test))
            fit_times.append(t_fit)
            predict_times.append(t_pred)
        rows.append({
            "case": case.name,
            "estimator": label,
            "fit_median_s": statistics.median(fit_times),
            "predict_median_s": statistics.median(predict_times),
            "metric": case.metric,
            "score": float(case.score(est, X_test, y_test)),
            **case.extra,
        })
    base = next(r for r in rows if r["estimator"] == case.baseline)
    for r in rows:
        r["fit_ratio_vs_baseline"] = r["fit_median_s"] / base["fit_median_s"]
        r["baseline"] = case.baseline
    return rows


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


def headline_pair(rows, *, key, ours, baseline, metric, lower_is_better=True, **where):
    """The headline of a benchmark: ``ours`` beside ``baseline`` on ``metric``, with the ratio ours / baseline.

    ``key`` is the column naming the method (``"method"``, ``"estimator"``...), ``where`` selects the case
    (``case="horseshoe"``). Returns None when either row is missing (a partial run), so that the report
    falls back to the first row rather than showing a half-filled comparison.
    """
    def value(label):
        for row in rows:
            if row.get(key) == label and all(row.get(k) == v for k, v in where.items()):
                number = _as_number(row.get(metric))
                if number is not None:
                    return number
        return None

    a, b = value(ours), value(baseline)
    if a is None or b is None:
        return None
    better = "lower" if lower_is_better else "higher"
    return {**where, "metric": f"{metric} ({better} is better)", "ours": ours, "ours_value": a,
            "baseline": baseline, "baseline_value": b, "ratio_ours_over_baseline": a / b if b else float("nan")}


def write_results(name, rows, *, command=None, notes="", columns=None, headline=None):
    """Write ``results/NAME.json`` and ``results/NAME.md``; returns the Markdown text.

    ``headline`` is what the report and the README show for this benchmark: the index of a row in ``rows``
    or a dict (ours beside its baseline, with their ratio); by default the first row.
    """
    RESULTS.mkdir(parents=True, exist_ok=True)
    command = command or "python -m benchmarks " + " ".join([name, *sys.argv[2:]])
    payload = {"name": name, "command": command, "machine": machine_info(),
               "date": time.strftime("%Y-%m-%d %H:%M:%S"), "rows": rows, "notes": notes}
    if headline is not None:
        payload["headline"] = headline if isinstance(headline, dict) else int(headline)
    (RESULTS / f"{name}.json").write_text(json.dumps(payload, indent=2, default=float))
    columns = columns or list(rows[0])
    text = f"# {name}\n\nReproduce: `{command}`\n\n{markdown_table(rows, columns)}\n"
    if notes:
        text += f"\n{notes}\n"
    (RESULTS / f"{name}.md").write_text(text)
    return text


def run_cases(name, cases, repeats=3, notes=""):
    """Run every case, write the results and print the table."""
    rows = [row for case in cases for row in run_case(case, repeats=repeats)]
    text = write_results(name, rows, notes=notes, columns=[
        "case", "estimator", "metric", "score", "fit_median_s", "predict_median_s", "fit_ratio_vs_baseline"])
    print(text)
    return rows
