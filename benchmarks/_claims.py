"""Claims: every measured number quoted in prose, generated from the results with its source recorded.

A :class:`Claim` is built piece by piece (prose without digits, labels taken from the tables, links, and numbers
each with its source cell); ``tests/test_readme_claims.py`` checks every piece against the tables. Each family has
one claim (:data:`CLAIMS`: its benchmarks' comparisons in words, shown on its ``docs/benchmarks`` page) and one
verdict (a word and the count of cases behind it, shown in the README's estimators table).
"""

import math
import re
from dataclasses import dataclass, field

from benchmarks._harness import _as_number, case_pairs, headline_pair
from benchmarks._headlines import (
    PRIMARY,
    VERDICT_WORDS,
    headline_args,
    headline_benchmarks,
    headline_of,
    is_number,
    pick,
    spec_with,
    verdict_word,
)
from benchmarks._results import METHOD_FAMILIES, candidates


def _num(value):
    """How a claim writes a number: integers as they are, else three significant digits (whole above 100)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"not a number: {value!r}")
    if isinstance(value, int) or (float(value).is_integer() and abs(value) < 1e6):
        return str(int(value))
    if abs(value) >= 100:
        return f"{value:.0f}"
    short = f"{value:.3g}"  # a rounded value keeps its trailing zeros (1.003 -> "1.00", not "1"; 0.1 -> "0.1")
    return short if float(short) == value else f"{value:#.3g}".rstrip(".")


_RST_SPECIAL = re.compile(r"([\\*`|_\[\]<>])")


def rst_escape(text):
    """Text that docutils shows as written (no emphasis, references or substitutions from ``*``, ``_``, ``|``)."""
    return _RST_SPECIAL.sub(r"\\\1", str(text))


class Claim:
    """Prose whose numbers and names come from the results tables, with their sources (see the module doc)."""

    def __init__(self):
        self.parts = []

    def say(self, text):
        if re.search(r"\d", text):
            raise ValueError(f"a number typed into a claim: {text!r} (numbers come from the tables)")
        self.parts.append({"say": text})
        return self

    def label(self, text):
        """A string taken from a results table (a method, case or column name); may contain digits."""
        self.parts.append({"label": str(text).replace("|", "/")})
        return self

    def link(self, text, target):
        """``[text](target)``: a results table's name linking to its file (the test checks the file exists)."""
        self.parts.append({"label": str(text), "link": str(target)})
        return self

    def num(self, value, *sources, kind="cell", unit=""):
        """``value`` as read from ``sources`` (``kind="cell"``: one cell; ``"ratio"``: first / second; ``"count"``:
        the number of cases, one source each); ``unit`` is appended (no digits)."""
        if re.search(r"\d", unit):
            raise ValueError(f"a number typed into a unit: {unit!r}")
        self.parts.append({"num": _num(value), "kind": kind, "sources": [dict(x) for x in sources], "unit": unit})
        return self

    @staticmethod
    def render_part(part, markup="md"):
        """One piece as Markdown (``markup="md"``) or reStructuredText (``"rst"``)."""
        if "num" in part:
            return part["num"] + part["unit"]
        text = part.get("say", part.get("label"))
        if markup == "rst":
            return f"``{part['link']}``" if "link" in part else rst_escape(text)
        return f"[{part['label']}]({part['link']})" if "link" in part else text

    def render(self, markup="md"):
        return "".join(self.render_part(p, markup) for p in self.parts)

    @property
    def text(self):
        return self.render("md")

    def record(self, claim_id, shown_in):
        return {"id": claim_id, "shown_in": shown_in, "text": self.text, "parts": self.parts}


def _value(cell):
    """A cell as a number (``"0.107 ± 0.006"`` -> 0.107), else None."""
    number = _as_number(cell) if cell is not None else None
    return None if number is None or math.isnan(number) else number


_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")


def _words(n):
    """Small counts in words in running prose (the baseline count is structure, not a measurement)."""
    return _WORDS[n] if n < len(_WORDS) else "many"


