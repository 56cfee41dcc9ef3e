"""README claims: every measured number in README.md, generated from the results with its source recorded."""

import json
import math
import re

from benchmarks import _layout
from benchmarks._harness import (
    _as_number,
    case_pairs,
    headline_pair,
)
from benchmarks._headlines import (
    DECLARED,
    _is_number,
    _load_results,
    _method_of,
    _relative,
    _rows,
    _verdict,
    headline_args,
    headline_of,
)

# ------------------------------------------------------------------------------------------- README claims
CLAIM_SPAN = re.compile(r"<!-- claim:(?P<id>[\w-]+) -->(?P<text>.*?)<!-- /claim:(?P=id) -->", re.DOTALL)


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


class Claim:
    """A README claim built piece by piece: prose without digits, strings taken from the tables (labels), links
    to results files, and numbers, each with its source (result file, row, column). ``record`` keeps the pieces,
    which ``tests/test_readme_claims.py`` checks one by one against the tables."""

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
    def _render(part):
        if "num" in part:
            return part["num"] + part["unit"]
        if "link" in part:
            return f"[{part['label']}]({part['link']})"
        return part.get("say", part.get("label"))

    @property
    def text(self):
        return "".join(self._render(part) for part in self.parts)

    def record(self, claim_id):
        return {"id": claim_id, "text": self.text, "parts": self.parts}


def _value(cell):
    """A cell as a number (``"0.107 ± 0.006"`` -> 0.107), else None."""
    number = _as_number(cell) if cell is not None else None
    return None if number is None or math.isnan(number) else number


def _source(result, index, column):
    path = result["dir"] / f"{result['name']}.json"
    try:
        path = path.relative_to(_layout.ROOT)
    except ValueError:  # results outside the repository (the report's tests)
        pass
    return {"file": path.as_posix(), "row": index, "column": column}


def _candidates():
    """Every result on disk, full-mode directory and quick directory."""
    return _load_results(_layout.RESULTS) + (_load_results(_layout.QUICK) if _layout.QUICK.exists() else [])


def _mode(result):
    return "quick" if "--quick" in str(result["payload"].get("command", "")) else "full"


def pick(base, results=None):
    """The result the README quotes for benchmark ``base``: the full-mode directory's table, else the newest
    quick table (``results/quick/BASE.json``); a table whose declared headline
    finds no pair (a partial run) gives way to the next."""
    results = _candidates() if results is None else results
    full = [r for r in results if r["dir"] == _layout.RESULTS and r["name"] == base]
    quick = sorted((r for r in results if r["name"] == base and r not in full),
                   key=lambda r: str(r["payload"].get("date", "")), reverse=True)
    ranked = full + quick
    # a table whose headline has a baseline to stand beside wins; a partial full run does not hide a quick one
    return next((r for r in ranked if headline_args(r) is None or headline_of(r) is not None),
                ranked[0] if ranked else None)


