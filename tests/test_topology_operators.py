"""Known answers for the CEO operators: PSD bound, closed forms, chain lemma, sandwich, Algorithm 1."""

import pickle

import numpy as np
import pytest
import scipy.linalg as la
import scipy.sparse as sp

from sklearn_frontier.topology import (
    CollapsedOperator,
    clique_complex,
    collapsed_operator,
    coupling_bounds,
    graded_laplacian,
    hypergraph_complex,
)
from sklearn_frontier.topology._operators import chain_operator


def _graph(n, p, seed):
    rng = np.random.default_rng(seed)
    A = np.triu(rng.random((n, n)) < p, 1)
    return (A | A.T).astype(float)


def _path(n):
    A = np.diag(np.ones(n - 1), 1)
    return A + A.T


def _cycle(n):
    A = _path(n)
    A[0, -1] = A[-1, 0] = 1
    return A


def _lmin(M):
    M = M.toarray() if sp.issparse(M) else M
    return la.eigvalsh((M + M.T) / 2)[0]


def _norm2(M):
    M = M.toarray() if sp.issparse(M) else M
    return np.abs(la.eigvalsh((M + M.T) / 2)).max()


def _complexes(seed):
    """Non-chain complexes: mixed and unsigned clique complexes, and a hypergraph complex."""
    A = _graph(16, 0.45, seed)
    rng = np.random.default_rng(seed)
    cells = [rng.choice(16, size=int(rng.integers(3, 6)), replace=False) for _ in range(6)]
    return {"mixed": clique_complex(A, 2, signed="mixed"), "unsigned": clique_complex(A, 2, signed=False),
            "mixed3": clique_complex(A, 3, signed="mixed"), "hypergraph": hypergraph_complex(A, cells)}


# ---------------------------------------------------------------------------------------------- bounds
@pytest.mark.parametrize("n", [3, 5, 8])
def test_path_and_cycle_bounds(n):
    b_path = coupling_bounds(clique_complex(_path(n), 1))[0]
    assert b_path == pytest.approx(2 * np.sin(np.pi / (2 * n)), rel=1e-10)
    b_cycle = coupling_bounds(clique_complex(_cycle(n), 1))[0]
    assert b_cycle == pytest.approx(np.sqrt(2 - 2 * np.cos(2 * np.pi / n)), rel=1e-10)


@pytest.mark.parametrize("n", [4, 5, 6, 7])
def test_complete_graph_bounds_every_rank(n):
    np.testing.assert_allclose(coupling_bounds(clique_complex(np.ones((n, n)), max_rank=3)), np.sqrt(n), rtol=1e-10)


def test_betas_scale_bounds_and_empty_rank_is_zero():
    Bs = clique_complex(_path(5), 2)
    b = coupling_bounds(Bs, betas=[3.0, 2.0])
    assert b[0] == pytest.approx(3 * 2 * np.sin(np.pi / 10)) and b[1] == 0.0


@pytest.mark.parametrize("signed", [True, "mixed", False])
def test_psd_at_full_coupling(signed):
    Bs = clique_complex(_graph(14, 0.5, 1), 3, signed=signed)
    L = graded_laplacian(Bs, coupling=1.0)
    assert _lmin(L) >= -1e-10 * _norm2(L)


def test_bound_is_sharp_for_chain_complexes():
    Bs = clique_complex(_graph(12, 0.5, 2), 2)
    betas = np.array([1.5, 2.0])
    b = coupling_bounds(Bs, betas)
    L = graded_laplacian(Bs, betas, gammas=[1.1 * b[0], b[1]])
    L0 = (Bs[0] @ Bs[0].T).toarray()
    ev = la.eigvalsh(L0)
    lam_plus = ev[ev > 1e-9][0]
    assert _lmin(L) == pytest.approx(-0.1 * betas[0] * lam_plus, rel=1e-8)
    with pytest.raises(ValueError, match="exceeds the PSD bound"):
        collapsed_operator(Bs, betas, gammas=[1.1 * b[0], b[1]])


# ------------------------------------------------------------------------------------------- closed form
@pytest.mark.parametrize("n,rho", [(4, 1.0), (5, 0.5), (7, 0.3)])
def test_complete_graph_spectrum(n, rho):
    eps = 1e-3
    for Bs in (clique_complex(np.ones((n, n)), 2), clique_complex(np.ones((n, n)), 3)):
        ev = la.eigvalsh(collapsed_operator(Bs, coupling=rho, eps=eps))
        assert abs(ev[0]) < 1e-10 * n
        np.testing.assert_allclose(ev[1:], n - rho ** 2 * n ** 2 / (n + eps), rtol=0, atol=1e-12)
    if (n, rho) == (5, 0.5):
        assert ev[1] == pytest.approx(3.7502499500099980, abs=1e-12)


