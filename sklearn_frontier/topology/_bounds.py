"""PSD coupling bounds of the graded Laplacian and of the collapsed operator.

Two admissible ranges, both derived by eliminating the ranks of L⋆ from the top down (see :func:`coupling_bounds`):

* ``"graded"`` (the paper's Thm 3.2): γ_k ≤ b_k = β_{k+1} σ⁺_min(B_{k+1}) keeps L⋆ ⪰ 0 itself;
* ``"schur"``: γ_k² ≤ b_k² + ε β_{k+1} keeps every eliminated block ⪰ β_k B_kᵀB_k + εI, hence
  f_ε(L_0) ⪯ S_ε ⪯ β_1 L_0 and 0 ⪯ S_ε — the whole range on which the regularised collapse is PSD; for chain
  complexes (and K = 1) it is exact: beyond it the Fiedler eigenvalue of S_ε is negative.
"""

import warnings

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import LinearOperator, eigsh

__all__ = ["coupling_bounds", "extend_bounds"]

_DENSE_GRAM = 4000
_FAST_PATH_GRAM = 1000


def _check_boundaries(boundaries):
    if sp.issparse(boundaries) or isinstance(boundaries, np.ndarray) or not hasattr(boundaries, "__len__"):
        raise TypeError("boundaries must be a list [B_1, ..., B_K] of matrices.")
    if len(boundaries) < 1:
        raise ValueError("boundaries must hold at least B_1.")
    out = []
    for k, B in enumerate(boundaries, start=1):
        B = sp.csr_matrix(B, dtype=np.float64)
        if out and B.shape[0] != out[-1].shape[1]:
            raise ValueError(f"B_{k} has {B.shape[0]} rows but B_{k - 1} has {out[-1].shape[1]} columns.")
        if B.nnz and not np.all(np.isfinite(B.data)):
            raise ValueError(f"B_{k} contains NaN or infinity.")
        out.append(B)
    return out


def _weights(values, K, name, *, positive):
    arr = np.asarray(values, dtype=np.float64).ravel() if values is not None else None
    if arr is None:
        return None
    if arr.shape != (K,):
        raise ValueError(f"{name} must have length K={K} (one per boundary matrix), got {arr.size}.")
    if not np.all(np.isfinite(arr)) or (np.any(arr <= 0) if positive else np.any(arr < 0)):
        raise ValueError(f"{name} must be finite and {'> 0' if positive else '>= 0'}, got {arr.tolist()}.")
    return arr


def _sigma_min_positive(B, *, is_b1, dense_limit=_DENSE_GRAM):
    """Smallest positive singular value of B (0.0 if none), from the smaller Gram or a sparse eigensolver."""
    n_r, n_c = B.shape
    if n_r == 0 or n_c == 0 or B.nnz == 0:
        return 0.0
    G = (B.T @ B) if n_c <= n_r else (B @ B.T)
    side = G.shape[0]
    # B_1: L_0 = B_1B_1ᵀ is a sparse graph Laplacian; shift-invert beats a dense eigvalsh above ~1000 vertices.
    if side <= dense_limit and not (is_b1 and n_r > 1000):
        ev = la.eigvalsh(G.toarray())
        pos = ev[ev > 1e-10 * max(1.0, ev[-1])]
        return float(np.sqrt(pos[0])) if pos.size else 0.0
    G = (B @ B.T).tocsr() if is_b1 else G.tocsr()
    lmax = float(abs(G).sum(axis=1).max())  # Gershgorin bound: only sets the threshold
    thr = 1e-10 * max(1.0, lmax)
    if is_b1:
        c, comp = connected_components(G, directed=False)
        k = min(c + 1, G.shape[0] - 1)
        if G.shape[0] > 3000:
            return _fiedler_lobpcg(G, c, comp, thr)
    else:
        k = min(64, G.shape[0] - 1)
    opinv = None
    if G.shape[0] <= 3000:  # a dense Cholesky of G + 1e-8 I is cheaper than sparse LU fill on expander-like graphs
        factor = la.cho_factor(G.toarray() + 1e-8 * np.eye(G.shape[0]))
        opinv = LinearOperator(G.shape, matvec=lambda v: la.cho_solve(factor, v), dtype=np.float64)
    ev = np.sort(eigsh(G, k=k, sigma=-1e-8, which="LM", OPinv=opinv, return_eigenvectors=False))
    pos = ev[ev > thr]
    if not pos.size:
        warnings.warn("no positive singular value among the computed smallest ones; the coupling bound is set "
                      "to 0.", UserWarning, stacklevel=3)
        return 0.0
    return float(np.sqrt(pos[0]))


