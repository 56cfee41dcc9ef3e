"""The README's quick start runs as printed, in a fresh process, and prints what its comment says."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_quick_start_runs_as_printed():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    printed = code.strip().splitlines()[-1].split("#", 1)[1].strip()  # the expected output, as the comment shows it
    assert out.stdout.strip() == printed