# ------------------------------------------------------------------------------------------ chain lemma
@pytest.mark.parametrize("max_rank", [2, 3])
@pytest.mark.parametrize("eps", [1e-3, 0.1])
def test_chain_degeneracy_lemma(max_rank, eps):
    rng = np.random.default_rng(max_rank)
    Bs = clique_complex(_graph(15, 0.5, max_rank), max_rank)
    betas = np.concatenate([[1.3], rng.uniform(0.5, 10, max_rank - 1)])
    b = coupling_bounds(Bs, betas)
    gammas = np.concatenate([[0.7 * b[0]], rng.uniform(0, 1, max_rank - 1) * b[1:]])
    generic = collapsed_operator(Bs, betas, gammas, eps=eps, fast_path=False)
    L0 = (Bs[0] @ Bs[0].T).toarray()
    f = chain_operator(L0, betas[0], gammas[0], eps)
    normA = _norm2(betas[0] * L0)
    np.testing.assert_allclose(generic, f, rtol=0, atol=1e-10 * normA)
    fast = collapsed_operator(Bs, betas, gammas, eps=eps)
    np.testing.assert_allclose(fast, f, rtol=0, atol=1e-12 * normA)
    # the eigenvalue map g(λ) = β_1 λ − γ_0² λ/(β_1 λ + ε) on L_0's eigenvalues
    lam = la.eigvalsh(L0)
    g = betas[0] * lam - gammas[0] ** 2 * lam / (betas[0] * lam + eps)
    np.testing.assert_allclose(la.eigvalsh(fast), np.sort(g), rtol=0, atol=1e-10 * normA)


# --------------------------------------------------------------------------------------------- sandwich
@pytest.mark.parametrize("c", [0.3, 1.0])
@pytest.mark.parametrize("kind", ["mixed", "unsigned", "mixed3", "hypergraph"])
def test_sandwich_and_eigenvalue_interlacing(kind, c):
    Bs = _complexes(4)[kind]
    K = len(Bs)
    rng = np.random.default_rng(K)
    betas = rng.uniform(0.5, 3, K)
    gammas = c * coupling_bounds(Bs, betas)
    eps = 1e-3
    L = graded_laplacian(Bs, betas, gammas)
    tol = 1e-10 * _norm2(L)
    L0 = (Bs[0] @ Bs[0].T).toarray()
    A = betas[0] * L0
    f = chain_operator(L0, betas[0], gammas[0], eps)
    routes = [collapsed_operator(Bs, betas, gammas, eps=eps, fast_path=False)]
    routes.append(collapsed_operator(Bs, betas, gammas, eps=eps))  # structured elimination where K = 2
    np.testing.assert_allclose(routes[0], routes[1], rtol=0, atol=1e-10 * _norm2(A))
    for S in routes:
        assert _lmin(S) >= -tol
        assert _lmin(A - S) >= -tol
        assert _lmin(S - f) >= -tol
        assert np.all(la.eigvalsh(S) <= la.eigvalsh(A) + tol)
        assert _norm2(A - S) <= gammas[0] ** 2 / betas[0] + tol


def test_degeneracy_positive_on_mixed_complex():
    from sklearn_frontier.topology import CEOSpectralClustering

    A = _graph(30, 0.3, 5)
    mixed = CEOSpectralClustering(3, affinity="precomputed", incidence="mixed", random_state=0).fit(A)
    assert mixed.n_cells_[2] > 0 and 0 < mixed.degeneracy_ <= 1
    assert mixed.sandwich_gap_ <= mixed.sandwich_bound_ + 1e-10
    signed = CEOSpectralClustering(3, affinity="precomputed", random_state=0).fit(A)
    assert signed.degeneracy_ == 0.0 and signed.fast_path_ and signed.chain_defect_ == 0.0


# ------------------------------------------------------------------------------- monotonicity, Prop 3.10
def test_monotone_in_eps_and_in_cells():
    Bs = _complexes(6)["hypergraph"]
    S1 = collapsed_operator(Bs, eps=1e-4)
    S2 = collapsed_operator(Bs, eps=1e-2)
    tol = 1e-10 * _norm2(S2)
    assert _lmin(S2 - S1) >= -tol
    b = coupling_bounds(Bs)
    S_rank1 = collapsed_operator(Bs[:1], gammas=[0.5 * b[0]], eps=1e-3)
    S_full = collapsed_operator(Bs, gammas=0.5 * b, eps=1e-3)
    assert _lmin(S_full - S_rank1) >= -tol