# ------------------------------------------------------------------------------------------- pieces of claims
def _where_text(c, result, head):
    first = True
    for column in (head.get("spec") or {}).get("where") or {}:
        value = head.get(column)
        c.say("" if first else ", ")
        first = False
        if isinstance(value, list):  # a pool spanning several values of a column
            for j, v in enumerate(value):
                c.say("" if j == 0 else " or ").label(str(v))
        elif isinstance(value, str):
            c.label(value)
        elif is_number(value):
            c.label(column).say("=").num(value, result.source(head["ours_index"], column))
        else:
            c.label(column).say("=").label(str(value))
    if first:
        c.say("whole table")


def _pair_numbers(c, result, head, what):
    """``ours`` value, ``baseline`` value or ``ratio`` of a pair."""
    metric = head["spec"]["metric"]
    io, ib = head["ours_index"], head["baseline_index"]
    if what == "ours":
        c.num(head["ours_value"], result.source(io, metric))
    elif what == "baseline":
        c.num(head["baseline_value"], result.source(ib, metric))
    else:
        c.num(head["ratio_ours_over_baseline"], result.source(io, metric), result.source(ib, metric),
              kind="ratio", unit="×")


def _spread(c, result, head, side, close=True):
    """`` ± sd (n=k)`` of one side of a pair, each number with its source, when the row records a spread;
    ``close=False`` leaves the parenthesis open (returns whether it opened one)."""
    metric, index = head["spec"]["metric"], head[f"{side}_index"]
    row = result.rows[index]
    sd, n = head.get(f"{side}_sd"), head.get(f"{side}_seeds")
    if is_number(sd):
        if is_number(row.get(f"{metric}_sd")):
            c.say(" ± ").num(sd, result.source(index, f"{metric}_sd"))
        elif isinstance(row.get(f"{metric}_per_seed"), list):
            c.say(" ± ").num(sd, result.source(index, f"{metric}_per_seed"), kind="sd")
        else:  # a legacy "mean ± sd" cell
            c.say(" ± ").num(sd, result.source(index, metric), kind="sd")
    if is_number(n):
        if isinstance(row.get(f"{metric}_per_seed"), list):
            c.say(" (n=").num(n, result.source(index, f"{metric}_per_seed"), kind="length")
        elif head["spec"].get("seeds") and is_number(row.get(head["spec"]["seeds"])):
            c.say(" (n=").num(n, result.source(index, head["spec"]["seeds"]))
        else:
            return False
        if close:
            c.say(")")
        return True
    return False


def _range(c, result, pairs, what):
    """``lo–hi`` of the pairs' ``what`` values ("ours", "baseline" or "ratio"), each end with its source."""
    key = {"ours": "ours_value", "baseline": "baseline_value", "ratio": "ratio_ours_over_baseline"}[what]
    lo, hi = min(pairs, key=lambda h: h[key]), max(pairs, key=lambda h: h[key])
    _pair_numbers(c, result, lo, what)
    if _num(hi[key]) != _num(lo[key]):
        c.say("–")
        _pair_numbers(c, result, hi, what)


def _seed_source(result, head, side):
    """Where a side's seed count comes from: the length of its per-seed list, else its seeds column."""
    metric, index = head["spec"]["metric"], head[f"{side}_index"]
    if isinstance(result.rows[index].get(f"{metric}_per_seed"), list):
        return result.source(index, f"{metric}_per_seed"), "length"
    return result.source(index, head["spec"]["seeds"]), "cell"


def _seeds(c, result, pairs, side="ours"):
    values = [(h[f"{side}_seeds"], i) for i, h in enumerate(pairs) if is_number(h.get(f"{side}_seeds"))]
    if not values:
        return False
    (lo, i_lo), (hi, i_hi) = min(values), max(values)
    source, kind = _seed_source(result, pairs[i_lo], side)
    c.num(lo, source, kind=kind)
    if hi != lo:
        source, kind = _seed_source(result, pairs[i_hi], side)
        c.say("–").num(hi, source, kind=kind)
    return True


