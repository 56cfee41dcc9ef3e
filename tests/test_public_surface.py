"""The public surface: one list of exports per package, every listed name importable, examples and doctests on
public paths only."""

import ast
import importlib
import re
from pathlib import Path

import pytest

import sklearn_frontier

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = list(sklearn_frontier._EXPORTS)


@pytest.mark.parametrize("package", PACKAGES)
def test_top_level_reads_each_package_list(package):
    """The top level's lazy table is read from each package's own ``__all__``, so the two cannot drift."""
    module = importlib.import_module(package)
    assert sklearn_frontier._EXPORTS[package] == list(module.__all__)
    for name in module.__all__:
        assert getattr(module, name) is getattr(sklearn_frontier, name), name


def test_every_top_level_name_resolves_and_is_listed_by_dir():
    for name in sklearn_frontier.__all__:
        assert hasattr(sklearn_frontier, name), name
    assert set(sklearn_frontier.__all__) <= set(dir(sklearn_frontier))


def test_import_is_cheap():
    """``import sklearn_frontier`` reads the lists without importing torch, numba or POT."""
    import subprocess
    import sys

    code = "import sys, sklearn_frontier; print(sorted({'torch', 'numba', 'ot'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("package", PACKAGES)
def test_lazy_packages_list_their_names_in_dir(package):
    module = importlib.import_module(package)
    assert set(module.__all__) <= set(dir(module))


def _private_imports(source):
    """``module.name`` strings of every import of a private sklearn_frontier path in ``source``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("sklearn_frontier"):
            out += [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names if a.name.startswith("sklearn_frontier")]
    return [path for path in out if any(part.startswith("_") for part in path.split("."))]


@pytest.mark.parametrize("example", sorted((ROOT / "examples").glob("*.py")), ids=lambda p: p.name)
def test_examples_import_public_paths_only(example):
    assert _private_imports(example.read_text()) == []


_DOCTEST_LINE = re.compile(r"^\s*(?:>>>|\.\.\.) ?(.*)$")


def _doctest_sources():
    for folder in ("sklearn_frontier", "kernels"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            lines = [m.group(1) for m in map(_DOCTEST_LINE.match, path.read_text().splitlines()) if m]
            imports = "\n".join(line.strip() for line in lines if re.match(r"\s*(from|import) ", line))
            if imports:
                yield path, imports


@pytest.mark.parametrize("path,imports", list(_doctest_sources()), ids=lambda v: getattr(v, "name", ""))
def test_doctests_import_public_paths_only(path, imports):
    assert _private_imports(imports) == [], path.relative_to(ROOT)
