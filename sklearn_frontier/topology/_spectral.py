"""The spectral pipeline shared by the CEO estimators: graph → complex → S_ε → normalised eigenpairs → HKS."""

import warnings

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import LinearOperator, eigsh, lobpcg, splu
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ..utils._compat import cluster_qr, discretize
from ._complexes import adjacency_pattern, clique_complex, hypergraph_complex
from ._operators import _collapse, chain_operator

__all__ = ["heat_kernel_signature"]


# --------------------------------------------------------------------------------------------------- graphs
def knn_adjacency(X, n_neighbors):
    """0/1 symmetric (union) kNN adjacency of the rows of X, ``min(n_neighbors, n - 1)`` neighbours."""
    from sklearn_frontier.utils._graphs import knn_neighbors

    n = X.shape[0]
    _, idx = knn_neighbors(X, min(n_neighbors, n - 1))
    k = idx.shape[1]
    A = sp.csr_matrix((np.ones(n * k), idx.ravel(), np.arange(0, n * k + 1, k)), shape=(n, n))
    A = ((A + A.T) > 0).astype(np.float64).tocsr()
    A.setdiag(0)
    A.eliminate_zeros()
    A.sort_indices()
    return A


def precomputed_adjacency(X):
    """Validate an (n, n) precomputed adjacency and return its 0/1 symmetric pattern."""
    if X.ndim != 2 or X.shape[0] != X.shape[1]:
        raise ValueError(f"affinity='precomputed' needs a square (n, n) adjacency, got shape {X.shape}.")
    data = X.data if sp.issparse(X) else np.asarray(X)
    if np.any(data < 0):
        raise ValueError("affinity='precomputed' adjacency has negative entries.")
    raw = adjacency_pattern_raw(X)
    if (raw != raw.T).nnz:
        warnings.warn("the precomputed adjacency has an asymmetric pattern; using its union (A + Aᵀ > 0).",
                      UserWarning, stacklevel=3)
    P = adjacency_pattern(X, symmetrize=True)
    off = sp.csr_matrix(X) if sp.issparse(X) else sp.csr_matrix(np.asarray(X))
    off = off - sp.diags(off.diagonal())
    off.eliminate_zeros()
    if off.nnz and np.any(off.data != 1):
        warnings.warn("the precomputed adjacency is not binary; only its pattern (non-zeros) is used.",
                      UserWarning, stacklevel=3)
    return P


def adjacency_pattern_raw(X):
    A = sp.csr_matrix(X) if sp.issparse(X) else sp.csr_matrix(np.asarray(X))
    A = A.tocoo()
    keep = (A.row != A.col) & (A.data != 0)
    return sp.csr_matrix((np.ones(int(keep.sum())), (A.row[keep], A.col[keep])), shape=A.shape)


def build_complex(graph, cells, max_rank, incidence, max_cells):
    """Boundaries of the estimator's complex: hypergraph with ``cells``, else the clique complex."""
    if cells is not None:
        Bs = hypergraph_complex(graph, cells)
        return Bs[:1] if max_rank == 1 else Bs
    return clique_complex(graph, max_rank, signed=True if incidence == "signed" else "mixed", max_cells=max_cells)


# ------------------------------------------------------------------------------------------------ operator
def _lambda_max(M, dense):
    if dense:
        n = M.shape[0]
        if n <= 300:
            return float(la.eigvalsh(M)[-1])
        return float(eigsh(M, k=1, which="LA", return_eigenvectors=False, tol=1e-8)[0])
    # matrix-free: a rough estimate (each product costs PCG solves); ArpackNoConvergence is handled by callers
    return float(eigsh(M, k=1, which="LA", return_eigenvectors=False, tol=1e-3, ncv=8, maxiter=30)[0])