def _seed_word(pairs, side):
    return "seed" if all(h.get(f"{side}_seeds") == 1 for h in pairs) else "seeds"


def _tally(c, pairs):
    """``b better, t tie, w worse`` of the pairs (each ``(result, pair)``), each count with its cases' sources."""
    for j, (verdict, word) in enumerate((("ours better", "better"), ("tie", "tie"), ("baseline better", "worse"))):
        c.say("" if j == 0 else ", ")
        hits = [(r, h) for r, h in pairs if h["verdict"] == verdict]
        c.num(len(hits), *[r.source(h["ours_index"], h["spec"]["metric"]) for r, h in hits], kind="count")
        c.say(f" {word}")


def _strongest_names(c, pairs):
    for i, name in enumerate(dict.fromkeys(h["baseline"] for h in pairs)):
        c.say("" if i == 0 else ", ").label(name)


def range_claim(c, result, args, over, noun, *, metric_label=None, cost=True, values=True, **where):
    """Ours vs the strongest baseline of each case (the ``over`` columns) among the rows ``where`` selects;
    ``values=False`` leaves out the ranges of the raw values (cases on different scales). Returns the pairs."""
    pairs = case_pairs(result.rows, spec_with(args, where), over)
    if not pairs:
        c.say(f"no {noun} with a baseline in ").label(result.name)
        return []
    metric = metric_label or pairs[0]["spec"]["metric"]
    say_metric = c.say if metric_label and not re.search(r"\d", metric_label) else c.label
    one = noun.removesuffix("s")
    seeded = all(is_number(h.get("ours_seeds")) and is_number(h.get("baseline_seeds")) for h in pairs)
    say_metric(metric).say(" over ").num(len(pairs), *[result.source(h["ours_index"], h["spec"]["metric"])
                                                      for h in pairs], kind="count").say(f" {noun}")
    if seeded:
        c.say(" (")
        _seeds(c, result, pairs)
        c.say(f" {_seed_word(pairs, 'ours')} per {one})")
    c.say(": ").label(pairs[0]["ours"])
    if values:
        c.say(" ")
        _range(c, result, pairs, "ours")
    c.say(" vs the strongest baseline of each " + one)
    if values:
        c.say(" ")
        _range(c, result, pairs, "baseline")
    c.say(" (")
    _strongest_names(c, pairs)
    if seeded:
        c.say("; ")
        _seeds(c, result, pairs, "baseline")
        c.say(" " + _seed_word(pairs, "baseline"))
    c.say("); ")
    _tally(c, [(result, h) for h in pairs])
    c.say("; ours / baseline ")
    _range(c, result, pairs, "ratio")
    column = pairs[0]["spec"].get("cost")
    if cost and column and all(_value(h.get("ours_cost")) is not None and _value(h.get("baseline_cost")) is not None
                               for h in pairs):
        big = max(pairs, key=lambda h: _value(h["ours_cost"]))
        c.say("; ").label(column).say(" ours ")
        c.num(_value(big["ours_cost"]), result.source(big["ours_index"], column))
        c.say(" vs ").num(_value(big["baseline_cost"]), result.source(big["baseline_index"], column))
        c.say(" in the costliest " + one)
    return pairs


