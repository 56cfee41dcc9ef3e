"""Known answers across the whole admissible coupling range of S_ε: the "schur" bound
√(b_k² + ε β_{k+1}) keeps 0 ⪯ f_ε(L_0) ⪯ S_ε ⪯ β_1 L_0 for every complex, and it is exact for chain complexes."""

import numpy as np
import pytest
import scipy.linalg as la

from sklearn_frontier.topology import (
    CEOSmoother,
    CEOSpectralClustering,
    clique_complex,
    collapsed_operator,
    coupling_bounds,
    hypergraph_complex,
)
from sklearn_frontier.topology._operators import chain_operator

RHOS = [0.0, 0.25, 0.5, 0.75, 0.9, 1.0]
EPSS = [1e-3, 0.1, 1.0, 10.0, 100.0]


def _graph(n, p, seed):
    rng = np.random.default_rng(seed)
    A = np.triu(rng.random((n, n)) < p, 1)
    return (A | A.T).astype(float)


def _cycle(n):
    A = np.diag(np.ones(n - 1), 1)
    A[0, -1] = 1
    return A + A.T


def _lmin(M):
    return la.eigvalsh((M + M.T) / 2)[0]


@pytest.mark.parametrize("eps", EPSS)
@pytest.mark.parametrize("rho", RHOS)
def test_complete_graph_closed_form_over_the_range(rho, eps):
    # K_n: every non-zero Hodge eigenvalue is n, b_0² = n, γ_0² = ρ²(n + ε): g(n) = n − ρ²(n + ε)n/(n + ε) = n(1 − ρ²)
    n = 6
    for Bs in (clique_complex(np.ones((n, n)), 1), clique_complex(np.ones((n, n)), 2)):
        S = collapsed_operator(Bs, coupling=rho, eps=eps, coupling_bound="schur")
        ev = la.eigvalsh(S)
        assert abs(ev[0]) < 1e-9 * n
        np.testing.assert_allclose(ev[1:], n * (1 - rho ** 2), rtol=0, atol=1e-9 * n)


@pytest.mark.parametrize("eps", EPSS)
@pytest.mark.parametrize("rho", RHOS)
def test_cycle_closed_form_over_the_range(rho, eps):
    # C_n: λ_j = 2 − 2cos(2πj/n), λ_2 = λ_1 here (j = 1); S_ε has g(λ) = λ − ρ²(λ_2 + ε)λ/(λ + ε) on them
    n = 9
    lam = np.sort(2 - 2 * np.cos(2 * np.pi * np.arange(n) / n))
    lam2 = lam[1]
    g = lam - rho ** 2 * (lam2 + eps) * lam / (lam + eps)
    S = collapsed_operator(clique_complex(_cycle(n), 2), coupling=rho, eps=eps, coupling_bound="schur")
    np.testing.assert_allclose(la.eigvalsh(S), np.sort(g), rtol=0, atol=1e-9 * (1 + eps))
    assert la.eigvalsh(S)[1] >= -1e-9 * (1 + eps)  # PSD up to the top of the range, Fiedler value 0 at ρ = 1


@pytest.mark.parametrize("eps", [1e-3, 1.0, 100.0])
def test_schur_bound_is_exact_for_chain_complexes(eps):
    # beyond the bound the Fiedler eigenvalue is β_1λ_2 − γ²λ_2/(β_1λ_2 + ε) < 0: the known negative value
    Bs = clique_complex(_graph(12, 0.5, 2), 2)
    beta1 = 1.5
    L0 = (Bs[0] @ Bs[0].T).toarray()
    ev = la.eigvalsh(L0)
    lam2 = ev[ev > 1e-9][0]
    bound = coupling_bounds(Bs, betas=[beta1, 1.0], eps=eps)[0]
    assert bound ** 2 == pytest.approx(beta1 ** 2 * lam2 + eps * beta1, rel=1e-9)
    gam = 1.05 * bound
    f = chain_operator(L0, beta1, gam, eps)
    g = beta1 * ev - gam ** 2 * ev / (beta1 * ev + eps)
    g_fiedler = beta1 * lam2 - gam ** 2 * lam2 / (beta1 * lam2 + eps)
    assert g_fiedler < 0
    assert _lmin(f) == pytest.approx(g.min(), rel=1e-7) and _lmin(f) <= g_fiedler * (1 - 1e-9)
    with pytest.raises(ValueError, match="exceeds the PSD bound"):
        collapsed_operator(Bs, betas=[beta1, 1.0], gammas=[gam, 0.0], eps=eps)
    S = collapsed_operator(Bs, betas=[beta1, 1.0], gammas=[bound, 0.0], eps=eps)
    assert _lmin(S) >= -1e-9 * la.norm(L0, 2)


