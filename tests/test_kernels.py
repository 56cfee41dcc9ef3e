"""Every registered kernel: each available twin agrees with its reference on random inputs."""

import numpy as np
import pytest
from kernel_inputs import all_cases
from sklearn_frontier.kernels import KERNEL_MODULES, registered_kernels
from sklearn_frontier.kernels._dispatch import _load, triton_available

# The suite's own kernels (tests may register throwaway ones in the same registry).
KERNELS = {name: spec for name, spec in registered_kernels().items()
           if spec.reference.startswith("sklearn_frontier.kernels.")}
INPUTS = all_cases()
CASES = [(name, backend) for name, spec in sorted(KERNELS.items())
         for backend in ("numba", "triton") if getattr(spec, backend) is not None]


def _assert_close(expected, actual, case):
    if case.compare is not None:
        case.compare(expected, actual)
        return
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected)
        for e, a in zip(expected, actual):
            _assert_close(e, a, case)
        return
    if hasattr(expected, "detach"):
        import torch

        torch.testing.assert_close(actual, expected, rtol=case.rtol, atol=case.atol)
        return
    expected, actual = np.asarray(expected), np.asarray(actual)
    assert actual.shape == expected.shape
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != reference {expected.dtype}"
    if np.issubdtype(expected.dtype, np.floating):
        np.testing.assert_allclose(actual, expected, rtol=case.rtol, atol=case.atol)
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
    case = INPUTS[name]
    reference, twin = _load(spec.reference), _load(getattr(spec, backend))
    rng = np.random.default_rng(sum(map(ord, name)))
    for _ in range(20 if backend == "numba" else 3):
        args, kwargs = case.make_inputs(rng)
        _assert_close(reference(*args, **kwargs), twin(*args, **kwargs), case)


def test_every_registered_kernel_has_twin_inputs():
    assert set(KERNELS) - set(INPUTS) == set(), "kernels without inputs in tests/kernel_inputs/"
    assert set(INPUTS) - set(KERNELS) == set(), "inputs for kernels that are not registered"


@pytest.mark.parametrize("module", ["_dispatch", *KERNEL_MODULES, *(f"{m}._api" for m in KERNEL_MODULES),
                                    "annotation._reference"])
def test_kernel_module_doctests(module):
    """kernels/ installs as sklearn_frontier.kernels, so its doctests run here, not via --doctest-modules."""
    import doctest
    import importlib

    mod = importlib.import_module(f"sklearn_frontier.kernels.{module}")
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} doctest failure(s) in {mod.__name__}"
