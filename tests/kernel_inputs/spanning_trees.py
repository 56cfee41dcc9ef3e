"""Twin-test inputs and tolerances of the spanning_trees kernels, keyed by kernel name."""

import numpy as np
from sklearn_frontier.kernels.spanning_trees._api import random_rooted_tree

from kernel_inputs import TwinCase


def _make_inputs(rng, with_noise=True, loglik=False):
    n = int(rng.choice([1, 2, 3, int(rng.integers(4, 80))]))
    order, parent = random_rooted_tree(n, rng, kind=str(rng.choice(["recursive", "path", "star"])))
    rho = rng.uniform(0.0, 1.0, n)
    rho[rng.random(n) < 0.15] = 0.0
    rho[rng.random(n) < 0.15] = 1.0
    prec = rng.uniform(0.2, 5.0, n) * np.where(rng.random(n) < 0.2, 1e8, 1.0)
    links = rng.random(n) < 0.15
    links[order[0]] = False
    prec[links] = np.inf
    w = rng.integers(0, 4, n).astype(np.float64) * (rng.random(n) < 0.75)
    s = w * rng.normal(size=n)
    sigma2 = float(rng.uniform(0.05, 2.0))
    if loglik:
        return (order, parent, rho, prec, w, s, sigma2, float(np.sum(w * rng.uniform(1, 3, n)) + 1.0),
                float(w.sum())), {}
    noise = rng.normal(size=n) if with_noise and rng.random() < 0.5 else np.zeros(n)
    return (order, parent, rho, prec, w, s, sigma2, noise), {}


def _routed_inputs(rng):
    n = int(rng.choice([1, 2, int(rng.integers(3, 60))]))
    plen = rng.uniform(0, 2, n) * (rng.random(n) < 0.9)
    return (plen, float(10 ** rng.uniform(-2, 3)), float(rng.uniform(0.01, 2)), int(rng.integers(n))), {}


def _random_graph(rng):
    n = int(rng.choice([1, 2, 3, int(rng.integers(4, 60))]))
    order, parent = random_rooted_tree(n, rng)
    tree = [(min(v, p), max(v, p)) for v, p in enumerate(parent) if p >= 0]
    extra = rng.integers(0, n, size=(int(rng.integers(0, 3 * n + 1)), 2)) if n > 1 else np.zeros((0, 2), int)
    pairs = {tuple(sorted(map(int, e))) for e in extra if e[0] != e[1]} | set(tree)
    edges = np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)
    return n, edges


def _mst_inputs(rng):
    n, edges = _random_graph(rng)
    w = rng.random(edges.shape[0])
    if rng.random() < 0.3:
        w = np.round(w * 3) / 3  # ties: both twins must break them the same way
    return (n, edges, w), {}


def _root_inputs(rng):
    n, edges = _random_graph(rng)
    from sklearn_frontier.kernels.spanning_trees._reference import kruskal_mst as mst

    tree = mst(n, edges, rng.random(edges.shape[0]))
    return (n, edges, tree, int(rng.integers(0, n))), {}


def _tree_inputs(rng):
    n = int(rng.choice([1, 2, 3, int(rng.integers(4, 60))]))
    order, parent = random_rooted_tree(n, rng)
    return n, order, parent


def _labels_inputs(rng):
    n, order, parent = _tree_inputs(rng)
    return (order, parent, rng.random(n) < 0.2), {}


def _path_inputs(rng):
    n, order, parent = _tree_inputs(rng)
    pairs = rng.integers(0, n, size=(int(rng.integers(0, 40)), 2)).astype(np.int64)
    return (order, parent, rng.random(n), pairs), {}


def _ring_segments(rng):
    k = int(rng.integers(3, 12))
    theta = np.sort(rng.uniform(0, 2 * np.pi, k))
    r = rng.uniform(0.5, 1.5, k)
    ring = np.c_[r * np.cos(theta), r * np.sin(theta)]
    return np.ascontiguousarray(ring), np.ascontiguousarray(np.roll(ring, -1, axis=0))


