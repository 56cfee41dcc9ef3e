"""Coupling bounds, the graded Laplacian L⋆ and the collapsed operator S_ε (dense routes and matrix-free).

S_ε = A − X(C + εI)⁻¹Xᵀ = β_1 L_0 − γ_0² B_1 [(C + εI)⁻¹]_{11} B_1ᵀ. Routes:

* chain fast path (B_1 B_2 = 0, K = 1 or γ_0 = 0): S_ε = f_ε(L_0) = β_1 L_0 − γ_0² L_0 (β_1 L_0 + εI)⁻¹ exactly;
* two-rank structured elimination (K = 2, any incidences): eliminate rank 2, then rank 1 by push-through and
  Woodbury, leaving one n_0 × n_0 Cholesky and one rank(B_2)-sized dense system:
  S_ε = f_ε(L_0) + γ_0² (F Y) M⁻¹ (F Y)ᵀ with F = (β_1 L_0 + εI)⁻¹, Y = B_1 B_2 W_+ diag(√q),
  q_i = β_2 − γ_1²/(β_2 s_i + ε) on the positive eigenpairs (s_i, w_i) of B_2ᵀB_2, M = I + (diag(q s) − β_1 YᵀFY)/ε;
* two-rank cellwise elimination (K = 2, cells overlapping in small pieces, e.g. hypergraphs): eliminating rank 2
  leaves the rank-1 block β_1 B_1ᵀB_1 + H with H = εI + β_2 G − γ_1² G(β_2 G + εI)⁻¹, G = B_2 B_2ᵀ block diagonal
  over the pieces of overlapping cells (ε on pairs in no cell); push-through and Woodbury then give exactly
  S_ε = β_1 L_0 − (γ_0²/β_1)(I − (I + β_1 K)⁻¹), K = B_1 H⁻¹ B_1ᵀ sparse n_0 × n_0. Dense: one n_0 × n_0 Cholesky;
  matrix-free: Jacobi-PCG on the n_0-system I + β_1 K (no cycle-space ε-modes, unlike C + εI);
* generic: sparse LU of C + εI (``fast_path=False`` forces it: the reference);
* matrix-free :class:`CollapsedOperator` (Algorithm 1, batched Jacobi-PCG).
"""

import warnings

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import LinearOperator, splu
from sklearn.exceptions import ConvergenceWarning

from ._bounds import (  # noqa: F401  (re-exported: tests and callers import them from here)
    _DENSE_GRAM,
    _FAST_PATH_GRAM,
    _check_boundaries,
    _fiedler_from_inverse,
    _fiedler_lobpcg,
    _sigma_min_positive,
    _weights,
    coupling_bounds,
    extend_bounds,
)

__all__ = ["coupling_bounds", "graded_laplacian", "collapsed_operator", "CollapsedOperator", "chain_operator"]

def _resolve(Bs, betas, gammas, coupling, *, bounds_needed=None):
    K = len(Bs)
    betas = np.ones(K) if betas is None else _weights(betas, K, "betas", positive=True)
    gammas = _weights(gammas, K, "gammas", positive=False)
    if not (np.isscalar(coupling) and np.isfinite(coupling) and 0 <= coupling):
        raise ValueError(f"coupling must be a finite number >= 0, got {coupling!r}.")
    return betas, gammas


def graded_laplacian(boundaries, betas=None, gammas=None, coupling=0.5):
    """The graded Laplacian L⋆ on C⁰ ⊕ … ⊕ C^K (ranks stacked 0..K).

    Diagonal block k: β_k B_kᵀB_k + β_{k+1} B_{k+1}B_{k+1}ᵀ; block (k, k+1) = −γ_k B_{k+1}, (k+1, k) its transpose.

    Parameters
    ----------
    boundaries : list of sparse matrices
        ``[B_1, ..., B_K]``, ``B_k`` of shape (n_{k-1}, n_k).
    betas : array-like of shape (K,), default=None
        Ones when None.
    gammas : array-like of shape (K,), default=None
        Any γ ≥ 0; when None, ``coupling * coupling_bounds(boundaries, betas)``.
    coupling : float, default=0.5
        Relative coupling used when ``gammas`` is None.

    Returns
    -------
    L : scipy.sparse.csr_matrix of shape (N, N), N = Σ n_k
        The graded Laplacian.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.topology import clique_complex, graded_laplacian
    >>> graded_laplacian(clique_complex(np.ones((3, 3))), coupling=0).shape
    (7, 7)
    """
    Bs = _check_boundaries(boundaries)
    betas, gammas = _resolve(Bs, betas, gammas, coupling)
    if gammas is None:
        gammas = coupling * coupling_bounds(Bs, betas)
    K = len(Bs)
    sizes = [Bs[0].shape[0]] + [B.shape[1] for B in Bs]
    blocks = [[None] * (K + 1) for _ in range(K + 1)]
    for k in range(K + 1):
        D = sp.csr_matrix((sizes[k], sizes[k]))
        if k >= 1:
            D = D + betas[k - 1] * (Bs[k - 1].T @ Bs[k - 1])
        if k < K:
            D = D + betas[k] * (Bs[k] @ Bs[k].T)
        blocks[k][k] = D
        if k < K:
            blocks[k][k + 1] = -gammas[k] * Bs[k]
            blocks[k + 1][k] = -gammas[k] * Bs[k].T
    return sp.bmat(blocks, format="csr")


