"""Every script in examples/ runs to completion and saves its figure where it is told (the folder in
SKLEARN_FRONTIER_EXAMPLE_DIR, else the working directory), never beside the script: a checkout stays clean and
a read-only install works."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("plot_*.py"))


def _run(script, cwd, folder):
    env = {k: v for k, v in os.environ.items() if k != "SKLEARN_FRONTIER_EXAMPLE_DIR"}
    env["MPLBACKEND"] = "Agg"
    if folder is not None:
        env["SKLEARN_FRONTIER_EXAMPLE_DIR"] = str(folder)
    return subprocess.run([sys.executable, str(script)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def _beside(script):
    return {p.name: p.stat().st_mtime_ns for p in script.parent.glob("*.png")}


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs_and_saves_its_figure_in_the_output_folder(script, tmp_path):
    out, cwd = tmp_path / "out", tmp_path / "cwd"
    out.mkdir()
    cwd.mkdir()
    before = _beside(script)
    proc = _run(script, cwd, out)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert [p.name for p in out.iterdir()] == [f"{script.stem}.png"]
    assert not any(cwd.iterdir())
    assert _beside(script) == before, "the example wrote beside itself"


def test_without_a_folder_the_figure_goes_to_the_working_directory(tmp_path):
    script = next(p for p in EXAMPLES if p.stem == "plot_topology_ceo")
    before = _beside(script)
    proc = _run(script, tmp_path, None)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert (tmp_path / "plot_topology_ceo.png").exists()
    assert _beside(script) == before