def _fiedler_from_inverse(L0, F, beta1, eps):
    """√λ⁺_min(L_0) by shift-invert Lanczos reusing the dense F = (β_1 L_0 + εI)⁻¹ = (L_0 + (ε/β_1) I)⁻¹ / β_1."""
    L0 = sp.csr_matrix(L0)
    n = L0.shape[0]
    c, _ = connected_components(L0, directed=False)
    k = min(c + 1, n - 1)
    thr = 1e-10 * max(1.0, float(abs(L0).sum(axis=1).max()))
    apply = F if callable(F) else (lambda v: F @ v)  # F: the dense inverse, or a solve with β_1 L_0 + εI
    opinv = LinearOperator(L0.shape, matvec=lambda v: beta1 * np.ravel(apply(v)), dtype=np.float64)
    v0 = np.ones(n) + np.linspace(-0.5, 0.5, n)  # deterministic start, not orthogonal to any eigenvector class
    ev = np.sort(eigsh(L0, k=k, sigma=-eps / beta1, which="LM", OPinv=opinv, v0=v0, return_eigenvectors=False))
    pos = ev[ev > thr]
    return float(np.sqrt(pos[0])) if pos.size else 0.0


def _fiedler_lobpcg(L0, c, comp, thr):
    """√λ⁺_min(L_0) by LOBPCG orthogonal to the c component indicators (no factorisation: LU fill of large
    expander-like graphs is prohibitive). Jacobi-preconditioned, tol 1e-9."""
    from scipy.sparse.linalg import lobpcg

    n = L0.shape[0]
    Y = np.zeros((n, c))
    Y[np.arange(n), comp] = 1.0
    Y /= np.sqrt(Y.sum(axis=0))
    d = L0.diagonal().copy()
    d[d <= 0] = 1.0
    T = sp.diags(1.0 / d)
    X = np.random.default_rng(0).standard_normal((n, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev, _ = lobpcg(L0.astype(np.float64), X, M=T, Y=Y, largest=False, tol=1e-9, maxiter=2000)
    ev = np.sort(ev)
    pos = ev[ev > thr]
    return float(np.sqrt(pos[0])) if pos.size else 0.0


def extend_bounds(bounds, betas, eps):
    """The "schur" bounds √(b_k² + ε β_{k+1}) from the "graded" ones b_k (NaN stays NaN)."""
    return np.sqrt(np.asarray(bounds, dtype=np.float64) ** 2 + float(eps) * np.asarray(betas, dtype=np.float64))


def coupling_bounds(boundaries, betas=None, eps=None):
    """PSD coupling bounds of the graded Laplacian (``eps=None``) or of the collapsed operator S_ε.

    ``eps=None``: b_k = β_{k+1} σ⁺_min(B_{k+1}) (Thm 3.2: γ_k ≤ b_k keeps L⋆ ⪰ 0). With ``eps``: the wider
    bounds √(b_k² + ε β_{k+1}). Proof sketch: eliminating rank K, …, k+1 of C + εI leaves blocks
    E_{k+1} ⪰ β_{k+1} B_{k+1}ᵀB_{k+1} + εI, and on B_{k+1}'s singular pairs the next elimination subtracts
    γ_k² σ²/(β_{k+1}σ² + ε) ≤ β_{k+1}σ² iff γ_k² ≤ β_{k+1}(β_{k+1}σ² + ε); at rank 0 this gives
    f_ε(L_0) ⪯ S_ε ⪯ β_1 L_0 with f_ε(L_0) ⪰ 0. For chain complexes S_ε = f_ε(L_0), whose Fiedler eigenvalue
    β_1λ_2 − γ_0²λ_2/(β_1λ_2 + ε) is negative beyond the bound: it is exact there.

    Parameters
    ----------
    boundaries : list of sparse matrices
        ``[B_1, ..., B_K]``, ``B_k`` of shape (n_{k-1}, n_k).
    betas : array-like of shape (K,), default=None
        Positive weights of the boundaries (ones when None).
    eps : float > 0, default=None
        Regularisation ε of S_ε; None gives the graded-Laplacian (Thm 3.2) bounds.

    Returns
    -------
    bounds : ndarray of shape (K,)
        ``bounds[k]`` bounds ``gammas[k]``; without ``eps``, 0 where ``B_{k+1}`` has no positive singular value.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.topology import clique_complex, coupling_bounds
    >>> coupling_bounds(clique_complex(np.ones((4, 4)), max_rank=3)).round(6).tolist()  # sqrt(4) at every rank
    [2.0, 2.0, 2.0]
    >>> coupling_bounds(clique_complex(np.ones((4, 4)), max_rank=1), eps=0.5).round(6).tolist()  # sqrt(4 + 0.5)
    [2.12132]
    """
    Bs = _check_boundaries(boundaries)
    K = len(Bs)
    betas = np.ones(K) if betas is None else _weights(betas, K, "betas", positive=True)
    bounds = np.array([betas[k] * _sigma_min_positive(Bs[k], is_b1=(k == 0)) for k in range(K)])
    if eps is None:
        return bounds
    if not (np.isscalar(eps) and np.isfinite(eps) and eps > 0):
        raise ValueError(f"eps must be a finite number > 0, got {eps!r}.")
    return extend_bounds(bounds, betas, eps)