def pair_claim(c, result, args, **override):
    """The declared headline (``override`` replaces declaration entries) in words; returns the pair or None."""
    head = headline_pair(result.rows, **{**args, **override})
    if head is None:
        c.say("no baseline pair in ").label(result.name)
        return None
    c.label(head["ours"]).say(" ")
    _pair_numbers(c, result, head, "ours")
    _spread(c, result, head, "ours")
    c.say(" vs the strongest baseline ").label(head["baseline"]).say(" ")
    _pair_numbers(c, result, head, "baseline")
    _spread(c, result, head, "baseline")
    c.say(" (").label(head["spec"]["metric"]).say(", ")
    _where_text(c, result, head)
    if is_timing(head["spec"]["metric"]):
        _on_cpu(c, result)
    c.say("; ours / baseline ")
    _pair_numbers(c, result, head, "ratio")
    c.say({"ours better": ", ours better", "tie": ", a tie", "baseline better": ", the baseline is better"}[
        head["verdict"]])
    if head.get("wins") is not None:
        c.say("; ours lower on ").label(str(head["wins"])).say(" layers")
    column = head["spec"].get("cost")
    if column and _value(head.get("ours_cost")) is not None and _value(head.get("baseline_cost")) is not None:
        c.say("; ").label(column).say(" ")
        c.num(_value(head["ours_cost"]), result.source(head["ours_index"], column))
        c.say(" vs ").num(_value(head["baseline_cost"]), result.source(head["baseline_index"], column))
    for column in head["spec"].get("context") or []:
        if is_number(head.get(f"ours_{column}")) and is_number(head.get(f"baseline_{column}")):
            c.say("; ").label(column).say(" ")
            c.num(head[f"ours_{column}"], result.source(head["ours_index"], column)).say(" vs ")
            c.num(head[f"baseline_{column}"], result.source(head["baseline_index"], column))
    c.say(")")
    return head


_TIMING = re.compile(r"(^|_)(ms|s|seconds|sec)$|wall|cpu_|latency|time", re.IGNORECASE)


def is_timing(metric):
    """Whether a metric is a time (its numbers hold for the CPU that measured them)."""
    return bool(_TIMING.search(str(metric)))


def _on_cpu(c, result):
    """`` on CPU <model> (<SIMD level>)`` from the result's stamp, when it has one."""
    machine = result.payload.get("machine") or {}
    if machine.get("cpu_model"):
        c.say(" on CPU ").label(machine["cpu_model"])
        level = (machine.get("simd") or {}).get("level")
        if level:
            c.say(" (").label(level).say(")")


def _from(c, result):
    c.say(" [").label(result.name).say(f", {result.mode} run]")


# ------------------------------------------------------------------------------- one claim per method family
# Each builder writes its family's claim and returns the quality comparisons ``(result, pair)`` its verdict
# counts (timings and ablations are reported, not counted).
def _claim_sdr(c, results):
    r = pick("smave", results)
    args = headline_args(r)
    pairs = []
    for j, (section, noun, label) in enumerate((("synthetic", "synthetic cells", "planted-subspace distance"),
                                                ("scaling", "scaling cells", "planted-subspace distance"),
                                                ("real", "real-data cells", "kNN test MSE"))):
        c.say("" if j == 0 else "; ")
        real = section == "real"
        pairs += range_claim(c, r, args, ["case"], noun, metric_label=label, cost=not real, values=not real,
                             section=section)
    _from(c, r)
    return [(r, h) for h in pairs]


def _claim_spanning_trees(c, results):
    r = pick("prbast", results)
    # each domain at the largest n (the smaller n are the same cases with less data, not further cases)
    where = {"section": "accuracy"} if any(row.get("section") == "accuracy" for row in r.rows) else {}
    if any(is_number(row.get("n")) for row in r.rows):
        where["n"] = "@max"
    pairs = range_claim(c, r, headline_args(r), ["case"], "domains", **where)
    _from(c, r)
    return [(r, h) for h in pairs]


def _claim_configurations(c, results):
    r = pick("mixconfig", results)
    pairs = []
    # one pool per downstream model: every feature set under it, and the semi-supervised anchors (their own
    # classifiers, downstream "-"), which compete in every classification cell
    downstreams = [d for d in dict.fromkeys(row.get("downstream") for row in r.rows
                                            if row.get("section") == "downstream") if d not in (None, "-")]
    j = 0
    for metric, cells in (("accuracy", "classification cells"), ("r2", "regression cells")):
        for downstream in downstreams:
            if not any(row.get("metric") == metric and row.get("downstream") == downstream for row in r.rows):
                continue
            c.say("" if j == 0 else "; ").say(f"{cells}, downstream ").label(downstream).say(": ")
            pairs += range_claim(c, r, headline_args(r), ["dataset", "label_frac"], cells, metric_label=metric,
                                 cost=j == 0, section="downstream", metric=metric, downstream=[downstream, "-"])
            j += 1
    _from(c, r)
    return [(r, h) for h in pairs]