def chain_operator(L0, beta1, gamma0, eps, F=None, overwrite_F=False):
    """Dense f_ε(L_0) = β_1 L_0 − γ_0² L_0 (β_1 L_0 + εI)⁻¹ (the operator of every chain complex.5).

    ``F``: (β_1 L_0 + εI)⁻¹ when already computed (symmetric), reused as the output if ``overwrite_F``.
    """
    L0 = L0.toarray() if sp.issparse(L0) else np.asarray(L0, dtype=np.float64)
    if gamma0 == 0:
        return beta1 * L0
    n = L0.shape[0]
    if F is None:
        G = beta1 * L0
        G.flat[:: n + 1] += eps
        F, overwrite_F = _spd_inverse(G), True
    # L_0 F = (I − εF)/β_1 exactly, so S = β_1 L_0 − (γ_0²/β_1)(I − εF), formed in place (exactly symmetric)
    c = gamma0 ** 2 / beta1
    S = F if overwrite_F else F.copy()
    S *= c * eps
    S.flat[:: n + 1] -= c
    S += beta1 * L0
    return S


def _spd_inverse(M):
    c, info = la.lapack.dpotrf(M, lower=0, clean=1)
    if info != 0:
        raise np.linalg.LinAlgError("matrix is not positive definite")
    inv, info = la.lapack.dpotri(c, lower=0, overwrite_c=1)
    # dpotrf(clean=1) zeroed the strict lower triangle and dpotri only writes the upper one: mirror it in place
    inv += inv.T
    inv.flat[:: inv.shape[0] + 1] *= 0.5
    return inv


def _two_rank_schur(B1, B2, betas, gammas, eps):
    """Exact S_ε for K = 2 by structured elimination (see the module docstring)."""
    b1, b2 = betas
    g0, g1 = gammas
    n0 = B1.shape[0]
    L0 = (B1 @ B1.T).toarray()
    F = _spd_inverse(b1 * L0 + eps * np.eye(n0))
    S = b1 * L0 - (g0 ** 2 / b1) * (np.eye(n0) - eps * F)
    S = (S + S.T) / 2
    chain_part = S.copy()
    if B2.shape[1] and g0 > 0:
        s, W = la.eigh((B2.T @ B2).toarray())
        keep = s > 1e-10 * max(1.0, s[-1])
        s, W = s[keep], W[:, keep]
        q = np.maximum(b2 - g1 ** 2 / (b2 * s + eps), 0.0)
        keep = q > 0
        s, W, q = s[keep], W[:, keep], q[keep]
        Y = np.asarray((B1 @ B2) @ (W * np.sqrt(q)))
        if Y.size and np.abs(Y).max() > 0:
            FY = F @ Y
            M = np.diag(q * s) - b1 * (Y.T @ FY)
            M = np.eye(len(q)) + (M + M.T) / (2 * eps)
            S = S + g0 ** 2 * FY @ la.cho_solve(la.cho_factor(M), FY.T)
    return (S + S.T) / 2, chain_part


# ------------------------------------------------------------------------------ cellwise exact elimination
_CELL_BLOCK = 2000