def test_prop_3_10_bound_and_energy_identity():
    Bs = _complexes(7)["mixed"]
    b = coupling_bounds(Bs)
    gammas = 0.8 * b
    L = graded_laplacian(Bs, gammas=gammas).toarray()
    n0 = Bs[0].shape[0]
    A, X, C = L[:n0, :n0], L[:n0, n0:], L[n0:, n0:]
    S_dag = A - X @ np.linalg.pinv(C, rcond=1e-10, hermitian=True) @ X.T
    evC = la.eigvalsh(C)
    lam_plus = evC[evC > 1e-9 * evC[-1]][0]
    normX2 = la.norm(X, 2) ** 2
    for eps in (1e-4, 1e-3, 1e-2):
        S = collapsed_operator(Bs, gammas=gammas, eps=eps)
        assert _norm2(S - S_dag) <= eps * normX2 / (lam_plus * (lam_plus + eps)) + 1e-10
        # energy: uᵀS_εu = min_z [u; z]ᵀ(L⋆ + ε(0 ⊕ I))[u; z], attained at z* = −(C + εI)⁻¹Xᵀu
        u = np.random.default_rng(0).standard_normal(n0)
        z = -np.linalg.solve(C + eps * np.eye(C.shape[0]), X.T @ u)
        w = np.concatenate([u, z])
        Le = L + eps * np.diag(np.r_[np.zeros(n0), np.ones(C.shape[0])])
        assert u @ S @ u == pytest.approx(w @ Le @ w, abs=1e-10 * _norm2(L) * (u @ u))


# ------------------------------------------------------------------------------------------ Algorithm 1
@pytest.mark.parametrize("fast_path", [True, False])
@pytest.mark.parametrize("kind", ["signed", "mixed", "hypergraph"])
def test_matrix_free_equals_dense(kind, fast_path):
    A = _graph(18, 0.4, 8)
    Bs = clique_complex(A, 2) if kind == "signed" else _complexes(8)[kind if kind != "signed" else "mixed"]
    S = collapsed_operator(Bs, coupling=0.9, fast_path=fast_path)
    op = collapsed_operator(Bs, coupling=0.9, solver="cg", rtol=1e-12, fast_path=fast_path)
    assert isinstance(op, CollapsedOperator)
    V = np.random.default_rng(1).standard_normal((S.shape[0], 5))
    scale = np.abs(S @ V).max()
    np.testing.assert_allclose(op @ V, S @ V, rtol=0, atol=1e-9 * scale)
    np.testing.assert_allclose(op @ V[:, 0], S @ V[:, 0], rtol=0, atol=1e-9 * scale)
    np.testing.assert_allclose(op.to_dense(), S, rtol=0, atol=1e-9 * np.abs(S).max())
    restored = pickle.loads(pickle.dumps(op))
    np.testing.assert_array_equal(restored @ V, op @ V)
    if kind != "unsigned":
        assert np.abs(op @ np.ones(S.shape[0])).max() < 1e-9 * scale  # S_ε 1 = 0 for signed B_1
    assert op.n_iter_ > 0 or fast_path is False


@pytest.mark.parametrize("signed", [True, False])
@pytest.mark.parametrize("fast_path", [True, False])
def test_permutation_invariance(signed, fast_path):
    A = _graph(14, 0.5, 9)
    perm = np.random.default_rng(3).permutation(14)
    P = np.eye(14)[perm]
    S = collapsed_operator(clique_complex(A, 2, signed=signed), coupling=0.6, fast_path=fast_path)
    Sp = collapsed_operator(clique_complex(P @ A @ P.T, 2, signed=signed), coupling=0.6, fast_path=fast_path)
    np.testing.assert_allclose(Sp, P @ S @ P.T, rtol=0, atol=1e-12 * _norm2(S))


def test_operator_bad_weights():
    Bs = clique_complex(np.ones((4, 4)), 2)
    with pytest.raises(ValueError, match="length"):
        collapsed_operator(Bs, betas=[1.0])
    with pytest.raises(ValueError, match=">= 0"):
        collapsed_operator(Bs, gammas=[-1.0, 0.0])
    with pytest.raises(ValueError, match="> 0"):
        collapsed_operator(Bs, betas=[0.0, 1.0])
    with pytest.raises(ValueError, match="eps"):
        collapsed_operator(Bs, eps=0.0)
    with pytest.raises(ValueError, match="coupling"):
        collapsed_operator(Bs, coupling=1.5)
    with pytest.raises(ValueError, match="solver"):
        collapsed_operator(Bs, solver="lu")
    with pytest.raises(TypeError):
        collapsed_operator(Bs[0])