def _claim_iv(c, results):
    r = pick("iv", results)
    args = headline_args(r)
    pairs = range_claim(c, r, args, ["cell"], "cells", cost=False, cell="G*")
    same = [h for h in pairs if h.get("verdict_basis") == "equal values"]
    if same:
        c.say(". Equal cells: ours equals ")
        _strongest_names(c, same)
        c.say(" there (the default is that baseline by construction). Without ")
        _strongest_names(c, same)
        c.say(": ")
        others = [*args.get("not_baselines", []), *dict.fromkeys(h["baseline"] for h in same)]
        range_claim(c, r, {**args, "not_baselines": others}, ["cell"], "cells", cost=False, cell="G*")
    _from(c, r)
    return [(r, h) for h in pairs]


def _claim_topology(c, results):
    r = pick("ceo", results)
    args = headline_args(r)
    head = pair_claim(c, r, args)
    c.say("; ")
    pairs = range_claim(c, r, {**args, "ours": ["CEO signed", "CEO*"]}, ["case"], "point clouds", cost=False,
                        case="*(n=*")
    scale = [(i, row) for i, row in enumerate(r.rows) if is_number(row.get("peak_RSS_MB"))
             and str(row.get("method", "")).startswith("CEO")]
    if scale:
        i, row = max(scale, key=lambda t: (t[1].get("dense_nxn_MB") or 0, -t[1].get("fit_s", 0)))
        c.say("; largest timing case ").label(row["case"]).say(": ").label(row["method"]).say(" fit ")
        c.num(row["fit_s"], r.source(i, "fit_s"), unit=" s").say(" wall, peak RSS ")
        c.num(row["peak_RSS_MB"], r.source(i, "peak_RSS_MB"), unit=" MB")
        if is_number(row.get("tracemalloc_peak_MB")):
            c.say(" (tracemalloc peak ").num(row["tracemalloc_peak_MB"], r.source(i, "tracemalloc_peak_MB"),
                                              unit=" MB").say(")")
        others = {x.get("method") for x in r.rows if x.get("case") == row["case"]} - {row["method"]}
        c.say(", no baseline at that size" if not any(not str(m).startswith("CEO") for m in others) else "")
    _from(c, r)
    return [(r, h) for h in ([head] if head else []) + pairs]


def _claim_annotation(c, results):
    r = pick("ma3s", results)
    args = headline_args(r)
    pairs = range_claim(c, r, args, ["dataset"], "datasets", metric_label="label accuracy at three labels per "
                        "item (majority vote)", cost=False, dataset="*")
    for metric, name in (("acc_3n_one_coin", "one-coin"), ("acc_3n_ds", "Dawid–Skene")):
        other = case_pairs(r.rows, spec_with({**args, "metric": metric}, {"dataset": "*"}), ["dataset"])
        if other:
            c.say(f"; the same labels aggregated by {name}: ")
            _tally(c, [(r, h) for h in other])
            c.say(" datasets, ours / strongest baseline ")
            _range(c, r, other, "ratio")
    _from(c, r)
    t = pick("ma3s_timing", results)
    if t is not None:
        c.say("; ")
        pair_claim(c, t, headline_args(t))
        _from(c, t)
    return [(r, h) for h in pairs]


