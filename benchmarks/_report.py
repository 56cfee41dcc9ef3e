"""The generated pages: ``benchmarks/results/REPORT.md`` and ``docs/benchmarks/`` (the same content, Markdown and
reST), the README's generated spans and ``benchmarks/results/CLAIMS.json``.

Every benchmark is shown from one result: its full-mode table where one is committed, else its newest quick table
(:func:`benchmarks._headlines.pick`), and says which. Nothing here depends on the time or the machine it runs on:
``python -m benchmarks report`` run twice writes the same files.
"""

import json

from benchmarks import _layout
from benchmarks._claims import build_claims, is_timing
from benchmarks._document import Code, Document, Link
from benchmarks._figures import write_verdict_figures
from benchmarks._headlines import (
    PRIMARY,
    VERDICT_WORDS,
    fmt,
    headline_of,
    is_number,
    pick,
    picked,
)
from benchmarks._readme import update_readme
from benchmarks._results import FAMILIES, candidates
from benchmarks._tables import case_tables

INTRO = ("Each comparison pairs ours with the strongest baseline of the same case, found from the rows by the "
         "metric; our own variants, ablations and oracles are no baselines. A case is better or worse only when "
         "the difference exceeds two standard errors over seeds (paired over the seeds both sides share, else "
         "unpaired); otherwise, and wherever a side has a single seed, it is a tie. Each benchmark is shown from "
         "its full-mode table where one is committed and measured on the current code, else from its newest "
         "quick table, and says which; a table measured on code that has changed since is marked stale. ")


def _md_link_from_report(path):
    """A repository path as a link target from ``benchmarks/results/REPORT.md``."""
    prefix = "benchmarks/results/"
    return path[len(prefix):] if path.startswith(prefix) else "../../" + path


def _headline_rows(results):
    rows = []
    for r in results:
        head = headline_of(r)
        if head is None or head.get("legacy"):
            continue
        spec = head["spec"]
        case = "; ".join(f"{fmt(head.get(k))}" if isinstance(head.get(k), str) else f"{k}={fmt(head.get(k))}"
                         for k in spec.get("where") or {}) or "whole table"
        cost = spec.get("cost")
        direction = "lower" if spec["lower_is_better"] else "higher"
        cpu = (r.payload.get("machine") or {}).get("cpu_model")
        where = f", on CPU {cpu}" if cpu and is_timing(spec["metric"]) else ""
        rows.append([r.family, r.name, r.mode + (", stale" if r.stale else "") + where, case,
                     f"{spec['metric']} ({direction} is better)",
                     f"{head['ours']}: {_value_text(head, 'ours')}",
                     f"{head['baseline']}: {_value_text(head, 'baseline')}", fmt(head["ratio_ours_over_baseline"]),
                     VERDICT_WORDS[head["verdict"]],
                     f"{cost}: {fmt(head.get('ours_cost'))} vs {fmt(head.get('baseline_cost'))}"
                     if cost and "ours_cost" in head else "–",
                     f"{_n(head, 'ours')} vs {_n(head, 'baseline')}"])
    return rows


def _value_text(head, side):
    sd = head.get(f"{side}_sd")
    return fmt(head[f"{side}_value"]) + (f" ± {sd:.2g}" if is_number(sd) else "")


def _n(head, side):
    return fmt(head.get(f"{side}_seeds")) if is_number(head.get(f"{side}_seeds")) else "–"


HEADLINE_COLUMNS = ["family", "benchmark", "run", "case", "metric", "ours", "strongest baseline", "ours / baseline",
                    "verdict", "cost: ours vs baseline", "seeds"]


RUN_COLUMNS = ["benchmark", "run", "date", "command", "commit", "CPU", "SIMD", "torch threads", "state"]


def _runs(results):
    """One row per shown result: the command, the commit and machine it was measured on, fresh or stale."""
    cells = []
    for r in results:
        machine = r.payload.get("machine") or {}
        threads = (machine.get("threads") or {}).get("torch")
        cells.append([r.name, r.mode, r.date, r.command, r.commit[:12] or "not stamped",
                      str(machine.get("cpu_model", "not recorded")),
                      str((machine.get("simd") or {}).get("level", "–")), fmt(threads) if threads else "–",
                      "stale: " + r.staleness() if r.stale else "current"])
    return cells


