"""Known-answer and twin tests of the MixConfig kernels (kernels/configurations.py)."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn_frontier.kernels import (
    cluster_entropy,
    knn_bruteforce,
    knn_vote,
    louvain,
    partition_energy,
    upper_envelope,
)
from sklearn_frontier.kernels.configurations import _numba as NB
from sklearn_frontier.kernels.configurations import _reference as REF

from sklearn_frontier import config_context


@pytest.fixture(autouse=True)
def _jit_on():
    import numba

    assert not numba.config.DISABLE_JIT, "twin tests must run the jitted code (unset NUMBA_DISABLE_JIT)"


def _two_cliques(size=10):
    A = np.kron(np.eye(2), np.ones((size, size))) - np.eye(2 * size)
    A[size - 1, size] = A[size, size - 1] = 1.0
    return sp.csr_matrix(A)


def _parts(W):
    W = sp.csr_matrix(W)
    W.sort_indices()
    return (W.indptr.astype(np.int64), W.indices.astype(np.int64), W.data.astype(np.float64),
            np.asarray(W.sum(axis=1)).ravel())


def _blob_graph(seed=0, n_per=25, centres=4, k=6):
    from sklearn_frontier.configurations._graph import knn_graph

    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(size=(n_per, centres)) * 0.6 + 8 * np.eye(centres)[c] for c in range(centres)])
    return knn_graph(X, k), np.repeat(np.arange(centres), n_per)


# ---------------------------------------------------------------- envelope
def test_envelope_hand_made_lines():
    a = np.array([1.0, 0.8, 0.55, 0.3])
    b = np.array([1.0, 0.5, 0.2, 0.19])
    winners, iv = upper_envelope(a, b, 0.01, 10.0)
    assert winners.tolist() == [0, 1, 2]  # line 3 only wins beyond gamma = 25
    np.testing.assert_allclose(iv, [[0.01, 0.4], [0.4, 0.25 / 0.3], [0.25 / 0.3, 10.0]], rtol=0, atol=1e-12)
    perm = np.array([3, 1, 0, 2])
    w2, iv2 = upper_envelope(a[perm], b[perm], 0.01, 10.0)
    assert perm[w2].tolist() == [0, 1, 2]
    np.testing.assert_allclose(iv2, iv, rtol=0, atol=1e-12)


def test_envelope_duplicates_and_dominated_lines():
    # a duplicate line and a line below the envelope everywhere; wide range reaches the last line
    a = np.array([1.0, 1.0, 0.8, 0.5, 0.55, 0.3])
    b = np.array([1.0, 1.0, 0.5, 0.45, 0.2, 0.19])
    winners, iv = upper_envelope(a, b, 0.01, 100.0)
    assert winners.tolist() == [0, 2, 4, 5]
    assert iv[-1, 0] == pytest.approx(25.0, abs=1e-12) and iv[-1, 1] == 100.0
    assert np.all(iv[1:, 0] == iv[:-1, 1])
    # brute force: the winner at each gamma in the grid is the envelope piece containing gamma
    for g in np.geomspace(0.011, 99.0, 200):
        q = a - g * b
        piece = np.flatnonzero((iv[:, 0] <= g) & (g <= iv[:, 1]))[0]
        assert q[winners[piece]] == pytest.approx(q.max(), abs=1e-12)


# ------------------------------------------------- two cliques, exact interval
def test_two_cliques_exact_interval():
    from sklearn_frontier.configurations import configurations_from_graph

    W = _two_cliques()
    labels, res, stab = configurations_from_graph(W, random_state=0)
    truth = np.repeat([0, 1], 10)
    assert len(labels) == 1
    np.testing.assert_array_equal(labels[0], truth)
    a, b = 90 / 91, 0.5
    b_single = (18 * 81 + 2 * 100) / 182**2  # sum_i (s_i / 2m)^2 of the singletons
    assert b_single == pytest.approx(1658 / 182**2, abs=1e-15)
    np.testing.assert_allclose(res[0], [(1 - a) / (1 - b), a / (b - b_single)], rtol=0, atol=1e-9)
    np.testing.assert_allclose(res[0], [0.0219780219780, 2.1980676328502], rtol=0, atol=1e-9)
    # the breakpoints follow from the K3 energies
    ip, ix, d, s = _parts(W)
    ea, eb = partition_energy(ip, ix, d, s, truth, 2)
    assert (ea, eb) == (pytest.approx(a, abs=1e-12), pytest.approx(b, abs=1e-12))
    np.testing.assert_allclose(stab[0, 1:3], [ea, eb], atol=1e-12)


# ---------------------------------------------------------------- energies
@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_partition_energy_dense_and_bounds(backend):
    rng = np.random.default_rng(3)
    W, _ = _blob_graph()
    ip, ix, d, s = _parts(W)
    D = W.toarray()
    m2 = s.sum()
    with config_context(backend=backend):
        for K in (1, 2, 5, 100):
            labels = rng.integers(0, K, size=s.shape[0]).astype(np.int64)
            a, b = partition_energy(ip, ix, d, s, labels, K)
            same = labels[:, None] == labels[None, :]
            assert a == pytest.approx((D * same).sum() / m2, rel=1e-12)
            S = np.array([s[labels == c].sum() for c in range(K)])
            assert b == pytest.approx(((S / m2) ** 2).sum(), rel=1e-12)
            assert 0 <= a <= 1 + 1e-12
            assert ((s / m2) ** 2).sum() - 1e-12 <= b <= 1 + 1e-12
        a, b = partition_energy(ip, ix, d, s, np.zeros(s.shape[0], dtype=np.int64), 1)
        assert (a, b) == (pytest.approx(1.0, abs=1e-12), pytest.approx(1.0, abs=1e-12))


# ---------------------------------------------------------------- Louvain (K7)
@pytest.mark.parametrize("gamma", [0.05, 0.5, 1.0, 3.0, 30.0])
@pytest.mark.parametrize("seed", [0, 12345])
def test_louvain_twin_identity(gamma, seed):
    W, _ = _blob_graph(seed=seed % 7)
    ip, ix, d, s = _parts(W)
    ref = REF.louvain(ip, ix, d, s, gamma, seed, 32, 8)
    twin = NB.louvain(ip, ix, d, s, gamma, seed, 32, 8)
    assert ref.dtype == twin.dtype == np.int64
    np.testing.assert_array_equal(ref, twin)
    assert set(ref.tolist()) == set(range(ref.max() + 1))


def test_louvain_recovers_planted_clusters_and_is_a_local_optimum():
    from sklearn.metrics import adjusted_rand_score

    W, truth = _blob_graph(seed=1)
    ip, ix, d, s = _parts(W)
    labels = louvain(ip, ix, d, s, 0.5, seed=0)
    assert adjusted_rand_score(truth, labels) == 1.0
    # no single-node move improves Q(gamma = 0.5)
    a, b = partition_energy(ip, ix, d, s, labels, labels.max() + 1)
    q = a - 0.5 * b
    rng = np.random.default_rng(0)
    for i in rng.choice(s.shape[0], 20, replace=False):
        for c in range(labels.max() + 1):
            moved = labels.copy()
            moved[i] = c
            a2, b2 = partition_energy(ip, ix, d, s, moved, labels.max() + 1)
            assert a2 - 0.5 * b2 <= q + 1e-12


def test_louvain_extremes_and_edge_cases():
    ip, ix, d, s = _parts(_two_cliques())
    assert louvain(ip, ix, d, s, 1e-4).max() == 0  # everything merges at tiny resolution
    assert louvain(ip, ix, d, s, 100.0).tolist() == list(range(20))  # singletons at huge resolution
    for impl in (REF.louvain, NB.louvain):
        one = impl(np.array([0, 0], dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0), np.ones(1),
                   1.0, 0, 4, 2)
        assert one.tolist() == [0]
        empty_graph = impl(np.zeros(4, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(3),
                           1.0, 0, 4, 2)
        assert empty_graph.tolist() == [0, 0, 0]
    with pytest.raises(ValueError, match="gamma"):
        louvain(ip, ix, d, s, 0.0)
    with pytest.raises(ValueError, match="indptr"):
        louvain(ip[:-1], ix, d, s, 1.0)


def test_louvain_same_seed_same_labels_across_backends():
    W, truth = _blob_graph(seed=2)
    ip, ix, d, s = _parts(W)
    for k in range(3):
        with config_context(backend="numpy"):
            ref = louvain(ip, ix, d, s, 1.0, seed=k)
        np.testing.assert_array_equal(ref, louvain(ip, ix, d, s, 1.0, seed=k))
        np.testing.assert_array_equal(ref, louvain(ip, ix, d, s, 1.0, seed=k))


# ---------------------------------------------------------------- kNN, CSR, votes, entropy
def test_knn_ties_by_index_and_twin():
    Z = np.array([[0.0], [1.0], [1.0], [-1.0], [2.0]])
    Q = np.array([[0.0], [1.0]])
    for backend in ("numpy", "numba"):
        with config_context(backend=backend):
            idx, dist = knn_bruteforce(Z, Q, 3)
            assert idx.tolist() == [[0, 1, 2], [1, 2, 0]]  # equal distances keep the smaller index first
            np.testing.assert_allclose(dist, [[0, 1, 1], [0, 0, 1]])
            idx, _ = knn_bruteforce(Z, Z, 2, exclude_self=True)
            assert idx[1].tolist() == [2, 0] and idx[2].tolist() == [1, 0]
    with pytest.raises(ValueError, match="k must"):
        knn_bruteforce(Z, Z, 5, exclude_self=True)


def test_self_tuning_csr_symmetric_max():
    idx = np.array([[1, 2], [0, 2], [1, 1]])
    w = np.array([[0.5, 0.0], [0.25, 0.75], [0.1, 0.9]])
    for impl in (REF.self_tuning_csr, NB.self_tuning_csr):
        indptr, indices, data = impl(idx, w, 3)
        W = sp.csr_matrix((data, indices, indptr), shape=(3, 3)).toarray()
        expected = np.array([[0, 0.5, 0], [0.5, 0, 0.9], [0, 0.9, 0]])
        np.testing.assert_array_equal(W, expected)
        assert all(np.all(np.diff(indices[indptr[i]:indptr[i + 1]]) > 0) for i in range(3))


def test_knn_vote_and_entropy():
    nbr = np.array([[0, 1, 2], [2, 2, 2]])
    labels = np.array([0, 1, 1])
    for backend in ("numpy", "numba"):
        with config_context(backend=backend):
            S = knn_vote(nbr, labels, 2)
            np.testing.assert_allclose(S, [[1 / 3, 2 / 3], [0, 1]], atol=1e-15)
            Sw = knn_vote(nbr, labels, 2, np.array([[2.0, 1.0, 1.0], [1.0, 1.0, 1.0]]))
            np.testing.assert_allclose(Sw[0], [0.5, 0.5], atol=1e-15)
            assert cluster_entropy(np.array([0, 0, 1, 1]), 2) == pytest.approx(np.log(2), abs=1e-15)
            assert cluster_entropy(np.array([0, 0, 0]), 3) == 0.0