def _claim_quantization(c, results):
    r = pick("quantization", results)
    head = pair_claim(c, r, headline_args(r))
    _from(c, r)
    a = pick("quantization_ablation", results)
    if a is not None:
        split = a.payload.get("splits", {}).get("ablation")
        steps = [(i, row) for i, row in enumerate(a.rows) if str(row.get("method", "")).startswith("lr")]
        if steps:
            tuning = split is not None and "calibration" in split.get("score", "")
            c.say("; default step sizes " + ("rechecked on the tuning split (fit and scored on calibration texts "
                                             "only, disjoint from the headline's held-out texts)" if tuning else
                                             "scored on the headline's own held-out texts") + ": ")
            for j, (i, row) in enumerate(steps):
                c.say("" if j == 0 else ", ").say("default / ").label(row["method"]).say(" error ")
                c.num(row["default_err_ratio"], a.source(i, "default_err_ratio"), unit="×")
                c.say(", default lower on ").label(row["default_wins"]).say(" layers")
            _from(c, a)
    k = pick("twinquant_kernel", results)
    if k is not None:
        if headline_args(k) is not None:  # quantized inference: MiniLM encode latency vs fp32, same run
            c.say("; quantized inference: ")
            pair_claim(c, k, headline_args(k))
            _from(c, k)
        gpu = [row for row in k.rows if row.get("section", row.get("backend")) not in (None, "numba", "layer",
                                                                                       "minilm")
               and is_number(row.get("ms", row.get("fused_ms")))]
        c.say("; fused kernel: " + ("GPU rows in " if gpu else "no GPU timing yet (CPU rows only) in "))
        c.label(k.name)
    return [(r, head)] if head else []


def _claim_transport(c, results):
    r = pick("transport", results)
    pairs = range_claim(c, r, headline_args(r), ["path", "budget"], "path and budget cases", cost=False,
                        metric_label="mean squared Wasserstein distance to the true path")
    _from(c, r)
    return [(r, h) for h in pairs]


def _claim_ecosystem(c, results):
    r = pick("scaleout", results)
    modes = [m for m in dict.fromkeys(row.get("mode") for row in r.rows) if m and m != "sequential"]
    for j, mode in enumerate(modes):
        values = [(row["speedup_vs_sequential"], i) for i, row in enumerate(r.rows)
                  if row.get("mode") == mode and is_number(row.get("speedup_vs_sequential"))]
        if not values:
            continue
        lo, hi = min(values), max(values)
        c.say("GridSearchCV speed-up over the sequential search: " if j == 0 else "; ").label(mode).say(" ")
        c.num(lo[0], r.source(lo[1], "speedup_vs_sequential"))
        if _num(hi[0]) != _num(lo[0]):
            c.say("–").num(hi[0], r.source(hi[1], "speedup_vs_sequential"))
        c.say("× over ").num(len(values), *[r.source(i, "speedup_vs_sequential") for _, i in values],
                             kind="count").say(" workloads")
    _from(c, r)
    return []  # speed-ups of the same estimator, not a comparison with a baseline


CLAIMS = {"sdr": _claim_sdr, "spanning_trees": _claim_spanning_trees, "configurations": _claim_configurations,
          "iv": _claim_iv, "topology": _claim_topology, "annotation": _claim_annotation,
          "quantization": _claim_quantization, "transport": _claim_transport, "ecosystem": _claim_ecosystem}


@dataclass
class FamilyClaims:
    """A family's claim (its comparisons in words) and its verdict (a word and the cases behind it)."""

    family: str
    claim: Claim
    verdict: Claim
    word: str = ""
    pairs: list = field(default_factory=list)
    stale: list = field(default_factory=list)  # (name, why) of the results behind it that are stale


def _verdict(pairs, stale=()):
    """The family verdict: a word, then how many cases ours wins, ties and loses; ``stale`` names the results
    measured on code that has changed since (the verdict then says so)."""
    c = Claim()
    if not pairs:
        c.say("no baseline comparison")
        word = ""
    else:
        word = verdict_word([h for _, h in pairs])
        c.say(f"{word} (")
        _tally(c, pairs)
        c.say(")")
    if stale:
        c.say("; stale: ")
        for j, (name, why) in enumerate(stale):
            c.say("" if j == 0 else ", ").label(name).say(f" ({why})")
    return c, word


