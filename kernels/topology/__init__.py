"""Topology kernels of the CEO family: clique enumeration, face lookup, batched Jacobi-PCG, selected inversion.

No Triton twin in v1 (irregular, launch-bound at these sizes): ``backend="triton"`` falls back to numba.
"""

import numpy as np
import scipy.sparse as sp

from .._dispatch import register_kernel

__all__ = ["clique_count", "clique_enumerate", "face_index", "pcg_jacobi_batched", "selinv_diag"]


def _random_upper_csr(rng):
    n = int(rng.choice([0, 1, 2, 5, 17, 40, 300]))
    p = float(rng.choice([0.0, 0.05, 0.3, 0.8]))
    if n == 0:
        return np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64)
    A = sp.triu(sp.random(n, n, density=p, random_state=rng, format="csr"), k=1).tocsr()
    A.sort_indices()
    return A.indptr.astype(np.int64), A.indices.astype(np.int64)


def _make_count_inputs(rng):
    indptr, indices = _random_upper_csr(rng)
    return (indptr, indices, int(rng.integers(0, 4))), {}


def _make_enumerate_inputs(rng):
    from ._reference import clique_count as ref_count

    indptr, indices = _random_upper_csr(rng)
    k = int(rng.integers(0, 4))
    return (indptr, indices, k, int(ref_count(indptr, indices, k))), {}


def _make_face_inputs(rng):
    from ._reference import clique_count as ref_count
    from ._reference import clique_enumerate as ref_enum

    indptr, indices = _random_upper_csr(rng)
    k = int(rng.integers(1, 4))
    cells = ref_enum(indptr, indices, k, int(ref_count(indptr, indices, k)))
    faces = ref_enum(indptr, indices, k - 1, int(ref_count(indptr, indices, k - 1)))
    if faces.shape[0] > 1 and rng.random() < 0.5:  # drop some faces: those cells get -1
        faces = faces[np.sort(rng.choice(faces.shape[0], faces.shape[0] // 2, replace=False))]
    return (np.ascontiguousarray(cells), np.ascontiguousarray(faces)), {}


def _make_pcg_inputs(rng):
    N = int(rng.choice([1, 2, 9, 50, 130]))
    r = int(rng.choice([1, 7, 64]))
    B = sp.random(N, max(1, N // 2 + 1), density=0.3, random_state=rng, format="csr")
    C = (B @ B.T).tocsr()
    C.sort_indices()
    shift = float(rng.choice([1e-3, 1.0]))
    diag = C.diagonal() + shift
    rhs = rng.standard_normal((N, r))
    if r > 1:
        rhs[:, 0] = 0.0  # a zero column stays zero
    return (C.indptr.astype(np.int64), C.indices.astype(np.int64), C.data.astype(np.float64), 1.0 / diag,
            shift, rhs, 1e-12, 10 * N + 50), {}


def _compare_pcg(expected, actual):
    Ze, ie, ce = expected
    Za, ia, ca = actual
    assert Za.shape == Ze.shape and Za.dtype == Ze.dtype
    scale = np.maximum(np.abs(Ze).max(axis=0), 1e-300)
    np.testing.assert_allclose(Za / scale, Ze / scale, rtol=0, atol=1e-8)
    assert np.array_equal(ca, ce)
    assert ia.dtype == ie.dtype and np.all(np.abs(ia - ie) <= np.maximum(3, 0.1 * ie))  # rounding moves late iterations


def _make_selinv_inputs(rng):
    n = int(rng.choice([1, 2, 9, 40, 150]))
    B = sp.random(n, n, density=float(rng.choice([0.02, 0.1, 0.4])), random_state=rng, format="csr")
    A = (B @ B.T + float(rng.choice([1e-3, 1.0])) * sp.eye(n)).tocsr()
    A.sort_indices()
    return (A.indptr.astype(np.int64), A.indices.astype(np.int64), A.data.astype(np.float64)), {}


def _compare_selinv(expected, actual):
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=1e-8, atol=0)


_clique_count = register_kernel(
    "clique_count", reference="sklearn_frontier.kernels.topology._reference:clique_count",
    numba="sklearn_frontier.kernels.topology._numba:clique_count", make_inputs=_make_count_inputs,
    compare=lambda e, a: (_ for _ in ()).throw(AssertionError(f"{a} != {e}")) if int(a) != int(e) else None)
_clique_enumerate = register_kernel(
    "clique_enumerate", reference="sklearn_frontier.kernels.topology._reference:clique_enumerate",
    numba="sklearn_frontier.kernels.topology._numba:clique_enumerate", make_inputs=_make_enumerate_inputs)
_face_index = register_kernel(
    "face_index", reference="sklearn_frontier.kernels.topology._reference:face_index",
    numba="sklearn_frontier.kernels.topology._numba:face_index", make_inputs=_make_face_inputs)
_pcg = register_kernel(
    "pcg_jacobi_batched", reference="sklearn_frontier.kernels.topology._reference:pcg_jacobi_batched",
    numba="sklearn_frontier.kernels.topology._numba:pcg_jacobi_batched", make_inputs=_make_pcg_inputs,
    compare=_compare_pcg)


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
    numba="sklearn_frontier.kernels.topology._numba:selinv_diag", make_inputs=_make_selinv_inputs,
    compare=_compare_selinv)


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
