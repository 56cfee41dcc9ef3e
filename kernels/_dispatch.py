"""One dispatch point for every numeric kernel.

A kernel is registered once with its reference implementation (numpy or torch, the oracle) and its
fast twins (numba on CPU, Triton on CUDA), given as ``"module:function"`` strings so that numba and
triton are imported only when a twin actually runs. :func:`get_config` ``["backend"]`` picks the twin.

The twin test (``tests/test_kernels.py``) checks every twin of every registered kernel against its reference, on
inputs and with tolerances that live with the tests (``tests/kernel_inputs/<family>.py``, keyed by kernel name).
"""

import functools
import importlib
import importlib.util
import os
import sys
from dataclasses import dataclass, field

from sklearn_frontier._config import get_config

__all__ = [
    "KernelSpec",
    "register_kernel",
    "registered_kernels",
    "get_implementation",
    "available_backends",
    "triton_available",
    "triton_interpret",
    "cuda_available",
]

_REGISTRY = {}


@dataclass(frozen=True)
class KernelSpec:
    """Everything known about one kernel: its implementations, as ``"module:function"`` paths."""

    name: str
    reference: str
    numba: str | None = None
    triton: str | None = None
    doc: str = ""
    extra_backends: dict = field(default_factory=dict)  # other named backends, e.g. {"torch": "module:function"}


def _load(path):
    module, _, func = path.partition(":")
    return getattr(importlib.import_module(module), func)


# Package and device availability does not change within a process: resolved once, not on every kernel call.
@functools.cache
def triton_available():
    """True when the ``triton`` package can be imported."""
    return importlib.util.find_spec("triton") is not None


def triton_interpret():
    """True when Triton kernels run in the CPU interpreter (``TRITON_INTERPRET=1``)."""
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


@functools.cache
def cuda_available():
    """True when torch is imported-able and sees a CUDA device (torch is not imported otherwise)."""
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return bool(torch.cuda.is_available())


@functools.cache
def _numba_available():
    return importlib.util.find_spec("numba") is not None


def available_backends(name):
    """Backends that can run kernel ``name`` on this machine, best first."""
    spec = _REGISTRY[name]
    out = []
    if spec.triton is not None and triton_available() and (cuda_available() or triton_interpret()):
        out.append("triton")
    if spec.numba is not None and _numba_available():
        out.append("numba")
    out.append("reference")
    return out


def _resolve_backend(spec, backend):
    if backend == "auto":
        if spec.triton is not None and triton_available() and cuda_available() and not triton_interpret():
            return "triton"
        if spec.numba is not None and _numba_available():
            return "numba"
        return "reference"
    if backend == "reference":
        return "reference"
    if backend == "numba":
        if spec.numba is None:
            return "reference"  # kernel has no numba twin by design (GEMM-bound torch code)
        if not _numba_available():
            raise RuntimeError(f"backend='numba' was requested for kernel {spec.name!r} but numba is not installed.")
        return "numba"
    if backend == "triton":
        if spec.triton is None:
            # By design (documented per kernel): launch-bound kernels have no Triton twin; use the CPU twin.
            return _resolve_backend(spec, "numba")
        if not triton_available():
            raise RuntimeError(
                f"backend='triton' was requested for kernel {spec.name!r} but triton is not installed "
                "(pip install 'sklearn-frontier[triton]')."
            )
        if not (cuda_available() or triton_interpret()):
            raise RuntimeError(
                f"backend='triton' was requested for kernel {spec.name!r} but there is no CUDA device; "
                "set TRITON_INTERPRET=1 before importing to run Triton kernels in the CPU interpreter."
            )
        return "triton"
    raise ValueError(f"Unknown backend {backend!r}.")


def get_implementation(name, backend=None):
    """Return ``(backend, function)`` for kernel ``name`` under ``backend`` (default: the config)."""
    try:
        spec = _REGISTRY[name]
    except KeyError:
        raise KeyError(f"No kernel named {name!r}; registered: {sorted(_REGISTRY)}") from None
    resolved = _resolve_backend(spec, backend or get_config()["backend"])
    path = {"reference": spec.reference, "numba": spec.numba, "triton": spec.triton}[resolved]
    return resolved, _Implementation(path, guard_threads=resolved == "numba")


class _Implementation:
    """A resolved kernel implementation: callable, and picklable by its ``"module:function"`` path.

    Estimators may keep one on an object that joblib ships to another process (loky, dask); it
    re-imports there instead of pickling a jitted function. For numba twins it also keeps torch's
    thread count across the call (numba's OpenMP layer may resize the pool both share).
    """

    __slots__ = ("path", "guard_threads", "func")

    def __init__(self, path, guard_threads=False):
        self.path = path
        self.guard_threads = guard_threads
        self.func = _load(path)

    def __call__(self, *args, **kwargs):
        if not self.guard_threads:
            return self.func(*args, **kwargs)
        torch = sys.modules.get("torch")
        n_threads = torch.get_num_threads() if torch is not None else None
        try:
            return self.func(*args, **kwargs)
        finally:
            if torch is not None and torch.get_num_threads() != n_threads:
                torch.set_num_threads(n_threads)

    def __reduce__(self):
        return (_Implementation, (self.path, self.guard_threads))

    def __repr__(self):
        return f"<kernel implementation {self.path}>"


def register_kernel(name, *, reference, numba=None, triton=None, extra_backends=None):
    """Register kernel ``name`` and return its public dispatching function.

    ``reference``, ``numba`` and ``triton`` are ``"module:function"`` paths with one signature.
    ``extra_backends`` maps further backend names to such paths (a library's own kernel, such as torch's int4
    matmul), kept on the spec for the kernel's wrapper to choose.
    The returned function takes the same arguments and runs the implementation chosen by the
    current ``backend`` setting.
    """
    reference_func = _load(reference)
    spec = KernelSpec(name=name, reference=reference, numba=numba, triton=triton, doc=reference_func.__doc__ or "",
                      extra_backends=dict(extra_backends or {}))
    _REGISTRY[name] = spec

    @functools.wraps(reference_func)
    def dispatch(*args, **kwargs):
        _, func = get_implementation(name)
        return func(*args, **kwargs)

    dispatch.__name__ = name
    dispatch.__qualname__ = name
    dispatch.kernel_spec = spec
    return dispatch


def registered_kernels():
    """All registered kernel specs, keyed by name (importing every kernel module first)."""
    from sklearn_frontier.kernels import _import_all_kernel_modules

    _import_all_kernel_modules()
    return dict(_REGISTRY)