def _cell_blocks(B2, max_block=_CELL_BLOCK):
    """Eigendecompositions of G_c = B_c B_cᵀ over the connected pieces c of the pair–cell incidence B_2.

    Rank-1 pairs lying in no cell are left out (their block of H is ε). Blocks of equal size are decomposed in
    one batched ``eigh``. Returns ``(groups, sigma2_min)`` with ``groups`` a list of ``(rows (m, s), g (m, s),
    V (m, s, s))`` — the pairs of each piece, the eigenvalues of its G_c and their eigenvectors — and
    ``sigma2_min`` the smallest positive eigenvalue over all pieces (σ⁺_min(B_2)², 0 if none); None when a
    piece has more than ``max_block`` pairs (overlapping cells: use another route).
    """
    n1, n2 = B2.shape
    B2 = B2.tocsr()
    rows_used = np.flatnonzero(np.diff(B2.indptr) > 0)
    if n2 == 0 or rows_used.size == 0:
        return [], 0.0
    bip = sp.bmat([[None, B2], [B2.T, None]], format="csr")
    _, lab = connected_components(bip, directed=False)
    plab = lab[rows_used]
    order = np.argsort(plab, kind="stable")
    rows_sorted, plab_sorted = rows_used[order], plab[order]
    starts = np.flatnonzero(np.r_[True, plab_sorted[1:] != plab_sorted[:-1]])
    sizes = np.diff(np.r_[starts, rows_sorted.size])
    if sizes.max() > max_block:
        return None
    G = (B2 @ B2.T).tocoo()
    # position of each used pair inside its piece, and the piece id
    pos = np.empty(n1, dtype=np.int64)
    piece = np.full(n1, -1, dtype=np.int64)
    piece_of_sorted = np.repeat(np.arange(starts.size), sizes)
    pos[rows_sorted] = np.arange(rows_sorted.size) - np.repeat(starts, sizes)
    piece[rows_sorted] = piece_of_sorted
    groups = []
    sig2 = np.inf
    for s in np.unique(sizes):
        ids = np.flatnonzero(sizes == s)
        slot = np.full(starts.size, -1, dtype=np.int64)
        slot[ids] = np.arange(ids.size)
        rows = rows_sorted[(starts[ids][:, None] + np.arange(s)[None, :])]
        keep = slot[piece[G.row]] >= 0
        Gd = np.zeros((ids.size, s, s))
        Gd[slot[piece[G.row[keep]]], pos[G.row[keep]], pos[G.col[keep]]] = G.data[keep]
        g, V = np.linalg.eigh(Gd)
        pos_g = g[g > 1e-10 * max(1.0, float(g.max()))]
        if pos_g.size:
            sig2 = min(sig2, float(pos_g.min()))
        groups.append((rows, g, V))
    return groups, (0.0 if not np.isfinite(sig2) else sig2)


def _cellwise_K(B1, groups, betas, gammas, eps):
    """K = B_1 H⁻¹ B_1ᵀ (sparse n_0 × n_0), H = εI + β_2 G − γ_1² G(β_2 G + εI)⁻¹ blockwise, G = B_2 B_2ᵀ.

    H is the rank-1 block of C + εI after eliminating rank 2 exactly (it is ε on pairs in no cell), so that
    S_ε = β_1 L_0 − (γ_0²/β_1)(I − (I + β_1 K)⁻¹) (push-through and Woodbury; see the module docstring).
    """
    n1 = B1.shape[1]
    b2, g1 = betas[1], gammas[1]
    diag = np.full(n1, 1.0 / eps)
    r_all, c_all, v_all = [], [], []
    for rows, g, V in groups:
        h = eps + b2 * g - g1 ** 2 * g / (b2 * g + eps)
        Hinv = (V / h[:, None, :]) @ V.transpose(0, 2, 1)
        s = rows.shape[1]
        diag[rows.ravel()] = 0.0
        r_all.append(np.repeat(rows, s, axis=1).ravel())
        c_all.append(np.tile(rows, (1, s)).ravel())
        v_all.append(Hinv.ravel())
    Hi = sp.diags(diag, format="csr")
    if r_all:
        Hi = Hi + sp.csr_matrix((np.concatenate(v_all), (np.concatenate(r_all), np.concatenate(c_all))),
                                shape=(n1, n1))
    K = (B1 @ Hi @ B1.T).tocsr()
    K = ((K + K.T) * 0.5).tocsr()
    K.sort_indices()
    return K


def _cellwise_dense(K, L0, b1, g0):
    """Dense S_ε = β_1 L_0 − (γ_0²/β_1)(I − (I + β_1 K)⁻¹)."""
    n0 = K.shape[0]
    R = _spd_inverse(np.eye(n0) + b1 * K.toarray())
    S = b1 * L0.toarray() - (g0 ** 2 / b1) * (np.eye(n0) - R)
    return (S + S.T) / 2