def _benchmark_section(doc, result, results):
    path = result.path(".md").as_posix()
    doc.heading(3, f"{result.name} ({result.mode} run, {result.date}{', stale' if result.stale else ''})")
    other = [r for r in results if r.base == result.base and r is not result]
    if result.stale:
        doc.para(f"Stale: {result.staleness()}. These numbers describe older code; rerun ", Code(result.command),
                 " to refresh them.")
    machine = result.payload.get("machine") or {}
    if result.commit and machine.get("cpu_model"):
        doc.para(f"Measured at commit {result.commit[:12]} on CPU {machine['cpu_model']} (SIMD level "
                 f"{(machine.get('simd') or {}).get('level', 'unknown')}).")
    segs = ["Reproduce: ", Code(result.command), ". Every column and the benchmark's notes: ",
            Link(path, _md_link_from_report(path), f"``{path}``"), "."]
    for r in other:
        other_path = r.path(".md").as_posix()
        segs += [f" Also a {r.mode} table: ", Link(other_path, _md_link_from_report(other_path), f"``{other_path}``"),
                 f" ({r.date})."]
    doc.para(*segs)
    for table in case_tables(result):
        doc.heading(4, table.title)
        if table.fixed:
            doc.para("In every row: " + "; ".join(f"{k} = {v}" for k, v in table.fixed.items()) + ".")
        doc.table(table.columns, table.cells)
        if table.left_out:
            doc.para(f"Not shown here ({len(table.left_out)} more columns): {', '.join(table.left_out)}.")


def _family_section(doc, family, claims, shown, results, level=2):
    doc.heading(level, f"{FAMILIES[family]} ({family})", label=f"benchmarks_{family}")
    fam = claims.get(family)
    if fam is not None:
        doc.para("Verdict (quality against the strongest baseline): ", fam.verdict, ".")
        doc.para(fam.claim, ".")
    guide = _layout.ROOT / "docs" / "guide" / f"{family}.rst"
    if guide.exists():
        doc.para("How to use it: ", Link(f"docs/guide/{family}.rst", f"../../docs/guide/{family}.rst",
                                         f":doc:`/guide/{family}`"), ".")
    figure = _layout.DOCS_BENCHMARKS / "figures" / f"{family}.png"
    if figure.exists():
        doc.figure(f"../../docs/benchmarks/figures/{family}.png", f"figures/{family}.png",
                   "ours against the strongest baseline, case by case")
    for result in shown:
        _benchmark_section(doc, result, results)


def _families(shown):
    return [f for f in FAMILIES if any(r.family == f for r in shown)]


def build_report(results=None):
    """REPORT.md's text."""
    results = candidates() if results is None else results
    shown, claims = picked(results), build_claims(results)
    doc = Document().heading(1, "sklearn_frontier benchmark report")
    doc.para("Generated by ", Code("python -m benchmarks report"), " from the results committed in ",
             Code("benchmarks/results/"), " (full runs) and ", Code("benchmarks/results/quick/"),
             " (quick runs). ", INTRO, "The same pages, for the documentation site, are in ",
             Code("docs/benchmarks/"), ".")
    doc.heading(2, "Verdict per family")
    doc.table(["family", "verdict (quality against the strongest baseline)", "benchmarks"],
              [[f"{FAMILIES[f]} ({f})", claims[f].verdict.render("md"),
                ", ".join(r.name for r in shown if r.family == f)] for f in _families(shown) if f in claims])
    doc.heading(2, "Headline per benchmark")
    doc.table(HEADLINE_COLUMNS, _headline_rows(shown))
    doc.heading(2, "Runs")
    doc.para("The run behind each section: its mode, date, command, the commit and machine it measured, and "
             "whether the family's code has changed since.")
    doc.table(RUN_COLUMNS, _runs(shown))
    for family in _families(shown):
        _family_section(doc, family, claims, [r for r in shown if r.family == family], results)
    return doc.render("md")


