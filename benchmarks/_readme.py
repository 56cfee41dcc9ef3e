"""The README's generated spans: the headline table (one row per family), the note that names its quick-run rows,
and each family's verdict in the estimators table (``<!-- claim:verdict-FAMILY -->``)."""

import re

from benchmarks import _layout
from benchmarks._claims import Claim, build_claims, headline_table, quick_rows_note
from benchmarks._results import candidates

CLAIM_SPAN = re.compile(r"<!-- claim:(?P<id>[\w-]+) -->(?P<text>.*?)<!-- /claim:(?P=id) -->", re.DOTALL)


TWINS = {"_numba.py": "a numba twin (CPU)", "_triton.py": "Triton kernels (GPU)",
         "_torch.py": "torch's own operators as a backend"}


def kernel_twins():
    """Which kernel families have which fast twins beside their reference, read from ``kernels/*/``."""
    folders = sorted(p for p in (_layout.ROOT / "kernels").glob("*") if (p / "_reference.py").exists())
    by_twin = {twin: [f.name for f in folders if (f / twin).exists()] for twin in TWINS}
    c = Claim()
    if not folders:
        return c.say("no kernel families")
    everywhere = [twin for twin, names in by_twin.items() if len(names) == len(folders)]
    parts = [f"{TWINS[twin]} in every kernel family" for twin in everywhere]
    parts += [f"{TWINS[twin]} in {', '.join(names)} only" for twin, names in by_twin.items()
              if names and twin not in everywhere]
    missing = [f.name for f in folders if not any((f / twin).exists() for twin in TWINS)]
    if missing:
        parts.append(f"no fast twin yet in {', '.join(missing)}")
    return c.say("; ".join(parts))


def readme_claims(results=None):
    """``{span id: Claim}`` of every span the README may hold."""
    results = candidates() if results is None else results
    out = {"headlines": headline_table(results), "quick-rows": quick_rows_note(results),
           "kernel-twins": kernel_twins()}
    out.update({f"verdict-{family}": fc.verdict for family, fc in build_claims(results).items()})
    return out


def render_readme(text, results=None):
    """``text`` (the README) with its headline table and claim spans regenerated, and the claims it now shows."""
    claims = readme_claims(results)
    shown = {}
    if _layout.README_START in text and _layout.README_END in text:
        head, rest = text.split(_layout.README_START, 1)
        _, tail = rest.split(_layout.README_END, 1)
        text = f"{head}{_layout.README_START}\n{claims['headlines'].text}\n{_layout.README_END}{tail}"
        shown["headlines"] = claims["headlines"]

    def replace(match):
        claim = claims.get(match["id"])
        if claim is None:
            return match[0]
        shown[match["id"]] = claim
        return f"<!-- claim:{match['id']} -->{claim.text}<!-- /claim:{match['id']} -->"

    return CLAIM_SPAN.sub(replace, text), shown


def update_readme(results=None):
    """Rewrite the README's generated spans from the results on disk; returns the claims it shows."""
    if not _layout.README.exists():
        return {}
    old = _layout.README.read_text()
    text, shown = render_readme(old, results)
    if text != old:
        _layout.README.write_text(text)
    return shown
