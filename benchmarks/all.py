"""Every benchmark in quick mode, then one report: ``python -m benchmarks all``.

Runs ``python -m benchmarks NAME --quick`` for every other benchmark module (each in its own process, so
one failure or hang does not stop the rest), then collects ``benchmarks/results/*.json`` and ``*.md`` into
``benchmarks/results/REPORT.md``: machine and versions at the top, a headline row per benchmark, then
each benchmark's table (ours vs its baselines and anchors, with ratios) with a matplotlib figure beside it.

Options: ``--only a,b`` / ``--skip a,b`` choose modules, ``--full`` drops ``--quick``, ``--report-only``
rebuilds the report from the results already on disk, ``--timeout S`` bounds each module (default 1200 s).
"""

import argparse
import importlib.metadata
import json
import subprocess
import sys
import time
from pathlib import Path

from benchmarks._harness import RESULTS, machine_info, markdown_table

ROOT = Path(__file__).resolve().parents[1]
REPORT = RESULTS / "REPORT.md"
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
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
        rc, output = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc, output = "timeout", (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) \
            else (exc.stdout or "")
    wall = time.perf_counter() - start
    log = RESULTS / f"{name}.log.tmp"
    log.write_text(output)
    status = "ok" if rc == 0 else f"failed (rc={rc}; see results/{log.name})"
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


def _load_results():
    results = []
    for path in sorted(RESULTS.glob("*.json")):
        try:
            payload = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            print(f"skipping unreadable {path.name}: {exc}")
            continue
        md = path.with_suffix(".md")
        results.append({"name": path.stem, "payload": payload, "mtime": path.stat().st_mtime,
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
    path = RESULTS / f"{result['name']}_report.png"
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path.name


def _demote(markdown):
    return "\n".join("#" + line if line.startswith("#") else line for line in markdown.splitlines())


def write_report(runs, started):
    results = _load_results()
    machine = machine_info()
    lines = ["# sklearn_frontier benchmark report", "",
             f"Generated by `python -m benchmarks all` on {time.strftime('%Y-%m-%d %H:%M:%S')}.", "",
             "## Machine and versions", "",
             f"- Python {machine['python']} on {machine['platform']}, {machine['cpu_count']} CPU cores",
             "- BLAS: " + ", ".join(f"{b.get('internal_api')} ({b.get('architecture')}, {b.get('num_threads')} "
                                    "threads)" for b in machine["blas"]),
             "- " + ", ".join(f"{k} {v}" for k, v in _versions().items()), ""]
    if runs:
        lines += ["## Runs", "", markdown_table(runs, ["benchmark", "command", "status", "wall_s"]), ""]
    headline = [{"method": _method_of(r["name"]), "benchmark": r["name"],
                 "date": r["payload"].get("date", "?"),
                 "fresh": "yes" if r["mtime"] >= started else "no (earlier run)",
                 "headline row": _compact(_headline_row(r["payload"]))} for r in results]
    lines += ["## Headline per method", "",
              markdown_table(headline, ["method", "benchmark", "date", "fresh", "headline row"])
              if headline else "No results yet.", ""]
    for result in results:
        figure = make_figure(result)
        lines += [_demote(result["markdown"]).strip() or f"## {result['name']}", ""]
        for png in sorted(RESULTS.glob(f"{result['name']}*.png")):
            if png.name != figure:
                lines += [f"![{png.stem}]({png.name})", ""]
        if figure:
            lines += [f"![{result['name']}]({figure})", ""]
    REPORT.write_text("\n".join(lines) + "\n")
    print(f"wrote {REPORT.relative_to(ROOT)} ({len(results)} benchmark results)")
    return REPORT


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
    write_report(runs, started)
    return 0 if all(r["status"] == "ok" for r in runs) else 1
