"""Where the benchmark layer reads and writes: results, the report, the docs' benchmark pages, the README.

Modules read these as ``_layout.NAME`` at call time, so a test can point the whole layer elsewhere by patching
this one module.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"  # full runs: results/NAME.json and NAME.md
QUICK = RESULTS / "quick"  # quick runs (--quick): results/quick/NAME.json and NAME.md
REPORT = RESULTS / "REPORT.md"
CLAIMS_FILE = RESULTS / "CLAIMS.json"
DOCS_BENCHMARKS = ROOT / "docs" / "benchmarks"  # the generated benchmark pages of the documentation site
README = ROOT / "README.md"
README_START, README_END = "<!-- benchmark-headlines:start -->", "<!-- benchmark-headlines:end -->"
