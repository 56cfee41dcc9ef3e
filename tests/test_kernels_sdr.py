"""Known answers for the SDR kernels: closed-form gradient, local fits, RMAVE normal equations, CV smoother."""

import os
import subprocess
import sys

import numpy as np
import pytest
from sklearn_frontier.kernels.sdr import _numba as _sdr_numba
from sklearn_frontier.kernels.sdr import _reference as _sdr_reference
from sklearn_frontier.kernels.sdr import (
    sdr_grad,
    sdr_local_wls,
    sdr_local_wls_weighted,
    sdr_nw_cv_mae,
    sdr_opg_slopes,
    sdr_rmave_normal_eqs,
)

from sklearn_frontier import config_context
from sklearn_frontier.utils._manifolds import qr_retraction

BACKENDS = ["numpy", "numba"]


@pytest.fixture(autouse=True)
def _jit_on():
    import numba

    assert not numba.config.DISABLE_JIT, "kernel tests must run the jitted code (unset NUMBA_DISABLE_JIT)"


def _frozen_problem(seed=0, n=300, p=6, d=2, m=40, k=30):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, p))
    y = np.sin(Z[:, 0]) + Z[:, 1] ** 2 / 2 + 0.1 * rng.normal(size=n)
    B = qr_retraction(rng.normal(size=(p, d)))
    anchors = rng.choice(n, m, replace=False)
    P = Z @ B
    nbr = np.stack([np.argsort(np.sum((P - P[a]) ** 2, axis=1), kind="stable")[:k] for a in anchors])
    w = sdr_local_wls(P, y, P[anchors], nbr)[0]
    return Z, y, B, anchors, nbr, w, rng


def _objective(Z, y, B, anchors, nbr, w, ridge=0.0):
    """F(B) = mean_j [y^T W_j y - e_j^T W_j e_j] with frozen neighbour sets and weights."""
    P = Z @ B
    _, _, rss, _ = sdr_local_wls_weighted(P, y, P[anchors], nbr, w, ridge)
    return float(np.mean(np.sum(w * y[nbr] ** 2, axis=1) - rss))


