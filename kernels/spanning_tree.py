"""Spanning-tree kernels: Kruskal MST, BFS rooting, tree partitions and tree path lengths (PR-BAST, BAST)."""

import numpy as np

from ._dispatch import register_kernel
from .tree_precision import random_rooted_tree

__all__ = ["kruskal_mst", "root_tree", "partition_labels", "tree_path_lengths"]


def _random_graph(rng):
    n = int(rng.choice([1, 2, 3, int(rng.integers(4, 60))]))
    order, parent = random_rooted_tree(n, rng)
    tree = [(min(v, p), max(v, p)) for v, p in enumerate(parent) if p >= 0]
    extra = rng.integers(0, n, size=(int(rng.integers(0, 3 * n + 1)), 2)) if n > 1 else np.zeros((0, 2), int)
    pairs = {tuple(sorted(map(int, e))) for e in extra if e[0] != e[1]} | set(tree)
    edges = np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)
    return n, edges


def _mst_inputs(rng):
    n, edges = _random_graph(rng)
    w = rng.random(edges.shape[0])
    if rng.random() < 0.3:
        w = np.round(w * 3) / 3  # ties: both twins must break them the same way
    return (n, edges, w), {}


def _root_inputs(rng):
    n, edges = _random_graph(rng)
    from ._spanning_tree_reference import kruskal_mst as mst

    tree = mst(n, edges, rng.random(edges.shape[0]))
    return (n, edges, tree, int(rng.integers(0, n))), {}


def _tree_inputs(rng):
    n = int(rng.choice([1, 2, 3, int(rng.integers(4, 60))]))
    order, parent = random_rooted_tree(n, rng)
    return n, order, parent


def _labels_inputs(rng):
    n, order, parent = _tree_inputs(rng)
    return (order, parent, rng.random(n) < 0.2), {}


def _path_inputs(rng):
    n, order, parent = _tree_inputs(rng)
    pairs = rng.integers(0, n, size=(int(rng.integers(0, 40)), 2)).astype(np.int64)
    return (order, parent, rng.random(n), pairs), {}


_kruskal = register_kernel("kruskal_mst", reference="sklearn_frontier.kernels._spanning_tree_reference:kruskal_mst",
                           numba="sklearn_frontier.kernels._spanning_tree_numba:kruskal_mst", make_inputs=_mst_inputs)
_root = register_kernel("root_tree", reference="sklearn_frontier.kernels._spanning_tree_reference:root_tree",
                        numba="sklearn_frontier.kernels._spanning_tree_numba:root_tree", make_inputs=_root_inputs)
_labels = register_kernel("partition_labels",
                          reference="sklearn_frontier.kernels._spanning_tree_reference:partition_labels",
                          numba="sklearn_frontier.kernels._spanning_tree_numba:partition_labels",
                          make_inputs=_labels_inputs)
_paths = register_kernel("tree_path_lengths",
                         reference="sklearn_frontier.kernels._spanning_tree_reference:tree_path_lengths",
                         numba="sklearn_frontier.kernels._spanning_tree_numba:tree_path_lengths",
                         make_inputs=_path_inputs, rtol=1e-12)


def kruskal_mst(n, edges, weights):
    """Edge ids of a minimum spanning forest of the graph ``edges`` (E, 2) under ``weights`` (Kruskal).

    Ties are broken by edge id (stable sort), so every backend returns the same tree.

    Parameters
    ----------
    n : int
        Number of vertices.
    edges : array-like of shape (E, 2)
        Edge endpoints, in ``range(n)``.
    weights : array-like of shape (E,)
        Edge weights.

    Returns
    -------
    tree_edges : ndarray of int64
        Ids of the edges of the minimum spanning forest.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import kruskal_mst
    >>> kruskal_mst(3, np.array([[0, 1], [1, 2], [0, 2]]), np.array([1.0, 2.0, 0.5]))
    array([2, 0])
    """
    edges = np.ascontiguousarray(edges, dtype=np.int64).reshape(-1, 2)
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    if weights.shape != (edges.shape[0],):
        raise ValueError("weights must have one entry per edge.")
    if edges.size and (edges.min() < 0 or edges.max() >= n):
        raise ValueError("edge endpoints must lie in range(n).")
    return _kruskal(int(n), edges, weights)


