"""Known answers for the transport kernels, reference and numba twin alike (tests/test_kernels.py adds random twins)."""

import numpy as np
import pytest
from sklearn_frontier.kernels.transport import _numba as transport_numba
from sklearn_frontier.kernels.transport import _reference as transport_reference
from sklearn_frontier.kernels.transport import (
    barycentric_projection,
    mccann_interpolate,
    quantile_cell_means,
    sqeuclidean_cost,
)

from sklearn_frontier import config_context

IMPLEMENTATIONS = [transport_reference, transport_numba]
IDS = ["reference", "numba"]


@pytest.fixture(autouse=True)
def _jit_on():
    import numba

    assert not numba.config.DISABLE_JIT, "kernel tests must run the jitted code (unset NUMBA_DISABLE_JIT)"


def _ro(*arrays):
    out = []
    for a in arrays:
        a = np.ascontiguousarray(a, dtype=np.float64).copy()
        a.setflags(write=False)
        out.append(a)
    return out


@pytest.mark.parametrize("impl", IMPLEMENTATIONS, ids=IDS)
def test_cost_matches_pot_and_is_zero_on_coincident_points(impl):
    ot = pytest.importorskip("ot")
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(7, 3)) * 1e3, rng.normal(size=(5, 3)) * 1e3
    Y[2] = X[4]
    C = impl.sqeuclidean_cost(*_ro(X, Y))
    np.testing.assert_allclose(C, ot.dist(X, Y), rtol=1e-10)
    assert C[4, 2] == 0.0 and C.dtype == np.float64


@pytest.mark.parametrize("impl", IMPLEMENTATIONS, ids=IDS)
def test_barycentric_projection_of_a_permutation_plan(impl):
    rng = np.random.default_rng(1)
    m, d = 6, 2
    X, Y = rng.normal(size=(m, d)), rng.normal(size=(m, d))
    perm = rng.permutation(m)
    P = np.zeros((m, m))
    P[np.arange(m), perm] = 1.0 / m
    a = np.full(m, 1.0 / m)
    V = impl.barycentric_projection(*_ro(P, Y, a, X))
    np.testing.assert_allclose(V.reshape(m, d), (Y[perm] - X) * np.sqrt(1.0 / m), atol=1e-14)


@pytest.mark.parametrize("impl", IMPLEMENTATIONS, ids=IDS)
def test_barycentric_projection_splits_mass_and_zero_rows(impl):
    P = np.array([[0.25, 0.25], [0.0, 0.0]])
    Y = np.array([[0.0, 0.0], [2.0, 4.0]])
    X = np.array([[1.0, 1.0], [5.0, 5.0]])
    V = impl.barycentric_projection(*_ro(P, Y, np.array([0.25, 0.75]), X))
    np.testing.assert_allclose(V, [0.0, 0.5, 0.0, 0.0], atol=1e-15)  # (mean(Y) - x) * sqrt(.25); no-mass row 0


@pytest.mark.parametrize("impl", IMPLEMENTATIONS, ids=IDS)
def test_mccann_endpoints_and_midpoint(impl):
    X, T = np.array([[0.0, 1.0]]), np.array([[2.0, -1.0]])
    out = impl.mccann_interpolate(*_ro(X, T, np.array([0.0, 0.5, 1.0])))
    np.testing.assert_array_equal(out[:, 0], [[0.0, 1.0], [1.0, 0.0], [2.0, -1.0]])


@pytest.mark.parametrize("impl", IMPLEMENTATIONS, ids=IDS)
def test_quantile_cell_means_known_answers(impl):
    # measure: 1/4 at 0, 3/4 at 2; cells [0, .5], [.5, 1]: means (0 * .25 + 2 * .25) / .5 = 1 and 2
    out = impl.quantile_cell_means(*_ro(np.array([0.0, 2.0]), np.array([0.25, 0.75]), np.array([0.0, 0.5, 1.0])))
    np.testing.assert_allclose(out, [1.0, 2.0], atol=1e-15)
    # cells finer than the atoms reproduce the quantile function exactly
    x = np.array([-1.0, 0.5, 3.0])
    out = impl.quantile_cell_means(*_ro(x, np.full(3, 1 / 3), np.linspace(0, 1, 7)))
    np.testing.assert_allclose(out, np.repeat(x, 2), atol=1e-13)
    # one cell: the mean of the measure
    b = np.array([0.2, 0.3, 0.5])
    out = impl.quantile_cell_means(*_ro(x, b, np.array([0.0, 1.0])))
    np.testing.assert_allclose(out, [b @ x], atol=1e-14)


def test_public_wrappers_accept_any_layout_and_dispatch_both_backends():
    rng = np.random.default_rng(2)
    X = np.asfortranarray(rng.normal(size=(9, 3)))
    Y = rng.normal(size=(4, 3)).astype(np.float32)
    with config_context(backend="reference"):
        ref = sqeuclidean_cost(X, Y)
    with config_context(backend="numba"):
        fast = sqeuclidean_cost(X, Y)
    np.testing.assert_allclose(fast, ref, rtol=1e-12, atol=1e-12)
    P = rng.random((9, 4))
    for backend in ("reference", "numba"):
        with config_context(backend=backend):
            V = barycentric_projection(P, Y, np.full(9, 1 / 9), X)
            M = mccann_interpolate(X, X + 1.0, [0.5])
            Q = quantile_cell_means([0.0, 1.0], [0.5, 0.5], [0.0, 0.5, 1.0])
        assert V.shape == (27,) and M.shape == (1, 9, 3)
        np.testing.assert_allclose(Q, [0.0, 1.0])
