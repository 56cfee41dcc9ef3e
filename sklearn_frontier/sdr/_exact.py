"""SMAVE's exact solver: the full-batch MAVE objective on the Grassmann manifold, by pymanopt's trust regions.

The objective is a fixed smooth function of the subspace: local linear fits at (up to ``MAX_EXACT_ANCHORS``)
anchors with Gaussian weights over all n points on the projected distances, bandwidth fixed at the warm start
(RMAVE's kernel rule). It is written in torch and differentiated by pymanopt's PyTorch backend (gradient and
Hessian-vector products by autodiff); every n x n quantity is a matrix product with the (anchors x n) weight
matrix, so memory is O(n_anchors n) and no (n, n, d) tensor is formed. pymanopt and torch are imported here only.
"""

import numpy as np

from ._base import projected_bandwidth
from ._result import SolverRun

MAX_EXACT_ANCHORS = 2000
EXACT_RIDGE = 1e-8
GRAD_TOL = 1e-6


def mave_kernel_objective(Z, y, anchors, h, ridge=EXACT_RIDGE):
    """A torch function ``B -> mean_j RSS_j(B)`` of the Gaussian-weighted local linear fits at ``anchors``.

    ``RSS_j = sum_i w_ij y_i^2 - r_j^T S_j^{-1} r_j`` with ``w_ij`` the normalised ``exp(-|B^T(z_i - z_j)|^2 /
    (2 h^2))``, ``S_j = sum_i w_ij u_ij u_ij^T``, ``r_j = sum_i w_ij u_ij y_i``, ``u_ij = (1, B^T(z_i - z_j))``
    and the relative slope ridge of the SGD path. Invariant to ``B -> B O`` (a function on the Grassmannian).
    """
    import torch

    Zt = torch.from_numpy(np.ascontiguousarray(Z, dtype=np.float64))
    yt = torch.from_numpy(np.ascontiguousarray(y, dtype=np.float64))
    idx = torch.from_numpy(np.asarray(anchors, dtype=np.int64))
    y2 = yt * yt

    def objective(B):
        P = Zt @ B  # (n, d)
        C = P[idx]  # (m, d)
        d = P.shape[1]
        sq = (P * P).sum(1)
        D2 = (C * C).sum(1)[:, None] + sq[None, :] - 2.0 * (C @ P.T)
        K = torch.exp(-torch.clamp(D2, min=0.0) / (2.0 * h * h))
        W = K / K.sum(1, keepdim=True)  # (m, n)
        s0 = torch.ones(W.shape[0], dtype=W.dtype)  # sum_i w_ij
        M = W @ P  # sum_i w_ij P_i
        s1 = M - C  # sum_i w_ij (P_i - C_j)
        PP = (P[:, :, None] * P[:, None, :]).reshape(P.shape[0], d * d)
        # sum_i w_ij (P_i - C_j)(P_i - C_j)^T = W (P P^T) - M C^T - C M^T + C C^T (the weights sum to one)
        s2 = ((W @ PP).reshape(-1, d, d) - M[:, :, None] * C[:, None, :] - C[:, :, None] * M[:, None, :]
              + C[:, :, None] * C[:, None, :])
        wy = W @ yt
        r = torch.cat([wy[:, None], W @ (P * yt[:, None]) - wy[:, None] * C], dim=1)  # (m, q)
        top = torch.cat([s0[:, None], s1], dim=1)[:, None, :]
        low = torch.cat([s1[:, :, None], s2], dim=2)
        S = torch.cat([top, low], dim=1)  # (m, q, q)
        lam = ridge * torch.diagonal(s2, dim1=1, dim2=2).sum(1) / d
        S = S + torch.diag_embed(torch.cat([torch.zeros_like(lam)[:, None], lam[:, None].expand(-1, d)], dim=1))
        theta = torch.linalg.solve(S, r.unsqueeze(-1)).squeeze(-1)
        rss = W @ y2 - (r * theta).sum(1)
        return rss.mean()

    return objective


def solve_trust_regions(Z, y, B0, *, max_iter=100, rng=None, verbose=0):
    """Minimise :func:`mave_kernel_objective` on ``Grassmann(p, d)`` from ``B0`` with pymanopt's TrustRegions.

    Returns the dict the SGD path returns (``B``, ``n_iter``, curves, ``converged``) plus ``grad_norm`` (the final
    Riemannian gradient norm) and ``bandwidth``.
    """
    import pymanopt
    from pymanopt.manifolds import Grassmann
    from pymanopt.optimizers import TrustRegions

    n, p = Z.shape
    d = B0.shape[1]
    if n <= MAX_EXACT_ANCHORS:
        anchors = np.arange(n)
    else:
        rng = np.random.RandomState(0) if rng is None else rng
        anchors = np.sort(rng.choice(n, MAX_EXACT_ANCHORS, replace=False))
    h = projected_bandwidth(Z @ B0)
    objective = mave_kernel_objective(Z, y, anchors, h)
    manifold = Grassmann(p, d)

    @pymanopt.function.pytorch(manifold)
    def cost(B):
        return objective(B)

    problem = pymanopt.Problem(manifold, cost)
    optimizer = TrustRegions(max_iterations=max_iter, min_gradient_norm=GRAD_TOL, verbosity=2 if verbose else 0,
                             log_verbosity=1)
    result = optimizer.run(problem, initial_point=np.ascontiguousarray(B0, dtype=np.float64))
    log = result.log.get("iterations", {}) if isinstance(result.log, dict) else {}
    costs = np.asarray(log.get("cost", [result.cost]), dtype=float)
    grads = np.asarray(log.get("gradient_norm", [result.gradient_norm]), dtype=float)
    B = np.linalg.qr(np.asarray(result.point, dtype=np.float64))[0]
    return SolverRun(B=B, B_last=B, n_iter=int(result.iterations), t=int(result.iterations), loss_curve=costs,
                     grad_norm_curve=grads, converged=bool(result.gradient_norm <= GRAD_TOL), n_failed=0,
                     grad_norm=float(result.gradient_norm), bandwidth=float(h),
                     stopping_criterion=str(result.stopping_criterion))
