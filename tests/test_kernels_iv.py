"""The fixed-effect demeaning kernel: numba twin equals the numpy reference, both equal the dummy regression."""

import numpy as np
import pytest
from sklearn_frontier.kernels.iv import _numba as iv_numba
from sklearn_frontier.kernels.iv import _reference as iv_reference
from sklearn_frontier.kernels.iv import demean

from sklearn_frontier import config_context


@pytest.fixture(autouse=True)
def _jit_on():
    import numba

    assert not numba.config.DISABLE_JIT, "kernel tests must run the jitted code (unset NUMBA_DISABLE_JIT)"


def _dummy_residual(A, codes, w):
    """Weighted least-squares residual of A on the dummies of every fixed effect (the exact answer)."""
    D = np.hstack([np.eye(int(c.max()) + 1)[c] for c in codes.T])
    sw = np.sqrt(w)
    coef = np.linalg.lstsq(sw[:, None] * D, sw[:, None] * A, rcond=None)[0]
    return A - D @ coef


def _problem(seed, n=300, levels=(12, 7, 5), m=3):
    rng = np.random.default_rng(seed)
    codes = np.column_stack([rng.integers(0, g, n) for g in levels])
    A = rng.normal(size=(n, m)) + codes @ rng.normal(size=(len(levels), m))
    w = rng.uniform(0.2, 3.0, n)
    return A, codes, w


@pytest.mark.parametrize("levels", [(12,), (12, 7), (12, 7, 5)])
@pytest.mark.parametrize("weighted", [False, True])
def test_twins_agree_and_equal_dummy_regression(levels, weighted):
    A, codes, w = _problem(0, levels=levels)
    w = w if weighted else np.ones_like(w)
    ref, ref_sweeps, ref_ok = iv_reference.demean(A, codes, w, 1e-13, 10_000)
    fast, fast_sweeps, fast_ok = iv_numba.demean(A, codes, w, 1e-13, 10_000)
    assert ref_ok and fast_ok and ref_sweeps == fast_sweeps
    np.testing.assert_allclose(fast, ref, rtol=1e-10, atol=1e-11)
    np.testing.assert_allclose(ref, _dummy_residual(A, codes, w), atol=1e-9)
    if len(levels) == 1:
        assert ref_sweeps == 1  # one fixed effect: one exact sweep


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_public_wrapper_dispatch_and_zero_weights(backend):
    A, codes, w = _problem(1, levels=(9, 4))
    w[:20] = 0.0  # zero-weight rows are demeaned by the other rows' means and do not move them
    with config_context(backend="reference" if backend == "numpy" else "numba"):
        out, sweeps, ok = demean(A, codes, w, tol=1e-13)
    assert ok and sweeps >= 1
    np.testing.assert_allclose(out, _dummy_residual(A, codes, w), atol=1e-9)
    # the weighted means of every level of every fixed effect are zero after demeaning
    for c in codes.T:
        sums = np.array([np.bincount(c, weights=w * out[:, j]) for j in range(out.shape[1])])
        np.testing.assert_allclose(sums, 0.0, atol=1e-9)


def test_non_convergence_is_reported():
    A, codes, w = _problem(2, levels=(40, 35))
    _, sweeps, ok = iv_numba.demean(A, codes, w, 1e-15, 2)
    _, ref_sweeps, ref_ok = iv_reference.demean(A, codes, w, 1e-15, 2)
    assert not ok and not ref_ok and sweeps == ref_sweeps == 2


def test_wrapper_rejects_bad_shapes():
    with pytest.raises(ValueError, match="same number of rows"):
        demean(np.zeros((3, 1)), np.zeros((2, 1), dtype=int))
    with pytest.raises(ValueError, match="non-negative"):
        demean(np.zeros((2, 1)), np.array([[0], [-1]]))
    with pytest.raises(ValueError, match="w must have shape"):
        demean(np.zeros((2, 1)), np.zeros((2, 1), dtype=int), np.ones(3))
