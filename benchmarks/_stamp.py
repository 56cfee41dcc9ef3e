"""The stamp every results file carries: which code measured it and on which machine.

:func:`run_stamp` is taken once per process, when the benchmark layer is imported (the start of a run): the commit
checked out and the source files that differed from it then. :func:`machine_stamp` describes the machine when the
results are written: the CPU model, its SIMD level, the thread counts of torch, numba and the BLAS, the library
versions. The report reads both back to say which commit and CPU a number comes from and whether it is stale.
"""

import importlib.metadata
import os
import platform
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The folders whose uncommitted changes make a measurement unreproducible from its commit (results are no code).
SOURCE_FOLDERS = ("sklearn_frontier", "kernels", "benchmarks")
NOT_SOURCE = ("benchmarks/results/",)

# SIMD levels from the strongest down: (level word, the /proc/cpuinfo flags that make it). A level is the first
# whose flags are all present; every flag listed here that the CPU has is recorded beside it.
SIMD_LEVELS = (("amx", ("amx_tile", "amx_int8")), ("avx512_bf16", ("avx512_bf16",)),
               ("avx512_vnni", ("avx512_vnni",)), ("avx512f", ("avx512f",)), ("avx2", ("avx2", "fma")),
               ("avx", ("avx",)), ("sse4_2", ("sse4_2",)), ("neon", ("asimd",)))
SIMD_FLAGS = tuple(dict.fromkeys(f for _, flags in SIMD_LEVELS for f in flags)) + ("avx_vnni", "avx512bw",
                                                                                  "avx512_fp16", "amx_bf16")

LIBRARIES = ("numpy", "scipy", "scikit-learn", "torch", "numba", "threadpoolctl", "sklearn_frontier")


def _git(*args, cwd=ROOT):
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None


def _dirty_paths(cwd=ROOT):
    """Source files (:data:`SOURCE_FOLDERS`) that differ from HEAD: modified, staged, deleted or untracked."""
    out = _git("status", "--porcelain", "--untracked-files=all", "--", *SOURCE_FOLDERS, cwd=cwd)
    if out is None:
        return None
    paths = []
    for line in out.splitlines():
        path = line[3:].split(" -> ")[-1].strip().strip('"')
        if path and not path.startswith(NOT_SOURCE) and "__pycache__" not in path:
            paths.append(path)
    return sorted(paths)


def take_run_stamp(cwd=ROOT):
    """``{"commit": full hash of HEAD or None, "dirty_paths": [...] or None}`` for the tree at ``cwd`` now."""
    head = _git("rev-parse", "HEAD", cwd=cwd)
    return {"commit": head.strip() if head else None, "dirty_paths": _dirty_paths(cwd)}


_RUN_STAMP = None


def run_stamp():
    """The stamp of this run, taken the first time it is asked for (the layer asks when it is imported)."""
    global _RUN_STAMP
    if _RUN_STAMP is None:
        _RUN_STAMP = take_run_stamp()
    return dict(_RUN_STAMP)


def _cpuinfo():
    try:
        return Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def cpu_model(text=None):
    """The CPU's model name (``/proc/cpuinfo``), else what :func:`platform.processor` says, else ``"unknown"``."""
    text = _cpuinfo() if text is None else text
    for line in text.splitlines():
        if line.startswith(("model name", "Model")) and ":" in line:
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine() or "unknown"


def simd(text=None):
    """``{"level": word, "flags": [...]}``: the strongest of :data:`SIMD_LEVELS` the CPU has and the flags
    behind it (``level`` is ``"baseline"`` when none, ``"unknown"`` without ``/proc/cpuinfo``)."""
    text = _cpuinfo() if text is None else text
    line = next((x for x in text.splitlines() if x.startswith(("flags", "Features")) and ":" in x), None)
    if line is None:
        return {"level": "unknown", "flags": []}
    have = set(line.split(":", 1)[1].split())
    level = next((word for word, flags in SIMD_LEVELS if set(flags) <= have), "baseline")
    return {"level": level, "flags": [f for f in SIMD_FLAGS if f in have]}


def _version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def threads():
    """The thread counts a measurement ran with: torch's, numba's, each BLAS's (threadpoolctl), the env caps."""
    out = {"cpu_count": os.cpu_count()}
    try:
        import torch

        out["torch"] = torch.get_num_threads()
    except ImportError:
        out["torch"] = None
    try:
        import numba

        out["numba"] = numba.get_num_threads()
    except ImportError:
        out["numba"] = None
    try:
        import threadpoolctl

        out["blas"] = [{k: d.get(k) for k in ("internal_api", "num_threads", "architecture")}
                       for d in threadpoolctl.threadpool_info()]
    except ImportError:
        out["blas"] = []
    out["env"] = {k: os.environ[k] for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                             "NUMBA_NUM_THREADS") if k in os.environ}
    return out