def root_tree(n, edges, tree_edges, root):
    """Root the spanning tree ``edges[tree_edges]`` at ``root`` by BFS.

    Parameters
    ----------
    n : int
        Number of vertices.
    edges : array-like of shape (E, 2)
        Edge endpoints of the graph.
    tree_edges : array-like of shape (n - 1,)
        Ids of the spanning tree's edges.
    root : int
        The root vertex.

    Returns
    -------
    order : ndarray of shape (n,)
        Vertices in BFS order.
    parent : ndarray of shape (n,)
        Parent of each vertex (-1 at the root).
    parent_edge : ndarray of shape (n,)
        Edge id joining each vertex to its parent (-1 at the root).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import root_tree
    >>> order, parent, parent_edge = root_tree(3, np.array([[0, 1], [1, 2], [0, 2]]), np.array([2, 0]), 0)
    >>> parent
    array([-1,  0,  0])
    """
    edges = np.ascontiguousarray(edges, dtype=np.int64).reshape(-1, 2)
    tree_edges = np.ascontiguousarray(tree_edges, dtype=np.int64)
    if tree_edges.shape != (int(n) - 1,) or not 0 <= int(root) < int(n):
        raise ValueError("a spanning tree has n - 1 edges and a root in range(n).")
    return _root(int(n), edges, tree_edges, int(root))


def partition_labels(order, parent, cut):
    """Label the pieces left when the parent edges of the vertices flagged in ``cut`` are removed.

    Parameters
    ----------
    order : array-like of shape (n,)
        Vertices in BFS order from the root.
    parent : array-like of shape (n,)
        Parent of each vertex (-1 at the root).
    cut : array-like of bool of shape (n,)
        Vertices whose parent edge is removed.

    Returns
    -------
    labels : ndarray of shape (n,)
        Piece label of each vertex.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import partition_labels
    >>> partition_labels(np.array([0, 2, 1]), np.array([-1, 0, 0]), np.array([False, True, False]))
    array([0, 1, 0])
    """
    return _labels(np.ascontiguousarray(order, dtype=np.int64), np.ascontiguousarray(parent, dtype=np.int64),
                   np.ascontiguousarray(cut, dtype=np.bool_))


def tree_path_lengths(order, parent, parent_length, pairs):
    """Compute the tree path length between the two vertices of each row of ``pairs``.

    Parameters
    ----------
    order : array-like of shape (n,)
        Vertices in BFS order from the root.
    parent : array-like of shape (n,)
        Parent of each vertex (-1 at the root).
    parent_length : array-like of shape (n,)
        Length of the edge from each vertex to its parent.
    pairs : array-like of shape (P, 2)
        Vertex pairs.

    Returns
    -------
    lengths : ndarray of shape (P,)
        Path length of each pair.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_frontier.kernels import tree_path_lengths
    >>> tree_path_lengths(np.array([0, 2, 1]), np.array([-1, 0, 0]), np.array([0.0, 1.0, 2.0]), np.array([[1, 2]]))
    array([3.])
    """
    return _paths(np.ascontiguousarray(order, dtype=np.int64), np.ascontiguousarray(parent, dtype=np.int64),
                  np.ascontiguousarray(parent_length, dtype=np.float64),
                  np.ascontiguousarray(pairs, dtype=np.int64).reshape(-1, 2))


for _f, _k in ((kruskal_mst, _kruskal), (root_tree, _root), (partition_labels, _labels), (tree_path_lengths, _paths)):
    _f.kernel_spec = _k.kernel_spec
