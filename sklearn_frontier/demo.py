"""The main job: fit every method on bundled or generated data inside a Pipeline, next to its strongest baseline.

Run with ``python -m sklearn_frontier.demo`` (or ``sklearn-frontier demo``). Each method family has a demo: the
comparison in :mod:`sklearn_frontier._demo_comparisons` where the suite ships a stronger baseline than the family's
registered demo shows, else the function the family registered (``register_demo``). A demo returns rows of
``{"estimator", "task", "metric", "score", "baseline", "baseline_score", "fit_time"}`` (or ``"baselines"``: every
baseline's score). Each demo runs over a few seeds; a row shows the means, the strongest baseline by its mean, and
the verdict of the benchmarks' rule: better or worse only when the difference exceeds two standard errors, paired
over the seeds, else a tie. The table is printed one line per row (``--wide`` or ``--output FILE`` for every
column), then a summary of the warnings raised on the way.
"""

import argparse
import re
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

import numpy as np

from sklearn_frontier._demo_comparisons import COMPARISONS
from sklearn_frontier._registry import all_demos, all_estimators
from sklearn_frontier.utils._progress import progress_bar
from sklearn_frontier.utils._verdict import Spread, compare

N_SEEDS = 3  # seeds per demo: the fewest from which a paired standard error can be read
# Demos run once: the quantized MiniLM loads and quantizes a whole model per run; its row says "1 run".
SINGLE_RUN = {"quantization_minilm"}
VERDICT_WORDS = {"ours better": "better", "tie": "tie", "baseline better": "worse"}

COLUMNS = ("estimator", "task", "metric", "score", "score_sd", "baseline", "baseline_score", "baseline_sd", "n_seeds",
           "verdict", "fit_time")


def _format(value):
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def format_table(rows):
    """A Markdown table of demo rows."""
    header = ["estimator", "task", "metric", "score", "sd", "strongest baseline", "baseline score", "sd", "seeds",
              "verdict", "fit time (s)"]
    body = [[_format(row.get(c, "")) for c in COLUMNS] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in body)) if body else len(h) for i, h in enumerate(header)]
    line = lambda cells: "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"  # noqa: E731
    out = [line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [line(r) for r in body]
    return "\n".join(out)


def run_demo(methods=None, random_state=0, verbose=1, n_seeds=N_SEEDS):
    """Run the demos over ``n_seeds`` seeds and return one row per comparison, with its verdict.

    Parameters
    ----------
    methods : list of str, default=None
        Method families to run (default: all registered).
    random_state : int, default=0
        The first seed; a demo runs with seeds ``random_state``, ``random_state + 1``, ...
    verbose : int, default=1
        Show a progress bar.
    n_seeds : int, default=3
        Seeds per demo (demos in ``SINGLE_RUN`` run once).

    Returns
    -------
    rows : list of dict
        ``score`` and ``baseline_score`` are means over the seeds (``score_sd``, ``baseline_sd`` their sd),
        ``baseline`` the strongest of ``baselines_compared`` by its mean, ``verdict`` ``"better"``, ``"worse"``,
        ``"tie"`` or ``"1 run"`` (a single run says nothing about noise), ``verdict_basis`` the test in words.
    """
    demos = {**all_demos(), **{m: f for m, f in COMPARISONS.items() if m in all_demos()}}
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
        seeds = [random_state + i for i in range(1 if method in SINGLE_RUN else n_seeds)]
        runs = [func(seed) for seed in seeds]
        for i in range(min(len(run) for run in runs)):
            rows.append({"method": method, **summarise([run[i] for run in runs], seeds)})
        if rows:
            rows[-1].setdefault("wall_time", time.perf_counter() - start)
    return rows


def _baselines(row):
    if "baselines" in row:
        return dict(row["baselines"])
    return {row["baseline"]: row["baseline_score"]} if "baseline" in row else {}


def _is_score(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def summarise(per_seed_rows, seeds):
    """One demo row from the same row of each seed's run: means, the strongest baseline, the verdict."""
    first = per_seed_rows[0]
    label, sign = _direction(first.get("metric", ""))
    lower = "lower is better" in label
    ours = [r.get("score") for r in per_seed_rows]
    ours_seeds = [s for s, v in zip(seeds, ours) if _is_score(v)]
    ours = [v for v in ours if _is_score(v)]
    per_baseline = {}
    for seed, r in zip(seeds, per_seed_rows):
        for name, value in _baselines(r).items():
            if _is_score(value):
                per_baseline.setdefault(name, ([], []))
                per_baseline[name][0].append(value)
                per_baseline[name][1].append(seed)
    out = {k: v for k, v in first.items() if k not in ("score", "baseline", "baseline_score", "baselines")}
    out.update(score=float(np.mean(ours)) if ours else float("nan"), n_seeds=len(ours),
               baselines_compared=list(per_baseline), fit_time=float(np.mean([r.get("fit_time", np.nan)
                                                                               for r in per_seed_rows])))
    if not per_baseline or not ours:
        return {**out, "baseline": first.get("baseline", ""), "baseline_score": first.get("baseline_score"),
                "verdict": "n/a", "verdict_basis": "no scores to compare"}

    def reading(values):  # the metric as users read it (errors stored negated turned back)
        return [sign * v for v in values]

    pick = min if lower else max
    strongest = pick(per_baseline, key=lambda name: np.mean(reading(per_baseline[name][0])))
    values, base_seeds = per_baseline[strongest]
    out.update(baseline=strongest, baseline_score=float(np.mean(values)),
               score_sd=Spread.of(ours).sd, baseline_sd=Spread.of(values).sd)
    if len(ours) < 2:
        return {**out, "verdict": "1 run", "verdict_basis": "a single run: no spread to judge a difference by"}
    ours_r, base_r = reading(ours), reading(values)
    result, basis = compare(float(np.mean(ours_r)), float(np.mean(base_r)), Spread.of(ours_r, ours_seeds),
                            Spread.of(base_r, base_seeds), lower_is_better=lower)
    return {**out, "verdict": VERDICT_WORDS[result], "verdict_basis": basis}


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
    shown = " ".join(f"{r.get('estimator', '')} {r.get('baseline', '')} {' '.join(r.get('baselines_compared', []))}"
                     for r in rows)
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


def verdict(row):
    """The verdict of a demo row (:func:`run_demo` computes it over seeds): ``"better"``, ``"worse"``, ``"tie"``,
    ``"1 run"`` for a row measured once (one run says nothing about noise) or ``"n/a"`` without scores."""
    if "verdict" in row:
        return row["verdict"]
    ours, base = row.get("score"), row.get("baseline_score")
    return "1 run" if _is_score(ours) and _is_score(base) else "n/a"


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
    parser.add_argument("--random-state", type=int, default=0, help="the first seed")
    parser.add_argument("--seeds", type=int, default=N_SEEDS, help="seeds per demo (default %(default)s)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--wide", action="store_true", help="print the full table (every column, full names)")
    parser.add_argument("--output", help="also write the full table to this file")
    args = parser.parse_args(argv)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows = run_demo(args.methods or None, random_state=args.random_state, verbose=0 if args.quiet else 1,
                        n_seeds=args.seeds)
    print(f"Means over {args.seeds} seeds; ours against the strongest baseline the suite ships for each case; "
          "better or worse only beyond two standard errors of the paired difference, else a tie.\n")
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
