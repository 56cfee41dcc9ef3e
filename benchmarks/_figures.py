"""One figure per family: ours against the strongest baseline, case by case (``docs/benchmarks/figures/``).

Each bar is the relative difference of ours to the strongest baseline of one case, signed so that right is ours
better whatever the metric's direction; the cases are those the family's verdict counts.
"""

import io

from benchmarks import _layout
from benchmarks._claims import build_claims
from benchmarks._results import FAMILIES

COLOURS = {"ours better": "#2a9d8f", "tie": "#8d99ae", "baseline better": "#e76f51"}
CLIP = 100.0  # percent; longer bars are cut there and labelled with their value


def advantage(pair):
    """Ours against the baseline in percent of the baseline, positive when ours is better."""
    a, b = pair["ours_value"], pair["baseline_value"]
    if b == 0:
        return 0.0 if a == 0 else (CLIP if (a < b) == pair["spec"]["lower_is_better"] else -CLIP)
    gain = (b - a) if pair["spec"]["lower_is_better"] else (a - b)
    return 100.0 * gain / abs(b)


def _case_values(pair):
    """The case's column values (a glob or ``@max`` in the selection read from the row)."""
    out = {}
    for key, wanted in (pair["spec"].get("where") or {}).items():
        glob = wanted == "@max" or (isinstance(wanted, str) and "*" in wanted)
        out[key] = pair.get(key) if glob else wanted
    return out


def _case_labels(pairs):
    """Each case named by the values that differ between the cases shown (and its benchmark when several)."""
    cases = [(r.name, _case_values(h)) for r, h in pairs]
    keys = list(dict.fromkeys(k for _, values in cases for k in values))
    varying = [k for k in keys if len({str(values.get(k)) for _, values in cases}) > 1]
    several = len({name for name, _ in cases}) > 1
    labels = []
    for name, values in cases:
        label = " · ".join([*([name] if several else []), *(str(values.get(k)) for k in varying)]) or name
        labels.append(label if len(label) <= 48 else label[:47] + "…")
    return labels


def verdict_figure(family, pairs):
    """PNG bytes of the family's figure (``pairs``: ``(result, pair)`` as the verdict counts them)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    values = [advantage(h) for _, h in pairs]
    labels = _case_labels(pairs)
    fig, ax = plt.subplots(figsize=(8.5, 0.32 * len(pairs) + 1.4))
    shown = [max(-CLIP, min(CLIP, v)) for v in values]
    ax.barh(range(len(pairs)), shown, color=[COLOURS[h["verdict"]] for _, h in pairs])
    for i, (v, s) in enumerate(zip(values, shown)):
        if v != s:
            ax.text(s, i, f" {v:.0f}% ", va="center", ha="right" if s > 0 else "left", fontsize=7, color="white")
    ax.axvline(0.0, color="black", lw=0.8)
    ax.set_yticks(range(len(pairs)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("difference to the strongest baseline, % of its value (right: ours better)", fontsize=8)
    ax.set_title(f"{FAMILIES[family]}: ours against the strongest baseline", fontsize=9)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, metadata={"Software": None})
    plt.close(fig)
    return buffer.getvalue()


def write_verdict_figures(results):
    """Write ``docs/benchmarks/figures/FAMILY.png`` for every family with cases (unchanged files are left alone)."""
    folder = _layout.DOCS_BENCHMARKS / "figures"
    written = []
    for family, fam in build_claims(results).items():
        if not fam.pairs:
            continue
        data = verdict_figure(family, fam.pairs)
        path = folder / f"{family}.png"
        folder.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)
        written.append(path)
    for stale in folder.glob("*.png") if folder.exists() else []:
        if stale not in written:
            stale.unlink()
    return written