def _gradient(Z, y, B, anchors, nbr, w, ridge=0.0):
    P = Z @ B
    e, theta, _, _ = sdr_local_wls_weighted(P, y, P[anchors], nbr, w, ridge)
    return sdr_grad(Z, Z[anchors], nbr, w, e, theta), e, theta


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_matches_finite_differences(backend):
    Z, y, B, anchors, nbr, w, rng = _frozen_problem()
    with config_context(backend=backend):
        G, _, _ = _gradient(Z, y, B, anchors, nbr, w)
        D = rng.normal(size=B.shape)
        eps = 1e-5
        fd = (_objective(Z, y, B + eps * D, anchors, nbr, w) - _objective(Z, y, B - eps * D, anchors, nbr, w)) / (
            2 * eps)
    analytic = float(np.sum(G * D))
    assert abs(fd - analytic) <= 1e-6 * abs(analytic)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_is_horizontal_and_objective_rotation_invariant(backend):
    Z, y, B, anchors, nbr, w, rng = _frozen_problem(seed=1)
    with config_context(backend=backend):
        G, e, theta = _gradient(Z, y, B, anchors, nbr, w)
        O = qr_retraction(rng.normal(size=(2, 2)))
        F, F_rot = _objective(Z, y, B, anchors, nbr, w), _objective(Z, y, B @ O, anchors, nbr, w)
        G_ridge, _, _ = _gradient(Z, y, B, anchors, nbr, w, ridge=1e-2)
    assert np.max(np.abs(B.T @ G)) <= 1e-12
    assert abs(F - F_rot) <= 1e-12
    sym = B.T @ G_ridge
    np.testing.assert_allclose(sym, sym.T, atol=1e-12)
    # centring identity: X_j^T W_j e_j = sum_i w_ij e_ij z_i (the intercept equation sum_i w_ij e_ij = 0)
    np.testing.assert_allclose(np.sum(w * e, axis=1), 0.0, atol=1e-12)
    lhs = np.einsum("mk,mkp->mp", w * e, Z[nbr] - Z[anchors][:, None, :])
    rhs = np.einsum("mk,mkp->mp", w * e, Z[nbr])
    np.testing.assert_allclose(lhs, rhs, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov", "uniform"])
def test_local_fits_equal_weighted_lstsq(backend, kernel):
    rng = np.random.default_rng(2)
    n, d, k = 80, 2, 25
    P = rng.normal(size=(n, d))
    y = rng.normal(size=n)
    anchors = np.array([0, 5, 17])
    nbr = np.stack([np.argsort(np.sum((P - P[a]) ** 2, axis=1), kind="stable")[:k] for a in anchors])
    with config_context(backend=backend):
        w, e, theta, rss, ok = sdr_local_wls(P, y, P[anchors], nbr, kernel, 0.0, 0.0)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, rtol=1e-14)
    assert np.all(nbr[:, 0] == anchors) and np.all(w[:, 0] == w.max(axis=1))  # self neighbour at delta = 0
    assert ok.all()
    for j, a in enumerate(anchors):
        design = np.hstack([np.ones((k, 1)), P[nbr[j]] - P[a]])
        sw = np.sqrt(w[j])
        ref = np.linalg.lstsq(design * sw[:, None], y[nbr[j]] * sw, rcond=None)[0]
        np.testing.assert_allclose(theta[j], ref, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(rss[j], np.sum(w[j] * (y[nbr[j]] - design @ ref) ** 2), rtol=1e-10)


@pytest.mark.parametrize("backend", BACKENDS)
def test_degenerate_neighbourhoods_fail_cleanly(backend):
    rng = np.random.default_rng(3)
    P = np.zeros((10, 2))
    P[5:] = rng.normal(size=(5, 2))
    y = rng.normal(size=10)
    nbr = np.array([[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]])
    X = rng.normal(size=(10, 4))
    with config_context(backend=backend):
        w, e, theta, rss, ok = sdr_local_wls(P, y, P[[0, 5]], nbr)
        G = sdr_grad(X, X[[0]], nbr[:1], w[:1], e[:1], theta[:1])
    assert ok.tolist() == [False, True]  # all neighbours at one point (radius 0): uniform weights, no slope
    np.testing.assert_allclose(w[0], 0.2)
    np.testing.assert_array_equal(theta[0, 1:], 0.0)
    assert theta[0, 0] == pytest.approx(y[:5].mean())
    np.testing.assert_array_equal(G, 0.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_opg_slopes_recover_linear_gradient(backend):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(60, 3))
    beta = np.array([1.0, -2.0, 0.5])
    with config_context(backend=backend):
        b, ok = sdr_opg_slopes(X, X @ beta, X[:4], np.tile(np.arange(60), (4, 1)), ridge=0.0)
    assert ok.all()
    np.testing.assert_allclose(b, np.tile(beta, (4, 1)), atol=1e-10)


@pytest.mark.parametrize("backend", BACKENDS)
def test_rmave_step_equals_stacked_kronecker_lstsq(backend):
    rng = np.random.default_rng(5)
    n, p, d, k = 40, 4, 2, 12
    Z = rng.normal(size=(n, p))
    y = rng.normal(size=n)
    anchors = np.arange(n)
    nbr = np.stack([np.argsort(np.sum((Z - Z[a]) ** 2, axis=1), kind="stable")[:k] for a in anchors])
    w = rng.random((n, k))
    w /= w.sum(axis=1, keepdims=True)
    theta = rng.normal(size=(n, d + 1))
    with config_context(backend=backend):
        A, c = sdr_rmave_normal_eqs(Z, y, Z, nbr, w, theta)
    rows, rhs = [], []
    for j in range(n):
        for t in range(k):
            zij = Z[nbr[j, t]] - Z[j]
            sw = np.sqrt(w[j, t])
            rows.append(sw * np.kron(theta[j, 1:], zij))  # vec column-major: B[r, a] <-> a p + r
            rhs.append(sw * (y[nbr[j, t]] - theta[j, 0]))
    vec_ref = np.linalg.lstsq(np.array(rows), np.array(rhs), rcond=None)[0]
    np.testing.assert_allclose(np.linalg.solve(A, c), vec_ref, rtol=1e-8, atol=1e-10)


def _brute_force_cv(Zp, y, train, test, h):
    out = []
    for tr, te in zip(train, test):
        errs = []
        for t in te:
            d2 = np.array([np.sum((Zp[t] - Zp[i]) ** 2) for i in tr])
            H = max(2 * h * h, sorted(d2)[1])
            K = np.maximum(1 - d2 / H, 0)
            errs.append(abs(y[t] - np.sum(K * y[tr]) / (np.sum(K) + 1e-6)))
        out.append(np.mean(errs))
    return np.array(out)


@pytest.mark.parametrize("backend", BACKENDS)
def test_cv_smoother_equals_brute_force(backend):
    rng = np.random.default_rng(6)
    Zp = rng.normal(size=(30, 2))
    y = rng.normal(size=30)
    perms = np.stack([rng.permutation(30) for _ in range(3)])
    with config_context(backend=backend):
        got = sdr_nw_cv_mae(Zp, y, perms[:, :20], perms[:, 20:], 0.2)
    np.testing.assert_allclose(got, _brute_force_cv(Zp, y, perms[:, :20], perms[:, 20:], 0.2), rtol=1e-12)


@pytest.mark.parametrize("m", [1, 16, 17, 64])
@pytest.mark.parametrize("d,p", [(1, 1), (2, 7), (3, 30)])
def test_twins_agree_over_sizes(m, d, p):
    rng = np.random.default_rng(7 * m + d)
    for k in (d + 2, 30):
        n = 80
        P, Z, y = rng.normal(size=(n, d)), rng.normal(size=(n, p)), rng.normal(size=n)
        nbr = np.stack([np.concatenate([[a], rng.choice(np.delete(np.arange(n), a), k - 1, replace=False)])
                        for a in rng.choice(n, m, replace=False)]).astype(np.int64)
        C = P[nbr[:, 0]]
        ref = _sdr_reference.sdr_local_wls(P, y, C, nbr, 0, 0.0, 1e-8)
        twin = _sdr_numba.sdr_local_wls(P, y, C, nbr, 0, 0.0, 1e-8)
        for a, b in zip(ref[:4], twin[:4]):
            np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-12)
        np.testing.assert_array_equal(ref[4], twin[4])
        w, e, theta = ref[0], ref[1], ref[2]
        g_ref = _sdr_reference.sdr_grad(Z, Z[nbr[:, 0]], nbr, w, e, theta)
        g_twin = _sdr_numba.sdr_grad(Z, Z[nbr[:, 0]], nbr, w, e, theta)
        np.testing.assert_allclose(g_twin, g_ref, rtol=1e-12, atol=1e-12 * np.abs(g_ref).max())


