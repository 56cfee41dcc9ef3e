"""Every benchmark in quick mode, then one report: ``python -m benchmarks all``.

Runs ``python -m benchmarks NAME --quick`` for every other benchmark module (each in its own process, so
one failure or hang does not stop the rest) with its results redirected to ``benchmarks/results/quick/``
(the full-mode tables in ``benchmarks/results/`` are never overwritten by a quick run), then collects the
``*.json`` and ``*.md`` there into ``benchmarks/results/REPORT.md``: machine and versions at the top, a
headline row per benchmark, then each benchmark's table (ours vs its baselines and anchors, with ratios) with
a matplotlib figure beside it and a link to the full-mode table where one has been committed.

Options: ``--only a,b`` / ``--skip a,b`` choose modules, ``--full`` drops ``--quick`` (results then go to
``benchmarks/results/`` and the report is built from those), ``--report-only`` rebuilds the report from
the results already on disk, ``--timeout S`` bounds each module (default 1200 s).

``python -m benchmarks report`` runs nothing: it rebuilds REPORT.md, the README headline table and every README
claim from the JSON results on disk (:func:`main_report`).

Headlines. Each row pairs ours with the *strongest* baseline of the same case, found by the metric from the rows
(:func:`benchmarks._harness.headline_pair`); the labels that are ours (our variants, ablations and tuning-grid
points) and the rows that are no baseline (oracles, another regime) are declared, never the baseline itself. A
result stores its declaration (``payload["headline"]["spec"]``) and the report recomputes the pair from the rows;
results written before that carry none and take the declaration from :data:`DECLARED`.

README claims. Every measured number in README.md sits in a generated span: the headline table between
``<!-- benchmark-headlines:start/end -->`` and inline ``<!-- claim:ID -->...<!-- /claim:ID -->`` spans (the
estimators' status column, the scaling-out paragraph), rewritten from :data:`CLAIMS`. Each number's source (result
file, row, column, or a ratio of two cells) goes to ``benchmarks/results/CLAIMS.json``, which
``tests/test_readme_claims.py`` checks against the tables. The README quotes the full-mode table of a benchmark
where one is committed in ``benchmarks/results/`` and its newest quick table otherwise, and says which.
"""

import argparse
import importlib.metadata
import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from benchmarks._harness import (
    _as_number,
    case_pairs,
    headline_pair,
    machine_info,
    markdown_table,
)

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"  # fixed: the report's home, whatever the harness is pointed at
REPORT = RESULTS / "REPORT.md"
QUICK = RESULTS / "quick"
VERSIONS = ("sklearn-frontier", "numpy", "scipy", "scikit-learn", "torch", "numba", "triton", "pot", "pymanopt",
            "skops", "dask", "distributed", "joblib", "pandas", "matplotlib")
# benchmark result name prefix -> method family (package), for the per-method headline
METHOD_OF = {"smave": "sdr", "sdr": "sdr", "prbast": "spanning_trees", "bast": "spanning_trees",
             "spanning": "spanning_trees", "mixconfig": "configurations", "configurations": "configurations",
             "iv": "iv", "ceo": "topology", "topology": "topology", "ma3s": "annotation", "annotation": "annotation",
             "twinquant": "quantization", "wush": "quantization", "quantization": "quantization",
             "transport": "transport", "lot": "transport",
             "minilm": "quantization", "skorch": "(ecosystem)",
             "scaleout": "(ecosystem)", "kernels": "(kernels)"}


def _modules():
    from benchmarks.__main__ import available

    return [name for name in available() if name != "all"]


def run_module(name, quick, timeout):
    """Run one benchmark module in a subprocess; returns its run record."""
    cmd = [sys.executable, "-m", "benchmarks", name, *(["--quick"] if quick else [])]
    out_dir = QUICK if quick else RESULTS
    out_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "SKLEARN_FRONTIER_BENCH_RESULTS": str(out_dir)}
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env)
        rc, output = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc, output = "timeout", (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) \
            else (exc.stdout or "")
    wall = time.perf_counter() - start
    log = out_dir / f"{name}.log.tmp"
    log.write_text(output)
    status = "ok" if rc == 0 else f"failed (rc={rc}; see {log.relative_to(RESULTS.parent)})"
    print(f"{name:20s} {status:40s} {wall:8.1f} s", flush=True)
    return {"benchmark": name, "command": " ".join(["python -m benchmarks", *cmd[3:]]), "status": status,
            "wall_s": wall}


def _versions():
    out = {}
    for dist in VERSIONS:
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


