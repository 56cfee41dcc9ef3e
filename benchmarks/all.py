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
"""

import argparse
import importlib.metadata
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from benchmarks._harness import machine_info, markdown_table

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
        if path.name.endswith(".partial.json") or path.name.startswith("_"):  # checkpoints, run records
            continue
        try:
            payload = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            print(f"skipping unreadable {path.name}: {exc}")
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


def write_report(runs, started, source):
    results = _load_results(source)
    machine = machine_info()
    lines = ["# sklearn_frontier benchmark report", "",
             f"Generated by `python -m benchmarks all` on {time.strftime('%Y-%m-%d %H:%M:%S')} from the results in "
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
                 **_headline_cells(r["payload"]),
                 "full run": _full_run_link(r) or "-"} for r in results]
    lines += ["## Headline per method", "",
              markdown_table(headline, ["method", "benchmark", "date", "fresh", "case", "metric", "ours", "baseline",
                                        "ours / baseline", "full run"])
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
    update_readme(results)
    return REPORT


README = ROOT / "README.md"
README_START, README_END = "<!-- benchmark-headlines:start -->", "<!-- benchmark-headlines:end -->"


def _headline_cells(payload):
    row = _headline_row(payload)
    if "ours" in row and "baseline" in row:
        case = "; ".join(f"{k}={_fmt(v)}" for k, v in row.items()
                         if k not in ("metric", "ours", "ours_value", "baseline", "baseline_value",
                                      "ratio_ours_over_baseline"))
        return {"case": case, "metric": row["metric"], "ours": f"{row['ours']}: {_fmt(row['ours_value'])}",
                "baseline": f"{row['baseline']}: {_fmt(row['baseline_value'])}",
                "ours / baseline": _fmt(row["ratio_ours_over_baseline"])}
    return {"case": _compact(row, limit=5)}


def update_readme(results):
    """Rewrite the README's headline table (between its two markers) from the results the report shows."""
    if not README.exists():
        return
    text = README.read_text()
    if README_START not in text or README_END not in text:
        return
    rows = [{"method": _method_of(r["name"]), "benchmark": f"[{r['name']}](benchmarks/results/"
             f"{_relative(r['dir'] / (r['name'] + '.md'))})", **_headline_cells(r["payload"])}
            for r in results if _method_of(r["name"]) != "?"]
    table = markdown_table(rows, ["method", "benchmark", "case", "metric", "ours", "baseline", "ours / baseline"])
    head, rest = text.split(README_START, 1)
    _, tail = rest.split(README_END, 1)
    README.write_text(f"{head}{README_START}\n{table}\n{README_END}{tail}")
    print(f"updated the headline table in {README.name}")


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
