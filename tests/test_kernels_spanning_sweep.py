"""The PR-BAST sweep kernel and the linear-time sort behind the tree proposals: known answers."""

import numpy as np
import pytest
from sklearn_frontier.kernels import get_implementation, kruskal_mst, tree_precision_solve
from sklearn_frontier.kernels.spanning_trees import random_rooted_tree, routed_sweep
from sklearn_frontier.kernels.spanning_trees._numba import _stable_argsort
from sklearn_frontier.kernels.spanning_trees._reference import kruskal_mst as kruskal_reference
from sklearn_frontier.kernels.spanning_trees._reference import routed_field_coefficients

from sklearn_frontier import config_context


@pytest.mark.parametrize("kind", ["normal", "ties", "constant", "outlier", "heavy_tail", "large"])
def test_bucket_sort_is_the_stable_argsort(kind):
    rng = np.random.default_rng(0)
    n = 50_000 if kind == "large" else 3000
    keys = {"normal": rng.normal(size=n), "ties": np.round(rng.normal(size=n), 1), "constant": np.ones(n),
            "outlier": np.r_[np.zeros(n - 1), 1e12], "heavy_tail": rng.standard_cauchy(n),
            "large": np.log(rng.uniform(0.01, 1, n)) + 0.3 * rng.normal(size=n)}[kind]
    np.testing.assert_array_equal(_stable_argsort(keys), np.argsort(keys, kind="stable"))


def test_kruskal_twins_agree_on_a_large_graph_with_ties():
    from scipy.spatial import Delaunay

    rng = np.random.default_rng(1)
    V = rng.uniform(size=(3000, 2))
    tri = Delaunay(V).simplices
    edges = np.unique(np.sort(np.r_[tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [0, 2]]], axis=1), axis=0)
    w = np.round(np.linalg.norm(V[edges[:, 0]] - V[edges[:, 1]], axis=1), 2)  # many ties
    np.testing.assert_array_equal(kruskal_mst(3000, edges, w), kruskal_reference(3000, edges, w))


def _positions(order, parent):
    pos = np.empty(order.size, dtype=np.int64)
    pos[order] = np.arange(order.size)
    return np.where(parent[order] >= 0, pos[np.maximum(parent[order], 0)], -1)


@pytest.mark.parametrize("backend", ["reference", "numba"])
def test_sweep_without_noise_is_the_exact_posterior_mean(backend):
    # one component, fixed length scale, no tree proposal, zero noise: the draw is P^-1 h of the tree solve
    rng = np.random.default_rng(2)
    n, lam, s2, sigma2 = 200, 0.7, 0.4, 0.3
    order, parent = random_rooted_tree(n, rng)
    plen_v = rng.uniform(0.01, 1.0, n)
    W = rng.integers(0, 3, n).astype(float)
    S0 = W * rng.normal(size=n)
    ppos = _positions(order, parent)
    with config_context(backend=backend):
        out = routed_sweep(order[None], ppos[None], plen_v[order][None], [lam], np.zeros((1, n)), np.zeros(n), W, S0,
                           [-1], order[None], ppos[None], plen_v[order][None], [0.0], [0.5], [0.5],
                           np.zeros((1, n)), s2, sigma2, 0.0, 0.0, 0.0)
    rho, prec1 = routed_field_coefficients(parent, plen_v, lam)
    mean, _, _ = tree_precision_solve(order, parent, rho, prec1 / s2, W, S0, sigma2)
    np.testing.assert_allclose(out[0][0], mean, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(out[1], mean, rtol=1e-10, atol=1e-12)
    assert out[5].sum() == 0 and tuple(out[6]) == (0, 0, 0, 0)


def test_sweep_draws_have_the_exact_posterior_law():
    # many independent sweeps from the same state: draws ~ N(P^-1 h, P^-1), checked on mean and variance
    rng = np.random.default_rng(3)
    n, lam, s2, sigma2, reps = 30, 1.3, 0.5, 0.2, 4000
    order, parent = random_rooted_tree(n, rng)
    plen_v = rng.uniform(0.05, 1.0, n)
    W = np.ones(n)
    S0 = rng.normal(size=n)
    ppos = _positions(order, parent)
    sweep = get_implementation("routed_sweep")[1]
    rho, prec1 = routed_field_coefficients(parent, plen_v, lam)
    rho_p, prec1_p = (a[order][None] for a in (rho, prec1))
    draws = np.array([sweep(order[None], ppos[None], plen_v[order][None], np.array([lam]), rho_p, prec1_p,
                            np.zeros((1, n)), np.zeros(n), W, S0, np.array([-1]), order[None], ppos[None],
                            plen_v[order][None], np.zeros(1), np.full(1, 0.5), np.full(1, 0.5),
                            rng.normal(size=(1, n)), s2, sigma2, 0.0, 0.0, 0.0)[0][0] for _ in range(reps)])
    B = np.zeros((n, n))
    child = parent >= 0
    B[np.flatnonzero(child), parent[child]] = rho[child]
    Q = (np.eye(n) - B).T @ np.diag(prec1 / s2) @ (np.eye(n) - B)
    cov = np.linalg.inv(Q + np.diag(W / sigma2))
    mean = cov @ (S0 / sigma2)
    sd = np.sqrt(np.diag(cov))
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 4.5 * sd / np.sqrt(reps))
    np.testing.assert_allclose(draws.std(axis=0), sd, rtol=0.08)
