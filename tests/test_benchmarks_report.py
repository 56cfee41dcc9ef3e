"""``python -m benchmarks all`` / ``report``: headline pairs against the strongest baseline, quick results kept
apart, the README table and claims rewritten from the results on disk."""

import json

import pytest

pytest.importorskip("matplotlib")
from benchmarks import (  # noqa: E402
    _claims,
    _harness,  # noqa: E402
    _headlines,
    _layout,
    _report,
)
from benchmarks import all as runner  # noqa: E402

ROWS = [{"case": "horseshoe", "estimator": "PRBAST", "rmse": "0.10 ± 0.01", "fit_s": 2.0, "n_seeds": 5},
        {"case": "horseshoe", "estimator": "PRBAST uniform predict", "rmse": "0.09 ± 0.01", "fit_s": 2.0},
        {"case": "horseshoe", "estimator": "BAST", "rmse": "0.20 ± 0.02", "fit_s": 1.0, "n_seeds": 5},
        {"case": "horseshoe", "estimator": "GP", "rmse": "0.15 ± 0.02", "fit_s": 0.5, "n_seeds": 5},
        {"case": "horseshoe", "estimator": "oracle", "rmse": 0.01},
        {"case": "horseshoe", "estimator": "kNN", "rmse": "failed"},
        {"case": "slit", "estimator": "PRBAST", "rmse": 0.30, "fit_s": 2.0, "n_seeds": 3},
        {"case": "slit", "estimator": "kNN", "rmse": 0.25, "fit_s": 0.1, "n_seeds": 3},
        {"case": "timing", "estimator": "PRBAST", "sweep_s": 0.5}]
DECL = {"key": "estimator", "ours": ["PRBAST", "PRBAST *"], "not_baselines": ["oracle"], "metric": "rmse",
        "cost": "fit_s", "seeds": "n_seeds"}


def test_headline_pair_picks_the_strongest_baseline_from_the_rows():
    head = _harness.headline_pair(ROWS, **DECL, baseline="BAST", case="horseshoe")
    # GP is the strongest baseline; our own variant (better still) and the oracle are no baselines; "BAST" only
    # records the reference the benchmark used to name
    assert head["baseline"] == "GP" and head["baseline_value"] == 0.15 and head["ours_value"] == 0.10
    assert head["ratio_ours_over_baseline"] == pytest.approx(0.10 / 0.15)
    assert head["verdict"] == "ours better" and head["reference_value"] == 0.20
    assert head["baselines_compared"] == ["BAST", "GP"]
    assert set(head["not_baselines_here"]) == {"PRBAST", "PRBAST uniform predict", "oracle"}
    assert (head["ours_cost"], head["baseline_cost"], head["ours_seeds"]) == (2.0, 0.5, 5)
    assert (head["ours_index"], head["baseline_index"]) == (0, 3)
    # the spec it stores recomputes the same pair
    assert _harness.headline_pair(ROWS, **_headlines._spec_args(head["spec"])) == head


def test_headline_pair_says_when_a_baseline_wins_or_ties_and_none_when_a_side_is_missing():
    assert _harness.headline_pair(ROWS, **DECL, case="slit")["verdict"] == "baseline better"
    tie = [{"m": "ours", "e": 0.3}, {"m": "same by construction", "e": 0.3 * (1 + 1e-14)}, {"m": "worse", "e": 1.0}]
    assert _harness.headline_pair(tie, key="m", ours="ours", metric="e")["verdict"] == "tie"
    higher = _harness.headline_pair(tie, key="m", ours="ours", metric="e", lower_is_better=False)
    assert higher["baseline"] == "worse" and higher["verdict"] == "baseline better"
    assert _harness.headline_pair(ROWS, **DECL, case="timing") is None  # no metric there
    assert _harness.headline_pair(ROWS, **{**DECL, "ours": "GP+"}, case="horseshoe") is None


def test_case_selection_by_glob_and_largest_value_and_pairs_per_case():
    rows = [{"n": 10, "mode": "a", "t": 1.0}, {"n": 10, "mode": "b", "t": 2.0},
            {"n": 100, "mode": "a", "t": 9.0}, {"n": 100, "mode": "b", "t": 8.0}]
    head = _harness.headline_pair(rows, key="mode", ours="a", metric="t", n="@max")
    assert head["n"] == 100 and head["verdict"] == "baseline better"
    assert _harness.headline_pair(ROWS, **DECL, case="hors*")["baseline"] == "GP"
    spec = _harness.headline_pair(ROWS, **DECL, case="horseshoe")["spec"]
    pairs = _harness.case_pairs(ROWS, spec, over=["case"])
    assert [(p["case"], p["baseline"], p["verdict"]) for p in pairs] == [
        ("horseshoe", "GP", "ours better"), ("slit", "kNN", "baseline better")]


def test_claims_refuse_typed_numbers():
    with pytest.raises(ValueError, match="typed"):
        _claims.Claim().say("SMAVE wins by 0.5")
    claim = _claims.Claim().say("ours ").num(0.123456, {"file": "x.json", "row": 0, "column": "c"}).say(" s")
    assert claim.text == "ours 0.123 s" and claim.record("x")["parts"][1]["num"] == "0.123"


def _point_report_at(tmp_path, monkeypatch):
    results, quick = tmp_path / "results", tmp_path / "results" / "quick"
    readme = tmp_path / "README.md"
    monkeypatch.setattr(_harness, "RESULTS", quick)
    monkeypatch.setattr(_layout, "RESULTS", results)
    monkeypatch.setattr(_layout, "QUICK", quick)
    monkeypatch.setattr(_layout, "REPORT", results / "REPORT.md")
    monkeypatch.setattr(_layout, "README", readme)
    monkeypatch.setattr(_layout, "CLAIMS_FILE", results / "CLAIMS.json")
    return results, quick, readme


