"""Cell complexes as boundary matrices: clique (flag) complexes of graphs and hypergraph complexes.

Conventions: ``boundaries = [B_1, ..., B_K]``, csr float64, ``B_k`` of shape (n_{k-1}, n_k), rank 0 =
vertices. A rank-k clique cell is a sorted tuple (v_0 < ... < v_k), each rank in lexicographic order. Signed:
``B_k[face_i(s), s] = (-1)**i`` (face_i deletes v_i), so ``B_k B_{k+1} = 0``; unsigned: all ones; "mixed": B_1
signed, higher ranks 0/1 (the hypergraph convention). Empty ranks are (n_{k-1}, 0) matrices.
"""

import numbers
from itertools import combinations

import numpy as np
import scipy.sparse as sp

__all__ = ["clique_complex", "hypergraph_complex", "adjacency_pattern"]


def adjacency_pattern(adjacency, *, symmetrize=False):
    """The 0/1 csr pattern of the off-diagonal non-zeros of ``adjacency`` (dense or sparse, square)."""
    if sp.issparse(adjacency):
        A = sp.csr_matrix(adjacency)
    else:
        arr = np.asarray(adjacency)
        if arr.ndim != 2:
            raise ValueError(f"adjacency must be a 2-D (n, n) matrix, got shape {arr.shape}.")
        A = sp.csr_matrix(arr)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"adjacency must be square, got shape {A.shape}.")
    if A.nnz and not np.all(np.isfinite(A.data)):
        raise ValueError("adjacency contains NaN or infinity.")
    A = A.tocoo()
    keep = (A.row != A.col) & (A.data != 0)
    n = A.shape[0]
    P = sp.csr_matrix((np.ones(int(keep.sum())), (A.row[keep], A.col[keep])), shape=(n, n))
    P.data[:] = 1.0
    if symmetrize:
        P = ((P + P.T) > 0).astype(np.float64).tocsr()
    elif (P != P.T).nnz:
        raise ValueError("adjacency has an asymmetric pattern: symmetrise it first (e.g. A.maximum(A.T)).")
    P.sort_indices()
    return P


def _upper(P):
    U = sp.triu(P, k=1).tocsr()
    U.sort_indices()
    return U.indptr.astype(np.int64), U.indices.astype(np.int64)


def _boundary(cells_k, faces, signs):
    """B (n_faces, n_cells) with ``signs[i]`` at the face deleting vertex i of each cell."""
    from sklearn_frontier.kernels import face_index

    m, kp1 = cells_k.shape
    if m == 0:
        return sp.csr_matrix((faces.shape[0], 0))
    idx = face_index(cells_k, faces)
    if (idx < 0).any():  # cannot happen for a clique complex
        raise RuntimeError("a face of a cell is missing from the lower rank.")
    rows = idx.ravel()
    cols = np.repeat(np.arange(m), kp1)
    vals = np.tile(np.asarray(signs, dtype=np.float64), m)
    B = sp.csr_matrix((vals, (rows, cols)), shape=(faces.shape[0], m))
    B.sort_indices()
    return B


def _edge_boundary(n, edges):
    m = edges.shape[0]
    rows = edges[:, ::-1].ravel()  # (+1 at j, -1 at i)
    vals = np.tile([1.0, -1.0], m)
    B = sp.csr_matrix((vals, (rows, np.repeat(np.arange(m), 2))), shape=(n, m))
    B.sort_indices()
    return B


def clique_complex(adjacency, max_rank=2, signed=True, *, max_cells=2_000_000, return_cells=False):
    """Boundary matrices of the clique (flag) complex of a graph, up to rank ``max_rank``.

    Parameters
    ----------
    adjacency : {array-like, sparse matrix} of shape (n, n)
        Off-diagonal non-zeros are the edges (weights are ignored); the pattern must be symmetric.
    max_rank : int, default=2
        Highest rank: 1 = edges only, 2 = triangles, 3 = tetrahedra, ...
    signed : {True, False, "mixed"}, default=True
        Oriented ``(-1)**i`` incidences (a chain complex), all ones, or signed B_1 with 0/1 higher ranks.
    max_cells : int, default=2_000_000
        A rank with more cells raises ValueError (counted before anything is allocated).
    return_cells : bool, default=False
        Also return ``cells[k]``, the (n_k, k+1) int64 vertex tuples of each rank.

    Returns
    -------
    boundaries : list of scipy.sparse.csr_matrix
        ``[B_1, ..., B_max_rank]``.
    cells : list of ndarray
        Only with ``return_cells``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.topology import clique_complex
    >>> B1, B2 = clique_complex(np.ones((3, 3)))
    >>> B2.toarray().ravel().tolist()
    [1.0, -1.0, 1.0]
    """
    if isinstance(max_rank, bool) or not isinstance(max_rank, numbers.Integral) or max_rank < 1:
        raise ValueError(f"max_rank must be an integer >= 1, got {max_rank!r}.")
    if signed not in (True, False, "mixed"):
        raise ValueError(f"signed must be True, False or 'mixed', got {signed!r}.")
    from sklearn_frontier.kernels import clique_count, clique_enumerate

    P = adjacency_pattern(adjacency)
    n = P.shape[0]
    indptr, indices = _upper(P)
    cells = [np.arange(n, dtype=np.int64).reshape(n, 1), np.column_stack(
        [np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr)), indices]).reshape(-1, 2)]
    if cells[1].shape[0] > max_cells:
        raise ValueError(f"rank 1 has {cells[1].shape[0]} cells, more than max_cells={max_cells}.")
    boundaries = [_edge_boundary(n, cells[1]) if signed is not False else
                  sp.csr_matrix(abs(_edge_boundary(n, cells[1])))]
    for k in range(2, max_rank + 1):
        count = clique_count(indptr, indices, k) if cells[-1].shape[0] else 0
        if count > max_cells:
            raise ValueError(f"rank {k} has {count} cells, more than max_cells={max_cells}.")
        ck = clique_enumerate(indptr, indices, k, count) if count else np.zeros((0, k + 1), dtype=np.int64)
        signs = [(-1.0) ** i for i in range(k + 1)] if signed is True else [1.0] * (k + 1)
        boundaries.append(_boundary(ck, cells[-1], signs))
        cells.append(ck)
    return (boundaries, cells) if return_cells else boundaries