def _where_text(c, result, head):
    spec_where = (head.get("spec") or {}).get("where") or {}
    first = True
    for column in spec_where:
        value = head.get(column)
        c.say("" if first else ", ")
        first = False
        if isinstance(value, str):
            c.label(value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            c.label(column).say("=").num(value, _source(result, head["ours_index"], column))
        else:
            c.label(column).say("=").label(str(value))
    if first:
        c.say("whole table")


def _pair_numbers(c, result, head, what):
    """``ours value`` / ``baseline value`` / ratio of a pair."""
    metric = head["spec"]["metric"]
    io, ib = head["ours_index"], head["baseline_index"]
    if what == "ours":
        c.num(head["ours_value"], _source(result, io, metric))
    elif what == "baseline":
        c.num(head["baseline_value"], _source(result, ib, metric))
    else:
        c.num(head["ratio_ours_over_baseline"], _source(result, io, metric), _source(result, ib, metric),
              kind="ratio", unit="×")


def headline_table(results=None):
    """The README headline table (one row per benchmark, ours beside the strongest baseline) and its sources."""
    results = _candidates() if results is None else results
    bases = list(DECLARED) + sorted({r["name"] for r in results
                                     if isinstance(r["payload"].get("headline"), dict)} - set(DECLARED))
    header = ["method", "benchmark", "case", "metric", "ours", "strongest baseline", "ours / baseline",
              "ours better?", "cost: ours vs baseline", "seeds: ours vs baseline"]
    claim = Claim().say("| " + " | ".join(header) + " |\n|" + "|".join("---" for _ in header) + "|\n")
    for base in bases:
        result = pick(base, results)
        if result is None:
            continue
        head = headline_of(result)
        if head is None or head.get("legacy"):
            continue
        link = f"benchmarks/results/{_relative(result['dir'] / (result['name'] + '.md'))}"
        claim.say(f"| {_method_of(base)} | ").link(result["name"], link).say(f" ({_mode(result)} run) | ")
        _where_text(claim, result, head)
        claim.say(" | ").label(head["spec"]["metric"])
        claim.say(" (lower is better) | " if head["spec"]["lower_is_better"] else " (higher is better) | ")
        claim.label(head["ours"]).say(": ")
        _pair_numbers(claim, result, head, "ours")
        claim.say(" | ").label(head["baseline"]).say(": ")
        _pair_numbers(claim, result, head, "baseline")
        claim.say(f" (strongest of {_words(len(head['baselines_compared']))}) | ")
        _pair_numbers(claim, result, head, "ratio")
        claim.say(f" | {_verdict(head)} | ")
        cost = head["spec"].get("cost")
        if cost and _value(head.get("ours_cost")) is not None and _value(head.get("baseline_cost")) is not None:
            claim.label(cost).say(" ").num(_value(head["ours_cost"]), _source(result, head["ours_index"], cost))
            claim.say(" vs ").num(_value(head["baseline_cost"]), _source(result, head["baseline_index"], cost))
        else:
            claim.say("-")
        claim.say(" | ")
        seeds = head["spec"].get("seeds")
        if seeds and _is_number(head.get("ours_seeds")) and _is_number(head.get("baseline_seeds")):
            claim.num(head["ours_seeds"], _source(result, head["ours_index"], seeds)).say(" vs ")
            claim.num(head["baseline_seeds"], _source(result, head["baseline_index"], seeds))
        else:
            claim.say("-")
        claim.say(" |\n")
    claim.parts[-1]["say"] = claim.parts[-1]["say"].rstrip("\n")
    return claim.text, claim


_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")


def _words(n):
    """Small counts in words in running prose (the baseline count is structure, not a measurement)."""
    return _WORDS[n] if n < len(_WORDS) else "many"


# --------------------------------------------------------------------------- claim builders (README status)
def _case_label(c, head, over):
    for i, column in enumerate(over):
        c.say("" if i == 0 else " ")
        value = head.get(column)
        if isinstance(value, str):
            c.label(value)
        else:
            c.label(column).say("=").label(str(value))


def _range(c, result, pairs, what, unit=""):
    """``lo–hi`` of the pairs' ``what`` values ("ours", "baseline" or "ratio"), each end with its source."""
    key = {"ours": "ours_value", "baseline": "baseline_value", "ratio": "ratio_ours_over_baseline"}[what]
    lo, hi = min(pairs, key=lambda h: h[key]), max(pairs, key=lambda h: h[key])
    _pair_numbers(c, result, lo, what)
    if _num(hi[key]) != _num(lo[key]):
        c.say("–")
        _pair_numbers(c, result, hi, what)
    if unit:
        c.say(unit)


def _seeds(c, result, pairs, side="ours"):
    column = pairs[0]["spec"].get("seeds")
    values = [(h[f"{side}_seeds"], h[f"{side}_index"]) for h in pairs if _is_number(h.get(f"{side}_seeds"))]
    if not column or not values:
        return False
    lo, hi = min(values), max(values)
    c.num(lo[0], _source(result, lo[1], column))
    if hi[0] != lo[0]:
        c.say("–").num(hi[0], _source(result, hi[1], column))
    return True


def _count(c, result, pairs, predicate):
    hits = [h for h in pairs if predicate(h)]
    c.num(len(hits), *[_source(result, h["ours_index"], h["spec"]["metric"]) for h in hits], kind="count")
    c.say("/").num(len(pairs), *[_source(result, h["ours_index"], h["spec"]["metric"]) for h in pairs],
                   kind="count")


def _strongest_names(c, pairs):
    names = list(dict.fromkeys(h["baseline"] for h in pairs))
    for i, name in enumerate(names):
        c.say("" if i == 0 else ", ").label(name)


def range_claim(c, result, args, over, noun, *, metric_label=None, cost=True, values=True, **where):
    """Ours vs the strongest baseline of each case (the ``over`` columns) among the rows ``where`` selects;
    ``values=False`` leaves out the ranges of the raw values (cases on different scales) and keeps counts and
    ratios."""
    spec = headline_pair_spec(args, where)
    pairs = case_pairs(_rows(result), spec, over)
    if not pairs:
        c.say(f"no {noun} with a baseline in ").label(result["name"])
        return []
    metric = metric_label or pairs[0]["spec"]["metric"]
    say_metric = c.say if metric_label and not re.search(r"\d", metric_label) else c.label  # prose or a column
    one = noun.removesuffix("s")
    seeded = all(_is_number(h.get("ours_seeds")) and _is_number(h.get("baseline_seeds")) for h in pairs) \
        and bool(pairs[0]["spec"].get("seeds"))
    say_metric(metric).say(" over ").num(len(pairs), *[_source(result, h["ours_index"], h["spec"]["metric"])
                                                   for h in pairs], kind="count").say(f" {noun}")
    if seeded:
        c.say(" (")
        _seeds(c, result, pairs)
        c.say(" seeds per " + one + ")")
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
        c.say(" seeds")
    c.say("); ours better in ")
    _count(c, result, pairs, lambda h: h["verdict"] == "ours better")
    ties = [h for h in pairs if h["verdict"] == "tie"]
    if ties:
        c.say(", equal in ")
        _count(c, result, pairs, lambda h: h["verdict"] == "tie")
    c.say(", ours / baseline ")
    _range(c, result, pairs, "ratio")
    column = pairs[0]["spec"].get("cost")
    if cost and column and all(_value(h.get("ours_cost")) is not None and _value(h.get("baseline_cost")) is not None
                               for h in pairs):
        big = max(pairs, key=lambda h: _value(h["ours_cost"]))
        c.say("; ").label(column).say(" ours ")
        c.num(_value(big["ours_cost"]), _source(result, big["ours_index"], column))
        c.say(" vs ").num(_value(big["baseline_cost"]), _source(result, big["baseline_index"], column))
        c.say(" in the costliest " + one)
    return pairs


def headline_pair_spec(args, where=None):
    """The ``spec`` of a declaration with ``where`` replacing its case selection."""
    head_keys = ("key", "ours", "metric", "lower_is_better", "not_baselines", "baselines", "cost", "seeds", "wins",
                 "context")
    spec = {k: args[k] for k in head_keys if k in args}
    spec.setdefault("lower_is_better", True)
    spec["ours"] = [spec["ours"]] if isinstance(spec["ours"], str) else list(spec["ours"])
    spec["where"] = {**(args.get("where") or {}), **dict(where or {})} if where is None else dict(where)
    return spec


def pair_claim(c, result, args, **override):
    """The declared headline (``override`` replaces declaration entries) in words."""
    args = {**args, **override}
    head = headline_pair(_rows(result), **args)
    if head is None:
        c.say("no baseline pair in ").label(result["name"])
        return None
    c.label(head["ours"]).say(" ")
    _pair_numbers(c, result, head, "ours")
    c.say(" vs the strongest baseline ").label(head["baseline"]).say(" ")
    _pair_numbers(c, result, head, "baseline")
    c.say(" (").label(head["spec"]["metric"]).say(", ")
    _where_text(c, result, head)
    c.say("; ours / baseline ")
    _pair_numbers(c, result, head, "ratio")
    c.say({"ours better": ", ours better", "tie": ", equal", "baseline better": ", the baseline is better"}[
        head["verdict"]])
    if head.get("wins") is not None:
        c.say("; ours lower on ").label(str(head["wins"])).say(" layers")
    column = head["spec"].get("cost")
    if column and _value(head.get("ours_cost")) is not None and _value(head.get("baseline_cost")) is not None:
        c.say("; ").label(column).say(" ")
        c.num(_value(head["ours_cost"]), _source(result, head["ours_index"], column))
        c.say(" vs ").num(_value(head["baseline_cost"]), _source(result, head["baseline_index"], column))
    for column in head["spec"].get("context") or []:
        if _is_number(head.get(f"ours_{column}")) and _is_number(head.get(f"baseline_{column}")):
            c.say("; ").label(column).say(" ")
            c.num(head[f"ours_{column}"], _source(result, head["ours_index"], column)).say(" vs ")
            c.num(head[f"baseline_{column}"], _source(result, head["baseline_index"], column))
    if head["spec"].get("seeds") and _is_number(head.get("ours_seeds")):
        c.say("; ").num(head["ours_seeds"], _source(result, head["ours_index"], head["spec"]["seeds"]))
        c.say(" vs ").num(head["baseline_seeds"], _source(result, head["baseline_index"], head["spec"]["seeds"]))
        c.say(" seeds")
    c.say(")")
    return head


def _from(c, result):
    c.say(" [").label(result["name"]).say(f", {_mode(result)} run]")


def _claim_smave(c, results):
    r = pick("smave", results)
    args = headline_args(r)
    range_claim(c, r, args, ["case"], "synthetic cells", metric_label="planted-subspace distance",
                section="synthetic")
    c.say("; ")
    range_claim(c, r, args, ["case"], "scaling cells", metric_label="planted-subspace distance", section="scaling")
    c.say("; ")
    range_claim(c, r, args, ["case"], "real-data cells", metric_label="kNN test MSE", cost=False, values=False,
                section="real")
    _from(c, r)


def _claim_prbast(c, results):
    r = pick("prbast", results)
    range_claim(c, r, headline_args(r), ["case"], "domains")
    _from(c, r)


def _claim_mixconfig(c, results):
    r = pick("mixconfig", results)
    for j, (metric, cells) in enumerate((("accuracy", "classification cells"), ("r2", "regression cells"))):
        c.say("" if j == 0 else "; ")
        range_claim(c, r, headline_args(r), ["dataset", "label_frac", "downstream"], cells,
                    metric_label=metric, cost=j == 0, section="downstream", metric=metric)
    _from(c, r)


def _claim_iv(c, results):
    r = pick("iv", results)
    args = headline_args(r)
    pairs = range_claim(c, r, args, ["cell"], "cells", cost=False, cell="G*")
    same = [h for h in pairs if h["verdict"] == "tie"]
    if same:
        c.say(". Equal cells: ours equals ")
        _strongest_names(c, same)
        c.say(" there (the default is that baseline by construction). Without ")
        _strongest_names(c, same)
        c.say(": ")
        others = [*args.get("not_baselines", []), *dict.fromkeys(h["baseline"] for h in same)]
        range_claim(c, r, {**args, "not_baselines": others}, ["cell"], "cells", cost=False, cell="G*")
    _from(c, r)


def _claim_ceo(c, results):
    r = pick("ceo", results)
    args = headline_args(r)
    pair_claim(c, r, args)
    c.say("; ")
    range_claim(c, r, {**args, "ours": ["CEO signed", "CEO*"]}, ["case"], "point clouds", cost=False,
                case="*(n=*")
    scale = [(i, row) for i, row in enumerate(_rows(r)) if _is_number(row.get("peak_RSS_MB"))
             and str(row.get("method", "")).startswith("CEO")]
    if scale:
        i, row = max(scale, key=lambda t: (t[1].get("dense_nxn_MB") or 0, -t[1].get("fit_s", 0)))
        c.say("; largest timing case ").label(row["case"]).say(": ").label(row["method"]).say(" fit ")
        c.num(row["fit_s"], _source(r, i, "fit_s"), unit=" s").say(" wall, peak RSS ")
        c.num(row["peak_RSS_MB"], _source(r, i, "peak_RSS_MB"), unit=" MB")
        if _is_number(row.get("tracemalloc_peak_MB")):
            c.say(" (tracemalloc peak ").num(row["tracemalloc_peak_MB"], _source(r, i, "tracemalloc_peak_MB"),
                                              unit=" MB").say(")")
        others = {x.get("method") for x in _rows(r) if x.get("case") == row["case"]} - {row["method"]}
        c.say(", no baseline at that size" if not any(not str(m).startswith("CEO") for m in others) else "")
    _from(c, r)


def _claim_ma3s(c, results):
    r = pick("ma3s", results)
    args = headline_args(r)
    range_claim(c, r, args, ["dataset"], "datasets", metric_label="label accuracy at three labels per item "
                "(majority vote)", cost=False, dataset="*")
    for metric, name in (("acc_3n_one_coin", "one-coin"), ("acc_3n_ds", "Dawid–Skene")):
        pairs = case_pairs(_rows(r), headline_pair_spec({**args, "metric": metric}, {"dataset": "*"}), ["dataset"])
        if pairs:
            c.say(f"; the same labels aggregated by {name}: ours better in ")
            _count(c, r, pairs, lambda h: h["verdict"] == "ours better")
            c.say(" datasets, ours / strongest baseline ")
            _range(c, r, pairs, "ratio")
    _from(c, r)
    t = pick("ma3s_timing", results)
    if t is not None:
        c.say("; ")
        pair_claim(c, t, headline_args(t))
        _from(c, t)


def _claim_twinquant(c, results):
    r = pick("quantization", results)
    if r is not None:
        pair_claim(c, r, headline_args(r))
        _from(c, r)
    a = pick("quantization_ablation", results)
    if a is not None:
        rows = _rows(a)
        split = a["payload"].get("splits", {}).get("ablation")
        steps = [(i, row) for i, row in enumerate(rows) if str(row.get("method", "")).startswith("lr")]
        if steps:
            tuning = split is not None and "calibration" in split.get("score", "")
            c.say("; default step sizes " + ("rechecked on the tuning split (fit and scored on calibration texts "
                                             "only, disjoint from the headline's held-out texts)" if tuning else
                                             "scored on the headline's own held-out texts") + ": ")
            for j, (i, row) in enumerate(steps):
                c.say("" if j == 0 else ", ").say("default / ").label(row["method"]).say(" error ")
                c.num(row["default_err_ratio"], _source(a, i, "default_err_ratio"), unit="×")
                c.say(", default lower on ").label(row["default_wins"]).say(" layers")
            _from(c, a)
    k = pick("twinquant_kernel", results)
    if k is not None:
        if headline_args(k) is not None:  # quantized inference: MiniLM encode latency vs fp32, same run
            c.say("; quantized inference: ")
            pair_claim(c, k, headline_args(k))
            _from(c, k)
        gpu = [row for row in _rows(k) if row.get("section", row.get("backend")) not in (None, "numba", "layer",
                                                                                         "minilm")
               and _is_number(row.get("ms", row.get("fused_ms")))]
        c.say("; fused kernel: " + ("GPU rows in " if gpu else "no GPU timing yet (CPU rows only) in "))
        c.label(k["name"])


def _claim_scaleout(c, results):
    r = pick("scaleout", results)
    rows = _rows(r)
    modes = [m for m in dict.fromkeys(row.get("mode") for row in rows) if m and m != "sequential"]
    for j, mode in enumerate(modes):
        values = [(row["speedup_vs_sequential"], i) for i, row in enumerate(rows)
                  if row.get("mode") == mode and _is_number(row.get("speedup_vs_sequential"))]
        if not values:
            continue
        lo, hi = min(values), max(values)
        c.say("" if j == 0 else "; ").label(mode).say(" ")
        c.num(lo[0], _source(r, lo[1], "speedup_vs_sequential"))
        if _num(hi[0]) != _num(lo[0]):
            c.say("–").num(hi[0], _source(r, hi[1], "speedup_vs_sequential"))
        c.say("× over ").num(len(values), *[_source(r, i, "speedup_vs_sequential") for _, i in values],
                             kind="count").say(" workloads")
    _from(c, r)


CLAIM_NEEDS = {"twinquant": "quantization"}  # claim -> the table it cannot do without (default: same name)
CLAIMS = {"smave": _claim_smave, "prbast": _claim_prbast, "mixconfig": _claim_mixconfig, "iv": _claim_iv,
          "ceo": _claim_ceo, "ma3s": _claim_ma3s, "twinquant": _claim_twinquant, "scaleout": _claim_scaleout}


def build_claims(results=None):
    """Every README claim as ``{id: Claim}`` from the results on disk (a missing table says so, in words)."""
    results = _candidates() if results is None else results
    out = {}
    for claim_id, build in CLAIMS.items():
        c = Claim()
        needs = CLAIM_NEEDS.get(claim_id, claim_id)
        if pick(needs, results) is None:
            out[claim_id] = c.say("no results table yet (").label(needs).say(")")
            continue
        try:
            build(c, results)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a table without the expected columns
            c = Claim().say(f"claim not generated ({type(exc).__name__}: ").label(str(exc)[:80]).say(")")
        out[claim_id] = c
    return out


def update_readme(results=None):
    """Rewrite the README's headline table and claim spans from the results on disk; write CLAIMS.json."""
    if not _layout.README.exists():
        return
    results = _candidates() if results is None else results
    text = _layout.README.read_text()
    records = []
    if _layout.README_START in text and _layout.README_END in text:
        table, claim = headline_table(results)
        head, rest = text.split(_layout.README_START, 1)
        _, tail = rest.split(_layout.README_END, 1)
        text = f"{head}{_layout.README_START}\n{table}\n{_layout.README_END}{tail}"
        records.append(claim.record("headlines"))
    claims = build_claims(results)
    text = CLAIM_SPAN.sub(lambda m: f"<!-- claim:{m['id']} -->{claims[m['id']].text}<!-- /claim:{m['id']} -->"
                          if m["id"] in claims else m[0], text)
    records += [claims[m["id"]].record(m["id"]) for m in CLAIM_SPAN.finditer(text) if m["id"] in claims]
    _layout.README.write_text(text)
    _layout.CLAIMS_FILE.write_text(json.dumps(records, indent=1, ensure_ascii=False) + "\n")
    print(f"updated the headline table and {len(records) - 1} claims in {_layout.README.name}; "
          f"sources in {_layout.CLAIMS_FILE}")
