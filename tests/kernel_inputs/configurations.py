"""Twin-test inputs and tolerances of the configurations kernels, keyed by kernel name."""

import numpy as np

from kernel_inputs import TwinCase


def _ring_graph(rng, n):
    """A random symmetric CSR graph (kNN-like) with ``n`` vertices, through the reference K2."""
    from sklearn_frontier.kernels.configurations._reference import self_tuning_csr as ref_csr

    if n == 1:
        return np.zeros(2, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0), np.ones(1)
    k = int(rng.integers(1, min(6, n - 1) + 1))
    idx = np.empty((n, k), dtype=np.int64)
    for i in range(n):
        idx[i] = (i + 1 + rng.choice(n - 1, size=k, replace=False)) % n
    w = rng.random((n, k)) + 0.05
    indptr, indices, data = ref_csr(idx, w, n)
    strength = np.add.reduceat(data, indptr[:-1]) if data.size else np.zeros(n)
    strength = np.where(np.diff(indptr) > 0, strength, 0.0)
    return indptr, indices, data, strength


def _make_knn_inputs(rng):
    n, p = int(rng.integers(2, 90)), int(rng.integers(1, 7))
    Z = rng.normal(size=(n, p))
    if rng.random() < 0.5:
        return (Z, Z, int(rng.integers(1, n)), True), {}
    m = int(rng.integers(1, 70))
    Q = rng.normal(size=(m, p))
    if rng.random() < 0.3:  # exact ties: duplicated rows must be ranked by index
        Z[n // 2] = Z[0]
    return (Z, Q, int(rng.integers(1, n + 1)), False), {}


def _make_csr_inputs(rng):
    n = int(rng.integers(2, 60))
    k = int(rng.integers(1, n))
    idx = np.stack([rng.choice(n, size=k, replace=False) for _ in range(n)]).astype(np.int64)
    w = rng.random((n, k))
    w[rng.random((n, k)) < 0.1] = 0.0
    return (idx, w, n), {}


def _make_energy_inputs(rng):
    n = int(rng.integers(1, 70))
    indptr, indices, data, strength = _ring_graph(rng, n)
    if strength.sum() <= 0:
        strength = np.ones(n)
    K = int(rng.integers(1, n + 1))
    labels = rng.integers(0, K, size=n).astype(np.int64)
    return (indptr, indices, data, strength, labels, K), {}


def _make_vote_inputs(rng):
    n, m, k = int(rng.integers(1, 50)), int(rng.integers(1, 70)), int(rng.integers(1, 12))
    K = int(rng.integers(1, 9))
    nbr = rng.integers(0, n, size=(m, k)).astype(np.int64)
    labels = rng.integers(0, K, size=n).astype(np.int64)
    weights = rng.random((m, k)) + 1e-3
    return (nbr, labels, K, weights), {}


def _make_entropy_inputs(rng):
    n = int(rng.integers(1, 80))
    K = int(rng.integers(1, 12))
    return (rng.integers(0, K, size=n).astype(np.int64), K), {}


def _make_louvain_inputs(rng):
    n = int(rng.integers(1, 60))
    indptr, indices, data, strength = _ring_graph(rng, n)
    gamma = float(np.exp(rng.uniform(np.log(0.05), np.log(20.0))))
    return (indptr, indices, data, strength, gamma, int(rng.integers(0, 2**31 - 1)), int(rng.integers(1, 6)),
            int(rng.integers(1, 5))), {}


CASES = {
    "knn_bruteforce": TwinCase(make_inputs=_make_knn_inputs, rtol=1e-12, atol=1e-12),
    "self_tuning_csr": TwinCase(make_inputs=_make_csr_inputs, rtol=0.0, atol=0.0),
    "partition_energy": TwinCase(make_inputs=_make_energy_inputs, rtol=1e-12, atol=1e-14),
    "knn_vote": TwinCase(make_inputs=_make_vote_inputs, rtol=1e-12, atol=1e-14),
    "cluster_entropy": TwinCase(make_inputs=_make_entropy_inputs, rtol=1e-12, atol=1e-14),
    "louvain": TwinCase(make_inputs=_make_louvain_inputs, rtol=0.0, atol=0.0),
}
