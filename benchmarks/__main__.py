"""``python -m benchmarks NAME [args]``: run one benchmark module; ``python -m benchmarks`` lists them;
``python -m benchmarks report`` rebuilds the report and the README claims from the results on disk."""

import importlib
import pkgutil
import sys
from pathlib import Path


def available():
    return sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)]) if not m.name.startswith("_"))


COMMANDS = {"report": "rebuild REPORT.md and the README headlines/claims from the results on disk (runs nothing)"}


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    names = available()
    if not argv or argv[0] in ("-h", "--help", "list"):
        print("usage: python -m benchmarks NAME [options]\navailable: " + ", ".join(names)
              + "".join(f"\n{cmd}: {what}" for cmd, what in COMMANDS.items()))
        return 0
    name = argv[0]
    if name == "report":
        from benchmarks.all import main_report

        return main_report(argv[1:])
    if name not in names:
        print(f"unknown benchmark {name!r}; available: {', '.join(names)}", file=sys.stderr)
        return 2
    module = importlib.import_module(f"benchmarks.{name}")
    return module.main(argv[1:]) or 0


if __name__ == "__main__":
    sys.exit(main())
