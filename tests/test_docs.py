"""Keep the documentation toolchain working: build ONE gallery page with the real ``docs/conf.py``.

``make docs`` (the whole site, every example executed) is too slow for ``make test``; this builds a
one-example gallery with the same extensions, theme and gallery settings, and checks that the example
ran and its matplotlib figure was scraped into the page. Skipped, visibly, when the ``docs`` extra
(sphinx, sphinx-gallery, numpydoc, pydata-sphinx-theme) is not installed.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS_EXTRA = ("sphinx", "sphinx_gallery", "numpydoc", "pydata_sphinx_theme")

EXAMPLE = '''"""
Registered estimators per method
================================

How many estimators each method family registers (a toolchain check of the gallery).
"""

import matplotlib.pyplot as plt

import sklearn_frontier

counts = {}
for entry in sklearn_frontier.all_estimators():
    counts[entry.method] = counts.get(entry.method, 0) + 1
fig, ax = plt.subplots(figsize=(4, 2.5))
ax.bar(list(counts) or ["none"], list(counts.values()) or [0])
ax.set_ylabel("estimators")
print(f"{sum(counts.values())} estimators")
'''

INDEX = """Gallery check
=============

.. toctree::

   auto_examples/index
"""

HEADER = """.. _gallery:

Examples
========
"""


def _missing_docs_extra():
    import importlib.util

    return [m for m in DOCS_EXTRA if importlib.util.find_spec(m) is None]


@pytest.mark.skipif(bool(_missing_docs_extra()), reason=f"docs extra not installed (missing: "
                    f"{', '.join(_missing_docs_extra())}); pip install -e '.[docs]'")
def test_one_gallery_page_builds(tmp_path):
    source, examples = tmp_path / "source", tmp_path / "examples"
    source.mkdir()
    examples.mkdir()
    (examples / "GALLERY_HEADER.rst").write_text(HEADER)
    (examples / "plot_registry.py").write_text(EXAMPLE)
    (source / "index.rst").write_text(INDEX)
    # the real configuration, executed from the temporary source folder
    (source / "conf.py").write_text(
        f"_conf = {str(ROOT / 'docs' / 'conf.py')!r}\n"
        "exec(compile(open(_conf).read(), _conf, 'exec'))\n")
    env = {**os.environ, "SKLEARN_FRONTIER_DOCS_GALLERY_ONLY": str(examples), "SKLEARN_FRONTIER_REPO": str(ROOT),
           "MPLBACKEND": "Agg"}
    build = tmp_path / "html"
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-q",
                           str(source), str(build)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, f"sphinx-build failed:\n{proc.stdout}\n{proc.stderr}"
    page = build / "auto_examples" / "plot_registry.html"
    assert page.exists()
    html = page.read_text()
    assert "Registered estimators per method" in html
    assert "sphx_glr_plot_registry_001.png" in html, "the example's figure was not scraped"
    assert (build / "_images" / "sphx_glr_plot_registry_001.png").exists()
    assert " estimators" in html  # the captured stdout of the executed example
