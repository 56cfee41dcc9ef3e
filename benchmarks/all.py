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
import json
import os
import subprocess
import sys
import time

from benchmarks import _layout
from benchmarks._report import _merge_runs, write_report


def _modules():
    from benchmarks.__main__ import available

    return [name for name in available() if name != "all"]


def run_module(name, quick, timeout):
    """Run one benchmark module in a subprocess; returns its run record."""
    cmd = [sys.executable, "-m", "benchmarks", name, *(["--quick"] if quick else [])]
    out_dir = _layout.QUICK if quick else _layout.RESULTS
    out_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "SKLEARN_FRONTIER_BENCH_RESULTS": str(out_dir)}
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=_layout.ROOT, capture_output=True, text=True, timeout=timeout, env=env)
        rc, output = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc, output = "timeout", (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) \
            else (exc.stdout or "")
    wall = time.perf_counter() - start
    log = out_dir / f"{name}.log.tmp"
    log.write_text(output)
    status = "ok" if rc == 0 else f"failed (rc={rc}; see {log.relative_to(_layout.RESULTS.parent)})"
    print(f"{name:20s} {status:40s} {wall:8.1f} s", flush=True)
    return {"benchmark": name, "command": " ".join(["python -m benchmarks", *cmd[3:]]), "status": status,
            "wall_s": wall}



def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks all", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="the default; kept for symmetry")
    parser.add_argument("--full", action="store_true", help="run the modules without --quick")
    parser.add_argument("--only", default="", help="comma-separated module names")
    parser.add_argument("--skip", default="", help="comma-separated module names")
    parser.add_argument("--report-only", action="store_true", help="only rebuild REPORT.md from results/")
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds per module")
    args = parser.parse_args(argv)
    _layout.RESULTS.mkdir(exist_ok=True)
    source = _layout.RESULTS if args.full else _layout.QUICK
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
    source = _layout.RESULTS if args.full or not _layout.QUICK.exists() else _layout.QUICK
    try:
        runs = json.loads((source / "_runs.json").read_text())
    except (OSError, ValueError):
        runs = []
    write_report(runs, time.time(), source, generator="python -m benchmarks report")
    return 0