def _verdict_include(family, claims, shown):
    """The small verdict block a family's user-guide page includes: the verdict, then one row per benchmark
    headline (ours beside the strongest baseline of the same case), without the family and seed columns."""
    doc = Document()
    fam = claims.get(family)
    if fam is not None:
        doc.para("Verdict (quality against the strongest baseline): ", fam.verdict, ".")
    rows = [row[1:-1] for row in _headline_rows([r for r in shown if r.family == family])]
    if rows:
        doc.table(HEADLINE_COLUMNS[1:-1], rows)
    doc.para("Generated by ", Code("python -m benchmarks report"), " from the committed results; every case, "
             "cost and seed count: ", Link(family, family, f":ref:`benchmarks_{family}`"), ".")
    return doc.render("rst")


def build_pages(results=None):
    """``{path: text}`` of the docs' benchmark pages: ``docs/benchmarks/index.rst``, one page per family and
    the verdict block each user-guide page includes (``docs/benchmarks/verdicts/<family>.inc``)."""
    results = candidates() if results is None else results
    shown, claims = picked(results), build_claims(results)
    families = _families(shown)
    pages = {}
    index = Document().heading(1, "Benchmarks", label="benchmarks")
    index.para("Generated by ", Code("python -m benchmarks report"), " from the committed results (",
               Code("benchmarks/results/"), "). ", INTRO, "Each family's page gives its verdict, the comparisons "
               "in words, and one table per kind of case.")
    index.heading(2, "Verdict per family")
    index.table(["family", "verdict (quality against the strongest baseline)"],
                [[f"{FAMILIES[f]} ({f})", claims[f].verdict.render("rst")] for f in families if f in claims])
    index.rst_only(".. toctree::\n   :maxdepth: 1\n\n" + "\n".join(f"   {f}" for f in families))
    index.heading(2, "Headline per benchmark")
    index.table(HEADLINE_COLUMNS, _headline_rows(shown))
    index.heading(2, "Runs")
    index.table(RUN_COLUMNS, _runs(shown))
    pages[_layout.DOCS_BENCHMARKS / "index.rst"] = index.render("rst")
    for family in families:
        doc = Document()
        _family_section(doc, family, claims, [r for r in shown if r.family == family], results, level=1)
        pages[_layout.DOCS_BENCHMARKS / f"{family}.rst"] = doc.render("rst")
        pages[_layout.DOCS_BENCHMARKS / "verdicts" / f"{family}.inc"] = _verdict_include(family, claims, shown)
    return pages


def claim_records(readme_shown, results=None):
    """CLAIMS.json's records: every generated claim, where it is shown, and its pieces with their sources."""
    results = candidates() if results is None else results
    records = [c.record(claim_id, "README.md") for claim_id, c in readme_shown.items()]
    for family, fam in build_claims(results).items():
        if pick(PRIMARY[family], results) is not None:
            records.append(fam.claim.record(family, f"docs/benchmarks/{family}.rst"))
    return records


def _write(path, text):
    """Write ``text`` unless the file already holds it (no needless change of modification time)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def publish(results=None):
    """Write everything this module generates from the results on disk; returns the paths written."""
    results = candidates() if results is None else results
    write_verdict_figures(results)
    written = [_layout.REPORT]
    _write(_layout.REPORT, build_report(results))
    for path, text in build_pages(results).items():
        _write(path, text)
        written.append(path)
    for stale in [*_layout.DOCS_BENCHMARKS.glob("*.rst"), *_layout.DOCS_BENCHMARKS.glob("verdicts/*.inc")]:
        if stale not in written:
            stale.unlink()
    shown = update_readme(results)
    _write(_layout.CLAIMS_FILE, json.dumps(claim_records(shown, results), indent=1, ensure_ascii=False) + "\n")
    written += [_layout.README, _layout.CLAIMS_FILE]
    print("wrote " + ", ".join(str(p.relative_to(_layout.ROOT)) if p.is_relative_to(_layout.ROOT) else str(p)
                               for p in written))
    return written
