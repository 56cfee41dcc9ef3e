"""numpy/scipy references (the oracles) of the topology kernels: clique enumeration, face index, batched PCG."""

import numpy as np
import scipy.sparse as sp


def _forward_lists(indptr, indices):
    return [indices[indptr[i]:indptr[i + 1]] for i in range(len(indptr) - 1)]


def _walk(forward, k):
    """Yield every (k+1)-clique as a tuple, lexicographically (forward lists are sorted)."""
    out = []

    def extend(prefix, cand):
        if len(prefix) == k + 1:
            out.append(tuple(prefix))
            return
        for v in cand:
            extend(prefix + [int(v)], np.intersect1d(cand, forward[v], assume_unique=True))

    for v0 in range(len(forward)):
        extend([v0], forward[v0])
    return out


def clique_count(indptr, indices, k):
    """Number of (k+1)-vertex cliques of the graph whose strictly upper sorted CSR is ``(indptr, indices)``."""
    n = len(indptr) - 1
    if k == 0:
        return np.int64(n)
    if k == 1:
        return np.int64(len(indices))
    return np.int64(len(_walk(_forward_lists(indptr, indices), k)))


def clique_enumerate(indptr, indices, k, count):
    """The ``count`` (k+1)-cliques as a (count, k+1) int64 array, rows sorted, lexicographic order."""
    n = len(indptr) - 1
    if k == 0:
        return np.arange(n, dtype=np.int64).reshape(n, 1)
    if k == 1:
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
        return np.column_stack([rows, np.asarray(indices, dtype=np.int64)]).reshape(-1, 2)
    cells = _walk(_forward_lists(indptr, indices), k)
    out = np.asarray(cells, dtype=np.int64).reshape(-1, k + 1)
    if out.shape[0] != count:
        raise ValueError(f"count={count} does not match the {out.shape[0]} cliques found.")
    return out


def face_index(cells, faces):
    """Row in the lexicographically sorted ``faces`` (f, k) of each codimension-1 face of ``cells`` (m, k+1).

    Column ``i`` is the face that deletes vertex ``i``; -1 where the face is absent.
    """
    m, kp1 = cells.shape
    lookup = {tuple(row): i for i, row in enumerate(faces.tolist())}
    out = np.full((m, kp1), -1, dtype=np.int64)
    for r in range(m):
        row = cells[r].tolist()
        for i in range(kp1):
            out[r, i] = lookup.get(tuple(row[:i] + row[i + 1:]), -1)
    return out


def pcg_jacobi_batched(indptr, indices, data, inv_diag, shift, rhs, rtol, maxiter):
    """Jacobi-preconditioned CG on ``(C + shift I) Z = rhs`` for the r columns of ``rhs`` at once.

    ``C`` is the CSR ``(indptr, indices, data)`` (symmetric positive semi-definite), ``inv_diag`` the
    inverse of the preconditioner's diagonal. Zero start; column ``j`` stops when
    ``||res_j|| <= rtol ||rhs_j||`` (a zero right-hand side gives a zero column at 0 iterations).

    Returns
    -------
    Z : (N, r) float64; iters : (r,) int64; converged : (r,) bool
    """
    N, r = rhs.shape
    C = sp.csr_matrix((data, indices, indptr), shape=(N, N))
    Z = np.zeros((N, r))
    R = np.array(rhs, dtype=np.float64, copy=True)
    target = rtol * np.sqrt((R * R).sum(axis=0))
    iters = np.zeros(r, dtype=np.int64)
    converged = np.sqrt((R * R).sum(axis=0)) <= target
    active = ~converged
    Zp = inv_diag[:, None] * R
    P = Zp.copy()
    rz = (R * Zp).sum(axis=0)
    for _ in range(maxiter):
        if not active.any():
            break
        cols = np.flatnonzero(active)
        Pa = P[:, cols]
        Q = C @ Pa + shift * Pa
        pq = (Pa * Q).sum(axis=0)
        alpha = rz[cols] / pq
        Z[:, cols] += alpha * Pa
        R[:, cols] -= alpha * Q
        iters[cols] += 1
        res = np.sqrt((R[:, cols] ** 2).sum(axis=0))
        done = res <= target[cols]
        converged[cols[done]] = True
        active[cols[done]] = False
        Zp = inv_diag[:, None] * R[:, cols]
        rz_new = (R[:, cols] * Zp).sum(axis=0)
        beta = rz_new / rz[cols]
        rz[cols] = rz_new
        P[:, cols] = Zp + beta * P[:, cols]
    return Z, iters, converged


def selinv_diag(indptr, indices, data):
    """diag(A⁻¹) of a symmetric positive definite CSC/CSR matrix by a dense inverse (NaN if not PD)."""
    n = len(indptr) - 1
    A = sp.csr_matrix((data, indices, indptr), shape=(n, n)).toarray()
    try:
        import scipy.linalg as la

        c = la.cho_factor(A, lower=True)
    except np.linalg.LinAlgError:
        return np.full(n, np.nan)
    return np.ascontiguousarray(np.diag(la.cho_solve(c, np.eye(n))))