def _splu_collapse(Bs, betas, gammas, eps, block=256):
    """Generic dense S_ε: sparse LU of C + εI, vertex blocks of ``block`` right-hand sides."""
    L = graded_laplacian(Bs, betas, gammas)
    n0 = Bs[0].shape[0]
    n1 = Bs[0].shape[1]
    C = L[n0:, n0:] + eps * sp.eye(L.shape[0] - n0)
    L0 = (Bs[0] @ Bs[0].T).tocsr()
    S = betas[0] * L0.toarray()
    if gammas[0] == 0 or n1 == 0:
        return S
    lu = splu(C.tocsc(), permc_spec="MMD_AT_PLUS_A")
    B1T = Bs[0].T.tocsr()
    for start in range(0, n0, block):
        stop = min(n0, start + block)
        rhs = np.zeros((C.shape[0], stop - start))
        rhs[:n1] = B1T[:, start:stop].toarray()
        Z = lu.solve(rhs)
        S[:, start:stop] -= gammas[0] ** 2 * (Bs[0] @ Z[:n1])
    return (S + S.T) / 2


def _chain_defect(Bs):
    if len(Bs) < 2 or Bs[1].shape[1] == 0:
        return 0.0
    P = (Bs[0] @ Bs[1]).tocsr()
    P.eliminate_zeros()
    return float(np.abs(P.data).max()) if P.nnz else 0.0


