"""Every measured number the README and the docs' benchmark pages quote traces to a row of the committed tables.

``python -m benchmarks report`` writes the claims (the README's headline table, its verdict spans
``<!-- claim:ID -->...<!-- /claim:ID -->``, and each family's claim on ``docs/benchmarks/FAMILY.rst``) together with
``benchmarks/results/CLAIMS.json``, which keeps each claim as pieces: prose (no digits), strings taken from the
tables, links, and numbers with their sources. This test reads the tables itself and checks every number against
the cell (or the ratio of two cells, or the count of cases) it names; that the README and the pages show the
recorded claims; that the generated files are what the report writes from the tables on disk now; and that no
number is typed into the README outside the generated spans.
"""

import json
import math
import re
import statistics
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CLAIMS = ROOT / "benchmarks" / "results" / "CLAIMS.json"
START, END = "<!-- benchmark-headlines:start -->", "<!-- benchmark-headlines:end -->"
SPAN = re.compile(r"<!-- claim:(?P<id>[\w-]+) -->(?P<text>.*?)<!-- /claim:(?P=id) -->", re.DOTALL)
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
LINK = re.compile(r"\]\((?P<target>[^)#\s]+)(?:#[^)]*)?\)")
# Phrases with digits the README may carry outside the generated spans: versions, formats and names, none of
# them a measurement. Anything else with a digit outside the spans fails the last test.
NOT_MEASUREMENTS = ("Python ≥ 3.11", "2SLS", "4-bit", "2-core", "BSD-3-Clause")

if not README.exists() or not CLAIMS.exists():
    pytest.skip("README.md or benchmarks/results/CLAIMS.json missing", allow_module_level=True)


def _records():
    return {(r["shown_in"], r["id"]): r for r in json.loads(CLAIMS.read_text())}


def _spans(text):
    spans = {m["id"]: m["text"] for m in SPAN.finditer(text)}
    if START in text and END in text:
        spans["headlines"] = text.split(START, 1)[1].split(END, 1)[0].strip("\n")
    return spans


_TABLES = {}


def _table(file):
    if file not in _TABLES:
        _TABLES[file] = json.loads((ROOT / file).read_text())
    return _TABLES[file]


def _cell(source):
    rows = _table(source["file"])["rows"]
    value = rows[source["row"]][source["column"]]
    if isinstance(value, bool):
        raise AssertionError(f"{source}: a boolean, not a number")
    if isinstance(value, (int, float)):
        return float(value)
    return float(str(value).split()[0])  # "0.107 ± 0.006" -> its mean


def _raw(source):
    return _table(source["file"])["rows"][source["row"]][source["column"]]


def _sd(source):
    value = _raw(source)
    if isinstance(value, list):
        return statistics.stdev(value)
    return float(str(value).split("±", 1)[1].split()[0]) if isinstance(value, str) else float(value)


def _agrees(token, value):
    """``token`` is ``value`` rounded at the token's last digit (three significant digits or whole numbers)."""
    written = float(token)
    if written == value:
        return True
    mantissa = token.split("e")[0]
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    scale = 10 ** int(token.split("e")[1]) if "e" in token else 1
    return abs(written - value) <= 0.5 * 10 ** -decimals * scale * (1 + 1e-9)


def _all_strings():
    """Every string cell, column name and result name of the committed tables."""
    out = set()
    for path in (ROOT / "benchmarks" / "results").rglob("*.json"):
        if path.name.endswith(".partial.json") or path.name.startswith("_") or path == CLAIMS:
            continue
        payload = json.loads(path.read_text())
        if not isinstance(payload, dict):
            continue
        out |= {path.stem, str(payload.get("name", ""))}
        machine = payload.get("machine") or {}  # the CPU a timing names comes from the file's stamp
        out |= {str(machine.get("cpu_model", "")), str((machine.get("simd") or {}).get("level", ""))}
        for row in payload.get("rows") or []:
            for key, value in row.items():
                out.add(str(key))
                if isinstance(value, str):
                    out.add(value.replace("|", "/"))
    return out


def test_every_readme_span_is_a_recorded_claim():
    spans, records = _spans(README.read_text()), _records()
    assert "headlines" in spans and len(spans) > 1, "the README has no generated claims"
    shown = {claim_id for where, claim_id in records if where == "README.md"}
    assert shown == set(spans), "README.md and CLAIMS.json list different claims (rerun the report)"
    for claim_id, text in spans.items():
        record = records["README.md", claim_id]
        assert record["text"] == text, f"claim {claim_id!r}: README.md differs from CLAIMS.json (rerun the report)"
        rendered = "".join(p["num"] + p["unit"] if "num" in p else f"[{p['label']}]({p['link']})" if "link" in p
                           else p.get("say", p.get("label")) for p in record["parts"])
        assert rendered == text


