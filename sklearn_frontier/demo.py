"""The main job: fit every method on bundled or generated data inside a Pipeline, next to its baseline.

Run with ``python -m sklearn_frontier.demo`` (or ``sklearn-frontier demo``). Each method package
registers a demo function (``register_demo``) returning rows of
``{"method", "estimator", "task", "metric", "score", "baseline", "baseline_score", "fit_time"}``;
this module runs them with a progress bar and prints one table.
"""

import argparse
import sys
import time

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


def main(argv=None):
    parser = argparse.ArgumentParser(prog="sklearn-frontier demo", description=__doc__.splitlines()[0])
    parser.add_argument("methods", nargs="*", help="method families to run (default: all)")
    parser.add_argument("--random-state", type=int, default=0)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    rows = run_demo(args.methods or None, random_state=args.random_state, verbose=0 if args.quiet else 1)
    print(format_table(rows))
    for family, names in missing_from_demo(rows).items():
        print(f"not in the {family} demo: {', '.join(names)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
