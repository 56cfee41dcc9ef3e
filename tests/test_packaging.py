"""The kernels/ folder installs as ``sklearn_frontier.kernels`` from an editable install and from a wheel."""

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_editable_install_maps_kernels_folder():
    import sklearn_frontier.kernels as k

    assert Path(k.__file__).resolve() == ROOT / "kernels" / "__init__.py"


@pytest.mark.slow
def test_wheel_ships_kernels_as_subpackage(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp_path), str(ROOT)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("sklearn_frontier-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "sklearn_frontier/kernels/_dispatch.py" in names
    shipped = {f"sklearn_frontier/kernels/{p.relative_to(ROOT / 'kernels').as_posix()}"
               for p in (ROOT / "kernels").rglob("*.py")}
    assert shipped <= set(names), f"kernel modules missing from the wheel: {sorted(shipped - set(names))}"
    assert not any(n.startswith("kernels/") for n in names), "a top-level 'kernels' package must not be installed"
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    code = ("import sys, sklearn_frontier.kernels as k, numpy as np; "
            "assert k.__file__.startswith(sys.argv[1]), k.__file__; "
            "print(k.local_scaling_weights(np.ones((1, 1)), np.zeros((1, 1), dtype=int), np.ones(1))[0, 0])")
    env = {**os.environ, "PYTHONPATH": str(site)}
    out = subprocess.run([sys.executable, "-c", code, str(site)], cwd=tmp_path, env=env, check=True,
                         capture_output=True, text=True)
    assert abs(float(out.stdout) - 0.36787944117144233) < 1e-12
