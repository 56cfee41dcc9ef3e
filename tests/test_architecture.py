"""The package's shape: no import circles (module-level or inside functions), small files, one kernel folder per
family."""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Source folder -> the module prefix it installs as (kernels/ is mapped to sklearn_frontier.kernels).
SOURCES = {ROOT / "sklearn_frontier": "sklearn_frontier", ROOT / "kernels": "sklearn_frontier.kernels"}
MAX_LINES = 700


def _modules():
    """{module name: (path, is_package)} for every .py file of the package."""
    out = {}
    for folder, prefix in SOURCES.items():
        for path in folder.rglob("*.py"):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            out[".".join([prefix, *parts])] = (path, is_package)
    return out


def _import_graph():
    """Edges A -> B for every import statement of A (at any depth: lazy imports inside functions count too).

    ``from pkg import name`` points at ``pkg.name`` when that is a module, else at ``pkg``. An import of one of
    the importer's own parent packages is not an edge: Python runs a package's ``__init__`` before any of its
    modules, so that dependency exists whatever the code says and cannot be removed by design.
    """
    modules = _modules()
    graph = {name: set() for name in modules}
    for name, (path, is_package) in modules.items():
        package = name if is_package else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - node.level + 1]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module
                for alias in node.names:
                    sub = f"{mod}.{alias.name}"
                    targets.append(sub if sub in modules else mod)
            for target in targets:
                if target in modules and target != name and not name.startswith(target + "."):
                    graph[name].add(target)
    return graph


def _cycles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_import_graph_has_no_cycle():
    graph = _import_graph()
    assert len(graph) > 50 and sum(map(len, graph.values())) > 100  # the walk sees the package
    assert _cycles(graph) == []


FAMILY_PACKAGES = ("sdr", "spanning_trees", "configurations", "iv", "topology", "annotation", "quantization",
                   "transport")


def _family(module):
    """The method family a module of ``sklearn_frontier`` belongs to, or None (utils, datasets, kernels...)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "sklearn_frontier" and parts[1] in FAMILY_PACKAGES else None


def test_no_family_imports_another_familys_private_module():
    """Shared plumbing lives in utils/: a family that reaches into another family's private module ties the two
    together by accident (the atomic state files once lived in the annotation family)."""
    crossings = sorted(
        f"{source} -> {target}" for source, targets in _import_graph().items() for target in targets
        if _family(source) and _family(target) and _family(source) != _family(target)
        and any(part.startswith("_") for part in target.split(".")[2:]))
    assert crossings == []


def test_cycle_detector_finds_a_planted_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


@pytest.mark.parametrize("folder", [*sorted(SOURCES, key=str), ROOT / "benchmarks"], ids=lambda p: p.name)
def test_no_source_file_is_over_the_size_limit(folder):
    long = {str(p.relative_to(ROOT)): n for p in folder.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}, f"split these files (over {MAX_LINES} lines): {long}"


def test_kernels_folder_has_one_subpackage_per_family():
    from sklearn_frontier.kernels import KERNEL_MODULES

    shared = ("__init__.py", "_dispatch.py", "_validation.py")  # the dispatch point and the input coercion
    loose = sorted(p.name for p in (ROOT / "kernels").glob("*.py") if p.name not in shared)
    assert loose == [], f"kernel modules outside a family folder: {loose}"
    for family in KERNEL_MODULES:
        files = {p.name for p in (ROOT / "kernels" / family).glob("*.py")}
        assert {"__init__.py", "_api.py", "_reference.py"} <= files, family
        # _torch.py: torch's own kernels as a backend (kernels/quantization: the CPU int4 op and int8 GEMM); a
        # family's public wrappers may be split by theme into _api_<theme>.py, and pieces that two twins share
        # (so that they differ only where the backends do) into _<theme>_parts.py
        known = {"__init__.py", "_api.py", "_reference.py", "_numba.py", "_triton.py", "_torch.py"}
        extra = {f for f in files - known if not (f.startswith("_api_") or f.endswith("_parts.py"))}
        assert extra == set(), (family, files)


def _is_thin(path):
    """A package ``__init__`` that only documents, imports and lists (``__all__``)."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            continue
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["__all__"]:
            continue
        return False
    return True


THIN_INITS = [*sorted((ROOT / "kernels").glob("*/__init__.py")), ROOT / "benchmarks" / "__init__.py"]


@pytest.mark.parametrize("init", THIN_INITS, ids=lambda p: p.parent.name)
def test_kernel_family_packages_only_import_and_list(init):
    """Wrappers and registrations live in ``_api.py``; the package re-exports them."""
    assert _is_thin(init), f"{init.relative_to(ROOT)} holds code; move it to _api.py"


@pytest.mark.parametrize("folder", ["sklearn_frontier", "kernels", "benchmarks", "tests", "examples"])
def test_no_file_is_named_after_a_ticket(folder):
    named = [str(p.relative_to(ROOT)) for p in (ROOT / folder).rglob("*.py") if re.search(r"issue_?\d+", p.name)]
    assert named == [], f"name these files after what they hold: {named}"
