"""Code and docs speak of this repository only: no ticket numbers, no spec sections, no paths outside the tree."""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# A reader of this repository cannot open an issue tracker entry, a design spec section or a sibling folder.
OUTSIDE_REFERENCE = re.compile("|".join([
    r"\b[Ii]ssues? ?#?\d+",  # a ticket
    r"\N{SECTION SIGN} ?\d",  # a spec section
    r"\.\./shared\b", r"\bshared[/]design\b", r"\bdesign[/]\w+\.md\b",  # the design notes beside the repository
]))
SUFFIXES = {".py", ".rst", ".md", ".toml", ".cfg", ".txt", ".sh", ""}


def _tracked_text_files():
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    for name in files:
        path = ROOT / name
        if path.suffix in SUFFIXES and path.is_file() and "results" not in path.parts and path != Path(__file__):
            yield path


def test_no_reference_outside_the_repository():
    hits = []
    for path in _tracked_text_files():
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if OUTSIDE_REFERENCE.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    assert not hits, "\n".join(hits)


# The samples are assembled at run time so that this file does not itself hold the references it forbids.
SECTION = "\N{SECTION SIGN}"
SAMPLES = [f"issue {20}", f"issue #{12}", f"spec {SECTION}3", f"{SECTION}4.2",
           "/".join(["..", "shared", "design", "iv.md"])]


@pytest.mark.parametrize("name", SAMPLES)
def test_the_pattern_catches_outside_references(name):
    assert OUTSIDE_REFERENCE.search(name)