def _load_results(source):
    results = []
    for path in sorted(source.glob("*.json")):
        if path.name.endswith(".partial.json") or path.name.startswith("_") or path == CLAIMS_FILE:
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


def _base(name):
    """A result's benchmark name: ``twinquant_quick`` -> ``twinquant``."""
    return name.removesuffix("_quick")


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
    return DECLARED.get(_base(result["name"]))


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


def make_figure(result):
    """A bar chart of the benchmark's headline numbers (the first one or two numeric columns)."""
    rows = [r for r in result["payload"].get("rows") or [] if isinstance(r, dict)]
    if not rows:
        return None
    columns = _numeric_columns(rows)
    if not columns:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = rows[:30]
    labels = [_label(r) for r in rows]
    fig, axes = plt.subplots(1, len(columns), figsize=(5.5 * len(columns), 0.35 * len(rows) + 1.5), squeeze=False)
    for ax, column in zip(axes[0], columns):
        values = [r[column] if _is_number(r.get(column)) else float("nan") for r in rows]
        ax.barh(range(len(rows)), values, color="tab:blue")
        ax.set_yticks(range(len(rows)), labels, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel(column)
        if any(w in column for w in ("ratio", "speedup")):
            ax.axvline(1.0, color="gray", lw=0.8)
    fig.suptitle(result["name"], fontsize=10)
    fig.tight_layout()
    path = result["dir"] / f"{result['name']}_report.png"
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def _demote(markdown):
    return "\n".join("#" + line if line.startswith("#") else line for line in markdown.splitlines())


def _relative(path):
    return path.relative_to(RESULTS).as_posix()


def _full_run_link(result):
    """Where a quick result has a committed full-mode table beside it, a link to that table."""
    if result["dir"] == RESULTS:
        return ""
    full = RESULTS / f"{result['name']}.md"
    if not full.exists():
        return ""
    date = "?"
    try:
        date = json.loads(full.with_suffix(".json").read_text()).get("date", "?")
    except (OSError, ValueError):
        pass
    return f"[{full.name}]({full.name}) ({date})"


def _merge_runs(source, runs):
    """This invocation's run records merged into the earlier ones kept beside the results (by benchmark)."""
    path = source / "_runs.json"
    try:
        previous = json.loads(path.read_text())
    except (OSError, ValueError):
        previous = []
    merged = {r["benchmark"]: r for r in previous}
    merged.update({r["benchmark"]: {**r, "date": time.strftime("%Y-%m-%d %H:%M:%S")} for r in runs})
    records = sorted(merged.values(), key=lambda r: r["benchmark"])
    path.write_text(json.dumps(records, indent=2))
    return records


def write_report(runs, started, source, generator="python -m benchmarks all"):
    results = _load_results(source)
    machine = machine_info()
    lines = ["# sklearn_frontier benchmark report", "",
             f"Generated by `{generator}` on {time.strftime('%Y-%m-%d %H:%M:%S')} from the results in "
             f"`benchmarks/results/{_relative(source) + '/' if source != RESULTS else ''}`"
             + (" (quick mode: reduced grids and seeds; full-mode tables are linked per benchmark)."
                if source != RESULTS else "."), "",
             "## Machine and versions", "",
             f"- Python {machine['python']} on {machine['platform']}, {machine['cpu_count']} CPU cores",
             "- BLAS: " + ", ".join(f"{b.get('internal_api')} ({b.get('architecture')}, {b.get('num_threads')} "
                                    "threads)" for b in machine["blas"]),
             "- " + ", ".join(f"{k} {v}" for k, v in _versions().items()), ""]
    if runs:
        lines += ["## Runs", "", markdown_table(runs, ["benchmark", "command", "status", "wall_s", "date"]), ""]
    headline = [{"method": _method_of(r["name"]), "benchmark": r["name"],
                 "date": r["payload"].get("date", "?"),
                 "fresh": "yes" if r["mtime"] >= started else "no (earlier run)",
                 **_headline_cells(r),
                 "full run": _full_run_link(r) or "-"} for r in results]
    lines += ["## Headline per method", "",
              ("Ours beside the strongest baseline of the same case (computed from the rows; our own variants, "
               "ablations and oracles are no baselines)."), "",
              markdown_table(headline, ["method", "benchmark", "date", "fresh", "case", "metric", "ours",
                                        "strongest baseline", "ours / baseline", "ours better?", "cost", "seeds",
                                        "full run"])
              if headline else "No results yet.", ""]
    for result in results:
        figure = make_figure(result)
        lines += [_demote(result["markdown"]).strip() or f"## {result['name']}", ""]
        if _full_run_link(result):
            lines += [f"Full-mode table: {_full_run_link(result)}.", ""]
        for png in sorted(result["dir"].glob(f"{result['name']}*.png")):
            if png != figure:
                lines += [f"![{png.stem}]({_relative(png)})", ""]
        if figure:
            lines += [f"![{result['name']}]({_relative(figure)})", ""]
    REPORT.write_text("\n".join(lines) + "\n")
    print(f"wrote {REPORT} ({len(results)} benchmark results)")
    update_readme()
    return REPORT


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


# ------------------------------------------------------------------------------------------- README claims
README = ROOT / "README.md"
README_START, README_END = "<!-- benchmark-headlines:start -->", "<!-- benchmark-headlines:end -->"
CLAIMS_FILE = RESULTS / "CLAIMS.json"
CLAIM_SPAN = re.compile(r"<!-- claim:(?P<id>[\w-]+) -->(?P<text>.*?)<!-- /claim:(?P=id) -->", re.DOTALL)


def _num(value):
    """How a claim writes a number: integers as they are, else three significant digits (whole above 100)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"not a number: {value!r}")
    if isinstance(value, int) or (float(value).is_integer() and abs(value) < 1e6):
        return str(int(value))
    if abs(value) >= 100:
        return f"{value:.0f}"
    short = f"{value:.3g}"  # a rounded value keeps its trailing zeros (1.003 -> "1.00", not "1"; 0.1 -> "0.1")
    return short if float(short) == value else f"{value:#.3g}".rstrip(".")


class Claim:
    """A README claim built piece by piece: prose without digits, strings taken from the tables (labels), links
    to results files, and numbers, each with its source (result file, row, column). ``record`` keeps the pieces,
    which ``tests/test_readme_claims.py`` checks one by one against the tables."""

    def __init__(self):
        self.parts = []

    def say(self, text):
        if re.search(r"\d", text):
            raise ValueError(f"a number typed into a claim: {text!r} (numbers come from the tables)")
        self.parts.append({"say": text})
        return self

    def label(self, text):
        """A string taken from a results table (a method, case or column name); may contain digits."""
        self.parts.append({"label": str(text).replace("|", "/")})
        return self

    def link(self, text, target):
        """``[text](target)``: a results table's name linking to its file (the test checks the file exists)."""
        self.parts.append({"label": str(text), "link": str(target)})
        return self

    def num(self, value, *sources, kind="cell", unit=""):
        """``value`` as read from ``sources`` (``kind="cell"``: one cell; ``"ratio"``: first / second; ``"count"``:
        the number of cases, one source each); ``unit`` is appended (no digits)."""
        if re.search(r"\d", unit):
            raise ValueError(f"a number typed into a unit: {unit!r}")
        self.parts.append({"num": _num(value), "kind": kind, "sources": [dict(x) for x in sources], "unit": unit})
        return self

    @staticmethod
    def _render(part):
        if "num" in part:
            return part["num"] + part["unit"]
        if "link" in part:
            return f"[{part['label']}]({part['link']})"
        return part.get("say", part.get("label"))

    @property
    def text(self):
        return "".join(self._render(part) for part in self.parts)

    def record(self, claim_id):
        return {"id": claim_id, "text": self.text, "parts": self.parts}


def _value(cell):
    """A cell as a number (``"0.107 ± 0.006"`` -> 0.107), else None."""
    number = _as_number(cell) if cell is not None else None
    return None if number is None or math.isnan(number) else number


def _source(result, index, column):
    path = result["dir"] / f"{result['name']}.json"
    try:
        path = path.relative_to(ROOT)
    except ValueError:  # results outside the repository (the report's tests)
        pass
    return {"file": path.as_posix(), "row": index, "column": column}


def _candidates():
    """Every result on disk, full-mode directory and quick directory."""
    return _load_results(RESULTS) + (_load_results(QUICK) if QUICK.exists() else [])


def _mode(result):
    return "quick" if "--quick" in str(result["payload"].get("command", "")) else "full"


def pick(base, results=None):
    """The result the README quotes for benchmark ``base``: the full-mode directory's table, else the newest
    quick table (``results/BASE_quick.json``, ``results/quick/BASE.json``...); a table whose declared headline
    finds no pair (a partial run) gives way to the next."""
    results = _candidates() if results is None else results
    full = [r for r in results if r["dir"] == RESULTS and r["name"] == base]
    quick = sorted((r for r in results if _base(r["name"]) == base and r not in full),
                   key=lambda r: str(r["payload"].get("date", "")), reverse=True)
    ranked = full + quick
    # a table whose headline has a baseline to stand beside wins; a partial full run does not hide a quick one
    return next((r for r in ranked if headline_args(r) is None or headline_of(r) is not None),
                ranked[0] if ranked else None)


def _where_text(c, result, head):
    spec_where = (head.get("spec") or {}).get("where") or {}
    first = True
    for column in spec_where:
        value = head.get(column)
        c.say("" if first else ", ")
        first = False
        if isinstance(value, str):
            c.label(value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            c.label(column).say("=").num(value, _source(result, head["ours_index"], column))
        else:
            c.label(column).say("=").label(str(value))
    if first:
        c.say("whole table")


def _pair_numbers(c, result, head, what):
    """``ours value`` / ``baseline value`` / ratio of a pair."""
    metric = head["spec"]["metric"]
    io, ib = head["ours_index"], head["baseline_index"]
    if what == "ours":
        c.num(head["ours_value"], _source(result, io, metric))
    elif what == "baseline":
        c.num(head["baseline_value"], _source(result, ib, metric))
    else:
        c.num(head["ratio_ours_over_baseline"], _source(result, io, metric), _source(result, ib, metric),
              kind="ratio", unit="×")


def headline_table(results=None):
    """The README headline table (one row per benchmark, ours beside the strongest baseline) and its sources."""
    results = _candidates() if results is None else results
    bases = list(DECLARED) + sorted({_base(r["name"]) for r in results
                                     if isinstance(r["payload"].get("headline"), dict)} - set(DECLARED))
    header = ["method", "benchmark", "case", "metric", "ours", "strongest baseline", "ours / baseline",
              "ours better?", "cost: ours vs baseline", "seeds: ours vs baseline"]
    claim = Claim().say("| " + " | ".join(header) + " |\n|" + "|".join("---" for _ in header) + "|\n")
    for base in bases:
        result = pick(base, results)
        if result is None:
            continue
        head = headline_of(result)
        if head is None or head.get("legacy"):
            continue
        link = f"benchmarks/results/{_relative(result['dir'] / (result['name'] + '.md'))}"
        claim.say(f"| {_method_of(base)} | ").link(result["name"], link).say(f" ({_mode(result)} run) | ")
        _where_text(claim, result, head)
        claim.say(" | ").label(head["spec"]["metric"])
        claim.say(" (lower is better) | " if head["spec"]["lower_is_better"] else " (higher is better) | ")
        claim.label(head["ours"]).say(": ")
        _pair_numbers(claim, result, head, "ours")
        claim.say(" | ").label(head["baseline"]).say(": ")
        _pair_numbers(claim, result, head, "baseline")
        claim.say(f" (strongest of {_words(len(head['baselines_compared']))}) | ")
        _pair_numbers(claim, result, head, "ratio")
        claim.say(f" | {_verdict(head)} | ")
        cost = head["spec"].get("cost")
        if cost and _value(head.get("ours_cost")) is not None and _value(head.get("baseline_cost")) is not None:
            claim.label(cost).say(" ").num(_value(head["ours_cost"]), _source(result, head["ours_index"], cost))
            claim.say(" vs ").num(_value(head["baseline_cost"]), _source(result, head["baseline_index"], cost))
        else:
            claim.say("-")
        claim.say(" | ")
        seeds = head["spec"].get("seeds")
        if seeds and _is_number(head.get("ours_seeds")) and _is_number(head.get("baseline_seeds")):
            claim.num(head["ours_seeds"], _source(result, head["ours_index"], seeds)).say(" vs ")
            claim.num(head["baseline_seeds"], _source(result, head["baseline_index"], seeds))
        else:
            claim.say("-")
        claim.say(" |\n")
    claim.parts[-1]["say"] = claim.parts[-1]["say"].rstrip("\n")
    return claim.text, claim


_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")


def _words(n):
    """Small counts in words in running prose (the baseline count is structure, not a measurement)."""
    return _WORDS[n] if n < len(_WORDS) else "many"


# --------------------------------------------------------------------------- claim builders (README status)
def _case_label(c, head, over):
    for i, column in enumerate(over):
        c.say("" if i == 0 else " ")
        value = head.get(column)
        if isinstance(value, str):
            c.label(value)
        else:
            c.label(column).say("=").label(str(value))


def _range(c, result, pairs, what, unit=""):
    """``lo–hi`` of the pairs' ``what`` values ("ours", "baseline" or "ratio"), each end with its source."""
    key = {"ours": "ours_value", "baseline": "baseline_value", "ratio": "ratio_ours_over_baseline"}[what]
    lo, hi = min(pairs, key=lambda h: h[key]), max(pairs, key=lambda h: h[key])
    _pair_numbers(c, result, lo, what)
    if _num(hi[key]) != _num(lo[key]):
        c.say("–")
        _pair_numbers(c, result, hi, what)
    if unit:
        c.say(unit)


def _seeds(c, result, pairs, side="ours"):
    column = pairs[0]["spec"].get("seeds")
    values = [(h[f"{side}_seeds"], h[f"{side}_index"]) for h in pairs if _is_number(h.get(f"{side}_seeds"))]
    if not column or not values:
        return False
    lo, hi = min(values), max(values)
    c.num(lo[0], _source(result, lo[1], column))
    if hi[0] != lo[0]:
        c.say("–").num(hi[0], _source(result, hi[1], column))
    return True


def _count(c, result, pairs, predicate):
    hits = [h for h in pairs if predicate(h)]
    c.num(len(hits), *[_source(result, h["ours_index"], h["spec"]["metric"]) for h in hits], kind="count")
    c.say("/").num(len(pairs), *[_source(result, h["ours_index"], h["spec"]["metric"]) for h in pairs],
                   kind="count")


def _strongest_names(c, pairs):
    names = list(dict.fromkeys(h["baseline"] for h in pairs))
    for i, name in enumerate(names):
        c.say("" if i == 0 else ", ").label(name)


def range_claim(c, result, args, over, noun, *, metric_label=None, cost=True, values=True, **where):
    """Ours vs the strongest baseline of each case (the ``over`` columns) among the rows ``where`` selects;
    ``values=False`` leaves out the ranges of the raw values (cases on different scales) and keeps counts and
    ratios."""
    spec = headline_pair_spec(args, where)
    pairs = case_pairs(_rows(result), spec, over)
    if not pairs:
        c.say(f"no {noun} with a baseline in ").label(result["name"])
        return []
    metric = metric_label or pairs[0]["spec"]["metric"]
    say_metric = c.say if metric_label and not re.search(r"\d", metric_label) else c.label  # prose or a column
    one = noun.removesuffix("s")
    seeded = all(_is_number(h.get("ours_seeds")) and _is_number(h.get("baseline_seeds")) for h in pairs) \
        and bool(pairs[0]["spec"].get("seeds"))
    say_metric(metric).say(" over ").num(len(pairs), *[_source(result, h["ours_index"], h["spec"]["metric"])
                                                   for h in pairs], kind="count").say(f" {noun}")
    if seeded:
        c.say(" (")
        _seeds(c, result, pairs)
        c.say(" seeds per " + one + ")")
    c.say(": ").label(pairs[0]["ours"])
    if values:
        c.say(" ")
        _range(c, result, pairs, "ours")
    c.say(" vs the strongest baseline of each " + one)
    if values:
        c.say(" ")
        _range(c, result, pairs, "baseline")
    c.say(" (")
    _strongest_names(c, pairs)
    if seeded:
        c.say("; ")
        _seeds(c, result, pairs, "baseline")
        c.say(" seeds")
    c.say("); ours better in ")
    _count(c, result, pairs, lambda h: h["verdict"] == "ours better")
    ties = [h for h in pairs if h["verdict"] == "tie"]
    if ties:
        c.say(", equal in ")
        _count(c, result, pairs, lambda h: h["verdict"] == "tie")
    c.say(", ours / baseline ")
    _range(c, result, pairs, "ratio")
    column = pairs[0]["spec"].get("cost")
    if cost and column and all(_value(h.get("ours_cost")) is not None and _value(h.get("baseline_cost")) is not None
                               for h in pairs):
        big = max(pairs, key=lambda h: _value(h["ours_cost"]))
        c.say("; ").label(column).say(" ours ")
        c.num(_value(big["ours_cost"]), _source(result, big["ours_index"], column))
        c.say(" vs ").num(_value(big["baseline_cost"]), _source(result, big["baseline_index"], column))
        c.say(" in the costliest " + one)
    return pairs


def headline_pair_spec(args, where=None):
    """The ``spec`` of a declaration with ``where`` replacing its case selection."""
    head_keys = ("key", "ours", "metric", "lower_is_better", "not_baselines", "baselines", "cost", "seeds", "wins",
                 "context")
    spec = {k: args[k] for k in head_keys if k in args}
    spec.setdefault("lower_is_better", True)
    spec["ours"] = [spec["ours"]] if isinstance(spec["ours"], str) else list(spec["ours"])
    spec["where"] = {**(args.get("where") or {}), **dict(where or {})} if where is None else dict(where)
    return spec


def pair_claim(c, result, args, **override):
    """The declared headline (``override`` replaces declaration entries) in words."""
    args = {**args, **override}
    head = headline_pair(_rows(result), **args)
    if head is None:
        c.say("no baseline pair in ").label(result["name"])
        return None
    c.label(head["ours"]).say(" ")
    _pair_numbers(c, result, head, "ours")
    c.say(" vs the strongest baseline ").label(head["baseline"]).say(" ")
    _pair_numbers(c, result, head, "baseline")
    c.say(" (").label(head["spec"]["metric"]).say(", ")
    _where_text(c, result, head)
    c.say("; ours / baseline ")
    _pair_numbers(c, result, head, "ratio")
    c.say({"ours better": ", ours better", "tie": ", equal", "baseline better": ", the baseline is better"}[
        head["verdict"]])
    if head.get("wins") is not None:
        c.say("; ours lower on ").label(str(head["wins"])).say(" layers")
    column = head["spec"].get("cost")
    if column and _value(head.get("ours_cost")) is not None and _value(head.get("baseline_cost")) is not None:
        c.say("; ").label(column).say(" ")
        c.num(_value(head["ours_cost"]), _source(result, head["ours_index"], column))
        c.say(" vs ").num(_value(head["baseline_cost"]), _source(result, head["baseline_index"], column))
    for column in head["spec"].get("context") or []:
        if _is_number(head.get(f"ours_{column}")) and _is_number(head.get(f"baseline_{column}")):
            c.say("; ").label(column).say(" ")
            c.num(head[f"ours_{column}"], _source(result, head["ours_index"], column)).say(" vs ")
            c.num(head[f"baseline_{column}"], _source(result, head["baseline_index"], column))
    if head["spec"].get("seeds") and _is_number(head.get("ours_seeds")):
        c.say("; ").num(head["ours_seeds"], _source(result, head["ours_index"], head["spec"]["seeds"]))
        c.say(" vs ").num(head["baseline_seeds"], _source(result, head["baseline_index"], head["spec"]["seeds"]))
        c.say(" seeds")
    c.say(")")
    return head


def _from(c, result):
    c.say(" [").label(result["name"]).say(f", {_mode(result)} run]")


def _claim_smave(c, results):
    r = pick("smave", results)
    args = headline_args(r)
    range_claim(c, r, args, ["case"], "synthetic cells", metric_label="planted-subspace distance",
                section="synthetic")
    c.say("; ")
    range_claim(c, r, args, ["case"], "scaling cells", metric_label="planted-subspace distance", section="scaling")
    c.say("; ")
    range_claim(c, r, args, ["case"], "real-data cells", metric_label="kNN test MSE", cost=False, values=False,
                section="real")
    _from(c, r)


def _claim_prbast(c, results):
    r = pick("prbast", results)
    range_claim(c, r, headline_args(r), ["case"], "domains")
    _from(c, r)


def _claim_mixconfig(c, results):
    r = pick("mixconfig", results)
    for j, (metric, cells) in enumerate((("accuracy", "classification cells"), ("r2", "regression cells"))):
        c.say("" if j == 0 else "; ")
        range_claim(c, r, headline_args(r), ["dataset", "label_frac", "downstream"], cells,
                    metric_label=metric, cost=j == 0, section="downstream", metric=metric)
    _from(c, r)


def _claim_iv(c, results):
    r = pick("iv", results)
    args = headline_args(r)
    pairs = range_claim(c, r, args, ["cell"], "cells", cost=False, cell="G*")
    same = [h for h in pairs if h["verdict"] == "tie"]
    if same:
        c.say(". Equal cells: ours equals ")
        _strongest_names(c, same)
        c.say(" there (the default is that baseline by construction). Without ")
        _strongest_names(c, same)
        c.say(": ")
        others = [*args.get("not_baselines", []), *dict.fromkeys(h["baseline"] for h in same)]
        range_claim(c, r, {**args, "not_baselines": others}, ["cell"], "cells", cost=False, cell="G*")
    _from(c, r)


def _claim_ceo(c, results):
    r = pick("ceo", results)
    args = headline_args(r)
    pair_claim(c, r, args)
    c.say("; ")
    range_claim(c, r, {**args, "ours": ["CEO signed", "CEO*"]}, ["case"], "point clouds", cost=False,
                case="*(n=*")
    scale = [(i, row) for i, row in enumerate(_rows(r)) if _is_number(row.get("peak_RSS_MB"))
             and str(row.get("method", "")).startswith("CEO")]
    if scale:
        i, row = max(scale, key=lambda t: (t[1].get("dense_nxn_MB") or 0, -t[1].get("fit_s", 0)))
        c.say("; largest timing case ").label(row["case"]).say(": ").label(row["method"]).say(" fit ")
        c.num(row["fit_s"], _source(r, i, "fit_s"), unit=" s").say(" wall, peak RSS ")
        c.num(row["peak_RSS_MB"], _source(r, i, "peak_RSS_MB"), unit=" MB")
        if _is_number(row.get("tracemalloc_peak_MB")):
            c.say(" (tracemalloc peak ").num(row["tracemalloc_peak_MB"], _source(r, i, "tracemalloc_peak_MB"),
                                              unit=" MB").say(")")
        others = {x.get("method") for x in _rows(r) if x.get("case") == row["case"]} - {row["method"]}
        c.say(", no baseline at that size" if not any(not str(m).startswith("CEO") for m in others) else "")
    _from(c, r)


def _claim_ma3s(c, results):
    r = pick("ma3s", results)
    args = headline_args(r)
    range_claim(c, r, args, ["dataset"], "datasets", metric_label="label accuracy at three labels per item "
                "(majority vote)", cost=False, dataset="*")
    for metric, name in (("acc_3n_one_coin", "one-coin"), ("acc_3n_ds", "Dawid–Skene")):
        pairs = case_pairs(_rows(r), headline_pair_spec({**args, "metric": metric}, {"dataset": "*"}), ["dataset"])
        if pairs:
            c.say(f"; the same labels aggregated by {name}: ours better in ")
            _count(c, r, pairs, lambda h: h["verdict"] == "ours better")
            c.say(" datasets, ours / strongest baseline ")
            _range(c, r, pairs, "ratio")
    _from(c, r)
    t = pick("ma3s_timing", results)
    if t is not None:
        c.say("; ")
        pair_claim(c, t, headline_args(t))
        _from(c, t)


def _claim_twinquant(c, results):
    r = pick("quantization", results)
    if r is not None:
        pair_claim(c, r, headline_args(r))
        _from(c, r)
    a = pick("quantization_ablation", results)
    if a is not None:
        rows = _rows(a)
        split = a["payload"].get("splits", {}).get("ablation")
        steps = [(i, row) for i, row in enumerate(rows) if str(row.get("method", "")).startswith("lr")]
        if steps:
            tuning = split is not None and "calibration" in split.get("score", "")
            c.say("; default step sizes " + ("rechecked on the tuning split (fit and scored on calibration texts "
                                             "only, disjoint from the headline's held-out texts)" if tuning else
                                             "scored on the headline's own held-out texts") + ": ")
            for j, (i, row) in enumerate(steps):
                c.say("" if j == 0 else ", ").say("default / ").label(row["method"]).say(" error ")
                c.num(row["default_err_ratio"], _source(a, i, "default_err_ratio"), unit="×")
                c.say(", default lower on ").label(row["default_wins"]).say(" layers")
            _from(c, a)
    k = pick("twinquant_kernel", results)
    if k is not None:
        if headline_args(k) is not None:  # quantized inference: MiniLM encode latency vs fp32, same run
            c.say("; quantized inference: ")
            pair_claim(c, k, headline_args(k))
            _from(c, k)
        gpu = [row for row in _rows(k) if row.get("section", row.get("backend")) not in (None, "numba", "layer",
                                                                                         "minilm")
               and _is_number(row.get("ms", row.get("fused_ms")))]
        c.say("; fused kernel: " + ("GPU rows in " if gpu else "no GPU timing yet (CPU rows only) in "))
        c.label(k["name"])


def _claim_scaleout(c, results):
    r = pick("scaleout", results)
    rows = _rows(r)
    modes = [m for m in dict.fromkeys(row.get("mode") for row in rows) if m and m != "sequential"]
    for j, mode in enumerate(modes):
        values = [(row["speedup_vs_sequential"], i) for i, row in enumerate(rows)
                  if row.get("mode") == mode and _is_number(row.get("speedup_vs_sequential"))]
        if not values:
            continue
        lo, hi = min(values), max(values)
        c.say("" if j == 0 else "; ").label(mode).say(" ")
        c.num(lo[0], _source(r, lo[1], "speedup_vs_sequential"))
        if _num(hi[0]) != _num(lo[0]):
            c.say("–").num(hi[0], _source(r, hi[1], "speedup_vs_sequential"))
        c.say("× over ").num(len(values), *[_source(r, i, "speedup_vs_sequential") for _, i in values],
                             kind="count").say(" workloads")
    _from(c, r)


CLAIM_NEEDS = {"twinquant": "quantization"}  # claim -> the table it cannot do without (default: same name)
CLAIMS = {"smave": _claim_smave, "prbast": _claim_prbast, "mixconfig": _claim_mixconfig, "iv": _claim_iv,
          "ceo": _claim_ceo, "ma3s": _claim_ma3s, "twinquant": _claim_twinquant, "scaleout": _claim_scaleout}


def build_claims(results=None):
    """Every README claim as ``{id: Claim}`` from the results on disk (a missing table says so, in words)."""
    results = _candidates() if results is None else results
    out = {}
    for claim_id, build in CLAIMS.items():
        c = Claim()
        needs = CLAIM_NEEDS.get(claim_id, claim_id)
        if pick(needs, results) is None:
            out[claim_id] = c.say("no results table yet (").label(needs).say(")")
            continue
        try:
            build(c, results)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a table without the expected columns
            c = Claim().say(f"claim not generated ({type(exc).__name__}: ").label(str(exc)[:80]).say(")")
        out[claim_id] = c
    return out


def update_readme(results=None):
    """Rewrite the README's headline table and claim spans from the results on disk; write CLAIMS.json."""
    if not README.exists():
        return
    results = _candidates() if results is None else results
    text = README.read_text()
    records = []
    if README_START in text and README_END in text:
        table, claim = headline_table(results)
        head, rest = text.split(README_START, 1)
        _, tail = rest.split(README_END, 1)
        text = f"{head}{README_START}\n{table}\n{README_END}{tail}"
        records.append(claim.record("headlines"))
    claims = build_claims(results)
    text = CLAIM_SPAN.sub(lambda m: f"<!-- claim:{m['id']} -->{claims[m['id']].text}<!-- /claim:{m['id']} -->"
                          if m["id"] in claims else m[0], text)
    records += [claims[m["id"]].record(m["id"]) for m in CLAIM_SPAN.finditer(text) if m["id"] in claims]
    README.write_text(text)
    CLAIMS_FILE.write_text(json.dumps(records, indent=1, ensure_ascii=False) + "\n")
    print(f"updated the headline table and {len(records) - 1} claims in {README.name}; sources in {CLAIMS_FILE}")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks all", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="the default; kept for symmetry")
    parser.add_argument("--full", action="store_true", help="run the modules without --quick")
    parser.add_argument("--only", default="", help="comma-separated module names")
    parser.add_argument("--skip", default="", help="comma-separated module names")
    parser.add_argument("--report-only", action="store_true", help="only rebuild REPORT.md from results/")
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds per module")
    args = parser.parse_args(argv)
    RESULTS.mkdir(exist_ok=True)
    source = RESULTS if args.full else QUICK
    source.mkdir(exist_ok=True)
    started = time.time()
    runs = []
    if not args.report_only:
        names = _modules()
        if args.only:
            wanted = set(args.only.split(","))
            unknown = wanted - set(names)
            if unknown:
                raise SystemExit(f"unknown benchmarks {sorted(unknown)}; available: {names}")
            names = [n for n in names if n in wanted]
        names = [n for n in names if n not in set(args.skip.split(","))]
        runs = [run_module(name, quick=not args.full, timeout=args.timeout) for name in names]
    write_report(_merge_runs(source, runs), started, source)
    return 0 if all(r["status"] == "ok" for r in runs) else 1


def main_report(argv=None):
    """``python -m benchmarks report [--full]``: REPORT.md, the README headline table and claims from the results
    on disk, running no benchmark (``--full``: REPORT.md shows ``results/`` instead of ``results/quick/``)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks report", description=main_report.__doc__)
    parser.add_argument("--full", action="store_true", help="REPORT.md from benchmarks/results/ (not quick/)")
    args = parser.parse_args(argv)
    source = RESULTS if args.full or not QUICK.exists() else QUICK
    try:
        runs = json.loads((source / "_runs.json").read_text())
    except (OSError, ValueError):
        runs = []
    write_report(runs, time.time(), source, generator="python -m benchmarks report")
    return 0