def _non_chain(seed):
    A = _graph(16, 0.45, seed)
    rng = np.random.default_rng(seed)
    cells = [rng.choice(16, size=int(rng.integers(3, 7)), replace=False) for _ in range(6)]
    return {"mixed": clique_complex(A, 2, signed="mixed"), "mixed3": clique_complex(A, 3, signed="mixed"),
            "hypergraph": hypergraph_complex(A, cells), "pure hypergraph": hypergraph_complex(np.zeros((16, 16)),
                                                                                          cells + [range(16)])}


@pytest.mark.parametrize("eps", [1e-3, 1.0, 100.0])
@pytest.mark.parametrize("kind", ["mixed", "mixed3", "hypergraph", "pure hypergraph"])
def test_sandwich_over_the_whole_range(kind, eps):
    Bs = _non_chain(3)[kind]
    K = len(Bs)
    betas = np.random.default_rng(K).uniform(0.5, 3, K)
    L0 = (Bs[0] @ Bs[0].T).toarray()
    A = betas[0] * L0
    tol = 1e-9 * la.norm(A, 2) * (1 + eps)
    for rho in RHOS:
        gammas = rho * coupling_bounds(Bs, betas, eps=eps)
        f = chain_operator(L0, betas[0], gammas[0], eps)
        S = collapsed_operator(Bs, betas, gammas, eps=eps)
        S_ref = collapsed_operator(Bs, betas, gammas, eps=eps, fast_path=False)
        np.testing.assert_allclose(S, S_ref, rtol=0, atol=tol)
        assert _lmin(f) >= -tol  # 0 ⪯ f_ε(L_0)
        assert _lmin(S - f) >= -tol  # f_ε(L_0) ⪯ S_ε
        assert _lmin(A - S) >= -tol  # S_ε ⪯ A
        lmax = la.eigvalsh(L0)[-1]
        assert la.eigvalsh(A - S)[-1] <= gammas[0] ** 2 * lmax / (betas[0] * lmax + eps) + tol
    # the same through `coupling_bound="schur"`
    np.testing.assert_allclose(collapsed_operator(Bs, betas, coupling=1.0, eps=eps, coupling_bound="schur"), S,
                               rtol=0, atol=tol)


def test_large_eps_top_of_range_is_biharmonic():
    # chain complex, ρ = 1: S_ε = β_1² L_0 (L_0 − λ_2 I)(β_1 L_0 + εI)⁻¹ exactly
    Bs = clique_complex(_graph(14, 0.4, 5), 2)
    L0 = (Bs[0] @ Bs[0].T).toarray()
    ev = la.eigvalsh(L0)
    lam2 = ev[ev > 1e-9][0]
    b1, eps = 2.0, 50.0
    S = collapsed_operator(Bs, betas=[b1, 1.0], coupling=1.0, eps=eps, coupling_bound="schur")
    exact = b1 ** 2 * L0 @ (L0 - lam2 * np.eye(14)) @ np.linalg.inv(b1 * L0 + eps * np.eye(14))
    np.testing.assert_allclose(S, (exact + exact.T) / 2, rtol=0, atol=1e-9 * la.norm(exact, 2))


def test_graded_default_unchanged_and_bad_bound_name():
    Bs = clique_complex(np.ones((5, 5)), 2)
    np.testing.assert_allclose(la.eigvalsh(collapsed_operator(Bs, coupling=0.5))[1:], 5 - 0.25 * 25 / (5 + 1e-3))
    with pytest.raises(ValueError, match="coupling_bound"):
        collapsed_operator(Bs, coupling_bound="tight")
    with pytest.raises(ValueError, match="eps"):
        coupling_bounds(Bs, eps=-1.0)


def test_estimators_accept_the_schur_range():
    A = _graph(30, 0.3, 1)
    est = CEOSpectralClustering(2, affinity="precomputed", coupling=1.0, coupling_bound="schur", eps=10.0,
                                random_state=0).fit(A)
    d = est.diagnostics()
    assert d["lambda_min_S"] >= -1e-8 and d["lambda_min_A_minus_S"] >= -1e-8
    assert est.gammas_[0] == pytest.approx(est.coupling_bounds_[0])
    sm = CEOSmoother(affinity="precomputed", coupling=1.0, coupling_bound="schur", eps=10.0).fit(A)
    assert np.allclose(sm.smooth(np.ones(30)), 1.0)