# ------------------------------------------------------------------------------ cellwise exact elimination
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cellwise_elimination_matches_every_route(seed):
    """Overlapping hyperedges (pieces of several cells): cellwise = Woodbury (schur) = sparse LU = matrix-free."""
    from sklearn_frontier.topology._operators import (
        _cell_blocks,
        _collapse,
        _sigma_min_positive,
        _splu_collapse,
        _two_rank_schur,
    )

    rng = np.random.default_rng(seed)
    n = 40
    cells = [rng.choice(12 if i < 8 else n, size=int(rng.integers(3, 6)), replace=False) for i in range(25)]
    Bs = hypergraph_complex(_graph(n, 0.08, seed), cells)
    groups, sig2 = _cell_blocks(Bs[1])
    assert max(rows.shape[1] for rows, _, _ in groups) > 10  # some cells overlap in a pair
    assert np.isclose(np.sqrt(sig2), _sigma_min_positive(Bs[1], is_b1=False), rtol=1e-10)
    betas = rng.uniform(0.5, 3, 2)
    gammas = rng.uniform(0.2, 1.0, 2) * coupling_bounds(Bs, betas)
    res = _collapse(Bs, betas, gammas, eps=1e-3, solver="dense")
    assert res["route"] == "cellwise"
    S = res["operator"]
    ref = _splu_collapse(Bs, betas, gammas, 1e-3)
    schur, chain = _two_rank_schur(Bs[0], Bs[1], betas, gammas, 1e-3)
    scale = _norm2(ref)
    for other in (ref, schur):
        np.testing.assert_allclose(S, other, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(res["chain_part"], chain, rtol=0, atol=1e-12 * scale)
    op = CollapsedOperator(Bs, betas, gammas, 1e-3, rtol=1e-13, structured=True)
    np.testing.assert_allclose(op.to_dense(), S, rtol=0, atol=1e-9 * scale)
    assert pickle.loads(pickle.dumps(op)).structured
    assert _cell_blocks(Bs[1], max_block=5) is None  # a piece too large: the caller falls back to another route
    with pytest.raises(ValueError, match="two-rank"):
        CollapsedOperator(Bs[:1], betas[:1], gammas[:1], 1e-3, structured=True)


def test_large_chain_path_helpers_match_references():
    """n_0 > 1000 dense chain path: b_0 from the shared inverse F, and LOBPCG eigenpairs, against references."""
    from types import SimpleNamespace

    from sklearn_frontier.topology._operators import _fiedler_from_inverse, _sigma_min_positive, _spd_inverse
    from sklearn_frontier.topology._spectral import _dense_smallest

    n = 1100
    A = sp.lil_matrix((n, n))
    for i in range(n - 1):
        if i != 549:  # two paths of 550 vertices: two components
            A[i, i + 1] = A[i + 1, i] = 1.0
    B1 = clique_complex(A.tocsr(), max_rank=1)[0]
    L0 = (B1 @ B1.T).toarray()
    F = _spd_inverse(2.0 * L0 + 1e-3 * np.eye(n))
    b0 = _fiedler_from_inverse(L0, F, 2.0, 1e-3)
    assert np.isclose(b0, 2 * np.sin(np.pi / (2 * 550)), rtol=1e-8)
    assert np.isclose(b0, _sigma_min_positive(B1, is_b1=True), rtol=1e-8)
    S = chain_operator(L0, 1.0, 0.5 * b0, 1e-3)
    d = np.diag(S).copy()
    isq = 1 / np.sqrt(d)
    M = S * np.outer(isq, isq)
    est = SimpleNamespace(betas_=np.ones(1), boundaries_=[B1], _isolated=np.zeros(n, dtype=bool))
    mu, Psi = _dense_smallest(est, M.copy(), d, isq, 4, np.random.RandomState(0))
    mu_ref, Psi_ref = la.eigh(M, subset_by_index=[0, 3])
    np.testing.assert_allclose(mu, mu_ref, atol=1e-9)
    assert np.linalg.norm(Psi @ Psi.T - Psi_ref @ Psi_ref.T, 2) < 1e-6