def stale_word(reason):
    """A few words (no digits) for why a result is stale (:func:`benchmarks._stamp.staleness`)."""
    if reason.startswith("no commit stamp"):
        return "not stamped with its commit"
    if reason.startswith("measured with uncommitted"):
        return "measured on uncommitted code"
    if "not in this repository" in reason:
        return "its commit is unknown here"
    return "its family's code changed since"


def build_claims(results=None):
    """``{family: FamilyClaims}`` from the results on disk (a missing table says so, in words)."""
    results = candidates() if results is None else results
    out = {}
    for family, build in CLAIMS.items():
        needs = PRIMARY[family]
        c = Claim()
        pairs = []
        if pick(needs, results) is None:
            c.say("no results table yet (").label(needs).say(")")
        else:
            try:
                pairs = build(c, results)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a table without expected columns
                c, pairs = Claim().say(f"claim not generated ({type(exc).__name__}: ").label(str(exc)[:80]), []
                c.say(")")
        shown = [pick(name, results) for name in headline_benchmarks(family)]
        used = [*[r for r, _ in pairs], *[r for r in shown if r is not None]]
        stale = list(dict.fromkeys((r.name, stale_word(r.staleness())) for r in used if r.stale))
        verdict, word = _verdict(pairs, stale)
        out[family] = FamilyClaims(family, c, verdict, word, pairs, stale)
    return out


# ------------------------------------------------------------------------------------ the README headline table
def headline_table(results=None, link_prefix=""):
    """One row per family (its :data:`PRIMARY` benchmark, then any :data:`SECONDARY` ones): ours beside the
    strongest baseline, the run's mode."""
    results = candidates() if results is None else results
    header = ["family", "benchmark", "run", "case", "metric", "ours", "strongest baseline", "ours / baseline",
              "verdict"]
    claim = Claim().say("| " + " | ".join(header) + " |\n|" + "|".join("---" for _ in header) + "|\n")
    for family, name in ((f, n) for f in METHOD_FAMILIES for n in headline_benchmarks(f)):
        result = pick(name, results)
        head = headline_of(result) if result is not None else None
        if head is None or head.get("legacy"):
            continue
        claim.say(f"| {family} | ").link(result.name, link_prefix + result.path(".md").as_posix())
        claim.say(f" | {result.mode}{', stale' if result.stale else ''}")
        if is_timing(head["spec"]["metric"]):
            _on_cpu(claim, result)
        claim.say(" | ")
        _where_text(claim, result, head)
        claim.say(" | ").label(head["spec"]["metric"])
        claim.say(" (lower is better) | " if head["spec"]["lower_is_better"] else " (higher is better) | ")
        claim.label(head["ours"]).say(" ")
        _pair_numbers(claim, result, head, "ours")
        _spread(claim, result, head, "ours")
        claim.say(" | ").label(head["baseline"]).say(" ")
        _pair_numbers(claim, result, head, "baseline")
        opened = _spread(claim, result, head, "baseline", close=False)
        claim.say(f"{'; ' if opened else ' ('}strongest of {_words(len(head['baselines_compared']))}) | ")
        _pair_numbers(claim, result, head, "ratio")
        claim.say(f" | {VERDICT_WORDS[head['verdict']]} |\n")
    claim.parts[-1]["say"] = claim.parts[-1]["say"].rstrip("\n")
    return claim


def quick_rows_note(results=None):
    """Names the README headline rows that come from quick runs (reduced grids and seeds), or says there are none."""
    results = candidates() if results is None else results
    quick = [r for r in (pick(n, results) for f in METHOD_FAMILIES for n in headline_benchmarks(f))
             if r is not None and r.mode == "quick"]
    c = Claim()
    if not quick:
        return c.say("Every row comes from a full run.")
    c.say("Rows from quick runs (reduced grids and seeds; no full run on the current code is committed): ")
    for i, r in enumerate(quick):
        c.say("" if i == 0 else ", ").label(r.name)
    return c.say(".")
