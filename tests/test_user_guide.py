"""The written user guide: every family has a page in the teaching order, and its code runs as shown."""

import re
import warnings
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guide"
FAMILIES = ("sdr", "spanning_trees", "configurations", "iv", "topology", "annotation", "quantization", "transport")

# The order a reader meets: the problem, an example to copy, the idea, the knobs, the cost, the verdict, the limits.
SECTIONS = (
    "When to use it",
    "A minimal example",
    "How it works",
    "Parameters that matter",
    "Scaling and cost",
    "Against the strongest baseline",
    "Limitations",
)

_HEADING = re.compile(r"^(?P<title>[^\s].*)\n(?P<rule>=+)$", re.MULTILINE)
_CODE = re.compile(r"^\.\. code-block:: python\n((?:[ \t]+:.*\n)*)\n((?:(?:[ \t]+.*)?\n)+)", re.MULTILINE)


def _page(family):
    path = GUIDE / f"{family}.rst"
    assert path.exists(), f"no written guide page for {family}: {path}"
    return path.read_text()


def _sections(text):
    # Section titles are underlined with '='; the page title is over- and underlined, so it is skipped here.
    titles = []
    for match in _HEADING.finditer(text):
        start = match.start()
        previous = text[:start].rstrip("\n").rsplit("\n", 1)[-1]
        if set(previous) == {"="}:
            continue
        titles.append(match.group("title").strip())
    return titles


def _code_blocks(text):
    blocks = []
    for match in _CODE.finditer(text):
        lines = match.group(2).splitlines()
        indent = min(len(line) - len(line.lstrip()) for line in lines if line.strip())
        blocks.append("\n".join(line[indent:] for line in lines))
    return blocks


@pytest.mark.parametrize("family", FAMILIES)
def test_page_has_the_teaching_order(family):
    text = _page(family)
    assert f".. _user_guide_{family}:" in text
    titles = _sections(text)
    positions = [titles.index(name) for name in SECTIONS if name in titles]
    missing = [name for name in SECTIONS if name not in titles]
    assert not missing, f"{family} guide lacks sections {missing}"
    assert positions == sorted(positions), f"{family} guide sections out of order: {titles}"
    assert f"../benchmarks/verdicts/{family}.inc" in text, "the verdict comes from the generated include"


@pytest.mark.parametrize("family", FAMILIES)
def test_page_code_runs_as_shown(family, tmp_path, monkeypatch):
    blocks = _code_blocks(_page(family))
    assert blocks, f"{family} guide has no runnable example"
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": f"user_guide_{family}"}
    with warnings.catch_warnings():
        # a reader who pastes the page sees no warning (ConvergenceWarning included) unless the page shows one on
        # purpose, and then it catches it itself
        warnings.simplefilter("error", UserWarning)
        for number, source in enumerate(blocks, start=1):
            code = compile(source, f"docs/guide/{family}.rst[block {number}]", "exec")
            exec(code, namespace)  # noqa: S102 - the page's own code, run as a reader would paste it
