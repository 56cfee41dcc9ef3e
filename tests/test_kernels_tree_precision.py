"""Tree-precision kernels against dense linear algebra (known answers)."""

import numpy as np
import pytest
from scipy.stats import multivariate_normal
from sklearn_frontier.kernels import tree_collapsed_loglik, tree_precision_solve
from sklearn_frontier.kernels.spanning_trees import random_rooted_tree
from sklearn_frontier.kernels.spanning_trees._reference import routed_coefficients

from sklearn_frontier import config_context


def _dense(parent, rho, prec):
    n = parent.shape[0]
    B = np.zeros((n, n))
    for v in range(n):
        if parent[v] >= 0:
            B[v, parent[v]] = rho[v]
    IB = np.eye(n) - B
    return IB.T @ np.diag(prec) @ IB


def _problem(n, kind, seed):
    rng = np.random.default_rng(seed)
    order, parent = random_rooted_tree(n, rng, kind)
    rho = rng.uniform(0.05, 0.99, n)
    rho[rng.random(n) < 0.2] = 0.0
    prec = rng.uniform(0.3, 4.0, n)
    w = rng.integers(1, 4, n).astype(float)
    w[rng.random(n) < 0.25] = 0.0  # unobserved vertices
    s = w * rng.normal(size=n)
    return order, parent, rho, prec, w, s, float(rng.uniform(0.1, 1.5))


CASES = [(n, kind) for n in (1, 2, 3, 50, 400) for kind in ("recursive", "path", "star")]


@pytest.mark.parametrize("n,kind", CASES)
@pytest.mark.parametrize("backend", ["reference", "numba"])
def test_solve_matches_dense(n, kind, backend):
    order, parent, rho, prec, w, s, sigma2 = _problem(n, kind, seed=n + len(kind))
    Q = _dense(parent, rho, prec)
    P = Q + np.diag(w / sigma2)
    h = s / sigma2
    with config_context(backend=backend):
        mean, ldr, quad = tree_precision_solve(order, parent, rho, prec, w, s, sigma2)
    exact = np.linalg.solve(P, h)
    np.testing.assert_allclose(mean, exact, rtol=1e-10, atol=1e-12 * np.abs(exact).max(initial=1.0))
    ldr_dense = np.linalg.slogdet(P)[1] - np.linalg.slogdet(Q)[1]
    assert abs(ldr - ldr_dense) <= 1e-10 * max(1.0, abs(ldr_dense))
    assert abs(quad - h @ exact) <= 1e-10 * max(1.0, abs(quad))


@pytest.mark.parametrize("n,kind", [(1, "path"), (3, "star"), (30, "recursive")])
def test_loglik_matches_multivariate_normal(n, kind):
    order, parent, rho, prec, _, _, sigma2 = _problem(n, kind, seed=7 * n)
    rng = np.random.default_rng(n)
    obs = rng.random(n) < 0.75
    obs[order[0]] = True
    wts = np.where(obs, rng.integers(1, 3, n), 0).astype(float)
    ybar = rng.normal(size=n)
    # one observation per unit weight: weight-2 vertices carry two rows with these values
    rows_v, rows_y = [], []
    for v in range(n):
        for j in range(int(wts[v])):
            rows_v.append(v)
            rows_y.append(ybar[v] + 0.3 * j)
    rows_v, rows_y = np.array(rows_v), np.array(rows_y)
    S = np.bincount(rows_v, weights=rows_y, minlength=n)
    SS = float(np.sum(rows_y ** 2))
    ll = tree_collapsed_loglik(order, parent, rho, prec, wts, S, sigma2, SS, float(rows_y.size))
    C = np.linalg.inv(_dense(parent, rho, prec))
    cov = C[np.ix_(rows_v, rows_v)] + sigma2 * np.eye(rows_v.size)
    dense = multivariate_normal(mean=np.zeros(rows_v.size), cov=cov).logpdf(rows_y)
    assert abs(ll - dense) <= 1e-9 * abs(dense)


def test_hard_links_equal_merged_vertices():
    # path 0-1-2 with vertex 1 hard-linked to 0 (rho=1): same model as vertices {0,1} merged
    order = np.array([0, 1, 2])
    parent = np.array([-1, 0, 1])
    rho = np.array([0.0, 1.0, 0.6])
    prec = np.array([2.0, np.inf, 1.5])
    w = np.array([1.0, 2.0, 1.0])
    s = np.array([0.5, 1.0, -0.3])
    mean, ldr, quad = tree_precision_solve(order, parent, rho, prec, w, s, 0.7)
    m_mean, m_ldr, m_quad = tree_precision_solve([0, 1], [-1, 0], [0.0, 0.6], [2.0, 1.5], [3.0, 1.0], [1.5, -0.3],
                                                 0.7)
    np.testing.assert_allclose(mean, [m_mean[0], m_mean[0], m_mean[1]], rtol=1e-13)
    assert abs(ldr - m_ldr) < 1e-13 and abs(quad - m_quad) < 1e-13


def test_huge_precision_is_stable():
    # prec ~ 1e14 (edge much shorter than the length scale) must not lose the data term
    order, parent = np.arange(3), np.array([-1, 0, 1])
    rho, prec = routed_coefficients(np.array([0.0, 1e-12, 1e-12]), 1.0, 1.0, 0)
    mean, ldr, _ = tree_precision_solve(order, parent, rho, prec, [0.0, 0.0, 1.0], [0.0, 0.0, 2.0], 1.0)
    np.testing.assert_allclose(mean, [1.0, 1.0, 1.0], rtol=1e-9)  # the three values are one N(0,1) variable
    assert abs(ldr - np.log(2.0)) < 1e-9