def _cross_inputs(rng):
    a, b = _ring_segments(rng)
    n = int(rng.choice([1, 2, int(rng.integers(3, 70))]))
    return (rng.uniform(-2, 2, (n, 2)), rng.uniform(-2, 2, (n, 2)), a, b, float(rng.choice([0.0, 1e-3, 0.2]))), {}


def _inside_inputs(rng):
    a, b = _ring_segments(rng)
    n = int(rng.choice([1, 2, int(rng.integers(3, 70))]))
    return (rng.uniform(-2, 2, (n, 2)), a, b), {}


def _rooted_rows(rng, n, k):
    """``k`` random rooted trees on ``n`` vertices in BFS positions: (order, ppos, plen), each (k, n)."""
    order = np.empty((k, n), dtype=np.int64)
    ppos = np.empty((k, n), dtype=np.int64)
    for r in range(k):
        o, parent = random_rooted_tree(n, rng, kind=str(rng.choice(["recursive", "path", "star"])))
        pos = np.empty(n, dtype=np.int64)
        pos[o] = np.arange(n)
        order[r] = o
        ppos[r] = np.where(parent[o] >= 0, pos[np.maximum(parent[o], 0)], -1)
    plen = rng.uniform(0.0, 2.0, (k, n)) * (rng.random((k, n)) < 0.95)
    return order, ppos, plen


def _sweep_inputs(rng):
    n = int(rng.choice([1, 2, 3, int(rng.integers(4, 60))]))
    M = int(rng.integers(1, 5))
    order, ppos, plen = _rooted_rows(rng, n, M)
    P = int(rng.integers(0, M + 1))
    prop_order, prop_ppos, prop_plen = _rooted_rows(rng, n, max(P, 1))
    slot = np.full(M, -1, dtype=np.int64)
    slot[rng.permutation(M)[:P]] = np.arange(P)
    G = rng.normal(size=(M, n)) * 0.3
    W = rng.integers(0, 4, n).astype(np.float64) * (rng.random(n) < 0.8)
    S0 = W * rng.normal(size=n)
    lam = 10 ** rng.uniform(-1, 2, M)
    lo, hi = (-3.0, 5.0) if rng.random() < 0.8 else (1.0, 1.0)
    step = float(rng.choice([0.0, 0.3, 1.5]))
    from sklearn_frontier.kernels.spanning_trees._reference import routed_field_coefficients

    coef = [routed_field_coefficients(ppos[m], plen[m], lam[m]) for m in range(M)]
    rho, prec1 = (np.array([c[k] for c in coef]).reshape(M, n) for k in (0, 1))
    return (order, ppos, plen, lam, rho, prec1, G, G.sum(axis=0), W, S0, slot, prop_order, prop_ppos, prop_plen,
            rng.normal(size=M), rng.random(M), rng.random(M), rng.normal(size=(M, n)), float(rng.uniform(0.01, 1.0)),
            float(rng.uniform(0.05, 2.0)), lo, hi, step), {}


CASES = {
    "tree_precision_solve": TwinCase(make_inputs=_make_inputs, rtol=1e-11, atol=1e-12),
    "tree_collapsed_loglik": TwinCase(make_inputs=lambda rng: _make_inputs(rng, loglik=True), rtol=1e-11, atol=1e-12),
    "routed_sweep": TwinCase(make_inputs=_sweep_inputs, rtol=1e-9, atol=1e-11),
    "routed_coefficients": TwinCase(make_inputs=_routed_inputs, rtol=1e-13, atol=0.0),
    "kruskal_mst": TwinCase(make_inputs=_mst_inputs),
    "root_tree": TwinCase(make_inputs=_root_inputs),
    "partition_labels": TwinCase(make_inputs=_labels_inputs),
    "tree_path_lengths": TwinCase(make_inputs=_path_inputs, rtol=1e-12),
    "segments_cross_rings": TwinCase(make_inputs=_cross_inputs),
    "points_in_rings": TwinCase(make_inputs=_inside_inputs),
}
