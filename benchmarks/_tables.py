"""Readable tables of a result: one per case family, at most :data:`MAX_COLUMNS` columns.

A benchmark's rows mix several kinds of case (a quality grid, an ablation, a timing sweep), each with its own
columns; printed as one table they make a wide, mostly empty union. Rows are grouped into case families (their
``section`` where they have one, else runs of consecutive rows whose columns nest), columns constant within a
family move above its table, and when more than :data:`MAX_COLUMNS` remain the labels, the headline metric, cost
and seeds are kept first and the others are named beside the path of the full table.
"""

import math
from dataclasses import dataclass, field

from benchmarks._harness import _as_number
from benchmarks._headlines import headline_args

MAX_COLUMNS = 12
MAX_LABEL_COLUMNS = 4
MAX_CELL = 70  # characters of a text cell; the full table has the rest


@dataclass
class Table:
    """A table ready to print: a title, fixed values common to every row, columns, formatted cells."""

    title: str
    columns: list
    cells: list
    fixed: dict = field(default_factory=dict)
    left_out: list = field(default_factory=list)


def cell_text(value):
    """A cell as printed: floats to four significant digits, booleans as yes/no, long text shortened."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (dict, list)):
        value = ", ".join(map(str, value.values() if isinstance(value, dict) else value))
    text = " ".join(str(value).split())
    return text if len(text) <= MAX_CELL else text[:MAX_CELL - 1] + "…"


def case_families(rows):
    """``[(title or None, rows)]``: by ``section`` where the rows have one, else runs of consecutive rows whose
    column sets nest (one contains the other: the same kind of case, some rows with extra columns)."""
    if any("section" in r for r in rows):
        groups = {}
        for row in rows:
            groups.setdefault(str(row.get("section", "other")), []).append(row)
        return list(groups.items())
    runs, keys = [], None
    for row in rows:
        these = set(row) - {"note"}
        if runs and (these <= keys or keys <= these):
            runs[-1][1].append(row)
            keys |= these
        else:
            runs.append((None, [row]))
            keys = set(these)
    return runs


def _columns(rows):
    return [c for c in dict.fromkeys(k for r in rows for k in r) if any(r.get(c) is not None for r in rows)]


def _title(columns, rows):
    """A title from the first label column: its one value, or the common start of its values."""
    label = next((c for c in columns if any(isinstance(r.get(c), str) for r in rows)), None)
    if label is None:
        return "rows"
    values = list(dict.fromkeys(str(r.get(label, "")) for r in rows))
    if len(values) == 1:
        return values[0]
    prefix = values[0]
    for v in values[1:]:
        while not v.startswith(prefix):
            prefix = prefix[:-1]
    prefix = prefix.rstrip(" ,;:(=-")
    return prefix if len(prefix) >= 4 else f"{values[0]} … {values[-1]}"


def _is_label(value):
    """Text that names something (a method, a case), not a number written as text (``"0.1 ± 0.02"``, ``"3/10"``)."""
    return isinstance(value, str) and _as_number(value) is None and any(ch.isalpha() for ch in value)


def family_table(result, title, rows):
    """One case family's table (see the module doc)."""
    # per-seed lists stay in the full table (the .md and .json); the table shows their mean and sd
    columns = [c for c in _columns(rows) if c != "section" and c != "seed_ids" and not c.endswith("_per_seed")]
    title = cell_text(title or _title(columns, rows))
    fixed = {c: rows[0][c] for c in columns
             if len(rows) > 1 and all(c in r for r in rows) and all(r[c] == rows[0][c] for r in rows)}
    columns = [c for c in columns if c not in fixed]
    labels = [c for c in columns if any(_is_label(r.get(c)) for r in rows)]
    args = headline_args(result) or {}
    preferred = [args.get("key"), args.get("metric"), f"{args.get('metric')}_sd", args.get("cost"), args.get("seeds"),
                 *(args.get("context") or [])]
    key_first = [c for c in labels if c == args.get("key")] + [c for c in labels if c != args.get("key")]
    keep = key_first[:MAX_LABEL_COLUMNS]
    keep += [c for c in preferred if c in columns and c not in keep]
    keep += [c for c in columns if c not in keep]
    shown, left_out = keep[:MAX_COLUMNS], keep[MAX_COLUMNS:]
    shown = [c for c in columns if c in shown]  # the benchmark's own order
    return Table(title=title, columns=shown, cells=[[cell_text(r.get(c)) for c in shown] for r in rows],
                 fixed={k: cell_text(v) for k, v in fixed.items()}, left_out=left_out)


def case_tables(result):
    """The result's tables, one per case family."""
    return [family_table(result, title, rows) for title, rows in case_families(result.rows)]