def fit_operator(est, graph, cells, coupling=None):
    """Build the complex and S_ε for estimator ``est``; set the shared fitted attributes and diagnostics.

    ``coupling`` overrides ``est.coupling`` (the clustering estimator's data-driven choice tries several)."""
    n = graph.shape[0]
    Bs = build_complex(graph, cells, est.max_rank, est.incidence, est.max_cells)
    if Bs[0].shape[1] == 0:
        warnings.warn("the graph has no edges: S_ε = 0 and the embedding is arbitrary.", UserWarning, stacklevel=3)
    else:  # connectivity of rank 1 (edges ∪ in-cell pairs)
        n_comp, _ = connected_components(abs(Bs[0]) @ abs(Bs[0]).T, directed=False)
        if n_comp > 1:
            warnings.warn("Graph is not fully connected, spectral embedding may not work as expected.",
                          UserWarning, stacklevel=3)
    K = len(Bs)
    for name in ("gammas", "betas"):
        value = getattr(est, name)
        if value is not None and np.size(value) != K:
            raise ValueError(f"{name} must have length K={K} (one per boundary matrix of this complex), got "
                             f"{np.size(value)}.")
    coupling = est.coupling if coupling is None else coupling
    res = _collapse(Bs, est.betas, est.gammas, coupling, est.eps, est.solver, est.rtol,
                    fast_path=est.fast_path, coupling_bound=est.coupling_bound,
                    sparse_chain=getattr(est, "_sparse_chain", False) and est.solver == "auto")
    est.affinity_matrix_ = graph
    est.boundaries_ = res["boundaries"]
    est.n_cells_ = np.array([n] + [B.shape[1] for B in Bs], dtype=np.int64)
    est.betas_ = res["betas"]
    est.gammas_ = res["gammas"]
    est.coupling_bounds_ = res["bounds"]
    est.operator_ = res["operator"]
    est.chain_defect_ = res["chain_defect"]
    est.fast_path_ = res["fast_path"]
    est.solver_ = res["solver"]
    est.route_ = res["route"]
    b1, g0, eps = float(res["betas"][0]), float(np.nan_to_num(res["gammas"][0])), res["eps"]
    est.sandwich_bound_ = g0 ** 2 / b1
    L0 = (Bs[0] @ Bs[0].T).tocsr()
    dense = isinstance(est.operator_, np.ndarray)
    # A − f_ε(L_0) = γ_0² L_0(β_1L_0 + εI)⁻¹ has the increasing eigenvalue map of λ(L_0): its top is closed-form.
    lmax = _lambda_max(L0.toarray(), True) if (L0.nnz and n <= 300) else (
        float(eigsh(L0, k=1, which="LA", return_eigenvectors=False, tol=1e-10)[0]) if L0.nnz else 0.0)
    top_chain_gap = g0 ** 2 * lmax / (b1 * lmax + eps)
    if res["fast_path"]:
        est.degeneracy_ = 0.0
        est.sandwich_gap_ = top_chain_gap if (dense or hasattr(est.operator_, "diagonal_")) else np.nan
    elif dense:
        S = est.operator_
        f = res["chain_part"] if res["chain_part"] is not None else chain_operator(L0, b1, g0, eps)
        A = b1 * L0.toarray()
        den = top_chain_gap
        est.degeneracy_ = float(np.clip(_lambda_max(S - f, True) / den, 0.0, 1.0)) if den > 1e-14 else 0.0
        est.sandwich_gap_ = _lambda_max(A - S, True)
    else:
        den = top_chain_gap
        f_op = _chain_cg(Bs[0], b1, g0, eps, est.rtol)
        diff = LinearOperator(est.operator_.shape, matvec=lambda v: est.operator_ @ v - f_op @ v,
                              dtype=np.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            try:
                num = _lambda_max(diff, False)
            except Exception:  # ArpackNoConvergence: estimate unavailable
                num = np.nan
        est.degeneracy_ = float(np.clip(num / den, 0.0, 1.0)) if den > 1e-14 else 0.0
        est.sandwich_gap_ = np.nan
    est.n_cg_iter_ = int(getattr(est.operator_, "n_iter_", 0))
    return est


def _chain_cg(B1, b1, g0, eps, rtol):
    from ._operators import CollapsedOperator

    return CollapsedOperator([B1], [b1], [g0], eps, rtol=rtol, reduced=True)


# ----------------------------------------------------------------------------------------------- embedding
def normalised_eigenpairs(est, n_eig, random_state):
    """The ``n_eig`` smallest eigenpairs of M = D^{-1/2} S_ε D^{-1/2}; returns (mu, Psi, d) with Φ = D^{-1/2}Ψ."""
    S = est.operator_
    n = S.shape[0]
    dense = isinstance(S, np.ndarray)
    norm = est.normalize
    if norm is True:
        norm = "diag" if (dense or getattr(S, "diagonal_", None) is not None) else "degree"
    exact_diag = getattr(S, "diagonal_", None)  # the matrix-free chain operator knows its diagonal exactly
    if norm == "diag" and not dense and exact_diag is None:
        raise ValueError("normalize='diag' needs the dense operator (diag(S_ε) is not available matrix-free); "
                         "use normalize='degree' or True.")
    if norm == "diag":
        d = np.diag(S).copy() if dense else np.array(exact_diag, dtype=np.float64)
    elif norm == "degree":
        B1 = est.boundaries_[0]  # diag(A) = β_1 diag(B_1B_1ᵀ): degrees in rank 1 (edges ∪ in-cell pairs)
        d = est.betas_[0] * np.asarray(B1.multiply(B1).sum(axis=1)).ravel()
    else:
        d = np.ones(n)
    # Isolated vertices (zero degree, or rounding-level diag(S_ε)) get M_ii = 1, as sklearn's spectral_embedding
    # sets the normalised Laplacian's diagonal to 1: they no longer pollute the bottom of the spectrum.
    isolated = (d <= 1e-12 * max(float(d.max()) if d.size else 0.0, 1e-300)) if norm is not False else \
        np.zeros(n, dtype=bool)
    d[isolated | (d <= 0)] = 1.0
    est.normalization_ = norm if norm is not False else "none"
    isq = 1.0 / np.sqrt(d)
    est._isolated = isolated
    if dense:
        M = np.outer(isq, isq)  # symmetric products: M is exactly symmetric when S is
        M *= S
        if isolated.any():
            M[isolated, :] = 0.0
            M[:, isolated] = 0.0
            M[isolated, isolated] = 1.0
        mu, Psi = _dense_smallest(est, M, d, isq, n_eig, random_state)
        est.n_eigen_iter_ = 0
    else:
        mu, Psi = _lobpcg_eigenpairs(est, S, d, isq, n_eig, random_state)
    return np.maximum(mu, 0.0), Psi, d


def _preconditioner(est, isq, delta, limit=5000):
    """T = (D^{-1/2} A D^{-1/2} + δI)⁻¹ by sparse LU (minimum-degree ordering on AᵀA + A, far less fill than
    COLAMD on these symmetric systems), spectrally equivalent to M by the sandwich (condition ≤ 1/(1 − ρ²));
    None above ``limit`` vertices (LU fill of expander-like graphs grows too fast)."""
    n = isq.shape[0]
    if n > limit:
        return None
    L0n = est.betas_[0] * (est.boundaries_[0] @ est.boundaries_[0].T)
    An = sp.diags(isq) @ L0n @ sp.diags(isq) + sp.diags(est._isolated.astype(np.float64))
    lu = splu((An + delta * sp.eye(n)).tocsc(), permc_spec="MMD_AT_PLUS_A")
    return LinearOperator((n, n), matvec=lu.solve, matmat=lu.solve, dtype=np.float64)


def _dense_smallest(est, M, d, isq, m, random_state, tol=1e-10):
    """The m smallest eigenpairs of the dense normalised operator M.

    LAPACK ``eigh`` up to n = 1000 (or m > n/5); above, LOBPCG on the dense M with the sparse preconditioner of
    :func:`_preconditioner` (a handful of iterations, cheaper than a full tridiagonalisation), back to
    ``eigh`` if it does not reach ``tol``.
    """
    n = M.shape[0]
    if n <= 1000 or 5 * m > n:
        return la.eigh(M, subset_by_index=[0, m - 1])
    delta = 1e-5 * float(max(np.diag(M).max(), 1.0))
    T = _preconditioner(est, isq, delta)
    X0 = check_random_state(random_state).standard_normal((n, m))
    X0[:, 0] = np.sqrt(d)
    M.flat[:: n + 1] += delta  # M is this function's own copy: shift in place, undone below
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mu, Psi, hist = lobpcg(M, X0, M=T, largest=False, tol=tol, maxiter=300, retResidualNormsHistory=True)
    M.flat[:: n + 1] -= delta
    if not hist or np.max(hist[-1]) > 10 * tol * max(1.0, float(np.abs(mu).max())):
        return la.eigh(M, subset_by_index=[0, m - 1])
    order = np.argsort(mu)
    return mu[order] - delta, Psi[:, order]


def _lobpcg_eigenpairs(est, S, d, isq, m, random_state):
    n = S.shape[0]
    iso = est._isolated.astype(np.float64)
    delta = 1e-5 * float(max((est.betas_[0] * isq ** 2 * np.asarray(
        est.boundaries_[0].multiply(est.boundaries_[0]).sum(axis=1)).ravel() + iso).max(), 1.0))
    Mop = LinearOperator((n, n), matvec=lambda v: isq * (S @ (isq * v.ravel())) + (delta + iso) * v.ravel(),
                         matmat=lambda V: isq[:, None] * (S @ (isq[:, None] * V)) + (delta + iso)[:, None] * V,
                         dtype=np.float64)
    T = _preconditioner(est, isq, delta)  # None above 5000 vertices: unpreconditioned (D-normalised already)
    X0 = check_random_state(random_state).standard_normal((n, m))
    X0[:, 0] = np.sqrt(d)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mu, Psi, hist = lobpcg(Mop, X0, M=T, largest=False, tol=est.eigen_tol, maxiter=300,
                               retResidualNormsHistory=True)
    est.n_eigen_iter_ = len(hist)
    if any("not reach" in str(w.message) or "onverge" in str(w.message) for w in caught):
        warnings.warn(f"LOBPCG did not converge to eigen_tol={est.eigen_tol}; results kept.", ConvergenceWarning,
                      stacklevel=4)
    order = np.argsort(mu)
    return mu[order] - delta, Psi[:, order]


def heat_kernel_signature(eigenvalues, eigenvectors, times=16):
    """Heat-kernel signature h(v, t) = Σ_i exp(−t μ_i) ψ_{vi}², rescaled to n·h(v, t)/Σ_u h(u, t).

    Parameters
    ----------
    eigenvalues : array-like of shape (m,)
        Non-negative eigenvalues μ_i.
    eigenvectors : array-like of shape (n, m)
        Orthonormal eigenvectors ψ_i (columns).
    times : int or array-like, default=16
        An int T gives T times log-spaced on [4 ln10/μ_max, 4 ln10/μ⁺_min] (Sun et al. 2009; μ⁺_min is the
        smallest μ > 1e-10 μ_max; fewer than 2 positive μ → [0.1, 10]); or explicit positive times.

    Returns
    -------
    hks : ndarray of shape (n, T)
        The rescaled signature of each vertex at each time.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.topology import heat_kernel_signature
    >>> mu, psi = np.linalg.eigh(np.array([[1.0, -1.0], [-1.0, 1.0]]))
    >>> heat_kernel_signature(mu, psi, times=[1.0]).ravel().tolist()
    [1.0, 1.0]
    """
    mu = np.asarray(eigenvalues, dtype=np.float64).ravel()
    Psi = np.asarray(eigenvectors, dtype=np.float64)
    if Psi.ndim != 2 or Psi.shape[1] != mu.shape[0]:
        raise ValueError(f"eigenvectors must be (n, {mu.shape[0]}), got {Psi.shape}.")
    t = hks_times(mu, times)
    h = (Psi ** 2) @ np.exp(-np.outer(np.maximum(mu, 0.0), t))
    total = h.sum(axis=0)
    total[total <= 0] = 1.0
    return Psi.shape[0] * h / total


def hks_times(mu, times):
    """Resolve ``times`` (int → log-spaced grid, else a positive array) for :func:`heat_kernel_signature`."""
    if np.isscalar(times) and float(times) == int(times) and not isinstance(times, float):
        T = int(times)
        if T < 1:
            raise ValueError(f"times must be >= 1, got {times}.")
        mu_max = float(np.max(mu)) if mu.size else 0.0
        pos = mu[mu > 1e-10 * mu_max] if mu_max > 0 else mu[:0]
        if pos.size < 2:
            lo, hi = 0.1, 10.0
        else:
            lo, hi = 4 * np.log(10) / mu_max, 4 * np.log(10) / pos.min()
        return np.geomspace(lo, hi, T) if hi > lo else np.full(T, lo)
    t = np.asarray(times, dtype=np.float64).ravel()
    if t.size == 0 or not np.all(np.isfinite(t)) or np.any(t <= 0):
        raise ValueError(f"times must be a positive int or an array of positive times, got {times!r}.")
    return t


# ------------------------------------------------------------------------------------------ label assignment
def assign_labels(features, n_clusters, method, n_init, random_state):
    """Labels 0..k−1 (consecutive) from the spectral features."""
    from sklearn.cluster import KMeans

    n = features.shape[0]
    if n_clusters == 1:
        return np.zeros(n, dtype=np.int64)
    if method == "kmeans":
        labels = KMeans(n_clusters, n_init=n_init, random_state=random_state).fit(features).labels_
    elif method == "discretize":
        labels = discretize(features, random_state=random_state)
    else:
        labels = cluster_qr(features)
    _, labels = np.unique(labels, return_inverse=True)
    return labels.astype(np.int64)


# -------------------------------------------------------------------------------------- out-of-sample maps
def shepard_extension(D, I, values):
    """Inverse-distance-weighted mean of ``values`` over each row's neighbours (mean over zero distances)."""
    zero = D <= 1e-12 * max(1.0, float(np.max(D)) if D.size else 1.0)
    W = np.where(zero, 1.0, 0.0)
    has_zero = zero.any(axis=1)
    W[~has_zero] = 1.0 / D[~has_zero]
    W /= W.sum(axis=1, keepdims=True)
    return np.einsum("ij,ijk->ik", W, values[I])
