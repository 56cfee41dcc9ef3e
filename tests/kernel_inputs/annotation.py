"""Twin-test inputs and tolerances of the annotation kernels, keyed by kernel name."""

import numpy as np

from kernel_inputs import TwinCase


def _betainc_inputs(rng):
    n = int(rng.integers(1, 40))
    kind = rng.integers(3)
    if kind == 0:  # log grid, the full documented range
        a, b = 10.0 ** rng.uniform(-3, 4, n), 10.0 ** rng.uniform(-3, 4, n)
    elif kind == 1:  # integer shapes (counts + prior (1, 1))
        a, b = rng.integers(1, 31, n).astype(float), rng.integers(1, 31, n).astype(float)
    else:  # near-ties of large shapes, the hardest case
        a = 10.0 ** rng.uniform(1, 4, n)
        b = a + rng.normal(0, 3, n)
        b = np.abs(b) + 1e-3
    return (a, b), {}


def _splitmix_inputs(rng):
    n = int(rng.integers(1, 50))
    return (rng.integers(0, 2**63, n, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, n, dtype=np.uint64),), {}


def _random_state_inputs(rng, with_graph=True):
    n, K = int(rng.integers(2, 30)), int(rng.integers(1, 5))
    C = rng.integers(0, 4, (n, K)).astype(float)
    N = rng.random((n, K)) * 3
    return n, K, C, N


def _refresh_inputs(rng):
    n, K, C, N = _random_state_inputs(rng)
    rows = rng.integers(0, n, int(rng.integers(1, 2 * n)))
    lam = float(rng.choice([0.0, 0.5, 1.0]))
    return (C, N, lam, rows, 1.0, float(rng.choice([1.0, 2.0]))), {}


def _csr(rng, n, k):
    import scipy.sparse as sp

    idx = np.stack([rng.choice(np.delete(np.arange(n), i), size=k, replace=False) for i in range(n)])
    w = rng.random((n, k))
    w /= w.sum(axis=1, keepdims=True)
    W = sp.csr_matrix((w.ravel(), idx.ravel(), np.arange(0, n * k + 1, k)), shape=(n, n))
    W.sort_indices()
    return W


def _apply_inputs(rng):
    from sklearn_frontier.kernels.annotation._reference import homophily_tallies as tallies_of

    n = int(rng.integers(3, 25))
    K = int(rng.integers(1, 4))
    k = int(rng.integers(1, min(n - 1, 5) + 1))
    W = _csr(rng, n, k)
    separate_h = bool(rng.integers(2))
    P = (W + 0.5 * (W @ W)).tocsr() if separate_h else W
    PT, WT = P.T.tocsr(), W.T.tocsr()
    PT.sort_indices()
    WT.sort_indices()
    C = rng.integers(0, 3, (n, K)).astype(float)
    N = np.asarray(P @ C)
    H = np.asarray(W @ C) if separate_h else np.zeros((0, K))
    tallies = tallies_of(C, H if separate_h else N)
    m = int(rng.integers(1, 3 * n))
    rows, codes = rng.integers(0, n, m), rng.integers(0, K, m)
    arr = lambda a, t: np.ascontiguousarray(a, dtype=t)  # noqa: E731
    return (C, N, H, tallies, rows, codes, arr(PT.indptr, np.int64), arr(PT.indices, np.int64),
            arr(PT.data, np.float64), arr(WT.indptr, np.int64), arr(WT.indices, np.int64),
            arr(WT.data, np.float64), True, separate_h), {}


def _tallies_inputs(rng):
    n, K, C, N = _random_state_inputs(rng)
    C[rng.random(n) < 0.3] = 0.0
    return (C, N), {}


def _distinct_tie_keys(rng, n):
    from sklearn_frontier.kernels.annotation._reference import splitmix64_keys as mix

    return mix(rng.integers(0, 2**62, dtype=np.uint64) ^ np.arange(n, dtype=np.uint64))


def _heap_of(q, r, eligible):
    from sklearn_frontier.kernels.annotation._reference import heap_update as update

    n = q.size
    rows = np.flatnonzero(eligible)
    heap, pos, _, size = update(np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64), 0, q, r, rows,
                                q[rows], np.ones(rows.size, dtype=bool))
    return heap, pos, size


def _heap_inputs(rng):
    n = int(rng.integers(1, 60))
    q = rng.integers(0, 4, n).astype(np.int64)  # many ties
    r = _distinct_tie_keys(rng, n)
    heap, pos, size = _heap_of(q, r, rng.random(n) < 0.6)
    m = int(rng.integers(0, 3 * n))
    rows = rng.integers(0, n, m)
    return (heap, pos, size, q, r, rows, rng.integers(0, 4, m).astype(np.int64), rng.random(m) < 0.6), {}


def _select_top_inputs(rng):
    n = int(rng.integers(1, 80))
    q = rng.integers(0, 5, n).astype(np.int64)
    r = _distinct_tie_keys(rng, n)
    eligible = rng.random(n) < 0.7
    heap, pos, size = _heap_of(q, r, eligible)
    return (q, r, eligible, heap, pos, size, int(rng.integers(1, n + 3))), {}


def _select_diverse_inputs(rng):
    from sklearn_frontier.kernels.annotation._reference import refresh_rows as refresh

    n = int(rng.integers(3, 40))
    K = int(rng.integers(1, 4))
    k = int(rng.integers(1, min(n - 1, 5) + 1))
    W = _csr(rng, n, k)
    P = (W + 0.5 * (W @ W)).tocsr() if rng.integers(2) else W
    PT = P.T.tocsr()
    PT.sort_indices()
    C = rng.integers(0, 3, (n, K)).astype(float)
    C[rng.random(n) < 0.3] = 0.0
    N = np.asarray(P @ C)
    lam = float(rng.choice([0.0, 0.5, 1.0]))
    u = refresh(C, N, lam, np.arange(n), 1.0, 1.0)
    stop = float(rng.choice([-1.0, 0.2, 0.4]))
    q = np.rint(u * 1e9).astype(np.int64)
    r = _distinct_tie_keys(rng, n)
    eligible = (rng.random(n) < 0.8) & (u >= stop)
    heap, pos, size = _heap_of(q, r, eligible)
    arr = lambda a, t: np.ascontiguousarray(a, dtype=t)  # noqa: E731
    return (q, r, eligible, heap, pos, size, C, N, arr(PT.indptr, np.int64), arr(PT.indices, np.int64),
            arr(PT.data, np.float64), lam, float(rng.choice([0.5, 1.0])), 1.0, 1.0, int(rng.integers(1, 8)),
            stop), {}


CASES = {
    "betainc_half": TwinCase(make_inputs=_betainc_inputs, rtol=0.0, atol=1e-12),
    "splitmix64_keys": TwinCase(make_inputs=_splitmix_inputs),
    "refresh_rows": TwinCase(make_inputs=_refresh_inputs, rtol=0.0, atol=1e-12),
    "apply_labels": TwinCase(make_inputs=_apply_inputs, rtol=0.0, atol=1e-12),
    "homophily_tallies": TwinCase(make_inputs=_tallies_inputs),
    "heap_update": TwinCase(make_inputs=_heap_inputs),
    "select_top": TwinCase(make_inputs=_select_top_inputs),
    "select_diverse": TwinCase(make_inputs=_select_diverse_inputs),
}
