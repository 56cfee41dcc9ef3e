import numpy as np
import pytest
from sklearn_frontier.kernels import get_implementation, local_scaling_weights
from sklearn_frontier.kernels._dispatch import register_kernel

import sklearn_frontier
from sklearn_frontier import config_context, get_config, set_config


def test_config_context_restores():
    before = get_config()["backend"]
    with config_context(backend="reference"):
        assert get_config()["backend"] == "reference"
        assert get_implementation("local_scaling_weights")[0] == "reference"
    assert get_config()["backend"] == before


def test_numpy_alias_and_bad_backend():
    with config_context(backend="numpy"):
        assert get_config()["backend"] == "reference"
    with pytest.raises(ValueError, match="backend"):
        set_config(backend="cuda")
    with pytest.raises(TypeError, match="backend"):
        set_config(backend=3)


def test_env_variable_overrides(monkeypatch):
    monkeypatch.setenv("SKLEARN_FRONTIER_BACKEND", "reference")
    assert get_config()["backend"] == "reference"
    monkeypatch.setenv("SKLEARN_FRONTIER_BACKEND", "bogus")
    with pytest.raises(ValueError, match="backend"):
        get_config()


def test_auto_prefers_numba_on_cpu():
    with config_context(backend="auto"):
        assert get_implementation("local_scaling_weights")[0] == "numba"


def test_triton_without_twin_falls_back_to_numba():
    with config_context(backend="triton"):
        assert get_implementation("local_scaling_weights")[0] == "numba"


def test_triton_unavailable_raises_naming_it(monkeypatch):
    register_kernel("_test_triton_only", reference="numpy:add", triton="numpy:add")
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    monkeypatch.setattr("sklearn_frontier.kernels._dispatch.cuda_available", lambda: False)
    with config_context(backend="triton"), pytest.raises(RuntimeError, match="TRITON_INTERPRET|triton"):
        get_implementation("_test_triton_only")


def test_public_kernel_runs_each_backend():
    dist = np.array([[1.0, 2.0]])
    idx = np.array([[0, 0]])
    out = {}
    for backend in ("reference", "numba"):
        with config_context(backend=backend):
            out[backend] = local_scaling_weights(dist, idx, np.array([2.0]))
    np.testing.assert_allclose(out["reference"], np.exp(-np.array([[1.0, 4.0]]) / 4.0))
    np.testing.assert_array_equal(out["reference"], out["numba"])


def test_kernel_rejects_bad_shapes():
    with pytest.raises(ValueError, match="shape"):
        local_scaling_weights(np.ones((2, 2)), np.zeros((2, 3), dtype=int), np.ones(2))
    with pytest.raises(ValueError, match="sigma"):
        local_scaling_weights(np.ones((2, 2)), np.full((2, 2), 5), np.ones(2))


def test_top_level_lazy_exports_resolve():
    for name in sklearn_frontier.__all__:
        assert getattr(sklearn_frontier, name) is not None
    with pytest.raises(AttributeError):
        sklearn_frontier.does_not_exist  # noqa: B018


def test_resolved_implementation_pickles_by_path():
    import pickle

    for backend in ("reference", "numba"):
        _, func = get_implementation("local_scaling_weights", backend)
        clone = pickle.loads(pickle.dumps(func))
        args = (np.array([[1.0]]), np.array([[0]]), np.array([1.0]))
        np.testing.assert_array_equal(clone(*args), func(*args))
