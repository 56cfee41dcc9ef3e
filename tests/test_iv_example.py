"""Smoke test: the IV example runs, saves its figure and shows the R² model-selection trap."""

import runpy
import warnings
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "plot_iv_many_treatments.py"


def test_example_runs_and_shows_the_trap(tmp_path, monkeypatch):
    monkeypatch.setenv("SKLEARN_FRONTIER_EXAMPLE_DIR", str(tmp_path))  # examples write where they are told
    namespace = runpy.run_path(str(EXAMPLE), run_name="example")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = namespace["main"]()
    assert (tmp_path / "plot_iv_many_treatments.png").exists()
    assert out["r2_pick"] == "OLS" and out["iv_pick"] == "IV r=3"
    assert out["ig"][-1] < 0.2 * out["pca"][-1]  # large overlap angle: PCA is biased
    assert 0.5 < out["ig"][0] / out["pca"][0] < 2  # control design: both accurate


MROZ = Path(__file__).resolve().parents[1] / "examples" / "plot_iv_mroz.py"


def test_mroz_example_runs_and_reports_the_textbook_numbers(tmp_path, monkeypatch):
    import pytest

    pytest.importorskip("linearmodels")
    monkeypatch.setenv("SKLEARN_FRONTIER_EXAMPLE_DIR", str(tmp_path))
    out = runpy.run_path(str(MROZ), run_name="example")["main"]()
    assert (tmp_path / "plot_iv_mroz.png").exists()
    assert abs(out["coef"]["2SLS nonrobust"] - 0.061397) < 1e-6
    assert abs(out["stderr"]["2SLS nonrobust"] - 0.031437) < 1e-6
    assert abs(out["partial_f"] - 55.4003) < 1e-4
    assert out["sargan"][1] > 0.5  # the over-identifying restriction is not rejected
    assert out["coef"]["OLS"] > out["coef"]["2SLS nonrobust"]  # OLS absorbs ability bias upward