def test_every_family_claim_is_on_its_benchmarks_page():
    from benchmarks._claims import Claim

    pages = [r for (where, _), r in _records().items() if where.startswith("docs/benchmarks/")]
    assert len(pages) >= 8, "fewer family claims than method families"
    for record in pages:
        page = (ROOT / record["shown_in"]).read_text()
        rst = "".join(Claim.render_part(p, "rst") for p in record["parts"])
        assert rst in page, f"{record['shown_in']} does not show claim {record['id']!r} (rerun the report)"


def test_every_number_in_a_claim_traces_to_a_results_row():
    strings = _all_strings()
    n_numbers = 0
    for (where, claim_id), record in _records().items():
        for part in record["parts"]:
            if "say" in part:
                assert not re.search(r"\d", part["say"]), f"{claim_id}: a number typed as prose: {part['say']!r}"
            elif "num" in part:
                n_numbers += 1
                token, sources = part["num"], part["sources"]
                assert not re.search(r"\d", part["unit"])
                assert sources or (part["kind"] == "count" and token == "0"), f"{claim_id}: {token} has no source"
                if part["kind"] == "cell":
                    assert len(sources) == 1
                    value = _cell(sources[0])
                elif part["kind"] == "sd":  # the sd of per-seed values, or of a "mean ± sd" cell
                    assert len(sources) == 1
                    value = _sd(sources[0])
                elif part["kind"] == "length":  # the seed count: the length of a per-seed list
                    assert len(sources) == 1
                    value = float(len(_raw(sources[0])))
                elif part["kind"] == "ratio":
                    assert len(sources) == 2
                    value = _cell(sources[0]) / _cell(sources[1])
                else:
                    assert part["kind"] == "count", part
                    for source in sources:
                        assert math.isfinite(_cell(source))  # each counted case is a row with a number
                    assert len({json.dumps(s, sort_keys=True) for s in sources}) == len(sources)
                    value = float(len(sources))
                assert _agrees(token, value), f"{claim_id}: {token} does not match {sources} ({value!r})"
            else:
                label = part["label"]
                if "link" in part:
                    assert (ROOT / part["link"]).exists(), f"{claim_id}: broken link {part['link']}"
                assert label in strings, f"{claim_id}: {label!r} is not a string of the results tables"
    assert n_numbers > 100


def test_generated_files_are_what_the_report_writes_from_the_tables_now():
    """``python -m benchmarks report`` is idempotent: run on the committed results, it changes no file."""
    pytest.importorskip("matplotlib")
    from benchmarks import _layout
    from benchmarks._claims import build_claims
    from benchmarks._readme import render_readme
    from benchmarks._report import build_pages, build_report, claim_records
    from benchmarks._results import candidates

    results = candidates()
    readme, shown = render_readme(README.read_text(), results)
    assert readme == README.read_text(), "README.md is stale: run `python -m benchmarks report`"
    assert build_report(results) == _layout.REPORT.read_text(), "REPORT.md is stale: run the report"
    pages = build_pages(results)
    on_disk = {*_layout.DOCS_BENCHMARKS.glob("*.rst"), *_layout.DOCS_BENCHMARKS.glob("verdicts/*.inc")}
    assert set(pages) == on_disk, "docs/benchmarks/ holds other pages"
    for path, text in pages.items():
        assert path.read_text() == text, f"{path.name} is stale: run `python -m benchmarks report`"
    assert json.loads(CLAIMS.read_text()) == claim_records(shown, results)
    figures = {f"{family}.png" for family, fam in build_claims(results).items() if fam.pairs}
    assert figures == {p.name for p in (_layout.DOCS_BENCHMARKS / "figures").glob("*.png")}


def test_no_number_is_typed_into_the_readme_outside_the_generated_spans():
    text = README.read_text()
    head, rest = text.split(START, 1)
    text = head + rest.split(END, 1)[1]
    text = SPAN.sub("", text)
    text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)  # code blocks (run by tests/test_readme_code.py)
    text = re.sub(r"`[^`]*`", "", text)  # inline code: names, commands, pins
    text = re.sub(r"\]\([^)]*\)", "]", text)  # link targets
    for phrase in NOT_MEASUREMENTS:
        text = text.replace(phrase, "")
    stray = [text[max(0, m.start() - 30):m.end() + 10] for m in NUMBER.finditer(text)]
    assert not stray, f"numbers typed into README.md outside the generated spans: {stray}"


