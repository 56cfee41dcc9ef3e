"""Every registered kernel: each available twin agrees with its reference on random inputs."""

import numpy as np
import pytest
from sklearn_frontier.kernels import registered_kernels
from sklearn_frontier.kernels._dispatch import _load, triton_available

KERNELS = registered_kernels()
CASES = [(name, backend) for name, spec in sorted(KERNELS.items())
         for backend in ("numba", "triton") if getattr(spec, backend) is not None]


def _assert_close(expected, actual, spec):
    if spec.compare is not None:
        spec.compare(expected, actual)
        return
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected)
        for e, a in zip(expected, actual):
            _assert_close(e, a, spec)
        return
    if hasattr(expected, "detach"):
        import torch

        torch.testing.assert_close(actual, expected, rtol=spec.rtol, atol=spec.atol)
        return
    expected, actual = np.asarray(expected), np.asarray(actual)
    assert actual.shape == expected.shape
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != reference {expected.dtype}"
    if np.issubdtype(expected.dtype, np.floating):
        np.testing.assert_allclose(actual, expected, rtol=spec.rtol, atol=spec.atol)
    else:
        np.testing.assert_array_equal(actual, expected)


def test_some_kernels_are_registered():
    assert "local_scaling_weights" in KERNELS
    assert CASES, "no fast twin registered"


@pytest.mark.parametrize("name,backend", CASES, ids=[f"{n}-{b}" for n, b in CASES])
def test_twin_matches_reference(name, backend):
    spec = KERNELS[name]
    if backend == "numba":
        import numba

        assert not numba.config.DISABLE_JIT, "twin tests must run the jitted code (unset NUMBA_DISABLE_JIT)"
    if backend == "triton":
        if not triton_available():
            pytest.skip("triton is not installed (pip install 'sklearn-frontier[triton]')")
    assert spec.make_inputs is not None, f"kernel {name} registers no make_inputs for its twin test"
    reference, twin = _load(spec.reference), _load(getattr(spec, backend))
    rng = np.random.default_rng(sum(map(ord, name)))
    for _ in range(20 if backend == "numba" else 3):
        args, kwargs = spec.make_inputs(rng)
        _assert_close(reference(*args, **kwargs), twin(*args, **kwargs), spec)


@pytest.mark.parametrize("module", ["_dispatch", *__import__("sklearn_frontier.kernels").kernels.KERNEL_MODULES,
                                    "annotation._reference"])
def test_kernel_module_doctests(module):
    """kernels/ installs as sklearn_frontier.kernels, so its doctests run here, not via --doctest-modules."""
    import doctest
    import importlib

    mod = importlib.import_module(f"sklearn_frontier.kernels.{module}")
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} doctest failure(s) in {mod.__name__}"
