"""The main job: the demo table and its command line."""

import pytest

from sklearn_frontier.demo import format_table, main, run_demo


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