_THREAD_SCRIPT = """
import numpy as np, sys
from sklearn_frontier.kernels.sdr import _numba as _sdr_numba
rng = np.random.default_rng(0)
n, p, d, m, k = 400, 30, 2, 256, 300
X = rng.normal(size=(n, p)); nbr = rng.integers(0, n, size=(m, k)).astype(np.int64)
w = rng.random((m, k)); e = rng.normal(size=(m, k)); theta = rng.normal(size=(m, d + 1))
G = _sdr_numba.sdr_grad(X, X[nbr[:, 0]], nbr, w, e, theta)
sys.stdout.write(G.tobytes().hex())
"""


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs 2 cores for NUMBA_NUM_THREADS=2")
def test_parallel_reduction_is_bit_identical_across_thread_counts():
    outs = []
    for threads in ("1", "2"):
        env = {**os.environ, "NUMBA_NUM_THREADS": threads}
        proc = subprocess.run([sys.executable, "-c", _THREAD_SCRIPT], env=env, capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
        outs.append(proc.stdout)
    assert outs[0] == outs[1]


def test_kernels_validate_shapes():
    with pytest.raises(ValueError, match="outside"):
        sdr_local_wls(np.zeros((3, 1)), np.zeros(3), np.zeros((1, 1)), np.array([[0, 5]]))
    with pytest.raises(ValueError, match="kernel"):
        sdr_local_wls(np.zeros((3, 1)), np.zeros(3), np.zeros((1, 1)), np.array([[0, 1]]), kernel="cosine")
