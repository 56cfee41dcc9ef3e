"""The CEO example runs and writes its figure."""

import runpy
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "plot_topology_ceo.py"


def test_example_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(EXAMPLE), run_name="__main__")
    assert (tmp_path / "plot_topology_ceo.png").exists()  # the working directory, not beside the script
