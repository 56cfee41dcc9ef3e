"""Run benchmark modules, each in its own process, and keep a record of the runs beside their results."""

import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass

from benchmarks import _layout
from benchmarks._timing import Stopwatch


@dataclass(frozen=True)
class RunRecord:
    """One module run by ``python -m benchmarks all``: its command, outcome and wall seconds."""

    benchmark: str
    command: str
    status: str
    wall_s: float
    date: str = ""


def run_module(name, quick, timeout):
    """Run ``python -m benchmarks NAME [--quick]`` in a subprocess, results routed by mode; its :class:`RunRecord`.

    A separate process per module means one failure or hang does not stop the rest.
    """
    cmd = [sys.executable, "-m", "benchmarks", name, *(["--quick"] if quick else [])]
    out_dir = _layout.QUICK if quick else _layout.RESULTS
    out_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "SKLEARN_FRONTIER_BENCH_RESULTS": str(_layout.RESULTS)}
    with Stopwatch() as sw:
        try:
            proc = subprocess.run(cmd, cwd=_layout.ROOT, capture_output=True, text=True, timeout=timeout, env=env)
            rc, output = proc.returncode, proc.stdout + proc.stderr
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout or ""
            rc, output = "timeout", out.decode(errors="replace") if isinstance(out, bytes) else out
    log = out_dir / f"{name}.log.tmp"
    log.write_text(output)
    status = "ok" if rc == 0 else f"failed (rc={rc}; see {log.relative_to(_layout.RESULTS.parent)})"
    print(f"{name:20s} {status:40s} {sw.wall_s:8.1f} s", flush=True)
    return RunRecord(name, " ".join(["python -m benchmarks", *cmd[3:]]), status, sw.wall_s,
                     time.strftime("%Y-%m-%d %H:%M:%S"))


def record_runs(folder, runs):
    """Merge ``runs`` into the records kept in ``folder/_runs.json`` (one per benchmark, the latest)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "_runs.json"
    try:
        previous = [RunRecord(**r) for r in json.loads(path.read_text())]
    except (OSError, ValueError, TypeError):
        previous = []
    merged = {r.benchmark: r for r in [*previous, *runs]}
    path.write_text(json.dumps([asdict(merged[k]) for k in sorted(merged)], indent=2) + "\n")
    return [merged[k] for k in sorted(merged)]


def run_all(names, quick=True, timeout=1200.0):
    """Run the modules ``names``; their records, also merged into the ``_runs.json`` of the mode's folder."""
    runs = [run_module(name, quick=quick, timeout=timeout) for name in names]
    record_runs(_layout.QUICK if quick else _layout.RESULTS, runs)
    return runs
