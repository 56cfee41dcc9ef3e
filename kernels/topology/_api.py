"""Public wrappers and registrations of the topology kernels (the package re-exports them)."""

import numpy as np
import scipy.sparse as sp

from .._dispatch import register_kernel

__all__ = ["clique_count", "clique_enumerate", "face_index", "pcg_jacobi_batched", "selinv_diag"]


  # rounding moves late iterations


_clique_count = register_kernel(
    "clique_count", reference="sklearn_frontier.kernels.topology._reference:clique_count",
    numba="sklearn_frontier.kernels.topology._numba:clique_count")
_clique_enumerate = register_kernel(
    "clique_enumerate", reference="sklearn_frontier.kernels.topology._reference:clique_enumerate",
    numba="sklearn_frontier.kernels.topology._numba:clique_enumerate")
_face_index = register_kernel(
    "face_index", reference="sklearn_frontier.kernels.topology._reference:face_index",
    numba="sklearn_frontier.kernels.topology._numba:face_index")
_pcg = register_kernel(
    "pcg_jacobi_batched", reference="sklearn_frontier.kernels.topology._reference:pcg_jacobi_batched",
    numba="sklearn_frontier.kernels.topology._numba:pcg_jacobi_batched")


def _upper_csr(indptr, indices):
    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    indices = np.ascontiguousarray(indices, dtype=np.int64)
    if indptr.ndim != 1 or indptr.shape[0] < 1 or indptr[0] != 0 or indptr[-1] != indices.shape[0]:
        raise ValueError("indptr/indices do not form a CSR structure.")
    return indptr, indices


def clique_count(indptr, indices, k):
    """Number of (k+1)-vertex cliques of a graph given by its strictly upper, sorted CSR pattern.

    Parameters
    ----------
    indptr, indices : array-like of int
        CSR of the strictly upper triangle (each row's column indices sorted, all > the row).
    k : int
        Rank: cliques of ``k + 1`` vertices (0 = vertices, 1 = edges, 2 = triangles).

    Returns
    -------
    count : int
        Number of cliques.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import clique_count
    >>> int(clique_count(np.array([0, 2, 3, 3]), np.array([1, 2, 2]), 2))  # one triangle
    1
    """
    indptr, indices = _upper_csr(indptr, indices)
    if int(k) < 0:
        raise ValueError(f"k must be >= 0, got {k}.")
    return int(_clique_count(indptr, indices, int(k)))


def clique_enumerate(indptr, indices, k, count=None):
    """Enumerate all (k+1)-cliques, each row sorted, rows in lexicographic order.

    Parameters
    ----------
    indptr, indices : array-like of int
        CSR of the strictly upper triangle (each row's column indices sorted, all > the row).
    k : int
        Rank: cliques of ``k + 1`` vertices.
    count : int, default=None
        Number of cliques, from :func:`clique_count` when None.

    Returns
    -------
    cliques : ndarray of shape (count, k + 1), int64
        The cliques.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import clique_enumerate
    >>> clique_enumerate(np.array([0, 2, 3, 3]), np.array([1, 2, 2]), 2)
    array([[0, 1, 2]])
    """
    indptr, indices = _upper_csr(indptr, indices)
    if count is None:
        count = clique_count(indptr, indices, k)
    return _clique_enumerate(indptr, indices, int(k), int(count))


def face_index(cells, faces):
    """Find the row of each codimension-1 face of ``cells`` in the sorted ``faces``.

    Column ``i`` looks up the face that deletes vertex ``i``; -1 where absent.

    Parameters
    ----------
    cells : array-like of shape (m, k + 1)
        Cells, each row sorted.
    faces : array-like of shape (f, k)
        Faces, lexicographically sorted.

    Returns
    -------
    index : ndarray of shape (m, k + 1)
        Row in ``faces`` of each face of each cell, -1 where absent.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import face_index
    >>> face_index(np.array([[0, 1, 2]]), np.array([[0, 1], [0, 2], [1, 2]]))
    array([[2, 1, 0]])
    """
    cells = np.ascontiguousarray(cells, dtype=np.int64)
    faces = np.ascontiguousarray(faces, dtype=np.int64)
    if cells.ndim != 2 or faces.ndim != 2 or faces.shape[1] != cells.shape[1] - 1:
        raise ValueError(f"cells (m, k+1) and faces (f, k) expected, got {cells.shape} and {faces.shape}.")
    return _face_index(cells, faces)