def test_every_link_in_the_readme_leads_to_a_file_of_the_repository():
    targets = {m["target"] for m in LINK.finditer(README.read_text()) if "://" not in m["target"]}
    assert any(t.startswith("docs/guide/") for t in targets) and any(t.startswith("docs/benchmarks/") for t in targets)
    missing = sorted(t for t in targets if not (ROOT / t).exists())
    assert not missing, f"README.md links to files that do not exist: {missing}"


# ------------------------------------------------------------------ figures typed into the docs and docstrings
# A benchmark figure in prose is a ratio ("0.64×", "3.5x"), an "N times faster", a percentage of speed or error,
# a timing ("took 4 s") or two decimals set against each other ("0.95 vs 0.97"). Such figures come from the
# results through the claims mechanism (the generated pages and verdict blocks) or are left out.
_RATIO = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?[×x](?=\s?(\S*))")
_SHAPE_AFTER = re.compile(r"^(\d|[A-Za-z_][A-Za-z_0-9]?\b|[A-Za-z]\W|n_|\()")  # 8×8, 64 × k, n × n: shapes
_FIGURE = re.compile(
    r"\d+(?:\.\d+)?\s?(?:times|fold)\s+(?:faster|slower|the|as|more|less)"
    r"|\d+(?:\.\d+)?\s?%\s*(?:faster|slower|lower|higher|better|worse|more|less|RMSE|error)"
    r"|(?:took|takes|ran in|runs in|fits in)\s+(?:about\s+)?\d+(?:\.\d+)?\s?(?:ms|s|seconds|minutes|min)\b"
    r"|\d\.\d+\s*(?:vs\.?|versus|against)\s*\d\.\d+"
    r"|(?:faster|slower)\s+than\b[^.]*", re.IGNORECASE)


_DTYPES = re.compile(r"\b(?:b?float|fp|u?int|bf|torch\.\w+)\d+\w*|\bW\d+A\d+\b", re.IGNORECASE)  # number formats


def _figures(text):
    found = [m.group(0) for m in _RATIO.finditer(text) if not _SHAPE_AFTER.match(m.group(1) or "")]
    for m in _FIGURE.finditer(text):
        if not re.match(r"(?i)(faster|slower)\s+than", m.group(0)) or re.search(r"\d", _DTYPES.sub("", m.group(0))):
            found.append(m.group(0))
    return found


def _rst_prose(text):
    """A reST page without its code, literal blocks, directives and inline literals (generated includes are
    directives, so generated figures are not prose)."""
    out, skip = [], False
    for line in text.splitlines():
        if skip and (not line.strip() or line[:1] in " \t"):
            continue
        skip = False
        if line.rstrip().endswith("::") or line.lstrip().startswith(".. "):
            skip = True
            if line.lstrip().startswith(".. "):
                continue
        out.append(line)
    return re.sub(r"``[^`]*``", "", "\n".join(out))


def _docstrings_and_comments(path):
    import ast

    source = path.read_text()
    texts = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                texts.append("\n".join(x for x in doc.splitlines() if not x.strip().startswith((">>>", "..."))))
    texts += [line.split("#", 1)[1] for line in source.splitlines() if "#" in line]
    return [re.sub(r"``[^`]*``", "", t) for t in texts]


def test_no_benchmark_figure_is_typed_into_the_docs_or_the_docstrings():
    typed = []
    for page in sorted([*(ROOT / "docs" / "guide").glob("*.rst"), *(ROOT / "docs").glob("*.rst")]):
        typed += [f"{page.relative_to(ROOT)}: {f!r}" for f in _figures(_rst_prose(page.read_text()))]
    for path in sorted([*(ROOT / "sklearn_frontier").rglob("*.py"), *(ROOT / "kernels").rglob("*.py")]):
        for text in _docstrings_and_comments(path):
            typed += [f"{path.relative_to(ROOT)}: {f!r}" for f in _figures(text)]
    assert typed == [], "benchmark figures typed into prose (generate them from the results or leave them out): " \
        + "; ".join(typed)


def test_the_figure_detector_tells_measurements_from_shapes():
    assert _figures("the kernel ran 0.64× the float time; 15-30x slower; 1.9 times faster; 4-8% RMSE")
    assert _figures("coverage 0.95 vs 0.97-0.98") and _figures("it ran faster than float32 at 16 rows")
    assert _figures("an 8×8 image, a 64 × k basis, n x n buffers, the 95 % interval, 10% labels") == []
    assert _figures("whether it is faster than float32 or bfloat16 depends on the CPU") == []