def _clean_cells(cells, n):
    if cells is None:
        raise ValueError("cells must be a sequence of vertex-index collections, got None.")
    if isinstance(cells, np.ndarray) and cells.ndim == 2:
        cells = list(cells)
    try:
        cells = list(cells)
    except TypeError:
        raise ValueError(f"cells must be a sequence of vertex-index collections, got {type(cells).__name__}.")
    out = set()
    for c, cell in enumerate(cells):
        try:
            arr = np.asarray(list(cell) if not isinstance(cell, np.ndarray) else cell)
        except TypeError:
            raise ValueError(f"cell {c} ({cell!r}) is not a collection of vertex indices.") from None
        if arr.ndim != 1 or arr.dtype.kind not in "iuf" or arr.size == 0:
            raise ValueError(f"cell {c} ({cell!r}) is not a 1-D collection of vertex indices.")
        if arr.dtype.kind == "f":
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"cell {c} ({cell!r}) contains NaN or infinity.")
            if not np.all(arr == np.round(arr)):
                raise ValueError(f"cell {c} ({cell!r}) contains non-integer indices.")
        arr = arr.astype(np.int64)
        if arr.min() < 0 or arr.max() >= n:
            raise ValueError(f"cell {c} ({cell!r}) has an index outside [0, {n}).")
        uniq = tuple(int(v) for v in np.unique(arr))
        if len(uniq) < 3:
            raise ValueError(f"cell {c} ({cell!r}) has fewer than 3 distinct vertices.")
        out.add(uniq)
    return sorted(out)


def hypergraph_complex(adjacency, cells, *, return_cells=False):
    """Two-rank complex of a graph plus hyperedges: B_1 signed over edges ∪ in-cell pairs, B_2 0/1.

    Parameters
    ----------
    adjacency : {array-like, sparse matrix} of shape (n, n)
        Pairwise edges (symmetric pattern, weights ignored).
    cells : sequence of sequences of int
        Hyperedges, each with at least 3 distinct vertex indices in [0, n). Each is reduced to its sorted set
        of distinct indices; identical cells are kept once; rank 2 is in lexicographic order of the tuples.
    return_cells : bool, default=False
        Also return ``[vertices, edges (n_1, 2), list of cell tuples]``.

    Returns
    -------
    boundaries : list of two scipy.sparse.csr_matrix
        ``B_1`` (n, n_1) signed, ``B_2`` (n_1, n_2) with a 1 at each of the C(|c|, 2) pairs of cell c.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.topology import hypergraph_complex
    >>> B1, B2 = hypergraph_complex(np.zeros((4, 4)), [[0, 1, 2, 3]])
    >>> B1.shape, B2.toarray().ravel().tolist()
    ((4, 6), [1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    """
    P = adjacency_pattern(adjacency)
    n = P.shape[0]
    clean = _clean_cells(cells, n)
    pair_rows, pair_cols, pair_cell = [], [], []
    for c, cell in enumerate(clean):
        pairs = np.array(list(combinations(cell, 2)), dtype=np.int64)
        pair_rows.append(pairs[:, 0])
        pair_cols.append(pairs[:, 1])
        pair_cell.append(np.full(len(pairs), c, dtype=np.int64))
    U = sp.triu(P, k=1).tocoo()
    rows = np.concatenate([U.row.astype(np.int64), *pair_rows])
    cols = np.concatenate([U.col.astype(np.int64), *pair_cols])
    key = rows * n + cols
    edge_keys = np.unique(key)
    edges = np.column_stack([edge_keys // n, edge_keys % n]).astype(np.int64).reshape(-1, 2)
    B1 = _edge_boundary(n, edges)
    if clean:
        pk = np.concatenate([r * n + c for r, c in zip(pair_rows, pair_cols)])
        erow = np.searchsorted(edge_keys, pk)
        B2 = sp.csr_matrix((np.ones(len(pk)), (erow, np.concatenate(pair_cell))), shape=(len(edges), len(clean)))
        B2.sort_indices()
    else:
        B2 = sp.csr_matrix((len(edges), 0))
    boundaries = [B1, B2]
    if return_cells:
        return boundaries, [np.arange(n, dtype=np.int64).reshape(n, 1), edges, clean]
    return boundaries
