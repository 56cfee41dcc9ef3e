"""The benchmark layer: headline pairs against the strongest baseline, quick results kept apart from full ones,
readable tables, and ``python -m benchmarks report`` rewriting REPORT.md, the docs' benchmark pages, the README's
generated spans and the claims' sources from the results on disk (idempotently, running nothing)."""

import json
import re
import shutil
import statistics
import subprocess
import sys
import time

import pytest

pytest.importorskip("matplotlib")
from benchmarks import _claims, _harness, _headlines, _layout, _report, _runner, _tables  # noqa: E402
from benchmarks.__main__ import main  # noqa: E402
from benchmarks._results import Result  # noqa: E402
from benchmarks._timing import Stopwatch, timed  # noqa: E402

ROWS = [{"case": "horseshoe", "estimator": "PRBAST", "rmse": "0.10 ± 0.01", "fit_s": 2.0, "n_seeds": 5},
        {"case": "horseshoe", "estimator": "PRBAST uniform predict", "rmse": "0.09 ± 0.01", "fit_s": 2.0},
        {"case": "horseshoe", "estimator": "BAST", "rmse": "0.20 ± 0.02", "fit_s": 1.0, "n_seeds": 5},
        {"case": "horseshoe", "estimator": "GP", "rmse": "0.15 ± 0.02", "fit_s": 0.5, "n_seeds": 5},
        {"case": "horseshoe", "estimator": "oracle", "rmse": 0.01},
        {"case": "horseshoe", "estimator": "kNN", "rmse": "failed"},
        {"case": "slit", "estimator": "PRBAST", "rmse": 0.30, "rmse_sd": 0.01, "fit_s": 2.0, "n_seeds": 3},
        {"case": "slit", "estimator": "kNN", "rmse": 0.25, "rmse_sd": 0.01, "fit_s": 0.1, "n_seeds": 3},
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
    # one value a side and no sd: a tie, unless the metric is declared not to vary with the seed
    higher = _harness.headline_pair(tie, key="m", ours="ours", metric="e", lower_is_better=False)
    assert higher["baseline"] == "worse" and higher["verdict"] == "tie"
    higher = _harness.headline_pair(tie, key="m", ours="ours", metric="e", lower_is_better=False, deterministic=True)
    assert higher["baseline"] == "worse" and higher["verdict"] == "baseline better"
    assert _harness.headline_pair(ROWS, **DECL, case="timing") is None  # no metric there
    assert _harness.headline_pair(ROWS, **{**DECL, "ours": "GP+"}, case="horseshoe") is None


def test_case_selection_by_glob_and_largest_value_and_pairs_per_case():
    rows = [{"n": n, "mode": m, "t": t, "t_per_seed": [t - 0.1, t, t + 0.1]}
            for n, m, t in ((10, "a", 1.0), (10, "b", 2.0), (100, "a", 9.0), (100, "b", 8.0))]
    head = _harness.headline_pair(rows, key="mode", ours="a", metric="t", n="@max")
    assert head["n"] == 100 and head["verdict"] == "baseline better"
    assert _harness.headline_pair(ROWS, **DECL, case="hors*")["baseline"] == "GP"
    spec = _harness.headline_pair(ROWS, **DECL, case="horseshoe")["spec"]
    pairs = _harness.case_pairs(ROWS, spec, over=["case"])
    assert [(p["case"], p["baseline"], p["verdict"]) for p in pairs] == [
        ("horseshoe", "GP", "ours better"), ("slit", "kNN", "baseline better")]


def test_verdict_word_counts_the_cases_that_are_not_ties():
    def pairs(*verdicts):
        return [{"verdict": v} for v in verdicts]

    assert _headlines.verdict_word(pairs("ours better", "tie")) == "better"
    assert _headlines.verdict_word(pairs("baseline better", "baseline better")) == "worse"
    assert _headlines.verdict_word(pairs("ours better", "baseline better", "ours better")) == "mixed"
    assert _headlines.verdict_word(pairs("ours better", "tie", "tie")) == "tie"
    assert _headlines.verdict_word(pairs("baseline better", "tie", "tie")) == "tie"
    assert _headlines.verdict_counts(pairs("ours better", "tie", "tie", "baseline better")) == (1, 2, 1)


def _seeded(label, values, seeds=(0, 1, 2, 3, 4)):
    return {"m": label, **_harness.per_seed_columns("e", values, list(seeds)[:len(values)])}


def test_a_difference_inside_two_standard_errors_is_a_tie_and_outside_a_decision():
    # means 0.50 vs 0.52, sd 0.05 over 5 seeds each: SE of the difference 0.032, so a tie
    noisy = [_seeded("ours", [0.45, 0.50, 0.55, 0.44, 0.56]), _seeded("base", [0.47, 0.52, 0.57, 0.46, 0.58])]
    unpaired = [{k: v for k, v in r.items() if k != "seed_ids"} for r in noisy]
    head = _harness.headline_pair(unpaired, key="m", ours="ours", metric="e")
    assert head["verdict"] == "tie" and head["verdict_basis"].startswith("unpaired over 5 and 5 seeds")
    assert (head["ours_seeds"], head["baseline_seeds"]) == (5, 5)
    assert head["ours_sd"] == pytest.approx(statistics.stdev([0.45, 0.50, 0.55, 0.44, 0.56]))
    # the same spreads, means far apart: better
    far = [_seeded("ours", [0.25, 0.30, 0.35, 0.24, 0.36]), unpaired[1]]
    assert _harness.headline_pair(far, key="m", ours="ours", metric="e")["verdict"] == "ours better"
    # higher is better turns it round
    assert _harness.headline_pair(far, key="m", ours="ours", metric="e",
                                  lower_is_better=False)["verdict"] == "baseline better"


def test_pairing_over_shared_seeds_decides_where_the_unpaired_test_cannot():
    # the seeds move both methods together; ours is lower by 0.02 on every seed
    rows = [_seeded("ours", [0.45, 0.50, 0.55, 0.44, 0.56]), _seeded("base", [0.47, 0.52, 0.57, 0.46, 0.58])]
    paired = _harness.headline_pair(rows, key="m", ours="ours", metric="e")
    assert paired["verdict"] == "ours better" and paired["verdict_basis"].startswith("paired over 5 seeds")
    # pairing uses only the seeds both sides ran: two shared seeds with opposite signs are a tie
    rows = [_seeded("ours", [0.40, 0.60], [0, 1]), _seeded("base", [0.50, 0.50, 0.50], [0, 1, 2])]
    assert _harness.headline_pair(rows, key="m", ours="ours", metric="e")["verdict"] == "tie"


def test_legacy_mean_plus_minus_sd_cells_and_single_seeds():
    rows = [{"m": "ours", "e": "0.675 ± 0.007", "n": 5}, {"m": "GP", "e": "0.677 ± 0.025", "n": 5}]
    head = _harness.headline_pair(rows, key="m", ours="ours", metric="e", seeds="n")
    assert head["verdict"] == "tie" and (head["ours_sd"], head["baseline_seeds"]) == (0.007, 5)
    one_seed = [{"m": "ours", "e": 0.751, "n": 1}, {"m": "base", "e": 0.760, "n": 1}]
    assert _harness.headline_pair(one_seed, key="m", ours="ours", metric="e", seeds="n")["verdict"] == "tie"
    # a metric that does not vary with the seed (a fixed weight table) is declared so, and then decides
    fixed = _harness.headline_pair(one_seed, key="m", ours="ours", metric="e", deterministic=True)
    assert fixed["verdict"] == "ours better" and fixed["spec"]["deterministic"] is True
    with pytest.raises(ValueError, match="seeds"):
        _harness.per_seed_columns("e", [1.0, 2.0], [0])


def test_claims_refuse_typed_numbers():
    with pytest.raises(ValueError, match="typed"):
        _claims.Claim().say("SMAVE wins by 0.5")
    claim = _claims.Claim().say("ours ").num(0.123456, {"file": "x.json", "row": 0, "column": "c"}).say(" s")
    assert claim.text == "ours 0.123 s" and claim.record("x", "README.md")["parts"][1]["num"] == "0.123"
    assert _claims.Claim().label("CEO*").say(" on fit_s").render("rst") == r"CEO\* on fit\_s"


def test_tables_have_one_case_family_each_and_at_most_twelve_columns():
    rows = [{"section": "quality", "case": f"c{i}", "method": m, "metric": "err", **{f"v{j}": float(i + j)
                                                                                     for j in range(20)}}
            for i in range(3) for m in ("ours", "base")]
    rows += [{"section": "timing", "n": n, "method": m, "wall_s": 0.1 * n} for n in (10, 100) for m in ("a", "b")]
    result = Result("demo", {"rows": rows, "command": "python -m benchmarks demo"}, _layout.RESULTS)
    quality, timing = _tables.case_tables(result)
    assert (quality.title, timing.title) == ("quality", "timing")
    assert len(quality.columns) == _tables.MAX_COLUMNS and quality.columns[:2] == ["case", "method"]
    assert quality.fixed == {"metric": "err"} and len(quality.left_out) == 2 + 20 - _tables.MAX_COLUMNS
    assert timing.columns == ["n", "method", "wall_s"] and timing.cells[-1] == ["100", "b", "10"]
    # without a section column, runs of rows whose columns nest are one family
    plain = Result("x", {"rows": [{"case": "a", "m": "o", "e": 1.0}, {"case": "a", "m": "b", "e": 2.0, "x": 1},
                                  {"case": "t", "m": "o", "wall": 3.0}]}, _layout.RESULTS)
    assert [len(rows) for _, rows in _tables.case_families(plain.rows)] == [2, 1]


def _point_layout_at(tmp_path, monkeypatch):
    results, quick = tmp_path / "results", tmp_path / "results" / "quick"
    monkeypatch.setattr(_harness, "RESULTS", results)
    monkeypatch.setattr(_layout, "ROOT", tmp_path)
    monkeypatch.setattr(_layout, "RESULTS", results)
    monkeypatch.setattr(_layout, "QUICK", quick)
    monkeypatch.setattr(_layout, "REPORT", results / "REPORT.md")
    monkeypatch.setattr(_layout, "README", tmp_path / "README.md")
    monkeypatch.setattr(_layout, "CLAIMS_FILE", results / "CLAIMS.json")
    monkeypatch.setattr(_layout, "DOCS_BENCHMARKS", tmp_path / "docs" / "benchmarks")
    return results, quick, tmp_path / "README.md"


def _write_demo_results():
    head = _harness.headline_pair(ROWS, **DECL, case="horseshoe")
    _harness.write_results("prbast", ROWS, command="python -m benchmarks prbast --quick", headline=head, quick=True)
    # a quick run written into the full-mode folder is still a quick run
    _harness.write_results("iv", [{"cell": "G1", "method": "instrument_guided", "M1_median": 0.1},
                                  {"cell": "G1", "method": "pca_2sls", "M1_median": 0.2}],
                           command="python -m benchmarks iv --quick", quick=False)


def test_report_writes_every_page_from_the_results_and_labels_quick_runs(tmp_path, monkeypatch):
    results, quick, readme = _point_layout_at(tmp_path, monkeypatch)
    readme.write_text(f"intro\n{_layout.README_START}\nstale\n{_layout.README_END}\n"
                      "| x | <!-- claim:verdict-spanning_trees -->stale<!-- /claim:verdict-spanning_trees --> |\n"
                      "<!-- claim:quick-rows -->stale<!-- /claim:quick-rows -->\nrest\n")
    _write_demo_results()
    (quick / "prbast_seed.partial.json").write_text(json.dumps({"per_seed": []}))  # a checkpoint: not a result

    _report.publish()

    report = (results / "REPORT.md").read_text()
    assert "prbast_seed" not in report and "### prbast (quick run," in report
    assert ("| spanning_trees | prbast | quick | horseshoe | rmse (lower is better) | PRBAST: 0.1 ± 0.01 | "
            "GP: 0.15 ± 0.02 | 0.6667 | better | fit_s: 2 vs 0.5 | 5 vs 5 |") in report
    assert "### iv (quick run," in report  # from results/, labelled by its command
    widths = {line.count("|") - 1 for line in report.splitlines() if line.startswith("|")}
    assert max(widths) <= _tables.MAX_COLUMNS
    text = readme.read_text()
    assert "stale" not in text and text.startswith("intro\n") and text.endswith("rest\n")
    assert ("| spanning_trees | [prbast](results/quick/prbast.md) | quick | horseshoe | rmse (lower is better) | "
            "PRBAST 0.1 ± 0.01 (n=5) | GP 0.15 ± 0.02 (n=5; strongest of two) | 0.667× | better |") in text
    assert "<!-- claim:verdict-spanning_trees -->mixed (1 better, 0 tie, 1 worse)<!--" in text
    assert ("<!-- claim:quick-rows -->Rows from quick runs (reduced grids and seeds; no full run on the current "
            "code is committed): prbast, iv.<!--") in text
    page = (tmp_path / "docs" / "benchmarks" / "spanning_trees.rst").read_text()
    assert page.startswith(".. _benchmarks_spanning_trees:") and "rmse over 2 domains" in page
    assert (tmp_path / "docs" / "benchmarks" / "figures" / "spanning_trees.png").exists()
    records = {(r["shown_in"], r["id"]): r for r in json.loads((results / "CLAIMS.json").read_text())}
    assert {("README.md", "headlines"), ("README.md", "verdict-spanning_trees"),
            ("docs/benchmarks/spanning_trees.rst", "spanning_trees")} <= set(records)
    cells = [p for p in records["README.md", "headlines"]["parts"] if p.get("kind") == "cell"]
    assert cells and all(p["sources"][0]["file"] == "results/quick/prbast.json" for p in cells)


def test_full_runs_are_quoted_before_quick_ones(tmp_path, monkeypatch):
    results, quick, readme = _point_layout_at(tmp_path, monkeypatch)
    readme.write_text(f"{_layout.README_START}\n{_layout.README_END}\n")
    _write_demo_results()
    full = [{**r, "rmse": 0.5} if r["estimator"] == "GP" else r for r in ROWS]
    _harness.write_results("prbast", full, command="python -m benchmarks prbast", quick=False,
                           headline=_harness.headline_pair(full, **DECL, case="horseshoe"))
    _report.publish()
    assert "| spanning_trees | [prbast](results/prbast.md) | full | horseshoe |" in readme.read_text()
    report = (results / "REPORT.md").read_text()
    assert "### prbast (full run," in report and "Also a quick table: [results/quick/prbast.md]" in report


def test_report_command_runs_nothing_and_changes_nothing_the_second_time(tmp_path, monkeypatch):
    results, quick, readme = _point_layout_at(tmp_path, monkeypatch)
    readme.write_text(f"{_layout.README_START}\n{_layout.README_END}\n")
    _write_demo_results()
    ran = []
    monkeypatch.setattr(_runner, "run_module", lambda *a, **k: ran.append(a))
    assert main(["report"]) == 0
    generated = sorted(p for p in tmp_path.rglob("*") if p.is_file() and p.suffix in (".md", ".rst", ".json", ".png"))
    first = {p: p.read_bytes() for p in generated}
    assert main(["report"]) == 0
    assert not ran
    assert {p: p.read_bytes() for p in generated} == first


def test_all_runs_each_module_and_keeps_its_record(tmp_path, monkeypatch):
    results, quick, readme = _point_layout_at(tmp_path, monkeypatch)
    ran = []

    def fake(name, quick, timeout):
        ran.append((name, quick))
        return _runner.RunRecord(name, f"python -m benchmarks {name} --quick", "ok", 0.5, "2026-01-01 00:00:00")

    monkeypatch.setattr(_runner, "run_module", fake)
    assert main(["all", "--only", "iv,smave"]) == 0
    assert ran == [("iv", True), ("smave", True)]
    records = json.loads((quick / "_runs.json").read_text())
    assert [r["benchmark"] for r in records] == ["iv", "smave"] and records[0]["status"] == "ok"
    with pytest.raises(SystemExit, match="unknown benchmarks"):
        main(["all", "--only", "nope"])


def test_quick_runs_write_beside_the_full_tables_never_over_them(tmp_path, monkeypatch):
    """One naming scheme: ``results/NAME.*`` for full runs, ``results/quick/NAME.*`` for quick ones."""
    monkeypatch.setattr(_harness, "RESULTS", tmp_path)
    _harness.write_results("demo_bench", [{"method": "ours", "x": 1.0}], command="full")
    _harness.write_results("demo_bench", [{"method": "ours", "x": 2.0}], command="quick", quick=True)
    assert json.loads((tmp_path / "demo_bench.json").read_text())["rows"][0]["x"] == 1.0
    assert json.loads((tmp_path / "quick" / "demo_bench.json").read_text())["rows"][0]["x"] == 2.0
    assert not list(tmp_path.rglob("*_quick*"))


def test_committed_results_follow_the_naming_scheme():
    """Full-mode tables in ``results/``, quick ones in ``results/quick/``, no checkpoints in git."""
    tracked = subprocess.run(["git", "ls-files", "benchmarks/results"], cwd=_layout.ROOT, capture_output=True,
                             text=True).stdout.split()
    if not tracked:
        pytest.skip("not a git checkout")
    assert not [p for p in tracked if p.endswith(".partial.json") or "_quick." in p]
    for path in tracked:
        if path.endswith(".json") and not path.rsplit("/", 1)[-1].startswith(("_", "CLAIMS")):
            command = json.loads((_layout.ROOT / path).read_text()).get("command", "")
            assert ("--quick" in command) == ("/quick/" in path), f"{path} was written by `{command}`"


def test_generated_rst_pages_build_without_warnings(tmp_path):
    pytest.importorskip("sphinx")
    source = tmp_path / "src"
    shutil.copytree(_layout.DOCS_BENCHMARKS, source / "benchmarks")
    (source / "conf.py").write_text("project = 'benchmark pages'\n")
    (source / "index.rst").write_text("Pages\n=====\n\n.. toctree::\n\n   benchmarks/index\n")
    for page in (source / "benchmarks").glob("*.rst"):  # the guide pages they link to, as stubs
        for family in re.findall(r":doc:`/guide/(\w+)`", page.read_text()):
            (source / "guide").mkdir(exist_ok=True)
            (source / "guide" / f"{family}.rst").write_text(f":orphan:\n\n{family}\n{'=' * len(family)}\n")
    out = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-W", "--keep-going", "-b", "html", str(source),
                          str(tmp_path / "html")], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr


def test_timing_helper_gives_wall_and_cpu_seconds_and_the_result():
    t = timed(lambda: sum(range(20000)), repeats=3, stat="min", trace_memory=True)
    assert t.result == sum(range(20000)) and t.repeats == 3 and t.wall_s > 0 and t.cpu_s >= 0
    assert t.peak_mb is not None and timed(lambda: None).peak_mb is None
    with Stopwatch() as sw:
        inside = sw.wall_s
        sum(range(20000))
    final = sw.wall_s
    time.sleep(0.01)
    assert 0 <= inside <= final == sw.wall_s  # running inside the block, frozen after it
    with pytest.raises(ValueError, match="stat"):
        timed(lambda: None, stat="mean")
    with pytest.raises(RuntimeError, match="never started"):
        Stopwatch().wall_s


def test_results_carry_the_commit_and_machine_stamp(tmp_path, monkeypatch):
    monkeypatch.setattr(_harness, "RESULTS", tmp_path)
    text = _harness.write_results("demo_bench", [{"method": "ours", "x": 1.0}], command="full")
    payload = json.loads((tmp_path / "demo_bench.json").read_text())
    assert {"commit", "dirty_paths"} <= set(payload)
    machine = payload["machine"]
    assert machine["cpu_model"] and machine["simd"]["level"] and {"torch", "numba", "blas"} <= set(machine["threads"])
    assert {"numpy", "scipy", "scikit-learn", "torch", "numba", "sklearn_frontier"} <= set(machine["versions"])
    if payload["commit"]:
        assert re.fullmatch(r"[0-9a-f]{40}", payload["commit"]) and f"commit {payload['commit'][:12]}" in text
    assert f"on CPU {machine['cpu_model']}" in text


def test_simd_level_is_the_strongest_the_cpu_flags_make():
    from benchmarks import _stamp

    info = "model name\t: Some CPU\nflags\t\t: fpu sse4_2 avx avx2 fma avx512f avx512_vnni\n"
    assert _stamp.cpu_model(info) == "Some CPU"
    assert _stamp.simd(info) == {"level": "avx512_vnni",
                                 "flags": ["avx512_vnni", "avx512f", "avx2", "fma", "avx", "sse4_2"]}
    assert _stamp.simd("flags : fpu sse2\n")["level"] == "baseline" and _stamp.simd("")["level"] == "unknown"


def test_tables_show_the_mean_and_sd_and_leave_the_per_seed_lists_to_the_full_table():
    rows = [{"case": "c", "method": m, **_harness.per_seed_columns("err", v, [0, 1, 2])}
            for m, v in (("ours", [0.1, 0.2, 0.3]), ("base", [0.2, 0.3, 0.4]))]
    result = Result("demo", {"rows": rows, "headline": _harness.headline_pair(rows, key="method", ours="ours",
                                                                              metric="err")}, _layout.RESULTS)
    (table,) = _tables.case_tables(result)
    assert table.columns == ["method", "err", "err_sd"] and "err_per_seed" not in table.left_out
