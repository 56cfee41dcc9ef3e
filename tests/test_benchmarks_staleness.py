"""Results say which code measured them: every committed results file carries the stamp (commit and machine), a
result whose family's source changed after its stamped commit is stale, the report says so in words, and the
README's headline rows are measured on the current code."""

import json
import subprocess

import pytest

from benchmarks import _harness, _headlines, _layout, _stamp
from benchmarks._results import Result, candidates


def _git(repo, *args):
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(repo), "PATH": "/usr/bin:/bin"})


@pytest.fixture
def repo(tmp_path):
    for path in ("sklearn_frontier/iv/_core.py", "kernels/iv/_api.py", "sklearn_frontier/sdr/_core.py",
                 "benchmarks/iv.py"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("x = 1\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "first")
    return tmp_path


def _payload(repo, rows=None):
    return {"name": "iv", "command": "python -m benchmarks iv --quick", **_stamp.take_run_stamp(repo),
            "machine": _stamp.machine_stamp(), "rows": rows or [], "date": "2026-01-01 00:00:00"}


def _commit(repo, path, text="x = 2\n"):
    (repo / path).write_text(text)
    _git(repo, "commit", "-q", "-am", f"change {path}")


def test_a_change_to_the_family_source_after_the_stamp_makes_the_result_stale(repo):
    payload = _payload(repo)
    assert payload["dirty_paths"] == [] and _stamp.staleness(payload, "iv", repo) is None
    _commit(repo, "sklearn_frontier/sdr/_core.py")  # another family's code
    _commit(repo, "benchmarks/iv.py")  # the benchmark itself: not the code it measures
    assert _stamp.staleness(payload, "iv", repo) is None
    # comments and docstrings change no measurement
    _commit(repo, "sklearn_frontier/iv/_core.py", '"""What this module holds."""\n\nx = 1  # the value\n')
    assert _stamp.staleness(payload, "iv", repo) is None
    _commit(repo, "kernels/iv/_api.py")
    reason = _stamp.staleness(payload, "iv", repo)
    assert reason == ("sklearn_frontier/iv, kernels/iv changed after commit " + payload["commit"][:12]
                      + ": the code of kernels/iv/_api.py")
    assert _stamp.staleness(payload, "sdr", repo) is not None  # sdr changed after the stamp too
    (repo / "sklearn_frontier/iv/_added.py").write_text("y = 1\n")  # a new module is new code
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "add")
    assert "sklearn_frontier/iv/_added.py" in _stamp.staleness(payload, "iv", repo)


def test_uncommitted_family_source_at_the_start_or_no_stamp_is_stale(repo):
    (repo / "sklearn_frontier/iv/_core.py").write_text("x = 3\n")
    (repo / "sklearn_frontier/iv/_new.py").write_text("y = 1\n")
    payload = _payload(repo)
    assert payload["dirty_paths"] == ["sklearn_frontier/iv/_core.py", "sklearn_frontier/iv/_new.py"]
    assert "uncommitted changes to sklearn_frontier/iv/_core.py" in _stamp.staleness(payload, "iv", repo)
    assert _stamp.staleness(payload, "sdr", repo) is None  # only the family's own files count
    assert "no commit stamp" in _stamp.staleness({"rows": []}, "iv", repo)
    unknown = {**payload, "commit": "0" * 40, "dirty_paths": []}
    assert "not in this repository's history" in _stamp.staleness(unknown, "iv", repo)


def test_pick_prefers_a_current_table_and_the_report_marks_a_stale_one(repo, monkeypatch):
    monkeypatch.setattr(_layout, "ROOT", repo)
    monkeypatch.setattr(_layout, "RESULTS", repo / "results")
    rows = [{"cell": "G1", "method": "instrument_guided", "M1": 0.1}, {"cell": "G1", "method": "pca", "M1": 0.2}]
    head = _harness.headline_pair(rows, key="method", ours="instrument_guided", metric="M1")
    full = Result("iv", {**_payload(repo, rows), "command": "python -m benchmarks iv", "headline": head},
                  repo / "results")
    _commit(repo, "sklearn_frontier/iv/_core.py")
    quick = Result("iv", {**_payload(repo, rows), "headline": head, "date": "2026-01-02 00:00:00"},
                   repo / "results" / "quick")
    assert full.stale and not quick.stale
    assert _headlines.pick("iv", [full, quick]) is quick  # a current quick table before a stale full one
    _commit(repo, "sklearn_frontier/iv/_core.py", "x = 4\n")
    assert _headlines.pick("iv", [full, quick]) is quick  # both stale: the newest
    from benchmarks._claims import build_claims, headline_table

    row = next(line for line in headline_table([full, quick]).text.splitlines() if line.startswith("| iv |"))
    assert "| quick, stale |" in row
    assert "stale: iv (its family's code changed since)" in build_claims([full, quick])["iv"].verdict.text


def test_every_committed_results_file_carries_the_stamp():
    unstamped = [str(r.path()) for r in candidates()
                 if not r.commit or not (r.payload.get("machine") or {}).get("cpu_model")
                 or "simd" not in r.payload["machine"] or "dirty_paths" not in r.payload]
    assert unstamped == [], f"results written before stamping (rerun them on the current code): {unstamped}"


def test_no_readme_headline_row_is_stale():
    from benchmarks._results import METHOD_FAMILIES

    stale = {}
    for family in METHOD_FAMILIES:
        for name in _headlines.headline_benchmarks(family):
            result = _headlines.pick(name)
            if result is not None and result.stale:
                stale[name] = result.staleness()
    assert stale == {}, "README headline rows measured on older code (rerun, then `python -m benchmarks report`): " \
        + json.dumps(stale, indent=1)
