"""The main job: fit every method on bundled or generated data inside a Pipeline, next to its baseline.

Run with ``python -m sklearn_frontier.demo`` (or ``sklearn-frontier demo``). Each method package
registers a demo function (``register_demo``) returning rows of
``{"method", "estimator", "task", "metric", "score", "baseline", "baseline_score", "fit_time"}``;
this module runs them with a progress bar and prints one line per row (``--wide`` or ``--output FILE`` for the full
table), then a summary of the warnings raised on the way.
"""

import argparse
import re
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

from sklearn_frontier._registry import all_demos, all_estimators
from sklearn_frontier.utils._progress import progress_bar

COLUMNS = ("estimator", "task", "metric", "score", "baseline", "baseline_score", "fit_time")


def _format(value):
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def format_table(rows):
    """A Markdown table of demo rows."""
    header = ["estimator", "task", "metric", "score", "baseline", "baseline score", "fit time (s)"]
    body = [[_format(row.get(c, "")) for c in COLUMNS] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in body)) if body else len(h) for i, h in enumerate(header)]
    line = lambda cells: "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"  # noqa: E731
    out = [line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [line(r) for r in body]
    return "\n".join(out)


def run_demo(methods=None, random_state=0, verbose=1):
    """Run the registered demos and return their rows.

    Parameters
    ----------
    methods : list of str, default=None
        Method families to run (default: all registered).
    random_state : int, default=0
        Seed passed to every demo.
    verbose : int, default=1
        Show a progress bar.

    Returns
    -------
    rows : list of dict
    """
    demos = all_demos()
    if methods:
        unknown = set(methods) - set(demos)
        if unknown:
            raise ValueError(f"unknown methods {sorted(unknown)}; registered: {sorted(demos)}")
        demos = {m: demos[m] for m in methods}
    rows = []
    bar = progress_bar(list(demos.items()), desc="demo", verbose=verbose, unit="method")
    for method, func in bar:
        bar.set_postfix(method=method)
        start = time.perf_counter()
        for row in func(random_state):
            rows.append({"method": method, **row})
        rows[-1].setdefault("wall_time", time.perf_counter() - start)
    return rows


def missing_from_demo(rows):
    """Registered estimators that no demo row names (as its estimator or its baseline), per method family.

    Parameters
    ----------
    rows : list of dict
        Rows of :func:`run_demo`.

    Returns
    -------
    missing : dict of str to list of str
        ``{family: [class names]}`` for the families present in ``rows`` (a family's rows may come from
        several demos, e.g. ``quantization`` and ``quantization_minilm``); empty when every one is shown.
    """
    shown = " ".join(f"{r.get('estimator', '')} {r.get('baseline', '')}" for r in rows)
    entries = all_estimators()
    known = {e.method for e in entries}
    families = set()
    for r in rows:  # a demo named "family" or "family_something"
        method = str(r.get("method", ""))
        families.add(method if method in known else next((k for k in known if method.startswith(k + "_")), method))
    missing = {}
    for entry in entries:
        if entry.method in families and entry.name not in shown:
            missing.setdefault(entry.method, []).append(entry.name)
    return missing


# Words that mark a metric where lower is better (errors, distances, latencies); other metrics are scores.
_LOWER_IS_BETTER = ("error", "rmse", "mse", "distance", "loss", "latency", "time", "mae")


def _direction(metric):
    """``(label, sign)``: the metric as users read it and the sign that turns a row's score into that reading.

    Rows may store an error negated (``"-rel. output error"``, so that higher is better for every score); the
    compact table shows the error itself, marked "lower is better".
    """
    metric = str(metric)
    sign = 1.0
    if metric.startswith("-"):
        metric, sign = metric[1:].strip(), -1.0
    if "is better" in metric:  # the row already says which way
        return metric, sign
    said = re.search(r"\((lower|higher)\)", metric)  # "(lower)": the row says which way, tersely
    if said:
        return metric.replace(said.group(0), f"({said.group(1)} is better)"), sign
    lower = sign < 0 or any(word in metric.lower() for word in _LOWER_IS_BETTER)
    return metric + (" (lower is better)" if lower else " (higher is better)"), sign


def verdict(row, tie=0.01):
    """"better", "worse" or "tie" (within ``tie`` relative) for ours against the baseline of one row."""
    label, sign = _direction(row.get("metric", ""))
    ours, base = row.get("score"), row.get("baseline_score")
    if not isinstance(ours, (int, float)) or not isinstance(base, (int, float)) or ours != ours or base != base:
        return "n/a"
    ours, base = sign * ours, sign * base
    if abs(ours - base) <= tie * max(abs(ours), abs(base), 1e-12):
        return "tie"
    lower = "lower is better" in label
    return "better" if (ours < base) == lower else "worse"


def _clip(text, width):
    text = str(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def format_compact(rows):
    """One line per row, one screen wide: ours, the baseline, the metric with its direction, a verdict, time."""
    header = ("ours", "baseline", "metric", "ours", "base", "verdict", "fit s")
    widths = (24, 24, 42, 8, 8, 7, 6)
    body = []
    for row in rows:
        label, sign = _direction(row.get("metric", ""))
        score = lambda v: f"{sign * v:.3g}" if isinstance(v, (int, float)) else _format(v)  # noqa: E731
        fit_time = row.get("fit_time", "")
        body.append((row.get("estimator", ""), row.get("baseline", ""), label, score(row.get("score", "")),
                     score(row.get("baseline_score", "")), verdict(row),
                     f"{fit_time:.3g}" if isinstance(fit_time, float) else _format(fit_time)))
    line = lambda cells: " ".join(_clip(c, w).ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    return "\n".join([line(header), " ".join("-" * w for w in widths)] + [line(r) for r in body])


def main(argv=None):
    parser = argparse.ArgumentParser(prog="sklearn-frontier demo", description=__doc__.splitlines()[0])
    parser.add_argument("methods", nargs="*", help="method families to run (default: all)")
    parser.add_argument("--random-state", type=int, default=0)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--wide", action="store_true", help="print the full table (every column, full names)")
    parser.add_argument("--output", help="also write the full table to this file")
    args = parser.parse_args(argv)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows = run_demo(args.methods or None, random_state=args.random_state, verbose=0 if args.quiet else 1)
    print(format_table(rows) if args.wide else format_compact(rows))
    if args.output:
        Path(args.output).write_text(format_table(rows) + "\n")
        print(f"full table written to {args.output}")
    if caught:
        counts = Counter(f"{w.category.__name__}: {_clip(str(w.message).splitlines()[0], 90)}" for w in caught)
        print(f"\n{len(caught)} warning(s) during the demo (expected on its small data):")
        for text, n in counts.most_common(5):
            print(f"  {n} x {text}")
    if args.wide:
        for family, names in missing_from_demo(rows).items():
            print(f"not in the {family} demo: {', '.join(names)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