def machine_stamp():
    """The machine record of a results file (see the module doc)."""
    try:  # how busy the machine was (timings on a shared machine are read against it)
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = None
    return {"cpu_model": cpu_model(), "simd": simd(), "threads": threads(), "load_average_1_5_15_min": load,
            "versions": {name: _version(name) for name in LIBRARIES},
            "python": platform.python_version(), "platform": platform.platform(), "cpu_count": os.cpu_count()}


def stamp_line(payload, family=None):
    """One sentence naming the commit and the CPU of a results payload, and the uncommitted changes to
    ``family``'s source when it was measured (the other dirty paths are counted; the .json lists them all)."""
    commit, machine = payload.get("commit"), payload.get("machine") or {}
    if not commit or "cpu_model" not in machine:
        return "Measured before results were stamped (no commit or CPU recorded)."
    level = (machine.get("simd") or {}).get("level", "unknown")
    torch_threads = (machine.get("threads") or {}).get("torch")
    text = f"Measured at commit {commit[:12]} on CPU {machine['cpu_model']} (SIMD level {level}"
    text += f", torch threads {torch_threads})" if torch_threads is not None else ")"
    dirty = payload.get("dirty_paths") or []
    sources = family_sources(family) if family else ()
    own = [p for p in dirty if any(p.startswith(s + "/") for s in sources)]
    if own:
        text += f"; uncommitted changes to this family's source at the start: {', '.join(own)}"
    if len(dirty) > len(own):
        text += f"; {len(dirty) - len(own)} other uncommitted source files (listed in the .json)"
    return text + "."


# ------------------------------------------------------------------------------------------------- staleness
def family_sources(family, root=ROOT):
    """The source folders of a method family: its package under ``sklearn_frontier/`` and its ``kernels/``
    package, those that exist (the ecosystem benchmarks measure no family of their own: none)."""
    return tuple(p for p in (f"sklearn_frontier/{family}", f"kernels/{family}") if (Path(root) / p).is_dir())


_CHANGED = {}


def _code(text):
    """A Python source's code without its docstrings and comments (an AST dump), or None when it does not parse."""
    import ast

    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(
                getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree)


def _code_changed(root, commit, path):
    """Whether ``path`` differs between ``commit`` and HEAD in more than comments and docstrings."""
    old = _git("show", f"{commit}:{path}", cwd=root)
    new = _git("show", f"HEAD:{path}", cwd=root)
    if old is None or new is None or not path.endswith(".py"):
        return old != new  # added, deleted, or not Python: a change unless both are absent
    old_code, new_code = _code(old), _code(new)
    return old_code is None or old_code != new_code


def _changed_since(root, commit, paths):
    """The source files under ``paths`` whose code (not only comments or docstrings) differs between ``commit``
    and HEAD: a list, or None when git cannot tell (no repository here, or a commit it does not know)."""
    head = _git("rev-parse", "HEAD", cwd=root)
    key = (str(root), head, commit, paths)
    if key not in _CHANGED:
        if _git("cat-file", "-e", f"{commit}^{{commit}}", cwd=root) is None:
            _CHANGED[key] = None
        else:
            out = _git("diff", "--name-only", commit, "HEAD", "--", *paths, cwd=root) if paths else ""
            _CHANGED[key] = None if out is None else [
                p for p in out.split() if "__pycache__" not in p and _code_changed(root, commit, p)]
    return _CHANGED[key]


def staleness(payload, family, root=ROOT):
    """Why a results payload no longer describes its family's code, in words, or None when it does.

    Stale: no stamp (written before results were stamped); source files of the family that were uncommitted when
    it was measured; or a family source file whose code differs from the stamped commit's (an edit of comments or
    docstrings only changes no measurement). When git cannot read the stamped commit here (an export without
    history) nothing can be said, and None is returned.
    """
    commit = payload.get("commit")
    if not commit or "cpu_model" not in (payload.get("machine") or {}):
        return "no commit stamp (measured before results were stamped)"
    sources = family_sources(family, root)
    dirty = [p for p in payload.get("dirty_paths") or [] if any(p == s or p.startswith(s + "/") for s in sources)]
    if dirty:
        return f"measured with uncommitted changes to {', '.join(dirty)}"
    if not sources:
        return None
    changed = _changed_since(root, commit, sources)
    if changed:
        return f"{', '.join(sources)} changed after commit {commit[:12]}: the code of {', '.join(changed)}"
    if changed is None and _git("rev-parse", "HEAD", cwd=root) is not None:
        return f"commit {commit[:12]} is not in this repository's history"
    return None
