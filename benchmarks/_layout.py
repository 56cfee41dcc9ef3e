"""Where the benchmark layer reads and writes: results, the report, the README and its claims' sources.

Modules read these as ``_layout.NAME`` at call time, so a test can point the whole layer elsewhere by patching
this one module.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"  # fixed: the report's home, whatever the harness is pointed at
REPORT = RESULTS / "REPORT.md"
QUICK = RESULTS / "quick"
README = ROOT / "README.md"
README_START, README_END = "<!-- benchmark-headlines:start -->", "<!-- benchmark-headlines:end -->"
CLAIMS_FILE = RESULTS / "CLAIMS.json"
