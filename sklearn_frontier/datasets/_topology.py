"""Generators with planted clusters for the CEO family (hypergraph stochastic block model)."""

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

__all__ = ["make_hypergraph_sbm", "load_digits_hypergraph"]


def make_hypergraph_sbm(n_samples=120, n_blocks=3, *, p_in=0.06, p_out=0.03, n_hyperedges=60,
                        hyperedge_sizes=(3, 5), p_hyperedge_in=0.9, random_state=None):
    """Hypergraph stochastic block model: sparse noisy pairwise edges plus block-aligned hyperedges.

    Vertex ``i`` is in block ``floor(n_blocks * i / n_samples)``. Each pair is an edge with probability
    ``p_in`` inside a block and ``p_out`` across. Each hyperedge draws a size uniformly from
    ``hyperedge_sizes`` (inclusive) and, with probability ``p_hyperedge_in``, its vertices from one random block,
    otherwise uniformly from all vertices.

    Parameters
    ----------
    n_samples : int, default=120
        Number of vertices.
    n_blocks : int, default=3
        Number of planted blocks.
    p_in, p_out : float, default=0.06, 0.03
        Edge probabilities inside a block and across blocks.
    n_hyperedges : int, default=60
        Number of hyperedges.
    hyperedge_sizes : tuple of two int, default=(3, 5)
        Smallest and largest hyperedge size (inclusive).
    p_hyperedge_in : float, default=0.9
        Probability that a hyperedge lies inside one block.
    random_state : int, RandomState instance or None, default=None
        Seed or generator for reproducible draws.

    Returns
    -------
    adjacency : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        Symmetric 0/1, zero diagonal.
    cells : list of tuple of int
        The hyperedges (sorted, distinct vertices).
    y : ndarray of shape (n_samples,), int64
        Planted blocks.

    Examples
    --------
    >>> from sklearn_frontier.datasets import make_hypergraph_sbm
    >>> A, cells, y = make_hypergraph_sbm(random_state=0)
    >>> A.shape, len(cells), sorted(set(y.tolist()))
    ((120, 120), 60, [0, 1, 2])
    """
    rng = check_random_state(random_state)
    n, b = int(n_samples), int(n_blocks)
    lo, hi = (int(v) for v in hyperedge_sizes)
    if n < 3 or b < 1 or b > n or not (3 <= lo <= hi):
        raise ValueError("need n_samples >= 3, 1 <= n_blocks <= n_samples and 3 <= min size <= max size.")
    if not all(0 <= p <= 1 for p in (p_in, p_out, p_hyperedge_in)):
        raise ValueError("probabilities must lie in [0, 1].")
    y = (b * np.arange(n)) // n
    # Sample the upper triangle block-pair by block-pair (memory O(edges), fine at n = 30 000).
    rows, cols = [], []
    starts = np.searchsorted(y, np.arange(b + 1))
    for u in range(b):
        for v in range(u, b):
            p = p_in if u == v else p_out
            nu, nv = starts[u + 1] - starts[u], starts[v + 1] - starts[v]
            n_pairs = nu * (nu - 1) // 2 if u == v else nu * nv
            k = rng.binomial(n_pairs, p)
            if k == 0:
                continue
            if n_pairs <= 1_000_000:
                flat = rng.choice(n_pairs, size=k, replace=False)
            else:  # k << n_pairs: rejection of repeats instead of a permutation of every pair
                flat = np.unique(rng.randint(0, n_pairs, size=k))
                while flat.size < k:
                    flat = np.unique(np.concatenate([flat, rng.randint(0, n_pairs, size=k - flat.size)]))
                flat = rng.permutation(flat)
            if u == v:
                # unrank pairs i < j inside the block
                i = (np.floor((2 * nu - 1 - np.sqrt((2 * nu - 1) ** 2 - 8 * flat)) / 2)).astype(np.int64)
                i = np.clip(i, 0, nu - 2)
                off = i * (2 * nu - i - 1) // 2
                fix = flat < off
                i[fix] -= 1
                off = i * (2 * nu - i - 1) // 2
                j = flat - off + i + 1
                rows.append(starts[u] + i)
                cols.append(starts[u] + j)
            else:
                rows.append(starts[u] + flat // nv)
                cols.append(starts[v] + flat % nv)
    r = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    c = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
    A = sp.csr_matrix((np.ones(len(r)), (r, c)), shape=(n, n))
    A = ((A + A.T) > 0).astype(np.float64).tocsr()
    A.setdiag(0)
    A.eliminate_zeros()
    cells = []
    for _ in range(int(n_hyperedges)):
        size = int(rng.randint(lo, hi + 1))
        if rng.rand() < p_hyperedge_in:
            blk = int(rng.randint(b))
            pool = np.arange(starts[blk], starts[blk + 1])
        else:
            pool = np.arange(n)
        size = min(size, len(pool))
        if size < 3:
            pool, size = np.arange(n), max(3, size)
        cells.append(tuple(int(v) for v in np.sort(rng.choice(pool, size=size, replace=False))))
    return A, cells, y.astype(np.int64)


def load_digits_hypergraph(n_samples=600, *, n_neighbors=5, n_cells=300, cell_size=8, random_state=None):
    """A two-view hypergraph from sklearn's bundled digits: graph from the left half, cells from the right half.

    ``n_samples`` digits are drawn (stratified by class). Pixel columns 0–3 of each 8×8 image give the pairwise
    graph (union-symmetrised ``n_neighbors``-NN); pixel columns 4–7 give the cells: ``n_cells`` random centre
    digits, each cell the centre and its ``cell_size − 1`` nearest neighbours in that view. Most in-cell pairs
    are therefore absent from the graph (the two views disagree), which is the setting where a cell carries
    information that the graph's pairs do not. Loads offline (``sklearn.datasets.load_digits``).

    Parameters
    ----------
    n_samples : int, default=600
        Number of digits (at most 1797).
    n_neighbors : int, default=5
        Neighbours of the left-half kNN graph.
    n_cells : int, default=300
        Number of cells (hyperedges).
    cell_size : int, default=8
        Vertices per cell (>= 3).
    random_state : int, RandomState instance or None, default=None
        Seed of the subsample and of the cell centres.

    Returns
    -------
    adjacency : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        Symmetric 0/1 graph of the left half.
    cells : list of tuple of int
        The cells (sorted, distinct vertices), duplicates removed.
    y : ndarray of shape (n_samples,), int64
        Digit classes.

    Examples
    --------
    >>> from sklearn_frontier.datasets import load_digits_hypergraph
    >>> A, cells, y = load_digits_hypergraph(200, n_cells=50, random_state=0)
    >>> A.shape, len(cells[0]), len(set(y.tolist()))
    ((200, 200), 8, 10)
    """
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    from sklearn.neighbors import NearestNeighbors

    X, y = load_digits(return_X_y=True)
    if not (10 <= int(n_samples) <= len(y)) or int(cell_size) < 3 or int(n_cells) < 0 or int(n_neighbors) < 1:
        raise ValueError(f"need 10 <= n_samples <= {len(y)}, cell_size >= 3, n_cells >= 0 and n_neighbors >= 1.")
    rng = check_random_state(random_state)
    if int(n_samples) < len(y):
        idx, _ = train_test_split(np.arange(len(y)), train_size=int(n_samples), stratify=y, random_state=rng)
        idx = np.sort(idx)
    else:
        idx = np.arange(len(y))
    img = X[idx].reshape(-1, 8, 8)
    left, right = img[:, :, :4].reshape(len(idx), -1), img[:, :, 4:].reshape(len(idx), -1)
    n = len(idx)
    _, nb = NearestNeighbors(n_neighbors=int(n_neighbors) + 1).fit(left).kneighbors(left)
    A = sp.csr_matrix((np.ones(n * int(n_neighbors)), (np.repeat(np.arange(n), int(n_neighbors)),
                                                       nb[:, 1:].ravel())), shape=(n, n))
    A = ((A + A.T) > 0).astype(np.float64).tocsr()
    A.setdiag(0)
    A.eliminate_zeros()
    _, nb = NearestNeighbors(n_neighbors=int(cell_size)).fit(right).kneighbors(right)
    centres = rng.choice(n, size=min(int(n_cells), n), replace=False)
    cells = sorted({tuple(sorted(int(v) for v in set(nb[c].tolist()) | {int(c)})) for c in centres})
    cells = [c for c in cells if len(c) >= 3]
    return A, cells, y[idx].astype(np.int64)
