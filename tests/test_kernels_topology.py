"""Deeper twin tests of the topology kernels (T1–T4.10)."""

import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn_frontier.kernels import clique_count, clique_enumerate, face_index, pcg_jacobi_batched

from sklearn_frontier import config_context


@pytest.fixture(autouse=True)
def _jit_on():
    import numba

    assert not numba.config.DISABLE_JIT, "twin tests must run the jitted code (unset NUMBA_DISABLE_JIT)"


def _upper(A):
    U = sp.triu(sp.csr_matrix(A), k=1).tocsr()
    U.sort_indices()
    return U.indptr, U.indices


@pytest.mark.parametrize("n", [1, 2, 7, 60])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_clique_kernels_twins(n, k):
    rng = np.random.default_rng(n * 10 + k)
    A = np.triu(rng.random((n, n)) < 0.4, 1)
    A[0, :] = False  # an isolated vertex
    indptr, indices = _upper(A)
    with config_context(backend="numpy"):
        c_ref = clique_count(indptr, indices, k)
        e_ref = clique_enumerate(indptr, indices, k)
    with config_context(backend="numba"):
        c_nb = clique_count(indptr, indices, k)
        e_nb = clique_enumerate(indptr, indices, k)
    assert c_ref == c_nb == e_ref.shape[0]
    np.testing.assert_array_equal(e_ref, e_nb)
    if k >= 1 and c_ref:
        faces = clique_enumerate(indptr, indices, k - 1)
        with config_context(backend="numpy"):
            f_ref = face_index(e_ref, faces)
        with config_context(backend="numba"):
            f_nb = face_index(e_ref, faces)
        np.testing.assert_array_equal(f_ref, f_nb)
        assert (f_ref >= 0).all()


def test_empty_graph():
    indptr, indices = np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64)
    for backend in ("numpy", "numba"):
        with config_context(backend=backend):
            assert clique_count(indptr, indices, 2) == 0
            assert clique_enumerate(indptr, indices, 2).shape == (0, 3)


@pytest.mark.parametrize("r", [1, 7, 64])
def test_pcg_twins_and_accuracy(r):
    rng = np.random.default_rng(r)
    B = sp.random(80, 50, density=0.1, random_state=1, format="csr")
    C = (B @ B.T).tocsr()
    shift = 1e-3
    inv = 1.0 / (C.diagonal() + shift)
    rhs = rng.standard_normal((80, r))
    out = {}
    for backend in ("numpy", "numba"):
        with config_context(backend=backend):
            out[backend] = pcg_jacobi_batched(C, inv, shift, rhs, rtol=1e-12, maxiter=5000)
    exact = np.linalg.solve(C.toarray() + shift * np.eye(80), rhs)
    for Z, iters, conv in out.values():
        assert conv.all() and iters.dtype == np.int64
        np.testing.assert_allclose(Z, exact, rtol=0, atol=1e-8 * np.abs(exact).max())
    np.testing.assert_allclose(out["numba"][0], out["numpy"][0], rtol=0, atol=1e-8 * np.abs(exact).max())


def test_pcg_zero_rhs_and_nonconvergence_flag():
    C = sp.eye(5, format="csr")
    Z, iters, conv = pcg_jacobi_batched(C, np.full(5, 0.5), 1.0, np.zeros((5, 2)))
    assert np.all(Z == 0) and np.all(iters == 0) and conv.all()
    L = sp.diags([-np.ones(49), 2 * np.ones(50), -np.ones(49)], [-1, 0, 1], format="csr")
    Z, iters, conv = pcg_jacobi_batched(L, 1 / (L.diagonal() + 1e-6), 1e-6, np.ones((50, 1)), rtol=1e-14,
                                        maxiter=3)
    assert not conv[0] and iters[0] == 3


_THREADS_SCRIPT = """
import hashlib
import numpy as np, scipy.sparse as sp
from sklearn_frontier.kernels import clique_enumerate, pcg_jacobi_batched
rng = np.random.default_rng(0)
A = sp.triu(sp.random(600, 600, density=0.05, random_state=0), k=1).tocsr(); A.sort_indices()
e = clique_enumerate(A.indptr, A.indices, 2)
B = sp.random(3000, 2000, density=0.004, random_state=2, format='csr'); C = (B @ B.T).tocsr()  # nnz*r > 2e6
Z, it, ok = pcg_jacobi_batched(C, 1 / (C.diagonal() + 1.0), 1.0, rng.standard_normal((3000, 8)), 1e-10)
print(hashlib.sha1(e.tobytes()).hexdigest(), hashlib.sha1(Z.tobytes()).hexdigest(), int(it.sum()))
"""


def test_bit_identical_across_thread_counts():
    outs = []
    for threads in ("1", "2"):
        env = dict(os.environ, NUMBA_NUM_THREADS=threads)
        outs.append(subprocess.run([sys.executable, "-c", _THREADS_SCRIPT], env=env, capture_output=True,
                                   text=True, check=True).stdout)
    assert outs[0] == outs[1]


@pytest.mark.parametrize("n,p", [(1, 0.5), (12, 0.3), (200, 0.03)])
def test_selinv_diag_twins_and_known_answer(n, p):
    from sklearn_frontier.kernels import selinv_diag

    rng = np.random.default_rng(n)
    A = np.triu(rng.random((n, n)) < p, 1)
    A = (A | A.T).astype(float)
    L = sp.csc_matrix(np.diag(A.sum(1)) - A + 1e-3 * np.eye(n))
    exact = np.diag(np.linalg.inv(L.toarray()))
    with config_context(backend="numba"):
        nb = selinv_diag(L)
    with config_context(backend="numpy"):
        ref = selinv_diag(L)
    np.testing.assert_allclose(nb, exact, rtol=1e-9)
    np.testing.assert_allclose(ref, exact, rtol=1e-9)
    # path P_3 + I: inverse of [[2,-1,0],[-1,3,-1],[0,-1,2]] has diagonal (5/8, 1/2, 5/8)
    P = sp.csc_matrix(np.array([[2.0, -1, 0], [-1, 3, -1], [0, -1, 2]]))
    np.testing.assert_allclose(selinv_diag(P), [5 / 8, 1 / 2, 5 / 8], rtol=1e-12)


def test_selinv_diag_rejects_indefinite():
    from sklearn_frontier.kernels import selinv_diag

    with pytest.raises(np.linalg.LinAlgError, match="positive definite"):
        selinv_diag(sp.csc_matrix(np.array([[1.0, 2.0], [2.0, 1.0]])))
