"""numpy references for the spanning-tree kernels (the oracles)."""

import numpy as np


def kruskal_mst(n, edges, weights):
    """Edge ids of a minimum spanning forest (Kruskal; stable order on ties; union by rank, path halving)."""
    order = np.argsort(weights, kind="mergesort")
    parent = list(range(n))
    rank = [0] * n

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    out = []
    for e in order:
        if len(out) == n - 1:
            break
        a, b = find(int(edges[e, 0])), find(int(edges[e, 1]))
        if a == b:
            continue
        if rank[a] < rank[b]:
            a, b = b, a
        parent[b] = a
        if rank[a] == rank[b]:
            rank[a] += 1
        out.append(int(e))
    return np.asarray(out, dtype=np.int64)


def root_tree(n, edges, tree_edges, root):
    """BFS ``(order, parent, parent_edge)`` of the tree ``edges[tree_edges]`` rooted at ``root``."""
    m = tree_edges.shape[0]
    deg = np.zeros(n + 1, dtype=np.int64)
    for k in range(m):
        e = tree_edges[k]
        deg[edges[e, 0] + 1] += 1
        deg[edges[e, 1] + 1] += 1
    start = np.cumsum(deg)
    fill = start[:-1].copy()
    nbr = np.empty(2 * m, dtype=np.int64)
    nbr_edge = np.empty(2 * m, dtype=np.int64)
    for k in range(m):
        e = tree_edges[k]
        u, v = edges[e, 0], edges[e, 1]
        nbr[fill[u]] = v
        nbr_edge[fill[u]] = e
        fill[u] += 1
        nbr[fill[v]] = u
        nbr_edge[fill[v]] = e
        fill[v] += 1
    parent = np.full(n, -2, dtype=np.int64)
    parent_edge = np.full(n, -1, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    parent[root] = -1
    order[0] = root
    head, tail = 0, 1
    while head < tail:
        u = order[head]
        head += 1
        for j in range(start[u], start[u + 1]):
            v = nbr[j]
            if parent[v] == -2:
                parent[v] = u
                parent_edge[v] = nbr_edge[j]
                order[tail] = v
                tail += 1
    if tail != n:
        raise ValueError("tree_edges do not span the vertices.")
    return order, parent, parent_edge


def partition_labels(order, parent, cut):
    """Piece labels of a rooted tree with the parent edges of ``cut`` vertices removed (BFS encounter order)."""
    n = order.shape[0]
    labels = np.empty(n, dtype=np.int64)
    k = 0
    for i in range(n):
        v = order[i]
        if parent[v] < 0 or cut[v]:
            labels[v] = k
            k += 1
        else:
            labels[v] = labels[parent[v]]
    return labels


def tree_path_lengths(order, parent, parent_length, pairs):
    """Length of the tree path between each pair of vertices (binary-lifting LCA, O((n + P) log n))."""
    n = order.shape[0]
    depth = np.zeros(n, dtype=np.int64)
    dist = np.zeros(n)
    for i in range(1, n):
        v = order[i]
        depth[v] = depth[parent[v]] + 1
        dist[v] = dist[parent[v]] + parent_length[v]
    levels = 1
    while (1 << levels) < n:
        levels += 1
    up = np.empty((levels, n), dtype=np.int64)
    for v in range(n):
        up[0, v] = parent[v] if parent[v] >= 0 else v
    for j in range(1, levels):
        for v in range(n):
            up[j, v] = up[j - 1, up[j - 1, v]]
    out = np.empty(pairs.shape[0])
    for k in range(pairs.shape[0]):
        a, b = pairs[k, 0], pairs[k, 1]
        if depth[a] < depth[b]:
            a, b = b, a
        diff = depth[a] - depth[b]
        j = 0
        while diff > 0:
            if diff & 1:
                a = up[j, a]
            diff >>= 1
            j += 1
        if a != b:
            for j in range(levels - 1, -1, -1):
                if up[j, a] != up[j, b]:
                    a = up[j, a]
                    b = up[j, b]
            a = up[0, a]
        out[k] = dist[pairs[k, 0]] + dist[pairs[k, 1]] - 2.0 * dist[a]
    return out
