"""The benchmarks' one command line.

``python -m benchmarks``                 lists the benchmarks;
``python -m benchmarks NAME [options]``  runs ``benchmarks/NAME.py`` (``--quick``: reduced grids and seeds, results
                                         in ``benchmarks/results/quick/``; full runs write ``benchmarks/results/``);
``python -m benchmarks all [options]``   runs every benchmark (quick unless ``--full``), each in its own process,
                                         then the report;
``python -m benchmarks report``          runs nothing: rewrites ``benchmarks/results/REPORT.md``, the pages in
                                         ``docs/benchmarks/``, the README's generated spans and
                                         ``benchmarks/results/CLAIMS.json`` from the results on disk.
"""

import argparse
import importlib
import pkgutil
import sys
from pathlib import Path

COMMANDS = {"all": "run every benchmark (quick unless --full), then the report",
            "report": "rewrite REPORT.md, docs/benchmarks/, the README's generated spans and CLAIMS.json from the "
                      "results on disk (runs nothing)"}


def available():
    """The benchmark modules: every public module of this package."""
    return sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)]) if not m.name.startswith("_"))


def main_all(argv=None):
    from benchmarks._report import publish
    from benchmarks._runner import run_all

    parser = argparse.ArgumentParser(prog="python -m benchmarks all", description=COMMANDS["all"])
    parser.add_argument("--full", action="store_true", help="run without --quick (results in benchmarks/results/)")
    parser.add_argument("--only", default="", help="comma-separated benchmark names")
    parser.add_argument("--skip", default="", help="comma-separated benchmark names")
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds per benchmark")
    args = parser.parse_args(argv)
    names = available()
    wanted = set(filter(None, args.only.split(","))) or set(names)
    unknown = wanted - set(names)
    if unknown:
        raise SystemExit(f"unknown benchmarks {sorted(unknown)}; available: {names}")
    names = [n for n in names if n in wanted and n not in set(args.skip.split(","))]
    runs = run_all(names, quick=not args.full, timeout=args.timeout)
    publish()
    return 0 if all(r.status == "ok" for r in runs) else 1


def main_report(argv=None):
    from benchmarks._report import publish

    argparse.ArgumentParser(prog="python -m benchmarks report", description=COMMANDS["report"]).parse_args(argv)
    publish()
    return 0


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    names = available()
    if not argv or argv[0] in ("-h", "--help", "list"):
        print("usage: python -m benchmarks NAME [options] | all [options] | report\nbenchmarks: " + ", ".join(names)
              + "".join(f"\n{cmd}: {what}" for cmd, what in COMMANDS.items()))
        return 0
    name, rest = argv[0], argv[1:]
    if name == "all":
        return main_all(rest)
    if name == "report":
        return main_report(rest)
    if name not in names:
        print(f"unknown benchmark {name!r}; available: {', '.join(names)}", file=sys.stderr)
        return 2
    return importlib.import_module(f"benchmarks.{name}").main(rest) or 0


if __name__ == "__main__":
    sys.exit(main())
