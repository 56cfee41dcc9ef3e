"""The README's Python code runs as printed: every ```python block, in order, in one fresh process (later blocks
use what the quick start defined), and the quick start prints what its last comment says."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def _blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_the_quick_start_comes_first_and_fits_on_a_screen():
    text = README.read_text()
    assert text.index("## Quick start") < text.index("## Estimators")
    quick = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", quick, flags=re.S)
    lines = [line for line in code.splitlines() if line.strip()]
    assert len(lines) <= 12 and "fit(" in code and ".predict(" in code
    assert all(line.startswith(("from sklearn.", "from sklearn_frontier.", "import ")) for line in lines
               if "import " in line), "the quick start imports public paths only"
    assert not re.search(r"sklearn_frontier(\.\w+)*\._", code), "the quick start imports a private module"


def test_every_python_block_runs_as_printed(tmp_path):
    pytest.importorskip("dask.distributed")
    blocks = _blocks()
    assert len(blocks) >= 3
    code = "\n".join(blocks)
    # ``python -c``: a dask LocalCluster's worker processes do not re-run a script (there is none)
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    expected = blocks[0].strip().splitlines()[-1].split("#", 1)[1].strip()  # the quick start's printed line
    assert out.stdout.strip().splitlines()[0] == expected
