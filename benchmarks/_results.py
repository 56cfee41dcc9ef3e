"""The committed benchmark results as records: one :class:`Result` per ``NAME.json``, its mode and its family."""

import json
from dataclasses import dataclass
from pathlib import Path

from benchmarks import _layout

# Result name prefix -> the method family (package) it measures; the longest matching prefix wins.
FAMILY_OF = {"smave": "sdr", "sdr": "sdr", "prbast": "spanning_trees", "bast": "spanning_trees",
             "spanning": "spanning_trees", "mixconfig": "configurations", "configurations": "configurations",
             "iv": "iv", "ceo": "topology", "topology": "topology", "ma3s": "annotation", "annotation": "annotation",
             "twinquant": "quantization", "wush": "quantization", "quantization": "quantization",
             "quantize_model": "quantization", "int4": "quantization",
             "transport": "transport", "lot": "transport", "w4a8": "quantization",
             "minilm_readers": "ecosystem", "skorch": "ecosystem", "scaleout": "ecosystem", "kernels": "ecosystem"}

# The families in the order the README, REPORT.md and the docs list them, with a reader's title.
FAMILIES = {"sdr": "Sufficient dimension reduction", "spanning_trees": "Spanning-tree regression",
            "configurations": "Configuration mixing", "iv": "Instrumental-variable regression",
            "topology": "Collapsed effective operators", "annotation": "Active repeated annotation",
            "quantization": "4-bit weight quantization", "transport": "Active optimal transport",
            "ecosystem": "Ecosystem: scaling out, training loops, readers"}


METHOD_FAMILIES = [f for f in FAMILIES if f != "ecosystem"]  # the families with an estimator of their own


def family_of(name):
    """The method family of a result name (``smave_quick`` -> ``sdr``), ``"?"`` when none matches."""
    for prefix in sorted(FAMILY_OF, key=len, reverse=True):
        if name.startswith(prefix):
            return FAMILY_OF[prefix]
    return "?"


@dataclass(frozen=True)
class Result:
    """One results file: ``folder/NAME.json`` (its payload) and the ``NAME.md`` beside it."""

    name: str
    payload: dict
    folder: Path
    markdown: str = ""

    @property
    def rows(self):
        return [r for r in self.payload.get("rows") or [] if isinstance(r, dict)]

    @property
    def base(self):
        """The benchmark's name: ``twinquant_quick`` -> ``twinquant``."""
        return self.name.removesuffix("_quick")

    @property
    def family(self):
        return family_of(self.name)

    @property
    def mode(self):
        """``"quick"`` when the command that wrote it ran with ``--quick`` (reduced grids and seeds), else
        ``"full"``."""
        return "quick" if "--quick" in str(self.payload.get("command", "")) else "full"

    @property
    def date(self):
        return str(self.payload.get("date", "?"))

    @property
    def command(self):
        return str(self.payload.get("command", "?"))

    def path(self, suffix=".json"):
        """The results file (``.json``, ``.md``) relative to the repository root where it lies inside it."""
        path = self.folder / f"{self.name}{suffix}"
        try:
            return path.relative_to(_layout.ROOT)
        except ValueError:  # results outside the repository (the report's tests)
            return path

    def staleness(self):
        """Why this result no longer describes its family's code, in words, or None
        (:func:`benchmarks._stamp.staleness`, against the repository at ``_layout.ROOT``)."""
        from benchmarks._stamp import staleness

        return staleness(self.payload, self.family, _layout.ROOT)

    @property
    def stale(self):
        return self.staleness() is not None

    @property
    def commit(self):
        return str(self.payload.get("commit") or "")

    def source(self, index, column):
        """Where a claim's number comes from: this file, row ``index``, ``column``."""
        return {"file": self.path().as_posix(), "row": index, "column": column}


def load_results(folder):
    """Every result in ``folder`` (checkpoints, run records and the claims file are no results)."""
    results = []
    for path in sorted(Path(folder).glob("*.json")) if Path(folder).exists() else []:
        if path.name.endswith(".partial.json") or path.name.startswith("_") or path == _layout.CLAIMS_FILE:
            continue
        try:
            payload = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            print(f"skipping unreadable {path.name}: {exc}")
            continue
        if isinstance(payload, dict):
            md = path.with_suffix(".md")
            results.append(Result(path.stem, payload, Path(folder), md.read_text() if md.exists() else ""))
    return results


def candidates():
    """Every result on disk: the full-mode folder's, then the quick folder's."""
    return load_results(_layout.RESULTS) + load_results(_layout.QUICK)