class CollapsedOperator(LinearOperator):
    """Matrix-free S_ε (Algorithm 1): ``S_ε V = β_1 L_0 V − γ_0² B_1 Z_1``, ``(C + εI) Z = [B_1ᵀV; 0; …]``.

    The solves are batched Jacobi-PCG (kernel ``pcg_jacobi_batched``). With ``reduced=True`` (chain
    complexes, where S_ε = f_ε(L_0)) the solve runs on the invariant n_0-system ``(β_1 L_0 + εI) W = V`` and
    ``S_ε V = β_1 L_0 V − γ_0² L_0 W``. Picklable; never forms S_ε.

    Parameters
    ----------
    boundaries : list of sparse matrices
        ``[B_1, ..., B_K]``, ``B_k`` of shape (n_{k-1}, n_k).
    betas : ndarray of shape (K,)
        Positive boundary weights.
    gammas : ndarray of shape (K,)
        Couplings between consecutive ranks.
    eps : float
        Regularisation of the higher-rank block C.
    rtol : float, default=1e-10
        Relative residual of the inner PCG solves.
    maxiter : int, default=None
        ``10 N`` when None.
    reduced : bool, default=False
        Solve the invariant n_0-system (chain complexes only).
    structured : bool, default=False
        Two-rank complexes whose overlapping cells form small pieces: eliminate rank 2 exactly, piece by piece,
        and solve the n_0-system ``(I + β_1 K) X = V``, ``K = B_1 H⁻¹ B_1ᵀ`` (see the module docstring);
        ``S_ε V = β_1 L_0 V − (γ_0²/β_1)(V − X)``.

    Attributes
    ----------
    n_iter_ : int
        PCG iterations summed over every column and call so far.
    n_solves_ : int
        Number of batched solves so far.

    See Also
    --------
    collapsed_operator : Build S_ε, dense or as this operator.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.topology import clique_complex, collapsed_operator
    >>> B = clique_complex(np.ones((5, 5)), signed="mixed")
    >>> op = collapsed_operator(B, solver="cg", rtol=1e-12)
    >>> bool(np.allclose(op.to_dense(), collapsed_operator(B), atol=1e-8))
    True
    """

    def __init__(self, boundaries, betas, gammas, eps, rtol=1e-10, maxiter=None, reduced=False, structured=False):
        Bs = _check_boundaries(boundaries)
        self.boundaries = Bs
        self.betas = np.asarray(betas, dtype=np.float64)
        self.gammas = np.asarray(gammas, dtype=np.float64)
        self.eps = float(eps)
        self.rtol = float(rtol)
        self.reduced = bool(reduced)
        self.structured = bool(structured) and not self.reduced
        n0 = Bs[0].shape[0]
        self.L0 = (Bs[0] @ Bs[0].T).tocsr()
        if self.reduced:
            system = (self.betas[0] * self.L0).tocsr()
            self.shift = self.eps
        elif self.structured:
            if len(Bs) != 2:
                raise ValueError(f"structured=True needs a two-rank complex (K = 2), got K = {len(Bs)}.")
            blocks = _cell_blocks(Bs[1])
            if blocks is None:
                raise ValueError(f"structured=True needs pieces of overlapping cells with <= {_CELL_BLOCK} pairs.")
            system = (self.betas[0] * _cellwise_K(Bs[0], blocks[0], self.betas, self.gammas, self.eps)).tocsr()
            self.shift = 1.0
        else:
            system = graded_laplacian(Bs, self.betas, self.gammas)[n0:, n0:].tocsr()
            self.shift = self.eps
        system.sort_indices()
        self.system = system
        self.inv_diag = 1.0 / (system.diagonal() + self.shift)
        self.maxiter = 10 * max(system.shape[0], 1) if maxiter is None else int(maxiter)
        self.n_iter_ = 0
        self.n_solves_ = 0
        super().__init__(dtype=np.dtype(np.float64), shape=(n0, n0))

    def _solve(self, rhs):
        from sklearn_frontier.kernels import pcg_jacobi_batched

        Z, iters, converged = pcg_jacobi_batched(self.system, self.inv_diag, self.shift, rhs, self.rtol,
                                                 self.maxiter)
        self.n_iter_ += int(iters.sum())
        self.n_solves_ += 1
        if not converged.all():
            warnings.warn(f"PCG did not converge for {int((~converged).sum())} of {len(converged)} columns "
                          f"within maxiter={self.maxiter}; results kept.", ConvergenceWarning, stacklevel=4)
        return Z

    def _matmat(self, V):
        V = np.asarray(V, dtype=np.float64)
        if V.ndim == 1:
            V = V[:, None]
        b1, g0 = self.betas[0], self.gammas[0]
        out = b1 * (self.L0 @ V)
        if g0 == 0 or self.boundaries[0].shape[1] == 0:
            return out
        if self.reduced:
            W = self._solve(V)
            return out - g0 ** 2 * (self.L0 @ W)
        if self.structured:  # S_ε V = β_1 L_0 V − (γ_0²/β_1)(V − X), (I + β_1 K) X = V
            return out - (g0 ** 2 / b1) * (V - self._solve(V))
        B1 = self.boundaries[0]
        n1 = B1.shape[1]
        rhs = np.zeros((self.system.shape[0], V.shape[1]))
        rhs[:n1] = B1.T @ V
        Z = self._solve(rhs)
        return out - g0 ** 2 * (B1 @ Z[:n1])

    def _matvec(self, v):
        return self._matmat(np.asarray(v).reshape(-1, 1)).ravel()

    def _rmatvec(self, v):
        return self._matvec(v)

    def _rmatmat(self, V):
        return self._matmat(V)

    def _adjoint(self):
        return self

    def to_dense(self):
        """Form the dense S_ε (n_0 × n_0) by applying the operator to the identity.

        Returns
        -------
        S : ndarray of shape (n_0, n_0)
            The symmetrised dense operator.
        """
        S = self._matmat(np.eye(self.shape[0]))
        return (S + S.T) / 2