def test_draws_match_posterior_moments():
    order, parent, rho, prec, w, s, sigma2 = _problem(5, "recursive", seed=3)
    P = _dense(parent, rho, prec) + np.diag(w / sigma2)
    mean = np.linalg.solve(P, s / sigma2)
    cov = np.linalg.inv(P)
    from sklearn_frontier.kernels import get_implementation

    _, solve = get_implementation("tree_precision_solve", "numba")  # the jitted twin, without re-validation
    rng = np.random.default_rng(0)
    n_draws = 20000
    noise = rng.standard_normal((n_draws, 5))
    draws = np.array([solve(order, parent, rho, prec, w, s, sigma2, z)[0] for z in noise])
    se = np.sqrt(np.diag(cov) / n_draws)
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 4 * se)
    emp = np.cov(draws.T)
    se_cov = np.sqrt((cov ** 2 + np.outer(np.diag(cov), np.diag(cov))) / n_draws)
    assert np.all(np.abs(emp - cov) < 4 * se_cov)


def test_numba_equals_numpy():
    order, parent, rho, prec, w, s, sigma2 = _problem(400, "recursive", seed=11)
    noise = np.random.default_rng(1).standard_normal(400)
    with config_context(backend="numba"):
        a = tree_precision_solve(order, parent, rho, prec, w, s, sigma2, noise)
    with config_context(backend="reference"):
        b = tree_precision_solve(order, parent, rho, prec, w, s, sigma2, noise)
    np.testing.assert_allclose(a[0], b[0], rtol=1e-12, atol=1e-14)
    assert abs(a[1] - b[1]) <= 1e-12 * abs(b[1]) and abs(a[2] - b[2]) <= 1e-12 * abs(b[2])


def test_routed_loglik_is_root_invariant():
    from sklearn_frontier.kernels import kruskal_mst, root_tree

    rng = np.random.default_rng(5)
    n = 40
    X = rng.random((n, 2))
    edges = np.array([(i, j) for i in range(n) for j in range(i + 1, n)])
    lengths = np.linalg.norm(X[edges[:, 0]] - X[edges[:, 1]], axis=1)
    tree = kruskal_mst(n, edges, lengths)
    w = rng.integers(0, 3, n).astype(float)
    s = w * rng.normal(size=n)
    lls = []
    for root in (0, 7, 31):
        order, parent, pedge = root_tree(n, edges, tree, root)
        plen = np.where(pedge >= 0, lengths[np.maximum(pedge, 0)], 0.0)
        rho, prec = routed_coefficients(plen, 0.3, 0.8, root)
        lls.append(tree_collapsed_loglik(order, parent, rho, prec, w, s, 0.5, 10.0, w.sum()))
    np.testing.assert_allclose(lls, lls[0], rtol=1e-11)


def test_bast_cluster_term_equals_kernel():
    # BAST's integrated cluster term sum_j l(W_j, S_j) is the kernel with rho in {0,1}, prec in {1/sigma_mu^2, inf}
    rng = np.random.default_rng(2)
    n, sigma2, sigma_mu = 30, 0.4, 0.3
    order, parent = random_rooted_tree(n, rng)
    cut = rng.random(n) < 0.2
    cut[order[0]] = True
    rho = np.where(cut, 0.0, 1.0)
    prec = np.where(cut, 1.0 / sigma_mu ** 2, np.inf)
    w = rng.integers(0, 3, n).astype(float)
    s = w * rng.normal(size=n)
    _, ldr, quad = tree_precision_solve(order, parent, rho, prec, w, s, sigma2)
    from sklearn_frontier.kernels import partition_labels

    labels = partition_labels(order, parent, cut)
    Wc, Sc = np.bincount(labels, weights=w), np.bincount(labels, weights=s)
    rho_b = sigma2 / sigma_mu ** 2
    ell = np.sum(-0.5 * np.log((Wc + rho_b) / rho_b) + Sc ** 2 / (2 * sigma2 * (Wc + rho_b)))
    assert abs((-0.5 * ldr + 0.5 * quad) - ell) < 1e-11


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="parent"):
        tree_precision_solve([1, 0], [-1, 0], [0, 0], [1, 1], [0, 0], [0, 0], 1.0)
    with pytest.raises(ValueError, match="prec"):
        tree_precision_solve([0], [-1], [0], [np.inf], [0], [0], 1.0)
    with pytest.raises(ValueError, match="sigma2"):
        tree_precision_solve([0], [-1], [0], [1.0], [0], [0], 0.0)


def test_tree_path_lengths_match_shortest_paths():
    import scipy.sparse as sp
    from scipy.sparse.csgraph import shortest_path
    from sklearn_frontier.kernels import tree_path_lengths

    rng = np.random.default_rng(4)
    for n in (1, 2, 37):
        order, parent = random_rooted_tree(n, rng)
        plen = rng.uniform(0.1, 1.0, n)
        plen[order[0]] = 0.0
        child = np.flatnonzero(parent >= 0)
        A = sp.csr_matrix((plen[child], (child, parent[child])), shape=(n, n))
        D = shortest_path(A, directed=False)
        pairs = rng.integers(0, n, size=(50, 2))
        np.testing.assert_allclose(tree_path_lengths(order, parent, plen, pairs), D[pairs[:, 0], pairs[:, 1]],
                                   rtol=1e-12, atol=1e-12)
