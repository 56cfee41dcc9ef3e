"""``python -m benchmarks all`` report building: headline pairs, quick results kept apart, README table."""

import json

import pytest

pytest.importorskip("matplotlib")
from benchmarks import _harness  # noqa: E402
from benchmarks import all as report  # noqa: E402

ROWS = [{"case": "horseshoe", "estimator": "PRBAST", "rmse": "0.10 ± 0.01"},
        {"case": "horseshoe", "estimator": "BAST", "rmse": "0.20 ± 0.02"},
        {"case": "timing", "estimator": "PRBAST", "sweep_s": 0.5}]


def test_headline_pair_takes_the_ratio_and_parses_mean_sd_cells():
    head = _harness.headline_pair(ROWS, key="estimator", ours="PRBAST", baseline="BAST", metric="rmse",
                                  case="horseshoe")
    assert head["ours_value"] == 0.10 and head["baseline_value"] == 0.20
    assert head["ratio_ours_over_baseline"] == pytest.approx(0.5)
    assert _harness.headline_pair(ROWS, key="estimator", ours="PRBAST", baseline="GP", metric="rmse") is None


def test_report_from_quick_results_links_full_tables_and_rewrites_readme(tmp_path, monkeypatch):
    results, quick = tmp_path / "results", tmp_path / "results" / "quick"
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{report.README_START}\nstale\n{report.README_END}\nrest\n")
    for name, module in (("_harness", _harness), ("all", report)):
        monkeypatch.setattr(module, "RESULTS", quick if name == "_harness" else results)
    monkeypatch.setattr(report, "QUICK", quick)
    monkeypatch.setattr(report, "REPORT", results / "REPORT.md")
    monkeypatch.setattr(report, "README", readme)
    head = _harness.headline_pair(ROWS, key="estimator", ours="PRBAST", baseline="BAST", metric="rmse",
                                  case="horseshoe")
    _harness.write_results("prbast", ROWS, command="python -m benchmarks prbast --quick", headline=head)
    (quick / "prbast_seed.partial.json").write_text(json.dumps({"per_seed": []}))  # a checkpoint: not a result
    results.mkdir(exist_ok=True)
    (results / "prbast.md").write_text("# prbast (full)\n")
    (results / "prbast.json").write_text(json.dumps({"date": "2026-01-01 00:00:00", "rows": ROWS}))

    report.write_report([], 0.0, quick)

    text = (results / "REPORT.md").read_text()
    assert "prbast_seed" not in text
    assert "[prbast.md](prbast.md) (2026-01-01 00:00:00)" in text
    assert "| PRBAST: 0.1 | BAST: 0.2 | 0.5 |" in text
    assert (quick / "prbast_report.png").exists()
    new_readme = readme.read_text()
    assert "stale" not in new_readme and new_readme.startswith("intro\n") and new_readme.endswith("rest\n")
    assert "[prbast](benchmarks/results/quick/prbast.md)" in new_readme
    assert "| PRBAST: 0.1 | BAST: 0.2 | 0.5 |" in new_readme
