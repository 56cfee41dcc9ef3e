"""Annotation kernels: betainc at 1/2 (numba vs scipy, exact identities), LU reduction, SplitMix64,
online label application equal to the batch formulas."""

from fractions import Fraction
from math import comb

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import betainc
from sklearn_frontier.kernels.annotation import _numba as nb
from sklearn_frontier.kernels.annotation import _reference as ref

BACKENDS = [ref, nb]


@pytest.fixture(autouse=True, scope="module")
def _jit_on():
    import numba

    assert not numba.config.DISABLE_JIT, "kernel tests must run the jitted code (unset NUMBA_DISABLE_JIT)"


def test_betainc_numba_matches_scipy_on_log_grid():
    grid = np.logspace(-3, 4, 57)
    A, B = np.meshgrid(grid, grid)
    expected = betainc(A, B, 0.5)
    actual = nb.betainc_half(A, B)
    assert actual.shape == A.shape and actual.dtype == np.float64
    assert np.max(np.abs(actual - expected)) <= 1e-12


def test_betainc_numba_matches_scipy_on_integers_and_near_ties():
    ints = np.arange(1, 46, dtype=float)  # sums on both sides of the exact-integer path (a + b <= 61)
    A, B = np.meshgrid(ints, ints)
    assert np.max(np.abs(nb.betainc_half(A, B) - betainc(A, B, 0.5))) <= 1e-12
    rng = np.random.default_rng(0)
    a = 10 ** rng.uniform(1, 4, 2000)
    b = a + rng.normal(0, 2, a.size)
    b = np.abs(b) + 1e-3
    assert np.max(np.abs(nb.betainc_half(a, b) - betainc(a, b, 0.5))) <= 1e-12


@pytest.mark.parametrize("backend", BACKENDS, ids=["reference", "numba"])
def test_betainc_symmetry_point_and_binomial_tail(backend):
    a = np.array([1e-3, 0.5, 1.0, 7.0, 123.0, 9999.5])
    np.testing.assert_array_equal(backend.betainc_half(a, a), 0.5)
    for A in range(1, 16):
        for B in range(1, 16):
            n = A + B - 1
            exact = Fraction(sum(comb(n, j) for j in range(A, n + 1)), 2**n)
            assert abs(float(backend.betainc_half(np.array([A]), np.array([B]))[0]) - float(exact)) <= 1e-15


@pytest.mark.parametrize("backend", BACKENDS, ids=["reference", "numba"])
def test_known_margin_values(backend):
    # (a, b) vote counts -> u with prior (1, 1) (spec section 2.3)
    known = {(0, 0): 1 / 2, (1, 0): 1 / 4, (2, 0): 1 / 8, (1, 1): 1 / 2, (2, 1): 5 / 16, (3, 0): 1 / 16,
             (3, 1): 3 / 16}
    C = np.array([[a, b] for a, b in known], dtype=float)
    u = backend.refresh_rows(C, np.zeros_like(C), 0.0, np.arange(len(C)), 1.0, 1.0)
    np.testing.assert_allclose(u, list(known.values()), rtol=0, atol=1e-15)


@pytest.mark.parametrize("backend", BACKENDS, ids=["reference", "numba"])
def test_binary_case_is_sheng_label_uncertainty(backend):
    rng = np.random.default_rng(1)
    C = rng.integers(0, 25, (300, 2)).astype(float)
    tail = betainc(C[:, 0] + 1, C[:, 1] + 1, 0.5)
    lu = np.minimum(tail, 1 - tail)
    u = backend.refresh_rows(C, C, 0.0, np.arange(300), 1.0, 1.0)
    np.testing.assert_allclose(u, lu, rtol=0, atol=1e-12)
    assert u.max() <= 0.5


