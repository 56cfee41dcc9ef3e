"""Spanning-tree priors on the domain graph and rooting."""

import numpy as np


class TreeContext:
    """Graph arrays and the kernels chosen once per fit (the dispatch lookup stays out of the sweep)."""

    def __init__(self, graph):
        import sklearn_frontier.kernels.spanning_trees  # noqa: F401  (registers the kernels)
        from sklearn_frontier.kernels import get_implementation

        self.n = graph.n_vertices
        self.edges = graph.edges
        self.lengths = graph.lengths
        self.diameter = graph.diameter
        self.kruskal = get_implementation("kruskal_mst")[1]
        self.root = get_implementation("root_tree")[1]
        self.labels = get_implementation("partition_labels")[1]
        self.paths = get_implementation("tree_path_lengths")[1]
        self.solve = get_implementation("tree_precision_solve")[1]
        self.eliminate_loglik = get_implementation("tree_collapsed_loglik")[1]
        self.routed = get_implementation("routed_coefficients")[1]
        self.sweep = get_implementation("routed_sweep")[1]
        self.log_lengths = np.log(self.lengths)

    def mst(self, weights):
        if self.n == 1:
            return np.zeros(0, dtype=np.int64)
        return self.kruskal(self.n, self.edges, np.ascontiguousarray(weights, dtype=np.float64))

    def draw_tree(self, prior, rng, jitter=0.3):
        """One spanning tree from the prior: ``random_mst`` (U(0,1) weights), ``length_mst``
        (``length * exp(jitter z)``, sorted as ``log(length) + jitter z``: the same order) or ``uniform``
        (Wilson's algorithm)."""
        E = self.edges.shape[0]
        if prior == "random_mst":
            return self.mst(rng.random(E))
        if prior == "length_mst":
            return self.mst(self.log_lengths + jitter * rng.standard_normal(E))
        if prior == "uniform":
            return wilson_tree(self.n, self.edges, rng)
        raise ValueError(f"unknown tree prior {prior!r}")

    def rooted(self, tree_edges, root):
        """``(order, parent, parent_edge, parent_length)``; the root's parent length is 0."""
        order, parent, parent_edge = self.root(self.n, self.edges, tree_edges, int(root))
        plen = np.where(parent_edge >= 0, self.lengths[np.maximum(parent_edge, 0)], 0.0)
        return order, parent, parent_edge, np.ascontiguousarray(plen)


def wilson_tree(n, edges, rng):
    """A uniform spanning tree (Wilson's loop-erased random walks), as edge ids."""
    if n == 1:
        return np.zeros(0, dtype=np.int64)
    nbrs = [[] for _ in range(n)]
    for e, (u, v) in enumerate(edges):
        nbrs[u].append((v, e))
        nbrs[v].append((u, e))
    in_tree = np.zeros(n, dtype=bool)
    nxt = np.full(n, -1)
    nxt_edge = np.full(n, -1)
    in_tree[int(rng.integers(n))] = True
    out = []
    for start in rng.permutation(n):
        u = start
        while not in_tree[u]:
            j = int(rng.integers(len(nbrs[u])))
            nxt[u], nxt_edge[u] = nbrs[u][j]
            u = nxt[u]
        u = start
        while not in_tree[u]:
            in_tree[u] = True
            out.append(nxt_edge[u])
            u = nxt[u]
    return np.sort(np.asarray(out, dtype=np.int64))