def _collapse(boundaries, betas=None, gammas=None, coupling=0.5, eps=1e-3, solver="dense", rtol=1e-10, *,
              fast_path=True, maxiter=None, coupling_bound="graded", sparse_chain=False):
    """Build S_ε and return it with everything the estimators report (a dict).

    ``sparse_chain``: on the dense chain fast path above 1000 vertices, return S_ε matrix-free with its exact
    diagonal (:class:`~._selinv.ChainSelinvOperator`, no dense inverse) instead of the dense array."""
    Bs = _check_boundaries(boundaries)
    K = len(Bs)
    if coupling_bound not in ("graded", "schur"):
        raise ValueError(f"coupling_bound must be 'graded' or 'schur', got {coupling_bound!r}.")
    if solver not in ("dense", "cg", "auto"):
        raise ValueError(f"solver must be 'dense', 'cg' or 'auto', got {solver!r}.")
    if not (np.isscalar(eps) and np.isfinite(eps) and eps > 0):
        raise ValueError(f"eps must be a finite number > 0, got {eps!r}.")
    betas, gammas_given = _resolve(Bs, betas, gammas, coupling)
    n0 = Bs[0].shape[0]
    defect = _chain_defect(Bs)
    # Bounds: b_0 always; on a chain complex S does not depend on γ_{k≥1}, so large Gram sides give NaN.
    chain = K == 1 or defect == 0.0
    bounds = np.full(K, np.nan)
    solver_ = ("dense" if n0 <= 3000 else "cg") if solver == "auto" else solver
    # dense chain path: F = (β_1 L_0 + εI)⁻¹ does not depend on γ, so it is computed once and also drives the
    # shift-invert Lanczos for b_0 (instead of a second factorisation)
    F = None
    factor = None
    if fast_path and chain and solver_ == "dense" and n0 > 1000 and Bs[0].shape[1] and sparse_chain:
        from ._selinv import ChainFactor

        factor = ChainFactor(Bs[0] @ Bs[0].T, betas[0], eps)
    elif fast_path and chain and solver_ == "dense" and n0 > 1000 and Bs[0].shape[1]:
        L0d = (Bs[0] @ Bs[0].T).toarray()
        G = betas[0] * L0d
        G.flat[:: n0 + 1] += eps
        F = _spd_inverse(G)
    # K = 2 with small pieces of overlapping cells: exact blockwise eigendecompositions of B_2B_2ᵀ (they give
    # σ⁺_min(B_2) for free and drive the cellwise elimination)
    blocks = _cell_blocks(Bs[1]) if (fast_path and K == 2 and not chain) else None
    for k in range(K):
        side = min(Bs[k].shape)
        if k == 1 and blocks is not None:
            bounds[k] = betas[k] * np.sqrt(blocks[1])
        elif k == 0 and (F is not None or factor is not None):
            bounds[k] = betas[k] * _fiedler_from_inverse(Bs[0] @ Bs[0].T, F if F is not None else factor.solve,
                                                         betas[0], eps)
        # on the chain fast path S does not depend on γ_{k≥1}: compute b_{k≥1} only when it is cheap
        elif k == 0 or not (fast_path and chain) or side <= _FAST_PATH_GRAM:
            bounds[k] = betas[k] * _sigma_min_positive(Bs[k], is_b1=(k == 0))
    # the admissible range of S_ε (0 ⪯ S_ε ⪯ A) is the ε-widened "schur" bound; coupling scales either bound
    admissible = extend_bounds(bounds, betas, eps)
    if gammas_given is None:
        gammas_ = coupling * (admissible if coupling_bound == "schur" else bounds)
    else:
        gammas_ = gammas_given.copy()
        over = np.flatnonzero(np.nan_to_num(gammas_ - admissible * (1 + 1e-9), nan=-1.0) > 0)
        if over.size:
            k = int(over[0])
            raise ValueError(f"gammas[{k}]={gammas_[k]:.6g} exceeds the PSD bound of S_ε, √(b_{k}² + ε β_{k + 1}) = "
                             f"{admissible[k]:.6g} (b_{k} = β_{k + 1} σ⁺_min(B_{k + 1}) = {bounds[k]:.6g}, Thm 3.2).")
    if gammas_given is None and coupling > 1 + 1e-12:
        raise ValueError(f"coupling must be in [0, 1] (the PSD bound), got {coupling}.")
    use_fast = fast_path and (chain or gammas_[0] == 0)
    chain_part = None
    g_eff = np.nan_to_num(gammas_, nan=0.0)
    if solver_ == "dense":
        if use_fast and factor is not None:
            from ._selinv import ChainSelinvOperator

            S = ChainSelinvOperator(Bs[0] @ Bs[0].T, betas[0], g_eff[0], eps, factor)
            route = "chain-selinv"
        elif use_fast:
            S = chain_operator(L0d if F is not None else (Bs[0] @ Bs[0].T), betas[0], g_eff[0], eps, F=F,
                               overwrite_F=True)
            route = "chain"
        elif blocks is not None:
            L0 = (Bs[0] @ Bs[0].T).tocsr()
            K_ = _cellwise_K(Bs[0], blocks[0], betas, g_eff, eps)
            S = _cellwise_dense(K_, L0, betas[0], g_eff[0])
            chain_part = chain_operator(L0, betas[0], g_eff[0], eps)
            route = "cellwise"
        elif fast_path and K == 2 and Bs[1].shape[1] <= _DENSE_GRAM:
            S, chain_part = _two_rank_schur(Bs[0], Bs[1], betas, g_eff, eps)
            route = "schur"
        else:
            S = _splu_collapse(Bs, betas, g_eff, eps)
            route = "splu"
    else:
        structured = (not use_fast) and blocks is not None
        S = CollapsedOperator(Bs if not use_fast else Bs[:1], betas if not use_fast else betas[:1],
                              g_eff if not use_fast else g_eff[:1], eps, rtol=rtol, maxiter=maxiter,
                              reduced=use_fast, structured=structured)
        route = "cg-chain" if use_fast else ("cg-cellwise" if structured else "cg")
    return dict(operator=S, boundaries=Bs, betas=betas, gammas=gammas_,
                bounds=admissible if coupling_bound == "schur" else bounds, chain_defect=defect,
                fast_path=bool(use_fast), route=route, solver=solver_, eps=float(eps), chain_part=chain_part)