@pytest.mark.parametrize("backend", BACKENDS, ids=["reference", "numba"])
def test_three_classes_only_top_two_matter(backend):
    rng = np.random.default_rng(2)
    C = rng.integers(0, 10, (200, 3)).astype(float)
    srt = np.sort(C, axis=1)
    # replace the smallest count by any value below the runner-up: u unchanged
    D = C.copy()
    smallest = np.argmin(C, axis=1)
    D[np.arange(200), smallest] = np.floor(srt[:, 0] * rng.random(200))
    perm = rng.permutation(3)
    rows = np.arange(200)
    u = backend.refresh_rows(C, C, 0.0, rows, 1.0, 1.0)
    np.testing.assert_allclose(backend.refresh_rows(D, D, 0.0, rows, 1.0, 1.0), u, rtol=0, atol=1e-15)
    np.testing.assert_allclose(backend.refresh_rows(C[:, perm].copy(), C, 0.0, rows, 1.0, 1.0), u, rtol=0,
                               atol=1e-15)
    np.testing.assert_allclose(u, betainc(srt[:, 2] + 1, srt[:, 1] + 1, 0.5), rtol=0, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS, ids=["reference", "numba"])
def test_splitmix64_reference_vectors(backend):
    golden = np.uint64(0x9E3779B97F4A7C15)
    assert int(backend.splitmix64_keys(np.array([0], dtype=np.uint64))[0]) == 0xE220A8397B1DCDAF
    # Vigna's splitmix64.c seeded with 1234567: the k-th output is mix(seed + k * golden)
    seq = backend.splitmix64_keys(np.uint64(1234567) + np.arange(5, dtype=np.uint64) * golden)
    assert [int(v) for v in seq] == [6457827717110365317, 3203168211198807973, 9817491932198370423,
                                     4593380528125082431, 16408922859458223821]
    assert seq.dtype == np.uint64


def _graph(rng, n, k):
    idx = np.stack([rng.choice(np.delete(np.arange(n), i), size=k, replace=False) for i in range(n)])
    w = rng.random((n, k))
    w /= w.sum(axis=1, keepdims=True)
    W = sp.csr_matrix((w.ravel(), idx.ravel(), np.arange(0, n * k + 1, k)), shape=(n, n))
    W.sort_indices()
    return W


def _parts(M):
    M = sp.csr_matrix(M)
    M.sort_indices()
    return (M.indptr.astype(np.int64), M.indices.astype(np.int64), M.data.astype(np.float64))


@pytest.mark.parametrize("steps", [1, 2])
@pytest.mark.parametrize("backend", BACKENDS, ids=["reference", "numba"])
def test_online_label_application_equals_batch(backend, steps):
    rng = np.random.default_rng(3 + steps)
    n, K, k = 40, 3, 4
    W = _graph(rng, n, k)
    P = W if steps == 1 else (W + 0.5 * (W @ W)).tocsr()
    separate = steps > 1
    C = np.zeros((n, K))
    N = np.zeros((n, K))
    H = np.zeros((n, K)) if separate else np.zeros((0, K))
    tallies = np.zeros(2 + 2 * K)
    rows, codes = rng.integers(0, n, 300), rng.integers(0, K, 300)
    for chunk in np.array_split(np.arange(300), 17):
        C, N, H, tallies, touched = backend.apply_labels(
            C, N, H, tallies, rows[chunk], codes[chunk], *_parts(P.T), *_parts(W.T), True, separate, inplace=True)
    C_batch = np.zeros((n, K))
    np.add.at(C_batch, (rows, codes), 1.0)
    np.testing.assert_array_equal(C, C_batch)
    np.testing.assert_allclose(N, P.toarray() @ C_batch, rtol=0, atol=1e-12)
    H_batch = W.toarray() @ C_batch
    if separate:
        np.testing.assert_allclose(H, H_batch, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(tallies, ref.homophily_tallies(C_batch, H_batch))
    np.testing.assert_array_equal(tallies, nb.homophily_tallies(C_batch, H_batch))


def test_apply_labels_is_functional_unless_inplace():
    rng = np.random.default_rng(7)
    W = _graph(rng, 10, 3)
    C, N, H, t = np.zeros((10, 2)), np.zeros((10, 2)), np.zeros((0, 2)), np.zeros(6)
    out = nb.apply_labels(C, N, H, t, np.array([1]), np.array([0]), *_parts(W.T), *_parts(W.T), True, False)
    assert C.sum() == 0 and N.sum() == 0 and out[0].sum() == 1
    # touched rows: the labelled row, then its reverse neighbours
    assert out[4][0] == 1 and set(out[4][1:]) == set(W.T.tocsr()[1].indices)