def pcg_jacobi_batched(matrix, inv_diag, shift, rhs, rtol=1e-10, maxiter=None):
    """Jacobi-PCG on ``(C + shift I) Z = rhs`` for every column of ``rhs`` at once (zero start).

    Parameters
    ----------
    matrix : sparse matrix of shape (N, N)
        Symmetric positive semi-definite ``C``.
    inv_diag : array-like of shape (N,)
        Inverse of the Jacobi preconditioner's diagonal.
    shift : float
        Diagonal shift added to ``C``.
    rhs : array-like of shape (N, r)
        Right-hand sides, one per column.
    rtol : float, default=1e-10
        Column ``j`` stops at ``||res_j|| <= rtol ||rhs_j||``.
    maxiter : int, default=None
        ``10 N`` when None.

    Returns
    -------
    Z : ndarray of shape (N, r)
        The solutions.
    iters : ndarray of shape (r,), int64
        Iterations used by each column.
    converged : ndarray of shape (r,), bool
        Whether each column reached the tolerance.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from sklearn_frontier.kernels import pcg_jacobi_batched
    >>> Z, it, ok = pcg_jacobi_batched(sp.eye(3, format="csr"), np.full(3, 0.5), 1.0, np.ones((3, 1)))
    >>> Z.ravel().round(6).tolist(), bool(ok[0])
    ([0.5, 0.5, 0.5], True)
    """
    C = sp.csr_matrix(matrix, dtype=np.float64)
    C.sort_indices()
    rhs = np.ascontiguousarray(rhs, dtype=np.float64)
    if rhs.ndim == 1:
        rhs = rhs[:, None]
    N = C.shape[0]
    if C.shape != (N, N) or rhs.shape[0] != N:
        raise ValueError(f"matrix must be square and match rhs rows, got {C.shape} and {rhs.shape}.")
    inv_diag = np.ascontiguousarray(inv_diag, dtype=np.float64)
    if inv_diag.shape != (N,):
        raise ValueError(f"inv_diag must have shape ({N},), got {inv_diag.shape}.")
    maxiter = 10 * N if maxiter is None else int(maxiter)
    return _pcg(np.ascontiguousarray(C.indptr, dtype=np.int64), np.ascontiguousarray(C.indices, dtype=np.int64),
                np.ascontiguousarray(C.data), inv_diag, float(shift), rhs, float(rtol), maxiter)


clique_count.kernel_spec = _clique_count.kernel_spec
clique_enumerate.kernel_spec = _clique_enumerate.kernel_spec
face_index.kernel_spec = _face_index.kernel_spec
pcg_jacobi_batched.kernel_spec = _pcg.kernel_spec


_selinv = register_kernel(
    "selinv_diag", reference="sklearn_frontier.kernels.topology._reference:selinv_diag",
    numba="sklearn_frontier.kernels.topology._numba:selinv_diag")


def selinv_diag(matrix):
    """Diagonal of the inverse of a sparse symmetric positive definite matrix, without forming the inverse.

    numba: up-looking sparse Cholesky A = LLᵀ in the given order (permute first for little fill, e.g. by the
    minimum-degree ordering of ``scipy.sparse.linalg.splu``), then the Takahashi recurrence, which needs the
    entries of A⁻¹ only on the pattern of L: O(Σ_j |L_{:,j}|·Σ_{k ∈ L_{:,j}} |L_{:,k}|) instead of O(n³).
    numpy reference: a dense Cholesky inverse.

    Parameters
    ----------
    matrix : scipy.sparse matrix of shape (n, n)
        Symmetric positive definite (both triangles stored).

    Returns
    -------
    diag : ndarray of shape (n,)
        ``diag(matrix⁻¹)``.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from sklearn_frontier.kernels import selinv_diag
    >>> A = sp.csc_matrix(np.array([[2.0, -1.0, 0.0], [-1.0, 2.0, -1.0], [0.0, -1.0, 2.0]]))
    >>> selinv_diag(A).round(6).tolist()
    [0.75, 1.0, 0.75]
    """
    A = sp.csc_matrix(matrix, dtype=np.float64)
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"matrix must be square, got shape {A.shape}.")
    A.sort_indices()
    out = _selinv(np.ascontiguousarray(A.indptr, dtype=np.int64), np.ascontiguousarray(A.indices, dtype=np.int64),
                  np.ascontiguousarray(A.data, dtype=np.float64))
    if A.shape[0] and np.isnan(out).any():
        raise np.linalg.LinAlgError("matrix is not positive definite")
    return out