def collapsed_operator(boundaries, betas=None, gammas=None, coupling=0.5, eps=1e-3, solver="dense", rtol=1e-10, *,
                       fast_path=True, maxiter=None, coupling_bound="graded"):
    """The collapsed operator S_ε = A − X(C + εI)⁻¹Xᵀ of a complex on its vertices.

    Parameters
    ----------
    boundaries : list of sparse matrices
        ``[B_1, ..., B_K]``, ``B_k`` of shape (n_{k-1}, n_k).
    betas : array-like of shape (K,), default=None
        Positive weights, ``betas[i]`` weights ``boundaries[i]`` (ones when None).
    gammas : array-like of shape (K,), default=None
        Couplings, ``gammas[i]`` couples ranks i and i+1 through ``boundaries[i]``; each must lie in the
        admissible range of S_ε, ``gammas[k] <= coupling_bounds(..., eps=eps)[k]`` (ValueError otherwise).
        None: ``coupling`` times the bound chosen by ``coupling_bound``.
    coupling : float in [0, 1], default=0.5
        Relative coupling used when ``gammas`` is None.
    eps : float > 0, default=1e-3
        Regularisation of the (usually singular) higher-rank block C.
    solver : {"dense", "cg", "auto"}, default="dense"
        ``"dense"`` returns an (n_0, n_0) array; ``"cg"`` a picklable :class:`CollapsedOperator` that never forms
        S_ε; ``"auto"``: dense iff n_0 <= 3000.
    rtol : float, default=1e-10
        Relative residual of the inner PCG solves (cg only).
    fast_path : bool, default=True
        Use the exact chain-complex shortcut f_ε(L_0) (B_1B_2 = 0, K = 1 or γ_0 = 0) and, for K = 2, the exact
        structured elimination (cellwise when overlapping cells form pieces of <= 2000 pairs — dense, or
        matrix-free on an n_0-system with ``solver="cg"`` — else Woodbury on B_2ᵀB_2); False forces the full
        C-system (sparse LU / Algorithm 1 on C): the reference.
    maxiter : int, default=None
        PCG iteration cap per solve (cg only), 10·N when None.
    coupling_bound : {"graded", "schur"}, default="graded"
        What ``coupling`` is relative to: ``"graded"`` γ_k = coupling·b_k (Thm 3.2, L⋆ ⪰ 0); ``"schur"``
        γ_k = coupling·√(b_k² + ε β_{k+1}), the whole range on which 0 ⪯ S_ε ⪯ β_1 L_0 (exact for chain
        complexes, where at coupling=1 S_ε = β_1² L_0(L_0 − λ_2 I)(β_1 L_0 + εI)⁻¹ ≈ β_1²(L_0² − λ_2 L_0)/ε
        once ε ≫ β_1 λ_max(L_0); see :func:`coupling_bounds`).

    Returns
    -------
    S : ndarray of shape (n_0, n_0) or CollapsedOperator
        The collapsed operator, dense or matrix-free depending on ``solver``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.topology import clique_complex, collapsed_operator
    >>> S = collapsed_operator(clique_complex(np.ones((5, 5))), coupling=0.5)
    >>> (np.linalg.eigvalsh(S).round(6) + 0.0).tolist()  # {0, n − ρ²n²/(n + ε)}
    [0.0, 3.75025, 3.75025, 3.75025, 3.75025]
    """
    return _collapse(boundaries, betas, gammas, coupling, eps, solver, rtol, fast_path=fast_path,
                     maxiter=maxiter, coupling_bound=coupling_bound)["operator"]