def test_report_from_quick_results_links_full_tables_and_rewrites_readme(tmp_path, monkeypatch):
    results, quick, readme = _point_report_at(tmp_path, monkeypatch)
    readme.write_text(f"intro\n{_layout.README_START}\nstale\n{_layout.README_END}\n"
                      "| `PRBASTRegressor` | implemented; <!-- claim:prbast -->stale claim<!-- /claim:prbast --> |"
                      "\nrest\n")
    head = _harness.headline_pair(ROWS, **DECL, case="horseshoe")
    _harness.write_results("prbast", ROWS, command="python -m benchmarks prbast --quick", headline=head)
    (quick / "prbast_seed.partial.json").write_text(json.dumps({"per_seed": []}))  # a checkpoint: not a result
    # a new benchmark written by older code: its stored pair names its baseline, and is flagged as unchecked
    _harness.write_results("transport", [{"method": "ours", "w2": 0.1}], headline={
        "metric": "w2", "ours": "ours", "ours_value": 0.1, "baseline": "sinkhorn", "baseline_value": 0.2,
        "ratio_ours_over_baseline": 0.5})
    results.mkdir(exist_ok=True)
    (results / "prbast.md").write_text("# prbast (full)\n")
    (results / "prbast.json").write_text(json.dumps({"date": "2026-01-01 00:00:00", "rows": ROWS[:1]}))

    _report.write_report([], 0.0, quick)

    text = (results / "REPORT.md").read_text()
    assert "prbast_seed" not in text
    assert "[prbast.md](prbast.md) (2026-01-01 00:00:00)" in text
    assert "| PRBAST: 0.1 | GP: 0.15 | 0.6667 | yes | fit_s: 2 vs 0.5 | 5 vs 5 |" in text
    assert "| ours: 0.1 | sinkhorn: 0.2 | 0.5 | baseline named in code (strongest not checked) |" in text
    assert (quick / "prbast_report.png").exists()
    new_readme = readme.read_text()
    assert "stale" not in new_readme and new_readme.startswith("intro\n") and new_readme.endswith("rest\n")
    # the full-mode prbast.json has no baseline row: the README quotes the quick table, and says so
    assert "| spanning_trees | [prbast](benchmarks/results/quick/prbast.md) (quick run) | horseshoe |" in new_readme
    assert "| PRBAST: 0.1 | GP: 0.15 (strongest of two) | 0.667× | yes | fit_s 2 vs 0.5 | 5 vs 5 |" in new_readme
    assert "transport" not in new_readme  # an unchecked pair is no README headline
    assert ("<!-- claim:prbast -->rmse over 2 domains (3–5 seeds per domain): PRBAST 0.1–0.3 vs the strongest "
            "baseline of each domain 0.15–0.25 (GP, kNN; 3–5 seeds); ours better in 1/2") in new_readme
    records = {r["id"]: r for r in json.loads((results / "CLAIMS.json").read_text())}
    assert set(records) == {"headlines", "prbast"}
    cells = [p for p in records["prbast"]["parts"] if p.get("kind") == "cell"]
    assert cells and all(p["sources"][0]["file"].endswith("quick/prbast.json") for p in cells)


def test_report_command_rebuilds_everything_from_the_json_on_disk(tmp_path, monkeypatch):
    results, quick, readme = _point_report_at(tmp_path, monkeypatch)
    readme.write_text(f"{_layout.README_START}\n{_layout.README_END}\n")
    spec = _harness.headline_pair(ROWS, **DECL, case="horseshoe")["spec"]
    quick.mkdir(parents=True)
    # a result written before headlines stored their spec: the declaration in DECLARED applies (by name)
    (quick / "prbast.json").write_text(json.dumps({"name": "prbast", "command": "python -m benchmarks prbast --quick",
                                                   "rows": ROWS}))
    # a new benchmark that stores its spec reaches the README table without any declaration in all.py
    (quick / "transport.json").write_text(json.dumps({"name": "transport", "rows": ROWS, "headline": {"spec": spec}}))
    ran = []
    monkeypatch.setattr(runner, "run_module", lambda *a, **k: ran.append(a))

    from benchmarks.__main__ import main

    assert main(["report"]) == 0
    assert not ran
    table = readme.read_text()
    assert "[prbast](benchmarks/results/quick/prbast.md) (quick run)" in table
    assert "[transport](benchmarks/results/quick/transport.md) (full run)" in table
    assert table.count("| PRBAST: 0.1 | GP: 0.15") == 1  # DECLARED's prbast excludes no oracle: its row differs
    assert "Generated by `python -m benchmarks report`" in (results / "REPORT.md").read_text()


def test_quick_runs_write_beside_the_full_tables_never_over_them(tmp_path, monkeypatch):
    """One naming scheme: ``results/NAME.*`` for full runs, ``results/quick/NAME.*`` for quick ones."""
    monkeypatch.setattr(_harness, "RESULTS", tmp_path)
    _harness.write_results("demo_bench", [{"method": "ours", "x": 1.0}], command="full")
    _harness.write_results("demo_bench", [{"method": "ours", "x": 2.0}], command="quick", quick=True)
    assert json.loads((tmp_path / "demo_bench.json").read_text())["rows"][0]["x"] == 1.0
    assert json.loads((tmp_path / "quick" / "demo_bench.json").read_text())["rows"][0]["x"] == 2.0
    assert not list(tmp_path.rglob("*_quick*"))
